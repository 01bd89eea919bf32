package ratelimit

import (
	"math"
	"net/http"
	"strconv"
	"strings"
	"testing"

	"github.com/google/cel-go/cel"

	"github.com/acctapi/acctapi/internal/apitest"
)

// TestGuardedFunctions pins a review's finding: distinct, indexOf and
// lastIndexOf (and sort, sortBy and flatten, found by the audit that
// followed, and queryString.decode, url.parse and split(), which
// allocated per part) were charged only after they had run, so one call did
// quadratic (or, for flatten of shared lists, unbounded) work first: 17.6
// s for distinct over 80,000 values. Each now refuses a call whose cost,
// computed from its arguments, is over the limit, before running it: the
// bucket key fails with the package's budget error (not cel-go's "cost
// limit exceeded", which came after the work), and the evaluation
// allocates little beyond the request and what the expression builds
// before the call (the call's own work would allocate the inputs' runes
// or elements several times over). Not parallel: it counts the bytes the
// process allocates.
func TestGuardedFunctions(t *testing.T) {
	ids := make([]string, 20000)
	for i := range ids {
		ids[i] = strconv.Itoa(i)
	}
	headers := map[string]string{
		"X-Ids":    strings.Join(ids, ","),                   // 109 KB, 20,000 distinct values
		"X-Long":   strings.Repeat("a", 1<<20-1024),          // 1 MiB less 1 KiB
		"X-Prefix": strings.Repeat("a", 100) + "b",           // 101 bytes, found nowhere in X-Long
		"X-Half":   strings.Repeat("a", 400_000) + "b",       // half of X-Long
		"X-Short":  strings.Repeat("a", 300),                 //
		"X-Few":    "1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16", //
		"X-Pairs":  strings.Repeat("a&", 400_000),            // 400,000 pairs
		"X-Words":  strings.Repeat("a ", 400_000),            // 400,000 fields
	}
	for _, tt := range []struct {
		expr, want string
		maxAlloc   uint64 // bytes
	}{
		{"getReqHeader('x-ids')[0].split(',').distinct().size()", "distinct: the call is", 4 << 20},
		{"getReqHeader('x-ids')[0].split(',').sort()[0]", "sort: the call is", 4 << 20},
		{"getReqHeader('x-ids')[0].split(',').sortBy(v, v)[0]", "sortBy: the call is", 16 << 20},
		{"getReqHeader('x-long')[0].indexOf(getReqHeader('x-prefix')[0])", "indexOf: the call is", 2 << 20},
		{"getReqHeader('x-long')[0].indexOf(getReqHeader('x-half')[0], 1)", "indexOf: the call is", 2 << 20},
		{"getReqHeader('x-long')[0].lastIndexOf(getReqHeader('x-prefix')[0])", "lastIndexOf: the call is", 2 << 20},
		{"getReqHeader('x-long')[0].lastIndexOf(getReqHeader('x-half')[0], 5)", "lastIndexOf: the call is", 2 << 20},
		// Decoders are charged four units a part they may build (json.decode:
		// TestJSONDecodeBounded).
		{"queryString.decode(getReqHeader('x-pairs')[0]).size()", "queryString.decode: the call is", 2 << 20},
		{"url.parse('http://h/?' + getReqHeader('x-pairs')[0]).size()", "url.parse: the call is", 4 << 20},
		{"getReqHeader('x-words')[0].split().size()", "split: the call is", 2 << 20},
		// A list of shared lists is cheap to build and long to read: 100
		// references to 1,000 references to 16 values compare as 16,000
		// values each (cel-go charged 2 units for each), and flatten
		// would build 10^6 elements from 1,000 references.
		{"[getReqHeader('x-few')[0].split(',')].map(l, lists.range(1000).map(i, l)).map(m, lists.range(100).map(j, m))[0].distinct().size()", "distinct: the call is", 2 << 20},
		{"[lists.range(1000)].map(r, lists.range(1000).map(i, r)).map(a, lists.range(1000).map(j, a))[0].flatten(2).size()", "flatten: the call is", 1 << 20},
	} {
		r := newRequest("GET", "http://h/")
		for k, v := range headers {
			r.Header.Set(k, v)
		}
		wantBoundedError(t, tt.expr, r, tt.want, tt.maxAlloc)
	}
}

// TestGuardedFunctionsWork checks that the guarded functions keep cel-go's
// results within the limit.
func TestGuardedFunctionsWork(t *testing.T) {
	t.Parallel()
	r := newRequest("GET", "http://h/a/b/a")
	r.Header.Set("X-Forwarded-For", "10.0.0.1, 10.0.0.2, 10.0.0.1")
	wantKeys(t, r, map[string]string{
		"getReqHeader('x-forwarded-for')[0].split(', ').distinct()":         "10.0.0.1,10.0.0.2",
		"getReqHeader('x-forwarded-for')[0].split(', ').sort()":             "10.0.0.1,10.0.0.1,10.0.0.2",
		"['bb', 'a', 'ccc'].sortBy(s, s.size())":                            "a,bb,ccc",
		"[[1, [2]], [3]].flatten().size()":                                  "3",
		"[[1, [2]], [3]].flatten(2)":                                        "1,2,3",
		"string(req.url.path.indexOf('a'))":                                 "1",
		"string(req.url.path.indexOf('a', 2))":                              "5",
		"string(req.url.path.lastIndexOf('a'))":                             "5",
		"string(req.url.path.lastIndexOf('a', 4))":                          "1",
		"string(req.url.path.indexOf(''))":                                  "0",
		"[1, 1.0, 1u, 2].distinct()":                                        "1,2",
		"string(lists.range(3).map(i, [1, 2]).distinct().size())":           "1",
		"string([{'a': 1}, {'a': 1}, {'a': 2}].distinct().size())":          "2",
		"string(getReqHeader('x-forwarded-for')[0].split(', ').size() > 2)": "true",
	})
}

// TestGuardCosts pins the guards' costs in cost units: what a call is
// charged, the cost of the expression less that of its argument. (The
// inputs come from the request, so that no call is folded into a constant
// when the expression is planned.)
func TestGuardCosts(t *testing.T) {
	t.Parallel()
	r := newRequest("GET", "http://h/")
	r.Header.Set("X-Abc", "a,b,c")
	r.Header.Set("X-Long", strings.Repeat("a", 100))
	r.Header.Set("X-Twenty", strings.Repeat(strings.Repeat("x", 20)+",", 9)+strings.Repeat("x", 20))
	r.Header.Set("X-E", strings.Repeat("é", 1000)) // 2,000 bytes
	r.Header.Set("X-N", strings.Repeat("0", 99)+"1")
	cost := func(expr string) uint64 {
		c, err := compile(expr, cel.DynType, nil)
		if err != nil {
			t.Fatal(err)
		}
		var a activation
		a.reset(r, base, nil, nil)
		_, det, err := c.prog.Eval(&a)
		if err != nil {
			t.Fatalf("%s: %v", expr, err)
		}
		return *det.ActualCost()
	}
	abc := "getReqHeader('x-abc')[0].split(',')"
	for _, tt := range []struct {
		arg, call string
		want      uint64
	}{
		// 1 + (n-1)·Σ(2 + len/10)
		{abc, ".distinct()", 1 + 2*6},
		{"getReqHeader('x-twenty')[0].split(',')", ".sort()", 1 + 9*(10*4)},
		// an element that is a list counts what it holds: 1 + 3 + (2 + 3)
		{"[" + abc + ", " + abc + "]", ".distinct()", 1 + 1*(2*5)},
		// 1 + len/10 + len·sub/10
		{"getReqHeader('x-long')[0].trim()", ".indexOf('ab')", 1 + 10 + 20},
		{"getReqHeader('x-long')[0].trim()", ".lastIndexOf('', 3)", 1 + 10},
		// Strings are charged by their bytes, which cel-go counted as runes
		// (reading the string: ten thousand size() of a 1 MiB header took
		// 9.7 s, ten thousand == as long), and size() by its string.
		{"getReqHeader('x-e')[0].trim()", ".size()", 1 + 200},
		{"getReqHeader('x-e')[0].trim()", " == '" + strings.Repeat("é", 999) + "'", 200},
		{"getReqHeader('x-e')[0].trim()", " < 'a'", 1},
		{"getReqHeader('x-e')[0].trim()", ".startsWith('" + strings.Repeat("é", 50) + "')", 10},
		// 1 + a unit per list read and per element built
		{"[" + abc + ", ['d']]", ".flatten()", 1 + 1 + (1 + 3) + (1 + 1)},
	} {
		got, without := cost(tt.arg+tt.call), cost(tt.arg)
		if got-without != tt.want {
			t.Errorf("%s%s: cost %d, %d without the call; want %d for the call", tt.arg, tt.call, got, without, tt.want)
		}
	}
	// Conversions read their string: 1 + len/10.
	n := "getReqHeader('x-n')[0].trim()"
	for _, conv := range []string{"int", "uint", "double"} {
		if got, without := cost(conv+"("+n+")"), cost(n); got-without != 1+10 {
			t.Errorf("%s(%s): cost %d, %d without the call; want 11 for the call", conv, n, got, without)
		}
	}
	wantEvalError(t, "lists.range(10000).map(i, size(getReqHeader('x')[0])).size()", "cost limit", map[string]string{"X": strings.Repeat("é", 500_000)})
}

// TestComprehensionCostLinear pins a defect found on the way: a map or
// filter over n elements was charged n²/2 (each step's concatenation by
// the size of the result so far), so lists.range(1500).map(i, i) failed
// the cost limit. A concatenation is now charged by its shorter list.
// (Cost units only: the work cel-go's cost tracker did besides, quadratic
// in the iterations and uncharged, is bounded and pinned by
// TestFoldCharge, see cel_fold.go.)
func TestComprehensionCostLinear(t *testing.T) {
	t.Parallel()
	r := newRequest("GET", "http://h/")
	for _, expr := range []string{"lists.range(10000).map(i, i).size()", "lists.range(10000).filter(i, i % 2 == 0).size()"} {
		if res := mustLimit(t, keyConfig(expr)).EvaluateAt(r, base); res.ErrorCode != "" {
			t.Errorf("%s: %s", expr, res.ErrorMessage)
		}
	}
	// Doubling a list is still charged its size.
	doubled := "[lists.range(10000)]"
	for range 8 {
		doubled = "(" + doubled + ".map(x, x + x))"
	}
	wantEvalError(t, doubled+"[0].size()", "cost limit", nil)
}

// TestJSONDecodeBounded pins a review's finding: json.decode was charged
// by the bytes it read, about a unit per ten, while decoding allocates 30
// to 50 bytes a byte: nine decodes of a 1 MB header of empty objects
// allocated 392 MB in one evaluation, within the limit. It is now charged
// by the values it may build too, counted before decoding, and refuses a
// call over the limit before decoding. Not parallel: it counts the bytes
// the process allocates.
func TestJSONDecodeBounded(t *testing.T) {
	objects := func(n int) string { return "[" + strings.Repeat("{},", n-1) + "{}]" }
	nine := "[" + strings.Repeat("json.decode(getReqHeader('x-json')[0]), ", 8) + "json.decode(getReqHeader('x-json')[0])].size()"
	for _, tt := range []struct {
		expr, header, want string
		maxAlloc           uint64
	}{
		{"json.decode(getReqHeader('x-json')[0]).size()", objects(300_000), "json.decode: the call is", 2 << 20},
		// 50,000 objects: 400,000 units a call, so the third stops the
		// evaluation (nine allocated 9 × 7 MB; three, about 21 MB).
		{nine, objects(50_000), "cost limit", 36 << 20},
	} {
		r := newRequest("GET", "http://h/")
		r.Header.Set("X-Json", tt.header)
		wantBoundedError(t, tt.expr, r, tt.want, tt.maxAlloc)
	}
	// What a call is charged: a unit per ten bytes and four per value.
	for s, want := range map[string]uint64{
		`{"tenant": "a,b:c", "n": [1, 2]}`: 1 + 3 + 4*(1+2+2+2), // the first; {, [; two keys; two commas
		`"{[,:"`:                           1 + 0 + 4*1,
		`"\"{"`:                            1 + 0 + 4*1,
	} {
		if got := jsonCost(s); got != want {
			t.Errorf("jsonCost(%s) = %d; want %d", s, got, want)
		}
	}
	// Within the limit it decodes as before.
	r := newRequest("GET", "http://h/")
	r.Header.Set("X-Client", `{"tenant": "t1", "roles": ["a"]}`)
	if res := mustLimit(t, keyConfig("json.decode(getReqHeader('x-client')[0]).tenant")).EvaluateAt(r, base); res.BucketKey != "t1" {
		t.Errorf("json.decode(...).tenant: %+v; want the key t1", res)
	}
}

// TestLookupsDoNotCopyLongKeys pins a finding of the audit: req.headers
// lowered every key it was given, and getReqHeader canonicalized every
// name, a copy charged one unit, so a 1 MiB header used as a key two
// hundred times allocated 200 MiB; a key longer than any header name is
// now absent without being copied. (Not
// parallel: it counts the bytes the process allocates.)
func TestLookupsDoNotCopyLongKeys(t *testing.T) {
	r := newRequest("GET", "http://h/?q=1")
	r.Header.Set("X-Long", strings.Repeat("A", 1<<20-64))
	r.Header.Set("X-Low", strings.Repeat("a", 1<<20-64))
	for _, expr := range []string{
		"lists.range(200).filter(i, has(req.headers[getReqHeader('x-long')[0]])).size()",
		"lists.range(200).filter(i, getReqHeader('x-long')[0] in req.headers).size()",
		// getReqHeader copied a name to canonicalize it.
		"lists.range(200).filter(i, hasReqHeader(getReqHeader('x-low')[0])).size()",
	} {
		l := mustLimit(t, keyConfig(expr))
		var res Result
		n := bytesAllocated(func() { res = l.EvaluateAt(r, base) })
		if res.ErrorCode != "" || res.BucketKey != "0" {
			t.Errorf("%s: %+v; want the key 0", expr, res)
		}
		if n > 4<<20 {
			t.Errorf("%s: allocated %d KiB", expr, n>>10)
		}
	}
	// Every map the request gives finds a key longer than any of its own
	// absent (without hashing it: TestOrderedMapLongKeys), and says so
	// briefly.
	r.Header.Set("X-Json", `{"a": 1}`)
	wantKeys(t, r, map[string]string{
		"has(json.decode(getReqHeader('x-json')[0])[getReqHeader('x-long')[0]])": "false",
		"getReqHeader('x-long')[0] in req.url.query_params":                      "false",
		"has(json.decode(getReqHeader('x-json')[0]).a)":                          "true",
		"hasQueryParam(getReqHeader('x-long')[0])":                               "false",
		"hasQueryParam('q') && getQueryParam('q')[0] == '1'":                     "true",
		"'a' in json.decode(getReqHeader('x-json')[0])":                          "true",
	})
	for _, expr := range []string{"req.headers[getReqHeader('x-long')[0]]", "json.decode(getReqHeader('x-json')[0])[getReqHeader('x-long')[0]]"} {
		res := wantEvalError(t, expr, "no such key: AAAA", map[string]string{"X-Long": strings.Repeat("A", 1<<20-64), "X-Json": "{}"})
		if len(res.ErrorMessage) > 1024 {
			t.Errorf("%s: an error message of %d bytes", expr, len(res.ErrorMessage))
		}
	}
	// (cel-go writes the key in the error; the result's message is cut.)
	// Addresses: a string longer than any address is none.
	r.Header.Set("X-Ip", "10.1.2.3")
	wantKeys(t, r, map[string]string{
		"inCidrRange(getReqHeader('x-ip')[0], '10.0.0.0/8')":                               "true",
		"inCidrRange(getReqHeader('x-long')[0], '10.0.0.0/8')":                             "false",
		"inCidrRanges(getReqHeader('x-ip')[0], [getReqHeader('x-long')[0], '10.0.0.0/8'])": "true",
		"inCidrRanges(getReqHeader('x-ip')[0], [getReqHeader('x-long')[0]])":               "false",
		"getReqHeader('x-long')[0].isPrivateIp()":                                          "false",
		"getReqHeader('x-ip')[0].isPrivateIp()":                                            "true",
		"inCidrRange('fe80::1%eth0' + getReqHeader('x-ip')[0].substring(8), 'fe80::/10')":  "true",
	})
}

// TestDeepComparisonsBounded pins a finding of the audit: ==, != and in
// compare lists and maps element by element, and cel-go charges them by
// their top-level size, so comparing 100 references to 1,000 references
// to one list of 1,000 with itself took 3 s for a few thousand units. A
// comparison is now refused before it runs when what it would read is
// over the limit, and charged what it reads. The over-limit rows would
// each compare 10^8 elements first; the test counts cost units, not time.
func TestDeepComparisonsBounded(t *testing.T) {
	t.Parallel()
	deep := "[[lists.range(1000)].map(r, lists.range(1000).map(i, r)).map(a, lists.range(100).map(j, a))[0]]"
	for _, tt := range []struct{ expr, want string }{
		{deep + ".map(b, b == b)[0]", "_==_: comparing the operands is"},
		{deep + ".map(b, b != b)[0]", "_!=_: comparing the operands is"},
		{deep + ".map(b, b[0] in b)[0]", "@in: comparing the operands is"},
		// Maps are charged by their values too (a review: a mutation that
		// charged keys only let this run 3 s).
		{deep + ".map(b, {'k': b} == {'k': b})[0]", "_==_: comparing the operands is"},
		{deep + ".map(b, {'k': b} != {'k': b})[0]", "_!=_: comparing the operands is"},
		{deep + ".map(b, {'k': b} in [{'k': b}])[0]", "@in: comparing the operands is"},
		// 100,000 elements a comparison, within the limit: charged, so the
		// tenth stops the evaluation.
		{"[[lists.range(1000)].map(r, lists.range(100).map(i, r))[0]].map(a, lists.range(5000).map(i, a == a))[0].size()", "cost limit"},
	} {
		wantEvalError(t, tt.expr, tt.want, nil)
	}
	r := newRequest("GET", "http://h/")
	r.Header.Set("X-A", "a,b")
	wantKeys(t, r, map[string]string{
		"getReqHeader('x-a')[0].split(',') == ['a', 'b']":               "true",
		"getReqHeader('x-a')[0].split(',') != ['a', 'b']":               "false",
		"['a', 'b'] in [getReqHeader('x-a')[0].split(',')]":             "true",
		"'a' in getReqHeader('x-a')[0].split(',')":                      "true",
		"{'k': getReqHeader('x-a')[0].split(',')} == {'k': ['a', 'b']}": "true",
		"req.method == 'GET' && req.method in ['GET', 'HEAD']":          "true",
		"dyn([1]) == dyn('a')":                                          "false",
	})
}

// wantKeys evaluates each bucket key of want for r and wants its key.
func wantKeys(t *testing.T, r *http.Request, want map[string]string) {
	t.Helper()
	for expr, key := range want {
		if res := mustLimit(t, keyConfig(expr)).EvaluateAt(r, base); res.ErrorCode != "" || res.BucketKey != key {
			t.Errorf("%s: %+v; want the key %s", expr, res, key)
		}
	}
}

// bytesAllocated is the least number of bytes the process allocates while
// fn runs, over three runs (fn runs three times); a test that calls it must
// not run in parallel with others.
func bytesAllocated(fn func()) uint64 {
	// The least of three runs: TotalAlloc also counts what other
	// goroutines allocate meanwhile (CI saw 26 MiB against a bound of 24
	// once).
	least := uint64(math.MaxUint64)
	for range 3 {
		least = min(least, apitest.Allocated(fn).Bytes)
	}
	return least
}

// wantBoundedError evaluates the bucket key expr for r and wants an
// evaluation error containing want, having allocated at most maxAlloc
// bytes; a test that calls it must not run in parallel with others.
func wantBoundedError(t *testing.T, expr string, r *http.Request, want string, maxAlloc uint64) {
	t.Helper()
	l := mustLimit(t, keyConfig(expr))
	var res Result
	n := bytesAllocated(func() { res = l.EvaluateAt(r, base) })
	if res.ErrorCode != CodeEvalFailed || !strings.Contains(res.ErrorMessage, want) {
		t.Errorf("%.100s: %s %s; want an evaluation error containing %q", expr, res.ErrorCode, res.ErrorMessage, want)
	}
	if n > maxAlloc {
		t.Errorf("%.100s: allocated %d KiB; want at most %d", expr, n>>10, maxAlloc>>10)
	}
}
