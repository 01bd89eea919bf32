// Package store is the fake's storage layer: typed tables over go-memdb,
// one write transaction at a time, and snapshots that cost almost nothing.
//
// A resource defines its table with [Define], naming the constraints its
// rows carry: a value unique within an account (a service user's name), a
// token that finds a row from any account (an API key's hashed token), and
// the ids a row references (a failover's backends), which keep those rows
// from being deleted. [Schema.Open] makes the store. Nothing outside this
// package sees go-memdb: rows go in and come out as the table's types.
//
// Every row belongs to an account and has an id; a lookup names both, so
// another account's row is simply absent, and a table's rows of one
// account are ordered by id (newest last, as ids are time-ordered).
//
// Stored values must never be modified after they are put: an update puts
// a new value.
package store

import (
	"errors"
	"fmt"
	"sync"

	memdb "github.com/hashicorp/go-memdb"
)

// record is one stored row of a table of T with extra data X. It is what
// go-memdb holds; rowData is what the indexes and the unique values read of
// it.
type record[T, X any] struct {
	account, id string
	unique      string // table, account and unique value, or ""
	refs        []string
	token       string
	value       T
	extra       X
}

// rowData is the part of a record that does not depend on its types.
type rowData interface {
	key() (account, id string)
	uniqueKey() string
	refIDs() []string
	tokenKey() string
}

func (r *record[T, X]) key() (string, string) { return r.account, r.id }
func (r *record[T, X]) uniqueKey() string     { return r.unique }
func (r *record[T, X]) refIDs() []string      { return r.refs }
func (r *record[T, X]) tokenKey() string      { return r.token }

// Row is a stored row: its account and id, its value and the extra data
// kept beside the value (derived once when it is put, such as an
// operator's compiled selectors).
type Row[T, X any] struct {
	// Account is the account the row belongs to.
	Account string
	// ID is the row's id, unique within the account's rows of the table.
	ID string
	// Value is the stored value; never change what it points to.
	Value T
	// Extra is the data kept beside the value.
	Extra X
}

func (r *record[T, X]) row() Row[T, X] {
	return Row[T, X]{Account: r.account, ID: r.id, Value: r.value, Extra: r.extra}
}

// Constraints are what a table enforces about its rows.
type Constraints[T, X any] struct {
	// Unique, when set, returns a value that must be unique among the
	// account's rows of the table ("" for none).
	Unique func(v T) string
	// Taken returns the error a write gets when another row holds its
	// unique value; required with Unique.
	Taken func() error
	// Token, when set, returns a row's token: unique across every account
	// ([ErrTokenInUse]), and a way to find the row without knowing its
	// account ([Table.ByToken]).
	Token func(x X) string
	// Refs, when set, returns the ids a row references; [Txn.Referrer]
	// finds the rows that reference an id.
	Refs func(v T) []string
}

// table is the part of a table that does not depend on its types.
type table struct {
	name                 string
	unique, refs, tokens bool
}

// Table is one table of T rows with extra data X, defined by [Define].
type Table[T, X any] struct {
	t *table
	c Constraints[T, X]
}

// Name returns the table's name.
func (t *Table[T, X]) Name() string { return t.t.name }

// RefCount returns how many ids v references ([Constraints.Refs]): each
// is an entry of the table's index of references.
func (t *Table[T, X]) RefCount(v T) int {
	if t.c.Refs == nil {
		return 0
	}
	n := 0
	for _, id := range t.c.Refs(v) {
		if id != "" {
			n++
		}
	}
	return n
}

// Schema collects the tables of a store before it opens.
type Schema struct {
	tables []*table
	byName map[string]*table
}

// Define adds a table named name to s, with its constraints. A name
// defined twice, or a Unique without Taken, is a programming error and
// panics.
func Define[T, X any](s *Schema, name string, c Constraints[T, X]) *Table[T, X] {
	if s.byName == nil {
		s.byName = map[string]*table{}
	}
	if s.byName[name] != nil || name == "" {
		panic(fmt.Sprintf("store: table %q defined twice or unnamed", name))
	}
	if c.Unique != nil && c.Taken == nil {
		panic(fmt.Sprintf("store: table %q: Unique without Taken", name))
	}
	t := &table{name: name, unique: c.Unique != nil, refs: c.Refs != nil, tokens: c.Token != nil}
	s.tables = append(s.tables, t)
	s.byName[name] = t
	return &Table[T, X]{t: t, c: c}
}

// memSchema is the go-memdb schema of s. go-memdb writes every index of a
// table on every insert, even those a row has no value for, so each table
// has only the indexes its constraints need.
func (s *Schema) memSchema() *memdb.DBSchema {
	ms := &memdb.DBSchema{Tables: map[string]*memdb.TableSchema{}}
	for _, t := range s.tables {
		// id, the primary index, orders one account's rows by id, so a
		// lookup names account and id and a page is a bounded walk from
		// before_id downwards.
		idx := map[string]*memdb.IndexSchema{"id": {Name: "id", Unique: true, Indexer: keyIndex{}}}
		if t.refs {
			idx["refs"] = &memdb.IndexSchema{Name: "refs", AllowMissing: true, Indexer: refsIndex{}}
		}
		if t.tokens {
			idx["token"] = &memdb.IndexSchema{Name: "token", Unique: true, AllowMissing: true, Indexer: tokenIndex{}}
		}
		ms.Tables[t.name] = &memdb.TableSchema{Name: t.name, Indexes: idx}
	}
	return ms
}

// DB is an open store. It is safe for concurrent use: any number of
// readers, one writer at a time.
type DB struct {
	schema *Schema
	mu     sync.RWMutex // guards db, which Restore swaps
	db     *memdb.MemDB
	names  names // with db; see names for its locking
	wtx    Txn   // the write transaction in progress; see Write
}

// Open makes an empty store of s's tables. Tables defined after Open are
// not part of it.
func (s *Schema) Open() (*DB, error) {
	db, err := memdb.NewMemDB(s.memSchema())
	if err != nil {
		return nil, fmt.Errorf("store: invalid schema: %w", err)
	}
	d := &DB{schema: s}
	// A snapshot of a new database rather than the database itself: the
	// two behave alike except that a snapshot's writes do not track and
	// close the watch channel of every tree node they replace, work that
	// serves only go-memdb's WatchSet, which the store never uses.
	d.install(db.Snapshot())
	return d, nil
}

// install makes db the store's database and rebuilds the unique values
// from it; d.mu is held or d is not yet shared.
func (d *DB) install(db *memdb.MemDB) {
	d.db = db
	d.names.rebuild(d.schema, db.Txn(false))
}

// Txn is a transaction: a consistent view of the store, and in a write
// transaction the changes made so far.
type Txn struct {
	tx    *memdb.Txn
	names *names // nil in a read transaction
	db    *DB
	// walked counts the rows Page has visited in this transaction, so
	// that a test can hold Page to its cost (it stops at the first row of
	// another account, and at the first row past the page).
	walked int
}

// Read returns a read transaction on the current store. It needs no
// closing. It is a value, so that a reader that keeps it where it keeps
// the rest of its request allocates nothing more.
func (d *DB) Read() Txn {
	d.mu.RLock()
	defer d.mu.RUnlock()
	return Txn{tx: d.db.Txn(false), db: d}
}

// Write runs fn in a write transaction, committing when it returns nil
// and discarding every change otherwise (or if fn panics). Writes are
// serialized; Restore waits for the write in progress.
func (d *DB) Write(fn func(tx *Txn) error) error {
	d.mu.RLock()
	defer d.mu.RUnlock()
	mtx := d.db.Txn(true)
	committed := false
	defer func() {
		if !committed {
			d.names.discard()
			mtx.Abort()
		}
	}()
	// go-memdb's writer lock, taken by Txn(true), makes this the only
	// writer, so the one write transaction value is reused.
	d.wtx = Txn{tx: mtx, names: &d.names, db: d}
	if err := fn(&d.wtx); err != nil {
		return err
	}
	d.names.commit()
	mtx.Commit()
	committed = true
	return nil
}

// Snapshot is a saved state of a store. It is immutable; go-memdb shares
// the unchanged parts of its trees, so taking one costs almost nothing.
type Snapshot struct{ db *memdb.MemDB }

// Snapshot saves the store's current state.
func (d *DB) Snapshot() *Snapshot {
	d.mu.Lock()
	defer d.mu.Unlock()
	return &Snapshot{db: d.db.Snapshot()}
}

// Restore puts the store back in the state snap saved, after the write in
// progress. It costs time in proportion to the unique values and tokens
// snap holds, which are indexed again, and nothing for the rest.
func (d *DB) Restore(snap *Snapshot) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.install(snap.db.Snapshot())
}

// ErrTokenInUse is Put's answer to a token that another row already has.
var ErrTokenInUse = errors.New("store: token already in use")

// errReadOnly is a write's answer in a read transaction.
var errReadOnly = errors.New("store: write in a read transaction")

// Get returns the row with id in account, and whether it exists.
func (t *Table[T, X]) Get(tx *Txn, account, id string) (Row[T, X], bool) {
	if r := t.first(tx, "id", Key(account, id)); r != nil {
		return r.row(), true
	}
	return Row[T, X]{}, false
}

// Has reports whether account has a row with id.
func (t *Table[T, X]) Has(tx *Txn, account, id string) bool {
	return t.first(tx, "id", Key(account, id)) != nil
}

// ByToken returns the row whose token is token, in any account.
func (t *Table[T, X]) ByToken(tx *Txn, token string) (Row[T, X], bool) {
	if !t.t.tokens {
		return Row[T, X]{}, false
	}
	if r := t.first(tx, "token", token); r != nil {
		return r.row(), true
	}
	return Row[T, X]{}, false
}

// TokenHeldBy reports whether the row whose token is token has id, in any
// account. In a write transaction it reads the store's index of tokens,
// not go-memdb's (no allocation); a write checks its request's key with
// it. Ids are never reused, so a key's id names one account for good.
func (t *Table[T, X]) TokenHeldBy(tx *Txn, token, id string) bool {
	if !t.t.tokens || id == "" {
		return false
	}
	if tx.names != nil {
		return tx.names.holderOfToken(t.t.name, token) == id
	}
	r := t.first(tx, "token", token)
	return r != nil && r.id == id
}

func (t *Table[T, X]) first(tx *Txn, index string, arg any) *record[T, X] {
	raw, err := tx.tx.First(t.t.name, index, arg)
	if err != nil || raw == nil {
		return nil
	}
	return raw.(*record[T, X])
}

// Insert puts a new row, with an id no row of the account has.
func (t *Table[T, X]) Insert(tx *Txn, account, id string, v T, x X) error {
	return t.put(tx, &record[T, X]{account: account, id: id, value: v, extra: x})
}

// Replace puts v and x in place of the row cur, keeping its account and
// id.
func (t *Table[T, X]) Replace(tx *Txn, cur Row[T, X], v T, x X) error {
	r := &record[T, X]{account: cur.Account, id: cur.ID, value: v, extra: x}
	var old []string
	if t.c.Unique != nil {
		if u := t.c.Unique(cur.Value); u != "" {
			old = append(old, t.uniqueKey(cur.Account, u))
		}
	}
	if t.c.Token != nil {
		if tok := t.c.Token(cur.Extra); tok != "" {
			old = append(old, t.tokenKey(tok))
		}
	}
	return t.put(tx, r, old...)
}

// put stores r, enforcing the table's constraints; old are the unique
// keys of the row r replaces. Unique values and tokens are enforced the
// same way, by the keys the store keeps beside go-memdb (see names): a key
// another row holds is refused, a key r no longer has is released.
func (t *Table[T, X]) put(tx *Txn, r *record[T, X], old ...string) error {
	if tx.names == nil {
		return errReadOnly
	}
	var keys [2]string // r's unique value's and token's keys, when it has them
	var errs [2]func() error
	if t.c.Unique != nil {
		if u := t.c.Unique(r.value); u != "" {
			r.unique = t.uniqueKey(r.account, u)
			keys[0], errs[0] = r.unique, t.c.Taken
		}
	}
	if t.c.Token != nil {
		if r.token = t.c.Token(r.extra); r.token != "" {
			keys[1], errs[1] = t.tokenKey(r.token), errTokenInUse
		}
	}
	for i, k := range keys {
		if k == "" {
			continue
		}
		if holder := tx.names.holder(k); holder != "" && holder != r.id {
			return errs[i]()
		}
	}
	for _, k := range old {
		if k != keys[0] && k != keys[1] {
			tx.names.release(k)
		}
	}
	for _, k := range keys {
		if k != "" {
			tx.names.claim(k, r.id)
		}
	}
	if t.c.Refs != nil {
		r.refs = t.c.Refs(r.value)
	}
	return tx.tx.Insert(t.t.name, r)
}

// errTokenInUse returns ErrTokenInUse.
func errTokenInUse() error { return ErrTokenInUse }

// tokenKey is the key of a token in t: tokens are unique across accounts.
func (t *Table[T, X]) tokenKey(tok string) string { return tokenKey(t.t.name, tok) }

func tokenKey(table, tok string) string { return "\x01" + table + "\x00" + tok }

// uniqueKey is the key of a unique value u in account's rows of t.
func (t *Table[T, X]) uniqueKey(account, u string) string {
	return t.t.name + "\x00" + account + "\x00" + u
}

// Delete removes the row with id from account, releasing its unique
// value and token; a row that does not exist is no error.
func (t *Table[T, X]) Delete(tx *Txn, account, id string) error {
	if tx.names == nil {
		return errReadOnly
	}
	r := t.first(tx, "id", Key(account, id))
	if r == nil {
		return nil
	}
	if r.unique != "" {
		tx.names.release(r.unique)
	}
	if r.token != "" {
		tx.names.release(t.tokenKey(r.token))
	}
	return tx.tx.Delete(t.t.name, r)
}

// Referrer returns the table and id of a row of account that references
// id, if there is one.
func (tx *Txn) Referrer(account, id string) (table, referrer string, ok bool) {
	for _, t := range tx.db.schema.tables {
		if !t.refs {
			continue
		}
		it, err := tx.tx.Get(t.name, "refs", id)
		if err != nil {
			continue
		}
		for raw := it.Next(); raw != nil; raw = it.Next() {
			if a, rid := raw.(rowData).key(); a == account {
				return t.name, rid, true
			}
		}
	}
	return "", "", false
}

// maxID sorts after every id (ids are ASCII).
const maxID = "\x7f"

// Page walks account's rows from the highest id to the lowest, starting
// below beforeID (or at the highest when it is empty), and returns the
// values of up to limit rows that keep accepts (nil keep accepts all),
// their ids, and whether another accepted row follows them. keep
// sees each value in place, without a copy; it must not change it. Its
// cost grows with limit and with the rows keep rejects, never otherwise
// with the number stored.
func (t *Table[T, X]) Page(tx *Txn, account, beforeID string, limit int, keep func(v *T) (bool, error)) (values []T, ids []string, more bool, err error) {
	// Any beforeID, a NUL in it too (the index key is the account, a NUL
	// and the id, so the account's rows sort as their ids do), walks the
	// ids that sort before it as strings.
	if beforeID == "" {
		beforeID = maxID
	}
	it, err := tx.tx.ReverseLowerBound(t.t.name, "id", Key(account, beforeID))
	if err != nil {
		return nil, nil, false, err
	}
	var page []*record[T, X]
	for raw := it.Next(); raw != nil; raw = it.Next() {
		r := raw.(*record[T, X])
		tx.walked++
		if r.account != account {
			break
		}
		if r.id >= beforeID {
			continue // before_id itself
		}
		if keep != nil {
			ok, err := keep(&r.value)
			if err != nil {
				return nil, nil, false, err
			}
			if !ok {
				continue
			}
		}
		if len(page) == limit {
			more = true
			break
		}
		page = append(page, r)
	}
	values, ids = make([]T, len(page)), make([]string, len(page))
	for i, r := range page {
		values[i], ids[i] = r.value, r.id
	}
	return values, ids, more, nil
}

// Count returns the number of account's rows, reading no more than limit
// of them: a count of limit means limit or more.
func (t *Table[T, X]) Count(tx *Txn, account string, limit int) int {
	it, err := tx.tx.LowerBound(t.t.name, "id", Key(account, ""))
	if err != nil {
		return 0
	}
	n := 0
	for raw := it.Next(); raw != nil && n < limit; raw = it.Next() {
		if raw.(*record[T, X]).account != account {
			break
		}
		n++
	}
	return n
}

// All returns every row of account, lowest id first.
func (t *Table[T, X]) All(tx *Txn, account string) []Row[T, X] {
	it, err := tx.tx.LowerBound(t.t.name, "id", Key(account, ""))
	if err != nil {
		return nil
	}
	var out []Row[T, X]
	for raw := it.Next(); raw != nil; raw = it.Next() {
		r := raw.(*record[T, X])
		tx.walked++
		if r.account != account {
			break
		}
		out = append(out, r.row())
	}
	return out
}

// CheckUnique compares the unique values the store keeps with those its
// rows hold, and returns an error naming the first difference; tests call
// it after concurrent writes and restores.
func (d *DB) CheckUnique() error {
	d.mu.Lock()
	defer d.mu.Unlock()
	var rebuilt names
	rebuilt.rebuild(d.schema, d.db.Txn(false))
	if len(rebuilt.held) != len(d.names.held) {
		return fmt.Errorf("store: %d unique values kept, %d held by rows", len(d.names.held), len(rebuilt.held))
	}
	for k, id := range rebuilt.held {
		if got := d.names.held[k]; got != id {
			return fmt.Errorf("store: unique value %q kept for %q, held by %q", k, got, id)
		}
	}
	return nil
}
