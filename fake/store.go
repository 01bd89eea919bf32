package fake

import (
	"fmt"
	"strings"

	memdb "github.com/hashicorp/go-memdb"
)

// object is one stored record. Each kind of resource has its own go-memdb
// table (see kinds), and every account's objects of that kind share it;
// Value holds the domain package's value (account.ServiceUser,
// backends.Failover, …) and is never modified after it is inserted: an
// update inserts a new object.
type object struct {
	Account string
	Kind    string
	ID      string
	// Unique, when set, must be unique within the kind; it holds kind,
	// account and the unique value (a service user's name), and is the
	// object's key in the server's names.
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

// kindTable is one kind's table and the secondary indexes it needs.
// go-memdb writes to every index of a table on every insert, even those an
// object has no value for, so each kind's table has only its own: a
// service user is written to one tree, not four.
type kindTable struct {
	kind string
	// unique kinds keep a unique value per object in the server's names,
	// not in an index (see names).
	unique       bool
	refs, tokens bool
}

// kinds are the store's tables, one per kind of resource.
var kinds = []kindTable{
	{kind: kindAccount},
	{kind: kindAPIKey, tokens: true},
	{kind: kindSvcUser, unique: true},
	{kind: kindCA},
	{kind: kindFailover, refs: true},
	{kind: kindHTTPResponse},
	{kind: kindTunnelGroup},
	{kind: kindTunnel},
	{kind: kindDestination},
	{kind: kindSubscription, refs: true},
	{kind: kindOperator},
	{kind: kindEndpoint},
}

// schema is the fake's go-memdb schema; schema_test.go validates it.
func schema() *memdb.DBSchema {
	s := &memdb.DBSchema{Tables: map[string]*memdb.TableSchema{}}
	for _, k := range kinds {
		// id, the primary index, orders one account's objects by id, so a
		// lookup names account and id (another account's id is simply
		// absent) and a page is a bounded walk from before_id downwards.
		idx := map[string]*memdb.IndexSchema{"id": {Name: "id", Unique: true, Indexer: keyIndex{}}}
		if k.refs {
			idx["refs"] = &memdb.IndexSchema{Name: "refs", AllowMissing: true, Indexer: &memdb.StringSliceFieldIndex{Field: "Refs"}}
		}
		if k.tokens {
			idx["token"] = &memdb.IndexSchema{Name: "token", Unique: true, AllowMissing: true, Indexer: &memdb.StringFieldIndex{Field: "Token"}}
		}
		s.Tables[k.kind] = &memdb.TableSchema{Name: k.kind, Indexes: idx}
	}
	return s
}

// newDB makes an empty store. It returns a snapshot of a new go-memdb
// database rather than the database itself: the two behave alike except
// that a snapshot's writes do not track and close the watch channel of every
// tree node they replace, work that serves only go-memdb's WatchSet, which
// the fake never uses. (Restore installs snapshots in any case.)
func newDB() *memdb.MemDB {
	db, err := memdb.NewMemDB(schema())
	if err != nil {
		panic(fmt.Sprintf("fake: invalid schema: %v", err)) // schema_test.go proves it valid
	}
	return db.Snapshot()
}

// keyIndex indexes an object by account and id, joined by a NUL byte:
// one key, built with one allocation, instead of a compound index's two (a
// lookup is on every request's path).
type keyIndex struct{}

// objectKey is the "id" index's key of an object.
func objectKey(account, id string) []byte {
	b := make([]byte, 0, len(account)+len(id)+1)
	return append(append(append(b, account...), 0), id...)
}

// FromObject implements memdb.SingleIndexer.
func (keyIndex) FromObject(raw any) (bool, []byte, error) {
	o, ok := raw.(*object)
	if !ok {
		return false, nil, fmt.Errorf("fake: keyIndex: %T is not an object", raw)
	}
	return true, objectKey(o.Account, o.ID), nil
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
func uniqueKey(kind, account, value string) string {
	return kind + "\x00" + account + "\x00" + value
}

// names holds every stored unique value (a service user's name) with the id
// of the object holding it. It sits beside go-memdb rather than in an index
// of it because a go-memdb index entry costs a tree leaf, its node and two
// channels, and a tree path copied on every write (moving names here took
// the heap per stored service user from 1,287 to 930 bytes), and
// uniqueness is only ever checked by writers.
//
// A write transaction stages its changes; they are applied just before
// go-memdb commits, still under go-memdb's writer lock, which serializes
// every write, and dropped if the transaction fails. Restore rebuilds names
// from the restored store, so a snapshot needs no copy of it.
type names struct {
	held   map[string]string // Unique → id, as committed
	staged []nameChange      // the write transaction's changes, in order
}

// nameChange is a staged change to names: key now held by id, or free if
// id is "". A transaction makes one or two, so a slice beats a map.
type nameChange struct{ key, id string }

// holder returns the id holding key, or "".
func (n *names) holder(key string) string {
	for i := len(n.staged) - 1; i >= 0; i-- {
		if n.staged[i].key == key {
			return n.staged[i].id
		}
	}
	return n.held[key]
}

func (n *names) claim(key, id string) { n.staged = append(n.staged, nameChange{key, id}) }
func (n *names) release(key string)   { n.staged = append(n.staged, nameChange{key, ""}) }

// commit applies the staged changes.
func (n *names) commit() {
	for _, c := range n.staged {
		if c.id == "" {
			delete(n.held, c.key)
		} else {
			n.held[c.key] = c.id
		}
	}
	n.discard()
}

// discard drops the staged changes.
func (n *names) discard() {
	clear(n.staged) // let go of the strings
	n.staged = n.staged[:0]
}

// rebuild makes names hold the unique values stored in the store txn reads.
func (n *names) rebuild(txn *memdb.Txn) {
	n.held, n.staged = map[string]string{}, nil
	for _, k := range kinds {
		if !k.unique {
			continue
		}
		it, err := txn.LowerBound(k.kind, "id", []byte{})
		if err != nil {
			continue // the schema has every kind's table (schema_test.go)
		}
		for raw := it.Next(); raw != nil; raw = it.Next() {
			if o := raw.(*object); o.Unique != "" {
				n.held[o.Unique] = o.ID
			}
		}
	}
}

// kindTables are kinds by name.
var kindTables = func() map[string]kindTable {
	out := map[string]kindTable{}
	for _, k := range kinds {
		out[k.kind] = k
	}
	return out
}()

// insert stores o in its kind's table, replacing the object with its id.
func insert(txn *memdb.Txn, o *object) error { return txn.Insert(o.Kind, o) }

// drop deletes o from its kind's table, releasing its unique value.
func (s *Server) drop(txn *memdb.Txn, o *object) error {
	if o.Unique != "" {
		s.names.release(o.Unique)
	}
	return txn.Delete(o.Kind, o)
}

// findOne returns the first object of kind that index finds for arg, or nil.
func findOne(txn *memdb.Txn, kind, index string, arg any) *object {
	raw, err := txn.First(kind, index, arg)
	if err != nil || raw == nil {
		return nil
	}
	return raw.(*object)
}

// lookup returns the object with id if it is of kind and belongs to
// account; anything else, including another account's object, is absent.
func lookup(txn *memdb.Txn, account, kind, id string) *object {
	return findOne(txn, kind, "id", objectKey(account, id))
}

// byToken returns the API key whose hashed token is key, or nil.
func byToken(txn *memdb.Txn, key string) *object {
	return findOne(txn, kindAPIKey, "token", key)
}

// referrer returns an object that references id, or nil.
func referrer(txn *memdb.Txn, id string) *object {
	for _, k := range kinds {
		if k.refs {
			if o := findOne(txn, k.kind, "refs", id); o != nil {
				return o
			}
		}
	}
	return nil
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
	it, err := txn.ReverseLowerBound(kind, "id", objectKey(account, from))
	if err != nil {
		return nil, false, err
	}
	var out []*object
	for raw := it.Next(); raw != nil; raw = it.Next() {
		o := raw.(*object)
		if o.Account != account {
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
	it, err := txn.LowerBound(kind, "id", objectKey(account, ""))
	if err != nil {
		return nil
	}
	var out []*object
	for raw := it.Next(); raw != nil; raw = it.Next() {
		o := raw.(*object)
		if o.Account != account {
			break
		}
		out = append(out, o)
	}
	return out
}
