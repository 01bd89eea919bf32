package store

import (
	"fmt"

	memdb "github.com/hashicorp/go-memdb"
)

// Key is the "id" index's key of a row: account and id joined by a NUL
// byte, one key built with one allocation instead of a compound index's
// two (a lookup is on every request's path).
func Key(account, id string) []byte {
	b := make([]byte, 0, len(account)+len(id)+1)
	return append(append(append(b, account...), 0), id...)
}

// keyIndex indexes a row by [Key].
type keyIndex struct{}

// FromObject implements memdb.SingleIndexer.
func (keyIndex) FromObject(raw any) (bool, []byte, error) {
	r, ok := raw.(rowData)
	if !ok {
		return false, nil, fmt.Errorf("store: keyIndex: %T is not a row", raw)
	}
	account, id := r.key()
	return true, Key(account, id), nil
}

// FromArgs implements memdb.Indexer: the one argument is a key made by Key.
func (keyIndex) FromArgs(args ...any) ([]byte, error) {
	if len(args) != 1 {
		return nil, fmt.Errorf("store: keyIndex: want one key, got %d arguments", len(args))
	}
	key, ok := args[0].([]byte)
	if !ok {
		return nil, fmt.Errorf("store: keyIndex: key is %T, want []byte", args[0])
	}
	return key, nil
}

// tokenIndex indexes a row by its token; a row without one is not in it.
type tokenIndex struct{}

// FromObject implements memdb.SingleIndexer.
func (tokenIndex) FromObject(raw any) (bool, []byte, error) {
	r, ok := raw.(rowData)
	if !ok {
		return false, nil, fmt.Errorf("store: tokenIndex: %T is not a row", raw)
	}
	tok := r.tokenKey()
	if tok == "" {
		return false, nil, nil
	}
	return true, stringKey(tok), nil
}

// FromArgs implements memdb.Indexer: the one argument is a token.
func (tokenIndex) FromArgs(args ...any) ([]byte, error) { return stringArg(args) }

// refsIndex indexes a row by each id it references.
type refsIndex struct{}

// FromObject implements memdb.MultiIndexer.
func (refsIndex) FromObject(raw any) (bool, [][]byte, error) {
	r, ok := raw.(rowData)
	if !ok {
		return false, nil, fmt.Errorf("store: refsIndex: %T is not a row", raw)
	}
	refs := r.refIDs()
	if len(refs) == 0 {
		return false, nil, nil
	}
	out := make([][]byte, 0, len(refs))
	for _, id := range refs {
		if id != "" {
			out = append(out, stringKey(id))
		}
	}
	return len(out) > 0, out, nil
}

// FromArgs implements memdb.Indexer: the one argument is an id.
func (refsIndex) FromArgs(args ...any) ([]byte, error) { return stringArg(args) }

// stringKey is a string's index key: its bytes and a NUL, as go-memdb's
// own string indexes make it, so that no key is a prefix of another.
func stringKey(s string) []byte {
	return append([]byte(s), 0)
}

func stringArg(args []any) ([]byte, error) {
	if len(args) != 1 {
		return nil, fmt.Errorf("store: want one argument, got %d", len(args))
	}
	s, ok := args[0].(string)
	if !ok {
		return nil, fmt.Errorf("store: argument is %T, want string", args[0])
	}
	return stringKey(s), nil
}

// compile-time checks that the indexers have the interfaces go-memdb needs.
var (
	_ memdb.SingleIndexer = keyIndex{}
	_ memdb.SingleIndexer = tokenIndex{}
	_ memdb.MultiIndexer  = refsIndex{}
)
