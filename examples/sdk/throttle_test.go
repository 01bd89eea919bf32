package sdk_test

import (
	"net/http"
	"testing"
	"testing/synctest"
	"time"

	"github.com/acctapi/acctapi"
	"github.com/acctapi/acctapi/fake"
)

// burst sends n requests one after another and counts the 429 answers
// (the fake's Client does not retry).
func burst(t *testing.T, c *acctapi.Client, n int) (tooMany int) {
	t.Helper()
	for range n {
		err := c.Do(t.Context(), http.MethodGet, "/service_users", nil, nil, nil)
		if _, limited := acctapi.IsRateLimited(err); limited {
			tooMany++
		} else if err != nil {
			t.Fatalf("Do: %v", err)
		}
	}
	return tooMany
}

// TestThrottleKeepsUnderTheRealServiceLimit sends a burst of 300 requests
// to a fake that limits its management API as the real service does (120
// per rolling 60 s), in a synctest bubble, so the throttle's waits take no
// real time: with NewRealServiceLimiter no request is refused, while the
// same burst unthrottled collects 429s.
func TestThrottleKeepsUnderTheRealServiceLimit(t *testing.T) {
	tests := []struct {
		name        string
		opts        []acctapi.Option
		wantTooMany bool
	}{
		{name: "throttled", opts: []acctapi.Option{acctapi.WithThrottle(acctapi.NewRealServiceLimiter())}},
		{name: "unthrottled", wantTooMany: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				srv := fake.Start(t, fake.WithoutListener(), fake.WithRateLimit(120, time.Minute))
				got := burst(t, srv.Client(tt.opts...), 300)
				if tt.wantTooMany != (got > 0) {
					t.Errorf("%d of 300 requests were answered 429; want some: %t", got, tt.wantTooMany)
				}
			})
		})
	}
}
