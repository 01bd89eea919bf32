package fake

import (
	"fmt"
	"strings"

	memdb "github.com/hashicorp/go-memdb"
)

// object is one stored record. Every resource of every account lives in one
// go-memdb table, told apart by Kind; Value holds the domain package's value
// (account.ServiceUser, backends.Failover, …) and is never modified after it
// is inserted: an update inserts a new object.
type object struct {
	Account string
	Kind    string
	ID      string
	// Unique, when set, must be unique across the table; it holds
	// account, kind and the unique value (a service user's name).
	Unique string
	// Refs lists the ids this object references; an object that others
	// reference cannot be deleted.
	Refs []string
	// Aux holds immutable data derived from Value that requests need, so
	// it is made once when the object is stored (an operator's compiled
	// endpoint selectors).
	Aux any
	// Token is the SHA-256 of an API key's token, as raw bytes.
	Token string
	Value any
}

const objectsTable = "objects"

// schema is the fake's go-memdb schema; schema_test.go validates it.
func schema() *memdb.DBSchema {
	return &memdb.DBSchema{Tables: map[string]*memdb.TableSchema{
		objectsTable: {
			Name: objectsTable,
			Indexes: map[string]*memdb.IndexSchema{
				// id, the primary index, orders one account's objects of one
				// kind by id, so a lookup names account, kind and id (another
				// account's id is simply absent) and a page is a bounded walk
				// from before_id downwards. One index serves both, so a write
				// updates one tree fewer.
				"id":     {Name: "id", Unique: true, Indexer: keyIndex{}},
				"unique": {Name: "unique", Unique: true, AllowMissing: true, Indexer: &memdb.StringFieldIndex{Field: "Unique"}},
				"refs":   {Name: "refs", AllowMissing: true, Indexer: &memdb.StringSliceFieldIndex{Field: "Refs"}},
				"token":  {Name: "token", Unique: true, AllowMissing: true, Indexer: &memdb.StringFieldIndex{Field: "Token"}},
			},
		},
	}}
}

func newDB() *memdb.MemDB {
	db, err := memdb.NewMemDB(schema())
	if err != nil {
		panic(fmt.Sprintf("fake: invalid schema: %v", err)) // schema_test.go proves it valid
	}
	return db
}

// keyIndex indexes an object by account, kind and id, joined by NUL
// bytes: one key, built with one allocation, instead of a compound index's
// three (a lookup is on every request's path).
type keyIndex struct{}

// objectKey is the "id" index's key of an object.
func objectKey(account, kind, id string) []byte {
	b := make([]byte, 0, len(account)+len(kind)+len(id)+2)
	b = append(append(append(append(append(b, account...), 0), kind...), 0), id...)
	return b
}

// FromObject implements memdb.SingleIndexer.
func (keyIndex) FromObject(raw any) (bool, []byte, error) {
	o, ok := raw.(*object)
	if !ok {
		return false, nil, fmt.Errorf("fake: keyIndex: %T is not an object", raw)
	}
	return true, objectKey(o.Account, o.Kind, o.ID), nil
}

// FromArgs implements memdb.Indexer: the one argument is a key made by
// objectKey.
func (keyIndex) FromArgs(args ...any) ([]byte, error) {
	if len(args) != 1 {
		return nil, fmt.Errorf("fake: keyIndex: want one key, got %d arguments", len(args))
	}
	key, ok := args[0].([]byte)
	if !ok {
		return nil, fmt.Errorf("fake: keyIndex: key is %T, want []byte", args[0])
	}
	return key, nil
}

// uniqueKey builds an object's Unique value.
func uniqueKey(account, kind, value string) string {
	return account + "\x00" + kind + "\x00" + value
}

// lookup returns the object with id if it is of kind and belongs to
// account; anything else, including another account's object, is absent.
func lookup(txn *memdb.Txn, account, kind, id string) *object {
	raw, err := txn.First(objectsTable, "id", objectKey(account, kind, id))
	if err != nil || raw == nil {
		return nil
	}
	return raw.(*object)
}

// byUnique returns the object holding a unique value, or nil.
func byUnique(txn *memdb.Txn, key string) *object {
	raw, err := txn.First(objectsTable, "unique", key)
	if err != nil || raw == nil {
		return nil
	}
	return raw.(*object)
}

// referrer returns an object that references id, or nil.
func referrer(txn *memdb.Txn, id string) *object {
	raw, err := txn.First(objectsTable, "refs", id)
	if err != nil || raw == nil {
		return nil
	}
	return raw.(*object)
}

// maxID sorts after every id (ids are ASCII).
const maxID = "\x7f"

// page walks account's objects of kind from newest to oldest, starting
// below beforeID (or at the newest when it is empty), and returns up to
// limit objects that keep accepts, and whether another accepted object
// follows them. Its cost grows with limit and with the objects keep
// rejects, never with the number stored otherwise.
func page(txn *memdb.Txn, account, kind, beforeID string, limit int, keep func(*object) (bool, error)) ([]*object, bool, error) {
	from := beforeID
	if from == "" || strings.ContainsRune(from, 0) {
		from = maxID
	}
	it, err := txn.ReverseLowerBound(objectsTable, "id", objectKey(account, kind, from))
	if err != nil {
		return nil, false, err
	}
	var out []*object
	for raw := it.Next(); raw != nil; raw = it.Next() {
		o := raw.(*object)
		if o.Account != account || o.Kind != kind {
			break
		}
		if o.ID >= from {
			continue // before_id itself
		}
		if keep != nil {
			ok, err := keep(o)
			if err != nil {
				return nil, false, err
			}
			if !ok {
				continue
			}
		}
		if len(out) == limit {
			return out, true, nil
		}
		out = append(out, o)
	}
	return out, false, nil
}

// all returns every object of kind in account, oldest first.
func all(txn *memdb.Txn, account, kind string) []*object {
	it, err := txn.LowerBound(objectsTable, "id", objectKey(account, kind, ""))
	if err != nil {
		return nil
	}
	var out []*object
	for raw := it.Next(); raw != nil; raw = it.Next() {
		o := raw.(*object)
		if o.Account != account || o.Kind != kind {
			break
		}
		out = append(out, o)
	}
	return out
}
