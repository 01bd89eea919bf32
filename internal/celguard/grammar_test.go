package celguard

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/google/cel-go/cel"
	celast "github.com/google/cel-go/common/ast"
)

// TestCheckMinus checks that a minus sign is accepted only as a number's
// sign, wherever the parser would fold it away (a review saw --"abc" ==
// "abc" accepted), and never read inside a string, bytes or a comment.
func TestCheckMinus(t *testing.T) {
	accepted := []string{
		`-1 < 0 && -2.5 < -.5 && - 3 < 0 && -0x10 < 1e-3 && 1.5E-7 > 0.0`,
		`x in [-1, -2u, - 3.5]`,
		`"--" == "a--b" && '-' != "" && b"--" != b'' && """-
--""" != '''--'''`,
		`r'\' == '--' && R"\" != "-" && br'\' != b'-' && rb"\" != b"-"`,
		`"\"--" == '\'--'`,
		"x == 1 // --x\n && y == 2",
		`!!x && !!!y`,
		"obj.`a--b` == 1 && obj.`-` == -1",
	}
	for _, src := range accepted {
		if err := CheckMinus(src); err != nil {
			t.Errorf("CheckMinus(%s) = %v, want nil", src, err)
		}
	}
	refused := []string{
		`--"abc" == "abc"`,
		`- -x == x`,
		`----t < now`,
		`x == --1`,
		`x == - - 1`,
		`-x == 1`,
		`-(-x) == 1`,
		"x == - // y\n -1",
		`"--" == "" && --x`,
		`r'\' == '' && --x`,
		`x - y == 0`,
		`-"a" == ""`,
		"obj.`a-b` == --1",
	}
	for _, src := range refused {
		if err := CheckMinus(src); err == nil || !strings.Contains(err.Error(), "arithmetic (-) is not supported") {
			t.Errorf("CheckMinus(%s) = %v, want arithmetic (-) refused", src, err)
		}
	}
}

// TestGrammarCallForms checks that a supported function called wrongly
// is refused with how it is called, not as an unsupported function (a
// review saw "the function add is not supported" for add("1d", "2d")).
func TestGrammarCallForms(t *testing.T) {
	env, err := cel.NewEnv(cel.Variable("obj", cel.MapType(cel.StringType, cel.DynType)), cel.ClearMacros())
	if err != nil {
		t.Fatal(err)
	}
	g := &Grammar{Root: "obj", Member: func([]string) error { return nil }, Clock: true}
	for _, tt := range []struct{ expr, err string }{
		{`obj.t.add("1d", "2d")`, `add takes 1 argument, not 2: t.add("<duration>")`},
		{`obj.t.subtract()`, `subtract takes 1 argument, not 0: t.subtract("<duration>")`},
		{`add(obj.t, "1d")`, `add is a method, called as t.add("<duration>")`},
		{`size(obj.s, 1)`, "size takes one value: size(x) or x.size(), not 2 arguments"},
		{`obj.s.size(1)`, "size takes one value: size(x) or x.size(), not 2 arguments"},
		{`size()`, "size takes one value: size(x) or x.size(), not 0 arguments"},
		{`"2020-01-01T00:00:00Z".timestamp()`, `timestamp is called as timestamp("<RFC 3339>"), not as a method`},
		{`timestamp("2020-01-01T00:00:00Z", "UTC")`, `timestamp takes 1 argument, not 2`},
		{`timestamp()`, `timestamp takes 1 argument, not 0`},
		{`contains(obj.s, "a")`, `contains is a method, called as s.contains("…")`},
		{`obj.s.startsWith("a", "b")`, `startsWith takes 1 argument, not 2`},
		{`obj.s.endsWith()`, `endsWith takes 1 argument, not 0`},
	} {
		ast, iss := env.Parse(tt.expr)
		if iss.Err() != nil {
			t.Fatalf("%s: %v", tt.expr, iss.Err())
		}
		if err := g.Check(ast.NativeRep().Expr()); err == nil || !strings.Contains(err.Error(), tt.err) {
			t.Errorf("Check(%s) = %v, want %q", tt.expr, err, tt.err)
		}
	}
	// Without Clock, add and subtract are no functions at all.
	g.Clock = false
	if ast, _ := env.Parse(`obj.t.add("1d")`); ast != nil {
		if err := g.Check(ast.NativeRep().Expr()); err == nil || !strings.Contains(err.Error(), "the function add is not supported") {
			t.Errorf("add without Clock: %v", err)
		}
	}
}

// TestCheckTypedNull checks that a member that is never null may not be
// compared with null, nor stand on the left of in with null in the list,
// and that one Nullable allows may.
func TestCheckTypedNull(t *testing.T) {
	env, err := cel.NewEnv(
		cel.Variable("obj.s", cel.NullableType(cel.StringType)),
		cel.Variable("obj.n", cel.NullableType(cel.StringType)),
		cel.Variable("obj.t", cel.TimestampType),
		cel.Variable("obj.i", cel.NullableType(cel.IntType)),
		cel.Variable("obj.b", cel.NullableType(cel.BoolType)),
		cel.Variable("obj.l", cel.ListType(cel.StringType)),
	)
	if err != nil {
		t.Fatal(err)
	}
	g := &Grammar{Root: "obj", Nullable: func(path []string) bool { return path[0] == "n" }}
	for _, tt := range []struct{ expr, err string }{
		{`obj.n == null || null != obj.n || obj.n in ["a", null]`, ""},
		{`obj.s == ""`, ""},
		{`obj.s == null`, `obj.s is a string, never null; compare it with == ""`},
		{`null != obj.s`, `obj.s is a string, never null; compare it with == ""`},
		{`obj.t == null`, "obj.t is a timestamp, never null"},
		{`obj.i != null`, "obj.i is a number, never null"},
		{`obj.b == null`, "obj.b is a bool, never null"},
		{`obj.s in ["a", null]`, "in: obj.s is a string, never null; take null out of the list on its right"},
		{`obj.n == "" && (obj.s == "" || obj.s == null)`, "obj.s is a string, never null"},
	} {
		ast, iss := env.Compile(tt.expr)
		if iss.Err() != nil {
			t.Fatalf("%s: %v", tt.expr, iss.Err())
		}
		err := g.CheckTyped(ast.NativeRep())
		if (err == nil) != (tt.err == "") || err != nil && !strings.Contains(err.Error(), tt.err) {
			t.Errorf("CheckTyped(%s) = %v, want %q", tt.expr, err, tt.err)
		}
	}
}

// TestComparisons: each comparison is visited both ways for == and !=,
// and the left operand of in with each element of a list literal; nothing
// else is.
func TestComparisons(t *testing.T) {
	env, err := cel.NewEnv(cel.Variable("a", cel.StringType), cel.Variable("b", cel.StringType))
	if err != nil {
		t.Fatal(err)
	}
	parsed, iss := env.Parse(`a == "x" && "y" != b && a in ["p", b] && a < "z" && b in c`)
	if iss.Err() != nil {
		t.Fatal(iss.Err())
	}
	name := func(e celast.Expr) string {
		switch e.Kind() {
		case celast.IdentKind:
			return e.AsIdent()
		case celast.LiteralKind:
			return fmt.Sprint(e.AsLiteral().Value())
		}
		return "?"
	}
	var got []string
	Comparisons(parsed.NativeRep().Expr(), func(side, other celast.Expr) { got = append(got, name(side)+"~"+name(other)) })
	slices.Sort(got)
	want := []string{"a~b", "a~p", "a~x", "b~y", "x~a", "y~b"}
	if !slices.Equal(got, want) {
		t.Errorf("visited %q, want %q", got, want)
	}
}
