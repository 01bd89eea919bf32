package acctapi_test

import (
	"context"
	"errors"
	"net/http"
	"testing"
	"testing/synctest"
	"time"

	"golang.org/x/time/rate"

	"github.com/acctapi/acctapi"
)

// TestThrottleWaitsUnderTheContext checks that a call waiting for the
// throttle ends when its context does, without sending anything, and that
// a deadline the throttle cannot meet fails at once.
func TestThrottleWaitsUnderTheContext(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		sent := 0
		rt := roundTripper(func(r *http.Request) (*http.Response, error) {
			sent++
			return &http.Response{StatusCode: http.StatusNoContent, Body: http.NoBody, Request: r}, nil
		})
		lim := rate.NewLimiter(rate.Every(time.Hour), 1)
		c, err := acctapi.NewClient("k", acctapi.WithBaseURL("https://api.test"),
			acctapi.WithHTTPClient(&http.Client{Transport: rt}), acctapi.WithThrottle(lim))
		if err != nil {
			t.Fatal(err)
		}
		if err := c.Do(t.Context(), http.MethodDelete, "/things/1", nil, nil, nil); err != nil {
			t.Fatalf("first call, within the burst: %v", err)
		}

		ctx, cancel := context.WithCancel(t.Context())
		done := make(chan error, 1)
		go func() { done <- c.Do(ctx, http.MethodDelete, "/things/2", nil, nil, nil) }()
		synctest.Wait() // the call is waiting for the throttle
		cancel()
		if err := <-done; !errors.Is(err, context.Canceled) {
			t.Errorf("cancelled while throttled: %v, want context.Canceled", err)
		}

		ctx, cancel = context.WithTimeout(t.Context(), time.Minute)
		defer cancel()
		start := time.Now()
		if err := c.Do(ctx, http.MethodDelete, "/things/3", nil, nil, nil); !errors.Is(err, context.DeadlineExceeded) {
			t.Errorf("a deadline the throttle cannot meet: %v, want context.DeadlineExceeded", err)
		}
		if d := time.Since(start); d != 0 {
			t.Errorf("a deadline the throttle cannot meet: failed after %v, want at once", d)
		}
		// A call that gave up gave its reservation back, so that calls after
		// it wait no longer; one whose context had already ended took
		// none. (The bubble's clock has not moved: the burst's one token
		// is spent, and no more.)
		if tokens := lim.Tokens(); tokens < -0.01 {
			t.Errorf("%.2f tokens after two calls that gave up: their reservations were kept", tokens)
		}
		ended, cancelEnded := context.WithCancel(t.Context())
		cancelEnded()
		if err := c.Do(ended, http.MethodDelete, "/things/4", nil, nil, nil); !errors.Is(err, context.Canceled) {
			t.Errorf("a call whose context had ended: %v, want context.Canceled", err)
		}
		if tokens := lim.Tokens(); tokens < -0.01 {
			t.Errorf("%.2f tokens after a call whose context had ended: it reserved one", tokens)
		}
		if sent != 1 {
			t.Errorf("%d requests sent, want 1", sent)
		}
	})
	if _, err := acctapi.NewClient("k", acctapi.WithThrottle(nil)); err == nil {
		t.Error("WithThrottle(nil) accepted")
	}
}

// TestWithThrottleRefusesALimiterThatBlocks checks that WithThrottle
// refuses a limiter that would block calls for ever: burst 0, or a limit of
// zero (after its burst, it never admits another request).
func TestWithThrottleRefusesALimiterThatBlocks(t *testing.T) {
	tests := []struct {
		name   string
		l      *rate.Limiter
		wantOK bool
	}{
		{name: "nil", l: nil},
		{name: "burst 0", l: rate.NewLimiter(1, 0)},
		{name: "limit 0", l: rate.NewLimiter(0, 1)},
		{name: "negative limit", l: rate.NewLimiter(-1, 1)},
		{name: "limit 0, burst 0", l: rate.NewLimiter(0, 0)},
		{name: "rate.Inf", l: rate.NewLimiter(rate.Inf, 0), wantOK: true},
		{name: "one a second", l: rate.NewLimiter(1, 1), wantOK: true},
		{name: "one a day", l: rate.NewLimiter(rate.Every(24*time.Hour), 1), wantOK: true},
		{name: "one a day and a second", l: rate.NewLimiter(rate.Every(24*time.Hour+time.Second), 1)},
		{name: "1e-12 a second", l: rate.NewLimiter(1e-12, 1)},
		{name: "the real service's", l: acctapi.NewRealServiceLimiter(), wantOK: true},
	}
	for _, tt := range tests {
		if _, err := acctapi.NewClient("k", acctapi.WithThrottle(tt.l)); (err == nil) != tt.wantOK {
			t.Errorf("%s: NewClient = %v, want accepted: %v", tt.name, err, tt.wantOK)
		}
	}
}

// TestThrottleBeforeARetry checks that when the throttle cannot admit a
// retry before the context's deadline, the call returns the answer it is
// retrying (the 429) at once, wrapping context.DeadlineExceeded.
func TestThrottleBeforeARetry(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		sent := 0
		rt := roundTripper(func(r *http.Request) (*http.Response, error) {
			sent++
			h := http.Header{"Retry-After": {"1"}}
			return &http.Response{StatusCode: http.StatusTooManyRequests, Header: h, Body: http.NoBody, Request: r}, nil
		})
		c, err := acctapi.NewClient("k", acctapi.WithBaseURL("https://api.test"),
			acctapi.WithHTTPClient(&http.Client{Transport: rt}), acctapi.WithRetry(acctapi.DefaultRetryPolicy()),
			acctapi.WithThrottle(rate.NewLimiter(rate.Every(time.Hour), 1)))
		if err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
		defer cancel()
		start := time.Now()
		err = c.Do(ctx, http.MethodGet, "/things", nil, nil, nil)
		if _, ok := acctapi.IsRateLimited(err); !ok || !errors.Is(err, context.DeadlineExceeded) {
			t.Errorf("Do = %v, want the 429 and context.DeadlineExceeded", err)
		}
		if d := time.Since(start); d != time.Second {
			t.Errorf("Do returned after %v, want after the 1s Retry-After", d)
		}
		if sent != 1 {
			t.Errorf("%d requests sent, want 1", sent)
		}
	})
}

// roundTripper is an in-process http.RoundTripper.
type roundTripper func(*http.Request) (*http.Response, error)

func (f roundTripper) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }
