package ratelimit_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"sync"
	"time"

	"github.com/acctapi/acctapi/ratelimit"
)

// A Limiter alone: three requests per minute per key, time passed in.
func ExampleLimiter() {
	l, err := ratelimit.NewLimiter(3, time.Minute)
	if err != nil {
		panic(err)
	}
	start := time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)
	for _, s := range []int{0, 10, 20, 30, 61} {
		d := l.AllowAt("account-1", start.Add(time.Duration(s)*time.Second))
		fmt.Printf("t=%2ds allowed=%-5v retry-after=%v\n", s, d.Allowed, d.RetryAfter)
	}
	// Output:
	// t= 0s allowed=true  retry-after=0s
	// t=10s allowed=true  retry-after=0s
	// t=20s allowed=true  retry-after=0s
	// t=30s allowed=false retry-after=30s
	// t=61s allowed=true  retry-after=0s
}

// Middleware mirroring the real service's example: 30 requests per minute
// per client IP on one endpoint.
func ExamplePolicy() {
	const doc = `{
	  "on_http_request": [{
	    "expressions": ["req.url.path.startsWith('/api/specific_endpoint')"],
	    "actions": [{
	      "type": "rate-limit",
	      "config": {
	        "name": "Only allow 30 requests per minute",
	        "algorithm": "sliding_window",
	        "capacity": 30,
	        "rate": "60s",
	        "bucket_key": ["conn.client_ip"]
	      }
	    }]
	  }]
	}`
	now := time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)
	p, err := ratelimit.NewPolicy([]byte(doc), ratelimit.WithClock(func() time.Time { return now }))
	if err != nil {
		panic(err)
	}
	h := p.Handler(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprintln(w, "hello")
	}))
	for i := range 31 {
		r := httptest.NewRequest("GET", "http://example.com/api/specific_endpoint", nil)
		r.RemoteAddr = "203.0.113.7:50000"
		w := httptest.NewRecorder()
		h.ServeHTTP(w, r)
		if i >= 29 {
			fmt.Printf("request %d: %d retry-after=%q\n", i+1, w.Code, w.Header().Get("Retry-After"))
		}
	}
	// Output:
	// request 30: 200 retry-after=""
	// request 31: 429 retry-after="60"
}

// A policy in YAML, as users of the real service write it.
func ExampleNewPolicy_yaml() {
	const doc = `
on_http_request:
  - name: per API key
    expressions: ["hasReqHeader('X-Api-Key')"]
    actions:
      - type: rate-limit
        config:
          name: 2 requests a minute per key
          algorithm: sliding_window
          capacity: 2
          rate: 60s
          bucket_key: ["getReqHeader('X-Api-Key')"]
`
	now := time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)
	p, err := ratelimit.NewPolicy([]byte(doc), ratelimit.WithClock(func() time.Time { return now }))
	if err != nil {
		panic(err)
	}
	h := p.Handler(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {}))
	for _, key := range []string{"a", "a", "a", "b"} {
		r := httptest.NewRequest("GET", "http://example.com/", nil)
		r.Header.Set("X-Api-Key", key)
		w := httptest.NewRecorder()
		h.ServeHTTP(w, r)
		fmt.Println(key, w.Code)
	}

	// Malformed YAML is an error that says where.
	_, err = ratelimit.NewPolicy([]byte("on_http_request:\n  - actions: []\n - name: x\n"))
	fmt.Println(err)
	// Output:
	// a 200
	// a 200
	// a 429
	// b 200
	// acctapi: the policy is not valid YAML: yaml: line 2: did not find expected key
}

// A custom-response's body and header values take ${expression}
// placeholders, over the request's variables and the last rate-limit
// action's results.
func ExampleNewPolicy_interpolation() {
	const doc = `
on_http_request:
  - actions:
      - type: rate-limit
        config: {name: per IP, algorithm: sliding_window, capacity: 1, rate: 60s, bucket_key: [conn.client_ip], enforce: false}
  - expressions: ["actions.ngrok.rate_limit.limited"]
    actions:
      - type: custom-response
        config:
          status_code: 429
          body: "${conn.client_ip} is over its limit on ${req.url.path}"
          headers: {x-bucket: "${actions.ngrok.rate_limit.bucket_key}"}
`
	now := time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)
	p, err := ratelimit.NewPolicy([]byte(doc), ratelimit.WithClock(func() time.Time { return now }))
	if err != nil {
		panic(err)
	}
	h := p.Handler(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { fmt.Fprint(w, "ok") }))
	for range 2 {
		r := httptest.NewRequest("GET", "http://example.com/orders", nil)
		r.RemoteAddr = "203.0.113.7:4242"
		w := httptest.NewRecorder()
		h.ServeHTTP(w, r)
		fmt.Println(w.Code, w.Header().Get("X-Bucket"), w.Body.String())
	}
	// Output:
	// 200  ok
	// 429 203.0.113.7 203.0.113.7 is over its limit on /orders
}

// A policy written for the real service, with phases and actions this
// package does not implement: refused by default, and with
// WithSkipUnsupported its rate-limit part runs alone.
func ExampleWithSkipUnsupported() {
	const doc = `
on_http_request:
  - actions:
      - type: add-headers
        config: {headers: {x-served-by: edge}}
      - type: rate-limit
        config: {name: per IP, algorithm: sliding_window, capacity: 1, rate: 60s, bucket_key: [conn.client_ip]}
on_http_response:
  - actions:
      - type: remove-headers
        config: {headers: [server]}
`
	_, err := ratelimit.NewPolicy([]byte(doc))
	fmt.Println(err)

	p, err := ratelimit.NewPolicy([]byte(doc), ratelimit.WithSkipUnsupported())
	if err != nil {
		panic(err)
	}
	fmt.Println("skipped:", p.Skipped())
	h := p.Handler(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {}))
	for range 2 {
		w := httptest.NewRecorder()
		h.ServeHTTP(w, httptest.NewRequest("GET", "http://example.com/", nil))
		fmt.Println(w.Code)
	}
	// Output:
	// acctapi: on_http_response: phase on_http_response is not supported (only on_http_request is); pass ratelimit.WithSkipUnsupported to skip it
	// acctapi: on_http_request[0].actions[0].type: action add-headers is not implemented by this package (only rate-limit and custom-response are); pass ratelimit.WithSkipUnsupported to skip it
	// skipped: [on_http_response on_http_request[0].actions[0] (add-headers)]
	// 200
	// 429
}

// With enforce: false the limit only counts; the next handler reads the
// action's result from the request's context and decides for itself.
func ExampleResultFromContext() {
	const doc = `
on_http_request:
  - actions:
      - type: rate-limit
        config: {name: soft, enforce: false, algorithm: sliding_window, capacity: 1, rate: 60s, bucket_key: [req.host]}
`
	now := time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)
	p, err := ratelimit.NewPolicy([]byte(doc), ratelimit.WithClock(func() time.Time { return now }))
	if err != nil {
		panic(err)
	}
	h := p.Handler(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		res, _ := ratelimit.ResultFromContext(r.Context())
		fmt.Printf("bucket_key=%s limited=%v error.code=%q\n", res.BucketKey, res.Limited, res.ErrorCode)
	}))
	for range 2 {
		h.ServeHTTP(httptest.NewRecorder(), httptest.NewRequest("GET", "http://example.com/", nil))
	}
	// Output:
	// bucket_key=example.com limited=false error.code=""
	// bucket_key=example.com limited=true error.code=""
}

// A decision hook counts every decision, enforced or not, for metrics.
func ExampleWithDecisionHook() {
	const doc = `
on_http_request:
  - actions:
      - type: rate-limit
        config: {name: per-ip, algorithm: sliding_window, capacity: 2, rate: 60s, bucket_key: [conn.client_ip]}
`
	var mu sync.Mutex
	decisions := map[string]int{}
	hook := func(r *http.Request, name string, res ratelimit.Result) {
		mu.Lock()
		defer mu.Unlock()
		decisions[fmt.Sprintf("%s limited=%v", name, res.Limited)]++
	}
	now := time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)
	p, err := ratelimit.NewPolicy([]byte(doc),
		ratelimit.WithClock(func() time.Time { return now }), ratelimit.WithDecisionHook(hook))
	if err != nil {
		panic(err)
	}
	h := p.Handler(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {}))
	for range 5 {
		h.ServeHTTP(httptest.NewRecorder(), httptest.NewRequest("GET", "http://example.com/", nil))
	}
	fmt.Println(decisions)
	// Output:
	// map[per-ip limited=false:2 per-ip limited=true:3]
}

// A config read from JSON is decoded strictly: a misspelt member is an
// error naming the member meant, not a setting silently dropped.
func ExampleConfig_UnmarshalJSON() {
	var cfg ratelimit.Config
	err := json.Unmarshal([]byte(`{"name": "dry run", "enfroce": false, "algorithm": "sliding_window",
		"capacity": 10, "rate": "60s", "bucket_key": ["conn.client_ip"]}`), &cfg)
	fmt.Println(err)
	// Output:
	// acctapi: enfroce: unknown member; did you mean "enforce"?
}
