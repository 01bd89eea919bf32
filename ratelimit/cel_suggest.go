package ratelimit

import (
	"fmt"
	"regexp"
	"slices"
	"strings"

	"github.com/google/cel-go/cel"
	"github.com/google/cel-go/common/ast"
	"github.com/google/cel-go/common/types"
)

var undeclared = regexp.MustCompile(`undeclared reference to '([^']*)'`)

// explain rewrites cel-go's "undeclared reference to 'req'", which names
// only the first part of an unknown name such as req.cookie, and its
// "type 'string' does not support field selection" for req.url.schem,
// into a message that names the whole of it and lists the closest valid
// names.
func explain(msg string, parsed *cel.Ast) string {
	expr := parsed.NativeRep().Expr()
	name := ""
	if m := undeclared.FindStringSubmatch(msg); m != nil {
		name = longestUse(expr, m[1])
	} else if strings.Contains(msg, "does not support field selection") {
		name = scalarSelection(expr)
	}
	switch {
	case name == "":
		return internalNames.ReplaceAllStringFunc(msg, publicName)
	case slices.Contains(functionNames, name):
		return fmt.Sprintf("%s is called with the wrong number of arguments", name)
	}
	return fmt.Sprintf("unknown name %s%s", name, hint(name))
}

// internalNames matches the hidden request argument and function names
// the request macros expand to, in cel-go's messages.
var internalNames = regexp.MustCompile(`'__[A-Za-z_]+'|\(acctapi\.ratelimit\.Request(, )?`)

// publicName turns '__getReqHeader' into 'getReqHeader', '__rand_int'
// into 'rand.int', and drops the hidden request argument.
func publicName(s string) string {
	if strings.HasPrefix(s, "(") {
		return "("
	}
	name := strings.Trim(s, "'")[2:]
	for _, ns := range []string{"rand_", "secrets_"} {
		if rest, ok := strings.CutPrefix(name, ns); ok {
			name = strings.TrimSuffix(ns, "_") + "." + rest
		}
	}
	return "'" + name + "'"
}

// scalarSelection returns the longest dotted name in expr that selects a
// field below a declared variable that is not a map (req.url.schem below
// req.url), or "".
func scalarSelection(expr ast.Expr) string {
	best := ""
	ast.PostOrderVisit(expr, ast.NewExprVisitor(func(e ast.Expr) {
		s, ok := dottedName(e)
		if !ok || e.Kind() != ast.SelectKind || varIndex[s] != nil || len(s) <= len(best) {
			return
		}
		for p := s; ; {
			i := strings.LastIndexByte(p, '.')
			if i < 0 {
				return
			}
			p = p[:i]
			if v := varIndex[p]; v != nil {
				if v.typ.Kind() != types.MapKind {
					best = s
				}
				return
			}
		}
	}))
	return best
}

// longestUse returns the longest qualified name rooted at ident that expr
// uses: a chain of selections (req.cookie.x) or a namespaced function
// (hash.md55).
func longestUse(expr ast.Expr, ident string) string {
	best := ident
	consider := func(s string) {
		if (s == ident || strings.HasPrefix(s, ident+".")) && len(s) > len(best) {
			best = s
		}
	}
	ast.PostOrderVisit(expr, ast.NewExprVisitor(func(e ast.Expr) {
		switch e.Kind() {
		case ast.SelectKind:
			// has(req.cookie) is a test-only selection of cookie on req.
			if s := e.AsSelect(); s.IsTestOnly() {
				if p, ok := dottedName(s.Operand()); ok {
					consider(p + "." + s.FieldName())
				}
			} else if s, ok := dottedName(e); ok {
				consider(s)
			}
		case ast.CallKind:
			c := e.AsCall()
			if !c.IsMemberFunction() {
				consider(c.FunctionName())
			} else if s, ok := dottedName(c.Target()); ok {
				consider(s + "." + c.FunctionName())
			}
		}
	}))
	return best
}

// hint explains why name is unknown, or lists the closest valid names.
func hint(name string) string {
	root, _, _ := strings.Cut(name, ".")
	switch {
	case root == "res":
		return "; res.* belongs to on_http_response and cannot be used in on_http_request"
	case root == "vars":
		return "; vars.* are set by set-vars, which this package does not run"
	case strings.HasPrefix(name, "actions.ngrok.") && !strings.HasPrefix(name, "actions.ngrok.rate_limit."):
		return "; only the rate-limit action's results (actions.ngrok.rate_limit.*) exist here"
	}
	if s := closest(name, 3, knownNames()); len(s) > 0 {
		return "; did you mean " + strings.Join(s, ", ") + "?"
	}
	last := name[strings.LastIndexByte(name, '.')+1:]
	if s, ok := synonyms[last]; ok {
		return "; did you mean " + s + "?"
	}
	return ""
}

// synonyms are the CEL names of functions other languages spell
// differently.
var synonyms = map[string]string{
	"includes": "contains", "has_prefix": "startsWith", "hasPrefix": "startsWith", "has_suffix": "endsWith",
	"hasSuffix": "endsWith", "length": "size", "len": "size", "toLowerCase": "lower", "toUpperCase": "upper",
	"toLower": "lower", "toUpper": "upper", "substr": "substring", "strip": "trim", "regex": "matches",
}

// closest returns up to n of names nearest to name by edit distance,
// nearest first, among those within a third of its length, those that
// extend it (req.url for req.url.sheme's parent; conn.tls.ja4_fingerprint
// for conn.tls.ja4), and those in the same namespace that end with the
// same part (req.url.path for req.path).
func closest(name string, n int, names []string) []string {
	type cand struct {
		name string
		d    int
	}
	var cs []cand
	limit := max(2, len(name)/3)
	root, _, _ := strings.Cut(name, ".")
	last := name[strings.LastIndexByte(name, '.')+1:]
	for _, c := range names {
		d := editDistance(name, c)
		sameEnd := strings.Contains(name, ".") && strings.HasPrefix(c, root+".") && strings.HasSuffix(c, "."+last)
		if d <= limit || strings.HasPrefix(c, name+".") || strings.HasPrefix(c, name+"_") || sameEnd {
			cs = append(cs, cand{c, d})
		}
	}
	slices.SortStableFunc(cs, func(a, b cand) int { return a.d - b.d })
	var out []string
	for _, c := range cs {
		if !slices.Contains(out, c.name) {
			out = append(out, c.name)
		}
		if len(out) == n {
			break
		}
	}
	return out
}

// knownNames are the variable and function names, for closest.
func knownNames() []string {
	names := make([]string, 0, len(catalogue)+len(functionNames))
	for i := range catalogue {
		names = append(names, catalogue[i].name)
	}
	return append(names, functionNames...)
}

// editDistance is the Levenshtein distance between a and b, in bytes.
func editDistance(a, b string) int {
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}
