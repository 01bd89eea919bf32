package ratelimit

import (
	"errors"
	"fmt"
	"reflect"
	"slices"
	"strings"
	"sync"

	"github.com/google/cel-go/cel"
	"github.com/google/cel-go/checker"
	"github.com/google/cel-go/common/ast"
	"github.com/google/cel-go/common/operators"
	"github.com/google/cel-go/common/overloads"
	"github.com/google/cel-go/common/types"
	"github.com/google/cel-go/common/types/ref"
	"github.com/google/cel-go/common/types/traits"
	"github.com/google/cel-go/ext"
	"github.com/google/cel-go/interpreter"

	"github.com/acctapi/acctapi/internal/celguard"
	"github.com/acctapi/acctapi/internal/trunc"
)

// Limits on an expression: its size and nesting, enforced by the parser,
// and its cost per evaluation.
const (
	maxExprBytes     = 4096
	maxExprRecursion = 64
	// maxExprComprehensions bounds the comprehensions (all, exists,
	// exists_one, map, filter, cel.bind, ...) of one expression: checking
	// one costs in proportion to the scopes around it, so that 190 of
	// them in 4 KiB took 0.74 s and 175 MB to compile (a cost review's
	// measurement), where 16 take about 2 ms.
	maxExprComprehensions = 16
	// maxEvalCost bounds the work one evaluation of one expression may do,
	// in cel-go's cost units (about one per operation, and per ten bytes of
	// a string scanned). An expression whose worst case, with every input
	// at most maxInputSize long, fits within it runs without cost
	// tracking; any other runs with a runtime limit and fails to evaluate
	// beyond it.
	maxEvalCost = 1_000_000
	// maxInputSize bounds the size of every string, list and map a request
	// gives an expression: net/http's default limit on header bytes.
	maxInputSize = 1 << 20
	// maxRangeSize bounds lists.range(n).
	maxRangeSize = 10_000
	// maxKeyBytes bounds a bucket key's value, a list's joined form
	// included, and every value a function turns into text (see
	// keyString): what a request can make an expression build.
	maxKeyBytes = maxInputSize
)

// env returns the CEL environment shared by bucket keys and rule
// expressions. It is built once and never modified.
var env = sync.OnceValues(func() (*cel.Env, error) {
	opts := []cel.EnvOption{
		cel.Variable(varRequest, requestType),
		ext.Strings(),
		ext.Lists(ext.ListsMaxRangeSize(maxRangeSize)),
		ext.Encoders(),
		cel.ParserExpressionSizeLimit(maxExprBytes),
		cel.ParserRecursionLimit(maxExprRecursion),
	}
	for i := range catalogue {
		v := &catalogue[i]
		opts = append(opts, cel.Variable(v.name, v.typ))
	}
	opts = append(opts, funcOptions()...)
	opts = append(opts, boundedBuilders()...)
	return cel.NewEnv(append(opts, guardedFunctions()...)...)
})

// compiled is a checked and planned expression.
type compiled struct {
	prog    cel.Program
	checked *cel.Ast
}

// compile checks expr and plans it for evaluation. want, when not nil, is
// the required output type (nil: anything but a map, for a bucket key).
// prov, when not nil, are the providers the expression may use; a
// variable or function that needs another fails to compile. Validate
// passes nil, since the specification allows every variable.
func compile(expr string, want *cel.Type, prov *providers) (compiled, error) {
	if prov != nil && prov.left != nil {
		if *prov.left <= 0 {
			return compiled{}, fmt.Errorf("is not compiled: the policy has more than %d expressions "+
				"(rule expressions, bucket keys and custom-response placeholders), the most NewPolicy compiles", MaxPolicyExpressions)
		}
		*prov.left--
	}
	e, err := env()
	if err != nil {
		return compiled{}, err
	}
	parsed, iss := e.Parse(expr)
	if err := iss.Err(); err != nil {
		return compiled{}, fmt.Errorf("does not compile: %s", oneLine(err.Error()))
	}
	if err := checkSize(parsed, prov); err != nil {
		return compiled{}, err
	}
	if writesRequestName(expr, parsed) {
		return compiled{}, fmt.Errorf("does not compile: unknown name %s", varRequest)
	}
	checked, iss := e.Check(parsed)
	if err := iss.Err(); err != nil {
		return compiled{}, fmt.Errorf("does not compile: %s", explain(oneLine(err.Error()), parsed))
	}
	out := checked.OutputType()
	if want != nil && !want.IsAssignableType(out) && out != cel.DynType {
		return compiled{}, fmt.Errorf("has type %s; want %s", out, want)
	}
	if want == nil && out.Kind() == types.MapKind {
		return compiled{}, fmt.Errorf("has type %s, which cannot be a bucket key", out)
	}
	if prov != nil {
		if err := checkProviders(checked, prov); err != nil {
			return compiled{}, err
		}
	}
	if err := checkPatterns(checked); err != nil {
		return compiled{}, err
	}
	if err := checkNeverEqual(checked); err != nil {
		return compiled{}, err
	}
	if err := checkObjectFields(checked); err != nil {
		return compiled{}, err
	}
	// An expression runs untracked only if its estimated worst case is
	// within the limit and it uses nothing but what the estimate models
	// (see untrackable); every other one runs under the cost limit. (A
	// black-box check found that estimates miss functions whose output
	// outgrows their cost, such as '%s'.format or basic_auth.encode in a
	// lists.range(n).map, which then ran untracked out of memory. Tracking
	// every expression took a rule such as req.url.path.startsWith('/v1/')
	// from about 360 to 650 ns a request, so plain ones stay untracked.)
	popts := []cel.ProgramOption{cel.EvalOptions(cel.OptOptimize), cel.CustomDecoratorV2(compareGuard), cel.CustomDecoratorV2(orderLiterals)}
	if est, err := e.EstimateCost(checked, sizeEstimator{}); err != nil || est.Max > maxEvalCost || !untrackable(checked) {
		popts = append(popts, cel.CostLimit(maxEvalCost))
		popts = append(popts, costOptions...)
		popts = append(popts, foldOptions(checked)...) // (every comprehension, see cel_fold.go)
	}
	p, err := program(e, checked, popts)
	return compiled{prog: p, checked: checked}, err
}

// checkSize bounds what checking parsed costs before it is checked: at
// most maxExprComprehensions comprehensions, and, when prov counts them
// (NewPolicy), nodes within what is left of MaxPolicyNodes.
func checkSize(parsed *cel.Ast, prov *providers) error {
	nodes, comprehensions := 0, 0
	ast.PreOrderVisit(parsed.NativeRep().Expr(), ast.NewExprVisitor(func(e ast.Expr) {
		nodes++
		if e.Kind() == ast.ComprehensionKind {
			comprehensions++
		}
	}))
	if comprehensions > maxExprComprehensions {
		return fmt.Errorf("is not compiled: it has %d comprehensions (all, exists, exists_one, map, filter and the like); an expression may have at most %d",
			comprehensions, maxExprComprehensions)
	}
	if prov != nil && prov.nodesLeft != nil {
		if nodes > *prov.nodesLeft {
			return fmt.Errorf("is not compiled: the policy's expressions have more than %d nodes (terms of their syntax trees) in all, the most NewPolicy compiles",
				MaxPolicyNodes)
		}
		*prov.nodesLeft -= nodes
	}
	return nil
}

// program plans checked. A panic while planning is an expression that does
// not compile, not a crash: cel-go's constant folding panicked on a map
// literal with a bytes key ({b'a': 1}, found by a black-box check), which
// orderLiterals now refuses first; the net stays for what folding may
// still meet.
func program(e *cel.Env, checked *cel.Ast, opts []cel.ProgramOption) (p cel.Program, err error) {
	defer func() {
		if r := recover(); r != nil {
			p, err = nil, fmt.Errorf("does not compile: %v", r)
		}
	}()
	return e.Program(checked, opts...)
}

// untrackable reports whether checked's cost estimate bounds its
// evaluation: it has no comprehension (whose range cel-go's estimate may
// not know) and calls only operators, the catalogue's request functions
// (named "__...", whose results are request data of at most
// maxInputSize), conversions and the string tests cel-go charges by size,
// and the functions of linearOverloads (charged by their argument).
// matches is bounded a call before it runs, but an expression may call
// it hundreds of times, so it runs tracked, charged by its steps.
func untrackable(checked *cel.Ast) bool {
	ok := true
	ast.PostOrderVisit(checked.NativeRep().Expr(), ast.NewExprVisitor(func(e ast.Expr) {
		switch e.Kind() {
		case ast.ComprehensionKind:
			ok = false
		case ast.CallKind:
			name := e.AsCall().FunctionName()
			if name == "__matches" || !strings.HasPrefix(name, "_") && !strings.HasPrefix(name, "@") && !modelled[name] {
				ok = false
			}
		}
	}))
	return ok
}

// modelled are the functions untrackable accepts beyond operators and the
// catalogue's request functions.
var modelled = func() map[string]bool {
	m := map[string]bool{}
	for _, f := range []string{
		"startsWith", "endsWith", "contains", "size", "string", "int", "uint", "double", "bool", "bytes",
		"type", "dyn", "timestamp", "duration",
		// linearOverloads' functions (json.decode, queryString.decode and
		// url.parse are charged by the parts they build, see buildCosts,
		// which the estimate does not know)
		"url.escape", "url.unescape",
		"isJson", "decodeBase64", "encodeBase64", "isQueryString", "isURL", "lower", "upper",
	} {
		m[f] = true
	}
	for _, h := range hashes {
		m["hash."+h.name] = true
	}
	return m
}()

// checkPatterns refuses a matches call whose pattern is a literal that
// does not parse or is over maxPatternSteps: every evaluation would fail,
// and one over the bound would put every request in the over-budget
// bucket (a review found a per-client limit made one global that way).
func checkPatterns(checked *cel.Ast) error {
	var bad error
	ast.PostOrderVisit(checked.NativeRep().Expr(), ast.NewExprVisitor(func(e ast.Expr) {
		if bad != nil || e.Kind() != ast.CallKind || e.AsCall().FunctionName() != "__matches" {
			return
		}
		args := e.AsCall().Args()
		if len(args) != 2 || args[1].Kind() != ast.LiteralKind {
			return
		}
		if p, ok := args[1].AsLiteral().(types.String); ok {
			if c := patternFor(string(p), 0, false); c.err != nil {
				bad = fmt.Errorf("does not compile: matches: %s", trunc.String(c.err.Error(), 200))
			}
		}
	}))
	return bad
}

// neverEqual says, for a variable whose values have a known form, why a
// string constant can never equal one ("" when it can).
var neverEqual = map[string]func(s string) string{
	// A client may send a method in any case (net/http keeps it), but the
	// standard ones are upper case: 'get' is a typo that never limits a
	// GET, and is refused as one.
	"req.method": func(s string) string {
		for _, m := range []string{"GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "CONNECT", "OPTIONS", "TRACE"} {
			if s != m && strings.EqualFold(s, m) {
				return fmt.Sprintf("req.method is %q for a %s; %q is taken for a typo (methods are case-sensitive, and clients send the standard ones in upper case)", m, m, s)
			}
		}
		return ""
	},
	"req.url.scheme": func(s string) string {
		if s != strings.ToLower(s) {
			return fmt.Sprintf("req.url.scheme is lower case (%q), never %q", strings.ToLower(s), s)
		}
		return ""
	},
	"req.url.path": func(s string) string {
		if s != "" && s != "*" && !strings.HasPrefix(s, "/") {
			return fmt.Sprintf("req.url.path starts with /, never equals %q (write %q)", s, "/"+s)
		}
		return ""
	},
}

// checkNeverEqual refuses a comparison (==, != or in a list) of a
// variable with a string constant it can never equal (see neverEqual):
// req.method == 'get' compiled, never matched, and a test that the limit
// did not apply passed (a misuse review).
func checkNeverEqual(checked *cel.Ast) error {
	native := checked.NativeRep()
	refs := native.ReferenceMap()
	varOf := func(e ast.Expr) func(string) string {
		if r, ok := refs[e.ID()]; ok && r.Value == nil {
			return neverEqual[r.Name]
		}
		return nil
	}
	var bad error
	check := func(why func(string) string, lit ast.Expr) {
		if bad != nil || lit.Kind() != ast.LiteralKind {
			return
		}
		if s, ok := lit.AsLiteral().(types.String); ok {
			if msg := why(string(s)); msg != "" {
				bad = fmt.Errorf("does not compile: %s", trunc.String(msg, 200))
			}
		}
	}
	celguard.Comparisons(native.Expr(), func(side, other ast.Expr) {
		if why := varOf(side); why != nil {
			check(why, other)
		}
	})
	return bad
}

// writesRequestName reports whether the user's expression names the
// request's handle, varRequest, which is the environment's: written from
// the root (.name, which no macro writes), or as a name where the text
// spells it. The request functions' macros add the name at their call's
// place in the text, and a string literal that spells it is only text (a
// review saw req.host != '__acctapi_request' refused).
func writesRequestName(expr string, parsed *cel.Ast) bool {
	info := parsed.NativeRep().SourceInfo()
	var src []rune // expr, made only if the name appears: offsets count runes
	found := false
	ast.PreOrderVisit(parsed.NativeRep().Expr(), ast.NewExprVisitor(func(x ast.Expr) {
		if found || x.Kind() != ast.IdentKind {
			return
		}
		switch x.AsIdent() {
		case "." + varRequest:
			found = true
		case varRequest:
			r, ok := info.GetOffsetRange(x.ID())
			if src == nil {
				src = []rune(expr)
			}
			at := int(r.Start)
			found = ok && at >= 0 && at <= len(src) && strings.HasPrefix(string(src[at:min(len(src), at+len(varRequest))]), varRequest)
		}
	}))
	return found
}

// objectFields are the members of the objects the catalogue gives as maps
// of string to dyn: a cookie (getReqCookie, req.cookies; see cookieValue),
// a TLS extension (conn.tls.client.extensions, conn.tls.server.extensions)
// and a parsed URL (url.parse; see parseURL).
var objectFields = []string{
	"name", "value", "domain", "path", "same_site", "unparsed_attributes", "expires", "max_age", "secure", "http_only",
	"id", "critical",
	"scheme", "opaque", "user", "host", "hostname", "port", "raw_path", "raw_query", "fragment", "query_params",
}

// checkObjectFields refuses a member of a cookie, a TLS extension or a
// parsed URL, selected (x.f, has(x.f)) or indexed by a literal (x['f']),
// that none of them has (objectFields): CEL types those objects as maps
// of string to dyn, so getReqCookie('s').valu type-checked and then failed
// on every request, and a key that fails never limits (a review's
// finding). An object is what getReqCookie and url.parse return, an
// element of req.cookies[name] or of conn.tls.*.extensions, and a
// comprehension's variable over those lists; a map of the user's own
// ({'k': 1, 'n': 'x'}) is not checked.
func checkObjectFields(checked *cel.Ast) error {
	native := checked.NativeRep()
	objectList := func(x ast.Expr) bool {
		if name, ok := dottedName(x); ok {
			return name == "conn.tls.client.extensions" || name == "conn.tls.server.extensions"
		}
		if x.Kind() == ast.CallKind && x.AsCall().FunctionName() == operators.Index {
			name, ok := dottedName(x.AsCall().Args()[0])
			return ok && name == "req.cookies"
		}
		return false
	}
	vars := map[string]bool{} // comprehension variables over object lists
	ast.PreOrderVisit(native.Expr(), ast.NewExprVisitor(func(e ast.Expr) {
		if e.Kind() == ast.ComprehensionKind && objectList(e.AsComprehension().IterRange()) {
			vars[e.AsComprehension().IterVar()] = true
		}
	}))
	isObject := func(x ast.Expr) bool {
		switch x.Kind() {
		case ast.IdentKind:
			return vars[x.AsIdent()]
		case ast.CallKind:
			switch c := x.AsCall(); c.FunctionName() {
			case "__getReqCookie", "url.parse": // (x.parseUrl() is url.parse(x))
				return true
			case operators.Index:
				return objectList(c.Args()[0])
			}
		}
		return false
	}
	var bad error
	ast.PostOrderVisit(native.Expr(), ast.NewExprVisitor(func(e ast.Expr) {
		if bad != nil {
			return
		}
		var member string
		switch e.Kind() {
		case ast.SelectKind:
			if s := e.AsSelect(); isObject(s.Operand()) {
				member = s.FieldName()
			}
		case ast.CallKind:
			c := e.AsCall()
			if c.FunctionName() != operators.Index || len(c.Args()) != 2 || !isObject(c.Args()[0]) || c.Args()[1].Kind() != ast.LiteralKind {
				return
			}
			if k, ok := c.Args()[1].AsLiteral().(types.String); ok {
				member = string(k)
			}
		}
		if member == "" || slices.Contains(objectFields, member) {
			return
		}
		msg := fmt.Sprintf("does not compile: %q is no member of a cookie, a TLS extension or a parsed URL", trunc.String(member, 64))
		if near := closest(member, 3, objectFields); len(near) > 0 {
			msg += "; did you mean " + strings.Join(near, ", ") + "?"
		}
		bad = errors.New(msg)
	}))
	return bad
}

// checkProviders reports the variables and functions of checked that need
// a provider prov lacks, naming the option that supplies it.
func checkProviders(checked *cel.Ast, prov *providers) error {
	var missing []string
	seen := map[string]bool{}
	add := func(name string, p provider) {
		if prov.used != nil {
			*prov.used |= 1 << p
		}
		if !prov.has(p) && !seen[name] {
			seen[name] = true
			missing = append(missing, fmt.Sprintf("%s needs ratelimit.%s", name, p.option()))
		}
	}
	// addVar records what variable v reads: its provider, and the client
	// address (which WithClientIP provides, and the remote address stands
	// in for, so it is never missing).
	addVar := func(v *varSpec) {
		if v.need != provNone {
			add(v.name, v.need)
		}
		if prov.used != nil && (v.name == "time.now" || strings.HasPrefix(v.name, "req.ts.")) {
			*prov.used |= 1 << provClock
		}
		if v.client {
			add(v.name, provClientIP)
		}
	}
	native := checked.NativeRep()
	refs := native.ReferenceMap()
	ast.PostOrderVisit(native.Expr(), ast.NewExprVisitor(func(e ast.Expr) {
		if r, ok := refs[e.ID()]; ok && r.Value == nil {
			if v, ok := varIndex[r.Name]; ok {
				addVar(v)
			}
		}
		if e.Kind() != ast.CallKind {
			return
		}
		switch c := e.AsCall(); c.FunctionName() {
		case "__secrets_get":
			add("secrets.get", provSecrets)
		case "__present":
			// has(<variable>) reads the variable too.
			if a := c.Args(); len(a) == 2 && a[1].Kind() == ast.LiteralKind {
				if name, ok := a[1].AsLiteral().(types.String); ok {
					if v, ok := varIndex[string(name)]; ok {
						addVar(v)
					}
				}
			}
		}
	}))
	if len(missing) == 0 {
		return nil
	}
	return fmt.Errorf("uses outside data without a provider: %s", strings.Join(missing, "; "))
}

// sizeEstimator bounds the size of every input an expression can see, so
// that the cost of most expressions has a finite worst case.
type sizeEstimator struct{}

func (sizeEstimator) EstimateSize(n checker.AstNode) *checker.SizeEstimate {
	if path := n.Path(); len(path) > 0 {
		if _, ok := varIndex[strings.Join(path, ".")]; ok {
			return &checker.SizeEstimate{Min: 0, Max: maxInputSize}
		}
	}
	return nil
}

func (sizeEstimator) EstimateCallCost(function, overload string, _ *checker.AstNode, _ []checker.AstNode) *checker.CallEstimate {
	if slices.Contains(linearOverloads, overload) {
		return &checker.CallEstimate{
			CostEstimate: checker.CostEstimate{Min: 1, Max: 1 + maxInputSize/10},
			ResultSize:   &checker.SizeEstimate{Min: 0, Max: 2 * maxInputSize},
		}
	}
	if strings.HasPrefix(function, "__") {
		return &checker.CallEstimate{
			CostEstimate: checker.FixedCostEstimate(1),
			ResultSize:   &checker.SizeEstimate{Min: 0, Max: maxInputSize},
		}
	}
	return nil
}

// costOptions charge, at run time, the functions of linearOverloads by the
// length of their argument (one unit per ten bytes, as cel-go charges
// string scans), json.encode by the length of its output (cel-go charges
// it the maximum, which would make it fail under any limit), and every
// other call cel-go does not charge by size by the size of its result
// (see resultCost), so that no function builds more than the limit pays
// for.
var costOptions = func() []cel.ProgramOption {
	opts := []interpreter.CostTrackerOption{
		interpreter.OverloadCostTracker("json_encode_dyn", func(_ []ref.Val, result ref.Val) *uint64 { return sizeCost(result) }),
		// matches: a unit per ten of its steps (see boundedMatch), and
		// four per instruction of the pattern, whether this call compiled
		// it or found it cached (compiling allocates about 120 bytes an
		// instruction; charging only the calls that compiled let 20,000
		// distinct small patterns, each cached as it was compiled, allocate
		// 1 GB): the cost limit stops an evaluation's compiles at about
		// 40 MB.
		interpreter.OverloadCostTracker("rl_matches_string", func(args []ref.Val, _ ref.Val) *uint64 {
			n := uint64(1)
			if c := patternFor(str(args[1]), 0, false); c.err == nil {
				if steps := (len(str(args[0])) + 1) * c.steps; steps <= maxMatchSteps {
					n += uint64(steps)/10 + 4*uint64(c.steps) // (a call over the limit did not run)
				}
			}
			return &n
		}),
	}
	opts = append(opts, guardTrackers()...)
	for id, cost := range buildCosts {
		opts = append(opts, interpreter.OverloadCostTracker(id, func(args []ref.Val, _ ref.Val) *uint64 {
			c := cost(str(args[0]))
			if c > maxEvalCost {
				c = 1 + uint64(len(str(args[0])))/10 // refused, having read the string
			}
			return &c
		}))
	}
	for _, id := range linearOverloads {
		opts = append(opts, interpreter.OverloadCostTracker(id, func(args []ref.Val, _ ref.Val) *uint64 { return sizeCost(args[0]) }))
	}
	return []cel.ProgramOption{cel.CostTrackerOptions(opts...), cel.CostTracking(resultCost{})}
}()

// resultCost charges a call by the size of its result, one unit per ten
// bytes of text and one per element of a list or map, unless cel-go
// charges the call by the size of its arguments (string comparisons,
// concatenation, matches, contains...), which it then does. A function
// with nothing else to charge it, an encoder or '%s'.format, thus pays for
// what it builds.
type resultCost struct{}

// sizedByCEL are the overloads cel-go charges by their arguments' size.
var sizedByCEL = map[string]bool{
	overloads.StartsWithString: true, overloads.EndsWithString: true,
	overloads.StringToBytes: true, overloads.BytesToString: true, overloads.ExtQuoteString: true,
	overloads.InList:     true,
	overloads.LessString: true, overloads.GreaterString: true, overloads.LessEqualsString: true, overloads.GreaterEqualsString: true,
	overloads.LessBytes: true, overloads.GreaterBytes: true, overloads.LessEqualsBytes: true, overloads.GreaterEqualsBytes: true,
	overloads.Equals: true, overloads.NotEquals: true,
	overloads.AddString: true, overloads.AddBytes: true, overloads.ContainsString: true,
	// (cel-go's matches is not reachable: matches is a macro for
	// __matches, charged by costOptions.)
}

func (resultCost) CallCost(_, overload string, args []ref.Val, result ref.Val) *uint64 {
	switch overload {
	case overloads.Equals, overloads.NotEquals, overloads.InList:
		// Comparing lists or maps is charged what it reads (see
		// compareGuard); a comparison refused for its cost read up to the
		// limit to find out, and is charged half of it.
		if len(args) == 2 {
			if c := compareOpCost(overload, args[0], args[1]); c > 0 {
				if c > maxEvalCost {
					c = maxEvalCost / 2
				}
				return &c
			}
		}
	}
	if sizedByCEL[overload] {
		return textOpCost(overload, args)
	}
	if overload == overloads.AddList && len(args) == 2 {
		// Concatenation is charged by the shorter list, not the result: a
		// map or filter adds each element to its result so far (cel-go
		// appends in place), which charged by the result cost n²/2 over n
		// elements (lists.range(1500).map(i, i) failed the limit). The
		// result's size stays paid for: a list doubled by x + x is
		// charged its size.
		a, b := sizeCost(args[0]), sizeCost(args[1])
		if *a < *b {
			return a
		}
		return b
	}
	return sizeCost(result)
}

// textOpCost is cel-go's charge for the string and bytes operations of
// sizedByCEL, computed from the operands' lengths in bytes: cel-go counts
// a string's runes to charge it, reading the whole string to charge one
// unit for h == 'a' (ten thousand such comparisons of a 1 MiB header read
// 10 GB, 9.7 s, in a test). nil, for cel-go's own charge, when an operand
// is neither (a list's size is known without reading it).
func textOpCost(overload string, args []ref.Val) *uint64 {
	n := make([]uint64, len(args))
	for i, a := range args {
		switch a := a.(type) {
		case types.String:
			n[i] = uint64(len(a))
		case types.Bytes:
			n[i] = uint64(len(a))
		default:
			if overload == overloads.Equals || overload == overloads.NotEquals {
				// As cel-go: min(size, 1) of a scalar, at least one unit.
				c := uint64(1)
				return &c
			}
			return nil
		}
	}
	tenths := func(x uint64) uint64 { return (x + 9) / 10 }
	var c uint64
	switch overload {
	case overloads.StartsWithString, overloads.EndsWithString:
		c = tenths(n[1])
	case overloads.StringToBytes, overloads.BytesToString, overloads.ExtQuoteString:
		c = tenths(n[0])
	case overloads.AddString, overloads.AddBytes:
		c = tenths(n[0] + n[1])
	case overloads.ContainsString:
		c = tenths(n[0]) * tenths(n[1])
	default: // comparisons
		if len(n) != 2 {
			return nil
		}
		c = tenths(min(n[0], n[1]))
	}
	return &c
}

// sizeCost is the cost of reading or building v: one unit, plus one per
// ten bytes of text (as cel-go charges string scans) or one per element
// of a list or map.
func sizeCost(v ref.Val) *uint64 {
	n := uint64(1)
	switch v := v.(type) {
	case types.String:
		n += uint64(len(v)) / 10
	case types.Bytes:
		n += uint64(len(v)) / 10
	case traits.Sizer:
		if s, ok := v.Size().(types.Int); ok && s > 0 {
			n += uint64(s)
		}
	}
	return &n
}

// budgetError is the error of an evaluation one of the package's own
// bounds stopped: a function refusing to build or match more than its
// bound, a bucket key longer than maxKeyBytes. With cel-go's cost limit
// (see overBudgetErr), it is what a request can provoke in an expression
// that handles every failure its inputs can cause, so a bucket key that
// fails with it still limits (see Limit).
type budgetError struct{ msg string }

func (e *budgetError) Error() string { return e.msg }

// overBudget returns a budgetError as a CEL error value.
func overBudget(format string, args ...any) ref.Val {
	return types.WrapErr(&budgetError{fmt.Sprintf(format, args...)})
}

// overBudgetErr reports whether err, from an evaluation, is a
// budgetError or cel-go's cost limit.
func overBudgetErr(err error) bool {
	var b *budgetError
	var c interpreter.EvalCancelledError
	return errors.As(err, &b) || errors.As(err, &c) && c.Cause == interpreter.CostLimitExceeded
}

// literalHeader reports whether checked is getReqHeader('<literal>') and
// returns the canonical header name.
func literalHeader(checked *cel.Ast) (string, bool) {
	e := checked.NativeRep().Expr()
	if e.Kind() != ast.CallKind {
		return "", false
	}
	c := e.AsCall()
	if c.FunctionName() != "__getReqHeader" || len(c.Args()) != 2 || c.Args()[1].Kind() != ast.LiteralKind {
		return "", false
	}
	s, ok := c.Args()[1].AsLiteral().(types.String)
	return string(s), ok && !strings.EqualFold(string(s), "host")
}

func oneLine(s string) string {
	s = strings.TrimPrefix(s, "ERROR: <input>:")
	return strings.Join(strings.Fields(s), " ")
}

// requestHandle is the CEL value of the hidden request variable.
type requestHandle struct{ a *activation }

func (h requestHandle) ConvertToNative(reflect.Type) (any, error) {
	return nil, fmt.Errorf("ratelimit: the request has no native form")
}
func (h requestHandle) ConvertToType(ref.Type) ref.Val { return types.NewErr("no conversion") }
func (h requestHandle) Equal(o ref.Val) ref.Val        { return types.Bool(o == ref.Val(h)) }
func (h requestHandle) Type() ref.Type                 { return requestType }
func (h requestHandle) Value() any                     { return h.a }

// keyString turns a bucket-key value into its part of the key, following
// the contract (§7): a list joins its elements' forms with ","; null is "";
// bytes are their raw contents (valid UTF-8 or not: a key that failed on
// invalid UTF-8 let a client escape the limit with bad bytes, since a key
// that fails to evaluate does not limit); a map, which only a dyn
// expression can give (json.decode), is "{k:v,...}" with its entries
// sorted, so that its form is stable and no map fails; anything else uses
// its CEL string form. It fails for values with no string form, and for
// forms longer than maxKeyBytes: a list of a thousand references to one
// long string costs an expression little, and its joined form would be a
// thousand times as long.
func keyString(v ref.Val) (string, error) {
	s, err := keyForm(v, maxKeyBytes)
	if err == nil && len(s) > maxKeyBytes {
		err = keyTooLong()
	}
	return s, err
}

func keyTooLong() error {
	return &budgetError{fmt.Sprintf("the value is longer than %d bytes", maxKeyBytes)}
}

// keyForm is keyString, joining at most about limit bytes of a list or map.
func keyForm(v ref.Val, limit int) (string, error) {
	switch v := v.(type) {
	case types.String:
		return string(v), nil
	case types.Bytes:
		return string(v), nil
	case types.Null:
		return "", nil
	case traits.Lister:
		var b strings.Builder
		it := v.Iterator()
		for i := 0; it.HasNext() == types.True; i++ {
			s, err := keyForm(it.Next(), limit-b.Len())
			if err != nil {
				return "", err
			}
			if i > 0 {
				b.WriteByte(',')
			}
			if b.Len()+len(s) > limit {
				return "", keyTooLong()
			}
			b.WriteString(s)
		}
		return b.String(), nil
	case traits.Mapper:
		var entries []string
		n := 2
		for it := v.Iterator(); it.HasNext() == types.True; {
			k := it.Next()
			ks, err := keyForm(k, limit-n)
			if err != nil {
				return "", err
			}
			vs, err := keyForm(v.Get(k), limit-n-len(ks))
			if err != nil {
				return "", err
			}
			if n += len(ks) + len(vs) + 2; n > limit {
				return "", keyTooLong()
			}
			entries = append(entries, ks+":"+vs)
		}
		slices.Sort(entries)
		return "{" + strings.Join(entries, ",") + "}", nil
	}
	s := v.ConvertToType(types.StringType)
	if str, ok := s.(types.String); ok {
		return string(str), nil
	}
	return "", fmt.Errorf("a value of type %s has no string form", v.Type().TypeName())
}
