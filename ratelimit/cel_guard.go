package ratelimit

import (
	"sync"

	"github.com/google/cel-go/cel"
	"github.com/google/cel-go/common/ast"
	"github.com/google/cel-go/common/decls"
	"github.com/google/cel-go/common/functions"
	"github.com/google/cel-go/common/overloads"
	"github.com/google/cel-go/common/types"
	"github.com/google/cel-go/common/types/ref"
	"github.com/google/cel-go/common/types/traits"
	"github.com/google/cel-go/ext"
	"github.com/google/cel-go/interpreter"
)

// Functions of cel-go's Lists and Strings extensions whose work is not
// bounded by what cel-go charges before they run: cel-go charges them
// after the call returns, so one call did the whole work first (a review
// measured 17.6 s for distinct() over 80,000 values and 14.5 s for an
// indexOf of a 240 KB string in a 480 KB one, each ending in "cost limit
// exceeded"). Each is redefined here (same signature, cel-go's binding
// called) to compute its cost from its arguments first, refuse a call
// over maxEvalCost before running it, and be charged that same cost
// after, so that no call does more work than the limit pays for:
//
//   - distinct, sort and sortBy compare elements pairwise (distinct) or
//     n·log n times (sort): n times the cost of comparing every element
//     once, an element of a list or map counted with everything in it (a
//     list of a thousand references to one long list is cheap to build
//     and long to compare);
//   - indexOf and lastIndexOf compare the substring at every offset of
//     the string: the product of their lengths, plus the string itself
//     (cel-go converts it to runes, even for an empty substring);
//   - flatten builds every element it reaches, to its depth, however few
//     lists it was given.
//
// The rest of what the environment exposes does work linear in its
// arguments, charged by cel-go or by resultCost after the call, except
// the functions bounded before they build in cel_build.go and matches
// (boundedMatch).
type guard struct {
	fn   string   // the function's name in cel-go
	ids  []string // its overloads
	name string   // its name in error messages
	cost func(args []ref.Val) (cost, read uint64)
	// as, when set, is the name the function is declared under instead,
	// with each overload id prefixed "rl_": cel-go binds sort and its
	// sortBy helper once for every overload (a singleton), which a
	// declaration cannot redefine, so macros (sortMacros) call these.
	as string
}

var guards = func() []guard {
	var sorts, sortBys []string
	for _, t := range []string{"int", "uint", "double", "bool", "google.protobuf.Duration", "google.protobuf.Timestamp", "string", "bytes"} {
		sorts = append(sorts, "list_"+t+"_sort")
		sortBys = append(sortBys, "list_"+t+"_sortByAssociatedKeys")
	}
	return []guard{
		{fn: "distinct", ids: []string{"list_distinct"}, name: "distinct", cost: func(a []ref.Val) (uint64, uint64) { return compareCost(a[0]) }},
		{fn: "sort", ids: sorts, name: "sort", cost: func(a []ref.Val) (uint64, uint64) { return compareCost(a[0]) }, as: guardedSort},
		{fn: sortByHelper, ids: sortBys, name: "sortBy", cost: func(a []ref.Val) (uint64, uint64) { return compareCost(a[1]) }, as: guardedSortBy},
		{fn: "flatten", ids: []string{"list_flatten", "list_flatten_int"}, name: "flatten", cost: flattenCost},
		{fn: "indexOf", ids: []string{"string_index_of_string", "string_index_of_string_int"}, name: "indexOf", cost: searchCost},
		{fn: "lastIndexOf", ids: []string{"string_last_index_of_string", "string_last_index_of_string_int"}, name: "lastIndexOf", cost: searchCost},
	}
}()

const (
	sortByHelper  = "@sortByAssociatedKeys"
	guardedSort   = "__sort"
	guardedSortBy = "__sortByAssociatedKeys"
)

// id is the overload id under which g declares cel-go's overload id.
func (g *guard) id(id string) string {
	if g.as != "" {
		return "rl_" + id
	}
	return id
}

// guardedFunctions returns the environment options redefining the
// guards' overloads.
func guardedFunctions() []cel.EnvOption {
	var opts []cel.EnvOption
	for _, g := range guards {
		var fopts []cel.FunctionOpt
		for _, id := range g.ids {
			d, orig := celDecl(g.fn, id)
			call := func(args ...ref.Val) ref.Val {
				if c, _ := g.cost(args); c > maxEvalCost {
					return overBudget("%s: the call is %d cost units of work, over the limit of %d", g.name, c, maxEvalCost)
				}
				return callBinding(orig, args)
			}
			over := cel.Overload
			if d.IsMemberFunction() {
				over = cel.MemberOverload
			}
			fopts = append(fopts, over(g.id(id), d.ArgTypes(), d.ResultType(), cel.FunctionBinding(call)))
		}
		// cel-go's bindings, which these call, check the arguments' types
		// as cel-go declared (flatten disables the check).
		fopts = append(fopts, decls.DisableTypeGuards(true))
		name := g.fn
		if g.as != "" {
			name = g.as
		}
		opts = append(opts, cel.Function(name, fopts...))
	}
	return append(opts, cel.Macros(sortMacros()...))
}

// sortMacros rewrite x.sort() and x.sortBy(v, key) (cel-go's macro, its
// helper renamed) to call the guarded functions.
func sortMacros() []cel.Macro {
	var sortBy cel.Macro
	for _, m := range celExtEnv().Macros() {
		if m.Function() == "sortBy" {
			sortBy = m
		}
	}
	if sortBy == nil {
		panic("ratelimit: cel-go has no sortBy macro") // (TestGuardedFunctionsWork)
	}
	return []cel.Macro{
		cel.ReceiverMacro("sort", 0, func(eh cel.MacroExprFactory, target ast.Expr, _ []ast.Expr) (ast.Expr, *cel.Error) {
			return eh.NewMemberCall(guardedSort, target), nil
		}),
		cel.ReceiverMacro("sortBy", 2, func(eh cel.MacroExprFactory, target ast.Expr, args []ast.Expr) (ast.Expr, *cel.Error) {
			return sortBy.Expander()(renamingFactory{eh}, target, args)
		}),
	}
}

// renamingFactory builds calls of cel-go's sortBy helper as calls of the
// guarded one.
type renamingFactory struct{ cel.MacroExprFactory }

func (f renamingFactory) NewMemberCall(fn string, target ast.Expr, args ...ast.Expr) ast.Expr {
	if fn == sortByHelper {
		fn = guardedSortBy
	}
	return f.MacroExprFactory.NewMemberCall(fn, target, args...)
}

// guardTrackers charge each guarded call its cost.
func guardTrackers() []interpreter.CostTrackerOption {
	var opts []interpreter.CostTrackerOption
	for _, g := range guards {
		for _, id := range g.ids {
			opts = append(opts, interpreter.OverloadCostTracker(g.id(id), func(args []ref.Val, _ ref.Val) *uint64 {
				c, read := g.cost(args)
				if c > maxEvalCost {
					c = 1 + read // refused
				}
				return &c
			}))
		}
	}
	return opts
}

// callBinding calls cel-go's binding o with args.
func callBinding(o *functions.Overload, args []ref.Val) ref.Val {
	switch {
	case o.Function != nil:
		return o.Function(args...)
	case len(args) == 1 && o.Unary != nil:
		return o.Unary(args[0])
	case len(args) == 2 && o.Binary != nil:
		return o.Binary(args[0], args[1])
	}
	return types.NewErr("ratelimit: no binding of %s for %d arguments", o.Operator, len(args))
}

// celDecl returns cel-go's declaration and binding of overload id of
// function fn in its Strings, Lists and Encoders extensions.
func celDecl(fn, id string) (*decls.OverloadDecl, *functions.Overload) {
	f := celExtEnv().Functions()[fn]
	if f != nil {
		for _, d := range f.OverloadDecls() {
			if d.ID() != id {
				continue
			}
			for _, o := range celBindings()[fn] {
				if o.Operator == id || o.Operator == fn { // (a singleton binding)
					return d, o
				}
			}
		}
	}
	panic("ratelimit: cel-go has no overload " + id + " of " + fn) // (TestGuardedFunctions)
}

// celExtEnv is an environment of cel-go's extensions alone, whose
// declarations and bindings the package redefines.
var celExtEnv = sync.OnceValue(func() *cel.Env {
	e, err := cel.NewEnv(ext.Strings(), ext.Lists(), ext.Encoders())
	if err != nil {
		panic(err)
	}
	return e
})

// saturated is a cost over the limit, for a computation stopped early.
const saturated = maxEvalCost + 1

// A guard's cost function returns the call's cost and how much it read to
// compute it (in cost units; at most about the limit, and far less for a
// list too long to compare at all). A refused call is charged what its
// check read: checking the same shared lists again and again is work too.

// compareCost is the cost of comparing the elements of list l with each
// other: n-1 times the cost of reading every element once (deepCost, plus
// two units an element, as cel-go charges a comparison), plus one, or
// saturated.
func compareCost(l ref.Val) (cost, read uint64) {
	ls, ok := l.(traits.Lister)
	if !ok {
		return 1, 0
	}
	n, _ := ls.Size().(types.Int)
	if n <= 1 {
		return 1, 0
	}
	others := uint64(n - 1)
	if 2*others > maxEvalCost/uint64(n) {
		return saturated, 0
	}
	var sum uint64
	for it := ls.Iterator(); it.HasNext() == types.True; {
		sum += 2 + deepCost(it.Next(), maxEvalCost/others)
		if sum > maxEvalCost/others {
			return saturated, sum
		}
	}
	return 1 + others*sum, sum
}

// deepCost is the cost of reading v whole: a unit per ten bytes of text,
// and for a list or map, a unit per element plus the cost of each
// element; or more than limit, having read about limit units.
func deepCost(v ref.Val, limit uint64) uint64 {
	switch v := v.(type) {
	case types.String:
		return uint64(len(v)) / 10
	case types.Bytes:
		return uint64(len(v)) / 10
	case traits.Lister:
		var n uint64
		for it := v.Iterator(); it.HasNext() == types.True && n <= limit; {
			n += 1 + deepCost(it.Next(), limit-n)
		}
		return n
	case traits.Mapper:
		var n uint64
		for it := v.Iterator(); it.HasNext() == types.True && n <= limit; {
			k := it.Next()
			n += 1 + deepCost(k, limit-n)
			if n <= limit {
				n += deepCost(v.Get(k), limit-n)
			}
		}
		return n
	}
	return 0
}

// flattenCost is the cost of flatten(args[0], args[1] or 1): a unit for
// the call and one per list it reads and per element it builds, or
// saturated. It reads the lists above the depth; those at the depth count
// by their size.
func flattenCost(args []ref.Val) (cost, read uint64) {
	depth := types.Int(1)
	if len(args) == 2 {
		depth, _ = args[1].(types.Int)
	}
	n := uint64(1)
	// walk counts l's elements, expanding the lists among them to depth d.
	var walk func(l traits.Lister, d types.Int)
	walk = func(l traits.Lister, d types.Int) {
		n++
		for it := l.Iterator(); it.HasNext() == types.True && n <= maxEvalCost; {
			read++
			sub, ok := it.Next().(traits.Lister)
			switch {
			case !ok || d <= 0:
				n++
			case d == 1:
				size, _ := sub.Size().(types.Int)
				n += 1 + uint64(size)
			default:
				walk(sub, d-1)
			}
		}
	}
	if l, ok := args[0].(traits.Lister); ok && depth >= 0 {
		walk(l, depth)
	}
	return min(n, saturated), read
}

// searchCost is the cost of s.indexOf(sub) or s.lastIndexOf(sub), with or
// without an offset: a unit per ten bytes of s (cel-go converts it to
// runes) and per ten byte comparisons of sub at every offset of s.
func searchCost(args []ref.Val) (cost, read uint64) {
	s, sub := uint64(len(str(args[0]))), uint64(len(str(args[1])))
	return 1 + s/10 + s*sub/10, 0
}

// Equality (==, !=) and membership (in) of lists and maps compare their
// elements deeply, and cel-go charges them by their top-level size: 100
// references to 1,000 references to one list of 1,000 compared with
// themselves took 3 s for a few thousand units. compareGuard wraps each
// such operation in every program: operands that are not both lists or
// maps (membership: whose left operand is not one; a scalar is compared
// with each element at the cost of a type test, which cel-go charges) run
// as before; others cost what deepCost reads of the smaller operand (each
// element, for in), are refused over the limit before comparing, and are
// charged that cost (see resultCost).
func compareGuard(i interpreter.InterpretableV2) (interpreter.InterpretableV2, error) {
	if c, ok := i.(interpreter.InterpretableCall); ok {
		switch c.OverloadID() {
		case overloads.Equals, overloads.NotEquals, overloads.InList:
			// The operands once, here: cel-go's Args builds a new slice on
			// every call, an allocation in every evaluation.
			if args := c.Args(); len(args) == 2 {
				return guardedCompare{c, args[0], args[1]}, nil
			}
		}
	}
	return i, nil
}

// guardedCompare is an equality or membership call checked by
// compareGuard. It keeps the call's id, function, overload and arguments,
// so cost tracking and cel-go's optimizations see the same call.
type guardedCompare struct {
	interpreter.InterpretableCall
	lhs, rhs interpreter.InterpretableV2
}

func (g guardedCompare) Eval(a interpreter.Activation) ref.Val {
	return g.Exec(interpreter.AsFrame(a))
}

func (g guardedCompare) Exec(frame *interpreter.ExecutionFrame) ref.Val {
	l := g.lhs.Exec(frame)
	if types.IsUnknownOrError(l) {
		return l
	}
	r := g.rhs.Exec(frame)
	if types.IsUnknownOrError(r) {
		return r
	}
	op := g.OverloadID()
	if c := compareOpCost(op, l, r); c > maxEvalCost {
		return overBudget("%s: comparing the operands is %d cost units of work, over the limit of %d", g.Function(), c, maxEvalCost)
	}
	switch op {
	case overloads.Equals:
		return types.Equal(l, r)
	case overloads.NotEquals:
		if eq, ok := types.Equal(l, r).(types.Bool); ok {
			return !eq
		}
	case overloads.InList:
		if c, ok := r.(traits.Container); ok {
			return c.Contains(l)
		}
	}
	return types.NewErr("no such overload: %s", g.Function())
}

// compareOpCost is the cost of equality or membership op on l and r, or 0
// if cel-go's own charge covers it (an operand that is not a list or map).
func compareOpCost(op string, l, r ref.Val) uint64 {
	if op == overloads.InList {
		list, ok := r.(traits.Lister)
		if !ok || !isAggregate(l) {
			return 0
		}
		x := deepCost(l, maxEvalCost)
		n := uint64(1)
		for it := list.Iterator(); it.HasNext() == types.True && n <= maxEvalCost; {
			n += 1 + deepCost(it.Next(), x)
		}
		return n
	}
	if !isAggregate(l) || !isAggregate(r) {
		return 0
	}
	a := deepCost(l, maxEvalCost)
	return 1 + min(a, deepCost(r, a))
}

func isAggregate(v ref.Val) bool {
	switch v.(type) {
	case traits.Lister, traits.Mapper:
		return true
	}
	return false
}
