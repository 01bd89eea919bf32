package fake

import (
	"testing"

	memdb "github.com/hashicorp/go-memdb"
)

// TestSchema validates the go-memdb schema, which newDB trusts.
func TestSchema(t *testing.T) {
	t.Parallel()
	s := schema()
	if err := s.Validate(); err != nil {
		t.Fatalf("schema: %v", err)
	}
	tbl := s.Tables[objectsTable]
	if tbl == nil {
		t.Fatalf("no %q table", objectsTable)
	}
	// go-memdb requires a unique "id" index; the others are what the store's
	// helpers look objects up by.
	tests := []struct {
		index        string
		unique       bool
		allowMissing bool
	}{
		{"id", true, false},
		{"unique", true, true},
		{"refs", false, true},
		{"token", true, true},
	}
	for _, tt := range tests {
		idx := tbl.Indexes[tt.index]
		if idx == nil {
			t.Errorf("no index %q", tt.index)
			continue
		}
		if idx.Unique != tt.unique || idx.AllowMissing != tt.allowMissing {
			t.Errorf("index %q: unique %v, allow missing %v; want %v, %v", tt.index, idx.Unique, idx.AllowMissing, tt.unique, tt.allowMissing)
		}
	}
	if len(tbl.Indexes) != len(tests) {
		t.Errorf("%d indexes, want %d", len(tbl.Indexes), len(tests))
	}
	// The schema works: insert and find by every index.
	db, err := memdb.NewMemDB(s)
	if err != nil {
		t.Fatal(err)
	}
	txn := db.Txn(true)
	o := &object{Account: "ac_1", Kind: "k", ID: "x_1", Unique: "u", Refs: []string{"y_1"}, Token: "t", Value: 1}
	if err := txn.Insert(objectsTable, o); err != nil {
		t.Fatal(err)
	}
	txn.Commit()
	read := db.Txn(false)
	for _, q := range []struct {
		index string
		args  []any
	}{
		{"id", []any{objectKey("ac_1", "k", "x_1")}},
		{"refs", []any{"y_1"}},
		{"token", []any{"t"}},
	} {
		raw, err := read.First(objectsTable, q.index, q.args...)
		if err != nil || raw == nil {
			t.Errorf("First by %s %v: %v, %v", q.index, q.args, raw, err)
		}
	}
}
