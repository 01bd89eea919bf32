// Package limitedapi is a small net/http API served behind the ratelimit
// middleware, with a traffic policy mirroring the real service's documented
// rate-limit examples:
//
//   - every client IP may make 30 requests per minute (bucket key
//     conn.client_ip), enforced: the 31st gets 429 with retry-after;
//   - every API key, sent in the X-Api-Key header, may make 10 requests per
//     minute (bucket key getReqHeader('X-Api-Key')), enforced;
//   - searches are limited to 5 per minute per client IP with enforce:
//     false, so the limit only sets actions.ngrok.rate_limit.limited, and a
//     following custom-response rule answers those requests with a JSON 429
//     of its own.
//
// The tests (api_test.go) drive it with a clock they control
// (ratelimit.WithClock), so windows pass without sleeping. Run them with
//
//	go test -v ./examples/ratelimit
//
// Behind a proxy or load balancer, give NewHandler
// ratelimit.WithClientIP so that conn.client_ip is the client's address
// rather than the proxy's; and remember that buckets live in the process,
// so N replicas admit up to N times each capacity.
package limitedapi

import (
	"fmt"
	"net/http"

	"github.com/acctapi/acctapi/ratelimit"
)

// Policy is the traffic policy NewHandler enforces, in YAML as users of
// the real service write it (JSON works too). Rules run in order; a
// rate-limit action does not end the request unless it rejects it, so a
// request may be counted by several limits.
const Policy = `
on_http_request:
  - name: per client IP
    actions:
      - type: rate-limit
        config:
          name: Only allow 30 requests per minute
          algorithm: sliding_window
          capacity: 30
          rate: 60s
          bucket_key: [conn.client_ip]
  - name: per API key
    expressions: ["hasReqHeader('X-Api-Key')"]
    actions:
      - type: rate-limit
        config:
          name: Allow 10 requests per minute per API key
          algorithm: sliding_window
          capacity: 10
          rate: 60s
          bucket_key: ["getReqHeader('X-Api-Key')"]
  - name: "searches: count, do not enforce"
    expressions: ["req.url.path == '/search'"]
    actions:
      - type: rate-limit
        config:
          name: searches
          enforce: false
          algorithm: sliding_window
          capacity: 5
          rate: 60s
          bucket_key: [conn.client_ip]
  - name: answer limited searches ourselves
    expressions: [actions.ngrok.rate_limit.limited]
    actions:
      - type: custom-response
        config:
          status_code: 429
          headers: {content-type: application/json}
          body: '{"error": "at most 5 searches a minute; try again shortly"}'
`

// NewHandler returns the API — GET /hello and GET /search?q=... — wrapped
// in Policy. opts are passed to ratelimit.NewPolicy: WithClock in tests,
// WithClientIP behind a proxy, WithRateLimitHeaders to advertise the
// limits, WithDecisionHook to count decisions. The handler is safe for concurrent use; its buckets live as long
// as it does, so build it once.
func NewHandler(opts ...ratelimit.PolicyOption) (http.Handler, error) {
	p, err := ratelimit.NewPolicy([]byte(Policy), opts...)
	if err != nil {
		return nil, fmt.Errorf("limitedapi: %w", err)
	}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /hello", func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprintln(w, "hello")
	})
	mux.HandleFunc("GET /search", func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprintf(w, "results for %q\n", r.URL.Query().Get("q"))
	})
	return p.Handler(mux), nil
}
