package ratelimit

import (
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/google/cel-go/common/types"
	"github.com/google/cel-go/common/types/ref"
	"github.com/google/go-cmp/cmp"

	"github.com/acctapi/acctapi/internal/trunc"
)

// failsWith is the wanted value of an expression that fails to evaluate:
// an error containing the text.
type failsWith string

// funcTests are the macro and function rows: each name of functionNames
// appears in at least one (TestFunctionsComplete). Values are the
// documentation's examples where it gives one.
var funcTests = []struct {
	expr string
	want any
}{
	// request
	{"getReqHeader('x-api-key')", []string{"k1", "k2"}},
	{"getReqHeader('Host')", []string{"api.example.com:8443"}},
	{"getReqHeader('x-missing')", []string{}},
	{"hasReqHeader('X-API-KEY')", true},
	{"hasReqHeader('x-missing')", false},
	{"getQueryParam('a')", []string{"1", "3"}},
	{"getQueryParam('zz')", []string{}},
	{"hasQueryParam('b')", true},
	{"getReqCookie('session').value", "abc"}, // the first of duplicates
	{"getReqCookie('nope')", testCookie("", "")},
	// The cookie object has the fields of the documentation's cookie type
	// (getReqCookie('session').secure); a request cookie carries only name
	// and value, the rest are zero.
	{"getReqCookie('session').secure", false},
	{"getReqCookie('session').secure == true", false},
	{"getReqCookie('session').http_only || getReqCookie('session').value == 'abc'", true},
	{"getReqCookie('session').max_age == duration('0s')", true},
	{"getReqCookie('session').domain + getReqCookie('session').path + getReqCookie('session').same_site", ""},
	{"size(getReqCookie('session').unparsed_attributes)", int64(0)},
	{"getReqCookie('session').expires == timestamp('0001-01-01T00:00:00Z')", true},
	{"req.cookies['theme'][0].secure", false},
	{"hasReqCookie('theme')", true},
	{"hasReqCookie('nope')", false},
	// encoding, hashing, JSON, query strings, URLs
	{"base64.decode('aGVsbG8=')", []byte("hello")},
	{"base64.decode('aGVsbG8')", failsWith("illegal base64 data")}, // as documented (cel-go accepts it)
	{"base64.encode(b'hello')", "aGVsbG8="},
	{"basic_auth.encode('user', 'pass')", "Basic dXNlcjpwYXNz"},
	{"hash.crc32('hello')", "3610a686"},
	{"hash.crc32('hello', 'base64')", "NhCmhg=="},
	{"hash.crc64('hello')", "3c3eeee2d8100000"},
	{"hash.crc64('hello', 'base64')", "PD7u4tgQAAA="},
	{"hash.md5('hello')", "5d41402abc4b2a76b9719d911017c592"},
	{"hash.sha1('hello')", "aaf4c61ddcc5e8a2dabede0f3b482cd9aea9434d"},
	{"hash.sha256('hello')", "2cf24dba5fb0a30e26e83b2ac5b9e29e1b161e5c1fa7425e73043362938b9824"},
	{"hash.sha512('hello')", "9b71d224bd62f3785d96d46ad3ea3d73319bfbc2890caadae2dff72519673ca72323c3d99ba5c11d7c7acc6e14b8c5da0c4663475c2e5c3adef46f73bcdec043"},
	{"hash.xxhash64('hello')", "26c7827d889f6da3"},
	{"hash.xxhash64('hello', 'base64')", "JseCfYifbaM="},
	{"hash.md5('hello', 'hex2')", failsWith(`format "hex2"`)},
	{"''.xxhash64()", "ef46db3751d8e999"},
	{"'Nobody inspects the spammish repetition'.xxhash64()", "fbcea83c8a378bf1"},
	{"'hello'.crc32()", "3610a686"},
	{"'hello'.crc64('base64')", "PD7u4tgQAAA="},
	{"'hello'.md5()", "5d41402abc4b2a76b9719d911017c592"},
	{"'hello'.sha1()", "aaf4c61ddcc5e8a2dabede0f3b482cd9aea9434d"},
	{"'hello'.sha256()", "2cf24dba5fb0a30e26e83b2ac5b9e29e1b161e5c1fa7425e73043362938b9824"},
	{"'hello'.sha512().size()", int64(128)},
	{"'hello'.xxhash64('base64')", "JseCfYifbaM="},
	{`json.decode('{"a": [1, 2]}').a[1]`, 2.0},
	{`json.decode('{')`, failsWith("json.decode")},
	{"json.encode({'a': 1})", `{"a":1}`},
	{`'{"a": "b"}'.decodeJson().a`, "b"},
	{"[1, 2].encodeJson()", "[1,2]"},
	{"{'k': 'v'}.encodeJson()", `{"k":"v"}`},
	{`'{"a": 1}'.isJson()`, true},
	{"'nope'.isJson()", false},
	{"'aGVsbG8='.decodeBase64()", "hello"},
	{"'hello'.encodeBase64()", "aGVsbG8="},
	{"queryString.decode('a=b&c=d')", map[string]string{"a": "b", "c": "d"}},
	{"queryString.encode({'b': '2', 'a': ['1', '3']})", "a=1&a=3&b=2"},
	{"'a=b'.decodeQueryString().a", "b"},
	{"{'a': 'b c'}.encodeQueryString()", "a=b+c"},
	{"'a=b&c'.isQueryString()", true},
	{"'not a query string'.isQueryString()", false},
	{"url.escape('i;md/r/$y')", "i%3Bmd%2Fr%2F%24y"},
	{"'a b'.escapeUrl()", "a+b"},
	{"url.unescape('a%20b')", "a b"},
	{"'a%2Fb'.unescapeUrl()", "a/b"},
	{"'%zz'.unescapeUrl()", failsWith("url.unescape")},
	{"url.parse(req.url).host", "api.example.com:8443"},
	{"'https://x.io/p?q=1'.parseUrl().query_params.q", []string{"1"}},
	{"'https://x.io'.isURL()", true},
	{"'not a url'.isURL()", false},
	// lists and maps
	{"[1, 2, 3].all(x, x > 0)", true},
	{"[1, 2, 3].exists(x, x > 2)", true},
	{"[1, 2, 3].exists_one(x, x > 1)", false},
	{"[1, 2, 3].filter(x, x > 1)", []any{int64(2), int64(3)}},
	{"[1, 2, 3].map(x, x * 2)", []any{int64(2), int64(4), int64(6)}},
	{"[1, 2, 3].map(x, x > 1, x * 2)", []any{int64(4), int64(6)}},
	{"{'a': 1}.exists(k, k == 'a')", true},
	{"size([1, 2]) + 'abc'.size()", int64(5)},
	{"['a', 'b'].join('-')", "a-b"},
	{"[].join()", ""},
	{"[1, 2, 3].slice(1, 2)", []any{int64(2)}},
	{"[1, [2, [3, 4]]].flatten()", []any{int64(1), int64(2), []any{int64(3), int64(4)}}},
	{"[3, 1, 2].sort()", []any{int64(1), int64(2), int64(3)}},
	{"['bb', 'a'].sortBy(x, size(x))", []any{"a", "bb"}},
	{"[1, 1, 2].distinct()", []any{int64(1), int64(2)}},
	{"lists.range(3)", []any{int64(0), int64(1), int64(2)}},
	// strings
	{"'abc'.matches('^a')", true},
	{"matches('abc', 'c$')", true},
	{"'abc'.startsWith('ab') && 'abc'.endsWith('bc') && 'abc'.contains('')", true},
	{"'hello'.charAt(1)", "e"},
	{"'hello'.charAt(5)", ""},
	{"'hello'.indexOf('l')", int64(2)},
	{"'hello'.lastIndexOf('l')", int64(3)},
	{"'hello'.lastIndexOf('ello', 20)", int64(-1)}, // cel-go's answer; the documentation says error
	{"'%s is %d'.format(['x', 1])", "x is 1"},
	{"'hello mellow'.split()", []string{"hello", "mellow"}},
	{"'a,b,c'.split(',')", []string{"a", "b", "c"}},
	{"'a,b,c'.split(',', 2)", []string{"a", "b,c"}}, // Go's SplitN, as cel-go
	{"'aaa'.replace('a', 'b', 2)", "bba"},
	{"'hello'.substring(1, 3)", "el"},
	{"'  x '.trim()", "x"},
	{"'abc'.reverse()", "cba"},
	{"'AbC'.lowerAscii() + 'AbC'.upperAscii()", "abcABC"},
	{"'ÄBC'.lower()", "äbc"},
	{"'äbc'.upper()", "ÄBC"},
	{`strings.quote('a"b')`, `"a\"b"`},
	{"'10.1.2.3'.isPrivateIp()", true},
	{"'8.8.8.8'.isPrivateIp()", false},
	{"'fc00::1'.isPrivateIp()", false},
	// timestamps and durations
	{"timestamp('2026-03-04T05:06:07.089Z').getDate()", int64(4)},
	{"timestamp('2026-03-04T05:06:07.089Z').getDayOfMonth()", int64(3)},
	{"timestamp('2026-03-04T05:06:07.089Z').getDayOfWeek()", int64(3)},
	{"timestamp('2026-03-04T05:06:07.089Z').getDayOfYear()", int64(62)},
	{"timestamp('2026-03-04T05:06:07.089Z').getFullYear()", int64(2026)},
	{"timestamp('2026-03-04T05:06:07.089Z').getMonth()", int64(2)},
	{"timestamp('2026-03-04T05:06:07.089Z').getHours('America/New_York')", int64(0)},
	{"timestamp('2026-03-04T05:06:07.089Z').getMinutes()", int64(6)},
	{"timestamp('2026-03-04T05:06:07.089Z').getSeconds()", int64(7)},
	{"timestamp('2026-03-04T05:06:07.089Z').getMilliseconds()", int64(89)},
	{"duration('1.234s').getMilliseconds()", int64(1234)}, // cel-go's answer; the documentation says 234
	{"timestamp(time.now).getFullYear()", int64(2026)},
	// random, secrets, utility
	{"rand.double() >= 0.0 && rand.double() < 1.0", true},
	{"rand.int() in [0, 1]", true},
	{"rand.int(5, 5)", int64(5)},
	{"rand.int(0, 9223372036854775807) >= 0", true}, // the span once overflowed int64
	{"rand.int(3, 1)", failsWith("rand.int")},
	{"secrets.get('v', 'n')", "s3cret"},
	{"secrets.get('v', 'x')", failsWith("no such secret")},
	{"has(req.headers['X-Api-Key'])", true},
	{"has(req.headers['x-missing'])", false},
	{"has(req.url.port)", true},
	{"has(req.url.query_params.a)", true},
	{"has(getReqHeader('x-api-key')[1])", true}, // has() of a list index (once refused: '@in' on a list)
	{"has(getReqHeader('x-api-key')[2])", false},
	{"has(req.url.query_params['a'])", true},
	{"has(dyn([1, 2])['a'])", failsWith("has(x[k]): a list's index must be an int, not string")},
	{"[{'a': 1}].exists(req, has(req.a))", true}, // a loop variable named like a namespace
	{"inCidrRange('10.1.2.3', '10.0.0.0/8')", true},
	{"inCidrRange('::ffff:10.1.2.3', '10.0.0.0/8')", true},
	{"inCidrRange('10.1.2.3', 'bogus')", false},
	{"inCidrRange('bogus', '10.0.0.0/8')", false},
	{"inCidrRanges(conn.client_ip, ['bad', '203.0.113.0/24'])", true},
	{"inCidrRanges(conn.client_ip, [])", false},
	// case-insensitive header map, as the documentation's examples use it
	{"req.headers['User-Agent'][0].startsWith('Mozilla')", true},
	{"'Authorization' in req.headers", false},
	{"'X-API-KEY' in req.headers", true},
}

func TestFunctions(t *testing.T) {
	t.Parallel()
	r, opts := fullRequest(t)
	for _, tt := range funcTests {
		t.Run(tt.expr, func(t *testing.T) {
			got := evalExpr(t, tt.expr, r, opts...)
			if w, ok := tt.want.(failsWith); ok {
				if !types.IsError(got) || !strings.Contains(got.(*types.Err).Error(), string(w)) {
					t.Errorf("got %v; want an error containing %q", got, w)
				}
				return
			}
			if types.IsError(got) {
				t.Fatalf("error: %v", got)
			}
			if diff := cmp.Diff(tt.want, native(t, got.Value())); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

// native turns CEL lists of values into Go slices, for comparison.
func native(t *testing.T, v any) any {
	switch v := v.(type) {
	case []any:
		out := make([]any, len(v))
		for i, e := range v {
			out[i] = native(t, e)
		}
		return out
	case []ref.Val: // lists the interpreter builds
		out := make([]any, len(v))
		for i, e := range v {
			out[i] = native(t, e.Value())
		}
		return out
	}
	return v
}

// TestFunctionsComplete checks that every macro and function of the
// catalogue is called by some row of funcTests.
func TestFunctionsComplete(t *testing.T) {
	t.Parallel()
	if n := len(functionNames); n < 90 {
		t.Errorf("only %d functions in the catalogue", n)
	}
	for _, name := range functionNames {
		found := false
		for _, tt := range funcTests {
			i := strings.Index(tt.expr, name+"(")
			if i >= 0 && (i == 0 || !isIdentByte(tt.expr[i-1]) || strings.Contains(name, ".")) {
				found = true
				break
			}
		}
		if !found {
			t.Errorf("no test calls %s", name)
		}
	}
}

func isIdentByte(c byte) bool {
	return c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9'
}

// TestUnknownNames checks the compile errors for names that do not exist:
// the whole name, and the closest valid names.
func TestUnknownNames(t *testing.T) {
	t.Parallel()
	tests := []struct {
		expr string
		want string
	}{
		{"req.cookie['a'][0].value", "unknown name req.cookie; did you mean req.cookies"},
		{"conn.geo.country_cod", "unknown name conn.geo.country_cod; did you mean conn.geo.country_code"},
		{"req.url.schem", "did you mean req.url.scheme"},
		{"getReqCookies('a')", "unknown name getReqCookies; did you mean getReqCookie"},
		{"hash.md55('a')", "unknown name hash.md55; did you mean hash.md5"},
		{"res.status_code", "res.* belongs to on_http_response"},
		{"vars.user", "set-vars, which this package does not run"},
		{"actions.ngrok.jwt_validation.tokens[0].payload.sub", "only the rate-limit action's results"},
		{"rand.int(1)", "rand.int is called with the wrong number of arguments"},
		{"getReqCookie()", "getReqCookie is called with the wrong number of arguments"},
		{"getReqHeader(1)", "found no matching overload for 'getReqHeader' applied to '(int)'"},
		{"secrets.get(1, 2)", "found no matching overload for 'secrets.get' applied to '(int, int)'"},
		{"__acctapi_request", "unknown name __acctapi_request"},
		// A literal pattern that cannot run is refused when compiled: one
		// over the size bound would put every request in the over-budget
		// bucket, making a per-client limit global (a review).
		{"req.url.path.matches('[')", "does not compile: matches: error parsing regexp: missing closing ]"},
		{"req.url.path.matches('^/' + '[a-z]{1,1000}') || req.url.path.matches('" + strings.Repeat("[a-z]{1,1000}", 21) + "')", "does not compile: matches: the pattern is"},
		// A bytes key, which CEL's maps do not take: cel-go's constant
		// folding panicked on it (a black-box check).
		{"{b'a': 1}.size()", "bucket_key[0]: a map key must be an int, uint, bool or string, not bytes"},
		{"{req.host: 1, b'a': 2}.size()", "bucket_key[0]: a map key must be an int, uint, bool or string, not bytes"},
		// Findings of a black-box check: has() of an unknown name named
		// only its root; a name moved under req.url, a JavaScript
		// spelling and an abbreviation found no close names.
		{"has(req.cookie)", "unknown name req.cookie; did you mean req.cookies"},
		{"has(conn.geo.citty)", "unknown name conn.geo.citty; did you mean conn.geo.city"},
		{"req.path", "unknown name req.path; did you mean req.url.path"},
		{"req.url.path.includes('/x')", "did you mean contains?"},
		{"conn.tls.ja4", "conn.tls.ja4_fingerprint"},
		{"__acctapi_request.x", "unknown name __acctapi_request"},
		{".__acctapi_request == .__acctapi_request ? 'a' : 'b'", "unknown name __acctapi_request"},
		{"__getReqHeader(.__acctapi_request, 'X')[0]", "unknown name __acctapi_request"},
		// A member of a cookie, a TLS extension or a parsed URL, which CEL
		// types as maps of string to dyn: a misspelt one compiled, then
		// failed on every request, and a key that fails never limits.
		{"getReqCookie('s').valu", `"valu" is no member of a cookie, a TLS extension or a parsed URL; did you mean value`},
		{"req.cookies['s'][0].nmae", "did you mean name"},
		{"req.cookies['s'].map(c, c.vlaue).join(',')", "did you mean value"},
		{"has(getReqCookie('s').http_olny) ? 'a' : 'b'", "did you mean http_only"},
		{"getReqCookie('s')['valeu']", "did you mean value"},
		{"url.parse(req.url.raw).hots", "did you mean host"},
		{"string(conn.tls.client.extensions[0].idd)", "did you mean id"},
		{"conn.tls.client.extensions.map(e, string(e.critcal)).join(',')", "did you mean critical"},
		{"req.url.raw.parseUrl().hots", "did you mean host"},
		// Constants a variable never equals: the comparison compiled and
		// never matched (a misuse review's req.method == 'get').
		{"req.method == 'get' ? 'a' : 'b'", `req.method is "GET" for a GET; "get" is taken for a typo`},
		{"req.method in ['GET', 'Post'] ? 'a' : 'b'", `req.method is "POST" for a POST; "Post" is taken for a typo`},
		{"'patch' != req.method ? 'a' : 'b'", `"patch" is taken for a typo`},
		{"req.url.scheme == 'HTTPS' ? 'a' : 'b'", `req.url.scheme is lower case ("https"), never "HTTPS"`},
		{"req.url.scheme == 'Https' ? 'a' : 'b'", `never "Https"`},
		{"req.url.path == 'api' ? 'a' : 'b'", `req.url.path starts with /, never equals "api" (write "/api")`},
	}
	for _, tt := range tests {
		_, err := NewLimit(keyConfig(tt.expr))
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%s: error %v; want it to contain %q", tt.expr, err, tt.want)
		}
	}
}

// TestCostBudget checks that an expression whose work has no small bound
// stops at the cost limit: the bucket key fails to evaluate, and the
// request is counted in the bucket of all over-budget requests.
func TestCostBudget(t *testing.T) {
	t.Parallel()
	cfg := keyConfig("lists.range(10000).map(x, lists.range(10000).map(y, x + y)).size()")
	cfg.Capacity = 1
	l := mustLimit(t, cfg)
	r := newRequest("GET", "http://h/")
	for i := range 2 {
		res := l.EvaluateAt(r, base)
		if res.ErrorCode != CodeEvalFailed || res.Limited != (i == 1) || !strings.Contains(res.ErrorMessage, "cost limit") {
			t.Fatalf("request %d: result %+v; want an evaluation error for the cost limit, limited %v", i, res, i == 1)
		}
	}
	// lists.range is capped, so even one call cannot build a huge list.
	res := mustLimit(t, keyConfig("lists.range(100000000).size()")).EvaluateAt(r, base)
	if res.ErrorCode != CodeEvalFailed {
		t.Errorf("lists.range(1e8): %+v; want an evaluation error", res)
	}
}

// TestCostOfWhatIsBuilt pins findings of a black-box check: functions that
// build text from their arguments (basic_auth.encode, '%s'.format,
// queryString.encode) were charged one unit a call, so an expression
// calling one a few hundred times on a 1 MiB header ran untracked and
// allocated gigabytes (lists.range(10000) ran the process out of
// memory); and a bucket key that is a list of a thousand references to one
// header joined into a gigabyte. Each now stops with an evaluation error:
// the call is charged by what it builds, and a key by its length.
func TestCostOfWhatIsBuilt(t *testing.T) {
	t.Parallel()
	big := strings.Repeat("a", 1<<20-64)
	for _, tt := range []struct{ expr, want string }{
		{"lists.range(10000).map(i, basic_auth.encode(getReqHeader('x')[0], getReqHeader('x')[0])).size()", "cost limit"},
		{"lists.range(10000).map(i, '%s'.format([getReqHeader('x')[0]])).size()", "cost limit"},
		{"lists.range(10000).map(i, queryString.encode({'a': getReqHeader('x')[0]})).size()", "cost limit"},
		{"lists.range(1000).map(i, getReqHeader('x')[0])", "longer than 1048576 bytes"},
		{"[getReqHeader('x')[0], getReqHeader('x')[0]]", "longer than 1048576 bytes"},
	} {
		res := wantEvalError(t, tt.expr, tt.want, map[string]string{"X": big})
		if len(res.BucketKey) > 1<<20 {
			t.Errorf("%s: a bucket key of %d bytes", tt.expr, len(res.BucketKey))
		}
	}
	// Under the limit, the same functions still work.
	r := newRequest("GET", "http://h/")
	r.Header.Set("X", "k")
	for _, expr := range []string{"basic_auth.encode(getReqHeader('x')[0], 'p')", "'%s-1'.format([getReqHeader('x')[0]])", "lists.range(3).map(i, getReqHeader('x')[0])"} {
		if res := mustLimit(t, keyConfig(expr)).EvaluateAt(r, base); res.ErrorCode != "" || res.BucketKey == "" {
			t.Errorf("%s: %+v; want a bucket key", expr, res)
		}
	}
}

// TestMatchesBounded pins a finding of a black-box check: one matches call
// ran for seconds (a{1000}b over a 1 MiB header: 5 s; a pattern taken from
// the request: 48 s), charged only after it returned. matches now refuses
// a call whose string length times compiled pattern size exceeds
// maxMatchSteps, before running it, and charges what it runs.
func TestMatchesBounded(t *testing.T) {
	t.Parallel()
	big := strings.Repeat("a", 1<<20-64)
	for _, tt := range []struct{ expr, want string }{
		{"getReqHeader('x')[0].matches('a{1000}b')", "over the limit"},
		{"matches(getReqHeader('x')[0], getReqHeader('p')[0])", "over the limit"},
		{"getReqHeader('x')[0].matches(getReqHeader('q')[0])", "missing closing ]"},
		{"lists.range(10000).map(i, getReqHeader('x')[0].substring(0, 10000).matches('a{100}b')).size()", "cost limit"},
	} {
		wantEvalError(t, tt.expr, tt.want, map[string]string{"X": big, "P": strings.Repeat("a", 1000) + "b", "Q": "["})
	}
	r := newRequest("GET", "http://h/api/v2/users")
	for expr, want := range map[string]string{
		"req.url.path.matches('^/api/v[0-9]+/') ? 'api' : 'other'": "api",
		"matches(req.url.path, '^/web/') ? 'web' : 'other'":        "other",
		"string(req.url.path.matches(dyn('users$')))":              "true",
	} {
		res := mustLimit(t, keyConfig(expr)).EvaluateAt(r, base)
		if res.ErrorCode != "" || !strings.HasSuffix(res.BucketKey, want) {
			t.Errorf("%s: %+v; want the key %q", expr, res, want)
		}
	}
}

// TestUntrackedOnlyWhenModelled checks which expressions may run without
// the runtime cost limit: only those made of what the cost estimate
// models.
func TestUntrackedOnlyWhenModelled(t *testing.T) {
	t.Parallel()
	for expr, want := range map[string]bool{
		"req.url.path.startsWith('/v1/')":                   true,
		"req.host + ':' + string(req.url.port)":             true,
		"getReqHeader('x')[0].lower()":                      true,
		"hash.md5(req.host)":                                true,
		"req.url.path.matches('^/api/')":                    false,
		"'%s'.format([req.host])":                           false,
		"basic_auth.encode(req.host, 'p')":                  false,
		"lists.range(3).map(i, req.host)":                   false,
		"getReqHeader('x').exists(h, h == 'a') ? 'a' : 'b'": false,
		"['a', 'b'].join(',')":                              false,
	} {
		c, err := compile(expr, nil, nil)
		if err != nil {
			t.Fatalf("%s: %v", expr, err)
		}
		if got := untrackable(c.checked); got != want {
			t.Errorf("%s: untrackable %v, want %v", expr, got, want)
		}
	}
}

// wantEvalError evaluates the bucket key expr on a request with headers
// and wants it to fail to evaluate, not limiting the request, with a
// message containing want. It returns the result.
func wantEvalError(t *testing.T, expr, want string, headers map[string]string) Result {
	t.Helper()
	r := newRequest("GET", "http://h/")
	for k, v := range headers {
		r.Header.Set(k, v)
	}
	res := mustLimit(t, keyConfig(expr)).EvaluateAt(r, base)
	if res.ErrorCode != CodeEvalFailed || res.Limited || !strings.Contains(res.ErrorMessage, want) {
		t.Errorf("%s: %s %s (limited %v); want an evaluation error containing %q", expr, res.ErrorCode, res.ErrorMessage, res.Limited, want)
	}
	return res
}

// TestBoundedBuilders pins a finding of a black-box check: join,
// json.encode and format were charged by what they built after building
// it, so a list of a thousand references to a 1 MiB header, joined,
// allocated about 5 GB in one request before failing. Each builder now
// refuses before building more than maxKeyBytes, and the evaluation
// allocates little more than the request itself (checked by the bytes
// allocated, not by time; the test is not parallel, so nothing else
// allocates meanwhile).
func TestBoundedBuilders(t *testing.T) {
	big := strings.Repeat("a", 1<<20-64)
	r := newRequest("GET", "http://h/")
	r.Header.Set("X", big)
	for range 1000 {
		r.Header.Add("X-Forwarded-For", "1.2.3.4")
	}
	r.Header.Set("X-D", strings.Repeat("1e300,", 999)+"1e300")
	for _, tt := range []struct{ expr, want string }{
		{"getReqHeader('x-forwarded-for').map(ip, getReqHeader('x')[0]).join(',')", "join: the result would be longer than 1048576 bytes"},
		{"lists.range(1000).map(i, getReqHeader('x')[0]).join()", "join: the result would be longer"},
		{"getReqHeader('x-forwarded-for').map(ip, getReqHeader('x')[0]).encodeJson()", "json.encode: the result would be longer"},
		{"json.encode({'a': lists.range(1000).map(i, getReqHeader('x')[0])})", "json.encode: the result would be longer"},
		{"'%s'.format([lists.range(1000).map(i, getReqHeader('x')[0])])", "format: the result would be longer"},
		{"'%x'.format([getReqHeader('x')[0]])", "format: the result would be longer"},
		// format writes every digit of a double in a list (1e300: 301
		// bytes); a review built 9 MB past a bound counting 32.
		{"[getReqHeader('x-d')[0].split(',').map(v, double(v))].map(l, '%s'.format([[l, l, l, l]]))[0]", "format: the result would be longer"},
		{"getReqHeader('x')[0].replace('a', 'bb')", "replace: the result would be longer"},
		{"getReqHeader('x')[0].replace('', 'b', 600000)", "replace: the result would be longer"},
		{"queryString.encode({'a': getReqHeader('x')[0], 'b': getReqHeader('x')[0]})", "queryString.encode: the result would be longer"},
		{"queryString.encode({'a': getReqHeader('x')[0].substring(0, 400000).replace('a', '/')})", "queryString.encode: the result would be longer"},
		{"getReqHeader('x')[0].split('')", "split: the result would have more than 1000000 elements"},
		// The key is written once for each value of a list (a second check
		// built 800 MB counting it once).
		{"queryString.encode({getReqHeader('x')[0].substring(0, 400000): ['', '', '']})", "queryString.encode: the result would be longer"},
		{"getReqHeader('x')[0].split('a', 1000001)", "split: the result would have more than"},
	} {
		var res Result
		n := bytesAllocated(func() { res = mustLimit(t, keyConfig(tt.expr)).EvaluateAt(r, base) })
		if res.ErrorCode != CodeEvalFailed || !strings.Contains(res.ErrorMessage, tt.want) {
			t.Errorf("%s: %s %s; want an evaluation error containing %q", tt.expr, res.ErrorCode, res.ErrorMessage, tt.want)
		}
		if n > 16<<20 {
			t.Errorf("%s: allocated %d MiB", tt.expr, n>>20)
		}
	}
	// Numbers count at their size, not at the most a formatted double may
	// take (a second check found 2,100 small ints refused).
	r.Header.Set("X-J", "["+strings.Repeat("1.5,", 2099)+"1.5]")
	for _, expr := range []string{"json.encode(lists.range(2100))", "'%s'.format([lists.range(2100)])", "json.encode(json.decode(getReqHeader('x-j')[0]))"} {
		if res := mustLimit(t, keyConfig(expr)).EvaluateAt(r, base); res.ErrorCode != "" || len(res.BucketKey) < 2100 {
			t.Errorf("%s: %s %s; want a bucket key", expr, res.ErrorCode, trunc.String(res.ErrorMessage, 200))
		}
	}
	// Within the bound they work as cel-go's.
	r.Header.Set("X", "a<b")
	for expr, want := range map[string]string{
		"['a', 'b'].join(',') + ['c'].join()":                                                        "a,bc",
		"getReqHeader('x').encodeJson()":                                                             `["a\u003cb"]`,
		"'%s-%x-%d'.format([getReqHeader('x')[0], 'hi', 3])":                                         "a<b-6869-3",
		"'aaa'.replace('a', 'bb') + 'aaa'.replace('a', 'b', 1)":                                      "bbbbbbbaa",
		"'a,b,c'.split(',').join('|') + 'abc'.split('').join('.') + 'a,b,c'.split(',', 2).join('|')": "a|b|ca.b.ca|b,c",
		"queryString.encode({'k': getReqHeader('x')[0]})":                                            "k=a%3Cb",
	} {
		res := mustLimit(t, keyConfig(expr)).EvaluateAt(r, base)
		if res.ErrorCode != "" || res.BucketKey != want {
			t.Errorf("%s: %+v; want the key %q", expr, res, want)
		}
	}
}

// TestMatchesPatternFromRequest pins a finding of a black-box check: a
// pattern taken from the request was compiled before the bound was
// checked (a 7 KB a{1000}a{1000}... took 0.7 s and 904 MB), and the error
// quoted the whole pattern. The size is now bounded from the parse tree
// before compiling, patterns are at most 64 KiB, and errors are short.
// Checked by the bytes allocated (the test is not parallel).
func TestMatchesPatternFromRequest(t *testing.T) {
	for _, tt := range []struct{ pattern, want string }{
		{strings.Repeat("a{1000}", 1000), "over the limit"},
		{strings.Repeat("([a-z]{10}){100}", 400), "over the limit"},
		{strings.Repeat("(a|b)", 200_000), "longer than 65536 bytes"},
		{"[" + strings.Repeat("a", 50_000), "missing closing ]"},
	} {
		r := newRequest("GET", "http://h/path")
		r.Header.Set("P", tt.pattern)
		var res Result
		n := bytesAllocated(func() {
			res = mustLimit(t, keyConfig("req.url.path.matches(getReqHeader('p')[0])")).EvaluateAt(r, base)
		})
		if res.ErrorCode != CodeEvalFailed || !strings.Contains(res.ErrorMessage, tt.want) || len(res.ErrorMessage) > 400 {
			t.Errorf("%.20s...: %s %q; want a short evaluation error containing %q", tt.pattern, res.ErrorCode, trunc.String(res.ErrorMessage, 500), tt.want)
		}
		if n > 4<<20 {
			t.Errorf("%.20s...: allocated %d MiB", tt.pattern, n>>20)
		}
	} // Many patterns from the request against an empty string: each may
	// compile to at most maxPatternSteps (a second check found 2,000,000
	// allowed, 2.5 GB a request), and each compile is charged, so the cost
	// limit stops the evaluation after a bounded amount.
	for _, tt := range []struct {
		name    string
		pattern func(i int) string
		n       int
		want    string
	}{
		{"2M steps", func(i int) string { return fmt.Sprintf("(?:%s%d){1000}", strings.Repeat("a", 1980), i) }, 8, "over the limit of 20000"},
		{"18k steps", func(i int) string { return fmt.Sprintf("(?:%s%03d){1000}", strings.Repeat("a", 15), i) }, 300, "cost limit"},
		// Small patterns are cached as they compile; each call is charged
		// for its compile anyway (a review found 20,000 of them allocating
		// 1 GB when only uncached ones were charged).
		{"many small", func(i int) string { return fmt.Sprintf("(?:a%05d){60}", i) }, 3000, "cost limit"},
	} {
		r := newRequest("GET", "http://h/")
		r.Header.Set("X-S", "")
		for i := range tt.n {
			r.Header.Add("X-P", tt.pattern(i))
		}
		var res Result
		n := bytesAllocated(func() {
			res = mustLimit(t, keyConfig("getReqHeader('x-p').exists(p, getReqHeader('x-s')[0].matches(p))")).EvaluateAt(r, base)
		})
		if res.ErrorCode != CodeEvalFailed || !strings.Contains(res.ErrorMessage, tt.want) {
			t.Errorf("%s: %s %q; want an evaluation error containing %q", tt.name, res.ErrorCode, trunc.String(res.ErrorMessage, 300), tt.want)
		}
		if n > 64<<20 {
			t.Errorf("%s: allocated %d MiB", tt.name, n>>20)
		}
	}
}

// TestOverBudgetStillLimits pins a finding of a black-box check: a key
// that handles every failure its inputs can cause,
// getReqHeader('x-forwarded-for')[0].split(',')[0], failed on the
// package's own bound when a client padded the header with a million
// commas, and a key that fails does not limit (contract §7): the padded
// requests went through unlimited. Requests whose key a bound stops now
// share one bucket; other failures still do not limit.
func TestOverBudgetStillLimits(t *testing.T) {
	t.Parallel()
	cfg := keyConfig("hasReqHeader('x-forwarded-for') ? getReqHeader('x-forwarded-for')[0].split(',')[0].trim() : conn.client_ip")
	cfg.Capacity = 1
	l := mustLimit(t, cfg)
	for i, pad := range []string{strings.Repeat(",", 1_040_000), strings.Repeat(",", 1_040_001)} {
		r := newRequest("GET", "http://h/")
		r.Header.Set("X-Forwarded-For", "1.2.3.4"+pad)
		res := l.EvaluateAt(r, base)
		if res.ErrorCode != CodeEvalFailed || !strings.Contains(res.ErrorMessage, "split: the result would have more than") || res.Limited != (i == 1) || res.Reject != (i == 1) {
			t.Errorf("padded request %d: %+v; want an evaluation error, limited %v", i, res, i == 1)
		}
	}
	// A failure the request's data causes within the bounds does not limit,
	// at a capacity of one.
	missing := keyConfig("getReqHeader('x-missing')[0]")
	missing.Capacity = 1
	l = mustLimit(t, missing)
	for range 3 {
		if res := l.EvaluateAt(newRequest("GET", "http://h/"), base); res.ErrorCode != CodeEvalFailed || res.Limited {
			t.Errorf("missing header: %+v; want an evaluation error, not limited", res)
		}
	}
}

// testCookie is the CEL value, as Go values, of a request cookie.
func testCookie(name, value string) map[string]any {
	return cookieValue(&http.Cookie{Name: name, Value: value})
}

// TestObjectMembersCompile checks that what checkObjectFields and the
// internal name's check let through: every member of the catalogue's
// objects, a map literal's own members, and the internal name's spelling
// inside a string literal (a review saw that refused).
func TestObjectMembersCompile(t *testing.T) {
	t.Parallel()
	for _, expr := range []string{
		"getReqCookie('s').value + req.cookies['s'][0].name + string(getReqCookie('s').http_only) + string(has(getReqCookie('s').same_site))",
		"string(conn.tls.client.extensions.size() > 0 && conn.tls.client.extensions[0].critical)",
		"url.parse(req.url.raw).hostname + url.parse(req.url.raw)['raw_query']",
		"string({'a': 1, 'z': 'x'}.z)",
		// Maps of the user's own, reached through a variable or an index
		// (a review saw these refused as cookies).
		"[{'k': 'a', 'n': 1}].exists(m, m.k == req.host) ? 'a' : 'b'",
		"[{'k': 'a', 'n': 1}][0].k",
		"string((req.host == 'x' ? {'k': 'a', 'n': 1} : {'k': 'b', 'n': 2}).k)",
		"[{'n': 'a', 'w': 1}].sortBy(m, m.w)[0].n",
		"req.host != '__acctapi_request' ? 'a' : '__acctapi_request'",
	} {
		if _, err := NewLimit(keyConfig(expr)); err != nil {
			t.Errorf("%s: %v", expr, err)
		}
	}
}

// TestConstantsThatCanEqual: the checks of constants a variable never
// equals refuse only those: other methods, an upper-case method in any
// case-sensitive form, "*" and "" paths, and other variables compile.
func TestConstantsThatCanEqual(t *testing.T) {
	t.Parallel()
	for _, expr := range []string{
		"req.method == 'GET' ? 'a' : 'b'",
		"req.method in ['PURGE', 'purge'] ? 'a' : 'b'", // not a standard method: a client may send it so
		"req.url.scheme == 'https' ? 'a' : 'b'",
		"req.url.path in ['/api', '*', ''] ? 'a' : 'b'",
		"req.host == 'Example.COM' ? 'a' : 'b'",
		"req.url.path.startsWith('api') ? 'a' : 'b'",
	} {
		if _, err := NewLimit(keyConfig(expr)); err != nil {
			t.Errorf("%s: %v", expr, err)
		}
	}
}
