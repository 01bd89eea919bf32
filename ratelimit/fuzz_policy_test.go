package ratelimit_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/acctapi/acctapi"
	"github.com/acctapi/acctapi/ratelimit"
	"go.yaml.in/yaml/v3"
)

// FuzzNewPolicy checks that loading any document as a policy never panics;
// that a document is either a policy or an error, every part of which is an
// [*acctapi.FieldError] or a message starting "ratelimit:"; and that a
// policy that loads serves requests through its middleware without
// panicking, answering with the next handler's 200, a rate limit's 429, or
// a status a custom-response action of the document names, and nothing
// else (in particular no 5xx of its own).
func FuzzNewPolicy(f *testing.F) {
	const rl = `{"type": "rate-limit", "config": {"name": "n", "algorithm": "sliding_window", "capacity": 1, "rate": "60s", "bucket_key": ["req.host"]}}`
	for _, doc := range []string{
		// ratelimit/example_test.go
		`{"on_http_request": [{"expressions": ["req.url.path.startsWith('/api/specific_endpoint')"], "actions": [{"type": "rate-limit",
		  "config": {"name": "Only allow 30 requests per minute", "algorithm": "sliding_window", "capacity": 30, "rate": "60s", "bucket_key": ["conn.client_ip"]}}]}]}`,
		// ratelimit/policy_test.go
		`{"on_http_request": [{"expressions": ["req.url.path.startsWith('/api/')"], "actions": [{"type": "rate-limit",
		  "config": {"name": "Only allow 30 requests per minute", "algorithm": "sliding_window", "capacity": 30, "rate": "60s", "bucket_key": ["conn.client_ip"]}}]}]}`,
		`{"on_http_request": [
		  {"actions": [{"type": "rate-limit", "config": {"name": "soft", "enforce": false,
		    "algorithm": "sliding_window", "capacity": 1, "rate": "60s", "bucket_key": ["req.host"]}}]},
		  {"expressions": ["actions.ngrok.rate_limit.limited"],
		   "actions": [{"type": "custom-response", "config": {"status_code": 503,
		     "body": "slow down", "headers": {"x-bucket": "limited", "content-type": "text/plain"}}}]}]}`,
		`{"on_http_request": [{"actions": [{"type": "rate-limit", "config": {
		  "name": "per \"ip\"", "algorithm": "sliding_window", "capacity": 2, "rate": "90s", "bucket_key": ["conn.client_ip"]}}]}]}`,
		`{"on_http_request": [
		  {"actions": [{"type": "rate-limit", "config": {"name": "n", "algorithm": "sliding_window",
		    "capacity": 1, "rate": "60s", "bucket_key": ["getReqHeader('x-key')[0]"]}}]},
		  {"expressions": ["actions.ngrok.rate_limit.error.code != ''"],
		   "actions": [{"type": "custom-response", "config": {"status_code": 400, "body": "no key"}}]}]}`,
		`{}`,
		`[`,
		`{"on_http_response": []}`,
		`{"on_request": []}`,
		`{"on_http_request": [{"actions": [{"type": "deny"}]}]}`,
		`{"on_http_request": [{"expressions": ["true"]}]}`,
		`{"on_http_request": [{"action": []}]}`,
		`{"on_http_request": [{"actions": [` + rl + `, {"type": "rate-limit", "config": {"name": "n", "algorithm": "sliding_window", "capacity": 0, "rate": "60s", "bucket_key": ["req.host"]}}]}]}`,
		`{"on_http_request": [{"actions": [{"type": "rate-limit", "config": {"nam": "n"}}]}]}`,
		`{"on_http_request": [{"expressions": ["req.host"], "actions": [` + rl + `]}]}`,
		`{"on_http_request": [{"expressions": ["req.host =="], "actions": [` + rl + `]}]}`,
		`{"on_http_request": [{"actions": [{"type": "custom-response", "config": {"status_code": 42}}]}]}`,
		`{"on_http_request": [{"actions": [{"type": "custom-response", "config": {"status_code": 199}}]}]}`,
		`{"on_http_request": [{"actions": [{"type": "custom-response", "config": {"status_code": 600}}]}]}`,
		`{"on_http_request": [{"actions": [{"type": "custom-response", "config": {"status_code": 418.0}}]}]}`,
		`{"on_http_request": [{"actions": [{"type": "custom-response", "config": {"status_code": 4.18e2}}]}]}`,
		// YAML, bare configs, other phases and actions
		"on_http_request:\n  - actions:\n      - type: rate-limit\n        config: {name: n, algorithm: sliding_window, capacity: 1, rate: 60s, bucket_key: [conn.client_ip]}\n",
		"on_http_request:\n  - actions: [{type: custom-response, config: {status_code: 418, body: tea}}]\non_http_response: []\n",
		"on_http_request: [\n",
		"? [a]\n: b\n",
		"~: b\n",
		"a: &x [*x]\n",
		"name: n\ncapacity: 1\nrate: 60s\n",
		"- actions: []\n",
		"on_http_request:\n  - actions: [{type: deny}, {type: rate-limit, config: {name: n, algorithm: sliding_window, capacity: 1, rate: 60s, bucket_key: [\"hash.md5(req.host)\", \"getReqCookie('s').value\"]}}]\n",
	} {
		f.Add([]byte(doc))
	}
	now := time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)
	next := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { _, _ = io.WriteString(w, "ok") })
	f.Fuzz(func(t *testing.T, doc []byte) {
		opts := []ratelimit.PolicyOption{ratelimit.WithClock(func() time.Time { return now })}
		if len(doc) > 0 && doc[len(doc)-1]%2 == 1 {
			opts = append(opts, ratelimit.WithSkipUnsupported())
		}
		// The headers when the document has a rate-limit action: NewPolicy
		// refuses the option for one without (so a custom-response alone
		// is still run).
		p, err := ratelimit.NewPolicy(doc, append(opts, ratelimit.WithRateLimitHeaders())...)
		if err != nil && strings.Contains(err.Error(), "WithRateLimitHeaders: the policy has no rate-limit action") {
			p, err = ratelimit.NewPolicy(doc, opts...)
		}
		if err != nil {
			if p != nil {
				t.Errorf("NewPolicy returned a policy and the error %v", err)
			}
			for _, e := range errorParts(err) {
				if fe, ok := e.(*acctapi.FieldError); ok {
					if fe.Code == "" || fe.Reason == "" || !strings.HasPrefix(fe.Error(), "acctapi: ") {
						t.Errorf("field error %q without a code or reason: %#v", fe, fe)
					}
				} else if !strings.HasPrefix(e.Error(), "ratelimit:") {
					t.Errorf("error %q (%T) is neither a FieldError nor a ratelimit: error", e, e)
				}
			}
			return
		}
		if p == nil {
			t.Fatal("NewPolicy returned neither a policy nor an error")
		}
		allowed := map[int]bool{http.StatusOK: true, http.StatusTooManyRequests: true}
		for _, s := range customStatuses(t, doc) {
			allowed[s] = true
		}
		h := p.Handler(next)
		// Two requests from one client: the second meets a full bucket of
		// capacity 1.
		for range 2 {
			r := httptest.NewRequest("GET", "http://example.com/api/specific_endpoint?a=1", nil)
			r.RemoteAddr = "203.0.113.7:51234"
			r.Header.Set("X-Key", "k")
			w := httptest.NewRecorder()
			h.ServeHTTP(w, r)
			if !allowed[w.Code] {
				t.Fatalf("status %d (body %q); want 200, 429 or a custom-response status of the document", w.Code, w.Body.String())
			}
		}
	})
}

// errorParts returns the leaves of err's tree of joined errors; a
// FieldError is a leaf, whatever it wraps.
func errorParts(err error) []error {
	if _, ok := err.(*acctapi.FieldError); ok {
		return []error{err}
	}
	if j, ok := err.(interface{ Unwrap() []error }); ok {
		var out []error
		for _, e := range j.Unwrap() {
			out = append(out, errorParts(e)...)
		}
		return out
	}
	return []error{err}
}

// asJSON returns doc, JSON or YAML, as JSON.
func asJSON(t *testing.T, doc []byte) []byte {
	t.Helper()
	if d := bytes.Trim(doc, " \t\n\r"); len(d) > 0 && (d[0] == '{' || d[0] == '[') && json.Valid(d) {
		return doc // JSON, with JSON's white space only around it
	}
	// Otherwise YAML, in flow style when it begins as JSON does.
	var v any
	if err := yaml.Unmarshal(doc, &v); err != nil {
		t.Fatalf("a document that loaded is not YAML: %v", err)
	}
	out, err := json.Marshal(fixKeys(v))
	if err != nil {
		t.Fatalf("a document that loaded has no JSON form: %v", err)
	}
	return out
}

// fixKeys gives YAML mappings with non-string keys string keys.
func fixKeys(v any) any {
	switch v := v.(type) {
	case map[string]any:
		for k, e := range v {
			v[k] = fixKeys(e)
		}
	case map[any]any:
		m := map[string]any{}
		for k, e := range v {
			m[fmt.Sprint(k)] = fixKeys(e)
		}
		return m
	case []any:
		for i, e := range v {
			v[i] = fixKeys(e)
		}
	}
	return v
}

// customStatuses returns the status codes of the custom-response actions
// of a document that loaded as a policy, read as NewPolicy reads it.
func customStatuses(t *testing.T, doc []byte) []int {
	t.Helper()
	var top map[string]json.RawMessage
	var rules []struct {
		Actions []struct {
			Type   string          `json:"type"`
			Config json.RawMessage `json:"config"`
		} `json:"actions"`
	}
	if err := json.Unmarshal(asJSON(t, doc), &top); err != nil {
		t.Fatalf("a document that loaded is not an object: %v", err)
	}
	if raw, ok := top["on_http_request"]; ok {
		if err := json.Unmarshal(raw, &rules); err != nil {
			t.Fatalf("on_http_request of a document that loaded: %v", err)
		}
	}
	var out []int
	for _, r := range rules {
		for _, a := range r.Actions {
			if a.Type != ratelimit.ActionTypeCustomResponse {
				continue
			}
			// NewPolicy takes any whole JSON number (418.0, 4.18e2), as
			// the document's decoder reads numbers exactly; so does this.
			c := struct {
				StatusCode *json.Number `json:"status_code"`
			}{}
			if len(a.Config) > 0 {
				if err := json.Unmarshal(a.Config, &c); err != nil {
					t.Fatalf("config of a custom-response that loaded: %v", err)
				}
			}
			status := http.StatusOK // the default
			if c.StatusCode != nil {
				f, err := c.StatusCode.Float64()
				if err != nil || f != math.Trunc(f) {
					t.Fatalf("status_code %s of a custom-response that loaded: %v", *c.StatusCode, err)
				}
				status = int(f)
			}
			out = append(out, status)
		}
	}
	return out
}
