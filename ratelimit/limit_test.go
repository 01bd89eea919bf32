package ratelimit

import (
	"context"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/acctapi/acctapi"
)

func newRequest(method, target string) *http.Request {
	r := httptest.NewRequest(method, target, nil)
	r.RemoteAddr = "203.0.113.7:51234"
	return r
}

func mustLimit(t testing.TB, cfg Config, opts ...LimitOption) *Limit {
	t.Helper()
	l, err := NewLimit(cfg, opts...)
	if err != nil {
		t.Fatal(err)
	}
	return l
}

// actionLimit is mustLimit for a Limit as a Policy builds one for a later
// action: its bucket keys may read the result variables (which NewLimit
// refuses, see TestNewLimitResultReadTooEarly), so that tests over the
// whole catalogue reach them.
func actionLimit(t testing.TB, cfg Config, opts ...LimitOption) *Limit {
	t.Helper()
	o, err := buildOptions(opts)
	if err != nil {
		t.Fatal(err)
	}
	l, err := newLimit(cfg, o)
	if err != nil {
		t.Fatal(err)
	}
	return l
}

func keyConfig(keys ...string) Config {
	c := validConfig()
	c.BucketKey = keys
	return c
}

// TestBucketKeyValues evaluates single bucket keys, each as written (bare
// variables and literal headers take a direct path) and as [expr][0], which
// always goes through CEL, and checks both give the same key.
func TestBucketKeyValues(t *testing.T) {
	t.Parallel()
	r := newRequest("POST", "http://api.example.com/v1/things?b=2&a=1&a=3")
	r.Header.Set("User-Agent", "curl/8")
	r.Header.Add("X-Api-Key", "k1")
	r.Header.Add("X-Api-Key", "k2")
	r.Header.Set("X-Empty", "")
	r = r.WithContext(context.WithValue(r.Context(), http.LocalAddrContextKey,
		&net.TCPAddr{IP: net.ParseIP("192.0.2.1"), Port: 443}))
	tests := []struct {
		expr string
		want string
	}{
		{"req.host", "api.example.com"},
		{"req.method", "POST"},
		{"req.url", "http://api.example.com/v1/things?b=2&a=1&a=3"},
		{"req.url.path", "/v1/things"},
		{"req.url.query", "b=2&a=1&a=3"},
		{"req.url.host", "api.example.com"},
		{"req.user_agent", "curl/8"},
		{"conn.client_ip", "203.0.113.7"},
		{"conn.server_ip", "192.0.2.1"},
		// Non-strings use their CEL string form.
		{"conn.client_port", "51234"},
		{"conn.server_port", "443"},
		{"req.url.path == '/v1'", "false"},
		{"1.5", "1.5"},
		// Lists join with ",", null is "".
		{"getReqHeader('x-api-key')", "k1,k2"},
		{"getReqHeader('X-API-KEY')", "k1,k2"},
		{"getReqHeader('x-missing')", ""},
		{"req.headers['x-api-key']", "k1,k2"},
		{"getQueryParam('a')", "1,3"},
		{"[getQueryParam('b'), ['x', 'y']]", "2,x,y"},
		{"hasReqHeader('x-empty')", "true"},
		{"hasQueryParam('zzz')", "false"},
		{"null", ""},
		{"'x-api-key' in req.headers", "true"},
		// Go keeps Host out of r.Header; the header functions read it
		// from r.Host, as the documentation's example expects.
		{"hasReqHeader('host') ? getReqHeader('host')[0] : 'unknown'", "api.example.com"},
	}
	for _, tt := range tests {
		t.Run(tt.expr, func(t *testing.T) {
			t.Parallel()
			for _, expr := range []string{tt.expr, "[" + tt.expr + "][0]"} {
				res := mustLimit(t, keyConfig(expr)).EvaluateAt(r, base)
				if res.ErrorCode != "" {
					t.Fatalf("%s: %s", expr, res.ErrorMessage)
				}
				if res.BucketKey != tt.want {
					t.Errorf("%s: bucket key %q, want %q", expr, res.BucketKey, tt.want)
				}
			}
		})
	}
}

func TestBucketKeyCombination(t *testing.T) {
	t.Parallel()
	l := mustLimit(t, keyConfig("getReqHeader('x-a')", "getReqHeader('x-b')"))
	req := func(a, b string) *http.Request {
		r := newRequest("GET", "http://h/")
		r.Header.Set("X-A", a)
		r.Header.Set("X-B", b)
		return r
	}
	k1 := l.EvaluateAt(req("a|b", "c"), base).BucketKey
	k2 := l.EvaluateAt(req("a", "b|c"), base).BucketKey
	if k1 == k2 {
		t.Fatalf("(a|b, c) and (a, b|c) share the key %q", k1)
	}
	if diff := cmp.Diff([]string{"3:a|b,1:c", "1:a,3:b|c"}, []string{k1, k2}); diff != "" {
		t.Errorf("keys (-want +got):\n%s", diff)
	}
}

// TestEvaluateSteps runs requests through a Limit at scripted times.
func TestEvaluateSteps(t *testing.T) {
	t.Parallel()
	cfg := keyConfig("req.host")
	cfg.Capacity = 2
	l := mustLimit(t, cfg)
	steps := []struct {
		at   time.Duration
		host string
		want Result
	}{
		{0, "a", Result{BucketKey: "a", Remaining: 1}},
		{time.Second, "a", Result{BucketKey: "a", Remaining: 0}},
		{2 * time.Second, "a", Result{BucketKey: "a", Limited: true, Reject: true, RetryAfter: 58 * time.Second}},
		{2 * time.Second, "b", Result{BucketKey: "b", Remaining: 1}},
		{60 * time.Second, "a", Result{BucketKey: "a", Remaining: 0}}, // the first left at 60s
	}
	for i, s := range steps {
		r := newRequest("GET", "http://"+s.host+"/")
		if diff := cmp.Diff(s.want, l.EvaluateAt(r, at(s.at))); diff != "" {
			t.Errorf("step %d (-want +got):\n%s", i, diff)
		}
	}
}

// TestEnforceFalse checks that enforce: false counts exactly as enforcing
// does, and only leaves Reject false.
func TestEnforceFalse(t *testing.T) {
	t.Parallel()
	cfg := keyConfig("conn.client_ip")
	cfg.Capacity = 3
	enforcing := mustLimit(t, cfg)
	f := false
	cfg.Enforce = &f
	shadow := mustLimit(t, cfg)
	r := newRequest("GET", "http://h/")
	limited := 0
	for i := range 200 {
		now := at(time.Duration(i) * 700 * time.Millisecond)
		want := enforcing.EvaluateAt(r, now)
		got := shadow.EvaluateAt(r, now)
		if got.Reject {
			t.Fatalf("request %d rejected with enforce false", i)
		}
		want.Reject = false
		if diff := cmp.Diff(want, got); diff != "" {
			t.Fatalf("request %d (-enforcing +shadow):\n%s", i, diff)
		}
		if got.Limited {
			limited++
		}
	}
	if limited == 0 {
		t.Error("no request was limited; the test does not exercise the limit")
	}
}

func TestEvaluationError(t *testing.T) {
	t.Parallel()
	cfg := keyConfig("req.host", "getReqHeader('x-missing')[0]")
	cfg.Capacity = 1
	l := mustLimit(t, cfg)
	r := newRequest("GET", "http://h/")
	for range 3 {
		res := l.EvaluateAt(r, base)
		if res.Limited || res.Reject || res.ErrorCode != CodeEvalFailed {
			t.Fatalf("result %+v; want not limited, with error code %s", res, CodeEvalFailed)
		}
		if !strings.HasPrefix(res.ErrorMessage, "failed to evaluate CEL expression on bucket_key[1] for rate-limit at runtime: ") {
			t.Errorf("message %q", res.ErrorMessage)
		}
	}
	if n := l.Limiter().Len(); n != 0 {
		t.Errorf("%d buckets after failed evaluations; want none", n)
	}
}

func TestWithClientIP(t *testing.T) {
	t.Parallel()
	trusted := func(r *http.Request) string {
		// Behind one trusted proxy: the last address it appended.
		xff := r.Header.Values("X-Forwarded-For")
		if len(xff) == 0 {
			host, _, _ := net.SplitHostPort(r.RemoteAddr)
			return host
		}
		parts := strings.Split(xff[len(xff)-1], ",")
		return strings.TrimSpace(parts[len(parts)-1])
	}
	l := mustLimit(t, keyConfig("conn.client_ip"), WithClientIP(trusted))
	r := newRequest("GET", "http://h/")
	r.Header.Set("X-Forwarded-For", "198.51.100.1, 198.51.100.2")
	if got := l.EvaluateAt(r, base).BucketKey; got != "198.51.100.2" {
		t.Errorf("bucket key %q, want the proxy's last address", got)
	}
	l2 := mustLimit(t, keyConfig("conn.client_ip + ' ' + string(conn.client_port)"), WithClientIP(trusted))
	if got := l2.EvaluateAt(r, base).BucketKey; got != "198.51.100.2 51234" {
		t.Errorf("client address and port %q, want the proxy's last address and the connection's port", got)
	}
}

// TestWithClientIPNotAnAddress pins a review's finding: a WithClientIP
// function returning r.RemoteAddr (host:port) gave every connection its
// own bucket, so a client lifted its limit by reconnecting, and one
// returning "" put every client in one bucket, both without a word. Any
// answer that is not an address now fails conn.client_ip, loudly, and the
// requests share one bucket (stricter, never looser), directly read and
// through CEL alike.
func TestWithClientIPNotAnAddress(t *testing.T) {
	t.Parallel()
	for _, fn := range []func(*http.Request) string{
		func(r *http.Request) string { return r.RemoteAddr },
		func(*http.Request) string { return "" },
		func(*http.Request) string { return "unknown" },
	} {
		for _, key := range []string{"conn.client_ip", "conn.client_ip + ''"} {
			cfg := keyConfig(key)
			cfg.Capacity = 1
			l := mustLimit(t, cfg, WithClientIP(fn))
			for i, port := range []string{"40001", "40002", "40003"} {
				r := newRequest("GET", "http://h/")
				r.RemoteAddr = "203.0.113.9:" + port
				res := l.EvaluateAt(r, base)
				if res.ErrorCode != CodeEvalFailed || !strings.Contains(res.ErrorMessage, "WithClientIP's function returned") {
					t.Fatalf("%s, %q: result %+v; want %s naming WithClientIP", key, fn(r), res, CodeEvalFailed)
				}
				if res.Limited != (i > 0) {
					t.Errorf("%s, %q, request %d: limited %v; want the requests to share one bucket of capacity 1", key, fn(r), i, res.Limited)
				}
			}
		}
	}
	// An address is taken as given, IPv6 included.
	l := mustLimit(t, keyConfig("conn.client_ip"), WithClientIP(func(*http.Request) string { return "2001:db8::1" }))
	if res := l.EvaluateAt(newRequest("GET", "http://h/"), base); res.ErrorCode != "" || res.BucketKey != "2001:db8::1" {
		t.Errorf("IPv6 address: %+v", res)
	}
}

// TestEvaluateRequestWithoutURL pins a review's finding: a request built
// by hand without a URL made req.url.* panic, and a nil request panicked
// in most variables. The first is evaluated as for the URL "", the second
// refused in the result.
func TestEvaluateRequestWithoutURL(t *testing.T) {
	t.Parallel()
	for _, key := range []string{"req.url.path", "req.url.query", "req.url.raw", "req.url.host", "req.url.scheme", "req.url.port", "req.url.query_params['a']", "req.host", "req.method"} {
		cfg := keyConfig(key)
		var calls int
		l := mustLimit(t, cfg, WithDecisionHook(func(*http.Request, string, Result) { calls++ }))
		res := l.EvaluateAt(&http.Request{Method: "GET", Host: "h"}, base)
		// A value the URL lacks is an ordinary evaluation error.
		if strings.Contains(res.ErrorMessage, "internal error") || res.ErrorCode != "" && !strings.Contains(res.ErrorMessage, "no such key") && !strings.Contains(res.ErrorMessage, "is absent") {
			t.Errorf("%s, no URL: %+v", key, res)
		}
		res = l.EvaluateAt(nil, base)
		if res.ErrorCode != CodeEvalFailed || !strings.Contains(res.ErrorMessage, "nil *http.Request") {
			t.Errorf("%s, nil request: %+v", key, res)
		}
		if calls != 1 {
			t.Errorf("%s: the hook ran %d times; want once (not for the nil request)", key, calls)
		}
		if n := l.Limiter().Len(); n > 1 {
			t.Errorf("%s: %d buckets; want at most the one request's", key, n)
		}
	}
}

// TestConfigCopy pins a review's finding: Config's copy shared Enforce
// with the limit, so setting it changed what Config reported but not what
// the limit did.
func TestConfigCopy(t *testing.T) {
	t.Parallel()
	cfg := validConfig()
	off := false
	cfg.Enforce = &off
	l := mustLimit(t, cfg)
	c := l.Config()
	*c.Enforce = true
	c.BucketKey[0] = "req.host"
	if got := l.Config(); got.Enforced() || got.BucketKey[0] == "req.host" {
		t.Errorf("Config after changing a copy: %+v; want unchanged", got)
	}
}

func TestEvaluateAllocs(t *testing.T) {
	r := newRequest("GET", "http://api.example.com/")
	r.Header.Set("X-Api-Key", "k_1234567890abcdef")
	tests := []struct {
		name string
		keys []string
		max  float64
	}{
		{"req.host", []string{"req.host"}, 0},
		{"CEL expression", []string{"getReqHeader('x-api-key')"}, 2},
		{"three keys", []string{"req.host", "conn.client_ip", "getReqHeader('x-api-key')"}, 4},
	}
	for _, tt := range tests {
		cfg := keyConfig(tt.keys...)
		cfg.Capacity = MaxCapacity
		l := mustLimit(t, cfg)
		got := testing.AllocsPerRun(100, func() { l.EvaluateAt(r, base) })
		if got > tt.max {
			t.Errorf("%s: %v allocations per evaluation, want <= %v", tt.name, got, tt.max)
		}
	}
}

// TestBucketKeyEveryValueLimits pins a review's finding: a bucket key whose
// value was bytes that are not valid UTF-8 (base64.decode of a header)
// failed to evaluate, "a value of type bytes has no string form", so the
// request was neither limited nor counted and a client escaped the limit
// by sending bad bytes; a dyn key that gives a map (json.decode) failed
// the same way. Bytes now key by their raw contents and a map by its
// sorted entries: each distinct value its own stable bucket, limited.
func TestBucketKeyEveryValueLimits(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		expr, header string
		others       []string // other header values: each a bucket of its own
		want         string   // the bucket key of header
	}{
		{"base64.decode(getReqHeader('X-Token')[0])", "/3VzZXIx", []string{"/3VzZXIy", "dXNlcjE=", "/w==", "/g=="}, "\xffuser1"},
		{"[base64.decode(getReqHeader('X-Token')[0])]", "/3VzZXIx", []string{"/3VzZXIy"}, "\xffuser1"},
		{"json.decode(getReqHeader('X-Token')[0])", `{"b": 2, "a": [1, "x"]}`, []string{`{"a": [1, "x"]}`, `{}`, `[{"a": 1}]`}, "{a:1,x,b:2}"},
	} {
		cfg := keyConfig(tt.expr)
		cfg.Capacity = 1
		l := mustLimit(t, cfg)
		seen := map[string]bool{}
		for i, h := range append([]string{tt.header}, tt.others...) {
			r := newRequest("GET", "http://h/")
			r.Header.Set("X-Token", h)
			for j, wantLimited := range []bool{false, true} {
				res := l.EvaluateAt(r, base)
				if res.ErrorCode != "" || res.Limited != wantLimited {
					t.Fatalf("%s, X-Token %q, request %d: %+v; want limited %v", tt.expr, h, j, res, wantLimited)
				}
				if i == 0 && res.BucketKey != tt.want {
					t.Errorf("%s, X-Token %q: bucket key %q; want %q", tt.expr, h, res.BucketKey, tt.want)
				}
				if j == 0 && seen[res.BucketKey] {
					t.Errorf("%s, X-Token %q: bucket key %q shared with another value", tt.expr, h, res.BucketKey)
				}
				seen[res.BucketKey] = true
			}
		}
	}
}

// TestMapIterationOrdered pins a review's finding: a bucket key built by
// iterating a map the request gives (req.headers.map(k, k)) came out in a
// different order from one identical request to the next, each order a
// bucket of its own, so a client got several times the capacity. Every
// map the environment gives iterates in key order, and so does every map
// literal, constant or not: the same request gives the same key, every
// time.
func TestMapIterationOrdered(t *testing.T) {
	t.Parallel()
	letters := strings.Split("q,w,e,r,t,y,u,i,o,p", ",")
	r := newRequest("GET", "http://h/?"+strings.Join(letters, "=1&")+"=1")
	var cookies, params, obj []string
	for _, l := range letters {
		r.Header.Set("X-"+l, "1")
		cookies = append(cookies, l+"=1")
		params = append(params, l+"=1")
		obj = append(obj, `"`+l+`": {"`+l+`2": 1, "`+l+`1": 2}`)
	}
	r.Header.Set("Cookie", strings.Join(cookies, "; "))
	r.Header.Set("Content-Type", "text/plain; "+strings.Join(params, "; "))
	r.Header.Set("X-Json", "{"+strings.Join(obj, ", ")+"}")
	r.Header.Set("X-Query", strings.Join(params, "&"))
	r.Trailer = http.Header{}
	for _, l := range letters {
		r.Trailer.Set("X-"+l, "1")
	}
	sorted := "e,i,o,p,q,r,t,u,w,y"
	for expr, want := range map[string]string{
		"req.headers.filter(k, k.startsWith('x-') && k.size() == 3)":                                          "x-e,x-i,x-o,x-p,x-q,x-r,x-t,x-u,x-w,x-y",
		"req.trailers.map(k, k)":                                                                              "x-e,x-i,x-o,x-p,x-q,x-r,x-t,x-u,x-w,x-y",
		"req.url.query_params.map(k, k)":                                                                      sorted,
		"req.cookies.map(k, k)":                                                                               sorted,
		"req.content_type.parameters.map(k, k)":                                                               sorted,
		"getReqCookie('q').map(k, k)":                                                                         "domain,expires,http_only,max_age,name,path,same_site,secure,unparsed_attributes,value",
		"json.decode(getReqHeader('x-json')[0]).map(k, k)":                                                    sorted,
		"json.decode(getReqHeader('x-json')[0]).q.map(k, k)":                                                  "q1,q2",
		"queryString.decode(getReqHeader('x-query')[0]).map(k, k)":                                            sorted,
		"url.parse('http://h/?' + getReqHeader('x-query')[0]).query_params.map(k, k)":                         sorted,
		"url.parse('http://h/').map(k, k)":                                                                    "fragment,host,hostname,opaque,path,port,query_params,raw_path,raw_query,scheme,user",
		"{'q': 1, 'w': 1, 'e': 1, 'r': 1, 't': 1, 'y': 1, 'u': 1, 'i': 1, 'o': 1, 'p': 1}.map(k, k)":          sorted,
		"{'q': req.host, 'w': 1, 'e': 1, 'r': 1, 't': 1, 'y': 1, 'u': 1, 'i': 1, 'o': 1, 'p': 1}.map(k, k)":   sorted,
		"[{'q': 1, 'w': 1, 'e': 1, 'r': 1, 't': 1, 'y': 1, 'u': 1, 'i': 1, 'o': 1, 'p': 1}][0].map(k, k)":     sorted,
		"{'b': {'q': 1, 'w': 1, 'e': 1, 'r': 1, 't': 1, 'y': 1, 'u': 1, 'i': 1, 'o': 1, 'p': 1}}.b.map(k, k)": sorted,
		"{3: 1, 'a': 1, true: 1, 2u: 1, 1: 1}.map(k, string(k))":                                              "true,1,3,a,2",
		// Tracked (a comprehension).
		"lists.range(3).map(i, {'b': i, 'a': i}.map(k, k)[0])": "a,a,a",
	} {
		l := mustLimit(t, keyConfig(expr))
		for i := range 50 {
			res := l.EvaluateAt(r, base)
			if res.ErrorCode != "" || res.BucketKey != want {
				t.Errorf("%s, evaluation %d: key %q (%s); want %q", expr, i, res.BucketKey, res.ErrorMessage, want)
				break
			}
		}
	}
}

// TestOptionMisuse pins a review's findings: a nil option, a nil function,
// an unknown FailureMode, an empty region and the zero Endpoint were
// ignored or taken as "not given" (WithClock(nil) ran on the real clock in
// a test that meant to control it; FailureMode(2) failed open). Each is
// now an error of every constructor that takes the option, naming it.
func TestOptionMisuse(t *testing.T) {
	t.Parallel()
	store := &countingStore{}
	for _, tt := range []struct {
		opt  LimitOption
		want string
	}{
		{nil, "option 1 of 1 is nil"},
		{WithClock(nil), "WithClock: the function is nil"},
		{WithClientIP(nil), "WithClientIP: the function is nil"},
		{WithDecisionHook(nil), "WithDecisionHook: the function is nil"},
		{WithIPIntel(nil), "WithIPIntel: the function is nil"},
		{WithSecrets(nil), "WithSecrets: the function is nil"},
		{WithServerCertificate(nil), "WithServerCertificate: the function is nil"},
		{WithTLSFingerprint(nil), "WithTLSFingerprint: the function is nil"},
		{WithUserAgentParser(nil), "WithUserAgentParser: the function is nil"},
		{WithPodIdentity(nil), "WithPodIdentity: the function is nil"},
		{WithServerRegion(""), "WithServerRegion: the region is empty"},
		{WithEndpoint(Endpoint{}), "WithEndpoint: the Endpoint is the zero value"},
		{WithStore(store, FailureMode(2), 0), "WithStore: unknown FailureMode(2)"},
	} {
		_, err := NewLimit(keyConfig("req.host"), tt.opt)
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("NewLimit with %s: error %v", tt.want, err)
		}
		_, err = NewPolicy([]byte(`{"on_http_request": []}`), tt.opt)
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("NewPolicy with %s: error %v", tt.want, err)
		}
		if o, ok := tt.opt.(Option); ok || tt.opt == nil {
			if _, err := NewLimiter(1, time.Minute, o); err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("NewLimiter with %s: error %v", tt.want, err)
			}
		}
	}
	// The options used as meant still work.
	if _, err := NewLimit(keyConfig("conn.server_region + endpoint.id"), WithClock(time.Now), WithServerRegion("eu"),
		WithEndpoint(Endpoint{ID: "ep_1"}), WithStore(store, FailClosed, 0)); err != nil {
		t.Error(err)
	}
}

// TestNewLimitResultReadTooEarly: a standalone Limit's bucket key that
// reads the action's own results could only read the empty result, as a
// review found of policies; NewLimit refuses it, naming the key.
func TestNewLimitResultReadTooEarly(t *testing.T) {
	t.Parallel()
	_, err := NewLimit(keyConfig("req.host", "string(actions.ngrok.rate_limit.limited)"))
	if fes := acctapi.FieldErrors(err); len(fes) != 1 || fes[0].Field != "bucket_key[1]" || !strings.Contains(err.Error(), "no rate-limit action runs before it") {
		t.Errorf("NewLimit = %v; want one field error on bucket_key[1]", err)
	}
}

// TestPolicyRequestWithoutURL: a Policy's handler serves a request built
// by hand without a URL, as Limit.Evaluate does, without a panic.
func TestPolicyRequestWithoutURL(t *testing.T) {
	t.Parallel()
	p, err := NewPolicy([]byte(`{"on_http_request": [{"expressions": ["req.url.path == ''"], "actions": [{"type": "custom-response", "config": {"status_code": 418}}]}]}`))
	if err != nil {
		t.Fatal(err)
	}
	w := httptest.NewRecorder()
	p.Handler(http.NotFoundHandler()).ServeHTTP(w, &http.Request{Method: "GET", Header: http.Header{}})
	if w.Code != 418 {
		t.Errorf("status %d; want the rule for the empty path to answer 418", w.Code)
	}
}

// TestUnusedProviderRefused pins a review's finding: a provider option
// that no expression reads (WithEndpoint for keys on conn.client_ip) was
// accepted and did nothing. NewLimit and NewPolicy refuse it, naming it;
// one that an expression reads, a bucket key's or a rule's, is kept.
func TestUnusedProviderRefused(t *testing.T) {
	t.Parallel()
	ep, region := WithEndpoint(Endpoint{ID: "ep_1"}), WithServerRegion("eu")
	_, err := NewLimit(keyConfig("conn.client_ip", "conn.server_region"), ep, region)
	if err == nil || !strings.Contains(err.Error(), "WithEndpoint: no bucket key reads what it provides") || strings.Contains(err.Error(), "WithServerRegion") {
		t.Errorf("NewLimit = %v; want WithEndpoint refused, WithServerRegion kept", err)
	}
	doc := func(expr string) []byte {
		return []byte(`{"on_http_request": [{"expressions": [` + strconv.Quote(expr) + `], "actions": [{"type": "custom-response", "config": {"status_code": 418}}]}]}`)
	}
	if _, err := NewPolicy(doc("req.method == 'GET'"), ep); err == nil || !strings.Contains(err.Error(), "WithEndpoint: no expression of the policy reads") {
		t.Errorf("NewPolicy without a reader = %v; want WithEndpoint refused", err)
	}
	if _, err := NewPolicy(doc("endpoint.id == 'ep_1'"), ep); err != nil {
		t.Errorf("NewPolicy with a reader: %v", err)
	}
	// The User-Agent parser, which a built-in one stands in for, is
	// refused the same way when no parsed field is read (the raw header,
	// req.user_agent, does not use it).
	ua := WithUserAgentParser(func(string) UserAgent { return UserAgent{Name: "x"} })
	for _, key := range []string{"conn.client_ip", "req.user_agent"} {
		if _, err := NewLimit(keyConfig(key), ua); err == nil || !strings.Contains(err.Error(), "WithUserAgentParser: no bucket key reads a field it parses (req.user_agent.name") {
			t.Errorf("NewLimit(%s) = %v; want WithUserAgentParser refused", key, err)
		}
	}
	if _, err := NewLimit(keyConfig("req.user_agent.name"), ua); err != nil {
		t.Errorf("NewLimit(req.user_agent.name) with the parser: %v", err)
	}
	if _, err := NewPolicy(doc("req.user_agent.is_bot"), ua); err != nil {
		t.Errorf("NewPolicy reading req.user_agent.is_bot with the parser: %v", err)
	}
}

// TestWithClientIPUnread pins a review's finding: WithClientIP was
// accepted when no expression read the client address, while every other
// provider option was refused then, so a test relying on it passed
// without it. NewLimit and NewPolicy refuse it, naming it; each variable
// that reads the client address (conn.client_ip, and the intelligence
// looked up for it: conn.client_ip.*, conn.geo.*) keeps it, also under
// has(), and conn.client_port, which stays the connection's, does not.
func TestWithClientIPUnread(t *testing.T) {
	t.Parallel()
	ip := WithClientIP(func(*http.Request) string { return "192.0.2.1" })
	intel := WithIPIntel(func(netip.Addr) IPIntel { return IPIntel{} })
	const refused = "WithClientIP: no bucket key reads the client address"
	for _, key := range []string{"req.host", "conn.client_port", "conn.server_ip"} {
		if _, err := NewLimit(keyConfig(key), ip); err == nil || !strings.Contains(err.Error(), refused) {
			t.Errorf("NewLimit(%s) = %v; want WithClientIP refused", key, err)
		}
	}
	// conn.server_ip.* is IP intelligence too, but for the server's address.
	_, err := NewLimit(keyConfig("conn.server_ip.as.organization"), ip, intel)
	if err == nil || !strings.Contains(err.Error(), refused) || strings.Contains(err.Error(), "WithIPIntel") {
		t.Errorf("NewLimit(conn.server_ip.as.organization) = %v; want WithClientIP refused, WithIPIntel kept", err)
	}
	doc := func(expr string) []byte {
		return []byte(`{"on_http_request": [{"expressions": [` + strconv.Quote(expr) + `], "actions": [{"type": "custom-response", "config": {"status_code": 418}}]}]}`)
	}
	if _, err := NewPolicy(doc("req.method == 'GET'"), ip); err == nil || !strings.Contains(err.Error(), "WithClientIP: no expression of the policy reads the client address") {
		t.Errorf("NewPolicy without a reader = %v; want WithClientIP refused", err)
	}
	for _, tt := range []struct {
		expr string
		opts []PolicyOption
	}{
		{"conn.client_ip == '192.0.2.1'", []PolicyOption{ip}},
		{"conn.geo.country_code == 'US'", []PolicyOption{ip, intel}},
		{"conn.client_ip.is_tor_node", []PolicyOption{ip, intel}},
	} {
		if _, err := NewPolicy(doc(tt.expr), tt.opts...); err != nil {
			t.Errorf("NewPolicy reading %s: %v", tt.expr, err)
		}
	}
	readers := 0
	for _, v := range catalogue {
		client := v.name == "conn.client_ip" || strings.HasPrefix(v.name, "conn.client_ip.") || strings.HasPrefix(v.name, "conn.geo.")
		if v.client != client {
			t.Errorf("%s: reads the client address = %t; want %t", v.name, v.client, client)
			continue
		}
		if !client {
			continue
		}
		readers++
		opts := []LimitOption{ip}
		if v.need == provIPIntel {
			opts = append(opts, intel)
		}
		for _, expr := range []string{"[" + v.name + "]", "[has(" + v.name + ")]"} {
			if _, err := NewLimit(keyConfig(expr), opts...); err != nil {
				t.Errorf("NewLimit(%s) with WithClientIP: %v", expr, err)
			}
		}
	}
	if readers < 20 {
		t.Errorf("only %d variables read the client address", readers)
	}
}

// TestUnusedProviderSkipped: under WithSkipUnsupported, a provider read
// only by a skipped rule or action is not refused (a review found "no
// expression of the policy reads what it provides" for a document that
// visibly did).
func TestUnusedProviderSkipped(t *testing.T) {
	t.Parallel()
	ep := WithEndpoint(Endpoint{ID: "ep_1"})
	for _, doc := range []string{
		`{"on_http_request":[{"expressions":["endpoint.id == 'x'"],"actions":[{"type":"deny"}]},{"actions":[{"type":"custom-response","config":{"status_code":418}}]}]}`,
		`{"on_http_request":[{"actions":[{"type":"add-headers","config":{"headers":{"x":"${endpoint.id}"}}},{"type":"custom-response","config":{"status_code":418}}]}]}`,
	} {
		if _, err := NewPolicy([]byte(doc), ep, WithSkipUnsupported()); err != nil {
			t.Errorf("%s: %v", doc, err)
		}
	}
}
