package ratelimit_test

import (
	"fmt"
	"net/http"
	"net/http/httptest"
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
	// t=30s allowed=false retry-after=31s
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
	// request 31: 429 retry-after="61"
}
