package ratelimit

import (
	"testing"
)

// plainKeys are bucket keys read without CEL and without allocating: bare
// string variables whose value the request already holds, and
// getReqHeader with a literal name of a header with one value (several
// values are joined into a new string).
var plainKeys = []string{
	"req.host", "req.method", "req.url.path", "req.url.query", "req.url.host", "req.url.scheme",
	"req.user_agent", "req.location", "req.content_type.raw", "req.version", "conn.client_ip",
	"conn.tls.sni", "conn.tls.version", "conn.tls.cipher_suite", "conn.tls.negotiated_alpn",
	"conn.server_region", "endpoint.host", varBucketKey, "getReqHeader('user-agent')",
}

// TestPlainKeysAllocFree pins the fast path: evaluating a Limit keyed by a
// plain variable allocates nothing.
func TestPlainKeysAllocFree(t *testing.T) {
	r, opts := fullRequest(t)
	for _, key := range plainKeys {
		cfg := keyConfig(key)
		cfg.Capacity = MaxCapacity
		l := actionLimit(t, cfg, opts...)
		if res := l.EvaluateAt(r, base); res.ErrorCode != "" {
			t.Fatalf("%s: %s", key, res.ErrorMessage)
		}
		if n := testing.AllocsPerRun(100, func() { l.EvaluateAt(r, base) }); n != 0 {
			t.Errorf("%s: %v allocations per evaluation; want 0", key, n)
		}
	}
}

// BenchmarkBucketKeys is one Limit evaluation per bucket key: the plain
// variables' direct path, and expressions that go through CEL (with and
// without a runtime cost limit).
func BenchmarkBucketKeys(b *testing.B) {
	r, opts := fullRequest(b)
	keys := []string{
		"req.host", "conn.client_ip", "conn.tls.sni", "getReqHeader('x-api-key')", // direct
		"conn.client_port", "req.url", "time.now", "conn.geo.country_code", // CEL, one variable
		"getReqCookie('session').value", "hash.sha256(req.host)", "req.headers['x-api-key'][0]", // CEL
		"inCidrRange(conn.client_ip, '203.0.113.0/24') ? 'inside' : conn.client_ip",
		"req.headers['user-agent'][0].matches('Safari')",                                                                  // no small static bound: cost tracked
		"req.headers['user-agent'][0].matches('Safari') && req.host.startsWith('api') && req.method == 'GET' ? 'a' : 'b'", // tracked, with string tests
	}
	for _, key := range keys {
		b.Run(key, func(b *testing.B) {
			cfg := keyConfig(key)
			cfg.Capacity = MaxCapacity
			l := mustLimit(b, cfg, opts...)
			b.ReportAllocs()
			for b.Loop() {
				if res := l.EvaluateAt(r, base); res.ErrorCode != "" {
					b.Fatal(res.ErrorMessage)
				}
			}
		})
	}
}
