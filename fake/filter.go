package fake

import (
	"fmt"
	"net/http"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/google/cel-go/cel"
	"github.com/google/cel-go/checker"
	celast "github.com/google/cel-go/common/ast"
	"github.com/google/cel-go/common/operators"
	"github.com/google/cel-go/common/types"
	"github.com/google/cel-go/common/types/ref"
	"github.com/google/cel-go/common/types/traits"
	"github.com/google/cel-go/interpreter"

	"github.com/acctapi/acctapi"
)

// Limits on a list filter, so that a hostile expression cannot make a page
// expensive: its length, its nesting, the CEL cost of evaluating it on one
// item, and the CEL cost of one request over all the items it looks at
// (without that last bound, an expression just under the per-item limit
// that matches nothing costs the per-item limit times every stored item:
// seconds of CPU for a thousand items). maxFilterRequestCost is what a
// request's tracked evaluations may cost; see filter for the untracked
// ones.
const (
	maxFilterLen         = 4096
	maxFilterDepth       = 32
	maxFilterCost        = 100_000
	maxFilterRequestCost = 1_000_000
	filterFieldsVar      = "obj"
)

// filterEnv is the CEL environment of list filters: obj (one item, as a
// map of its filterable fields), time.now, and add/subtract on timestamps
// taking durations such as "7d" or "1h30m". It is built once and immutable.
var filterEnv = sync.OnceValues(func() (*cel.Env, error) {
	shift := func(sign int64) func(lhs, rhs ref.Val) ref.Val {
		return func(lhs, rhs ref.Val) ref.Val {
			ts, ok := lhs.(types.Timestamp)
			s, ok2 := rhs.(types.String)
			if !ok || !ok2 {
				return types.NewErr("add/subtract: want timestamp.add(string)")
			}
			d, err := parseFilterDuration(string(s))
			if err != nil {
				return types.NewErr("%v", err)
			}
			return types.Timestamp{Time: ts.Time.Add(time.Duration(sign) * d)}
		}
	}
	return cel.NewEnv(
		cel.Variable(filterFieldsVar, cel.MapType(cel.StringType, cel.DynType)),
		cel.Variable("time.now", cel.TimestampType),
		cel.Function("add", cel.MemberOverload("timestamp_add_duration_string",
			[]*cel.Type{cel.TimestampType, cel.StringType}, cel.TimestampType, cel.BinaryBinding(shift(1)))),
		cel.Function("subtract", cel.MemberOverload("timestamp_subtract_duration_string",
			[]*cel.Type{cel.TimestampType, cel.StringType}, cel.TimestampType, cel.BinaryBinding(shift(-1)))),
		cel.ParserRecursionLimit(maxFilterDepth),
		cel.ParserExpressionSizeLimit(maxFilterLen),
	)
})

// parseFilterDuration reads durations such as "7d", "24h", "15m" and
// "1d12h": a sequence of whole numbers each followed by d, h, m or s.
func parseFilterDuration(s string) (time.Duration, error) {
	if s == "" {
		return 0, fmt.Errorf("empty duration")
	}
	var total time.Duration
	for rest := s; rest != ""; {
		i := 0
		for i < len(rest) && rest[i] >= '0' && rest[i] <= '9' {
			i++
		}
		if i == 0 || i == len(rest) || i > 6 {
			return 0, fmt.Errorf("invalid duration %q: want e.g. \"7d\", \"24h\", \"15m\"", s)
		}
		n, _ := strconv.Atoi(rest[:i])
		unit := map[byte]time.Duration{'d': 24 * time.Hour, 'h': time.Hour, 'm': time.Minute, 's': time.Second}[rest[i]]
		if unit == 0 {
			return 0, fmt.Errorf("invalid duration %q: units are d, h, m and s", s)
		}
		total += time.Duration(n) * unit
		rest = rest[i+1:]
	}
	return total, nil
}

// filter is a compiled list filter. It is immutable and safe for
// concurrent use.
//
// CEL's runtime cost tracking takes about a third of an evaluation's time
// and most of its allocations, so a filter whose cost CEL can bound before
// running it (see fieldSizes) has a second program, fast, that does not
// track: while the sum of the bounds of a request's untracked evaluations
// stays within maxFilterRequestCost they cannot break either limit, and
// the request goes on with the tracking program after that. A request
// counts an untracked evaluation as costing nothing (CEL's estimated
// minimum is not a lower bound of every run: a comprehension that exits
// early or an evaluation that fails costs less), so it is never refused
// sooner than if every evaluation were tracked; what it spends in all is
// at most twice maxFilterRequestCost, plus the one tracked evaluation that
// crosses the limit.
type filter struct {
	prg     cel.Program // tracks each evaluation's cost, limited to maxFilterCost
	fast    cel.Program // no tracking; nil when the cost has no bound under maxFilterCost
	maxCost uint64      // the most one evaluation costs, when fast is set
}

func badFilter(format string, args ...any) *apiError {
	return &apiError{status: http.StatusBadRequest, code: acctapi.CodeBadFilter, field: "filter",
		msg: "Invalid CEL query: " + fmt.Sprintf(format, args...)}
}

// compileFilter compiles expr for a list whose filterable fields are
// fields. Every failure is a 400 with ERR_NGROK_250.
func compileFilter(expr string, fields []string) (*filter, error) {
	if fields == nil {
		return nil, badFilter("this list takes no filter")
	}
	if len(expr) > maxFilterLen {
		return nil, badFilter("the expression is longer than %d bytes", maxFilterLen)
	}
	env, err := filterEnv()
	if err != nil {
		return nil, err
	}
	ast, iss := env.Compile(expr)
	if iss.Err() != nil {
		return nil, badFilter("%s", truncate(strings.ReplaceAll(iss.Err().Error(), "\n", " "), 300))
	}
	if !ast.OutputType().IsExactType(cel.BoolType) {
		return nil, badFilter("the expression must be boolean, not %s", ast.OutputType())
	}
	if err := checkFilterAST(ast.NativeRep(), fields); err != nil {
		return nil, err
	}
	prg, err := env.Program(ast, cel.CostLimit(maxFilterCost))
	if err != nil {
		return nil, badFilter("%v", err)
	}
	f := &filter{prg: prg}
	if est, err := env.EstimateCost(ast, fieldSizes{}); err == nil && est.Max <= maxFilterCost {
		if f.fast, err = env.Program(ast); err != nil {
			return nil, badFilter("%v", err)
		}
		f.maxCost = est.Max
	}
	return f, nil
}

// fieldSizes tells CEL's cost estimator the most characters a filterable
// field holds, where the fake knows it: the byte limits that validation
// enforces (a character is at least a byte), and the length of the ids it
// makes. For other fields (owner_id and subject_common_name, whose values
// come from outside) the size is unknown, so an expression whose cost
// grows with them has no bound and is always tracked.
type fieldSizes struct{}

// EstimateSize implements checker.CostEstimator.
func (fieldSizes) EstimateSize(n checker.AstNode) *checker.SizeEstimate {
	p := n.Path()
	if len(p) != 2 || p[0] != filterFieldsVar {
		return nil
	}
	var most uint64
	switch p[1] {
	case "id":
		most = maxIDLen
	case "description":
		most = acctapi.MaxDescriptionBytes
	case "metadata":
		most = acctapi.MaxMetadataBytes
	default:
		return nil
	}
	return &checker.SizeEstimate{Min: 0, Max: most}
}

// EstimateCallCost implements checker.CostEstimator: CEL's own estimates.
func (fieldSizes) EstimateCallCost(function, overloadID string, target *checker.AstNode, args []checker.AstNode) *checker.CallEstimate {
	return nil
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

// checkFilterAST allows obj only as obj.<filterable field>, forbids
// indexing, and forbids substring matching on obj.id.
func checkFilterAST(a *celast.AST, fields []string) error {
	var bad error
	celast.PreOrderVisit(celast.NavigateAST(a), celast.NewExprVisitor(func(e celast.Expr) {
		if bad != nil {
			return
		}
		switch e.Kind() {
		case celast.IdentKind:
			if e.AsIdent() == filterFieldsVar {
				if !isObjOperand(a, e) {
					bad = badFilter("obj may be used only as obj.<field>")
				}
			}
		case celast.SelectKind:
			sel := e.AsSelect()
			if op := sel.Operand(); op.Kind() == celast.IdentKind && op.AsIdent() == filterFieldsVar {
				if !slices.Contains(fields, sel.FieldName()) {
					bad = badFilter("unsupported field: obj.%s (must be one of obj.%s)", truncate(sel.FieldName(), 64), strings.Join(fields, ", obj."))
				}
			}
		case celast.CallKind:
			call := e.AsCall()
			switch call.FunctionName() {
			case operators.Index, operators.OptIndex:
				bad = badFilter("index access is not supported")
			case "startsWith", "endsWith", "contains", "matches":
				// Anywhere in the target: string(obj.id).startsWith(…)
				// matches on the id as surely as obj.id.startsWith(…).
				if t := call.Target(); t != nil && mentionsObjID(t) {
					bad = badFilter("%s is not supported on obj.id; compare it with ==", call.FunctionName())
				}
			}
		}
	}))
	return bad
}

// mentionsObjID reports whether e contains obj.id.
func mentionsObjID(e celast.Expr) bool {
	found := false
	celast.PreOrderVisit(e, celast.NewExprVisitor(func(x celast.Expr) {
		if x.Kind() != celast.SelectKind {
			return
		}
		sel := x.AsSelect()
		if op := sel.Operand(); sel.FieldName() == "id" && op.Kind() == celast.IdentKind && op.AsIdent() == filterFieldsVar {
			found = true
		}
	}))
	return found
}

// isObjOperand reports whether the ident expression e is the operand of a
// field selection.
func isObjOperand(a *celast.AST, e celast.Expr) bool {
	nav := celast.NavigateExpr(a, e)
	parent, ok := nav.Parent()
	return ok && parent.Kind() == celast.SelectKind && parent.AsSelect().Operand().ID() == e.ID()
}

// activation binds obj and time.now for one evaluation; a list request
// reuses one for every item.
type activation struct {
	obj *objVal
	now ref.Val
}

// ResolveName implements interpreter.Activation.
func (a *activation) ResolveName(name string) (any, bool) {
	switch name {
	case filterFieldsVar:
		return a.obj, true
	case "time.now":
		return a.now, true
	}
	return nil, false
}

// Parent implements interpreter.Activation.
func (a *activation) Parent() interpreter.Activation { return nil }

// objVal is obj, one item as CEL sees it: a map from the list's filterable
// field names to the item's values. A field's value is made only when the
// filter reads it, so an item costs nothing for the fields a filter does
// not name; a list request reuses one objVal for every item, setting value.
type objVal struct {
	names []string                         // the filterable fields
	field func(v any, name string) ref.Val // a field of value, or nil
	value any                              // the stored item
}

var (
	_ traits.Mapper = (*objVal)(nil)
	_ ref.Val       = (*objVal)(nil)
)

// find returns the field key names, when it is one of the filterable ones.
func (o *objVal) find(key ref.Val) (ref.Val, bool) {
	name, ok := key.(types.String)
	if !ok || !slices.Contains(o.names, string(name)) {
		return nil, false
	}
	v := o.field(o.value, string(name))
	return v, v != nil
}

// Find implements traits.Mapper.
func (o *objVal) Find(key ref.Val) (ref.Val, bool) { return o.find(key) }

// Get implements traits.Indexer.
func (o *objVal) Get(key ref.Val) ref.Val {
	if v, ok := o.find(key); ok {
		return v
	}
	return types.NewErr("no such key: %v", key)
}

// Contains implements traits.Container.
func (o *objVal) Contains(key ref.Val) ref.Val {
	_, ok := o.find(key)
	return types.Bool(ok)
}

// Size implements traits.Sizer.
func (o *objVal) Size() ref.Val { return types.Int(len(o.names)) }

// Iterator implements traits.Iterable: the field names.
func (o *objVal) Iterator() traits.Iterator {
	return types.NewStringList(types.DefaultTypeAdapter, o.names).Iterator()
}

// native returns the item's fields as a Go map.
func (o *objVal) native() map[string]any {
	m := make(map[string]any, len(o.names))
	for _, n := range o.names {
		if v := o.field(o.value, n); v != nil {
			m[n] = v.Value()
		}
	}
	return m
}

// ConvertToNative implements ref.Val.
func (o *objVal) ConvertToNative(t reflect.Type) (any, error) {
	return types.DefaultTypeAdapter.NativeToValue(o.native()).ConvertToNative(t)
}

// ConvertToType implements ref.Val.
func (o *objVal) ConvertToType(t ref.Type) ref.Val {
	if t == types.TypeType {
		return types.MapType
	}
	return types.DefaultTypeAdapter.NativeToValue(o.native()).ConvertToType(t)
}

// Equal implements ref.Val.
func (o *objVal) Equal(other ref.Val) ref.Val {
	return types.DefaultTypeAdapter.NativeToValue(o.native()).Equal(other)
}

// Type implements ref.Val.
func (o *objVal) Type() ref.Type { return types.MapType }

// Value implements ref.Val.
func (o *objVal) Value() any { return o.native() }

// matcher returns a function that evaluates the filter on one item's
// fields, with time.now bound to now. It is for one goroutine and one
// request: it adds up the CEL cost of its evaluations and refuses to go on
// once they exceed maxFilterRequestCost.
func (f *filter) matcher(now time.Time) func(obj *objVal) (bool, error) {
	act := &activation{now: types.Timestamp{Time: now}}
	// spent is what the request's tracked evaluations cost; bound is what
	// all its evaluations may have cost at the most.
	var spent, bound uint64
	return func(obj *objVal) (bool, error) {
		act.obj = obj
		if f.fast != nil && bound+f.maxCost <= maxFilterRequestCost {
			bound += f.maxCost
			out, _, err := f.fast.Eval(act)
			return result(out, err)
		}
		ok, cost, err := f.eval(act)
		spent, bound = spent+cost, bound+cost
		if err == nil && spent > maxFilterRequestCost {
			return false, badFilter("the expression is too costly over this list's items (more than %d cost units in all); make it cheaper", maxFilterRequestCost)
		}
		return ok, err
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
