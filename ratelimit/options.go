package ratelimit

import (
	"net/http"
	"time"
)

// Option configures a [Limiter], a [Limit] or a [Policy]. Each constructor
// documents the options it uses and ignores the others.
type Option func(*options)

type options struct {
	maxBuckets int
	clientIP   func(*http.Request) string
	now        func() time.Time
	headers    bool
}

func buildOptions(opts []Option) options {
	o := options{maxBuckets: DefaultMaxBuckets, now: time.Now}
	for _, opt := range opts {
		if opt != nil {
			opt(&o)
		}
	}
	return o
}

// WithMaxBuckets caps the number of live buckets of each limiter at n
// (values below 1 mean 1, values above 1<<27 mean 1<<27). See [Limiter]
// for what happens when the cap is reached. The default is
// [DefaultMaxBuckets].
func WithMaxBuckets(n int) Option {
	return func(o *options) {
		o.maxBuckets = min(max(n, 1), maxBuckets)
	}
}

// maxBuckets bounds WithMaxBuckets so that a shard's bucket ids (a 15-bit
// chunk and a 16-bit record) never overflow: 64 shards of at most 1<<21
// buckets, at 128 or more buckets per chunk.
const maxBuckets = 1 << 27

// WithClientIP makes conn.client_ip (and so a bucket key such as
// "conn.client_ip") come from fn instead of the connection's remote
// address. Use it behind a trusted proxy, for example to read the last
// address of X-Forwarded-For that the proxy appended; never trust a header
// a client can set. conn.client_port stays the connection's.
func WithClientIP(fn func(r *http.Request) string) Option {
	return func(o *options) { o.clientIP = fn }
}

// WithClock sets the clock a [Limit] or [Policy] reads for each request;
// the default is time.Now. Tests pass a fake clock.
func WithClock(now func() time.Time) Option {
	return func(o *options) {
		if now != nil {
			o.now = now
		}
	}
}

// WithRateLimitHeaders makes a [Policy] add the IETF draft
// (draft-ietf-httpapi-ratelimit-headers) RateLimit-Policy and RateLimit
// fields for every rate-limit action it evaluates, for example
//
//	RateLimit-Policy: "per-ip";q=30;w=60
//	RateLimit: "per-ip";r=0;t=12
func WithRateLimitHeaders() Option {
	return func(o *options) { o.headers = true }
}
