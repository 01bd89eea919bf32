package fake

import (
	"testing"
	"time"

	"github.com/google/cel-go/common/types"
)

// cheapFilters are filters a review tried over many items, with how many
// items of the largest size (maxSizeKeys) a request looks at before its
// budget refuses it, refused evaluation included (TestFilterRequestItems;
// BenchmarkFilterManyItems measures the time): the README states these
// numbers.
var cheapFilters = []struct {
	name, expr string
	items      uint64
}{
	{"id-equal", `obj.id == "b"`, 384_615},
	{"since-7d", `obj.created_at < time.now.subtract("7d")`, 192_307},
	{"and-timestamp", `obj.description == "x" && obj.created_at > timestamp("2020-01-01T00:00:00Z")`, 250_000},
	{"id-in-8", `obj.id in ["a1", "a2", "a3", "a4", "a5", "a6", "a7", "a8"]`, 128_205},
	{"metadata-contains-2", `obj.metadata.contains("team=x") || obj.metadata.contains("team=y")`, 5_973},
}

// requestItems is how many items, all like obj, a list request with the
// filter f looks at before its budget of limit cost units refuses it (the
// refused evaluation included), from what one evaluation costs: its bound
// while untracked evaluations fit in the budget, then what it costs
// tracked (see filter).
func requestItems(t *testing.T, f *filter, obj *objVal, now time.Time, limit uint64) uint64 {
	t.Helper()
	_, each, err := f.eval(&activation{obj: obj, now: types.Timestamp{Time: now}})
	if err != nil {
		t.Fatal(err)
	}
	var untracked uint64
	if f.fast != nil {
		untracked = limit / f.maxCost
	}
	return untracked + limit/(each+f.base) + 1
}

// TestFilterRequestItems counts, in cost units, how many items of the
// largest size a list request looks at before the request budget
// (maxFilterRequestCost) refuses it, for cheap filters a review tried:
// the README states these numbers. requestItems is first checked against
// a request run item by item on a smaller budget.
func TestFilterRequestItems(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 11, 22, 0, 0, 0, 0, time.UTC)
	obj := keyObj(maxSizeKeys(1, now)[0])
	for _, tt := range cheapFilters {
		f, err := compileFilter(tt.expr, keyFields)
		if err != nil {
			t.Fatal(err)
		}
		const small = 20_000
		match := f.costedMatcher(now, small)
		var n uint64
		for n = 1; n < 1_000_000; n++ {
			if _, _, err := match(obj); err != nil {
				break
			}
		}
		if want := requestItems(t, f, obj, now, small); n != want {
			t.Errorf("%s: refused at item %d with a budget of %d, requestItems says %d", tt.expr, n, small, want)
		}
		if got := requestItems(t, f, obj, now, maxFilterRequestCost); got != tt.items {
			t.Errorf("%s: %d items a request, want %d", tt.expr, got, tt.items)
		}
	}
}
