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
		if err := c.Do(ctx, http.MethodDelete, "/things/3", nil, nil, nil); err == nil {
			t.Error("a deadline the throttle cannot meet: the call succeeded")
		}
		if sent != 1 {
			t.Errorf("%d requests sent, want 1", sent)
		}
	})
	if _, err := acctapi.NewClient("k", acctapi.WithThrottle(nil)); err == nil {
		t.Error("WithThrottle(nil) accepted")
	}
	if _, err := acctapi.NewClient("k", acctapi.WithThrottle(rate.NewLimiter(1, 0))); err == nil {
		t.Error("WithThrottle with burst 0 accepted")
	}
}

// roundTripper is an in-process http.RoundTripper.
type roundTripper func(*http.Request) (*http.Response, error)

func (f roundTripper) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }
