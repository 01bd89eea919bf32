package fake_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/acctapi/acctapi/fake"
)

// recovered runs f and returns what it panicked with, as a string ("" for
// no panic).
func recovered(f func()) (msg string) {
	defer func() {
		if r := recover(); r != nil {
			msg = fmt.Sprint(r)
		}
	}()
	f()
	return ""
}

// TestJournalBudgetTooSmall: a budget no entry fits (0, a negative one, or
// one byte under MinJournalBudget) is refused by WithJournalBudget and
// SetJournalBudget, naming the value, instead of turning the journal off:
// an assertion that no such request was sent would pass with nothing to
// check. The journal is left as it was.
func TestJournalBudgetTooSmall(t *testing.T) {
	t.Parallel()
	for _, budget := range []int64{-1, 0, 1, fake.MinJournalBudget - 1} {
		t.Run(fmt.Sprint(budget), func(t *testing.T) {
			t.Parallel()
			_, err := fake.New(fake.WithoutListener(), fake.WithJournalBudget(budget))
			want := fmt.Sprintf("WithJournalBudget(%d): want a budget of at least %d bytes (MinJournalBudget)", budget, fake.MinJournalBudget)
			if err == nil || !strings.Contains(err.Error(), want) {
				t.Errorf("New(WithJournalBudget(%d)) = %v, want an error with %q", budget, err, want)
			}

			srv, _ := start(t)
			raw(t, srv, "GET", "/api_keys", nil, "")
			want = fmt.Sprintf("SetJournalBudget(%d): want a budget of at least %d bytes (MinJournalBudget)", budget, fake.MinJournalBudget)
			if got := recovered(func() { srv.SetJournalBudget(budget) }); !strings.Contains(got, want) {
				t.Errorf("SetJournalBudget(%d) panicked %q, want %q", budget, got, want)
			}
			raw(t, srv, "GET", "/service_users", nil, "")
			if n := len(srv.Journal()); n != 2 {
				t.Errorf("after the refused budget: %d entries kept, want 2", n)
			}
		})
	}
}

// TestJournalMinBudgetKeepsNewest: under MinJournalBudget every request
// is kept as the newest entry, even one whose method, path, query and
// bodies are all long: they are cut, never the entry dropped.
func TestJournalMinBudgetKeepsNewest(t *testing.T) {
	t.Parallel()
	srv, _ := start(t, fake.WithJournalBudget(fake.MinJournalBudget))
	long := strings.Repeat("x", 40<<10)
	for _, tt := range []struct{ method, path string }{
		{"POST", "/service_users?" + long},
		{"GET", "/" + long + "?" + long},
		{strings.Repeat("M", 4096), "/service_users"},
		{"DELETE", "/api_keys/ak_" + long},
	} {
		raw(t, srv, tt.method, tt.path, nil, `{"name":"`+long+`"}`)
		j := srv.Journal()
		if len(j) != 1 {
			t.Fatalf("%.20s %.40s: %d entries, want the newest alone", tt.method, tt.path, len(j))
		}
		wantMethod := tt.method
		if len(tt.method) > 64 {
			wantMethod = strings.Repeat("M", 36) + " …[cut: 4096 bytes in all]" // 64 bytes
		}
		if e := j[0]; e.Method != wantMethod || e.Status == 0 {
			t.Errorf("%.20s %.40s: kept %q %.40s %d, want method %q", tt.method, tt.path, e.Method, e.Path, e.Status, wantMethod)
		}
	}
}

// TestWithoutJournal: a server made WithoutJournal records nothing, and
// reading its journal panics naming the option instead of reporting no
// requests; the option with a budget is refused.
func TestWithoutJournal(t *testing.T) {
	t.Parallel()
	srv, _ := start(t, fake.WithoutJournal())
	if r := raw(t, srv, "GET", "/api_keys", nil, ""); r.status != 200 {
		t.Fatalf("GET /api_keys: %d %s", r.status, r.body)
	}
	for name, read := range map[string]func(){
		"Journal":          func() { srv.Journal() },
		"JournalBackward":  func() { srv.JournalBackward() },
		"JournalBefore":    func() { srv.JournalBefore("", nil) },
		"JournalLeft":      func() { srv.JournalLeft("op_1") },
		"JournalMatching":  func() { _, _ = srv.JournalMatching("GET", "/api_keys", fake.AnyStatus) },
		"SetJournalBudget": func() { srv.SetJournalBudget(1 << 20) },
	} {
		want := name + ": the server was made WithoutJournal and keeps no journal"
		if got := recovered(read); !strings.Contains(got, want) {
			t.Errorf("%s panicked %q, want %q", name, got, want)
		}
	}
	srv.ClearJournal() // nothing to clear: no panic
	srv.Reset()        // which clears the journal

	_, err := fake.New(fake.WithoutListener(), fake.WithoutJournal(), fake.WithJournalBudget(1<<20))
	if err == nil || !strings.Contains(err.Error(), "WithJournalBudget and WithoutJournal") {
		t.Errorf("New(WithoutJournal(), WithJournalBudget) = %v, want an error naming both", err)
	}
}

// TestJournalFilterChecked: a journal filter is checked against the fake's
// routes, as a fault's target is, so that a typo is an error and not an
// empty answer; one that is right finds what it names.
func TestJournalFilterChecked(t *testing.T) {
	t.Parallel()
	srv, _ := start(t)
	raw(t, srv, "POST", "/service_users", nil, `{"name":"a"}`)
	raw(t, srv, "GET", "/service_users/service_nope", nil, "")
	raw(t, srv, "GET", "/nothing", nil, "")
	for _, tt := range []struct {
		name, method, pattern string
		status                int
		want                  string // in the error
	}{
		{"typo in the path", "GET", "/service_user/*", fake.AnyStatus, `pattern "/service_user/*" matches no path the fake serves with GET`},
		{"another resource's id", "DELETE", "/api_keys/service_*", fake.AnyStatus, `matches no id of api_keys: their ids start ak_`},
		{"no pattern", "GET", "", fake.AnyStatus, `pattern "" does not start with /`},
		{"lower-case method", "get", "/service_users", fake.AnyStatus, `method "get" is not one the fake serves`},
		{"status 0", "GET", "/service_users", 0, "status 0 is not an HTTP status from 100 to 599, AnyStatus or DroppedStatus"},
		{"status 600", "GET", "/service_users", 600, "status 600 is not"},
		// A status the fake never answers such a request with found
		// nothing, and an assertion that no DELETE succeeded passed after
		// one had (a review).
		{"DELETE answered 200", "DELETE", "/service_users/*", 200, "status 200: the fake answers a DELETE that succeeds 204"},
		{"POST answered 200", "POST", "/service_users", 200, "the fake answers a POST that succeeds 201"},
		{"GET answered 204", "GET", "/service_users", 204, "the fake answers a GET that succeeds 200"},
		{"any method answered 202", "", "/**", 202, "the fake's successes are 201 (POST), 200 (GET, PATCH) and 204 (DELETE)"},
		{"a redirect", "GET", "/service_users", 302, "the fake never answers 302"},
		{"1xx", "", "/**", 100, "the fake never answers 100"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if _, err := srv.JournalFilter(tt.method, tt.pattern, tt.status); err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("JournalFilter: %v, want an error with %q", err, tt.want)
			}
			if got, err := srv.JournalMatching(tt.method, tt.pattern, tt.status); err == nil || got != nil {
				t.Errorf("JournalMatching: %v, %v; want its error", got, err)
			}
		})
	}
	type hit struct {
		Method, Path string
		Status       int
	}
	for _, tt := range []struct {
		name, method, pattern string
		status                int
		want                  []hit
	}{
		{"one collection", "POST", "/service_users", fake.AnyStatus, []hit{{"POST", "/service_users", 201}}},
		{"items, any method", "*", "/service_users/*", 404, []hit{{"GET", "/service_users/service_nope", 404}}},
		{"unrouted, by status", "", "/**", 404, []hit{{"GET", "/service_users/service_nope", 404}, {"GET", "/nothing", 404}}},
		{"none dropped", "", "/**", fake.DroppedStatus, nil},
		{"successes of any method", "", "/**", 201, []hit{{"POST", "/service_users", 201}}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			got, err := srv.JournalMatching(tt.method, tt.pattern, tt.status)
			if err != nil {
				t.Fatal(err)
			}
			var hits []hit
			for _, e := range got {
				hits = append(hits, hit{e.Method, e.Path, e.Status})
			}
			if diff := cmp.Diff(tt.want, hits); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
	if got := recovered(func() { new(fake.JournalFilter).Match(fake.Entry{}) }); !strings.Contains(got, "not a filter made by Server.JournalFilter") {
		t.Errorf("zero JournalFilter's Match panicked %q", got)
	}
}

// TestJournalFilterDropped: DroppedStatus finds the requests a fault
// dropped before answering, and no other.
func TestJournalFilterDropped(t *testing.T) {
	t.Parallel()
	srv, _ := start(t)
	srv.DropNext("GET", "/api_keys", 1)
	req := newRequest(t, srv, "GET", "/api_keys", "")
	req.Header.Set("Authorization", "Bearer "+srv.APIKey())
	req.Header.Set("Service-Version", "2")
	if resp, err := srv.HTTPClient().Do(req); err == nil {
		resp.Body.Close()
		t.Fatal("dropped request answered")
	}
	raw(t, srv, "GET", "/api_keys", nil, "")
	got, err := srv.JournalMatching("GET", "/api_keys", fake.DroppedStatus)
	if err != nil || len(got) != 1 || !got[0].Dropped || got[0].Status != 0 {
		t.Errorf("JournalMatching(DroppedStatus) = %+v, %v; want the dropped request", got, err)
	}
}
