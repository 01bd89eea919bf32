package ratelimit

import (
	"strconv"

	"github.com/google/cel-go/cel"
	"github.com/google/cel-go/common/ast"
	"github.com/google/cel-go/common/types"
	"github.com/google/cel-go/common/types/ref"
	"github.com/google/cel-go/interpreter"
)

// Comprehensions and cel-go's cost tracker.
//
// cel-go's runtime cost tracker (interpreter/runtimecost.go in v0.31)
// keeps a stack of the values it observes, each with its node's id, so
// that it can charge a call by its arguments' values: a call's
// observation looks its arguments up on the stack by id and drops them
// (and everything above them); ||, && and ?: drop their terms' ids. A
// look-up scans the stack from the top, and one that misses scans all of
// it. Misses are the rule: an identifier or field selection looks up its
// own id before pushing its value (a miss each time); || and && look up
// their second term after the look-up of the first dropped it, or a term
// short-circuiting skipped (a miss); ?: the branch not taken (a miss). In
// a comprehension nothing consumes the values of the loop condition and
// of the loop step (the next step reads the accumulator by name), so each
// iteration left two entries on the stack until the comprehension ended,
// and every miss of every iteration scanned them all. Counted with a copy
// of cel-go instrumented to count the entries scanned (deterministic
// counts, not timings), x.exists(ip, ip.trim() == '203.0.113.9') over n
// elements missed 4 times an iteration on a stack of up to 2n entries:
// 4,023,011 entries scanned for n = 1,000 (about 4n²), and 2.6·10^10 for
// a review's 80,000 (7.6 s) at about 10 cost units an element. In nested
// comprehensions the stack grows with the iterations of all of them (3
// nested lists.range(100).all: 147,090,314 entries before the cost
// limit), and a body of operators that cost nothing misses without being
// charged (x.all(i, true && true && ...) with 500 terms: 507,737,011
// entries over 1,000 elements, at 4,217 cost units).
//
// Two things bound that work in every expression with a comprehension
// (all of which run under the cost limit, see untrackable):
//
//   - foldCut wraps each comprehension's loop condition so that the
//     tracker drops, at the start of each iteration, what the previous one
//     pushed: it shows the tracker the condition as a call whose one
//     argument has the id of the comprehension's range, and gives the
//     condition's own value that id too, so the look-up finds the range's
//     value (first iteration) or the previous condition's and drops it
//     with all above. The stack then holds at most about one entry a node
//     of the expression, whatever the number of iterations: x.exists
//     above has at most 5 entries at any n, and scans 19,011 entries for
//     n = 1,000. (The condition rather than the step, which the tracker
//     no longer sees as itself: map's step is a call of _+_ the tracker
//     charges, while every macro's condition is true, which costs
//     nothing, or a call of @not_strictly_false, whose one unit is added
//     to the charge.)
//   - Each iteration is charged ⌈m·d / foldScansPerUnit⌉ cost units, by
//     the same call (see foldCharge): m, the nodes of the loop condition
//     and step, counts the misses an iteration can make (at most one a
//     node it evaluates; a comprehension nested in them counts its range,
//     initial value and result, its own iterations being charged by its
//     own cut), and d (foldDepth) bounds the stack each miss scans. The
//     stack below a comprehension is scanned too, and an expression can
//     make it deep ([1, 1, ..., 1, x.all(...)]: the list's elements wait
//     on the stack for the list) or make misses free (the && above): the
//     charge makes the cost limit stop both, so that no evaluation scans
//     more than foldScansPerUnit·maxEvalCost entries (10^8, which the
//     instrumented copy scanned in about 37 ms here, at 0.37 ns an
//     entry). Measured over adversarial cases (3 nested comprehensions,
//     300 terms of ||, 500 of &&, a comprehension in the body of another,
//     several in one expression), the entries scanned were at most 28 a
//     cost unit (all under a list literal of 1,500 elements), and 3 in
//     the others, against up to 120,402 before. The charge adds 5 units
//     an element to x.exists above (10.2 before), which fails at the cost
//     limit from about 65,000 elements; 3 to all(a, a != 'z'), 2 to
//     map(a, a). BenchmarkFoldWorstCase evaluates the first at 60,000
//     elements and the list literal's at 4,000, each near the limit.
//
// The charge is made only when the look-up finds the entry, that is when
// the stack was cut: TestFoldCharge pins both through the cost of each
// iteration. Only the macros of cel-go's standard library and Lists
// extension (and sortBy, which expands to map) build comprehensions here:
// the two-variable ones are not in the environment, and foldOptions
// treats any comprehension alike.
const foldScansPerUnit = 100

// foldDepth bounds the depth of the tracker's stack in an expression of
// nodes nodes with foldCut in place: an evaluation of a node leaves at
// most one entry until its parent's observation drops it (measured; the
// bound allows two), and foldCut drops what each iteration leaves.
func foldDepth(nodes int) uint64 { return 2*uint64(nodes) + 8 }

// foldOverload prefixes the overload id of a foldCut, followed by its
// charge in cost units.
const foldOverload = "rl_fold_"

// foldOptions returns the program options that bound the tracker's work
// in checked's comprehensions: a decorator wrapping their loop conditions
// in foldCut, and the trackers charging each iteration. None for an
// expression without a comprehension.
func foldOptions(checked *cel.Ast) []cel.ProgramOption {
	root := ast.NavigateAST(checked.NativeRep())
	folds := ast.MatchDescendants(root, ast.KindMatcher(ast.ComprehensionKind))
	if len(folds) == 0 {
		return nil
	}
	d := foldDepth(len(ast.MatchDescendants(root, ast.AllMatcher())))
	conds := map[int64]*foldCut{}
	var trackers []interpreter.CostTrackerOption
	charged := map[uint64]bool{}
	for _, f := range folds {
		c := f.AsComprehension()
		charge := foldCharge(c, d)
		id := c.IterRange().ID()
		conds[c.LoopCondition().ID()] = &foldCut{overload: foldOverload + strconv.FormatUint(charge, 10), args: []interpreter.InterpretableV2{foldArg(id)}}
		if !charged[charge] {
			charged[charge] = true
			trackers = append(trackers, interpreter.OverloadCostTracker(foldOverload+strconv.FormatUint(charge, 10), func([]ref.Val, ref.Val) *uint64 { return &charge }))
		}
	}
	decorate := func(i interpreter.InterpretableV2) (interpreter.InterpretableV2, error) {
		if s, ok := conds[i.ID()]; ok {
			if _, done := i.(*foldCut); !done {
				w := *s
				w.cond = i
				return &w, nil
			}
		}
		return i, nil
	}
	return []cel.ProgramOption{cel.CustomDecoratorV2(decorate), cel.CostTrackerOptions(trackers...)}
}

// foldCharge is what each iteration of c is charged, in an expression
// whose tracker's stack is at most d deep: ⌈m·d / foldScansPerUnit⌉ for
// the m nodes of its loop condition and step (see iterationNodes), and
// what the tracker would have charged the condition itself, which foldCut
// hides from it: nothing for a literal, and for a call (cel-go's macros:
// @not_strictly_false) one unit, as resultCost charges a call by its
// result, here a bool.
func foldCharge(c ast.ComprehensionExpr, d uint64) uint64 {
	m := uint64(iterationNodes(c.LoopCondition()) + iterationNodes(c.LoopStep()))
	charge := (m*d + foldScansPerUnit - 1) / foldScansPerUnit
	if c.LoopCondition().Kind() == ast.CallKind {
		charge++
	}
	return charge
}

// iterationNodes counts the nodes of e that one iteration of the
// comprehension whose condition or step e is evaluates at most once: all
// of them, except the loop conditions and steps of comprehensions nested
// in e.
func iterationNodes(e ast.Expr) int {
	var count func(e ast.Expr) int
	count = func(e ast.Expr) int {
		switch e.Kind() {
		case ast.ComprehensionKind:
			c := e.AsComprehension()
			return 1 + count(c.IterRange()) + count(c.AccuInit()) + count(c.Result())
		case ast.CallKind:
			c := e.AsCall()
			n := 1
			if c.IsMemberFunction() {
				n += count(c.Target())
			}
			for _, a := range c.Args() {
				n += count(a)
			}
			return n
		case ast.SelectKind:
			return 1 + count(e.AsSelect().Operand())
		case ast.ListKind:
			n := 1
			for _, x := range e.AsList().Elements() {
				n += count(x)
			}
			return n
		case ast.MapKind:
			n := 1
			for _, x := range e.AsMap().Entries() {
				n += count(x.AsMapEntry().Key()) + count(x.AsMapEntry().Value())
			}
			return n
		case ast.StructKind:
			n := 1
			for _, x := range e.AsStruct().Fields() {
				n += count(x.AsStructField().Value())
			}
			return n
		}
		return 1
	}
	return count(e)
}

// foldCut is a comprehension's loop condition as the cost tracker sees
// it: a call of overload (charged the iteration's cost, see foldOptions)
// whose one argument and whose own value have the id of the
// comprehension's range. It evaluates as the condition.
type foldCut struct {
	cond     interpreter.InterpretableV2
	overload string
	args     []interpreter.InterpretableV2 // one foldArg
}

func (s *foldCut) ID() int64                                  { return s.args[0].ID() }
func (s *foldCut) Exec(f *interpreter.ExecutionFrame) ref.Val { return s.cond.Exec(f) }
func (s *foldCut) Eval(a interpreter.Activation) ref.Val {
	return s.cond.Exec(interpreter.AsFrame(a))
}
func (s *foldCut) Function() string                    { return "@rl_fold" }
func (s *foldCut) OverloadID() string                  { return s.overload }
func (s *foldCut) Args() []interpreter.InterpretableV2 { return s.args }

// foldArg is foldCut's argument: only its id is read, by the tracker.
type foldArg int64

func (a foldArg) ID() int64 { return int64(a) }
func (a foldArg) Exec(*interpreter.ExecutionFrame) ref.Val {
	return types.NewErr("ratelimit: a comprehension's cut is not evaluated")
}
func (a foldArg) Eval(interpreter.Activation) ref.Val { return a.Exec(nil) }
