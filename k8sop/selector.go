package k8sop

import (
	"errors"
	"fmt"
	"reflect"
	"strings"
	"sync"
	"time"

	"github.com/google/cel-go/cel"
	celast "github.com/google/cel-go/common/ast"
	"github.com/google/cel-go/common/operators"
	"github.com/google/cel-go/common/types"
	"github.com/google/cel-go/common/types/ref"
	"github.com/google/cel-go/ext"
	"github.com/google/cel-go/interpreter"

	"github.com/acctapi/acctapi"
	"github.com/acctapi/acctapi/internal/celguard"
	"github.com/acctapi/acctapi/internal/trunc"
)

// Limits on an operator's endpoint selectors (contract §6), which
// [CompileSelectors] enforces, so that matching the selectors against the
// account's endpoints stays cheap whoever wrote them. Costs are CEL cost
// units with every call charged by bytes: a comparison 1 plus 1 per 10
// bytes compared, startsWith and endsWith 1 plus 1 per 10 bytes of the
// argument, contains 1 plus 1 per 10 bytes of both strings, in that per
// list element (counted as at least 10 bytes), size() of a string
// 1 plus 1 per 10 bytes, timestamp(), add() and subtract() 10 plus 1 per
// 10 bytes of their argument, and each
// evaluation 10 plus 1 per expression node (reading an endpoint's members
// through reflection is slower than reading a filter's item).
const (
	// MaxSelectors is the most selectors an operator may have.
	MaxSelectors = 20
	// MaxSelectorBytes is the longest a selector may be.
	MaxSelectorBytes = 1024
	// MaxSelectorCost bounds what one selector may cost on one endpoint.
	// CompileSelectors refuses a selector whose worst-case cost exceeds it,
	// taking an endpoint's metadata to be at most
	// [acctapi.MaxMetadataBytes] bytes, its description at most
	// [acctapi.MaxDescriptionBytes], each of its other strings at most
	// [MaxEndpointStringBytes], and its bindings at most [MaxBindings] of
	// at most MaxEndpointStringBytes each; an evaluation that costs more
	// (on a larger endpoint) fails.
	MaxSelectorCost = 10_000
	// MaxEndpointStringBytes is the size of an endpoint's strings that
	// MaxSelectorCost assumes, besides metadata and description; a server
	// holds its endpoints to it with [Endpoint.Validate].
	MaxEndpointStringBytes = 4096
	// MaxBindings is the number of bindings that MaxSelectorCost assumes,
	// which [Endpoint.Validate] enforces.
	MaxBindings = 16
	// MatchBudget is what matching an operator's selectors against the
	// account's endpoints may cost in one request, with [Selectors.Matcher]:
	// the same as a list filter's request in the fake, its tracked and
	// untracked evaluations together (contract §6: the same per-request
	// bound). With it, the worst selectors we could build take 0.14 to
	// 0.18 s a request, about as long as the worst filter, over 10,000
	// endpoints of maximum size (BenchmarkMatcherWorst, 2026-11-24),
	// where matching them all would take minutes. (It was 2,000,000, and
	// a review found a selector refused at 5,000 endpoints that a filter
	// passed at 8,000 keys.)
	MatchBudget = 5_100_000
)

// ErrMatchBudget is the error a [Matcher] returns, wrapped, once it has
// spent its budget.
var ErrMatchBudget = errors.New("k8sop: endpoint selectors: the request's cost budget is spent")

// selectorEnv is the CEL environment of endpoint selectors, built once; a
// cel.Env is immutable and safe for concurrent use. It has endpoint, read
// from an Endpoint, and time.now with add and subtract (celguard.ClockEnv).
// Its type provider is the native one but for the type of scalar members,
// which it gives as nullable (CEL's wrapper types), so that `== null`
// type-checks on them, and selectorGrammar.CheckTyped refuses it with the
// member's type: a scalar member is never null (a reference compared with
// null is a presence test: see nullRefs).
var selectorEnv = sync.OnceValues(func() (*cel.Env, error) {
	native, err := cel.NewEnv(ext.NativeTypes(reflect.TypeFor[Endpoint](), ext.ParseStructTag("json")))
	if err != nil {
		return nil, err
	}
	return native.Extend(
		cel.CustomTypeProvider(nullableMembers{native.CELTypeProvider()}),
		cel.Variable(selectorVar, cel.ObjectType("k8sop.Endpoint")),
		celguard.ClockEnv(),
		cel.ClearMacros(),
		cel.CrossTypeNumericComparisons(true), // endpoint.port < 1e3, as CEL defines it (contract §3: comparisons)
		cel.ParserExpressionSizeLimit(MaxSelectorBytes),
		cel.ParserRecursionLimit(32),
	)
})

// nullableMembers is a type provider that gives the scalar members of
// structs the nullable type of their kind (wrapper(string) for a string),
// and is otherwise p.
type nullableMembers struct{ types.Provider }

// FindStructFieldType implements types.Provider.
func (p nullableMembers) FindStructFieldType(structType, fieldName string) (*types.FieldType, bool) {
	ft, ok := p.Provider.FindStructFieldType(structType, fieldName)
	if !ok {
		return ft, ok
	}
	switch ft.Type.Kind() {
	case types.StringKind, types.IntKind, types.UintKind, types.DoubleKind, types.BoolKind, types.BytesKind:
		nullable := *ft
		nullable.Type = types.NewNullableType(ft.Type)
		return &nullable, true
	}
	return ft, true
}

const selectorVar = "endpoint"

// selectorGrammar is what a selector may use: the constructs of list
// filters (contract §3) over endpoint's members, time.now and add/subtract
// included, no substring function on endpoint.id, with endpoint.bindings
// allowed on the right of in, and == null only on the references that
// may be absent (see nullRefs) and, rewritten to == "" before this
// grammar's typed check, on description and metadata: every other
// member is never null, the members of an absent reference included
// (they read empty).
var selectorGrammar = &celguard.Grammar{
	Root:        selectorVar,
	Member:      func([]string) error { return nil }, // the type checker knows the members
	ListMember:  func(path []string) bool { return len(path) == 1 && path[0] == "bindings" },
	Nullable:    func(path []string) bool { return len(path) == 1 && refMembers()[path[0]] },
	NoSubstring: func(path []string) bool { return len(path) == 1 && path[0] == "id" },
	Clock:       true,
	Literal:     celguard.DurationLiteral,
}

// selectorCosts is the cost model with the endpoint sizes MaxSelectorCost
// assumes.
var selectorCosts = celguard.Costs{Size: func(path []string) (uint64, bool) {
	switch {
	case len(path) < 2 || path[0] != selectorVar:
		return 0, false
	case len(path) == 2 && path[1] == "metadata":
		return acctapi.MaxMetadataBytes, true
	case len(path) == 2 && path[1] == "description":
		return acctapi.MaxDescriptionBytes, true
	case len(path) == 2 && path[1] == "bindings":
		return MaxBindings, true
	}
	return MaxEndpointStringBytes, true
}}

// Selectors is a compiled list of endpoint selectors. It is immutable and
// safe for concurrent use. Matching with a nil *Selectors is an error;
// compiled from an empty list, Selectors match nothing.
type Selectors struct {
	sels []selector
}

// selector is one compiled selector: a program that tracks its cost,
// limited to MaxSelectorCost, and what each evaluation costs besides.
type selector struct {
	prg    cel.Program
	base   uint64
	shifts celast.Expr // the expression, when it moves time.now (see CheckAt); else nil
}

// CompileSelectors compiles each expression, which must be a CEL
// expression of type bool over the variable `endpoint` (an [Endpoint], its
// members named as in JSON), such as
// `"kubernetes" in endpoint.bindings && endpoint.url.startsWith("https://")`.
// Compile once and match many times.
//
// A selector may use what a list filter may (contract §3) — `!`, `&&`,
// `||`, comparisons, literals, endpoint's members, `in` with a list
// literal of constants or endpoint.bindings on its right, size(),
// `== null` (true of a reference the record shows as null, such as
// endpoint.tunnel of an endpoint without a tunnel, whose members read
// empty; true of an empty endpoint.description or endpoint.metadata, as
// in list filters, since the real service leaves them out when empty;
// refused, naming its type, on every member that is never null:
// the others, bindings and the members of a reference), startsWith,
// endsWith and contains (not on endpoint.id), timestamp("<RFC 3339>"),
// time.now (the time of the match) and .add("<duration>") /
// .subtract("<duration>") on timestamps, with durations such as "7d" or
// "1h30m" (whole numbers of d, h, m and s, no fractions, within 10,000
// years), comparisons ordering int, uint and double across types — and
// nothing else (no matches, no macros such as exists, no arithmetic, a
// minus sign only on a number). There may be at most [MaxSelectors], each at most
// [MaxSelectorBytes] long and with a worst-case cost of at most
// [MaxSelectorCost] per endpoint.
//
// The error joins one [*acctapi.FieldError] per invalid expression, with
// Field "endpoint_selectors[i]", [acctapi.CodeInvalidValue] and a Reason
// that says what is wrong ("is not a valid endpoint selector: matches is
// not supported"), or is one on "endpoint_selectors" when there are too
// many.
func CompileSelectors(exprs []string) (*Selectors, error) {
	if len(exprs) > MaxSelectors {
		return nil, &acctapi.FieldError{Field: "endpoint_selectors", Code: acctapi.CodeInvalidValue,
			Reason: fmt.Sprintf("has %d selectors; at most %d", len(exprs), MaxSelectors)}
	}
	env, err := selectorEnv()
	if err != nil {
		return nil, fmt.Errorf("k8sop: selector environment: %w", err)
	}
	s := &Selectors{sels: make([]selector, 0, len(exprs))}
	var errs []error
	for i, expr := range exprs {
		sel, err := compile(env, expr)
		if err != nil {
			errs = append(errs, &acctapi.FieldError{Field: fmt.Sprintf("endpoint_selectors[%d]", i),
				Code: acctapi.CodeInvalidValue, Reason: "is not a valid endpoint selector: " + oneLine(err)})
			continue
		}
		s.sels = append(s.sels, sel)
	}
	if len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	return s, nil
}

// Len returns the number of selectors, 0 for a nil *Selectors: a caller
// that lists what selectors bind need not read any endpoint when it is 0.
func (s *Selectors) Len() int {
	if s == nil {
		return 0
	}
	return len(s.sels)
}

// oneLine is err's message on one line (CEL's point at the error with a
// second and third), cut to a length an error body can carry.
func oneLine(err error) string {
	return trunc.String(strings.ReplaceAll(err.Error(), "\n", " "), 200)
}

func compile(env *cel.Env, expr string) (selector, error) {
	if len(expr) > MaxSelectorBytes {
		return selector{}, fmt.Errorf("is %d bytes; at most %d", len(expr), MaxSelectorBytes)
	}
	parsed, iss := env.Parse(expr)
	if iss.Err() != nil {
		return selector{}, iss.Err()
	}
	if err := celguard.CheckMinus(expr); err != nil {
		return selector{}, err
	}
	if err := selectorGrammar.Check(parsed.NativeRep().Expr()); err != nil {
		return selector{}, err
	}
	if err := celguard.CheckConstTimes(parsed.NativeRep().Expr()); err != nil {
		return selector{}, err
	}
	if err := nullRefs(parsed.NativeRep()); err != nil {
		return selector{}, err
	}
	// As in list filters: null is how an empty description or metadata
	// looks to a client of the real service (contract §6: a selector
	// uses the filters' constructs).
	celguard.NullIsEmpty(parsed.NativeRep().Expr(), selectorVar, []string{"description", "metadata"})
	ast, iss := env.Check(parsed)
	if iss.Err() != nil {
		return selector{}, iss.Err()
	}
	if t := ast.OutputType(); !t.IsExactType(cel.BoolType) && !t.IsExactType(cel.NullableType(cel.BoolType)) {
		return selector{}, fmt.Errorf("has type %s, want bool", ast.OutputType())
	}
	if err := selectorGrammar.CheckTyped(ast.NativeRep()); err != nil {
		return selector{}, err
	}
	if err := checkComparisons(ast.NativeRep()); err != nil {
		return selector{}, err
	}
	sel := selector{base: celguard.EvalCost + celguard.Nodes(ast.NativeRep().Expr())}
	if e := parsed.NativeRep().Expr(); celguard.ShiftsNow(e) {
		sel.shifts = e
	}
	est, err := env.EstimateCost(ast, selectorCosts)
	if err != nil {
		return selector{}, err
	}
	if est.Max > MaxSelectorCost-sel.base {
		return selector{}, fmt.Errorf("may cost more than %d per endpoint; make it cheaper", MaxSelectorCost)
	}
	sel.prg, err = env.Program(ast, cel.CostTracking(selectorCosts), cel.CostLimit(MaxSelectorCost-sel.base))
	return sel, err
}

// refMembers are the JSON names of Endpoint's references that may be
// absent (pointers): the record shows an absent one as null.
var refMembers = sync.OnceValue(func() map[string]bool {
	m := map[string]bool{}
	for f := range reflect.TypeFor[Endpoint]().Fields() {
		if f.Type == reflect.TypeFor[*acctapi.Ref]() {
			m[strings.Split(f.Tag.Get("json"), ",")[0]] = true
		}
	}
	return m
})

// nullRefs rewrites each comparison of an absent-able reference with null
// (endpoint.tunnel == null, or != null) as a test of its presence: CEL
// reads a nil reference as one with empty members, which is never null,
// so the comparison was false for every endpoint, and != null true, where
// the record shows "tunnel": null (a review). Selectors cannot test
// presence themselves: has() is not among the filter constructs
// (contract §3). The list bindings compared with null is refused with the
// reason (cel-go's own refusal names only overloads).
func nullRefs(a *celast.AST) error {
	var bad error
	id := celast.MaxID(a)
	fac := celast.NewExprFactory()
	celast.PostOrderVisit(a.Expr(), celast.NewExprVisitor(func(e celast.Expr) {
		if e.Kind() != celast.CallKind {
			return
		}
		c := e.AsCall()
		fn, args := c.FunctionName(), c.Args()
		if fn != operators.Equals && fn != operators.NotEquals || len(args) != 2 {
			return
		}
		ref, other := args[0], args[1]
		if celguard.IsNull(ref) {
			ref, other = other, ref
		}
		if !celguard.IsNull(other) || ref.Kind() != celast.SelectKind {
			return
		}
		sel := ref.AsSelect()
		if op := sel.Operand(); op.Kind() != celast.IdentKind || op.AsIdent() != selectorVar {
			return
		}
		if selectorGrammar.ListMember([]string{sel.FieldName()}) {
			// (The type checker would refuse it naming only overloads.)
			bad = fmt.Errorf("endpoint.%s is a list, never null; compare size(endpoint.%s) with 0", sel.FieldName(), sel.FieldName())
			return
		}
		if !refMembers()[sel.FieldName()] {
			return
		}
		id++
		present := fac.NewPresenceTest(id, sel.Operand(), sel.FieldName())
		if fn == operators.Equals {
			id++
			present = fac.NewCall(id, operators.LogicalNot, present)
		}
		e.SetKindCase(present)
	}))
	return bad
}

// checkComparisons refuses a comparison of endpoint.bindings, or of a
// reference with anything but null: the cost model charges a comparison by
// the bytes of strings, and such a comparison reads every string of a list
// or a reference (BenchmarkMatcherWorst measured a chain of
// endpoint.bindings != endpoint.bindings at 430 ms a request against 71
// for the worst other selectors, before this refusal, on 2026-11-24 with a
// load near 5); neither has a use a member comparison or in lacks.
func checkComparisons(a *celast.AST) error {
	var bad error
	celast.PreOrderVisit(a.Expr(), celast.NewExprVisitor(func(e celast.Expr) {
		if bad != nil || e.Kind() != celast.CallKind {
			return
		}
		switch c := e.AsCall(); c.FunctionName() {
		case operators.In:
			if a.GetType(c.Args()[0].ID()).Kind() == types.StructKind {
				// endpoint.tunnel in [null] would compare a reference
				// that reads as one with empty members (see nullRefs).
				bad = fmt.Errorf("a reference may be compared only with == null or != null")
			}
		case operators.Equals, operators.NotEquals, operators.Less, operators.LessEquals,
			operators.Greater, operators.GreaterEquals:
			args := c.Args()
			for i, x := range args {
				switch a.GetType(x.ID()).Kind() {
				case types.ListKind:
					bad = fmt.Errorf("endpoint.bindings may be used only with in and size(), not compared")
				case types.StructKind:
					if other := args[1-i]; a.GetType(other.ID()).Kind() != types.NullTypeKind {
						bad = fmt.Errorf("a reference may be compared only with null; compare its members")
					}
				}
			}
		}
	}))
	return bad
}

// Match is shorthand for [Selectors.MatchAt](e, time.Now()).
func (s *Selectors) Match(e *Endpoint) (bool, error) {
	return s.MatchAt(e, time.Now())
}

// MatchAt reports whether at least one selector matches e, with time.now
// bound to now. It stops at the first match; a selector whose evaluation
// fails (too costly on an endpoint larger than MaxSelectorCost assumes,
// or a time.now.subtract() before year 1, say) does not match, and when
// none matches, those failures are returned, joined: each a
// [*acctapi.FieldError] on "endpoint_selectors[i]". A nil e, and a nil
// s, is an error; selectors compiled from an empty list match nothing. MatchAt has no budget; to
// match many endpoints for one request, use a [Matcher].
func (s *Selectors) MatchAt(e *Endpoint, now time.Time) (bool, error) {
	ok, _, err := s.match(e, types.Timestamp{Time: now}, MaxSelectors*MaxSelectorCost)
	return ok, err
}

// CheckAt reports each selector that moves time.now out of CEL's range of
// timestamps at now (time.now.add("999999d")...), as a
// [*acctapi.FieldError] on "endpoint_selectors[i]", joined; nil when none
// does. Such a selector fails on every endpoint whose evaluation reaches
// that time, so a caller that matches many endpoints for one request (see
// [Matcher]) checks it first: the request then fails alike whether or
// not an endpoint reaches it, never a silent "no match".
func (s *Selectors) CheckAt(now time.Time) error {
	if s == nil {
		return nil
	}
	var errs []error
	for i, sel := range s.sels {
		if sel.shifts == nil {
			continue
		}
		if err := celguard.CheckNowTimes(sel.shifts, now); err != nil {
			errs = append(errs, &acctapi.FieldError{Field: fmt.Sprintf("endpoint_selectors[%d]", i), Code: acctapi.CodeInvalidValue,
				Reason: oneLine(err)})
		}
	}
	return errors.Join(errs...)
}

// match is MatchAt, stopping when the evaluations cost more than limit;
// it returns what they cost.
func (s *Selectors) match(e *Endpoint, now ref.Val, limit uint64) (bool, uint64, error) {
	if e == nil {
		// Not "no match": a test that matched a pointer it never set
		// would pass.
		return false, 0, errors.New("k8sop: endpoint selectors: the endpoint is nil")
	}
	if s == nil {
		// Not "no match" either: a *Selectors never compiled (a variable
		// left unset) would bind nothing, silently.
		return false, 0, errors.New("k8sop: endpoint selectors: the *Selectors is nil; CompileSelectors makes one (of no selectors, it matches nothing)")
	}
	if len(s.sels) == 0 {
		return false, 0, nil
	}
	env, _ := selectorEnv() // built before s was compiled with it
	act := &endpointVar{v: env.CELTypeAdapter().NativeToValue(e), now: now}
	var spent uint64
	var errs []error
	for i, sel := range s.sels {
		out, det, err := sel.prg.Eval(act)
		cost := uint64(MaxSelectorCost) // when a failure leaves no count
		if det != nil && det.ActualCost() != nil {
			cost = *det.ActualCost() + sel.base
		}
		if spent += cost; spent > limit {
			return false, spent, ErrMatchBudget
		}
		if err != nil {
			errs = append(errs, &acctapi.FieldError{Field: fmt.Sprintf("endpoint_selectors[%d]", i), Code: acctapi.CodeInvalidValue,
				Reason: fmt.Sprintf("failed on endpoint %q: %s", trunc.String(e.ID, 64), oneLine(err))})
			continue
		}
		if b, ok := out.(types.Bool); ok && bool(b) {
			return true, spent, nil
		}
	}
	return false, spent, errors.Join(errs...)
}

// endpointVar binds the variables endpoint and time.now for one
// evaluation.
type endpointVar struct{ v, now ref.Val }

// ResolveName implements interpreter.Activation.
func (a *endpointVar) ResolveName(name string) (any, bool) {
	switch name {
	case selectorVar:
		return a.v, true
	case celguard.Now:
		return a.now, true
	}
	return nil, false
}

// Parent implements interpreter.Activation.
func (a *endpointVar) Parent() interpreter.Activation { return nil }

// Matcher matches endpoints against selectors for one request, within a
// budget of cost units, so that a request that looks at many endpoints
// (listing an operator's bound endpoints) has a bounded cost whatever the
// selectors and the endpoints. Such a request checks [Selectors.CheckAt]
// first. A Matcher is for one goroutine; the zero value, which has no
// selectors, is an error to match with (get one from [Selectors.MatcherAt]).
type Matcher struct {
	s      *Selectors
	now    ref.Val
	budget uint64
	spent  uint64
}

// Matcher is shorthand for [Selectors.MatcherAt](time.Now(), budget).
func (s *Selectors) Matcher(budget uint64) *Matcher {
	return s.MatcherAt(time.Now(), budget)
}

// MatcherAt returns a Matcher of s that binds time.now to now (the time
// of the request) and may spend budget cost units in all, such as
// [MatchBudget].
func (s *Selectors) MatcherAt(now time.Time, budget uint64) *Matcher {
	return &Matcher{s: s, now: types.Timestamp{Time: now}, budget: budget}
}

// Match reports whether at least one selector matches e, as
// [Selectors.MatchAt] does, and counts what its evaluations cost against the
// budget. Once they have cost more than the budget, it returns an error
// wrapping [ErrMatchBudget], then and on every later call; the caller
// should give up the request. What a Matcher spends in all is at most its
// budget plus [MaxSelectorCost].
func (m *Matcher) Match(e *Endpoint) (bool, error) {
	if m.spent > m.budget {
		return false, fmt.Errorf("%w (%d cost units)", ErrMatchBudget, m.budget)
	}
	ok, cost, err := m.s.match(e, m.now, m.budget-m.spent)
	m.spent += cost
	if errors.Is(err, ErrMatchBudget) {
		return false, fmt.Errorf("%w (%d cost units)", ErrMatchBudget, m.budget)
	}
	return ok, err
}

// Spent returns what the Matcher's evaluations have cost so far.
func (m *Matcher) Spent() uint64 { return m.spent }
