package fake

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/google/cel-go/common/types"
	"github.com/google/cel-go/common/types/ref"

	"github.com/acctapi/acctapi"
	"github.com/acctapi/acctapi/account"
)

// costItems are API keys with the shortest and the longest fields
// validation allows, for checking filter cost bounds.
func costItems(now time.Time) []account.APIKey {
	return []account.APIKey{
		{ID: "ak_" + strings.Repeat("z", 27), CreatedAt: now, OwnerID: "usr_1"},
		{ID: "ak_" + strings.Repeat("Z", 27), Description: strings.Repeat("d", acctapi.MaxDescriptionBytes),
			Metadata: strings.Repeat("m", acctapi.MaxMetadataBytes), CreatedAt: now.Add(-time.Hour), OwnerID: "service_1"},
		{ID: "ak_" + strings.Repeat("0", 27), Description: strings.Repeat("é", acctapi.MaxDescriptionBytes/2),
			Metadata: strings.Repeat("ü", acctapi.MaxMetadataBytes/2), CreatedAt: now.Add(-48 * time.Hour)},
	}
}

// checkCostBound compiles expr for the API key list and, when it has a
// cost bound, checks that every evaluation on costItems costs within it
// and that the untracked program answers as the tracked one does. It
// reports whether expr has a bound.
func checkCostBound(t *testing.T, expr string) (bounded, compiled bool) {
	t.Helper()
	res := apiKeys()
	now := time.Date(2026, 11, 22, 0, 0, 0, 0, time.UTC)
	f, err := compileFilter(expr, apiKeyFields)
	if err != nil {
		return false, false
	}
	if f.fast == nil {
		return false, true
	}
	for i, item := range costItems(now) {
		act := &activation{obj: &objVal{names: apiKeyFields, field: func(v any, name string) ref.Val { return res.field(v.(account.APIKey), name) }, value: item},
			now: types.Timestamp{Time: now}}
		want, cost, terr := f.eval(act)
		if terr == nil && cost > f.maxCost {
			t.Errorf("%s, item %d: cost %d, over the bound %d", expr, i, cost, f.maxCost)
		}
		out, _, err := f.fast.Eval(act)
		got, err := result(out, err)
		if (err == nil) != (terr == nil) || got != want {
			t.Errorf("%s, item %d: untracked %v, %v; tracked %v, %v", expr, i, got, err, want, terr)
		}
	}
	return true, true
}

// TestFilterCostBound checks the untracked evaluation of filters against
// the tracked one (see checkCostBound), and that an expression whose cost
// grows with a field of unknown size has no bound.
func TestFilterCostBound(t *testing.T) {
	t.Parallel()
	tests := []struct {
		expr    string
		bounded bool
	}{
		{`obj.description == "key-4242" && obj.created_at >= timestamp("2020-01-01T00:00:00Z")`, true},
		{`obj.description.startsWith("d") && obj.metadata in ["a", "b"]`, true},
		{`obj.description.contains("dd") || obj.metadata.contains("mmm")`, true},
		{`obj.metadata.matches("^(m+)+$")`, true},
		{`obj.metadata.endsWith("m") && size(obj.metadata) > 3`, true},
		{`(obj.description + obj.description + obj.metadata).size() > 0`, true},
		{`obj.created_at > time.now.subtract("7d") || obj.created_at.add("1d12h") > time.now`, true},
		{`obj.id == "ak_x" || obj.id in ["a", "b"]`, true},
		{`has(obj.metadata) && !(obj.owner_id == "")`, true},
		{`[1,2,3].all(x, [1,2,3].all(y, x + y > 0))`, true},
		{`obj.owner_id.contains("service")`, false},         // owner_id's size is unknown
		{`obj.owner_id.matches("^s.*")`, false},             // so is the cost of a regex on it
		{`(obj.owner_id + obj.owner_id).size() > 2`, false}, // and of concatenating it
	}
	for _, tt := range tests {
		bounded, ok := checkCostBound(t, tt.expr)
		if !ok {
			t.Errorf("%s: does not compile", tt.expr)
		} else if bounded != tt.bounded {
			t.Errorf("%s: bounded %v, want %v", tt.expr, bounded, tt.bounded)
		}
	}
}

// FuzzFilterCostBound runs checkCostBound on any expression.
func FuzzFilterCostBound(f *testing.F) {
	for _, s := range []string{
		`obj.description == "x" && obj.created_at >= timestamp("2020-01-01T00:00:00Z")`,
		`obj.metadata.matches("^(m+)+$") || obj.description.contains("é")`,
		`(obj.description + obj.metadata).size() > 4000`,
		`[1,2,3].map(x, obj.description + string(x)).exists(s, s.endsWith("3"))`,
		`obj.created_at.add("1d") > time.now && size(obj.id) == 30`,
		`obj.owner_id.startsWith("usr_")`,
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, expr string) { checkCostBound(t, expr) })
}

// TestFilterRequestCost checks that a request's evaluations, tracked or
// not, are refused once they cost more than maxFilterRequestCost, and not
// before.
func TestFilterRequestCost(t *testing.T) {
	t.Parallel()
	res := apiKeys()
	// About 10,000 per evaluation, bounded: the first 100 or so run
	// untracked, then tracking takes over and the request is refused
	// soon after its cost passes the limit.
	expr := `[` + strings.Repeat("1,", 99) + `1].all(x, [` + strings.Repeat("1,", 24) + `1].all(y, x + y > 0))`
	f, err := compileFilter(expr, apiKeyFields)
	if err != nil {
		t.Fatal(err)
	}
	if f.fast == nil {
		t.Fatalf("%s: no cost bound", expr)
	}
	obj := &objVal{names: apiKeyFields, field: func(v any, name string) ref.Val { return res.field(v.(account.APIKey), name) }, value: account.APIKey{}}
	_, each, err := f.eval(&activation{obj: obj, now: types.Timestamp{Time: time.Now()}})
	if err != nil {
		t.Fatal(err)
	}
	match := f.matcher(time.Now())
	var evals int
	for evals = 1; evals < 10_000; evals++ {
		if _, err := match(obj); err != nil {
			if !strings.Contains(err.Error(), "too costly") {
				t.Fatalf("evaluation %d: %v", evals, err)
			}
			break
		}
	}
	// Refused, not before the evaluations' cost passes the limit, nor
	// after it passes twice the limit.
	if evals == 10_000 {
		t.Fatal("never refused")
	}
	if lo, hi := maxFilterRequestCost/each, 2*maxFilterRequestCost/each+1; uint64(evals) <= lo || uint64(evals) > hi {
		t.Errorf("refused at evaluation %d, want in (%d, %d] (cost %d per evaluation, bound %d)", evals, lo, hi, each, f.maxCost)
	}
}

// BenchmarkCompileFilter measures what a list request with a filter pays
// before looking at any item.
func BenchmarkCompileFilter(b *testing.B) {
	expr := `obj.description == "key-4242" && obj.created_at >= timestamp("2020-01-01T00:00:00Z")`
	b.ReportAllocs()
	for b.Loop() {
		if _, err := compileFilter(expr, apiKeyFields); err != nil {
			b.Fatal(err)
		}
	}
}

// TestFilterCache checks that a server compiles a filter once per list,
// never caches a refusal, and holds at most maxCachedFilters.
func TestFilterCache(t *testing.T) {
	t.Parallel()
	var fc filterCache
	expr := `obj.description == "x"`
	a, err := fc.compile(kindAPIKey, expr, apiKeyFields)
	if err != nil {
		t.Fatal(err)
	}
	if again, _ := fc.compile(kindAPIKey, expr, apiKeyFields); again != a {
		t.Error("the same filter on the same list was compiled again")
	}
	// Service users have no description: the same text is refused there.
	if _, err := fc.compile(kindSvcUser, expr, svcUserFields); err == nil {
		t.Error("a filter compiled for one list was used for another")
	}
	if _, err := fc.compile(kindSvcUser, expr, svcUserFields); err == nil {
		t.Error("a refused filter was accepted the second time")
	}
	for i := range 2 * maxCachedFilters {
		if _, err := fc.compile(kindAPIKey, fmt.Sprintf("obj.metadata == %q", fmt.Sprint(i)), apiKeyFields); err != nil {
			t.Fatal(err)
		}
		if len(fc.m) > maxCachedFilters {
			t.Fatalf("%d cached filters", len(fc.m))
		}
	}
}
