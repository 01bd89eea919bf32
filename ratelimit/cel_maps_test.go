package ratelimit

import (
	"strings"
	"sync"
	"testing"

	"github.com/google/cel-go/common/types"
	"github.com/google/cel-go/common/types/ref"
	"github.com/google/cel-go/common/types/traits"
)

// countingMapper counts the lookups that reach the map under an
// orderedMap, each of which hashes its key.
type countingMapper struct {
	traits.Mapper
	lookups *int
}

func (m countingMapper) Contains(k ref.Val) ref.Val     { *m.lookups++; return m.Mapper.Contains(k) }
func (m countingMapper) Get(k ref.Val) ref.Val          { *m.lookups++; return m.Mapper.Get(k) }
func (m countingMapper) Find(k ref.Val) (ref.Val, bool) { *m.lookups++; return m.Mapper.Find(k) }

// TestOrderedMapLongKeys pins what TestLookupsDoNotCopyLongKeys cannot see
// from outside: a string key longer than any of a map's is answered absent
// without a lookup in the map (which would hash all of it), while shorter
// keys, and keys of other types, are looked up.
func TestOrderedMapLongKeys(t *testing.T) {
	t.Parallel()
	var n int
	m := ordered(countingMapper{types.NewStringInterfaceMap(orderedAdapter{}, map[string]any{"a": 1, strings.Repeat("b", 300): 2}), &n})
	long := types.String(strings.Repeat("c", 1<<20))
	if m.Contains(long) != types.False {
		t.Error("Contains(long): not false")
	}
	if v := m.Get(long); !types.IsError(v) || len(v.(*types.Err).Error()) > 200 {
		t.Errorf("Get(long): %v; want a short error", v)
	}
	if _, ok := m.Find(long); ok {
		t.Error("Find(long): found")
	}
	if n != 0 {
		t.Errorf("%d lookups of a key longer than any of the map's; want 0", n)
	}
	for _, k := range []ref.Val{types.String("a"), types.String(strings.Repeat("b", 300)), types.String(strings.Repeat("d", 300)), types.Int(1)} {
		before := n
		m.Contains(k)
		m.Find(k)
		if n != before+2 {
			t.Errorf("%.10v: %d lookups; want 2", k, n-before)
		}
	}
}

// TestConstantMapShared evaluates a constant map literal, which every
// evaluation of its program shares, from several goroutines at once: it
// is read only (a review's race detector saw two requests fill in its
// index), and every one gives the same key.
func TestConstantMapShared(t *testing.T) {
	t.Parallel()
	long := strings.Repeat("z", 300)
	l := mustLimit(t, keyConfig("{'b': 1, 'a': 2, '"+long+"': 3}.map(k, string(k.size())).join(',') + string(getReqHeader('x')[0] in {'b': 1, 'a': 2, '"+long+"': 3})"))
	r := newRequest("GET", "http://h/")
	r.Header.Set("X", strings.Repeat("y", 400))
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			for range 50 {
				if res := l.EvaluateAt(r, base); res.BucketKey != "1,1,300false" {
					t.Errorf("key %q (%s); want 1,1,300false", res.BucketKey, res.ErrorMessage)
					return
				}
			}
		})
	}
	wg.Wait()
}
