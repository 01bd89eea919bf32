package acctapi

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"net"
	"net/http"
	"net/http/httptrace"
	"net/url"
	"strconv"
	"sync/atomic"
	"time"
)

// RetryPolicy says when a [Client] sends a request again.
//
//   - A 429 response is retried for every method (the server did not act on
//     it), after the delay its Retry-After header gives (seconds or an HTTP
//     date), or after the backoff delay when it gives none.
//   - A 5xx response or a connection error is retried only for GET and
//     DELETE, never for POST or PATCH, which might have taken effect; the
//     delay is a 5xx response's Retry-After (a 503's, typically), or else
//     a jittered exponential backoff. A redirect the client refuses to
//     follow further (the tenth, or one its http.Client's CheckRedirect
//     refuses) is not retried: it would be met again.
//
// Retries stop after MaxAttempts attempts in all, or when the next wait would
// take the total time waited past MaxWait, or when the context ends, or when
// the next wait would not end before the context's deadline (the call then
// returns at once rather than wait for a deadline it cannot beat). The last
// response or error is then returned; when the context stopped the retries,
// the error also wraps the context's error ([context.Canceled] or
// [context.DeadlineExceeded]), so that both [IsRateLimited] and
// [errors.Is] tell what happened.
//
// A DELETE retried after an attempt whose outcome is unknown (a connection
// error after the request was written, or a 5xx response: the resource
// may have been deleted; not an attempt that never wrote its request, such
// as a dial that failed or hung until a timeout, or a failed TLS
// handshake) succeeds when
// the retry answers 404 not found ([IsNotFound]): the resource is gone,
// whichever attempt removed it. A 404 after attempts whose outcome is known
// (the first attempt's, or one after 429s only, which the server did not
// act on) is an error as always.
//
// [DefaultRetryPolicy] returns the policy a [Client] starts with.
// [WithRetry] refuses the zero value (a policy left unset, which would
// quietly turn retries off: say MaxAttempts 1, or use [WithoutRetry]), and
// a policy of at most one attempt that sets a delay or a wait, which would
// do nothing; so is a MaxDelay below BaseDelay, and a MaxWait shorter than
// any wait before a retry (half of BaseDelay, and a second), with which
// nothing would be retried.
type RetryPolicy struct {
	// MaxAttempts is the most attempts per call, the first included: at
	// least 1, which means no retries.
	MaxAttempts int
	// MaxWait bounds the total time spent waiting between attempts of one
	// call. Zero means no bound.
	MaxWait time.Duration
	// BaseDelay is the first backoff delay; each further retry doubles it,
	// up to MaxDelay. The delay actually waited is drawn uniformly from
	// [delay/2, delay] ("equal jitter").
	BaseDelay time.Duration
	// MaxDelay caps one backoff delay. Zero means no cap.
	MaxDelay time.Duration
}

// DefaultRetryPolicy returns 4 attempts, at most 1 minute of waiting in all,
// and a backoff from 250 ms up to 5 s.
func DefaultRetryPolicy() RetryPolicy {
	return RetryPolicy{MaxAttempts: 4, MaxWait: time.Minute, BaseDelay: 250 * time.Millisecond, MaxDelay: 5 * time.Second}
}

func (p RetryPolicy) validate() error {
	if p.MaxAttempts < 0 || p.MaxWait < 0 || p.BaseDelay < 0 || p.MaxDelay < 0 {
		return errors.New("acctapi: WithRetry: negative value in RetryPolicy")
	}
	if p.MaxAttempts == 0 {
		return errors.New("acctapi: WithRetry: MaxAttempts is 0 (a RetryPolicy left unset?); set it, 1 for no retries, or use WithoutRetry or DefaultRetryPolicy")
	}
	if p.MaxAttempts > 1 && p.BaseDelay == 0 {
		return errors.New("acctapi: WithRetry: retries need a BaseDelay greater than zero")
	}
	if p.MaxAttempts == 1 && (p.MaxWait != 0 || p.BaseDelay != 0 || p.MaxDelay != 0) {
		return errors.New("acctapi: WithRetry: MaxAttempts is 1, so there are no retries and MaxWait, BaseDelay and MaxDelay do nothing; set MaxAttempts above 1, or leave them zero")
	}
	if p.MaxDelay != 0 && p.MaxDelay < p.BaseDelay {
		return fmt.Errorf("acctapi: WithRetry: MaxDelay %v is below BaseDelay %v, which then does nothing; set MaxDelay to BaseDelay or more, or 0 for no cap", p.MaxDelay, p.BaseDelay)
	}
	// The shortest backoff wait is half of BaseDelay (equal jitter), and a
	// Retry-After is whole seconds: a MaxWait below both lets no retry
	// wait (a review's MaxAttempts 5 with BaseDelay 1s and MaxWait 100ms
	// tried a 503 once).
	if p.MaxWait != 0 && p.MaxWait < p.BaseDelay/2 && p.MaxWait < time.Second {
		return fmt.Errorf("acctapi: WithRetry: MaxWait %v is shorter than any wait before a retry (half of BaseDelay %v, or a Retry-After of a second), so nothing would be retried; raise MaxWait or lower BaseDelay", p.MaxWait, p.BaseDelay)
	}
	return nil
}

// maxBackoff bounds one backoff delay when MaxDelay sets no cap, so doubling
// never overflows.
const maxBackoff = 24 * time.Hour

// maxRetryAfter bounds the delay a Retry-After header can ask for.
const maxRetryAfter = 24 * time.Hour

// backoff returns the jittered delay before retry number n (1-based).
func (p RetryPolicy) backoff(n int) time.Duration {
	d := p.BaseDelay
	for i := 1; i < n && (p.MaxDelay == 0 || d < p.MaxDelay) && d <= maxBackoff/2; i++ {
		d *= 2
	}
	if p.MaxDelay > 0 && d > p.MaxDelay {
		d = p.MaxDelay
	}
	if d <= 1 {
		return d
	}
	half := d / 2
	return half + rand.N(d-half+1)
}

// idempotent reports whether a method may be retried after a 5xx or a
// connection error.
func idempotent(method string) bool {
	return method == http.MethodGet || method == http.MethodDelete || method == http.MethodHead
}

// send performs the request, retrying as c.retry says. A non-nil response
// is returned unread. unsure reports that an earlier attempt failed in a
// way that leaves its effect unknown (a connection error after the
// request may have been written, see attemptTrace.maySent, or a 5xx
// response): Do reads a DELETE's 404 after one as the delete having
// worked.
//
// An attempt that is to be retried is read at once, so that when the
// context ends before the next attempt, or its deadline comes before the
// wait would end, its answer is still what the call returns (wrapping the
// context's error too).
func (c *Client) send(ctx context.Context, method string, u *url.URL, body []byte) (resp *http.Response, unsure bool, err error) {
	var waited time.Duration
	var last error // the answer of the attempt being retried, as an error
	for attempt := 1; ; attempt++ {
		req, err := c.newRequest(ctx, method, u, body)
		if err != nil {
			return nil, unsure, err
		}
		if err := c.wait(ctx); err != nil {
			return nil, unsure, giveUp(last, "not retried", method, u.Path, fmt.Errorf("waiting for the throttle: %w", err))
		}
		var at *attemptTrace // nil: not traced
		if method == http.MethodDelete && attempt < c.retry.MaxAttempts {
			at = new(attemptTrace)
			// Only a DELETE reads unsure (see Do), and only when it may
			// be retried: other requests skip the trace's allocations.
			req = req.WithContext(httptrace.WithClientTrace(req.Context(), at.trace()))
		}
		resp, err := c.http.Do(req)
		if ctx.Err() != nil {
			if resp != nil {
				resp.Body.Close()
			}
			// The last answer still counts (a 429 for IsRateLimited), as
			// when the context ends during a wait.
			return nil, unsure, giveUp(last, "the retry was cut short", method, u.Path, ctx.Err())
		}
		var delay time.Duration
		switch {
		case err != nil:
			err = fmt.Errorf("acctapi: %s %s: %w", method, u.Path, err)
			var re *redirectError
			if !idempotent(method) || errors.As(err, &re) {
				return nil, unsure, err
			}
			delay = c.retry.backoff(attempt)
		case resp.StatusCode == http.StatusTooManyRequests || resp.StatusCode >= 500 && idempotent(method):
			delay = parseRetryAfter(resp.Header.Get("Retry-After"), time.Now())
			if delay == 0 {
				delay = c.retry.backoff(attempt)
			}
		default:
			return resp, unsure, nil
		}
		if attempt >= c.retry.MaxAttempts || (c.retry.MaxWait > 0 && waited+delay > c.retry.MaxWait) {
			return resp, unsure, err
		}
		if resp != nil {
			err = decodeError(resp) // reads the body, so the connection is reused
			resp.Body.Close()
		}
		last = err
		unsure = unsure || resp == nil && at.maySent(err) || resp != nil && resp.StatusCode >= 500
		if err := pause(ctx, delay); err != nil {
			return nil, unsure, giveUp(last, "not retried", method, u.Path, err)
		}
		waited += delay
	}
}

// attemptTrace records, through net/http's client trace, whether an
// attempt's transport looked for a connection and whether it wrote the
// request's headers. Its hooks may run on the transport's goroutines.
type attemptTrace struct{ started, wrote atomic.Bool }

func (a *attemptTrace) trace() *httptrace.ClientTrace {
	return &httptrace.ClientTrace{
		GetConn:      func(string) { a.started.Store(true) },
		WroteHeaders: func() { a.wrote.Store(true) },
	}
}

// maySent reports whether a failed attempt, which err ended, may have
// reached the server. Through net/http's Transport (it reported looking
// for a connection), only if the request's headers were written: a dial
// that failed or hung until a timeout, or a TLS handshake that failed,
// sent nothing (a review found a dial ended by the client's Timeout, no
// dial error in its chain, taken for a request that may have been sent,
// so that a DELETE's 404 after it read as success). Through another
// RoundTripper, which reports nothing, or untraced (a nil a: only a
// DELETE that may be retried is traced), unless err is a dial error
// (refused, unreachable, a name that does not resolve).
func (a *attemptTrace) maySent(err error) bool {
	if a != nil && a.started.Load() {
		return a.wrote.Load()
	}
	var op *net.OpError
	return !errors.As(err, &op) || op.Op != "dial"
}

// giveUp returns the error of a call that ends before or during an
// attempt because of why: the last attempt's answer, when there was one,
// wrapping why too, which what ("not retried") says how it came.
func giveUp(last error, what, method, path string, why error) error {
	if last == nil {
		return fmt.Errorf("acctapi: %s %s: %w", method, path, why)
	}
	return fmt.Errorf("%w; %s: %w", last, what, why)
}

// pause waits for d, unless ctx ends first (its error is returned) or its
// deadline comes before d has passed: then it returns at once, wrapping
// [context.DeadlineExceeded], since waiting could only end in that error.
func pause(ctx context.Context, d time.Duration) error {
	if d <= 0 {
		return nil
	}
	if dl, ok := ctx.Deadline(); ok && time.Until(dl) <= d {
		return fmt.Errorf("a wait of %v would pass the context's deadline: %w", d.Round(time.Millisecond), context.DeadlineExceeded)
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// parseRetryAfter reads a Retry-After value: delay-seconds or an HTTP date.
// It returns zero for an absent or malformed value, or a date in the past.
func parseRetryAfter(v string, now time.Time) time.Duration {
	if v == "" {
		return 0
	}
	// Out of range, ParseInt gives the largest int64 of the value's sign.
	if n, err := strconv.ParseInt(v, 10, 64); err == nil || errors.Is(err, strconv.ErrRange) {
		if n <= 0 {
			return 0
		}
		if n > int64(maxRetryAfter/time.Second) {
			return maxRetryAfter
		}
		return time.Duration(n) * time.Second
	}
	if t, err := http.ParseTime(v); err == nil {
		if d := t.Sub(now); d > 0 {
			return min(d, maxRetryAfter)
		}
	}
	return 0
}
