package fake

import (
	"fmt"
	"net/http"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/google/cel-go/cel"
	celast "github.com/google/cel-go/common/ast"
	"github.com/google/cel-go/common/types"
	"github.com/google/cel-go/common/types/ref"
	"github.com/google/cel-go/interpreter"

	"github.com/acctapi/acctapi"
	"github.com/acctapi/acctapi/internal/celguard"
	"github.com/acctapi/acctapi/internal/field"
)

// Limits on a list filter, so that a hostile expression cannot make a
// list request expensive: its length, its nesting, the cost of evaluating
// it on one item, and the cost of one request over all the items it looks
// at (without that last bound, an expression just under the per-item
// limit that matches nothing costs the per-item limit times every stored
// item). Costs are in the units of celguard's cost model, which charges
// by bytes so that a unit is about the same time whatever the construct.
// maxFilterRequestCost is what a request's tracked evaluations may cost,
// and what its untracked ones may cost at the most (see filter), so a
// request's evaluations cost at most maxRequestTotal in all:
// BenchmarkFilterWorst measures that as well under a second, over 10,000
// items of the largest size, for the worst filters we could build.
// Listing bound endpoints has the same bound, k8sop.MatchBudget
// (TestSelectorBudgetIsFilterBudget).
const (
	maxFilterLen         = field.MaxFilterBytes
	maxFilterDepth       = 32
	maxFilterCost        = 100_000
	maxFilterRequestCost = 2_500_000
	maxRequestTotal      = 2*maxFilterRequestCost + maxFilterCost
	filterFieldsVar      = "obj"
)

// filterFieldTypes are the CEL types of every list's filterable fields
// (contract §3), each declared as the variable obj.<field>: text is a
// nullable string, so that `== null` type-checks, and times are
// timestamps; `== null` on an optional text field means `== ""`
// (celguard.NullIsEmpty), and the grammar refuses it on id and the times (see
// filterGrammar). A filter comparing a
// field with a value of another type (obj.created_at == "2026-...",
// obj.description == 1) is then refused when compiled, as contract §3
// requires, rather than matching nothing, or failing only on the items
// it reaches. TestFilterFieldTypes checks that every list's fields are
// here.
var filterFieldTypes = map[string]*cel.Type{
	"id":                  cel.NullableType(cel.StringType),
	"description":         cel.NullableType(cel.StringType),
	"metadata":            cel.NullableType(cel.StringType),
	"owner_id":            cel.NullableType(cel.StringType),
	"subject_common_name": cel.NullableType(cel.StringType),
	"created_at":          cel.TimestampType,
	"not_before":          cel.TimestampType,
	"not_after":           cel.TimestampType,
}

// filterEnv is the CEL environment of list filters: obj.<field> for each
// filterable field (filterFieldTypes), time.now, and add/subtract on
// timestamps taking durations such as "7d" or "1d12h" (celguard.ClockEnv). It has no macros:
// has() is not among contract §3's constructs. It is built once and
// immutable.
var filterEnv = sync.OnceValues(func() (*cel.Env, error) {
	opts := []cel.EnvOption{celguard.ClockEnv()}
	for name, t := range filterFieldTypes {
		opts = append(opts, cel.Variable(filterFieldsVar+"."+name, t))
	}
	return cel.NewEnv(append(opts,
		cel.ClearMacros(),
		cel.CrossTypeNumericComparisons(true), // 1 < 2.5, as CEL defines it (contract §3: comparisons)
		cel.ParserRecursionLimit(maxFilterDepth),
		cel.ParserExpressionSizeLimit(maxFilterLen),
	)...)
})

// filter is a compiled list filter. It is immutable and safe for
// concurrent use.
//
// CEL's runtime cost tracking takes about a third of an evaluation's time
// and most of its allocations, so a filter whose cost CEL can bound before
// running it (see filterCosts) has a second program, fast, that does not
// track: while the sum of the bounds of a request's untracked evaluations
// stays within maxFilterRequestCost they cannot break either limit, and
// the request goes on with the tracking program after that. A request
// counts an untracked evaluation as costing nothing (CEL's estimated
// minimum is not a lower bound of every run: an evaluation that
// short-circuits or fails costs less), so it is never refused sooner than
// if every evaluation were tracked; what it spends in all is at most
// maxRequestTotal: twice maxFilterRequestCost, plus the one tracked
// evaluation that crosses the limit.
//
// Every evaluation is also charged base, for the work CEL charges
// nothing: setting up an evaluation (celguard.EvalCost) and the nodes it
// gives no cost (constants, the terms of || and &&), so that a request's
// number of evaluations, and with it its time, is bounded whatever the
// expression and however many items there are.
type filter struct {
	prg     cel.Program // tracks each evaluation's cost, limited to maxFilterCost
	fast    cel.Program // no tracking; nil when the cost has no bound under maxFilterCost
	maxCost uint64      // the most one evaluation costs, when fast is set, base included
	base    uint64      // what each evaluation costs besides CEL's cost: celguard.EvalCost and 1 per 4 nodes
	shifts  celast.Expr // the expression, when it moves time.now (see checkNow); else nil
}

// checkNow refuses, before any item is read, a filter that moves time.now
// out of CEL's range at now (time.now.add("999999d")...): it would fail
// on every item it reached, and so a list where no item reaches it (an &&
// that stops before it, an empty list) answered 200 with nothing, where
// one item that did answered 400 (contract §3: such a time is an error).
func (f *filter) checkNow(now time.Time) error {
	if f.shifts == nil {
		return nil
	}
	if err := celguard.CheckNowTimes(f.shifts, now); err != nil {
		return badFilter("%v", err)
	}
	return nil
}

func badFilter(format string, args ...any) *apiError {
	return &apiError{status: http.StatusBadRequest, code: acctapi.CodeBadFilter, field: "filter",
		msg: "Invalid CEL query: " + fmt.Sprintf(format, args...)}
}

// compileFilter compiles expr for a list whose filterable fields are
// fields. Every failure is a 400 with ERR_NGROK_250. It accepts only the
// constructs contract §3 lists (see filterGrammar) and refuses the others
// by name before type-checking.
func compileFilter(expr string, fields []string) (*filter, error) {
	if fields == nil {
		return nil, badFilter("this list takes no filter")
	}
	if err := field.CheckFilter(expr); err != nil {
		return nil, badFilter("the expression %s", err.(*field.Error).Reason)
	}
	env, err := filterEnv()
	if err != nil {
		return nil, err
	}
	parsed, iss := env.Parse(expr)
	if iss.Err() != nil {
		return nil, badFilter("%s", truncate(strings.ReplaceAll(iss.Err().Error(), "\n", " "), 300))
	}
	if err := celguard.CheckMinus(expr); err != nil {
		return nil, badFilter("%v", err)
	}
	grammar := filterGrammar(fields)
	if err := grammar.Check(parsed.NativeRep().Expr()); err != nil {
		return nil, badFilter("%v", err)
	}
	if err := celguard.CheckConstTimes(parsed.NativeRep().Expr()); err != nil {
		return nil, badFilter("%v", err)
	}
	celguard.NullIsEmpty(parsed.NativeRep().Expr(), filterFieldsVar, emptyIsNull)
	ast, iss := env.Check(parsed)
	if iss.Err() != nil {
		return nil, badFilter("%s", truncate(strings.ReplaceAll(iss.Err().Error(), "\n", " "), 300))
	}
	if !ast.OutputType().IsExactType(cel.BoolType) {
		return nil, badFilter("the expression must be boolean, not %s", ast.OutputType())
	}
	if err := grammar.CheckTyped(ast.NativeRep()); err != nil {
		return nil, badFilter("%v", err)
	}
	prg, err := env.Program(ast, cel.CostLimit(maxFilterCost), cel.CostTracking(filterCosts))
	if err != nil {
		return nil, badFilter("%v", err)
	}
	f := &filter{prg: prg, base: celguard.EvalCost + celguard.Nodes(ast.NativeRep().Expr())/4}
	if e := parsed.NativeRep().Expr(); celguard.ShiftsNow(e) {
		f.shifts = e
	}
	if est, err := env.EstimateCost(ast, filterCosts); err == nil && est.Max <= maxFilterCost {
		if f.fast, err = env.Program(ast); err != nil {
			return nil, badFilter("%v", err)
		}
		f.maxCost = est.Max + f.base
	}
	return f, nil
}

// emptyIsNull are the optional text fields: the real service leaves them
// out of its answers when they are empty (research/real-service.md §1.1),
// so that, to a client, null is how an empty one looks, and the filtering
// documentation's own example asks for one with
// (obj.acl == null || obj.acl == ""). A filter's null compared with one
// of them is "" (see celguard.NullIsEmpty).
var emptyIsNull = []string{"description", "metadata", "subject_common_name"}

// filterGrammar is what a filter over a list with the filterable fields
// fields may use: contract §3's constructs, obj only as obj.<field>, no
// substring function on obj.id, and == null only on obj.owner_id, which
// the real service's model makes nullable (research/real-service.md: a
// key's owner_id is a nullable string; the fake always sets it, so the
// comparison is false there), and on the optional text fields, where
// null is "" (celguard.NullIsEmpty has rewritten it before the grammar's typed
// check). obj.id and the times are never null, in the fake and in the
// real service's models alike, and comparing them with null would be a
// silent "no match".
func filterGrammar(fields []string) *celguard.Grammar {
	return &celguard.Grammar{
		Root: filterFieldsVar,
		Member: func(path []string) error {
			if !slices.Contains(fields, path[0]) {
				return fmt.Errorf("unsupported field: obj.%s (must be one of obj.%s)", truncate(path[0], 64), strings.Join(fields, ", obj."))
			}
			if len(path) > 1 {
				return fmt.Errorf("obj.%s has no members", path[0])
			}
			return nil
		},
		Nullable:    func(path []string) bool { return path[0] == "owner_id" },
		NoSubstring: func(path []string) bool { return path[0] == "id" },
		Clock:       true,
		Literal:     celguard.DurationLiteral,
	}
}

// filterCosts is the filter cost model (celguard.Costs) with what the fake
// knows of the fields' sizes (fieldSize): the byte limits that validation
// enforces, the length of the ids it makes, and that a time has no length.
// For other fields (owner_id and subject_common_name, whose values come
// from outside) the size is unknown, so an expression whose cost grows
// with them has no static bound and is always tracked.
var filterCosts = celguard.Costs{Size: fieldSize}

// fieldSize is the most bytes the field at path (["obj.metadata"])
// holds, when known.
func fieldSize(path []string) (uint64, bool) {
	// A field is the variable obj.<field>, whose path CEL gives as one
	// name (["obj.metadata"]).
	field, ok := strings.CutPrefix(path[0], filterFieldsVar+".")
	if len(path) != 1 || !ok {
		return 0, false
	}
	switch field {
	case "id":
		return maxIDLen, true
	case "description":
		return acctapi.MaxDescriptionBytes, true
	case "metadata":
		return acctapi.MaxMetadataBytes, true
	case "created_at", "not_before", "not_after":
		return 1, true
	}
	return 0, false
}

// filterCache holds a server's compiled filters, so that a list request
// that repeats a filter (every page after the first carries it in
// next_page_uri) does not compile it again. A compiled filter is immutable
// and its programs are safe for concurrent use.
type filterCache struct {
	mu sync.Mutex
	m  map[filterKey]*filter
}

type filterKey struct{ kind, expr string }

// maxCachedFilters bounds a filter cache; a full cache starts over.
const maxCachedFilters = 256

// compile returns the compiled filter expr for the list of kind, whose
// filterable fields are fields, from the cache or compiled now.
func (fc *filterCache) compile(kind, expr string, fields []string) (*filter, error) {
	key := filterKey{kind, expr}
	fc.mu.Lock()
	f, ok := fc.m[key]
	fc.mu.Unlock()
	if ok {
		return f, nil
	}
	f, err := compileFilter(expr, fields)
	if err != nil {
		return nil, err // refused again each time: a 400 costs little
	}
	fc.mu.Lock()
	defer fc.mu.Unlock()
	if fc.m == nil || len(fc.m) >= maxCachedFilters {
		fc.m = make(map[filterKey]*filter)
	}
	fc.m[key] = f
	return f, nil
}

// activation binds obj.<field> and time.now for one evaluation; a list
// request reuses one for every item.
type activation struct {
	obj *objVal
	now ref.Val
}

// ResolveName implements interpreter.Activation.
func (a *activation) ResolveName(name string) (any, bool) {
	if name == celguard.Now {
		return a.now, true
	}
	// (filterGrammar refused, when compiling, any field not the list's.)
	if field, ok := strings.CutPrefix(name, filterFieldsVar+"."); ok {
		if v := a.obj.field(field); v != nil {
			return v, true
		}
	}
	return nil, false
}

// Parent implements interpreter.Activation.
func (a *activation) Parent() interpreter.Activation { return nil }

// objVal is one item as a filter sees it: its filterable fields' values.
// A field's value is made only when the filter reads it, so an item costs
// nothing for the fields a filter does not name; a list request reuses
// one objVal for every item, its field function reading the item the
// request is at.
type objVal struct {
	field func(name string) ref.Val // a field of the current item, or nil
}

// matcher returns a function that evaluates the filter on one item's
// fields, with time.now bound to now. It is for one goroutine and one
// request: it adds up the cost of its evaluations and refuses to go on
// once they exceed maxFilterRequestCost (see filter).
func (f *filter) matcher(now time.Time) func(obj *objVal) (bool, error) {
	m := f.costedMatcher(now, maxFilterRequestCost)
	return func(obj *objVal) (bool, error) {
		ok, _, err := m(obj)
		return ok, err
	}
}

// costedMatcher is matcher with the budget limit instead of
// maxFilterRequestCost, whose function also returns what its evaluation
// counted against it: the bound of an untracked evaluation, the cost of a
// tracked one.
func (f *filter) costedMatcher(now time.Time, limit uint64) func(obj *objVal) (bool, uint64, error) {
	act := &activation{now: types.Timestamp{Time: now}}
	// spent is what the request's tracked evaluations cost; bound is what
	// all its evaluations may have cost at the most.
	var spent, bound uint64
	return func(obj *objVal) (bool, uint64, error) {
		act.obj = obj
		if f.fast != nil && bound+f.maxCost <= limit {
			bound += f.maxCost
			out, _, err := f.fast.Eval(act)
			ok, err := result(out, err)
			return ok, f.maxCost, err
		}
		ok, cost, err := f.eval(act)
		cost += f.base
		spent, bound = spent+cost, bound+cost
		if err == nil && spent > limit {
			return false, cost, badFilter("the expression is too costly over this list's items (more than %d cost units in all); make it cheaper", limit)
		}
		return ok, cost, err
	}
}

// eval evaluates the filter with cost tracking in an activation and
// returns its CEL cost.
func (f *filter) eval(act *activation) (bool, uint64, error) {
	out, det, err := f.prg.Eval(act)
	var cost uint64
	if det != nil && det.ActualCost() != nil {
		cost = *det.ActualCost()
	}
	ok, err := result(out, err)
	return ok, cost, err
}

// result is an evaluation's answer: true only for a true result.
func result(out ref.Val, err error) (bool, error) {
	if err != nil {
		return false, badFilter("%s", truncate(err.Error(), 200))
	}
	b, ok := out.(types.Bool)
	return ok && bool(b), nil
}
