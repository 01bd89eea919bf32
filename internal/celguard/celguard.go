// Package celguard keeps untrusted CEL cheap: it holds the one list of
// constructs that list filters (the fake) and endpoint selectors (k8sop)
// accept, and a cost model whose units follow evaluation time, for CEL's
// static estimator and its runtime tracker alike.
package celguard

import (
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/google/cel-go/checker"
	celast "github.com/google/cel-go/common/ast"
	"github.com/google/cel-go/common/operators"
	"github.com/google/cel-go/common/types"
	"github.com/google/cel-go/common/types/ref"
	"github.com/google/cel-go/common/types/traits"

	"github.com/acctapi/acctapi/internal/trunc"
)

// Grammar is the set of constructs an expression may use: `!`, `&&`,
// `||`, comparisons, parentheses, literals, selection of the root
// variable's members, `in` with a list literal of constants (literals
// and timestamp("<literal>"), or a member ListMember allows) on its
// right, `size()`, `startsWith`, `endsWith`, `contains`,
// `timestamp("<literal>")`, and with Clock `time.now` and
// `.add("<literal>")` / `.subtract("<literal>")`. Anything else — has(),
// regular expressions, macros, list or map literals elsewhere,
// arithmetic, other conversions, indexing, the conditional operator — is
// refused by name. Expressions must be parsed with no macro
// (cel.ClearMacros), so that a macro reaches Check as the call its text
// names.
type Grammar struct {
	// Root is the variable an expression reads, such as "obj".
	Root string
	// Member checks a selection below Root, such as ["metadata"] for
	// obj.metadata; a non-nil error refuses it and is returned as is.
	Member func(path []string) error
	// ListMember reports whether the member may stand on the right of in.
	ListMember func(path []string) bool
	// Nullable reports a member that may be null, which CheckTyped lets
	// be compared with null; nil allows none.
	Nullable func(path []string) bool
	// NoSubstring reports a member that startsWith, endsWith and contains
	// may not read, in their target or argument.
	NoSubstring func(path []string) bool
	// Clock allows time.now and .add/.subtract on timestamps, which the
	// environment declares ([ClockEnv] does).
	Clock bool
	// Literal checks the literal argument of add/subtract (with Clock);
	// nil accepts any string. A timestamp() argument is always checked
	// here: an RFC 3339 time in CEL's range.
	Literal func(fn, s string) error
}

// Check returns an error naming the first construct of e that g does not
// allow, or nil.
func (g *Grammar) Check(e celast.Expr) error {
	switch e.Kind() {
	case celast.LiteralKind:
		return nil
	case celast.IdentKind:
		if e.AsIdent() == g.Root {
			return fmt.Errorf("%s may be used only as %s.<field>", g.Root, g.Root)
		}
		return fmt.Errorf("unknown name %s", trunc.String(e.AsIdent(), 64))
	case celast.SelectKind:
		return g.selection(e)
	case celast.CallKind:
		return g.call(e)
	case celast.ListKind:
		return fmt.Errorf("a list literal is supported only on the right of in")
	case celast.MapKind:
		return fmt.Errorf("map literals are not supported")
	case celast.StructKind:
		return fmt.Errorf("message literals are not supported")
	case celast.ComprehensionKind:
		return fmt.Errorf("comprehensions are not supported")
	}
	return fmt.Errorf("unsupported expression")
}

// selection checks e, a member selection.
func (g *Grammar) selection(e celast.Expr) error {
	if e.AsSelect().IsTestOnly() {
		return fmt.Errorf("the function has is not supported")
	}
	base, path := Path(e)
	switch {
	case base == g.Root && path != nil:
		return g.Member(path)
	case g.Clock && base == "time" && slices.Equal(path, []string{"now"}):
		return nil
	}
	return fmt.Errorf("only %s.<field> may be selected", g.Root)
}

// Path returns the variable and the members e selects, such as "obj" and
// ["metadata"] for obj.metadata, or "" and nil when e is not a chain of
// selections on a variable.
func Path(e celast.Expr) (string, []string) {
	var path []string
	for e.Kind() == celast.SelectKind && !e.AsSelect().IsTestOnly() {
		path = append(path, e.AsSelect().FieldName())
		e = e.AsSelect().Operand()
	}
	if e.Kind() != celast.IdentKind || path == nil {
		return "", nil
	}
	slices.Reverse(path)
	return e.AsIdent(), path
}

// call checks e, a function call or an operator.
func (g *Grammar) call(e celast.Expr) error {
	c := e.AsCall()
	fn := c.FunctionName()
	member, args := c.IsMemberFunction(), c.Args()
	switch fn {
	case operators.LogicalNot, operators.LogicalAnd, operators.LogicalOr,
		operators.Equals, operators.NotEquals, operators.Less, operators.LessEquals,
		operators.Greater, operators.GreaterEquals:
		return g.all(args...)
	case operators.In:
		if err := g.inList(args[1]); err != nil {
			return err
		}
		return g.Check(args[0])
	case overloadsSize:
		if member && len(args) == 0 {
			return g.Check(c.Target())
		}
		if !member && len(args) == 1 {
			return g.Check(args[0])
		}
		return callForm(fn, member, len(args))
	case "startsWith", "endsWith", "contains":
		if !member || len(args) != 1 {
			return callForm(fn, member, len(args))
		}
		for _, x := range []celast.Expr{c.Target(), args[0]} {
			if path := g.mentions(x); path != nil {
				return fmt.Errorf("%s is not supported on %s.%s; compare it with ==", fn, g.Root, strings.Join(path, "."))
			}
		}
		return g.all(c.Target(), args[0])
	case "timestamp":
		if member || len(args) != 1 {
			return callForm(fn, member, len(args))
		}
		// timestamp(time.now), as the real service's documentation writes
		// it (research/real-service.md §2): the time itself.
		if g.Clock && isNow(args[0]) {
			return nil
		}
		return g.literal(fn, args[0])
	case "add", "subtract":
		if !g.Clock {
			break
		}
		if !member || len(args) != 1 {
			return callForm(fn, member, len(args))
		}
		if err := g.literal(fn, args[0]); err != nil {
			return err
		}
		return g.Check(c.Target())
	case operators.Index, operators.OptIndex:
		return fmt.Errorf("index access is not supported")
	case operators.Conditional:
		return fmt.Errorf("the conditional operator ?: is not supported")
	case operators.Add, operators.Subtract, operators.Multiply, operators.Divide,
		operators.Modulo, operators.Negate:
		return fmt.Errorf("arithmetic (%s) is not supported", strings.Trim(fn, "_"))
	case "matches":
		return fmt.Errorf("matches is not supported")
	case "all", "exists", "exists_one", "map", "filter":
		return fmt.Errorf("the macro %s is not supported", fn)
	case "int", "uint", "double", "string", "bytes", "bool", "duration", "dyn", "type":
		return fmt.Errorf("the conversion %s() is not supported", fn)
	}
	return fmt.Errorf("the function %s is not supported", trunc.String(fn, 64))
}

const overloadsSize = "size"

// callForms are the ways the functions a Grammar allows are called, for
// callForm's message.
var callForms = map[string]struct {
	member bool   // called as a method, x.f(…), rather than f(…)
	args   int    // arguments besides a method's target
	form   string // as a user writes it
}{
	"startsWith": {true, 1, `s.startsWith("…")`},
	"endsWith":   {true, 1, `s.endsWith("…")`},
	"contains":   {true, 1, `s.contains("…")`},
	"timestamp":  {false, 1, `timestamp("<RFC 3339>")`},
	"add":        {true, 1, `t.add("<duration>")`},
	"subtract":   {true, 1, `t.subtract("<duration>")`},
}

// callForm says what is wrong with a call of fn, a function a Grammar
// allows, called as a method (member) or not with n arguments: a
// supported function called wrongly is not an unsupported one.
func callForm(fn string, member bool, n int) error {
	if fn == overloadsSize {
		return fmt.Errorf("size takes one value: size(x) or x.size(), not %d arguments", n+btoi(member))
	}
	f := callForms[fn]
	switch {
	case member && !f.member:
		return fmt.Errorf("%s is called as %s, not as a method", fn, f.form)
	case !member && f.member:
		return fmt.Errorf("%s is a method, called as %s", fn, f.form)
	}
	return fmt.Errorf("%s takes %d argument, not %d: %s", fn, f.args, n, f.form)
}

func btoi(b bool) int {
	if b {
		return 1
	}
	return 0
}

// all checks each of es.
func (g *Grammar) all(es ...celast.Expr) error {
	for _, x := range es {
		if err := g.Check(x); err != nil {
			return err
		}
	}
	return nil
}

// inList checks the right operand of in.
func (g *Grammar) inList(e celast.Expr) error {
	if base, path := Path(e); base == g.Root && g.ListMember != nil && g.ListMember(path) {
		return g.Member(path)
	}
	if e.Kind() != celast.ListKind || len(e.AsList().OptionalIndices()) > 0 {
		return fmt.Errorf("in needs a list literal of constants on its right")
	}
	for _, x := range e.AsList().Elements() {
		switch {
		case x.Kind() == celast.LiteralKind:
		case x.Kind() == celast.CallKind && x.AsCall().FunctionName() == "timestamp" &&
			!x.AsCall().IsMemberFunction() && len(x.AsCall().Args()) == 1:
			if err := g.literal("timestamp", x.AsCall().Args()[0]); err != nil {
				return err
			}
		default:
			return fmt.Errorf("in needs a list literal of constants on its right")
		}
	}
	return nil
}

// literalName names a constant as a message shows it: null, or its type
// and value (the int 1).
func literalName(v ref.Val) string {
	if v == types.NullValue {
		return "null"
	}
	return fmt.Sprintf("the %s %s", v.Type().TypeName(), trunc.String(fmt.Sprint(v), 32))
}

// CheckTyped refuses, in a type-checked expression a, what only types
// show:
//
//   - a comparison of a member that is never null (g.Nullable) with null,
//     or null in a list on the right of in with such a member on its
//     left: obj.description == null was false for every item, a silent
//     "no match", where it means to ask for an empty description; and
//     a comparison with null of anything else whose type is never null
//     (time.now, obj.created_at.add("1d"): timestamps);
//   - a constant on the right of in that the left operand can never
//     equal: CEL types a list that mixes types as list(dyn), which
//     type-checks against any left operand, so
//     obj.created_at in ["2026-01-01T00:00:00Z", null] matched nothing
//     where obj.created_at in ["2026-01-01T00:00:00Z"] is refused, as a
//     comparison of a member with a value of another type is. Numbers
//     may be compared with numbers of any kind, as CEL does across int,
//     uint and double. An element that is not a literal (timestamp("…"))
//     is checked by its type: obj.id in ["x", timestamp("…")] is refused.
func (g *Grammar) CheckTyped(a *celast.AST) error {
	var bad error
	celast.PreOrderVisit(a.Expr(), celast.NewExprVisitor(func(e celast.Expr) {
		if bad != nil || e.Kind() != celast.CallKind {
			return
		}
		c := e.AsCall()
		args := c.Args()
		switch c.FunctionName() {
		case operators.Equals, operators.NotEquals:
			for i, x := range args {
				if !IsNull(args[1-i]) || IsNull(x) {
					continue
				}
				if name := g.neverNull(a, x); name != "" {
					bad = fmt.Errorf("%s%s", name, g.nullHint(a, x))
					return
				}
				if base, path := g.checkedPath(x); base == g.Root && path != nil {
					continue // a member g.Nullable allows to be null
				}
				// Anything else by its type: time.now, x.add("1d"),
				// timestamp("…") are timestamps, never null.
				if t := a.GetType(x.ID()); !canEqual(t.Kind(), types.NullType) {
					bad = fmt.Errorf("a %s is never null: comparing one with null is always %t", kindName(t), c.FunctionName() == operators.NotEquals)
					return
				}
			}
		case operators.In:
			if args[1].Kind() == celast.ListKind {
				bad = g.typedIn(a, args[0], args[1].AsList().Elements())
			}
		}
	}))
	return bad
}

// Comparisons calls visit for each comparison in e of one side with
// another: both ways for == and !=, and the left operand of in with each
// element of a list literal on its right. A check of what a constant can
// equal, or a rewrite of one, needs no more.
func Comparisons(e celast.Expr, visit func(side, other celast.Expr)) {
	celast.PreOrderVisit(e, celast.NewExprVisitor(func(x celast.Expr) {
		if x.Kind() != celast.CallKind {
			return
		}
		c := x.AsCall()
		args := c.Args()
		switch c.FunctionName() {
		case operators.Equals, operators.NotEquals:
			visit(args[0], args[1])
			visit(args[1], args[0])
		case operators.In:
			if args[1].Kind() == celast.ListKind {
				for _, el := range args[1].AsList().Elements() {
					visit(args[0], el)
				}
			}
		}
	}))
}

// NullIsEmpty rewrites, in the parsed expression e, every null compared
// with root.<field> for a field of fields (by ==, != or in a list on the
// right of in) into "": for the optional text fields, which the real
// service leaves out of its answers when they are empty, so that null is
// how an empty one looks to a client (and its filtering documentation
// asks for one with (obj.acl == null || obj.acl == "")). Other
// comparisons with null are left for Grammar.CheckTyped to allow or
// refuse.
func NullIsEmpty(e celast.Expr, root string, fields []string) {
	member := func(x celast.Expr) bool {
		if x.Kind() != celast.SelectKind {
			return false
		}
		sel := x.AsSelect()
		op := sel.Operand()
		return !sel.IsTestOnly() && op.Kind() == celast.IdentKind && op.AsIdent() == root && slices.Contains(fields, sel.FieldName())
	}
	Comparisons(e, func(side, other celast.Expr) {
		if member(side) && IsNull(other) {
			other.SetKindCase(celast.NewExprFactory().NewLiteral(other.ID(), types.String("")))
		}
	})
}

// typedIn checks the constants of a list on the right of in, elems,
// against its left operand, left (see CheckTyped).
func (g *Grammar) typedIn(a *celast.AST, left celast.Expr, elems []celast.Expr) error {
	t := a.GetType(left.ID())
	for _, x := range elems {
		if x.Kind() != celast.LiteralKind {
			// timestamp("…") or time.now, say: of a type of its own.
			if xt := a.GetType(x.ID()); !kindsCanEqual(t.Kind(), xt.Kind()) {
				return fmt.Errorf("in: the %s on its left can never equal a %s in the list on its right",
					kindName(t), kindName(xt))
			}
			continue
		}
		if name := g.neverNull(a, left); name != "" && IsNull(x) {
			return fmt.Errorf("in: %s; take null out of the list on its right", name)
		}
		if !canEqual(t.Kind(), x.AsLiteral().Type()) {
			return fmt.Errorf("in: the %s on its left can never equal %s in the list on its right",
				kindName(t), literalName(x.AsLiteral()))
		}
	}
	return nil
}

// neverNull returns, when e is a member of g.Root that g.Nullable does
// not allow to be null, what it is: "obj.description is a string, never
// null"; else "".
func (g *Grammar) neverNull(a *celast.AST, e celast.Expr) string {
	base, path := g.checkedPath(e)
	if base != g.Root || path == nil || g.Nullable != nil && g.Nullable(path) {
		return ""
	}
	name := trunc.String(base+"."+strings.Join(path, "."), 64)
	switch t := a.GetType(e.ID()); t.Kind() {
	case types.StringKind, types.TimestampKind, types.BoolKind, types.BytesKind:
		return fmt.Sprintf("%s is a %s, never null", name, kindName(t))
	case types.IntKind, types.UintKind, types.DoubleKind:
		return fmt.Sprintf("%s is a number, never null", name)
	case types.ListKind:
		return fmt.Sprintf("%s is a list, never null", name)
	}
	return fmt.Sprintf("%s is never null", name)
}

// nullHint is what to write instead of comparing e, a member that is
// never null, with null.
func (g *Grammar) nullHint(a *celast.AST, e celast.Expr) string {
	switch a.GetType(e.ID()).Kind() {
	case types.StringKind:
		return `; compare it with == ""`
	case types.ListKind:
		base, path := g.checkedPath(e)
		return fmt.Sprintf("; compare size(%s) with 0", trunc.String(base+"."+strings.Join(path, "."), 64))
	}
	return ""
}

// checkedPath is Path in a type-checked expression, where the checker
// has made a selection of a variable declared with its qualified name
// (obj.metadata) the identifier of that name.
func (g *Grammar) checkedPath(e celast.Expr) (string, []string) {
	if e.Kind() == celast.IdentKind {
		if rest, ok := strings.CutPrefix(e.AsIdent(), g.Root+"."); ok {
			return g.Root, strings.Split(rest, ".")
		}
	}
	return Path(e)
}

// IsNull reports whether e is the literal null.
func IsNull(e celast.Expr) bool {
	return e.Kind() == celast.LiteralKind && e.AsLiteral() == types.NullValue
}

// kindName names t as a user writes it: "string" for a nullable string
// (wrapper(string) to CEL), "timestamp" for google.protobuf.Timestamp.
func kindName(t *types.Type) string {
	switch t.Kind() {
	case types.StringKind:
		return "string"
	case types.TimestampKind:
		return "timestamp"
	case types.BoolKind:
		return "bool"
	case types.BytesKind:
		return "bytes"
	}
	return t.String()
}

// kindsCanEqual reports whether a value of kind k can equal one of kind
// x; true when either is not known.
func kindsCanEqual(k, x types.Kind) bool {
	number := func(k types.Kind) bool { return k == types.IntKind || k == types.UintKind || k == types.DoubleKind }
	switch {
	case k == types.DynKind || x == types.DynKind || k == types.AnyKind || x == types.AnyKind:
		return true
	case number(k) && number(x):
		return true
	}
	return k == x
}

// canEqual reports whether a value of kind k can equal a constant of type
// t; true for kinds it does not know.
func canEqual(k types.Kind, t ref.Type) bool {
	switch k {
	case types.StringKind:
		return t == types.StringType || t == types.NullType
	case types.IntKind, types.UintKind, types.DoubleKind:
		return t == types.IntType || t == types.UintType || t == types.DoubleType
	case types.BoolKind:
		return t == types.BoolType
	case types.BytesKind:
		return t == types.BytesType
	case types.NullTypeKind:
		return t == types.NullType
	case types.TimestampKind, types.DurationKind:
		return false // no literal is one
	}
	return true
}

// literal checks the argument of timestamp(), add() or subtract(): a
// string literal that g.Literal accepts.
func (g *Grammar) literal(fn string, e celast.Expr) error {
	s, ok := StringLiteral(e)
	if !ok {
		return fmt.Errorf("%s() takes a string literal", fn)
	}
	if fn == "timestamp" {
		if v := types.String(s).ConvertToType(types.TimestampType); types.IsError(v) {
			return fmt.Errorf("timestamp(%q): %v", trunc.String(s, 64), v)
		}
		return nil
	}
	if g.Literal != nil {
		return g.Literal(fn, s)
	}
	return nil
}

// isNow reports whether e is time.now.
func isNow(e celast.Expr) bool {
	if e.Kind() != celast.SelectKind {
		return e.Kind() == celast.IdentKind && e.AsIdent() == Now
	}
	s := e.AsSelect()
	op := s.Operand()
	return !s.IsTestOnly() && s.FieldName() == "now" && op.Kind() == celast.IdentKind && op.AsIdent() == "time"
}

// StringLiteral returns e's value when it is a string literal.
func StringLiteral(e celast.Expr) (string, bool) {
	if e.Kind() != celast.LiteralKind {
		return "", false
	}
	s, ok := e.AsLiteral().(types.String)
	return string(s), ok
}

// mentions returns the first member of e that g.NoSubstring refuses.
func (g *Grammar) mentions(e celast.Expr) []string {
	var found []string
	celast.PreOrderVisit(e, celast.NewExprVisitor(func(x celast.Expr) {
		if base, path := Path(x); found == nil && base == g.Root && g.NoSubstring != nil && g.NoSubstring(path) {
			found = path
		}
	}))
	return found
}

// The cost model. CEL's own charges a string's size in characters, which
// its tracker counts on every comparison (a pass over the string that it
// does not charge), and charges size() and timestamp() 1 however long
// their argument. Here every call is charged by bytes, which a length
// gives at once: a comparison, startsWith or endsWith 1 unit plus 1 per 10
// bytes compared, contains 1 plus 1 per 10 bytes of its two strings, in
// per list element the comparison's cost (elements counted as at least
// 10 bytes), size() of a
// string 1 plus 1 per 10 bytes, and timestamp(), add() and subtract() a
// fixed cost for the parse plus 1 per 10 bytes of their argument.
const (
	// ParseCost is what timestamp(), add() and subtract() cost besides
	// their argument's length.
	ParseCost = 10
	// EvalCost is what an evaluation costs besides its expression's
	// nodes: CEL's own work to set one up, about a microsecond, which its
	// cost tracker does not count.
	EvalCost = 10
	unknown  = math.MaxUint64
)

// Costs is the cost model, for CEL's static estimator and runtime
// tracker. Size gives the most bytes (or list elements) a member of the
// root variable holds, from its path such as ["endpoint", "host"], or
// ["obj.metadata"] for a variable declared with its qualified name (the
// elements of a list member at ["endpoint", "bindings", "@items"]); a
// member it does not know is of unknown size, and what reads it has no
// static bound. Members of types without a size (numbers, timestamps)
// need no entry.
type Costs struct {
	// Size returns the most bytes or elements the member at path holds,
	// and false when it does not know.
	Size func(path []string) (uint64, bool)
}

var (
	_ checker.CostEstimator = Costs{}
)

// EstimateSize implements checker.CostEstimator.
func (c Costs) EstimateSize(n checker.AstNode) *checker.SizeEstimate {
	if p := n.Path(); len(p) > 0 && c.Size != nil {
		if most, ok := c.Size(p); ok {
			return &checker.SizeEstimate{Min: 0, Max: most}
		}
	}
	return nil
}

// most is the static bound of n's size.
func (c Costs) most(n checker.AstNode) uint64 {
	if e := n.Expr(); e.Kind() == celast.LiteralKind {
		return size(e.AsLiteral())
	}
	if est := c.EstimateSize(n); est != nil {
		return est.Max
	}
	if est := n.ComputedSize(); est != nil {
		return est.Max
	}
	switch n.Type().Kind() {
	case types.StringKind, types.BytesKind, types.ListKind, types.MapKind, types.DynKind, types.AnyKind:
		return unknown
	}
	return 1
}

// EstimateCallCost implements checker.CostEstimator, for the calls a
// Grammar allows; it leaves the others (&&, ||, !) to CEL.
func (c Costs) EstimateCallCost(fn, _ string, target *checker.AstNode, args []checker.AstNode) *checker.CallEstimate {
	if target != nil {
		args = append([]checker.AstNode{*target}, args...)
	}
	var cost uint64
	switch fn {
	case operators.Equals, operators.NotEquals, operators.Less, operators.LessEquals,
		operators.Greater, operators.GreaterEquals, "startsWith", "endsWith":
		cost = compareCost(fn, c.most(args[0]), c.most(args[1]))
	case "contains":
		cost = containsCost(c.most(args[0]), c.most(args[1]))
	case operators.In:
		lhs := c.most(args[0])
		if list := args[1].Expr(); list.Kind() == celast.ListKind {
			for _, x := range list.AsList().Elements() {
				cost = add(cost, inCost(lhs, c.most(node{x})))
			}
		} else {
			items, ok := c.Size(append(slices.Clone(args[1].Path()), "@items"))
			if !ok {
				items = unknown
			}
			cost = mul(c.most(args[1]), inCost(lhs, items))
		}
	case overloadsSize, "timestamp", "add", "subtract":
		cost = unaryCost(fn, c.most(args[len(args)-1]))
	default:
		return nil
	}
	return &checker.CallEstimate{CostEstimate: checker.CostEstimate{Min: 0, Max: cost}}
}

// CallCost implements interpreter.ActualCostEstimator: the same model as
// EstimateCallCost, on values. It returns a cost for every call a Grammar
// allows, so that CEL never measures a string itself.
func (Costs) CallCost(fn, _ string, args []ref.Val, _ ref.Val) *uint64 {
	var cost uint64
	switch fn {
	case operators.Equals, operators.NotEquals, operators.Less, operators.LessEquals,
		operators.Greater, operators.GreaterEquals, "startsWith", "endsWith":
		cost = compareCost(fn, size(args[0]), size(args[1]))
	case "contains":
		cost = containsCost(size(args[0]), size(args[1]))
	case operators.In:
		lhs := size(args[0])
		if list, ok := args[1].(traits.Lister); ok {
			n, _ := list.Size().(types.Int)
			if lhs <= 10 { // every element costs the same
				cost = mul(uint64(n), inCost(lhs, 0))
				break
			}
			for i := range int64(n) {
				cost = add(cost, inCost(lhs, size(list.Get(types.Int(i)))))
			}
		}
	case overloadsSize, "timestamp", "add", "subtract":
		cost = unaryCost(fn, size(args[len(args)-1]))
	default:
		cost = 1
	}
	if cost < uint64(len(smallCosts)) {
		return &smallCosts[cost] // most calls: no allocation per call
	}
	big := cost // declared here, so that only this path allocates
	return &big
}

// smallCosts holds the costs 0 to 63, so that CallCost can return a
// pointer to one without allocating; CEL only reads through it.
var smallCosts = func() (c [64]uint64) {
	for i := range c {
		c[i] = uint64(i)
	}
	return c
}()

// compareCost is the cost of comparing values of sizes a and b (for
// startsWith and endsWith, b is the prefix or suffix).
func compareCost(fn string, a, b uint64) uint64 {
	n := min(a, b)
	if fn == "startsWith" || fn == "endsWith" {
		n = b
	}
	return add(1, tenths(n))
}

// inCost is what in charges for one list element of size elem, looking
// for a value of size lhs: a comparison, taking every element to be at
// least 10 bytes, so that when lhs is at most 10 bytes every element costs
// the same and the tracker need not look at them (converting each, for a
// list read from a Go value).
func inCost(lhs, elem uint64) uint64 {
	return compareCost(operators.Equals, lhs, max(elem, 10))
}

// containsCost is the cost of a substring search, linear where CEL's is
// the product of the sizes: Go's strings.Index compares at most 63 bytes
// at a time with vector instructions for short substrings, and falls back
// to Rabin-Karp, linear, for long ones after a few false starts.
func containsCost(s, sub uint64) uint64 { return add(1, tenths(add(s, sub))) }

func unaryCost(fn string, n uint64) uint64 {
	if fn == overloadsSize {
		return add(1, tenths(n))
	}
	return add(ParseCost, tenths(n))
}

// size is a value's size: bytes of a string, elements of a list, else 1.
func size(v ref.Val) uint64 {
	switch v := v.(type) {
	case types.String:
		return uint64(len(v))
	case types.Bytes:
		return uint64(len(v))
	case traits.Lister:
		n, _ := v.Size().(types.Int)
		return uint64(n)
	}
	return 1
}

func tenths(n uint64) uint64 {
	if n == unknown {
		return unknown
	}
	return (n + 9) / 10
}

func add(a, b uint64) uint64 {
	if a > unknown-b {
		return unknown
	}
	return a + b
}

func mul(a, b uint64) uint64 {
	if a != 0 && b > unknown/a {
		return unknown
	}
	return a * b
}

// Nodes is the number of nodes of e, for the cost of an evaluation that
// CEL does not count: constants and the terms of && and || cost nothing,
// but take time.
func Nodes(e celast.Expr) uint64 {
	var n uint64
	celast.PreOrderVisit(e, celast.NewExprVisitor(func(celast.Expr) { n++ }))
	return n
}

// node is a list element as the estimator sees it: only its literal
// value matters.
type node struct{ e celast.Expr }

func (n node) Path() []string                      { return nil }
func (n node) Type() *types.Type                   { return types.DynType }
func (n node) Expr() celast.Expr                   { return n.e }
func (n node) ComputedSize() *checker.SizeEstimate { return nil }

// CheckMinus refuses, in src, the source of an expression that parsed, a
// minus sign other than a number's: CEL's parser drops an even number of
// negations (--x is x, ----x is x) before Check could see them, so that
// --"abc" == "abc" passed for a string, where -"abc" is refused as
// arithmetic. A sign is a number's when a digit follows it, or a point
// and a digit (-1, - 2.5, -.5): any other minus (- -x, --1) negates or
// subtracts. Strings, bytes and comments are skipped, so "a--b" is a
// string like any other. Check refuses the remaining minus signs that are
// not a number's sign, such as -x or 1 - 2, by the node the parser made.
// A quoted name (obj.`a-b`) is skipped too.
func CheckMinus(src string) error {
	for i := 0; i < len(src); {
		switch c := src[i]; {
		case c == '"' || c == '\'':
			i = skipString(src, i)
		case c == '`': // a quoted name, such as obj.`a-b`
			if j := strings.IndexByte(src[i+1:], '`'); j >= 0 {
				i += j + 2
			} else {
				i = len(src)
			}
		case c == '/' && strings.HasPrefix(src[i:], "//"):
			i = skipSpace(src, i) // the comment
		case c == '-':
			j := skipSpace(src, i+1)
			if j < len(src) && (isDigit(src[j]) || src[j] == '.' && j+1 < len(src) && isDigit(src[j+1])) {
				i = j
				continue
			}
			return fmt.Errorf("arithmetic (-) is not supported")
		default:
			i++
		}
	}
	return nil
}

func isDigit(c byte) bool { return '0' <= c && c <= '9' }

// skipSpace returns the index of the first byte of src at or after i that
// is not white space or in a comment.
func skipSpace(src string, i int) int {
	for i < len(src) {
		switch {
		case strings.IndexByte(" \t\n\r\f\v", src[i]) >= 0:
			i++
		case strings.HasPrefix(src[i:], "//"):
			j := strings.IndexByte(src[i:], '\n')
			if j < 0 {
				return len(src)
			}
			i += j
		default:
			return i
		}
	}
	return i
}

// skipString returns the index just past the string or bytes literal
// whose opening quote is at src[i], single or triple, ' or ", raw
// when an r or R stands before its prefix (b, r, br, rb, in either case),
// in which case a backslash escapes nothing.
func skipString(src string, i int) int {
	raw := false
	for k := i - 1; k >= 0 && k >= i-2; k-- {
		if c := src[k]; c == 'r' || c == 'R' {
			raw = true
		} else if c != 'b' && c != 'B' {
			break
		}
	}
	quote := src[i : i+1]
	if strings.HasPrefix(src[i:], strings.Repeat(quote, 3)) {
		quote = strings.Repeat(quote, 3)
	}
	for j := i + len(quote); j < len(src); j++ {
		switch {
		case src[j] == '\\' && !raw:
			j++
		case strings.HasPrefix(src[j:], quote):
			return j + len(quote)
		}
	}
	return len(src)
}
