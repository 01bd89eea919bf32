package ratelimit

import (
	"net/http"
	"strconv"
	"strings"
	"testing"

	"github.com/google/cel-go/cel"
	"github.com/google/cel-go/common/types"
	"github.com/google/cel-go/common/types/ref"
)

// foldRequest is a request whose X-H header is n elements "1" joined by
// ",".
func foldRequest(n int) *http.Request {
	r := newRequest("GET", "http://h/")
	r.Header.Set("X-H", strings.TrimSuffix(strings.Repeat("1,", n), ","))
	return r
}

// evalCost evaluates expr for r and returns its value, its cost in cost
// units (the limit's, when it stopped there) and its error.
func evalCost(t testing.TB, expr string, r *http.Request) (ref.Val, uint64, error) {
	t.Helper()
	c, err := compile(expr, cel.DynType, nil)
	if err != nil {
		t.Fatalf("%.80s: %v", expr, err)
	}
	var a activation
	a.reset(r, base, nil, nil)
	v, det, err := c.prog.Eval(&a)
	var cost uint64
	if det != nil && det.ActualCost() != nil {
		cost = *det.ActualCost()
	}
	return v, cost, err
}

const foldHeader = "getReqHeader('x-h')[0].split(',')"

// TestFoldWorkBounded pins a review's finding: a comprehension over
// request data did work quadratic in its elements, uncharged, in cel-go's
// cost tracker (see cel_fold.go): x.exists(ip, ip.trim() == '...') over a
// header of 80,000 elements took 7.6 s within the cost limit. Each
// iteration is now charged for the tracker's work, and the tracker's
// stack no longer grows with the iterations, so such an expression fails
// at the cost limit (from about 65,000 elements here) after a bounded
// amount of work, and realistic ones still evaluate. The test counts
// outcomes; TestFoldCharge counts cost units.
func TestFoldWorkBounded(t *testing.T) {
	t.Parallel()
	review := "getReqHeader('x-h')[0].split(',').exists(ip, ip.trim() == '203.0.113.9')"
	big := strings.TrimSuffix(strings.Repeat("1,", 80_000), ",") // 160 KB
	wantEvalError(t, review, "cost limit", map[string]string{"X-H": big})
	wantEvalError(t, "getReqHeader('x-h')[0].split(',').all(a, a != 'z')", "cost limit",
		map[string]string{"X-H": strings.TrimSuffix(strings.Repeat("1,", 450_000), ",")}) // 900 KB
	// A body that costs nothing but its misses: 500 terms of &&, or a
	// large list literal waiting under the comprehension.
	ands := foldHeader + ".all(i, true" + strings.Repeat(" && true", 500) + ")"
	if _, _, err := evalCost(t, ands, foldRequest(100)); err == nil || !strings.Contains(err.Error(), "cost limit") {
		t.Errorf("500 terms of && over 100 elements: %v; want the cost limit", err)
	}
	literal := "[" + strings.Repeat("1,", 1500) + foldHeader + ".all(i, i != 'z')].size()"
	if _, _, err := evalCost(t, literal, foldRequest(5000)); err == nil || !strings.Contains(err.Error(), "cost limit") {
		t.Errorf("a list literal of 1,500 elements around all over 5,000: %v; want the cost limit", err)
	}

	// Realistic uses: an X-Forwarded-For of 1,000 addresses, as a bucket
	// key and as a rule's condition.
	ips := make([]string, 1000)
	for i := range ips {
		ips[i] = "10.0." + strconv.Itoa(i/256) + "." + strconv.Itoa(i%256)
	}
	ips[999] = "203.0.113.9"
	r := newRequest("GET", "http://h/")
	r.Header.Set("X-H", strings.Join(ips, ", "))
	wantKeys(t, r, map[string]string{
		"string(" + review + ")": "true",
		"getReqHeader('x-h')[0].split(',').filter(ip, ip.trim().startsWith('10.0.3.')).size() > 200": "true",
		"getReqHeader('x-h')[0].split(',').map(ip, ip.trim()).exists(a, a == '10.0.0.1')":            "true",
	})
	c, err := compile(review, cel.BoolType, nil)
	if err != nil {
		t.Fatal(err)
	}
	var a activation
	a.reset(r, base, nil, nil)
	if v, _, err := c.prog.Eval(&a); err != nil || v != types.True {
		t.Errorf("as a rule: %v, %v; want true", v, err)
	}
}

// TestFoldCharge pins what each iteration of a comprehension is charged
// for the tracker's work, ⌈m·d/100⌉ cost units for m nodes in its loop
// condition and step and d = 2·nodes + 8 for the expression's nodes (see
// cel_fold.go). The charge is made only when the tracker finds the
// entry foldStep looks up, i.e. when it cut its stack back, so this also
// pins that the stack stops growing. The costs are those of the elements
// after the first thousand, so that what the expression does once
// cancels out.
func TestFoldCharge(t *testing.T) {
	t.Parallel()
	perElement := func(expr string) uint64 {
		_, c1, err1 := evalCost(t, expr, foldRequest(1000))
		_, c2, err2 := evalCost(t, expr, foldRequest(2000))
		if err1 != nil || err2 != nil {
			t.Fatalf("%.80s: %v, %v", expr, err1, err2)
		}
		return c2 - c1
	}
	for _, tt := range []struct {
		body string
		want uint64 // for 1,000 elements
	}{
		// cel-go charges 9.2 units an element: @result, !_ and
		// @not_strictly_false (3), @result (1), ip (1), trim (3), == (1),
		// and split 1.2 (its parts); 19 nodes (d = 46), m = 9 (condition
		// 3, step 6): ⌈9·46/100⌉ = 5 more.
		{".exists(ip, ip.trim() == '203.0.113.9')", 1000*(9+5) + 1200},
		// 2 + 3; 17 nodes (d = 42), m = 7: ⌈7·42/100⌉ = 3.
		{".all(a, a != 'z')", 1000*(5+3) + 1200},
		// @result, a, [a] (10), _+_ (2); 16 nodes (d = 40), m = 5
		// (condition true, step 4): ⌈5·40/100⌉ = 2.
		{".map(a, a).size()", 1000*(14+2) + 1200},
	} {
		if got := perElement(foldHeader + tt.body); got != tt.want {
			t.Errorf("%s: %d cost units for 1,000 more elements; want %d", tt.body, got, tt.want)
		}
	}
	// 1,518 nodes (d = 3,044), m = 7: ⌈7·3044/100⌉ = 214 an element.
	literal := "[" + strings.Repeat("1,", 1500) + foldHeader + ".all(i, i != 'z')].size()"
	if got, want := perElement(literal), uint64(1000*(5+214)+1200); got != want {
		t.Errorf("all under a list literal: %d cost units for 1,000 more elements; want %d", got, want)
	}
	// Nested, 26 nodes (d = 60): each of the inner all's 10 iterations
	// costs 5 (@result, @not_strictly_false; @result, b, >=) and is
	// charged ⌈7·60/100⌉ = 5 more; each of the outer's costs 2 + 1, the
	// range lists.range(10), the inner comprehension's result (1), and is
	// charged ⌈9·60/100⌉ = 6 more (m = 2 + 7: &&, @result, and the inner
	// comprehension, its range of 2 nodes, initial value and result).
	_, rangeCost, err := evalCost(t, "lists.range(10)", foldRequest(1))
	if err != nil {
		t.Fatal(err)
	}
	nested := foldHeader + ".all(a, lists.range(10).all(b, b >= 0))"
	if got, want := perElement(nested), 1000*(10*(5+5)+(3+rangeCost+1+6))+1200; got != want {
		t.Errorf("nested: %d cost units for 1,000 more elements; want %d", got, want)
	}
}

// BenchmarkFoldWorstCase evaluates the comprehensions whose tracker work
// is largest within the limit, each to just under it: the review's exists
// over 60,000 elements, and an all under a list literal of 1,500
// elements (the most entries scanned a cost unit measured, see
// cel_fold.go) over 4,000.
func BenchmarkFoldWorstCase(b *testing.B) {
	for _, bb := range []struct {
		name, expr string
		n          int
	}{
		{"Exists60k", foldHeader + ".exists(ip, ip.trim() == '203.0.113.9')", 60_000},
		{"UnderLiteral4k", "[" + strings.Repeat("1,", 1500) + foldHeader + ".all(i, i != 'z')].size()", 4000},
	} {
		b.Run(bb.name, func(b *testing.B) {
			r := foldRequest(bb.n)
			c, err := compile(bb.expr, cel.DynType, nil)
			if err != nil {
				b.Fatal(err)
			}
			b.ReportAllocs()
			for b.Loop() {
				var a activation
				a.reset(r, base, nil, nil)
				_, det, err := c.prog.Eval(&a)
				if err != nil {
					b.Fatal(err)
				}
				b.ReportMetric(float64(*det.ActualCost()), "cost-units")
			}
		})
	}
}
