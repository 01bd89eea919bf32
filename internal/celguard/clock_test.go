package celguard

import (
	"strings"
	"testing"
	"time"

	"github.com/google/cel-go/cel"
	"github.com/google/cel-go/common/operators"
	"github.com/google/cel-go/common/types"
	"github.com/google/cel-go/common/types/ref"
)

func TestParseDuration(t *testing.T) {
	tests := []struct {
		in   string
		want int64
		err  string
	}{
		{"7d", 7 * 86400, ""},
		{"1d12h30m5s", 86400 + 12*3600 + 30*60 + 5, ""},
		{"999999d", 999999 * 86400, ""},
		// Any number of digits whose value is in range (a review saw
		// "3652058d", within 10,000 years, refused for its 7 digits).
		{"3652058d", 3652058 * 86400, ""},
		{"1234567s", 1234567, ""},
		{"315576000000s", maxDurationSeconds, ""},
		{"0000000000000000000000000007d", 7 * 86400, ""},
		{"3652058d1h", 3652058*86400 + 3600, ""},
		{"315576000001s", 0, "out of range"},
		{"3652500d", maxDurationSeconds, ""},
		{"3652501d", 0, "out of range"},
		{"3652500d1s", 0, "out of range"},
		{"3652058d999999h", 0, "out of range"},
		{"99999999999999999999999999999999d", 0, "out of range"},
		{"9223372036854775807s", 0, "out of range"},
		{"1d" + strings.Repeat("9", 4000) + "s", 0, "out of range"},
		{"", 0, "empty duration"},
		{"1w", 0, "units are d, h, m and s"},
		{"1.5h", 0, "fractions are not accepted"},
		{"1h0,5m", 0, "fractions are not accepted"},
		{"d", 0, "want terms of a whole number and a unit"},
		{"7", 0, "want terms of a whole number and a unit"},
		{"-7d", 0, "want terms of a whole number and a unit"},
		{strings.Repeat("999999d", 4), 0, "out of range"},
	}
	for _, tt := range tests {
		got, err := ParseDuration(tt.in)
		if got != tt.want || (err == nil) != (tt.err == "") || (err != nil && !strings.Contains(err.Error(), tt.err)) {
			t.Errorf("ParseDuration(%q) = %d, %v; want %d, %q", tt.in, got, err, tt.want, tt.err)
		}
	}
}

// TestClockEnv evaluates time.now with add and subtract, and checks that
// a result outside years 0001 to 9999 is an error, from a constant at
// compile time (CheckConstTimes) and from time.now when evaluated.
func TestClockEnv(t *testing.T) {
	env, err := cel.NewEnv(ClockEnv())
	if err != nil {
		t.Fatal(err)
	}
	now := time.Date(2030, 1, 10, 0, 0, 0, 0, time.UTC)
	tests := []struct {
		expr, err string
		want      bool
	}{
		{`time.now.subtract("7d") == timestamp("2030-01-03T00:00:00Z")`, "", true},
		{`time.now.add("1d12h") > timestamp("2030-01-11T11:59:59Z")`, "", true},
		{`time.now.subtract("999999d") < time.now`, "timestamp out of range", false},
		{`timestamp("9999-12-31T00:00:00Z").add("1d") > time.now`, "timestamp out of range", false},
		// A time out of range found only when evaluated is the
		// evaluation's error, even where && or || would settle the
		// result without it (a review saw err || true answer true).
		{`t.add("1d") > time.now || true`, "timestamp out of range", false},
		{`true || t.add("1d") > time.now`, "", true}, // never evaluated
		{`t.add("1d") > time.now && false`, "timestamp out of range", false},
		{`[t.add("1d")] == [] || true`, "timestamp out of range", false},
	}
	late := types.Timestamp{Time: time.Date(9999, 12, 31, 12, 0, 0, 0, time.UTC)}
	env, err = env.Extend(cel.Variable("t", cel.TimestampType))
	if err != nil {
		t.Fatal(err)
	}
	for _, tt := range tests {
		ast, iss := env.Compile(tt.expr)
		if iss.Err() != nil {
			t.Fatalf("%s: %v", tt.expr, iss.Err())
		}
		cerr := CheckConstTimes(ast.NativeRep().Expr())
		var out any
		if cerr == nil {
			prg, err := env.Program(ast)
			if err != nil {
				t.Fatal(err)
			}
			var v any
			v, _, cerr = prg.Eval(map[string]any{Now: types.Timestamp{Time: now}, "t": late})
			if cerr == nil {
				out = v.(types.Bool) == types.True
			}
		}
		if (cerr == nil) != (tt.err == "") || (cerr != nil && !strings.Contains(cerr.Error(), tt.err)) || (cerr == nil && out != tt.want) {
			t.Errorf("%s = %v, %v; want %v, %q", tt.expr, out, cerr, tt.want, tt.err)
		}
	}
}

// TestCheckNowTimes checks that a shift of time.now out of range is found
// wherever it stands, whether or not an evaluation would reach it, that
// one in range is not, and that ShiftsNow tells which expressions need the
// check.
func TestCheckNowTimes(t *testing.T) {
	env, err := cel.NewEnv(ClockEnv())
	if err != nil {
		t.Fatal(err)
	}
	now := time.Date(2030, 1, 10, 0, 0, 0, 0, time.UTC)
	long := `time.now` + strings.Repeat(`.add("1d")`, 100)
	for _, tt := range []struct {
		expr   string
		shifts bool
		err    string
	}{
		{`time.now > timestamp("2000-01-01T00:00:00Z")`, false, ""},
		{`time.now.subtract("7d") < time.now`, true, ""},
		{`false && time.now.add("999999d").add("999999d").add("999999d") > time.now`, true, "timestamp out of range"},
		{`time.now.subtract("999999d") < time.now || true`, true, "timestamp out of range"},
		{long + ` > time.now`, true, ""},
	} {
		ast, iss := env.Compile(tt.expr)
		if iss.Err() != nil {
			t.Fatalf("%.60s: %v", tt.expr, iss.Err())
		}
		e := ast.NativeRep().Expr()
		if got := ShiftsNow(e); got != tt.shifts {
			t.Errorf("ShiftsNow(%.60s) = %v, want %v", tt.expr, got, tt.shifts)
		}
		err := CheckNowTimes(e, now)
		if (err == nil) != (tt.err == "") || err != nil && !strings.Contains(err.Error(), tt.err) {
			t.Errorf("CheckNowTimes(%.60s) = %v, want %q", tt.expr, err, tt.err)
		}
		if err := CheckConstTimes(e); err != nil {
			t.Errorf("CheckConstTimes(%.60s) = %v; time.now is not a constant", tt.expr, err)
		}
	}
}

// TestCheckTypedInLists checks which constants in a list on the right of
// in are refused, and that each refusal names the constant as written (a
// review saw "the null_type 0" for null); and that a comparison with null
// of what is not a member is refused by its type, as in is.
func TestCheckTypedInLists(t *testing.T) {
	env, err := cel.NewEnv(ClockEnv(), cel.Variable("t", cel.TimestampType), cel.Variable("s", cel.StringType))
	if err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct{ expr, err string }{
		{`t in [null]`, "the timestamp on its left can never equal null in the list"},
		{`t in [timestamp("2030-01-01T00:00:00Z"), 1]`, "can never equal the int 1"},
		{`s in ["a", null]`, ""}, // s is no member of a root, whose nullability a Grammar knows
		{`s in ["a", 1]`, "can never equal the int 1"},
		// The same of == and != (a review saw t.add("0s") == null
		// answer false for every item where t == null is refused).
		{`t.add("0s") == null`, "a timestamp is never null: comparing one with null is always false"},
		{`null != timestamp("2030-01-01T00:00:00Z")`, "a timestamp is never null: comparing one with null is always true"},
	} {
		ast, iss := env.Compile(tt.expr)
		if iss.Err() != nil {
			t.Fatalf("%s: %v", tt.expr, iss.Err())
		}
		err := (&Grammar{Root: "obj"}).CheckTyped(ast.NativeRep())
		if (err == nil) != (tt.err == "") || err != nil && !strings.Contains(err.Error(), tt.err) {
			t.Errorf("CheckTyped(%s) = %v, want %q", tt.expr, err, tt.err)
		}
	}
}

// TestGrammarInList checks what a list on the right of in may hold:
// literals and timestamp("<literal>") (a review found the second refused,
// though timestamp() is a supported form), and nothing else; and that
// has() is refused by name.
func TestGrammarInList(t *testing.T) {
	env, err := cel.NewEnv(cel.Variable("obj", cel.MapType(cel.StringType, cel.DynType)), cel.ClearMacros())
	if err != nil {
		t.Fatal(err)
	}
	g := &Grammar{Root: "obj", Member: func([]string) error { return nil }}
	for _, tt := range []struct{ expr, err string }{
		{`obj.t in ["a", 1, null]`, ""},
		{`obj.t in [timestamp("2030-01-01T00:00:00Z"), timestamp("2031-01-01T00:00:00+01:00")]`, ""},
		{`obj.t in [timestamp("2030-01-01")]`, "RFC 3339"},
		{`obj.t in [timestamp(obj.s)]`, "literal"},
		{`obj.t in [obj.s]`, "in needs a list literal of constants"},
		{`obj.t in [[1]]`, "in needs a list literal of constants"},
		{`has(obj.t)`, "the function has is not supported"},
	} {
		ast, iss := env.Parse(tt.expr)
		if iss.Err() != nil {
			t.Fatalf("%s: %v", tt.expr, iss.Err())
		}
		err := g.Check(ast.NativeRep().Expr())
		if (err == nil) != (tt.err == "") || err != nil && !strings.Contains(err.Error(), tt.err) {
			t.Errorf("Check(%s) = %v, want %q", tt.expr, err, tt.err)
		}
	}
}

// TestCallCosts pins the cost model's numbers, which the filter and
// selector bounds rest on: the tests that compare the tracker with the
// estimator cannot see an under-charge both make (mutations that ignored
// a substring's size, charged in a flat rate for long values, or made
// parsing cheap survived them).
func TestCallCosts(t *testing.T) {
	s := func(n int) ref.Val { return types.String(strings.Repeat("a", n)) }
	list := func(vs ...ref.Val) ref.Val { return types.NewRefValList(types.DefaultTypeAdapter, vs) }
	for _, tt := range []struct {
		name string
		fn   string
		args []ref.Val
		want uint64
	}{
		{"== on the shorter", operators.Equals, []ref.Val{s(100), s(50)}, 1 + 5},
		{"< on the shorter", operators.Less, []ref.Val{s(7), s(100)}, 1 + 1},
		{"startsWith on the prefix", "startsWith", []ref.Val{s(100), s(25)}, 1 + 3},
		{"endsWith on the suffix", "endsWith", []ref.Val{s(5), s(41)}, 1 + 5},
		{"contains on both", "contains", []ref.Val{s(100), s(25)}, 1 + 13},
		{"in, short value", operators.In, []ref.Val{s(3), list(s(1), s(500), s(2), s(3), s(4))}, 5 * 2},
		{"in, long value", operators.In, []ref.Val{s(50), list(s(30), s(5))}, (1 + 3) + (1 + 1)},
		{"size", "size", []ref.Val{s(95)}, 1 + 10},
		{"timestamp parses", "timestamp", []ref.Val{s(20)}, 10 + 2},
		{"add parses", "add", []ref.Val{types.Timestamp{}, s(3)}, 10 + 1},
		{"another call", "other", []ref.Val{s(1000)}, 1},
	} {
		if got := *(Costs{}).CallCost(tt.fn, "", tt.args, nil); got != tt.want {
			t.Errorf("%s: cost %d, want %d", tt.name, got, tt.want)
		}
	}
}
