package ratelimit

import (
	"io"
	"net/http"
	"net/http/httptest"
	"testing"
)

func benchRequest() *http.Request {
	r := newRequest("GET", "http://api.example.com/v1/things")
	r.Header.Set("X-Api-Key", "k_1234567890abcdef")
	return r
}

// BenchmarkEvaluate is the action on one request: bucket keys, key
// building and the limiter.
func BenchmarkEvaluate(b *testing.B) {
	for _, bc := range []struct {
		name string
		keys []string
	}{
		{"req.host", []string{"req.host"}},
		{"getReqHeader", []string{"getReqHeader('x-api-key')"}},
		{"CEL-ternary", []string{"hasReqHeader('x-api-key') ? getReqHeader('x-api-key')[0] : 'unknown'"}},
		{"three-keys", []string{"req.host", "conn.client_ip", "getReqHeader('x-api-key')"}},
		{"three-keys-CEL", []string{"req.host + ''", "conn.client_ip + ''", "getReqHeader('x-api-key')[0]"}},
	} {
		b.Run(bc.name, func(b *testing.B) {
			cfg := keyConfig(bc.keys...)
			cfg.Capacity = MaxCapacity
			l := mustLimit(b, cfg)
			r := benchRequest()
			b.ReportAllocs()
			for b.Loop() {
				if res := l.EvaluateAt(r, base); res.ErrorCode != "" {
					b.Fatal(res.ErrorMessage)
				}
			}
		})
	}
}

// BenchmarkMiddleware compares a handler with and without a policy of one
// rule (a path expression) and one rate-limit action keyed by client IP;
// every request is admitted. The difference is the middleware's overhead.
func BenchmarkMiddleware(b *testing.B) {
	const doc = `{"on_http_request": [{"expressions": ["req.url.path.startsWith('/v1/')"],
	  "actions": [{"type": "rate-limit", "config": {"name": "n", "algorithm": "sliding_window",
	  "capacity": 2000000000, "rate": "60s", "bucket_key": ["conn.client_ip"]}}]}]}`
	next := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.WriteString(w, "ok")
	})
	c := &clock{now: base}
	for _, bc := range []struct {
		name string
		h    http.Handler
	}{
		{"bare", next},
		{"policy", mustPolicy(b, doc, WithClock(c.Now)).Handler(next)},
		{"policy-real-clock", mustPolicy(b, doc).Handler(next)},
		{"policy-headers", mustPolicy(b, doc, WithClock(c.Now), WithRateLimitHeaders()).Handler(next)},
	} {
		b.Run(bc.name, func(b *testing.B) {
			r := benchRequest()
			w := httptest.NewRecorder()
			b.ReportAllocs()
			for b.Loop() {
				w.Body.Reset()
				clear(w.Header()) // the fields the policy adds, each time
				bc.h.ServeHTTP(w, r)
			}
			if w.Code != 200 {
				b.Fatal(w.Code)
			}
		})
	}
}

// BenchmarkCompile is the once-per-config cost.
func BenchmarkCompile(b *testing.B) {
	cfg := keyConfig("req.host", "conn.client_ip", "getReqHeader('x-api-key')")
	b.ReportAllocs()
	for b.Loop() {
		if _, err := NewLimit(cfg); err != nil {
			b.Fatal(err)
		}
	}
}
