package ratelimit

import (
	"fmt"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/google/cel-go/common/types"
	"github.com/google/cel-go/common/types/ref"
	"github.com/google/cel-go/common/types/traits"
	"github.com/google/cel-go/interpreter"

	"github.com/acctapi/acctapi/internal/trunc"
)

// orderedMap is a map whose iteration visits its keys in sorted order. Go
// maps, and so cel-go's maps of them, iterate in a random order, so a
// bucket key built by iterating one (req.headers.map(k, k)) changed from
// one identical request to the next, and each order was a bucket of its
// own: a client got several times the capacity. Every map the environment
// gives an expression (request data and what functions decode) is one.
//
// A lookup of a string key longer than any of the map's finds nothing
// without hashing the key: a lookup is charged one unit, and hashing a
// 1 MiB header used as a key ten thousand times read 10 GB.
type orderedMap struct {
	traits.Mapper
	*mapIndex
}

type mapIndex struct {
	keys    []ref.Val // sorted on first iteration
	longest int       // the longest string key's length, or -1 until a long key is looked up
}

// ordered returns m iterating in key order.
func ordered(m traits.Mapper) traits.Mapper { return orderedMap{m, &mapIndex{longest: -1}} }

// shortKeyBytes is the length of key under which a lookup hashes the key
// at once.
const shortKeyBytes = 256

// absent reports whether k is a string key longer than any of m's.
func (m orderedMap) absent(k ref.Val) bool {
	s, ok := k.(types.String)
	if !ok || len(s) <= shortKeyBytes {
		return false
	}
	if m.longest < 0 {
		m.measure()
	}
	return len(s) > m.longest
}

// measure sets longest.
func (m orderedMap) measure() {
	m.longest = 0
	for it := m.Mapper.Iterator(); it.HasNext() == types.True; {
		if ks, ok := it.Next().(types.String); ok {
			m.longest = max(m.longest, len(ks))
		}
	}
}

// frozen returns v with its index filled in if it is an orderedMap: a
// constant is shared by every evaluation of its program, which must then
// only read it (a review's race detector saw two requests fill in one).
func frozen(v ref.Val) ref.Val {
	if m, ok := v.(orderedMap); ok {
		m.Iterator() // sorts the keys
		m.measure()
	}
	return v
}

func (m orderedMap) Contains(k ref.Val) ref.Val {
	if m.absent(k) {
		return types.False
	}
	return m.Mapper.Contains(k)
}

func (m orderedMap) Get(k ref.Val) ref.Val {
	if m.absent(k) {
		return types.NewErr("no such key: %s", trunc.String(string(k.(types.String)), 64))
	}
	return m.Mapper.Get(k)
}

func (m orderedMap) Find(k ref.Val) (ref.Val, bool) {
	if m.absent(k) {
		return nil, false
	}
	return m.Mapper.Find(k)
}

// Iterator implements traits.Iterable.
func (m orderedMap) Iterator() traits.Iterator {
	if m.keys == nil {
		n, _ := m.Size().(types.Int)
		keys := make([]ref.Val, 0, n)
		for it := m.Mapper.Iterator(); it.HasNext() == types.True; {
			keys = append(keys, it.Next())
		}
		slices.SortFunc(keys, compareKeys)
		m.keys = keys
	}
	return types.NewRefValList(types.DefaultTypeAdapter, m.keys).Iterator()
}

// compareKeys orders map keys: strings by their bytes, other keys of one
// type by CEL's order, and keys of different types by type name.
func compareKeys(a, b ref.Val) int {
	if as, ok := a.(types.String); ok {
		if bs, ok := b.(types.String); ok {
			return strings.Compare(string(as), string(bs))
		}
	}
	if a.Type() != b.Type() {
		return strings.Compare(a.Type().TypeName(), b.Type().TypeName())
	}
	if c, ok := a.(traits.Comparer); ok {
		if n, ok := c.Compare(b).(types.Int); ok {
			return int(n)
		}
	}
	return 0
}

// orderLiterals is a planner decorator that makes every map literal
// iterate in key order too: cel-go builds one as a Go map, so a bucket key
// such as {'a': 1, 'b': 2, 'c': 3}.map(k, k).join() came out as "abc" or
// "cab" from one request to the next. A literal of constants is built
// once, here, as cel-go's constant folding would (it never sees one after
// this decorator); any other is built as before and then ordered. The
// wrapper keeps the constructor's elements and type, which cost tracking
// reads.
//
// A key that is not an int, uint, bool or string (CEL's key types) is
// refused by name: cel-go's checker passes a bytes key, and building the
// Go map then panicked ("hash of unhashable type").
func orderLiterals(i interpreter.InterpretableV2) (interpreter.InterpretableV2, error) {
	c, ok := i.(interpreter.InterpretableConstructor)
	if !ok || c.Type() != types.MapType {
		return i, nil
	}
	consts := true
	for j, v := range c.InitVals() {
		k, ok := v.(interpreter.InterpretableConst)
		switch {
		case !ok:
			consts = false
		case j%2 == 0 && !validKey(k.Value()):
			return nil, badKey(k.Value())
		}
	}
	if !consts {
		return orderedLiteral{c}, nil
	}
	return interpreter.NewConstValue(c.ID(), frozen(orderedLiteral{c}.Eval(interpreter.EmptyActivation()))), nil
}

// validKey reports whether v may be a map key.
func validKey(v ref.Val) bool {
	switch v.(type) {
	case types.Int, types.Uint, types.Bool, types.String:
		return true
	}
	return types.IsUnknownOrError(v)
}

func badKey(v ref.Val) error {
	return fmt.Errorf("a map key must be an int, uint, bool or string, not %s", v.Type().TypeName())
}

// orderedLiteral is a map literal whose value iterates in key order.
type orderedLiteral struct {
	interpreter.InterpretableConstructor
}

func (o orderedLiteral) Eval(a interpreter.Activation) ref.Val {
	return o.Exec(interpreter.AsFrame(a))
}

func (o orderedLiteral) Exec(frame *interpreter.ExecutionFrame) (v ref.Val) {
	defer func() {
		if r := recover(); r != nil {
			if _, ok := r.(interpreter.EvalCancelledError); ok {
				panic(r) // the cost limit, which the program reports
			}
			// A key of another type (dyn(b'a')), which Go cannot hash.
			v = types.NewErr("a map key must be an int, uint, bool or string")
		}
	}()
	v = o.InterpretableConstructor.Exec(frame)
	if m, ok := v.(traits.Mapper); ok {
		return ordered(m)
	}
	return v
}

// orderedAdapter converts Go values to CEL values as cel-go's default
// adapter does, with every map ordered, nested ones included.
type orderedAdapter struct{}

func (orderedAdapter) NativeToValue(v any) ref.Val {
	switch v := v.(type) {
	case map[string]any:
		return ordered(types.NewStringInterfaceMap(orderedAdapter{}, v))
	case map[string]string:
		return ordered(types.NewStringStringMap(orderedAdapter{}, v))
	case map[string][]string, map[string][]map[string]any:
		return ordered(types.NewDynamicMap(orderedAdapter{}, v))
	case []any, []map[string]any:
		return types.NewDynamicList(orderedAdapter{}, v)
	}
	return types.DefaultTypeAdapter.NativeToValue(v)
}

// celValue converts v with orderedAdapter.
func celValue(v any) ref.Val { return orderedAdapter{}.NativeToValue(v) }

// cookieValue is a cookie as Traffic Policy's cookie object: the fields
// of its response cookies, which the documentation's
// getReqCookie('session').secure reads from a request cookie too. A
// request's Cookie header carries only name and value; the other fields
// have their zero values.
func cookieValue(c *http.Cookie) map[string]any {
	return map[string]any{
		"name": c.Name, "value": c.Value,
		"domain": "", "path": "", "same_site": "", "unparsed_attributes": []string{},
		"expires": time.Time{}, "max_age": time.Duration(0),
		"secure": false, "http_only": false,
	}
}
