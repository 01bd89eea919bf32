package fake_test

import (
	"net/http"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/acctapi/acctapi"
	"github.com/acctapi/acctapi/account"
	"github.com/acctapi/acctapi/backends"
	"github.com/acctapi/acctapi/fake"
)

// state is what the snapshot tests compare: every service user, API key
// and failover of the first account.
type state struct {
	Users     []account.ServiceUser
	Keys      []account.APIKey
	Failovers []backends.Failover
}

func stateOf(srv *fake.Server) state {
	return state{fake.List[account.ServiceUser](srv, ""), fake.List[account.APIKey](srv, ""), fake.List[backends.Failover](srv, "")}
}

// TestSnapshotRestore checks that Restore brings back exactly the state
// Snapshot saved, any number of times, tokens included.
func TestSnapshotRestore(t *testing.T) {
	t.Parallel()
	srv, _ := start(t)
	ctx := t.Context()
	users := account.NewServiceUsers(srv.Client())
	a := must(users.Create(ctx, &account.ServiceUserCreate{Name: "a"}))(t)
	key := must(account.NewAPIKeys(srv.Client()).Create(ctx, &account.APIKeyCreate{OwnerID: a.ID}))(t)
	hr := must(fake.Seed[backends.HTTPResponse](srv, "", &backends.HTTPResponseCreate{StatusCode: 200}))(t)
	must(fake.Seed[backends.Failover](srv, "", &backends.FailoverCreate{Backends: []string{hr.ID}}))(t)

	snap := srv.Snapshot()
	saved := stateOf(srv)

	for round := range 2 {
		// Change everything: delete a (and its key), rename, create more.
		must(users.Create(ctx, &account.ServiceUserCreate{Name: "b"}))(t)
		must(0, users.Delete(ctx, a.ID))(t)
		must(account.NewAPIKeys(srv.Client()).Create(ctx, &account.APIKeyCreate{}))(t)
		if cmp.Equal(saved, stateOf(srv)) {
			t.Fatalf("round %d: the changes did not change the state", round)
		}
		_, err := account.NewServiceUsers(clientFor(t, srv, *key.Token)).Page(ctx, nil)
		wantAPIError(t, err, http.StatusUnauthorized, acctapi.CodeInvalidToken)

		srv.Restore(snap)
		if diff := cmp.Diff(saved, stateOf(srv)); diff != "" {
			t.Errorf("round %d: state after Restore (-snapshot +restored):\n%s", round, diff)
		}
		// The API sees the restored state too: the name "a" is taken again
		// (and "b" free, or the next round could not create it), the
		// deleted key's token works again, the referenced backend is
		// referenced again.
		_, err = users.Create(ctx, &account.ServiceUserCreate{Name: "a"})
		wantAPIError(t, err, http.StatusConflict, acctapi.CodeNameTaken)
		if _, err := account.NewServiceUsers(clientFor(t, srv, *key.Token)).Get(ctx, a.ID); err != nil {
			t.Errorf("round %d: restored key: %v", round, err)
		}
		err = backends.NewHTTPResponses(srv.Client()).Delete(ctx, hr.ID)
		wantAPIError(t, err, http.StatusConflict, acctapi.CodeStillReferenced)
	}
	// A snapshot is not changed by what happens after it.
	must(users.Create(ctx, &account.ServiceUserCreate{Name: "c"}))(t)
	srv.Restore(snap)
	if diff := cmp.Diff(saved, stateOf(srv)); diff != "" {
		t.Errorf("third restore (-snapshot +restored):\n%s", diff)
	}
}

// TestReset checks that Reset keeps the accounts New made and their
// initial keys, and forgets everything else, journal and faults included.
func TestReset(t *testing.T) {
	t.Parallel()
	srv, _ := start(t,
		fake.WithAccount(fake.Account{ID: "ac_a", APIKeys: []string{"key-a1", "key-a2"}}),
		fake.WithAccount(fake.Account{ID: "ac_b", APIKeys: []string{"key-b"}}))
	ctx := t.Context()
	accounts := srv.Accounts()
	initialKeys := fake.List[account.APIKey](srv, "ac_a")

	must(fake.Seed[account.ServiceUser](srv, "ac_b", &account.ServiceUserCreate{Name: "x"}))(t)
	must(account.NewAPIKeys(clientFor(t, srv, "key-a1")).Create(ctx, &account.APIKeyCreate{}))(t)
	must(0, account.NewAPIKeys(clientFor(t, srv, "key-a1")).Delete(ctx, initialKeys[0].ID))(t)
	srv.FailNext("*", "/**", 100, http.StatusInternalServerError)
	must(srv.AddAccount(fake.Account{ID: "ac_late", APIKeys: []string{"key-late"}}))(t)

	srv.Reset()

	if diff := cmp.Diff(accounts, srv.Accounts()); diff != "" {
		t.Errorf("accounts after Reset (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(initialKeys, fake.List[account.APIKey](srv, "ac_a")); diff != "" {
		t.Errorf("keys after Reset (-want +got):\n%s", diff)
	}
	if n := len(fake.List[account.ServiceUser](srv, "ac_b")); n != 0 {
		t.Errorf("%d service users after Reset", n)
	}
	if _, err := fake.Seed[account.ServiceUser](srv, "ac_b", &account.ServiceUserCreate{Name: "x"}); err != nil {
		t.Errorf("the name of a service user Reset removed is still taken: %v", err)
	}
	if n := len(srv.Journal()); n != 0 {
		t.Errorf("%d journal entries after Reset", n)
	}
	for _, key := range []string{"key-a1", "key-a2", "key-b"} {
		if _, err := account.NewAPIKeys(clientFor(t, srv, key)).Page(ctx, nil); err != nil {
			t.Errorf("initial key %s after Reset: %v", key, err)
		}
	}
	_, err := account.NewAPIKeys(clientFor(t, srv, "key-late")).Page(ctx, nil)
	wantAPIError(t, err, http.StatusUnauthorized, acctapi.CodeInvalidToken)
}
