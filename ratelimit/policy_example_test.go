package ratelimit_test

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"time"

	"github.com/acctapi/acctapi/ratelimit"
)

// An action after a terminating action in its rule could never run: the
// policy is refused, as the real service refuses it (ERR_NGROK_2207),
// with the action's path. Moving the rate-limit action first makes the
// custom response what a request over the limit gets.
func ExampleNewPolicy_unreachableAction() {
	const doc = `
on_http_request:
  - actions:
      - type: custom-response
        config: {status_code: 503, body: down for maintenance}
      - type: rate-limit
        config: {name: per IP, algorithm: sliding_window, capacity: 1, rate: 60s, bucket_key: [conn.client_ip]}
`
	_, err := ratelimit.NewPolicy([]byte(doc))
	fmt.Println(err)
	// Output:
	// acctapi: on_http_request[0].actions[1]: the rate-limit action is unreachable: actions[0] (custom-response) before it always ends the request (ERR_NGROK_2207); move it before actions[0], or into a rule of its own
}

// The RateLimit-Policy field describes the action; the RateLimit field
// says what its bucket admits now, and on a 429 when to come back. A
// request whose bucket key fails to evaluate (here: without the
// X-Api-Key header) is not counted, and gets no RateLimit field.
func ExampleWithRateLimitHeaders() {
	const doc = `
on_http_request:
  - actions:
      - type: rate-limit
        config: {name: per key, algorithm: sliding_window, capacity: 1, rate: 60s, bucket_key: ["getReqHeader('X-Api-Key')[0]"]}
`
	now := time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC) // a fake clock
	p, err := ratelimit.NewPolicy([]byte(doc), ratelimit.WithRateLimitHeaders(),
		ratelimit.WithClock(func() time.Time { return now }))
	if err != nil {
		panic(err)
	}
	h := p.Handler(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {}))
	for _, key := range []string{"k1", "k1", ""} {
		r := httptest.NewRequest("GET", "http://example.com/", nil)
		if key != "" {
			r.Header.Set("X-Api-Key", key)
		}
		w := httptest.NewRecorder()
		h.ServeHTTP(w, r)
		fmt.Printf("%d %s | %s\n", w.Code, w.Header().Get("RateLimit-Policy"), w.Header().Get("RateLimit"))
	}
	// Output:
	// 200 "per key";q=1;w=60 | "per key";r=0
	// 429 "per key";q=1;w=60 | "per key";r=0;t=60
	// 200 "per key";q=1;w=60 |
}

// A rule gated on the rate-limit action's results before any rate-limit
// action has run could never fire (limited is false until one has), so
// the policy is refused, naming the expression. Gating a rule after the
// rate-limit action's rule, on a limit with enforce: false, answers
// requests over the limit with the custom response.
func ExampleNewPolicy_resultsBeforeRateLimit() {
	const limit = `{type: rate-limit, config: {name: per IP, algorithm: sliding_window, capacity: 1, rate: 60s, bucket_key: [conn.client_ip], enforce: false}}`
	const gated = `{expressions: [actions.ngrok.rate_limit.limited], actions: [{type: custom-response, config: {status_code: 429, body: slow down}}]}`
	_, err := ratelimit.NewPolicy([]byte("on_http_request:\n  - " + gated + "\n  - {actions: [" + limit + "]}\n"))
	fmt.Println(err)

	now := time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC) // a fake clock
	p, err := ratelimit.NewPolicy([]byte("on_http_request:\n  - {actions: ["+limit+"]}\n  - "+gated+"\n"),
		ratelimit.WithClock(func() time.Time { return now }))
	if err != nil {
		panic(err)
	}
	h := p.Handler(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { fmt.Fprint(w, "ok") }))
	for range 2 {
		w := httptest.NewRecorder()
		h.ServeHTTP(w, httptest.NewRequest("GET", "http://example.com/", nil))
		fmt.Println(w.Code, w.Body)
	}
	// Output:
	// acctapi: on_http_request[0].expressions[0]: reads actions.ngrok.rate_limit.limited, but no rate-limit action runs before it, so it can only see the empty result (limited false, the others ""); rules run in order, and a rule's expressions before its actions; put the test in a rule after one with a rate-limit action
	// 200 ok
	// 429 slow down
}
