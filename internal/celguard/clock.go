package celguard

import (
	"fmt"
	"time"

	"github.com/google/cel-go/cel"
	celast "github.com/google/cel-go/common/ast"
	"github.com/google/cel-go/common/types"
	"github.com/google/cel-go/common/types/ref"
	"github.com/google/cel-go/interpreter"

	"github.com/acctapi/acctapi/internal/trunc"
)

// The clock constructs of contract §3, for a Grammar with Clock: the
// variable time.now and add/subtract of a duration literal such as "7d"
// on a timestamp. An environment declares them with [ClockEnv] and binds
// time.now to the request's time.

// Now is the name of the variable that holds the request's time.
const Now = "time.now"

// CEL's ranges: a duration is at most 10,000 years either way, a
// timestamp from 0001-01-01T00:00:00Z to 9999-12-31T23:59:59.999999999Z
// (in Unix seconds).
const (
	maxDurationSeconds  = 315_576_000_000
	minTimestampSeconds = -62_135_596_800
	maxTimestampSeconds = 253_402_300_799
)

// ClockEnv declares time.now (a timestamp) and the member functions
// add and subtract, which take a timestamp and a duration such as "7d"
// (see [ParseDuration]) and return a timestamp; a result outside CEL's
// range of timestamps is an error of the whole evaluation (Program.Eval's
// error, which no && or || around the call absorbs), never a time that
// wrapped.
func ClockEnv() cel.EnvOption {
	shift := func(fn string) func(lhs, rhs ref.Val) ref.Val {
		return func(lhs, rhs ref.Val) ref.Val {
			ts, ok := lhs.(types.Timestamp)
			s, ok2 := rhs.(types.String)
			if !ok || !ok2 {
				return types.NewErr("%s: want timestamp.%s(string)", fn, fn)
			}
			t, err := Shift(ts.Time, fn, string(s))
			if err != nil {
				// An error value would be absorbed by && and || when
				// the other side settles the result (err || true is
				// true), and the request would get an answer built on
				// a time out of range. Cancelling the evaluation, as
				// CEL's own cost limit does, makes it the evaluation's
				// error, whatever surrounds the call. (Its Cause is
				// left at its zero value, ContextCancelled: no caller
				// reads it, and none may take it for a client gone.)
				panic(interpreter.EvalCancelledError{Message: err.Error()})
			}
			return types.Timestamp{Time: t}
		}
	}
	return cel.Lib(clockLib{shift("add"), shift("subtract")})
}

// clockLib is ClockEnv's library.
type clockLib struct {
	add, subtract func(lhs, rhs ref.Val) ref.Val
}

// CompileOptions implements cel.Library.
func (l clockLib) CompileOptions() []cel.EnvOption {
	return []cel.EnvOption{
		cel.Variable(Now, cel.TimestampType),
		cel.Function("add", cel.MemberOverload("timestamp_add_duration_string",
			[]*cel.Type{cel.TimestampType, cel.StringType}, cel.TimestampType, cel.BinaryBinding(l.add))),
		cel.Function("subtract", cel.MemberOverload("timestamp_subtract_duration_string",
			[]*cel.Type{cel.TimestampType, cel.StringType}, cel.TimestampType, cel.BinaryBinding(l.subtract))),
	}
}

// ProgramOptions implements cel.Library.
func (clockLib) ProgramOptions() []cel.ProgramOption { return nil }

// ParseDuration reads durations such as "7d", "24h", "15m" and "1d12h": a
// sequence of terms, each a whole number (of any number of digits)
// followed by d, h, m or s, in all at most CEL's longest duration (10,000
// years); a term or a sum beyond that is out of range. Fractions ("1.5h")
// are not accepted (contract §3 lists the units, with whole numbers:
// "1h30m" says the same exactly), nor signs or other units. It returns
// whole seconds, since CEL's longest duration is longer than a
// time.Duration's.
func ParseDuration(s string) (int64, error) {
	if s == "" {
		return 0, fmt.Errorf("empty duration")
	}
	show := trunc.String(s, 64)
	var total int64
	for rest := s; rest != ""; {
		// n stops growing past the range: every unit is at least a
		// second, so such a term is out of range, and n*unit below
		// cannot overflow (at most 3.2e11 * 86,400).
		var n int64
		i := 0
		for ; i < len(rest) && rest[i] >= '0' && rest[i] <= '9'; i++ {
			if n <= maxDurationSeconds {
				n = n*10 + int64(rest[i]-'0')
			}
		}
		switch {
		case i < len(rest) && (rest[i] == '.' || rest[i] == ','):
			return 0, fmt.Errorf("invalid duration %q: fractions are not accepted; use whole numbers of a smaller unit, such as \"1h30m\" for 1.5 hours", show)
		case i == 0 || i == len(rest):
			return 0, fmt.Errorf("invalid duration %q: want terms of a whole number and a unit, d, h, m or s, such as \"7d\", \"24h\", \"1d12h\"", show)
		}
		unit, ok := durationUnits[rest[i]]
		if !ok {
			return 0, fmt.Errorf("invalid duration %q: units are d, h, m and s", show)
		}
		if n > maxDurationSeconds || n*unit > maxDurationSeconds-total {
			return 0, fmt.Errorf("duration %q is out of range: at most 10,000 years", show)
		}
		total += n * unit
		rest = rest[i+1:]
	}
	return total, nil
}

var durationUnits = map[byte]int64{'d': 24 * 3600, 'h': 3600, 'm': 60, 's': 1}

// DurationLiteral checks the literal argument of add() and subtract(), a
// duration ([ParseDuration]); it is a Grammar's Literal.
func DurationLiteral(_, s string) error {
	_, err := ParseDuration(s)
	return err
}

// Shift returns t moved by the duration d, forward for fn "add" and
// backward for "subtract"; a result outside CEL's range of timestamps
// (years 0001 to 9999) is an error.
func Shift(t time.Time, fn, d string) (time.Time, error) {
	secs, err := ParseDuration(d)
	if err != nil {
		return time.Time{}, err
	}
	if fn == "subtract" {
		secs = -secs
	}
	u := t.Unix() + secs
	if u < minTimestampSeconds || u > maxTimestampSeconds {
		return time.Time{}, fmt.Errorf("timestamp out of range: %s.%s(%q) is outside years 0001 to 9999",
			t.UTC().Format(time.RFC3339), fn, trunc.String(d, 64))
	}
	return time.Unix(u, int64(t.Nanosecond())).UTC(), nil
}

// CheckConstTimes refuses an add() or subtract() whose target is a time
// literal (such as timestamp("9999-12-31T23:59:59Z").add("1d")) when its
// result is out of range, so that it is refused before any item is read;
// one on time.now is checked by CheckNowTimes, and one on a member when
// evaluated.
func CheckConstTimes(e celast.Expr) error {
	return checkTimes(e, nil)
}

// ShiftsNow reports whether e has an add() or subtract() of a literal
// duration on time.now, which CheckNowTimes checks.
func ShiftsNow(e celast.Expr) bool {
	found := false
	celast.PreOrderVisit(e, celast.NewExprVisitor(func(x celast.Expr) {
		if !found && x.Kind() == celast.CallKind {
			if c := x.AsCall(); (c.FunctionName() == "add" || c.FunctionName() == "subtract") && c.IsMemberFunction() {
				found = isNow(c.Target())
			}
		}
	}))
	return found
}

// CheckNowTimes is CheckConstTimes for time.now at now: it refuses an
// add() or subtract() of literal durations on time.now whose result is out
// of range, wherever it stands in e. time.now is one time for a whole
// request, so such an expression fails on every item it reaches; checked
// once before any item is read, it is refused alike whether or not an
// item reaches it (an && that stops before it on every item, an empty
// list), never a silent "no match".
func CheckNowTimes(e celast.Expr, now time.Time) error {
	return checkTimes(e, &now)
}

// checkTimes checks each chain of add() and subtract() once, from its
// outermost call (the visit is pre-order): a chain of n calls costs n
// steps, not n²/2, which matters when it runs on every request.
func checkTimes(e celast.Expr, now *time.Time) error {
	var bad error
	seen := map[int64]bool{}
	celast.PreOrderVisit(e, celast.NewExprVisitor(func(x celast.Expr) {
		if bad == nil && x.Kind() == celast.CallKind && !seen[x.ID()] {
			_, _, bad = constTime(x, now, seen)
		}
	}))
	return bad
}

// constTime is the value of e when it is timestamp("<literal>"), or time.now
// when now is not nil, or an add() or subtract() of a literal duration on
// such a value. It adds the calls it looks at to seen.
func constTime(e celast.Expr, now *time.Time, seen map[int64]bool) (t time.Time, ok bool, err error) {
	if now != nil && isNow(e) {
		return *now, true, nil
	}
	if e.Kind() != celast.CallKind {
		return time.Time{}, false, nil
	}
	seen[e.ID()] = true
	c := e.AsCall()
	switch fn := c.FunctionName(); {
	case fn == "timestamp" && !c.IsMemberFunction() && len(c.Args()) == 1:
		if s, ok := StringLiteral(c.Args()[0]); ok {
			v, ok := types.String(s).ConvertToType(types.TimestampType).(types.Timestamp)
			return v.Time, ok, nil
		}
	case (fn == "add" || fn == "subtract") && c.IsMemberFunction() && len(c.Args()) == 1:
		t, ok, err := constTime(c.Target(), now, seen)
		d, lit := StringLiteral(c.Args()[0])
		if !ok || err != nil || !lit {
			return time.Time{}, false, err
		}
		t, err = Shift(t, fn, d)
		return t, err == nil, err
	}
	return time.Time{}, false, nil
}
