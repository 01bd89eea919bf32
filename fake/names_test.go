package fake

import (
	"errors"
	"fmt"
	"maps"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"

	memdb "github.com/hashicorp/go-memdb"

	"github.com/acctapi/acctapi/account"
)

// TestNamesFollowTransactions checks that a write's unique values take
// effect only when it commits: a failed write leaves no name claimed or
// released.
func TestNamesFollowTransactions(t *testing.T) {
	t.Parallel()
	srv := Start(t, WithoutListener())
	acct := srv.Accounts()[0].ID
	put := func(txn *memdb.Txn, id, name string) error {
		o := &object{Account: acct, Kind: kindSvcUser, ID: id, Value: account.ServiceUser{ID: id, Name: name}}
		return srv.store(txn, o, meta{unique: name, uniqueErr: nameTaken}, lookup(txn, acct, kindSvcUser, id))
	}
	holder := func(name string) string { return srv.names.holder(uniqueKey(kindSvcUser, acct, name)) }
	boom := errors.New("boom")

	if err := srv.write(func(txn *memdb.Txn) error { return put(txn, "service_1", "a") }); err != nil {
		t.Fatal(err)
	}
	// putThenFail stores id with name, then fails the write.
	putThenFail := func(id, name string) {
		t.Helper()
		if err := srv.write(func(txn *memdb.Txn) error {
			if err := put(txn, id, name); err != nil {
				return err
			}
			return boom
		}); !errors.Is(err, boom) {
			t.Fatalf("write: %v", err)
		}
	}
	// A failed write claims nothing.
	putThenFail("service_2", "b")
	if id := holder("b"); id != "" {
		t.Errorf(`after a failed write, "b" is held by %q`, id)
	}
	// A failed rename releases nothing.
	putThenFail("service_1", "c")
	if id := holder("a"); id != "service_1" {
		t.Errorf(`after a failed rename, "a" is held by %q, want service_1`, id)
	}
	// A failed write that panics claims nothing either.
	func() {
		defer func() { _ = recover() }()
		_ = srv.write(func(txn *memdb.Txn) error {
			if err := put(txn, "service_3", "d"); err != nil {
				return err
			}
			panic("boom")
		})
	}()
	if id := holder("d"); id != "" {
		t.Errorf(`after a panicking write, "d" is held by %q`, id)
	}
	// A committed rename releases the old name, and another object cannot
	// take the new one.
	if err := srv.write(func(txn *memdb.Txn) error { return put(txn, "service_1", "e") }); err != nil {
		t.Fatal(err)
	}
	if a, e := holder("a"), holder("e"); a != "" || e != "service_1" {
		t.Errorf(`after a rename, "a" is held by %q and "e" by %q; want "" and service_1`, a, e)
	}
	err := srv.write(func(txn *memdb.Txn) error { return put(txn, "service_4", "e") })
	if err == nil || err.Error() != nameTaken().Error() {
		t.Errorf("taking a held name: %v", err)
	}
}

// TestStoreRefusesWhatItsKindDoesNotKeep checks that a resource asking to
// store a unique value, references or a token on a kind whose table does
// not keep them is an error, not a rule silently lost.
func TestStoreRefusesWhatItsKindDoesNotKeep(t *testing.T) {
	t.Parallel()
	srv := Start(t, WithoutListener())
	acct := srv.Accounts()[0].ID
	for _, tt := range []struct {
		kind string
		m    meta
	}{
		{kindHTTPResponse, meta{unique: "x", uniqueErr: nameTaken}},
		{kindSvcUser, meta{refs: []string{"bkdhr_1"}}},
		{kindFailover, meta{token: "t"}},
	} {
		err := srv.write(func(txn *memdb.Txn) error {
			return srv.store(txn, &object{Account: acct, Kind: tt.kind, ID: "x_1", Value: 1}, tt.m, nil)
		})
		if err == nil {
			t.Errorf("%s with %+v: stored", tt.kind, tt.m)
		}
	}
	// What the kinds do keep is stored.
	for _, tt := range []struct {
		kind string
		m    meta
	}{
		{kindSvcUser, meta{unique: "x", uniqueErr: nameTaken}},
		{kindFailover, meta{refs: []string{"bkdhr_1"}}},
		{kindAPIKey, meta{token: "t"}},
	} {
		if err := srv.write(func(txn *memdb.Txn) error {
			return srv.store(txn, &object{Account: acct, Kind: tt.kind, ID: "x_2", Value: 1}, tt.m, nil)
		}); err != nil {
			t.Errorf("%s with %+v: %v", tt.kind, tt.m, err)
		}
	}
}

// TestNamesUnderConcurrency runs creates, renames and deletes of a few
// names from several goroutines, with snapshots restored in between, and
// checks that the names the server holds are exactly those its store
// holds. Run it with -race.
func TestNamesUnderConcurrency(t *testing.T) {
	t.Parallel()
	srv := Start(t, WithoutListener())
	users := account.NewServiceUsers(srv.Client())
	ctx := t.Context()
	snap := srv.Snapshot()
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Go(func() {
			for i := range 60 {
				name := fmt.Sprintf("n%d", (g+i)%5)
				switch i % 4 {
				case 0, 1:
					if u, err := users.Create(ctx, &account.ServiceUserCreate{Name: name}); err == nil && i%8 == 1 {
						other := fmt.Sprintf("n%d", (g+i+1)%5)
						_, _ = users.Update(ctx, &account.ServiceUserUpdate{ID: u.ID, Name: &other})
					}
				case 2:
					for u, err := range users.List(ctx, nil) {
						if err != nil {
							break
						}
						if u.Name == name {
							_ = users.Delete(ctx, u.ID)
						}
					}
				case 3:
					if g == 0 {
						srv.Restore(snap)
						snap = srv.Snapshot()
					}
				}
			}
		})
	}
	wg.Wait()
	got := maps.Clone(srv.names.held)
	srv.names.rebuild(srv.db.Txn(false))
	if diff := cmp.Diff(srv.names.held, got); diff != "" {
		t.Errorf("names held (-rebuilt from the store +kept):\n%s", diff)
	}
	seen := map[string]bool{}
	for _, u := range List[account.ServiceUser](srv, "") {
		if seen[u.Name] {
			t.Errorf("two service users named %q", u.Name)
		}
		seen[u.Name] = true
	}
}
