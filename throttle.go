package acctapi

import (
	"context"
	"errors"
	"fmt"

	"golang.org/x/time/rate"
)

// realServiceLimit and realServiceBurst are the throttle
// NewRealServiceLimiter sets; see there.
const (
	realServiceLimit = rate.Limit(1 / 0.6) // requests per second
	realServiceBurst = 10
)

// NewRealServiceLimiter returns a new limiter for [WithThrottle] that keeps
// a client under the real service's limit of 120 requests per rolling 60 s:
// a burst of 10, then one request per 600 ms, so at most 110 requests in
// any 60 s. The margin of 10 absorbs the difference between the client's
// clock and the service's, and how the service counts a window's edges.
// The limit is per account: share one limiter among every Client of the
// same account in the program.
func NewRealServiceLimiter() *rate.Limiter {
	return rate.NewLimiter(realServiceLimit, realServiceBurst)
}

// WithThrottle makes the client wait for l before sending each request,
// retries included, so that a busy program stays under a server's rate
// limit instead of collecting 429 responses. It waits under the request's
// context: a context that ends first ends the call, and a deadline too near
// to be met fails at once, with an error wrapping
// [context.DeadlineExceeded]. l may be shared by several clients (a
// [rate.Limiter] is safe for concurrent use); [NewRealServiceLimiter] makes
// one for the real service. It must not be nil, and it must admit requests:
// its limit must be at least one request a day (or [rate.Inf]) and its
// burst at least 1 (any burst with rate.Inf). Without this option
// requests are not throttled.
func WithThrottle(l *rate.Limiter) Option {
	return func(c *Client) error {
		if l == nil {
			return errors.New("acctapi: WithThrottle: nil *rate.Limiter")
		}
		if l.Limit() == rate.Inf {
			c.throttle = l
			return nil
		}
		if l.Burst() < 1 {
			return errors.New("acctapi: WithThrottle: the limiter's burst is zero, so it never admits a request")
		}
		if !(l.Limit() > 0) {
			return fmt.Errorf("acctapi: WithThrottle: the limiter's limit is %v, so it admits no request after its burst", l.Limit())
		}
		if l.Limit() < minThrottle {
			// A call without a deadline would wait days (a review's
			// 1e-12 a second: years); a unit mistake, surely.
			return fmt.Errorf("acctapi: WithThrottle: the limiter's limit is %v a second, less than one request a day after its burst", l.Limit())
		}
		c.throttle = l
		return nil
	}
}

// minThrottle is the lowest limit WithThrottle takes: one request a day
// (rate.Every(24*time.Hour)).
const minThrottle rate.Limit = 1.0 / (24 * 60 * 60)

// wait waits for the client's throttle, if any: for a reservation, given
// back when the wait fails.
func (c *Client) wait(ctx context.Context) error {
	if c.throttle == nil {
		return nil
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	r := c.throttle.Reserve()
	if !r.OK() {
		// The limiter was changed after NewClient checked it.
		return errors.New("the limiter admits no request")
	}
	if err := pause(ctx, r.Delay()); err != nil {
		r.Cancel()
		return err
	}
	return nil
}
