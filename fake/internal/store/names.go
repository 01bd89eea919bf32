package store

import memdb "github.com/hashicorp/go-memdb"

// names holds every stored unique value (a service user's name) and token
// (an API key's hashed token) with the id of the row holding it: the one
// way the store enforces uniqueness. It sits beside go-memdb rather than in an index
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
	held   map[string]string // unique key → id, as committed
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

// holderOfToken is holder(tokenKey(table, tok)) without building the key
// on the heap: the write path asks it of every write.
func (n *names) holderOfToken(table, tok string) string {
	var buf [128]byte
	k := append(append(append(append(buf[:0], 1), table...), 0), tok...)
	for i := len(n.staged) - 1; i >= 0; i-- {
		if n.staged[i].key == string(k) {
			return n.staged[i].id
		}
	}
	return n.held[string(k)]
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

// rebuild makes names hold the unique values of the tables of s that txn
// reads.
func (n *names) rebuild(s *Schema, txn *memdb.Txn) {
	n.held, n.staged = map[string]string{}, nil
	for _, t := range s.tables {
		if !t.unique && !t.tokens {
			continue
		}
		it, err := txn.LowerBound(t.name, "id", []byte{})
		if err != nil {
			continue // every table of s is in the database (Open)
		}
		for raw := it.Next(); raw != nil; raw = it.Next() {
			r := raw.(rowData)
			_, id := r.key()
			if u := r.uniqueKey(); u != "" {
				n.held[u] = id
			}
			if tok := r.tokenKey(); tok != "" {
				n.held[tokenKey(t.name, tok)] = id
			}
		}
	}
}
