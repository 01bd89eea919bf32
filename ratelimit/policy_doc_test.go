package ratelimit

import (
	"fmt"
	"net/http"
	"reflect"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/acctapi/acctapi"
	"github.com/google/go-cmp/cmp"
)

const perIPPolicyYAML = `
# The real service's example, as users write it.
on_http_request:
  - expressions:
      - req.url.path.startsWith('/api/')
    actions:
      - type: rate-limit
        config:
          name: Only allow 30 requests per minute
          algorithm: sliding_window
          capacity: 30
          rate: 60s
          bucket_key:
            - conn.client_ip
`

// TestPolicyYAML checks that the YAML form of a policy behaves as its JSON
// form.
func TestPolicyYAML(t *testing.T) {
	t.Parallel()
	c := &clock{now: base}
	hy := mustPolicy(t, perIPPolicyYAML, WithClock(c.Now)).Handler(okHandler)
	hj := mustPolicy(t, perIPPolicy, WithClock(c.Now)).Handler(okHandler)
	for i := range 32 {
		path := "/api/x"
		if i%8 == 7 {
			path = "/health"
		}
		y, j := serve(hy, newRequest("GET", "http://h"+path), "Retry-After"), serve(hj, newRequest("GET", "http://h"+path), "Retry-After")
		if diff := cmp.Diff(j, y); diff != "" {
			t.Fatalf("request %d (-JSON +YAML):\n%s", i, diff)
		}
	}
}

func TestPolicyDocumentErrors(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		doc  string
		want string // the reason of the one field error, which has no field
	}{
		{"unclosed flow list", "on_http_request: [\n", "the policy is not valid YAML: yaml: line 1: did not find expected node content"},
		{"bad indentation", "on_http_request:\n  - actions: []\n - name: x\n", "the policy is not valid YAML: yaml: line 2: did not find expected key"},
		{"JSON with a trailing comma", "{\"on_http_request\": [],\n}", "the policy is not valid JSON: line 2, column 1: invalid character '}'"},
		{"JSON then more", `{} {}`, "data after the top-level value"},
		// Only JSON's white space may come before JSON (found by
		// FuzzNewPolicy: "\v{}" was read as JSON).
		{"a vertical tab before JSON", "\v{}", "the policy is not valid YAML: yaml: control characters are not allowed"},
		// Aliases that expand a small document into a huge one (found by
		// a black-box check: 112 KB took 6 s and 2.2 GB to load).
		{"an alias bomb", aliasBomb, "with its aliases expanded the document is more than 4194304 bytes"},
		{"an alias to itself", "a: &x [*x]\n", "anchor 'x' value contains itself"},
		{"a no-break space before JSON", "\u00a0{}", "the policy is a string"},
		{"JSON then a brace", `{} }`, "data after the top-level value"},
		{"JSON duplicate member", `{"on_http_request": [{"actions": [], "expressions": ["true"], "actions": []}]}`, `member "actions" appears twice`},
		{"YAML duplicate member", "on_http_request: []\non_http_request: []\n", `"on_http_request" already defined`},
		{"two documents", "on_http_request: []\n---\non_http_request: []\n", "more (\"---\")"},
		{"empty", "", "empty"},
		{"complex key", "? [a]\n: b\n", "invalid map key"},
		{"null key", "~: b\n", "keys must be strings"},
		// Keys that are one key once written as text: which value won was
		// up to the map's order (a review).
		{"1 and 1.0", "a: {1: a, 1.0: b}\n", "a: the key 1 is given more than once, in different spellings"},
		{"1 and 0x1", "a: {1: a, 0x1: b}\n", "a: the key 1 is given more than once"},
		{"1 and +1", "on_http_request:\n  - {1: a, +1: b}\n", "on_http_request[0]: the key 1 is given more than once"},
		{"true and True", "a: {true: a, True: b}\n", "the key true is given more than once"},
		{"a string", "hello", "the policy is a string"},
		{"a list of rules", "- actions: [{type: deny}]\n", "this is a list of rules, not a policy: put it under on_http_request"},
		{"a list of actions", `[{"type": "rate-limit", "config": {}}]`, "this is a list of actions"},
		{"a bare config", `{"name": "n", "algorithm": "sliding_window", "capacity": 1, "rate": "60s", "bucket_key": ["req.host"]}`,
			"this is an action config (a rate-limit config), not a policy: wrap it as on_http_request: [{actions: [{type: rate-limit, config: <this>}]}], or use NewLimit"},
		{"a bare action", "type: rate-limit\nconfig:\n  name: n\n", "this is an action config, not a policy: wrap it"},
		// Fewer members said as much (a review saw two unknown phases).
		{"a bare action without its config", "type: rate-limit\nname: n\n", "this is an action config, not a policy: wrap it"},
		{"a bare config of name and enforce", `{"name": "n", "enforce": false}`, "this is an action config (a rate-limit config), not a policy"},
		// YAML in flow style begins as JSON does; it was read as JSON
		// only, and refused as invalid JSON (a black-box check).
		{"a bare action in flow style", "{type: rate-limit, config: {name: n}}", "this is an action config, not a policy: wrap it"},
		{"neither JSON nor YAML", `{"a": }`, "the policy is not valid JSON: line 1, column 7"},
		{"flow style, single quotes", "{'type': rate-limit, 'config': {name: n}}", "this is an action config, not a policy: wrap it"},
		{"flow style inside JSON", `{"type": "rate-limit", "config": {name: n}}`, "this is an action config, not a policy: wrap it"},
		{"flow style with a comment", "{ # an action\n type: rate-limit, config: {name: n}}", "this is an action config, not a policy: wrap it"},
		{"flow style then text", "{on_http_request: []} x", "the policy is not valid YAML: yaml: did not find expected <document start>"},
		// A JSON document followed by YAML comments is valid YAML; it was
		// refused as JSON with data after the value.
		{"JSON then a comment", "{\"type\": \"rate-limit\", \"config\": {}}\n# the action\n", "this is an action config, not a policy: wrap it"},
		{"JSON then a comment on its line", "{\"type\": \"rate-limit\", \"config\": {}} # the action\r\n\n  # more", "this is an action config, not a policy: wrap it"},
		{"JSON then a comment not set apart", "{\"type\": \"rate-limit\", \"config\": {}}# the action", "the policy is not valid JSON: data after the top-level value"},
		{"JSON then a comment and text", "{\"type\": \"rate-limit\", \"config\": {}}\n# the action\nx", "the policy is not valid JSON: data after the top-level value"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			_, err := NewPolicy([]byte(tt.doc))
			fes := acctapi.FieldErrors(err)
			if len(fes) != 1 || fes[0].Field != "" || !strings.Contains(fes[0].Error(), tt.want) {
				t.Errorf("error %v; want one field error containing %q", err, tt.want)
			}
		})
	}
}

const fullPolicy = `
on_tcp_connect:
  - actions: [{type: restrict-ips, config: {allow: [10.0.0.0/8]}}]
on_http_request:
  - name: auth
    expressions: ["vars.tier == 'free'"]
    actions:
      - type: jwt-validation
        config: {issuer: {allow_list: [{value: x}]}}
  - name: limit
    actions:
      - type: add-headers
        config: {headers: {x-a: b}}
      - type: rate-limit
        config: {name: n, algorithm: sliding_window, capacity: 1, rate: 60s, bucket_key: [conn.client_ip]}
      - type: deny
on_http_response:
  - actions: [{type: remove-headers, config: {headers: [server]}}]
`

// TestPolicyOtherPhasesAndActions checks that a real service's policy is
// refused by default, each unsupported part named with the option that
// skips it, and runs its rate-limit part under WithSkipUnsupported.
func TestPolicyOtherPhasesAndActions(t *testing.T) {
	t.Parallel()
	_, err := NewPolicy([]byte(fullPolicy))
	var got []string
	for _, fe := range acctapi.FieldErrors(err) {
		if strings.HasSuffix(fe.Field, "type") || strings.HasPrefix(fe.Field, "on_http_re") && !strings.Contains(fe.Field, "[") {
			if !strings.Contains(fe.Reason, "pass ratelimit.WithSkipUnsupported") {
				t.Errorf("%s: %s does not name the option", fe.Field, fe.Reason)
			}
		}
		got = append(got, fe.Field)
	}
	// The first rule's expression uses vars.*, which only a skipped rule
	// may.
	want := []string{"on_http_response", "on_tcp_connect", "on_http_request[0].actions[0].type",
		"on_http_request[0].expressions[0]", "on_http_request[1].actions[0].type", "on_http_request[1].actions[2].type"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("fields (-want +got):\n%s\nerror: %v", diff, err)
	}

	c := &clock{now: base}
	p := mustPolicy(t, fullPolicy, WithSkipUnsupported(), WithClock(c.Now))
	wantSkipped := []string{"on_http_response", "on_tcp_connect", "on_http_request[0].actions[0] (jwt-validation)",
		"on_http_request[1].actions[0] (add-headers)", "on_http_request[1].actions[2] (deny)"}
	if diff := cmp.Diff(wantSkipped, p.Skipped()); diff != "" {
		t.Errorf("Skipped (-want +got):\n%s", diff)
	}
	h := p.Handler(okHandler)
	for i, want := range []int{200, 429} {
		if got := serve(h, newRequest("GET", "http://h/")); got.Status != want {
			t.Errorf("request %d: %d, want %d", i, got.Status, want)
		}
	}
	// Typing mistakes are errors even when skipping.
	_, err = NewPolicy([]byte(`{"on_http_requests": [], "on_http_request": [{"actions": [{"type": "rate_limit"}]}]}`), WithSkipUnsupported())
	got = nil
	for _, fe := range acctapi.FieldErrors(err) {
		got = append(got, fe.Field+": "+fe.Reason)
	}
	want = []string{
		`on_http_requests: unknown phase; did you mean "on_http_request"?; the phases are on_http_request, on_tcp_connect, on_http_response, on_event_stream_message`,
		`on_http_request[0].actions[0].type: unknown action type "rate_limit"; did you mean "rate-limit"?`,
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("typos (-want +got):\n%s", diff)
	}
}

// softLimitPolicy is one rule with a rate-limit action that does not
// enforce, one request per host a minute.
const softLimitPolicy = `on_http_request:
  - actions:
      - type: rate-limit
        config: {name: soft, enforce: false, algorithm: sliding_window, capacity: 1, rate: 60s, bucket_key: [req.host]}
`

// TestResultFromContext checks that the next handler sees the last
// rate-limit action's result, so enforce: false is observable.
func TestResultFromContext(t *testing.T) {
	t.Parallel()
	const doc = softLimitPolicy
	var got []Result
	var mu sync.Mutex
	next := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		res, ok := ResultFromContext(r.Context())
		if !ok {
			t.Error("no result in the context")
		}
		mu.Lock()
		got = append(got, res)
		mu.Unlock()
	})
	c := &clock{now: base}
	h := mustPolicy(t, doc, WithClock(c.Now)).Handler(next)
	for range 2 {
		serve(h, newRequest("GET", "http://example.com/"))
	}
	want := []Result{
		{BucketKey: "example.com", Remaining: 0},
		{BucketKey: "example.com", Limited: true, RetryAfter: time.Minute},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("results (-want +got):\n%s", diff)
	}
	if _, ok := ResultFromContext(newRequest("GET", "http://h/").Context()); ok {
		t.Error("a result in a plain request's context")
	}
}

// TestDecisionHook checks that the hook sees every evaluation, enforced or
// not, with the action's name, and that two actions of one name are told
// apart (the second's name ends in " #2", as in a store's Bucket.Limit).
func TestDecisionHook(t *testing.T) {
	t.Parallel()
	const doc = softLimitPolicy + `      - type: rate-limit
        config: {name: hard, algorithm: sliding_window, capacity: 2, rate: 60s, bucket_key: [req.host]}
      - type: rate-limit
        config: {name: soft, enforce: false, algorithm: sliding_window, capacity: 3, rate: 60s, bucket_key: [req.host]}
`
	var mu sync.Mutex
	counts := map[string]int{}
	hook := func(r *http.Request, name string, res Result) {
		mu.Lock()
		defer mu.Unlock()
		counts[name+" limited="+map[bool]string{true: "yes", false: "no"}[res.Limited]]++
	}
	c := &clock{now: base}
	h := mustPolicy(t, doc, WithClock(c.Now), WithDecisionHook(hook)).Handler(okHandler)
	for range 3 {
		serve(h, newRequest("GET", "http://example.com/"))
	}
	// The third request is limited by hard, so the second soft does not
	// see it.
	want := map[string]int{"soft limited=no": 1, "soft limited=yes": 2, "hard limited=no": 2, "hard limited=yes": 1, "soft #2 limited=no": 2}
	if diff := cmp.Diff(want, counts); diff != "" {
		t.Errorf("decisions (-want +got):\n%s", diff)
	}
}

// TestOptionTypes pins where each option applies: a LimitOption is not an
// Option, so NewLimiter(1, time.Minute, WithClock(c)) does not compile,
// and a PolicyOption is not a LimitOption.
func TestOptionTypes(t *testing.T) {
	t.Parallel()
	opt, limit, policy := reflect.TypeFor[Option](), reflect.TypeFor[LimitOption](), reflect.TypeFor[PolicyOption]()
	if limit.Implements(opt) || policy.Implements(limit) {
		t.Error("a narrower option type is accepted by a wider constructor")
	}
	for name, o := range map[string]PolicyOption{
		"WithClock": WithClock(time.Now), "WithClientIP": WithClientIP(nil), "WithDecisionHook": WithDecisionHook(nil),
		"WithServerRegion": WithServerRegion("eu"),
	} {
		if _, ok := o.(Option); ok {
			t.Errorf("%s is an Option; NewLimiter would accept and ignore it", name)
		}
	}
	if _, ok := WithRateLimitHeaders().(LimitOption); ok {
		t.Error("WithRateLimitHeaders is a LimitOption; NewLimit would accept and ignore it")
	}
	if _, ok := WithSkipUnsupported().(LimitOption); ok {
		t.Error("WithSkipUnsupported is a LimitOption")
	}
	// A nil option is an error (TestOptionMisuse).
}

// aliasBomb is a 112 KB YAML document that stands for 500 MB: 50
// references to a list of 100 references to a 100 KB string.
var aliasBomb = "s: &s " + strings.Repeat("a", 100_000) + "\n" +
	"l: &l [" + strings.TrimSuffix(strings.Repeat("*s,", 100), ",") + "]\n" +
	"x: [" + strings.TrimSuffix(strings.Repeat("*l,", 50), ",") + "]\n"

// TestPolicyBounds checks that a document's size in rules, expressions
// and actions is bounded before anything is compiled, and that the errors
// of a document full of them stop at MaxPolicyErrors (a review's document
// of 10,000 unknown names took seconds and a gigabyte to report).
func TestPolicyBounds(t *testing.T) {
	t.Parallel()
	rule := func(exprs, actions int) string {
		return `{"expressions": [` + strings.TrimSuffix(strings.Repeat(`"true",`, exprs), ",") + `], "actions": [` +
			strings.TrimSuffix(strings.Repeat(`{"type": "rate-limit", "config": {"name": "n", "algorithm": "sliding_window", "capacity": 1, "rate": "60s", "bucket_key": ["req.host"]}},`, actions), ",") + `]}`
	}
	doc := func(rules ...string) []byte {
		return []byte(`{"on_http_request": [` + strings.Join(rules, ",") + `]}`)
	}
	many := func(n int, r string) []string { return slices.Repeat([]string{r}, n) }
	for _, tt := range []struct {
		name string
		doc  []byte
		want string
	}{
		{"rules", doc(many(MaxPolicyRules+1, rule(0, 1))...), fmt.Sprintf("has %d rules; a policy may have at most %d", MaxPolicyRules+1, MaxPolicyRules)},
		{"expressions", doc(rule(MaxPolicyExpressions, 1), rule(1, 1)), "has 2049 expressions in its rules; a policy may have at most 2048"},
		{"actions", doc(rule(0, MaxPolicyActions), rule(0, 1)), "has 257 actions in its rules; a policy may have at most 256"},
	} {
		if _, err := NewPolicy(tt.doc); err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%s: %v; want %q", tt.name, err, tt.want)
		}
	}
	// At the bounds, the early check lets them through (what compiling
	// them then says is not its business).
	for name, d := range map[string][]byte{
		"expressions": doc(rule(MaxPolicyExpressions, 1)),
		"actions":     doc(rule(0, MaxPolicyActions)),
	} {
		if _, err := NewPolicy(d); err != nil && strings.Contains(err.Error(), "in its rules; a policy may have at most") {
			t.Errorf("%s at the bound: %.200v", name, err)
		}
	}
	// Rule expressions, bucket keys and placeholders count together, each
	// once (the first action's keys, compiled again to see what they
	// read, are not counted twice: a review): 256 rules of 7 expressions
	// and a rate-limit action with one key take 1,792 + 256 = 2,048; one
	// more expression is one too many.
	if _, err := NewPolicy(doc(many(MaxPolicyRules, rule(7, 1))...)); err != nil {
		t.Errorf("a policy of 2,048 expressions: %v", err)
	}
	over := append(many(MaxPolicyRules-1, rule(7, 1)), rule(8, 1))
	if _, err := NewPolicy(doc(over...)); err == nil || !strings.Contains(err.Error(), "on_http_request[255]") ||
		!strings.Contains(err.Error(), "is not compiled: the policy has more than 2048 expressions") {
		t.Errorf("a policy of 2,049 expressions: %.300v", err)
	}
	// Placeholders count (a review's custom-response of 40,000 took a
	// second and 600 MB to compile).
	cr := `{"on_http_request": [{"actions": [{"type": "custom-response", "config": {"status_code": 200, "body": "` +
		strings.Repeat("${req.host}", MaxPolicyExpressions+1) + `"}}]}]}`
	if _, err := NewPolicy([]byte(cr)); err == nil || !strings.Contains(err.Error(), "the policy has more than 2048 expressions") {
		t.Errorf("a custom-response of 2,049 placeholders: %.300v", err)
	}
	// Expressions count by size too: a cost review's 32 expressions of
	// 190 comprehensions each took 7 s and 2.8 GB to compile.
	ors := func(term string, n int) string { return strings.TrimSuffix(strings.Repeat(term+"||", n), "||") }
	comprehensions := func(n int) string { return ors("[1].exists_one(x,x>0)", n) }
	if _, err := NewPolicy(doc(`{"expressions": ["` + comprehensions(maxExprComprehensions) + `"], "actions": [{"type": "custom-response", "config": {"status_code": 429}}]}`)); err != nil {
		t.Errorf("an expression of %d comprehensions: %v", maxExprComprehensions, err)
	}
	if _, err := NewPolicy(doc(`{"expressions": ["` + comprehensions(maxExprComprehensions+1) + `"], "actions": [{"type": "custom-response", "config": {"status_code": 429}}]}`)); err == nil ||
		!strings.Contains(err.Error(), "on_http_request[0].expressions[0]: is not compiled: it has 17 comprehensions") {
		t.Errorf("an expression of %d comprehensions: %.300v", maxExprComprehensions+1, err)
	}
	if _, err := NewLimit(Config{Name: "n", Algorithm: AlgorithmSlidingWindow, Capacity: 1, Rate: "60s",
		BucketKey: []string{"string(" + comprehensions(maxExprComprehensions+1) + ")"}}); err == nil || !strings.Contains(err.Error(), "it has 17 comprehensions") {
		t.Errorf("a bucket key of %d comprehensions: %.300v", maxExprComprehensions+1, err)
	}
	// 499 nodes an expression (100 comparisons of four nodes, and 99 ||s):
	// 131 fit in 65,536, the 132nd does not.
	wide := `"` + ors("req.host == 'a'", 100) + `"`
	var exprs []string
	for range 200 {
		exprs = append(exprs, wide)
	}
	big := doc(`{"expressions": [` + strings.Join(exprs, ",") + `], "actions": [{"type": "custom-response", "config": {"status_code": 429}}]}`)
	// Exactly MaxPolicyNodes fit: 131 expressions of 499 nodes and one
	// of the 167 left (32 comparisons of 4 nodes and 4 trues, with their
	// 35 ||s: 128 + 4 + 35 = 167).
	exact := doc(`{"expressions": [` + strings.Join(exprs[:131], ",") + `,"` + ors("req.host == 'a'", 32) + strings.Repeat(" || true", 4) +
		`"], "actions": [{"type": "custom-response", "config": {"status_code": 429}}]}`)
	if _, err := NewPolicy(exact); err != nil {
		t.Errorf("a policy of exactly %d nodes: %.300v", MaxPolicyNodes, err)
	}
	if _, err := NewPolicy(big); err == nil || !strings.Contains(err.Error(), "on_http_request[0].expressions[131]: ") ||
		!strings.Contains(err.Error(), "is not compiled: the policy's expressions have more than 65536 nodes") {
		t.Errorf("a policy of 200 expressions of 100 comparisons: %.300v", err)
	}
	// Bucket keys count once too: 10 keys of 500 nodes and 121
	// expressions of 499 take 65,379 nodes (70,379 counted twice).
	key := `"string(` + ors("req.host == 'a'", 100) + `)"`
	keys := strings.TrimSuffix(strings.Repeat(key+",", 10), ",")
	rl := `{"expressions": [` + strings.Join(exprs[:121], ",") + `], "actions": [{"type": "rate-limit", "config": {"name": "n", "algorithm": "sliding_window", "capacity": 1, "rate": "60s", "bucket_key": [` + keys + `]}}]}`
	if _, err := NewPolicy(doc(rl)); err != nil {
		t.Errorf("a policy of 65,379 nodes, its keys counted once: %.300v", err)
	}
	bad := `{"expressions": ["nosuchname"], "actions": [{"type": "rate-limit", "config": {"name": "n", "algorithm": "sliding_window", "capacity": 1, "rate": "60s", "bucket_key": ["req.host"]}}]}`
	_, err := NewPolicy(doc(many(MaxPolicyRules, bad)...))
	if n := len(acctapi.FieldErrors(err)); n != MaxPolicyErrors+1 || !strings.Contains(err.Error(), "on_http_request[20]: and the rules after it are not checked: 20 errors") {
		t.Errorf("%d field errors (%.200v…); want %d and a note of the rest", n, err, MaxPolicyErrors)
	}
	// Counted by error, not by rule (a review saw 60 errors of 20 rules).
	bad3 := strings.Replace(bad, `["nosuchname"]`, `["nosuchname", "nosuchname2", "nosuchname3"]`, 1)
	_, err = NewPolicy(doc(many(50, bad3)...))
	if n := len(acctapi.FieldErrors(err)); n != 21+1 || !strings.Contains(err.Error(), "on_http_request[7]: and the rules after it are not checked: 21 errors") {
		t.Errorf("%d field errors (%.200v…); want 21 and a note of the rest", n, err)
	}
}
