package ratelimit

import (
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/acctapi/acctapi"
	"github.com/google/go-cmp/cmp"
)

// clock is a fake clock for policies.
type clock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *clock) Set(d time.Duration) {
	c.mu.Lock()
	c.now = base.Add(d)
	c.mu.Unlock()
}

func mustPolicy(t testing.TB, doc string, opts ...PolicyOption) *Policy {
	t.Helper()
	p, err := NewPolicy([]byte(doc), opts...)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

var okHandler = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
	_, _ = io.WriteString(w, "ok")
})

type response struct {
	Status  int
	Body    string
	Headers map[string]string
}

func serve(h http.Handler, r *http.Request, headers ...string) response {
	w := httptest.NewRecorder()
	h.ServeHTTP(w, r)
	resp := response{Status: w.Code, Body: w.Body.String()}
	for _, k := range headers {
		if v := w.Header().Values(k); len(v) > 0 {
			if resp.Headers == nil {
				resp.Headers = map[string]string{}
			}
			resp.Headers[k] = strings.Join(v, " | ")
		}
	}
	return resp
}

const perIPPolicy = `{
  "on_http_request": [{
    "expressions": ["req.url.path.startsWith('/api/')"],
    "actions": [{
      "type": "rate-limit",
      "config": {"name": "Only allow 30 requests per minute", "algorithm": "sliding_window",
                 "capacity": 30, "rate": "60s", "bucket_key": ["conn.client_ip"]}
    }]
  }]
}`

// TestPolicyHandlerNil checks that Handler panics at once, saying why, on
// a nil next handler or a nil policy, instead of on the first request.
func TestPolicyHandlerNil(t *testing.T) {
	t.Parallel()
	wantPanic := func(name, want string, f func()) {
		t.Helper()
		defer func() {
			t.Helper()
			if msg := fmt.Sprint(recover()); msg != want {
				t.Errorf("%s: panic %q, want %q", name, msg, want)
			}
		}()
		f()
	}
	p := mustPolicy(t, perIPPolicy)
	wantPanic("Handler(nil)", "ratelimit: Policy.Handler: nil handler", func() { p.Handler(nil) })
	var typedNil http.HandlerFunc
	wantPanic("Handler(nil HandlerFunc)", "ratelimit: Policy.Handler: nil handler", func() { p.Handler(typedNil) })
	wantPanic("nil Policy", "ratelimit: Handler called on a nil *Policy", func() { (*Policy)(nil).Handler(okHandler) })
}

func TestPolicyPerClientIP(t *testing.T) {
	t.Parallel()
	c := &clock{now: base}
	h := mustPolicy(t, perIPPolicy, WithClock(c.Now)).Handler(okHandler)
	req := func(ip, path string) *http.Request {
		r := newRequest("GET", "http://example.com"+path)
		r.RemoteAddr = ip + ":1234"
		return r
	}
	for i := range 30 {
		c.Set(time.Duration(i) * time.Second)
		if got := serve(h, req("203.0.113.7", "/api/x")); got.Status != 200 {
			t.Fatalf("request %d: %+v", i, got)
		}
	}
	steps := []struct {
		name string
		at   time.Duration
		ip   string
		path string
		want response
	}{
		{"31st in the minute", 30 * time.Second, "203.0.113.7", "/api/x",
			response{429, "Too Many Requests\n", map[string]string{"Retry-After": "31"}}},
		{"other client", 30 * time.Second, "203.0.113.8", "/api/x", response{200, "ok", nil}},
		{"path not limited", 30 * time.Second, "203.0.113.7", "/health", response{200, "ok", nil}},
		{"just before retry-after", 60 * time.Second, "203.0.113.7", "/api/x",
			response{429, "Too Many Requests\n", map[string]string{"Retry-After": "1"}}},
		{"at retry-after", 61 * time.Second, "203.0.113.7", "/api/x", response{200, "ok", nil}},
	}
	for _, s := range steps {
		c.Set(s.at)
		got := serve(h, req(s.ip, s.path), "Retry-After")
		if diff := cmp.Diff(s.want, got); diff != "" {
			t.Errorf("%s (-want +got):\n%s", s.name, diff)
		}
	}
}

// TestPolicyEnforceFalseCustomResponse mirrors the documented pattern: a
// limit that does not enforce, then a custom response when it limited.
func TestPolicyEnforceFalseCustomResponse(t *testing.T) {
	t.Parallel()
	const doc = `{"on_http_request": [
	  {"actions": [{"type": "rate-limit", "config": {"name": "soft", "enforce": false,
	    "algorithm": "sliding_window", "capacity": 1, "rate": "60s", "bucket_key": ["req.host"]}}]},
	  {"expressions": ["actions.ngrok.rate_limit.limited"],
	   "actions": [{"type": "custom-response", "config": {"status_code": 503,
	     "body": "slow down", "headers": {"x-bucket": "limited", "content-type": "text/plain"}}}]}
	]}`
	c := &clock{now: base}
	h := mustPolicy(t, doc, WithClock(c.Now)).Handler(okHandler)
	r := newRequest("GET", "http://example.com/")
	want := []response{
		{200, "ok", nil},
		{503, "slow down", map[string]string{"X-Bucket": "limited", "Content-Type": "text/plain", "Retry-After": ""}},
	}
	want[1].Headers = map[string]string{"X-Bucket": "limited", "Content-Type": "text/plain"}
	for i, w := range want {
		got := serve(h, r, "X-Bucket", "Content-Type", "Retry-After")
		if i == 0 {
			got.Headers = nil
		}
		if diff := cmp.Diff(w, got); diff != "" {
			t.Errorf("request %d (-want +got):\n%s", i, diff)
		}
	}
}

func TestPolicyRateLimitHeaders(t *testing.T) {
	t.Parallel()
	const doc = `{"on_http_request": [{"actions": [{"type": "rate-limit", "config": {
	  "name": "per \"ip\"", "algorithm": "sliding_window", "capacity": 2, "rate": "90s",
	  "bucket_key": ["conn.client_ip"]}}]}]}`
	c := &clock{now: base}
	h := mustPolicy(t, doc, WithClock(c.Now), WithRateLimitHeaders()).Handler(okHandler)
	r := newRequest("GET", "http://example.com/")
	keys := []string{"RateLimit-Policy", "RateLimit", "Retry-After"}
	policy := `"per \"ip\"";q=2;w=90`
	want := []response{
		{200, "ok", map[string]string{"RateLimit-Policy": policy, "RateLimit": `"per \"ip\"";r=1`}},
		{200, "ok", map[string]string{"RateLimit-Policy": policy, "RateLimit": `"per \"ip\"";r=0`}},
		{429, "Too Many Requests\n", map[string]string{"RateLimit-Policy": policy, "RateLimit": `"per \"ip\"";r=0;t=90`, "Retry-After": "90"}},
	}
	for i, w := range want {
		if diff := cmp.Diff(w, serve(h, r, keys...)); diff != "" {
			t.Errorf("request %d (-want +got):\n%s", i, diff)
		}
	}
}

func TestPolicyEvaluationErrorContinues(t *testing.T) {
	t.Parallel()
	const doc = `{"on_http_request": [
	  {"actions": [{"type": "rate-limit", "config": {"name": "n", "algorithm": "sliding_window",
	    "capacity": 1, "rate": "60s", "bucket_key": ["getReqHeader('x-key')[0]"]}}]},
	  {"expressions": ["actions.ngrok.rate_limit.error.code != ''"],
	   "actions": [{"type": "custom-response", "config": {"status_code": 400,
	     "body": "no key"}}]}
	]}`
	h := mustPolicy(t, doc).Handler(okHandler)
	if got := serve(h, newRequest("GET", "http://h/")); got.Status != 400 || got.Body != "no key" {
		t.Errorf("without the header: %+v", got)
	}
	r := newRequest("GET", "http://h/")
	r.Header.Set("X-Key", "k")
	if got := serve(h, r); got.Status != 200 {
		t.Errorf("with the header: %+v", got)
	}
}

func TestNewPolicyErrors(t *testing.T) {
	t.Parallel()
	const rl = `{"type": "rate-limit", "config": {"name": "n", "algorithm": "sliding_window", "capacity": 1, "rate": "60s", "bucket_key": ["req.host"]}}`
	tests := []struct {
		name string
		doc  string
		want []string // fields
	}{
		{"empty policy", `{}`, []string{"on_http_request"}},
		{"no rules", `{"on_http_request": []}`, []string{"on_http_request"}},
		{"null rules", `{"on_http_request": null}`, []string{"on_http_request"}},
		{"null rules in YAML", "on_http_request:\n", []string{"on_http_request"}},
		{"not JSON", `[`, []string{""}},
		{"response phase", `{"on_http_response": []}`, []string{"on_http_response"}},
		{"unknown phase", `{"on_request": []}`, []string{"on_request"}},
		{"unknown action", `{"on_http_request": [{"actions": [{"type": "deny"}]}]}`, []string{"on_http_request[0].actions[0].type"}},
		{"no actions", `{"on_http_request": [{"expressions": ["true"]}]}`, []string{"on_http_request[0].actions"}},
		{"unknown rule member", `{"on_http_request": [{"action": []}]}`, []string{"on_http_request[0].action", "on_http_request[0].actions"}},
		{"bad config", `{"on_http_request": [{"actions": [` + rl + `, {"type": "rate-limit", "config": {"name": "n", "algorithm": "sliding_window", "capacity": 0, "rate": "60s", "bucket_key": ["req.host"]}}]}]}`,
			[]string{"on_http_request[0].actions[1].config.capacity"}},
		{"unknown config member", `{"on_http_request": [{"actions": [{"type": "rate-limit", "config": {"nam": "x", "name": "n", "algorithm": "sliding_window", "capacity": 1, "rate": "60s", "bucket_key": ["req.host"]}}]}]}`,
			[]string{"on_http_request[0].actions[0].config.nam"}},
		{"expression not boolean", `{"on_http_request": [{"expressions": ["req.host"], "actions": [` + rl + `]}]}`,
			[]string{"on_http_request[0].expressions[0]"}},
		{"expression does not compile", `{"on_http_request": [{"expressions": ["req.host =="], "actions": [` + rl + `]}]}`,
			[]string{"on_http_request[0].expressions[0]"}},
		{"bad status", `{"on_http_request": [{"actions": [{"type": "custom-response", "config": {"status_code": 42}}]}]}`,
			[]string{"on_http_request[0].actions[0].config.status_code"}},
		{"informational status", `{"on_http_request": [{"actions": [{"type": "custom-response", "config": {"status_code": 199}}]}]}`,
			[]string{"on_http_request[0].actions[0].config.status_code"}},
		{"status past 599", `{"on_http_request": [{"actions": [{"type": "custom-response", "config": {"status_code": 600}}]}]}`,
			[]string{"on_http_request[0].actions[0].config.status_code"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			_, err := NewPolicy([]byte(tt.doc))
			var got []string
			for _, fe := range acctapi.FieldErrors(err) {
				got = append(got, fe.Field)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("fields (-want +got):\n%s\nerror: %v", diff, err)
			}
		})
	}
}

// TestPolicyTypeErrors pins findings of a black-box check: a member of the
// wrong type was reported with encoding/json's message, naming Go types
// ("cannot unmarshal string into Go struct field Config.bucket_key of
// type []string"), at the enclosing member, and it stopped the rest of
// the document from being checked. Each is now reported at its own path,
// in the document's terms, with every other error.
func TestPolicyTypeErrors(t *testing.T) {
	t.Parallel()
	const cfg = "{name: n, algorithm: sliding_window, capacity: 1, rate: 60s, bucket_key: [req.host]}"
	rl := func(member, value string) string {
		members := map[string]string{"name": "n", "algorithm": "sliding_window", "capacity": "1", "rate": "60s", "bucket_key": "[req.host]"}
		members[member] = value
		var b strings.Builder
		for _, k := range sortedKeys(members) {
			fmt.Fprintf(&b, "%s: %s, ", k, members[k])
		}
		return "on_http_request:\n  - actions:\n      - type: rate-limit\n        config: {" + b.String() + "}\n"
	}
	tests := []struct {
		name, doc string
		want      map[string]string // field: part of its reason
	}{
		{"rules not a list", "on_http_request: {actions: []}", map[string]string{"on_http_request": "must be a list, not an object"}},
		{"expressions a string", "on_http_request:\n  - expressions: 'req.method == \"GET\"'\n    actions: [{type: rate-limit, config: " + cfg + "}]\n",
			map[string]string{"on_http_request[0].expressions": `must be a list, not the string "req.method == \"GET\""`}},
		{"bucket_key a string", rl("bucket_key", "conn.client_ip"), map[string]string{"on_http_request[0].actions[0].config.bucket_key": "must be a list"}},
		{"rate a number", rl("rate", "60"), map[string]string{"on_http_request[0].actions[0].config.rate": "must be a string, not the number 60"}},
		{"enforce not a boolean", rl("enforce", "no"), map[string]string{"on_http_request[0].actions[0].config.enforce": `must be true or false, not the string "no"`}},
		{"capacity not whole", rl("capacity", "1.5"), map[string]string{"on_http_request[0].actions[0].config.capacity": "must be a whole number, not the number 1.5"}},
		// JSON and YAML agree on numbers written with an exponent or a
		// point (a second check found JSON's refused), and on range.
		{"capacity out of range", rl("capacity", "99999999999999999999"), map[string]string{"on_http_request[0].actions[0].config.capacity": "is out of range"}},
		{"JSON capacity 1e3 and 10.0", `{"on_http_request": [{"actions": [{"type": "rate-limit", "config": {"name": "n", "algorithm": "sliding_window", "capacity": 1e3, "rate": "60s", "bucket_key": ["req.host"]}}, {"type": "custom-response", "config": {"status_code": 429.0}}]}]}`, map[string]string{}},
		{"JSON capacity past float64", `{"on_http_request": [{"actions": [{"type": "rate-limit", "config": {"name": "n", "algorithm": "sliding_window", "capacity": 1e400, "rate": "60s", "bucket_key": ["req.host"]}}]}]}`,
			map[string]string{"on_http_request[0].actions[0].config.capacity": "the number 1e400 is out of range"}},
		{"YAML capacity past float64", rl("capacity", "1e400"), map[string]string{"on_http_request[0].actions[0].config.capacity": "the number 1e400 is out of range"}},
		{"YAML capacity past float64, negative", rl("capacity", "-1e400"), map[string]string{"on_http_request[0].actions[0].config.capacity": "the number -1e400 is out of range"}},
		{"YAML capacity 1e400 quoted", rl("capacity", "'1e400'"), map[string]string{"on_http_request[0].actions[0].config.capacity": `must be a whole number, not the string "1e400"`}},
		{"JSON capacity out of range", `{"on_http_request": [{"actions": [{"type": "rate-limit", "config": {"name": "n", "algorithm": "sliding_window", "capacity": 99999999999999999999, "rate": "60s", "bucket_key": ["req.host"]}}]}]}`,
			map[string]string{"on_http_request[0].actions[0].config.capacity": "the number 99999999999999999999 is out of range"}},
		{"errors in two rules", "on_http_request:\n  - expresions: [true]\n    actions: [{type: rate-limit, config: " + cfg + "}]\n  - expressions: [req.nope]\n    actions: [{type: rate-limit, config: " + cfg + "}]\n",
			map[string]string{"on_http_request[0].expresions": `did you mean "expressions"`, "on_http_request[1].expressions[0]": "req.nope"}},
		{"three config errors", "on_http_request:\n  - actions: [{type: rate-limit, config: {name: n, algorithm: sliding_window, capacity: 1.5, rate: 65s, bucket_key: []}}]\n",
			map[string]string{"on_http_request[0].actions[0].config.capacity": "whole number", "on_http_request[0].actions[0].config.rate": "65s", "on_http_request[0].actions[0].config.bucket_key": "1 to 10"}},
		{"custom-response headers", "on_http_request:\n  - actions: [{type: custom-response, config: {status_code: 429, headers: {x: [1]}}}]\n",
			map[string]string{"on_http_request[0].actions[0].config.headers.x": "must be a string, not a list"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			_, err := NewPolicy([]byte(tt.doc))
			checkFieldErrors(t, err, tt.want)
			if err != nil && (strings.Contains(err.Error(), "Go ") || strings.Contains(err.Error(), "json:")) {
				t.Errorf("the error names Go's types: %v", err)
			}
		})
	}
}

// checkFieldErrors checks that err is field errors, one for each field of
// want, each with a reason that contains want's; with no want, that err is
// nil (an error of another kind, such as a refused option, had passed as
// "no field errors").
func checkFieldErrors(t *testing.T, err error, want map[string]string) {
	t.Helper()
	if len(want) == 0 {
		if err != nil {
			t.Errorf("error %v; want none", err)
		}
		return
	}
	got := map[string]string{}
	for _, fe := range acctapi.FieldErrors(err) {
		got[fe.Field] = fe.Reason
	}
	if len(got) != len(want) {
		t.Errorf("errors: %v; want one for each of %v", err, want)
	}
	for f, w := range want {
		if r, ok := got[f]; !ok || !strings.Contains(r, w) {
			t.Errorf("%s: %q; want it to contain %q (all: %v)", f, r, w, err)
		}
	}
}

func TestPolicyConcurrent(t *testing.T) {
	t.Parallel()
	c := &clock{now: base}
	h := mustPolicy(t, perIPPolicy, WithClock(c.Now)).Handler(okHandler)
	var wg sync.WaitGroup
	var mu sync.Mutex
	codes := map[int]int{}
	for range 4 {
		wg.Go(func() {
			for range 20 {
				got := serve(h, newRequest("GET", "http://h/api/x"))
				mu.Lock()
				codes[got.Status]++
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	if diff := cmp.Diff(map[int]int{200: 30, 429: 50}, codes); diff != "" {
		t.Errorf("status counts (-want +got):\n%s", diff)
	}
}

// TestPolicyUnreachableAction pins a finding of a review: an action after
// a terminating action in its rule was accepted and never ran. It is now
// refused, as the real service refuses it (ERR_NGROK_2207), with or
// without WithSkipUnsupported, whichever of the two actions is skipped.
func TestPolicyUnreachableAction(t *testing.T) {
	t.Parallel()
	const rl = `{type: rate-limit, config: {name: n, algorithm: sliding_window, capacity: 1, rate: 60s, bucket_key: [req.host]}}`
	const cr = `{type: custom-response, config: {status_code: 503}}`
	rule := func(actions ...string) string {
		return "  - actions: [" + strings.Join(actions, ", ") + "]\n"
	}
	tests := []struct {
		name string
		doc  string
		skip bool
		want map[string]string // field: its reason, in part
	}{
		{"after custom-response", rule(cr, rl), false,
			map[string]string{"on_http_request[0].actions[1]": "the rate-limit action is unreachable: actions[0] (custom-response) before it always ends the request (ERR_NGROK_2207)"}},
		{"two after custom-response", rule(rl, cr, rl, cr), false, map[string]string{
			"on_http_request[0].actions[2]": "the rate-limit action is unreachable: actions[1] (custom-response)",
			"on_http_request[0].actions[3]": "the custom-response action is unreachable: actions[1] (custom-response)"}},
		{"after a skipped deny", rule("{type: deny}", rl), true,
			map[string]string{"on_http_request[0].actions[1]": "the rate-limit action is unreachable: actions[0] (deny)"}},
		{"skipped, after custom-response", rule(cr, "{type: log, config: {metadata: {a: b}}}"), true,
			map[string]string{"on_http_request[0].actions[1]": "the log action is unreachable: actions[0] (custom-response)"}},
		{"after close-connection", rule("{type: close-connection}", rl), true,
			map[string]string{"on_http_request[0].actions[1]": "actions[0] (close-connection)"}},
		{"after forward-internal", rule("{type: forward-internal, config: {url: 'https://a.internal'}}", rl), true,
			map[string]string{"on_http_request[0].actions[1]": "actions[0] (forward-internal)"}},
		{"after forward-internal that continues on error", rule("{type: forward-internal, config: {url: 'https://a.internal', on_error: continue}}", rl), true, nil},
		{"after redirect, which may not redirect", rule("{type: redirect, config: {to: 'https://b'}}", rl), true, nil},
		{"before custom-response", rule(rl, cr), false, nil},
		// A rule without expressions that ends every request leaves a
		// rate-limit action of a later rule unreachable (a review found
		// it accepted, its hook never called); other actions there are
		// left, as the real service leaves them.
		{"in the next rule", rule(cr) + rule(rl), false, map[string]string{
			"on_http_request[1].actions[0]": "the rate-limit action is unreachable: on_http_request[0] before it has no expressions and its actions[0] (custom-response) always ends the request"}},
		{"two rules after a deny", rule("{type: deny}") + rule(cr) + rule(cr, rl) + rule(rl), true, map[string]string{
			"on_http_request[2].actions[1]": "unreachable",
			"on_http_request[3].actions[0]": "on_http_request[0] before it has no expressions and its actions[0] (deny)"}},
		{"in the next rule, after one with expressions", "  - expressions: ['req.method == \"GET\"']\n    actions: [" + cr + "]\n" + rule(rl), false, nil},
		{"a custom-response in the next rule", rule(cr) + rule(cr), false, nil},
		{"both unreachable and invalid", rule(cr, `{type: rate-limit, config: {name: n}}`), false, map[string]string{
			"on_http_request[0].actions[1]":                   "unreachable",
			"on_http_request[0].actions[1].config.algorithm":  "required",
			"on_http_request[0].actions[1].config.bucket_key": "",
			"on_http_request[0].actions[1].config.capacity":   "",
			"on_http_request[0].actions[1].config.rate":       "",
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			var opts []PolicyOption
			if tt.skip {
				opts = append(opts, WithSkipUnsupported())
			}
			_, err := NewPolicy([]byte("on_http_request:\n"+tt.doc), opts...)
			checkFieldErrors(t, err, tt.want)
		})
	}
}

// TestPolicyRateLimitHeadersWhenEvaluationFails pins a finding of a
// review: WithRateLimitHeaders added no field for an action whose result
// had an error, so a request that a bound on its bucket key or a failed
// store got limited went out as a 429 without them. RateLimit-Policy now
// comes with every evaluation, and RateLimit with every request a bucket
// decided or the action limited; only a request that no bucket counted and
// that went through has no RateLimit (it has no quota to report).
func TestPolicyRateLimitHeadersWhenEvaluationFails(t *testing.T) {
	t.Parallel()
	const key = "hasReqHeader('x-forwarded-for') ? getReqHeader('x-forwarded-for')[0].split(',')[0] : getReqHeader('x-key')[0]"
	const doc = `{"on_http_request": [{"actions": [{"type": "rate-limit", "config": {
	  "name": "k", "algorithm": "sliding_window", "capacity": 1, "rate": "60s", "bucket_key": ["` + key + `"]}}]}]}`
	keys := []string{"RateLimit-Policy", "RateLimit", "Retry-After"}
	const policy = `"k";q=1;w=60`
	withHeader := func(v string) *http.Request {
		r := newRequest("GET", "http://h/")
		r.Header.Set("X-Forwarded-For", v)
		return r
	}
	padded := withHeader("1.2.3.4" + strings.Repeat(",", 1_040_001)) // over the split bound
	tests := []struct {
		name string
		opts []PolicyOption
		reqs []*http.Request
		want []response
	}{
		{"key fails to evaluate", nil, []*http.Request{newRequest("GET", "http://h/"), newRequest("GET", "http://h/")}, []response{
			{200, "ok", map[string]string{"RateLimit-Policy": policy}},
			{200, "ok", map[string]string{"RateLimit-Policy": policy}},
		}},
		{"key over budget", nil, []*http.Request{padded, padded}, []response{
			{200, "ok", map[string]string{"RateLimit-Policy": policy}},
			{429, "Too Many Requests\n", map[string]string{"RateLimit-Policy": policy, "RateLimit": `"k";r=0;t=60`, "Retry-After": "60"}},
		}},
		{"store fails closed", []PolicyOption{WithStore(&countingStore{err: io.ErrUnexpectedEOF}, FailClosed, 0)}, []*http.Request{withHeader("1.2.3.4")}, []response{
			{429, "Too Many Requests\n", map[string]string{"RateLimit-Policy": policy, "RateLimit": `"k";r=0;t=1`, "Retry-After": "1"}},
		}},
		{"store fails open", []PolicyOption{WithStore(&countingStore{err: io.ErrUnexpectedEOF}, FailOpen, 0)}, []*http.Request{withHeader("1.2.3.4")}, []response{
			{200, "ok", map[string]string{"RateLimit-Policy": policy}},
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			h := mustPolicy(t, doc, append(tt.opts, WithClock(func() time.Time { return base }), WithRateLimitHeaders())...).Handler(okHandler)
			for i, w := range tt.want {
				if diff := cmp.Diff(w, serve(h, tt.reqs[i], keys...)); diff != "" {
					t.Errorf("request %d (-want +got):\n%s", i, diff)
				}
			}
		})
	}
}

// TestPolicyResultsReadBeforeAnyRateLimit pins a review's finding: a rule
// gated on actions.ngrok.rate_limit.limited before any rate-limit action
// (in an earlier rule, or with none at all) compiled, and never fired, as
// limited is false until one has run. NewPolicy refuses a read of the
// results where no rate-limit action can have run: a rule's expressions
// (evaluated before its actions), a custom-response's placeholders before
// the rule's first rate-limit action, and the bucket keys of a rate-limit
// action no other can precede. It reads the checked expression, so a
// string that spells a variable's name is no read.
func TestPolicyResultsReadBeforeAnyRateLimit(t *testing.T) {
	t.Parallel()
	const (
		rl       = `{type: rate-limit, config: {name: n, algorithm: sliding_window, capacity: 1, rate: 60s, bucket_key: [conn.client_ip]}}`
		cr       = `{type: custom-response, config: {status_code: 429}}`
		gate     = `expressions: ["actions.ngrok.rate_limit.limited"]`
		tooEarly = "no rate-limit action runs before it"
	)
	rule := func(expr string, actions ...string) string { // expr: "" or "expressions: [...]"
		if expr != "" {
			expr += ", "
		}
		return "  - {" + expr + "actions: [" + strings.Join(actions, ", ") + "]}\n"
	}
	crWith := func(body string) string {
		return `{type: custom-response, config: {status_code: 200, body: "` + body + `"}}`
	}
	tests := []struct {
		name string
		doc  string
		want map[string]string // field: part of its reason; nil: accepted
	}{
		{"gate before the rule with the action", rule(gate, cr) + rule("", rl),
			map[string]string{"on_http_request[0].expressions[0]": "reads actions.ngrok.rate_limit.limited, but " + tooEarly}},
		{"gate without any rate-limit action", rule(gate, cr),
			map[string]string{"on_http_request[0].expressions[0]": tooEarly}},
		{"gate in the action's own rule", rule(gate, rl, cr),
			map[string]string{"on_http_request[0].expressions[0]": "a rule's expressions before its actions"}},
		{"has() of a result", rule(`expressions: ["has(actions.ngrok.rate_limit.error.code)"]`, cr) + rule("", rl),
			map[string]string{"on_http_request[0].expressions[0]": "reads actions.ngrok.rate_limit.error.code"}},
		{"a later expression of the rule", rule(`expressions: ["true", "actions.ngrok.rate_limit.bucket_key == 'k'"]`, cr) + rule("", rl),
			map[string]string{"on_http_request[0].expressions[1]": "reads actions.ngrok.rate_limit.bucket_key"}},
		{"placeholder before the action", rule(`expressions: ["req.method == 'GET'"]`, crWith("${actions.ngrok.rate_limit.limited}")) + rule("", rl),
			map[string]string{"on_http_request[0].actions[0].config.body": tooEarly}},
		{"placeholder in a header", rule("", `{type: custom-response, config: {status_code: 200, headers: {x-l: "${actions.ngrok.rate_limit.limited}"}}}`),
			map[string]string{"on_http_request[0].actions[0].config.headers.x-l": tooEarly}},
		{"bucket key of the first action", rule("", `{type: rate-limit, config: {name: n, algorithm: sliding_window, capacity: 1, rate: 60s, bucket_key: [conn.client_ip, actions.ngrok.rate_limit.bucket_key]}}`),
			map[string]string{"on_http_request[0].actions[0].config.bucket_key[1]": "a bucket key is evaluated before its own action's result exists"}},
		{"gate and placeholder, both reported", rule(gate, crWith("${actions.ngrok.rate_limit.limited}")), map[string]string{
			"on_http_request[0].expressions[0]":         tooEarly,
			"on_http_request[0].actions[0].config.body": tooEarly,
		}},
		{"gate after the rule with the action", rule("", rl) + rule(gate, cr), nil},
		{"gate after a rule whose action may not run", rule(`expressions: ["req.method == 'POST'"]`, rl) + rule(gate, cr), nil},
		{"placeholder after the action in its rule", rule("", rl, crWith("${actions.ngrok.rate_limit.limited}")), nil},
		{"bucket key of the second action", rule("", rl, `{type: rate-limit, config: {name: m, algorithm: sliding_window, capacity: 1, rate: 60s, bucket_key: [actions.ngrok.rate_limit.bucket_key]}}`), nil},
		{"the name in a string", rule(`expressions: ["req.host != 'actions.ngrok.rate_limit.limited'"]`, crWith("${'actions.ngrok.rate_limit.limited'}")), nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			_, err := NewPolicy([]byte("on_http_request:\n" + tt.doc))
			checkFieldErrors(t, err, tt.want)
		})
	}
}

// TestPolicyOptionsWithoutRateLimit pins a review's finding: a policy
// without a rate-limit action took the options only such an action uses
// and ignored them (a test of a decision hook passed without the hook
// running). Options that the policy's expressions and placeholders use
// are still accepted.
func TestPolicyOptionsWithoutRateLimit(t *testing.T) {
	t.Parallel()
	const (
		crOnly = `{"on_http_request": [{"actions": [{"type": "custom-response", "config": {"status_code": 200, "body": "${conn.client_ip}"}}]}]}`
		withRL = `{"on_http_request": [{"actions": [{"type": "rate-limit", "config": {"name": "n", "algorithm": "sliding_window", "capacity": 1, "rate": "60s", "bucket_key": ["conn.client_ip"]}}]}]}`
	)
	hook := func(*http.Request, string, Result) {}
	for name, opt := range map[string]PolicyOption{
		"WithDecisionHook":     WithDecisionHook(hook),
		"WithRateLimitHeaders": WithRateLimitHeaders(),
		"WithMaxBuckets":       WithMaxBuckets(DefaultMaxBuckets), // the default, given
		"WithStore":            WithStore(&countingStore{}, FailOpen, 0),
	} {
		_, err := NewPolicy([]byte(crOnly), opt)
		want := "ratelimit: " + name + ": the policy has no rate-limit action"
		if err == nil || !strings.Contains(err.Error(), want) || len(acctapi.FieldErrors(err)) != 0 {
			t.Errorf("%s: error %v; want one containing %q", name, err, want)
		}
		if _, err := NewPolicy([]byte(withRL), opt); err != nil {
			t.Errorf("%s with a rate-limit action: %v", name, err)
		}
	}
	ip := func(*http.Request) string { return "192.0.2.1" }
	if _, err := NewPolicy([]byte(crOnly), WithClientIP(ip)); err != nil {
		t.Errorf("options the expressions use: %v", err)
	}
	// WithClock is used by a rate-limit action, or by an expression that
	// reads the time; with neither, it would do nothing (a misuse review:
	// a test of the fake clock passed without it).
	want := "ratelimit: WithClock: the policy has no rate-limit action, so nothing reads the clock"
	if _, err := NewPolicy([]byte(crOnly), WithClock(time.Now)); err == nil || !strings.Contains(err.Error(), want) {
		t.Errorf("WithClock with nothing reading the time: %v; want %q", err, want)
	}
	for _, body := range []string{"${time.now}", "${string(req.ts.header_received)}"} {
		doc := strings.Replace(crOnly, "${conn.client_ip}", body, 1)
		if _, err := NewPolicy([]byte(doc), WithClock(time.Now)); err != nil {
			t.Errorf("WithClock with %s: %v", body, err)
		}
	}
	if _, err := NewPolicy([]byte(withRL), WithClock(time.Now)); err != nil {
		t.Errorf("WithClock with a rate-limit action: %v", err)
	}
	// A skipped action was not compiled: whether it reads the time is not
	// known, so WithClock is not refused.
	withDeny := `{"on_http_request": [{"expressions": ["time.now > timestamp('2020-01-01T00:00:00Z')"], "actions": [{"type": "deny"}]}, ` + crOnly[len(`{"on_http_request": [`):]
	if _, err := NewPolicy([]byte(withDeny), WithClock(time.Now), WithSkipUnsupported()); err != nil {
		t.Errorf("WithClock with a skipped action: %v", err)
	}
	// A rule expression whose type is dyn, bool when it runs, compiles.
	dynRule := `{"on_http_request": [{"expressions": ["{'a': dyn(true)}['a']"], "actions": [{"type": "custom-response", "config": {"status_code": 200}}]}]}`
	if _, err := NewPolicy([]byte(dynRule)); err != nil {
		t.Errorf("a rule expression of type dyn: %v", err)
	}
	// WithSkipUnsupported with nothing to skip would do nothing too.
	_, err := NewPolicy([]byte(crOnly), WithClientIP(ip), WithSkipUnsupported())
	if want := "ratelimit: WithSkipUnsupported: the policy has no phase or action to skip"; err == nil || !strings.Contains(err.Error(), want) {
		t.Errorf("WithSkipUnsupported with nothing to skip: %v; want %q", err, want)
	}
	if _, err := NewPolicy([]byte(`{"on_http_request": [{"actions": [{"type": "deny"}]}, `+crOnly[len(`{"on_http_request": [`):]), WithClientIP(ip), WithSkipUnsupported()); err != nil {
		t.Errorf("WithSkipUnsupported with a deny to skip: %v", err)
	}
}

// TestPolicyWithoutRules pins a review's finding: {}, on_http_request: []
// and on_http_request: null made policies that did nothing, while "" was
// refused. So is a document whose rules WithSkipUnsupported skips whole.
func TestPolicyWithoutRules(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, doc string
		want      string
	}{
		{"empty object", `{}`, "the policy has no rules, so it would do nothing"},
		{"empty YAML mapping", "{}\n# a comment\n", "the policy has no rules"},
		{"no rules", "on_http_request: []\n", "the policy has no rules"},
		{"null rules", "on_http_request:\n", "the policy has no rules"},
		{"only a skipped phase", "on_http_response: [{actions: [{type: deny}]}]\n",
			"no on_http_request rules, the only phase this package runs (it skips on_http_response)"},
		{"only skipped actions", "on_http_request: [{actions: [{type: deny}]}, {actions: [{type: log}]}]\n",
			"every rule was skipped, as each has only actions this package does not implement"},
	}
	for _, tt := range tests {
		_, err := NewPolicy([]byte(tt.doc), WithSkipUnsupported())
		checkFieldErrors(t, err, map[string]string{"on_http_request": tt.want})
	}
}
