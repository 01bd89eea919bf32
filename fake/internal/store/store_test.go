package store

import (
	"errors"
	"fmt"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
)

// user, key and link are test rows: one with a unique name, one with a
// token, one with references.
type (
	user struct{ Name string }
	key  struct{ Owner string }
	link struct{ To []string }
)

var errTaken = errors.New("name taken")

// testDB opens a store with three tables, one per kind of constraint, and
// a plain one.
func testDB(t testing.TB) (*DB, *Table[user, none], *Table[key, string], *Table[link, none], *Table[int, none]) {
	t.Helper()
	var s Schema
	users := Define(&s, "users", Constraints[user, none]{Unique: func(u user) string { return u.Name }, Taken: func() error { return errTaken }})
	keys := Define(&s, "keys", Constraints[key, string]{Token: func(tok string) string { return tok }})
	links := Define(&s, "links", Constraints[link, none]{Refs: func(l link) []string { return l.To }})
	plain := Define(&s, "plain", Constraints[int, none]{})
	db, err := s.Open()
	if err != nil {
		t.Fatal(err)
	}
	return db, users, keys, links, plain
}

type none = struct{}

// TestSchema checks that the go-memdb schema is valid and that each table
// has exactly the indexes its constraints need (go-memdb writes every
// index on every insert).
func TestSchema(t *testing.T) {
	t.Parallel()
	db, _, _, _, _ := testDB(t)
	ms := db.schema.memSchema()
	if err := ms.Validate(); err != nil {
		t.Fatalf("schema: %v", err)
	}
	type index struct{ unique, allowMissing bool }
	want := map[string]map[string]index{
		"users": {"id": {true, false}},
		"keys":  {"id": {true, false}, "token": {true, true}},
		"links": {"id": {true, false}, "refs": {false, true}},
		"plain": {"id": {true, false}},
	}
	got := map[string]map[string]index{}
	for name, tbl := range ms.Tables {
		got[name] = map[string]index{}
		for iname, idx := range tbl.Indexes {
			got[name][iname] = index{idx.Unique, idx.AllowMissing}
		}
	}
	if diff := cmp.Diff(want, got, cmp.AllowUnexported(index{})); diff != "" {
		t.Errorf("indexes (-want +got):\n%s", diff)
	}
}

// TestDefineRefuses checks the programming errors Define panics on.
func TestDefineRefuses(t *testing.T) {
	t.Parallel()
	for name, define := range map[string]func(s *Schema){
		"twice":          func(s *Schema) { Define(s, "a", Constraints[int, none]{}); Define(s, "a", Constraints[int, none]{}) },
		"unnamed":        func(s *Schema) { Define(s, "", Constraints[int, none]{}) },
		"unique, no err": func(s *Schema) { Define(s, "a", Constraints[int, none]{Unique: func(int) string { return "" }}) },
	} {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("%s: no panic", name)
				}
			}()
			define(new(Schema))
		}()
	}
}

// TestTable checks lookups by every index: an account's row, absent from
// another account; by token from any account; referrers.
func TestTable(t *testing.T) {
	t.Parallel()
	db, _, keys, links, plain := testDB(t)
	err := db.Write(func(tx *Txn) error {
		return errors.Join(
			keys.Insert(tx, "ac_1", "k_1", key{Owner: "u"}, "tok"),
			links.Insert(tx, "ac_1", "l_1", link{To: []string{"p_1", "p_2"}}, none{}),
			plain.Insert(tx, "ac_1", "p_1", 7, none{}),
		)
	})
	if err != nil {
		t.Fatal(err)
	}
	tx := read(db)
	if row, ok := plain.Get(tx, "ac_1", "p_1"); !ok || row.Value != 7 || row.ID != "p_1" || row.Account != "ac_1" {
		t.Errorf("Get = %+v, %v", row, ok)
	}
	if _, ok := plain.Get(tx, "ac_2", "p_1"); ok {
		t.Error("another account's Get finds the row")
	}
	if plain.Has(tx, "ac_2", "p_1") || !plain.Has(tx, "ac_1", "p_1") {
		t.Error("Has is wrong")
	}
	if row, ok := keys.ByToken(tx, "tok"); !ok || row.ID != "k_1" || row.Extra != "tok" || row.Value.Owner != "u" {
		t.Errorf("ByToken = %+v, %v", row, ok)
	}
	if _, ok := keys.ByToken(tx, "to"); ok {
		t.Error("ByToken finds a prefix of the token")
	}
	if _, ok := plain.ByToken(tx, "tok"); ok {
		t.Error("ByToken on a table without tokens finds a row")
	}
	for _, id := range []string{"p_1", "p_2"} {
		if tbl, by, ok := tx.Referrer("ac_1", id); !ok || tbl != "links" || by != "l_1" {
			t.Errorf("Referrer(%s) = %s %s %v", id, tbl, by, ok)
		}
	}
	if _, _, ok := tx.Referrer("ac_2", "p_1"); ok {
		t.Error("another account's Referrer finds the row")
	}
	if _, _, ok := tx.Referrer("ac_1", "p"); ok {
		t.Error("Referrer finds a prefix of an id")
	}
	// A read transaction refuses writes.
	if err := plain.Insert(tx, "ac_1", "p_2", 1, none{}); !errors.Is(err, errReadOnly) {
		t.Errorf("Insert in a read transaction: %v", err)
	}
	if err := plain.Delete(tx, "ac_1", "p_1"); !errors.Is(err, errReadOnly) {
		t.Errorf("Delete in a read transaction: %v", err)
	}
}

// TestTokenInUse checks that a token is unique across accounts, and that
// replacing a row keeps its own token.
func TestTokenInUse(t *testing.T) {
	t.Parallel()
	db, _, keys, _, _ := testDB(t)
	if err := db.Write(func(tx *Txn) error { return keys.Insert(tx, "ac_1", "k_1", key{}, "tok") }); err != nil {
		t.Fatal(err)
	}
	if err := db.Write(func(tx *Txn) error { return keys.Insert(tx, "ac_2", "k_2", key{}, "tok") }); !errors.Is(err, ErrTokenInUse) {
		t.Errorf("a second key with the token: %v", err)
	}
	err := db.Write(func(tx *Txn) error {
		cur, _ := keys.Get(tx, "ac_1", "k_1")
		return keys.Replace(tx, cur, key{Owner: "v"}, cur.Extra)
	})
	if err != nil {
		t.Errorf("replacing a key with its own token: %v", err)
	}
	if row, ok := keys.ByToken(read(db), "tok"); !ok || row.Value.Owner != "v" {
		t.Errorf("after Replace, ByToken = %+v, %v", row, ok)
	}
	// A snapshot keeps the token held; a delete releases it.
	snap := db.Snapshot()
	if err := db.Write(func(tx *Txn) error { return keys.Delete(tx, "ac_1", "k_1") }); err != nil {
		t.Fatal(err)
	}
	if err := db.Write(func(tx *Txn) error { return keys.Insert(tx, "ac_2", "k_2", key{}, "tok") }); err != nil {
		t.Errorf("the token of a deleted key: %v", err)
	}
	db.Restore(snap)
	if err := db.Write(func(tx *Txn) error { return keys.Insert(tx, "ac_2", "k_3", key{}, "tok") }); !errors.Is(err, ErrTokenInUse) {
		t.Errorf("after Restore, the token is free: %v", err)
	}
	if err := db.CheckUnique(); err != nil {
		t.Error(err)
	}
}

// TestTokenHeldBy checks that TokenHeldBy answers alike in a read
// transaction (go-memdb's index) and a write one (the names index), after
// inserts, deletes and a restore, and sees a write's own staged changes.
func TestTokenHeldBy(t *testing.T) { // not parallel: AllocsPerRun
	db, _, keys, _, _ := testDB(t)
	check := func(when string, want map[string]bool) {
		t.Helper()
		for id, held := range want {
			if got := keys.TokenHeldBy(read(db), "tok", id); got != held {
				t.Errorf("%s, read: TokenHeldBy(tok, %q) = %v, want %v", when, id, got, held)
			}
			_ = db.Write(func(tx *Txn) error {
				if got := keys.TokenHeldBy(tx, "tok", id); got != held {
					t.Errorf("%s, write: TokenHeldBy(tok, %q) = %v, want %v", when, id, got, held)
				}
				return errors.New("roll back")
			})
		}
	}
	check("empty", map[string]bool{"k_1": false, "": false})
	if err := db.Write(func(tx *Txn) error { return keys.Insert(tx, "ac_1", "k_1", key{}, "tok") }); err != nil {
		t.Fatal(err)
	}
	check("inserted", map[string]bool{"k_1": true, "k_2": false, "": false})
	snap := db.Snapshot()
	err := db.Write(func(tx *Txn) error {
		if err := keys.Delete(tx, "ac_1", "k_1"); err != nil {
			return err
		}
		if keys.TokenHeldBy(tx, "tok", "k_1") {
			t.Error("in the write that deletes it, the token is still k_1's")
		}
		if err := keys.Insert(tx, "ac_2", "k_2", key{}, "tok"); err != nil {
			return err
		}
		if !keys.TokenHeldBy(tx, "tok", "k_2") {
			t.Error("in the write that inserts it, the token is not k_2's")
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	check("moved", map[string]bool{"k_1": false, "k_2": true})
	// In a write, the check allocates nothing: every write makes it.
	_ = db.Write(func(tx *Txn) error {
		if n := testing.AllocsPerRun(100, func() { keys.TokenHeldBy(tx, "tok", "k_2") }); n != 0 {
			t.Errorf("TokenHeldBy in a write: %v allocs, want 0", n)
		}
		return errors.New("roll back")
	})
	db.Restore(snap)
	check("restored", map[string]bool{"k_1": true, "k_2": false})
}

// TestNamesFollowTransactions checks that a write's unique values take
// effect only when it commits: a failed write leaves no name claimed or
// released.
func TestNamesFollowTransactions(t *testing.T) {
	t.Parallel()
	db, users, _, _, _ := testDB(t)
	const acct = "ac_1"
	put := func(tx *Txn, id, name string) error {
		if cur, ok := users.Get(tx, acct, id); ok {
			return users.Replace(tx, cur, user{Name: name}, none{})
		}
		return users.Insert(tx, acct, id, user{Name: name}, none{})
	}
	holder := func(name string) string { return db.names.holder(users.uniqueKey(acct, name)) }
	boom := errors.New("boom")

	if err := db.Write(func(tx *Txn) error { return put(tx, "service_1", "a") }); err != nil {
		t.Fatal(err)
	}
	// putThenFail stores id with name, then fails the write.
	putThenFail := func(id, name string) {
		t.Helper()
		if err := db.Write(func(tx *Txn) error {
			if err := put(tx, id, name); err != nil {
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
		_ = db.Write(func(tx *Txn) error {
			if err := put(tx, "service_3", "d"); err != nil {
				return err
			}
			panic("boom")
		})
	}()
	if id := holder("d"); id != "" {
		t.Errorf(`after a panicking write, "d" is held by %q`, id)
	}
	// A committed rename releases the old name, and another row cannot
	// take the new one.
	if err := db.Write(func(tx *Txn) error { return put(tx, "service_1", "e") }); err != nil {
		t.Fatal(err)
	}
	if a, e := holder("a"), holder("e"); a != "" || e != "service_1" {
		t.Errorf(`after a rename, "a" is held by %q and "e" by %q; want "" and service_1`, a, e)
	}
	if err := db.Write(func(tx *Txn) error { return put(tx, "service_4", "e") }); !errors.Is(err, errTaken) {
		t.Errorf("taking a held name: %v", err)
	}
	// The same name in another account is free.
	if err := db.Write(func(tx *Txn) error { return users.Insert(tx, "ac_2", "service_5", user{Name: "e"}, none{}) }); err != nil {
		t.Errorf("the name in another account: %v", err)
	}
	// A delete releases the name.
	if err := db.Write(func(tx *Txn) error { return users.Delete(tx, acct, "service_1") }); err != nil {
		t.Fatal(err)
	}
	if id := holder("e"); id != "" {
		t.Errorf(`after a delete, "e" is held by %q`, id)
	}
	if err := db.CheckUnique(); err != nil {
		t.Error(err)
	}
}

// TestSnapshotRestore checks that a restored store has the rows and the
// unique values of its snapshot, and that a snapshot does not change.
func TestSnapshotRestore(t *testing.T) {
	t.Parallel()
	db, users, _, _, _ := testDB(t)
	insert := func(id, name string) error {
		return db.Write(func(tx *Txn) error { return users.Insert(tx, "ac_1", id, user{Name: name}, none{}) })
	}
	if err := insert("u_1", "a"); err != nil {
		t.Fatal(err)
	}
	snap := db.Snapshot()
	if err := insert("u_2", "b"); err != nil {
		t.Fatal(err)
	}
	for range 2 { // a snapshot restores any number of times
		db.Restore(snap)
		if got := len(users.All(read(db), "ac_1")); got != 1 {
			t.Errorf("after Restore, %d rows, want 1", got)
		}
		if err := insert("u_3", "a"); !errors.Is(err, errTaken) {
			t.Errorf(`after Restore, "a" is free: %v`, err)
		}
		if err := insert("u_3", "b"); err != nil {
			t.Errorf(`after Restore, "b" is held: %v`, err)
		}
	}
}

// TestPage checks the walk down from before_id: newest first, limit, the
// "more" flag counting only accepted rows, and account boundaries.
func TestPage(t *testing.T) {
	t.Parallel()
	db, _, _, _, plain := testDB(t)
	err := db.Write(func(tx *Txn) error {
		for i := range 5 {
			for _, acct := range []string{"ac_1", "ac_2"} {
				if err := plain.Insert(tx, acct, "p_"+strconv.Itoa(i), i, none{}); err != nil {
					return err
				}
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	odd := func(v *int) (bool, error) { return *v%2 == 1, nil }
	tests := []struct {
		name     string
		beforeID string
		limit    int
		keep     func(*int) (bool, error)
		want     []int
		more     bool
	}{
		{"all", "", 10, nil, []int{4, 3, 2, 1, 0}, false},
		{"limit", "", 2, nil, []int{4, 3}, true},
		{"before", "p_3", 10, nil, []int{2, 1, 0}, false},
		{"before and limit", "p_3", 3, nil, []int{2, 1, 0}, false},
		{"keep", "", 10, odd, []int{3, 1}, false},
		{"keep and limit", "", 1, odd, []int{3}, true},
		{"before nothing", "p_0", 10, nil, nil, false},
		// Ids sort before a before_id with a NUL as strings do (a review saw
		// the first page for one).
		{"NUL in before_id", "p_\x00", 10, nil, nil, false},
		{"NUL after an id", "p_3\x00zzz", 10, nil, []int{3, 2, 1, 0}, false},
		{"NUL after the last id", "p_4\x00", 2, nil, []int{4, 3}, true},
		{"NUL alone", "\x00", 10, nil, nil, false},
	}
	for _, tt := range tests {
		got, ids, more, err := plain.Page(read(db), "ac_1", tt.beforeID, tt.limit, tt.keep)
		if err != nil {
			t.Fatalf("%s: %v", tt.name, err)
		}
		var wantIDs []string
		for _, v := range tt.want {
			wantIDs = append(wantIDs, "p_"+strconv.Itoa(v))
		}
		if diff := cmp.Diff(wantIDs, ids, cmpopts.EquateEmpty()); diff != "" {
			t.Errorf("%s: ids (-want +got):\n%s", tt.name, diff)
		}
		if diff := cmp.Diff(tt.want, got, cmpopts.EquateEmpty()); diff != "" || more != tt.more {
			t.Errorf("%s: more = %v, want %v; rows (-want +got):\n%s", tt.name, more, tt.more, diff)
		}
	}
	boom := errors.New("boom")
	if _, _, _, err := plain.Page(read(db), "ac_1", "", 10, func(*int) (bool, error) { return false, boom }); !errors.Is(err, boom) {
		t.Errorf("keep's error: %v", err)
	}
}

// TestPageCost holds Page to its documented cost: the rows it visits grow
// with limit and the rows keep rejects, not with another account's rows
// (which sort right below the caller's in the index) nor with the rows
// past the page.
func TestPageCost(t *testing.T) {
	t.Parallel()
	db, _, _, _, plain := testDB(t)
	err := db.Write(func(tx *Txn) error {
		for i := range 5000 {
			if err := plain.Insert(tx, "ac_0", fmt.Sprintf("p_%05d", i), i, none{}); err != nil {
				return err
			}
		}
		for i := range 3 {
			if err := plain.Insert(tx, "ac_1", fmt.Sprintf("p_%05d", 9000+i), i, none{}); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		account, before string
		limit, most     int
	}{
		{"ac_1", "", 100, 4},        // its 3 rows, then the first of ac_0's
		{"ac_1", "p_09001", 100, 3}, // before_id itself, the row before, then ac_0's
		{"ac_0", "", 10, 11},        // 10 and the one that says more
		{"ac_0", "p_00003", 100, 4}, // 3 rows, then the end of the table
	} {
		tx := read(db)
		values, _, _, err := plain.Page(tx, tt.account, tt.before, tt.limit, nil)
		if err != nil {
			t.Fatal(err)
		}
		if tx.walked > tt.most {
			t.Errorf("a page of %s before %q (limit %d, %d rows) visited %d rows, want at most %d",
				tt.account, tt.before, tt.limit, len(values), tx.walked, tt.most)
		}
	}
}

// TestLayering pins the store as a layer: it imports none of the fake's
// other packages, nor the module's API packages.
func TestLayering(t *testing.T) {
	t.Parallel()
	out, err := exec.Command("go", "list", "-deps", ".").Output()
	if err != nil {
		t.Fatalf("go list -deps: %v", err)
	}
	for _, p := range strings.Fields(string(out)) {
		if strings.HasPrefix(p, "github.com/acctapi/acctapi") && p != "github.com/acctapi/acctapi/fake/internal/store" {
			t.Errorf("the store imports %s", p)
		}
	}
}

// BenchmarkMemdbFloor measures what the store costs for its part of
// creating a service user: one write transaction inserting one row with a
// unique name into its table and committing, on a store that grows as the
// benchmark runs. It is the floor under the fake's BenchmarkCreate
// figures: no HTTP, JSON, authentication or validation.
func BenchmarkMemdbFloor(b *testing.B) {
	var s Schema
	users := Define(&s, "service_users", Constraints[user, none]{Unique: func(u user) string { return u.Name }, Taken: func() error { return errTaken }})
	db, err := s.Open()
	if err != nil {
		b.Fatal(err)
	}
	now := time.Date(2026, 11, 22, 0, 0, 0, 0, time.UTC)
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		i++
		id, name := "service_"+now.Format("20060102")+strconv.Itoa(i), strconv.Itoa(i)
		if err := db.Write(func(tx *Txn) error { return users.Insert(tx, "ac_1", id, user{Name: name}, none{}) }); err != nil {
			b.Fatal(err)
		}
	}
}

// read returns a read transaction on db.
func read(db *DB) *Txn {
	tx := db.Read()
	return &tx
}

// TestCount checks that Count counts an account's rows alone, and stops at
// its limit.
func TestCount(t *testing.T) {
	t.Parallel()
	db, users, _, _, _ := testDB(t)
	for i, acct := range []string{"ac_1", "ac_1", "ac_1", "ac_2", "ac_0"} {
		if err := db.Write(func(tx *Txn) error {
			return users.Insert(tx, acct, fmt.Sprintf("u_%d", i), user{Name: fmt.Sprint(i)}, none{})
		}); err != nil {
			t.Fatal(err)
		}
	}
	for _, tt := range []struct {
		account     string
		limit, want int
	}{{"ac_1", 10, 3}, {"ac_1", 2, 2}, {"ac_2", 10, 1}, {"ac_0", 10, 1}, {"ac_9", 10, 0}, {"ac_1", 0, 0}} {
		if got := users.Count(read(db), tt.account, tt.limit); got != tt.want {
			t.Errorf("Count(%s, %d) = %d, want %d", tt.account, tt.limit, got, tt.want)
		}
	}
}
