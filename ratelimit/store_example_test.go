package ratelimit_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"time"

	"github.com/acctapi/acctapi/ratelimit"
)

// downStore is a shared store that cannot be reached.
type downStore struct{}

func (downStore) Allow(context.Context, ratelimit.Bucket, time.Time) (ratelimit.Decision, error) {
	return ratelimit.Decision{}, errors.New("dial tcp 10.0.0.5:6379: connection refused")
}

// A limit whose buckets live in a shared store (in production, for example,
// redisstore.New(client)). When the store fails, FailClosed rejects the
// request with retry-after 1, and the result and the decision hook carry
// the error.
func ExampleWithStore() {
	cfg := ratelimit.Config{Name: "per-ip", Algorithm: "sliding_window", Capacity: 100, Rate: "60s",
		BucketKey: []string{"conn.client_ip"}}
	l, err := ratelimit.NewLimit(cfg,
		// In production the timeout is tens of milliseconds; a minute
		// here, so that the output does not depend on the machine's speed.
		ratelimit.WithStore(downStore{}, ratelimit.FailClosed, time.Minute),
		ratelimit.WithDecisionHook(func(_ *http.Request, name string, res ratelimit.Result) {
			if res.ErrorCode != "" {
				fmt.Println("metric: store errors{limit=" + name + "} += 1")
			}
		}))
	if err != nil {
		fmt.Println(err)
		return
	}
	res := l.Evaluate(httptest.NewRequest("GET", "http://example.com/", nil))
	fmt.Println(res.Reject, res.RetryAfter, res.ErrorCode)
	fmt.Println(res.ErrorMessage)
	// Output:
	// metric: store errors{limit=per-ip} += 1
	// true 1s ERR_RATELIMIT_STORE
	// ratelimit: store: dial tcp 10.0.0.5:6379: connection refused
}
