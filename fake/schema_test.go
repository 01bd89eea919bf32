package fake

import (
	"testing"

	memdb "github.com/hashicorp/go-memdb"
)

// TestSchema validates the go-memdb schema, which newDB trusts, and
// checks that every kind a server stores has its table with the indexes
// its objects are looked up by.
func TestSchema(t *testing.T) {
	t.Parallel()
	s := schema()
	if err := s.Validate(); err != nil {
		t.Fatalf("schema: %v", err)
	}
	srv := Start(t, WithoutListener())
	want := map[string]bool{kindAccount: true}
	for kind, info := range srv.resByKind {
		want[kind] = true
		// Filter cost bounds rely on maxIDLen (see fieldSizes).
		if n := len(info.prefix) + 1 + 27; n > maxIDLen {
			t.Errorf("kind %q: ids of %d characters, more than maxIDLen", kind, n)
		}
	}
	for kind := range want {
		if s.Tables[kind] == nil {
			t.Errorf("kind %q has no table", kind)
		}
	}
	if len(s.Tables) != len(want) {
		t.Errorf("%d tables, want one per kind (%d)", len(s.Tables), len(want))
	}
	db, err := memdb.NewMemDB(s)
	if err != nil {
		t.Fatal(err)
	}
	for _, k := range kinds {
		tbl := s.Tables[k.kind]
		// go-memdb requires a unique "id" index; the others are what the
		// store's helpers look objects up by.
		type index struct{ unique, allowMissing bool }
		wantIdx := map[string]index{"id": {true, false}}
		if k.refs {
			wantIdx["refs"] = index{false, true}
		}
		if k.tokens {
			wantIdx["token"] = index{true, true}
		}
		for name, w := range wantIdx {
			idx := tbl.Indexes[name]
			if idx == nil {
				t.Errorf("%s: no index %q", k.kind, name)
				continue
			}
			if got := (index{idx.Unique, idx.AllowMissing}); got != w {
				t.Errorf("%s: index %q is %+v, want %+v", k.kind, name, got, w)
			}
		}
		if len(tbl.Indexes) != len(wantIdx) {
			t.Errorf("%s: %d indexes, want %d", k.kind, len(tbl.Indexes), len(wantIdx))
		}
		// The table works: insert, then find by every index.
		txn := db.Txn(true)
		o := &object{Account: "ac_1", Kind: k.kind, ID: "x_1", Refs: []string{"y_" + k.kind}, Token: "t", Value: 1}
		if err := insert(txn, o); err != nil {
			t.Fatalf("%s: %v", k.kind, err)
		}
		txn.Commit()
		read := db.Txn(false)
		if lookup(read, "ac_1", k.kind, "x_1") != o {
			t.Errorf("%s: lookup does not find the object", k.kind)
		}
		if lookup(read, "ac_2", k.kind, "x_1") != nil {
			t.Errorf("%s: another account's lookup finds the object", k.kind)
		}
		if k.tokens && byToken(read, "t") != o {
			t.Errorf("%s: byToken does not find the object", k.kind)
		}
		if k.refs && referrer(read, "y_"+k.kind) != o {
			t.Errorf("%s: referrer does not find the object", k.kind)
		}
	}
}
