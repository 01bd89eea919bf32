package keyrotation_test

import (
	"errors"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"testing"
	"testing/synctest"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/acctapi/acctapi"
	"github.com/acctapi/acctapi/account"
	keyrotation "github.com/acctapi/acctapi/examples/testing"
	"github.com/acctapi/acctapi/fake"
)

// t0 is the fake clock's start: any fixed time does.
var t0 = time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)

// setup starts a fake without a listener (in memory: fast; inside a
// synctest bubble fake.Start would choose it anyway) with a manual clock and repeatable ids, and seeds a
// service user with two keys a year old, one key a day old, and one key of
// another owner. The server is closed when the test ends.
func setup(t *testing.T) (srv *fake.Server, clock *fake.ManualClock, bot account.ServiceUser, old []account.APIKey) {
	t.Helper()
	clock = fake.NewManualClock(t0.AddDate(-1, 0, 0))
	srv = fake.Start(t, fake.WithoutListener(), fake.WithClock(clock), fake.WithIDSeed(1))
	bot = seed[account.ServiceUser](t, srv, &account.ServiceUserCreate{Name: "deploy-bot"})
	old = []account.APIKey{
		seed[account.APIKey](t, srv, &account.APIKeyCreate{OwnerID: bot.ID, Description: "old 1"}),
		seed[account.APIKey](t, srv, &account.APIKeyCreate{OwnerID: bot.ID, Description: "old 2"}),
	}
	seed[account.APIKey](t, srv, &account.APIKeyCreate{Description: "someone else's"})
	clock.Set(t0.Add(-24 * time.Hour))
	seed[account.APIKey](t, srv, &account.APIKeyCreate{OwnerID: bot.ID, Description: "yesterday"})
	clock.Set(t0)
	return srv, clock, bot, old
}

// seed is fake.Seed that fails the test on error.
func seed[T, C any](t *testing.T, srv *fake.Server, in *C) T {
	t.Helper()
	v, err := fake.Seed[T](srv, "", in)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

// descriptions returns the descriptions of the keys of owner in the fake's
// store, newest first.
func descriptions(srv *fake.Server, owner string) []string {
	var out []string
	for _, k := range fake.List[account.APIKey](srv, "") {
		if owner == "" || k.OwnerID == owner {
			out = append(out, k.Description)
		}
	}
	return out
}

// request is what a journal entry says was sent, and the answer's status.
type request struct {
	Method, Path, Query, Body string
	Status                    int
}

func requests(srv *fake.Server) []request {
	var out []request
	for _, e := range srv.Journal() {
		out = append(out, request{e.Method, e.Path, e.Query, e.RequestBody, e.Status})
	}
	return out
}

// TestRotateKeys checks the outcome, the store, and — through the journal
// — exactly what RotateKeys sent.
func TestRotateKeys(t *testing.T) {
	t.Parallel()
	srv, _, bot, old := setup(t)

	created, deleted, err := keyrotation.RotateKeys(t.Context(), account.NewAPIKeys(srv.Client()), bot.ID, t0.AddDate(0, 0, -30))
	if err != nil {
		t.Fatal(err)
	}
	if created.Token == nil || created.OwnerID != bot.ID {
		t.Errorf("created %+v, want a key of %s with its token", created, bot.ID)
	}
	// Newest first, as the API lists them.
	if diff := cmp.Diff([]string{old[1].ID, old[0].ID}, deleted); diff != "" {
		t.Errorf("deleted (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"rotated", "yesterday"}, descriptions(srv, bot.ID)); diff != "" {
		t.Errorf("bot's keys left (-want +got):\n%s", diff)
	}
	if !slices.Contains(descriptions(srv, ""), "someone else's") {
		t.Errorf("another owner's key was deleted")
	}

	want := []request{
		{"POST", "/api_keys", "", `{"description":"rotated","owner_id":"` + bot.ID + `"}`, http.StatusCreated},
		{"GET", "/api_keys", url.Values{"filter": {"obj.owner_id == " + strconv.Quote(bot.ID)}}.Encode(), "", http.StatusOK},
		{"DELETE", "/api_keys/" + old[1].ID, "", "", http.StatusNoContent},
		{"DELETE", "/api_keys/" + old[0].ID, "", "", http.StatusNoContent},
	}
	if diff := cmp.Diff(want, requests(srv)); diff != "" {
		t.Errorf("requests (-want +got):\n%s", diff)
	}
}

// TestRotateKeysRetriesRateLimit injects a 429 with Retry-After: 2 into the
// create. A client with acctapi's retry policy waits and sends it again,
// so RotateKeys succeeds. The test runs in a synctest bubble, where the
// wait takes no real time and time.Since measures it exactly.
func TestRotateKeysRetriesRateLimit(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		srv, _, bot, _ := setup(t)
		keys := account.NewAPIKeys(srv.Client(acctapi.WithRetry(acctapi.DefaultRetryPolicy())))
		srv.RateLimitNext("POST", "/api_keys", 1, 2*time.Second)

		begin := time.Now()
		_, deleted, err := keyrotation.RotateKeys(t.Context(), keys, bot.ID, t0.AddDate(0, 0, -30))
		if err != nil {
			t.Fatal(err)
		}
		if now := time.Now(); now != now.Round(0) { // no monotonic reading: the bubble's clock
			t.Fatal("not in a synctest bubble: the wait would be measured on the wall clock")
		}
		if waited := time.Since(begin); waited != 2*time.Second {
			t.Errorf("RotateKeys waited %v on the bubble's clock, want the Retry-After of 2s", waited)
		}
		if len(deleted) != 2 {
			t.Errorf("deleted %v, want the 2 old keys", deleted)
		}
		var statuses []int
		for _, r := range requests(srv) {
			statuses = append(statuses, r.Status)
		}
		if diff := cmp.Diff([]int{429, 201, 200, 204, 204}, statuses); diff != "" {
			t.Errorf("statuses (-want +got):\n%s", diff)
		}
		// The create was sent twice but took effect once.
		if diff := cmp.Diff([]string{"rotated", "yesterday"}, descriptions(srv, bot.ID)); diff != "" {
			t.Errorf("bot's keys (-want +got):\n%s", diff)
		}
	})
}

// TestRotateKeysSurfacesFailures injects 503s that the client does not
// retry (srv.Client has retries off; and a POST is never retried after a
// 5xx) and checks that RotateKeys reports them and stops safely.
func TestRotateKeysSurfacesFailures(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name        string
		fail        func(srv *fake.Server, old []account.APIKey)
		wantCreated bool
		wantDeleted int
		wantKeys    []string // the bot's keys after, newest first
	}{
		{
			name: "create fails: nothing deleted",
			fail: func(srv *fake.Server, _ []account.APIKey) {
				srv.FailNext("POST", "/api_keys", 1, http.StatusServiceUnavailable)
			},
			wantKeys: []string{"yesterday", "old 2", "old 1"},
		},
		{
			name: "second delete fails: the new key and one old key remain",
			fail: func(srv *fake.Server, old []account.APIKey) {
				srv.FailNext("DELETE", "/api_keys/"+old[0].ID, 1, http.StatusServiceUnavailable)
			},
			wantCreated: true,
			wantDeleted: 1,
			wantKeys:    []string{"rotated", "yesterday", "old 1"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			srv, _, bot, old := setup(t)
			tt.fail(srv, old)

			created, deleted, err := keyrotation.RotateKeys(t.Context(), account.NewAPIKeys(srv.Client()), bot.ID, t0.AddDate(0, 0, -30))
			var apiErr *acctapi.Error
			if !errors.As(err, &apiErr) || apiErr.StatusCode != http.StatusServiceUnavailable {
				t.Fatalf("err = %v, want the 503", err)
			}
			if (created != nil) != tt.wantCreated || len(deleted) != tt.wantDeleted {
				t.Errorf("created %v, deleted %v; want created %v, %d deleted", created, deleted, tt.wantCreated, tt.wantDeleted)
			}
			if diff := cmp.Diff(tt.wantKeys, descriptions(srv, bot.ID)); diff != "" {
				t.Errorf("bot's keys (-want +got):\n%s", diff)
			}
		})
	}
}

// TestRotateKeysAlreadyDeleted makes one delete answer 404, as if another
// rotation had deleted the key first: RotateKeys counts it as deleted.
func TestRotateKeysAlreadyDeleted(t *testing.T) {
	t.Parallel()
	srv, _, bot, old := setup(t)
	srv.FailNext("DELETE", "/api_keys/"+old[1].ID, 1, http.StatusNotFound)

	_, deleted, err := keyrotation.RotateKeys(t.Context(), account.NewAPIKeys(srv.Client()), bot.ID, t0.AddDate(0, 0, -30))
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{old[1].ID, old[0].ID}, deleted); diff != "" {
		t.Errorf("deleted (-want +got):\n%s", diff)
	}
}
