package acctapi

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/google/go-cmp/cmp"
)

// roundTripFunc is an in-process http.RoundTripper, usable inside a
// synctest bubble where real sockets are not.
type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

// reply is one scripted answer of a fakeTransport: a response, or err.
type reply struct {
	status int
	header map[string]string
	body   string
	err    error
}

// fakeTransport answers requests from a script, repeating the last reply
// once the script runs out, and records the fake time of each request.
type fakeTransport struct {
	mu      sync.Mutex
	script  []reply
	at      []time.Time
	methods []string
	bodies  []string
}

func (f *fakeTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	var body string
	if r.Body != nil {
		b, _ := io.ReadAll(r.Body)
		r.Body.Close()
		body = string(b)
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	n := len(f.at)
	f.at = append(f.at, time.Now())
	f.methods = append(f.methods, r.Method)
	f.bodies = append(f.bodies, body)
	rp := f.script[min(n, len(f.script)-1)]
	if rp.err != nil {
		return nil, rp.err
	}
	resp := &http.Response{
		StatusCode: rp.status,
		Header:     http.Header{},
		Body:       io.NopCloser(strings.NewReader(rp.body)),
		Request:    r,
	}
	for k, v := range rp.header {
		resp.Header.Set(k, v)
	}
	return resp, nil
}

func (f *fakeTransport) count() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return len(f.at)
}

// newFakeClient returns a Client whose requests f answers.
func newFakeClient(t *testing.T, f http.RoundTripper, opts ...Option) *Client {
	t.Helper()
	all := append([]Option{WithBaseURL("https://api.test"), WithHTTPClient(&http.Client{Transport: f})}, opts...)
	c, err := NewClient(testKey, all...)
	if err != nil {
		t.Fatalf("NewClient: %v", err)
	}
	return c
}

var (
	ok200   = reply{status: 200, body: `{"id":"thing_1"}`}
	tooMany = func(retryAfter string) reply {
		return reply{status: 429, header: map[string]string{"Retry-After": retryAfter},
			body: `{"status_code":429,"msg":"slow down","error_code":"ERR_NGROK_226"}`}
	}
	unavailable = reply{status: 503, body: `{"status_code":503,"msg":"down","error_code":"ERR_ACCTAPI_UNAVAILABLE"}`}
	errConn     = errors.New("connection refused")
)

func TestRetryAfterHonoured(t *testing.T) {
	t.Parallel()
	// The backoff used when Retry-After gives no delay: equal jitter over
	// [BaseDelay/2, BaseDelay].
	policy := RetryPolicy{MaxAttempts: 3, MaxWait: time.Minute, BaseDelay: time.Second, MaxDelay: time.Second}
	tests := []struct {
		name string
		// retryAfter returns the header value given the fake time now.
		retryAfter func(now time.Time) string
		// The wait between the two attempts, in [wantMin, wantMax].
		wantMin, wantMax time.Duration
	}{
		{name: "seconds", retryAfter: func(time.Time) string { return "3" },
			wantMin: 3 * time.Second, wantMax: 3 * time.Second},
		{name: "HTTP date", retryAfter: func(now time.Time) string { return now.Add(5 * time.Second).UTC().Format(http.TimeFormat) },
			wantMin: 5 * time.Second, wantMax: 5 * time.Second},
		{name: "HTTP date in the past falls back to backoff", retryAfter: func(now time.Time) string { return now.Add(-time.Hour).UTC().Format(http.TimeFormat) },
			wantMin: time.Second / 2, wantMax: time.Second},
		{name: "zero seconds falls back to backoff", retryAfter: func(time.Time) string { return "0" },
			wantMin: time.Second / 2, wantMax: time.Second},
		{name: "malformed falls back to backoff", retryAfter: func(time.Time) string { return "soon" },
			wantMin: time.Second / 2, wantMax: time.Second},
		{name: "absent falls back to backoff", retryAfter: func(time.Time) string { return "" },
			wantMin: time.Second / 2, wantMax: time.Second},
	}
	// A 503's Retry-After counts as a 429's (a review saw three retries in
	// 1.4 s after a 503 asking for 30 s).
	for _, status := range []int{http.StatusTooManyRequests, http.StatusServiceUnavailable} {
		for _, tt := range tests {
			t.Run(fmt.Sprintf("%d %s", status, tt.name), func(t *testing.T) {
				t.Parallel()
				synctest.Test(t, func(t *testing.T) {
					start := time.Now()
					first := tooMany(tt.retryAfter(start))
					first.status = status
					f := &fakeTransport{script: []reply{first, ok200}}
					c := newFakeClient(t, f, WithRetry(policy))
					var out request
					if err := c.Do(t.Context(), http.MethodGet, "/things/thing_1", nil, nil, &out); err != nil {
						t.Fatalf("Do: %v", err)
					}
					if out.ID != "thing_1" {
						t.Errorf("out.ID = %q, want thing_1", out.ID)
					}
					if n := f.count(); n != 2 {
						t.Fatalf("requests = %d, want 2", n)
					}
					if got := f.at[1].Sub(f.at[0]); got < tt.wantMin || got > tt.wantMax {
						t.Errorf("waited %v between attempts, want within [%v, %v]", got, tt.wantMin, tt.wantMax)
					}
					if got := virtualSince(t, start); got != f.at[1].Sub(f.at[0]) {
						t.Errorf("Do waited %v on the bubble's clock, want only the wait %v", got, f.at[1].Sub(f.at[0]))
					}
				})
			})
		}
	}
}

func TestRetry429EveryMethod(t *testing.T) {
	t.Parallel()
	for _, method := range []string{http.MethodGet, http.MethodPost, http.MethodPatch, http.MethodDelete} {
		t.Run(method, func(t *testing.T) {
			t.Parallel()
			synctest.Test(t, func(t *testing.T) {
				ok := ok200
				if method == http.MethodDelete {
					ok = reply{status: http.StatusNoContent}
				}
				f := &fakeTransport{script: []reply{tooMany("2"), ok}}
				c := newFakeClient(t, f)
				var in any
				if method == http.MethodPost || method == http.MethodPatch {
					in = map[string]string{"name": "x"}
				}
				start := time.Now()
				if err := c.Do(t.Context(), method, "/things", nil, in, nil); err != nil {
					t.Fatalf("Do: %v", err)
				}
				if got := virtualSince(t, start); got != 2*time.Second {
					t.Errorf("Do waited %v on the bubble's clock, want 2s", got)
				}
				if diff := cmp.Diff([]string{method, method}, f.methods); diff != "" {
					t.Errorf("methods sent (-want +got):\n%s", diff)
				}
				// The body is sent again, whole, on the retry.
				if f.bodies[0] != f.bodies[1] {
					t.Errorf("bodies differ between attempts: %q then %q", f.bodies[0], f.bodies[1])
				}
			})
		})
	}
}

func TestRetryBounds(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name         string
		policy       RetryPolicy
		retryAfter   string
		wantRequests int
		wantElapsed  time.Duration
	}{
		{
			name:         "MaxAttempts",
			policy:       RetryPolicy{MaxAttempts: 3, BaseDelay: time.Second},
			retryAfter:   "1",
			wantRequests: 3, wantElapsed: 2 * time.Second,
		},
		{
			name:         "MaxWait",
			policy:       RetryPolicy{MaxAttempts: 10, MaxWait: 25 * time.Second, BaseDelay: time.Second},
			retryAfter:   "10",
			wantRequests: 3, wantElapsed: 20 * time.Second,
		},
		{
			name:         "MaxWait exactly reached",
			policy:       RetryPolicy{MaxAttempts: 10, MaxWait: 20 * time.Second, BaseDelay: time.Second},
			retryAfter:   "10",
			wantRequests: 3, wantElapsed: 20 * time.Second,
		},
		{
			name:         "Retry-After beyond MaxWait",
			policy:       RetryPolicy{MaxAttempts: 10, MaxWait: 30 * time.Second, BaseDelay: time.Second},
			retryAfter:   "60",
			wantRequests: 1, wantElapsed: 0,
		},
		{
			name:         "one attempt sends once",
			policy:       RetryPolicy{MaxAttempts: 1},
			retryAfter:   "1",
			wantRequests: 1, wantElapsed: 0,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			synctest.Test(t, func(t *testing.T) {
				f := &fakeTransport{script: []reply{tooMany(tt.retryAfter)}}
				c := newFakeClient(t, f, WithRetry(tt.policy))
				start := time.Now()
				err := c.Do(t.Context(), http.MethodGet, "/things", nil, nil, nil)
				if got := virtualSince(t, start); got != tt.wantElapsed {
					t.Errorf("Do waited %v on the bubble's clock, want %v", got, tt.wantElapsed)
				}
				if n := f.count(); n != tt.wantRequests {
					t.Errorf("requests = %d, want %d", n, tt.wantRequests)
				}
				delay, limited := IsRateLimited(err)
				wantDelay, _ := strconv.Atoi(tt.retryAfter)
				if !limited || delay != time.Duration(wantDelay)*time.Second {
					t.Errorf("IsRateLimited(%v) = %v, %v; want %ds, true", err, delay, limited, wantDelay)
				}
			})
		})
	}
}

func TestRetryServerErrorsAndConnectionErrors(t *testing.T) {
	t.Parallel()
	// Backoff delays: retry n waits within [d/2, d] for d = 1s, 2s, 4s.
	policy := RetryPolicy{MaxAttempts: 4, MaxWait: time.Minute, BaseDelay: time.Second, MaxDelay: 4 * time.Second}
	tests := []struct {
		name         string
		method       string
		reply        reply
		wantRequests int
	}{
		{name: "503 GET retried", method: http.MethodGet, reply: unavailable, wantRequests: 4},
		{name: "503 DELETE retried", method: http.MethodDelete, reply: unavailable, wantRequests: 4},
		{name: "500 GET retried", method: http.MethodGet, reply: reply{status: 500}, wantRequests: 4},
		{name: "503 POST not retried", method: http.MethodPost, reply: unavailable, wantRequests: 1},
		{name: "503 PATCH not retried", method: http.MethodPatch, reply: unavailable, wantRequests: 1},
		{name: "connection error GET retried", method: http.MethodGet, reply: reply{err: errConn}, wantRequests: 4},
		{name: "connection error DELETE retried", method: http.MethodDelete, reply: reply{err: errConn}, wantRequests: 4},
		{name: "connection error POST not retried", method: http.MethodPost, reply: reply{err: errConn}, wantRequests: 1},
		{name: "connection error PATCH not retried", method: http.MethodPatch, reply: reply{err: errConn}, wantRequests: 1},
		{name: "404 GET not retried", method: http.MethodGet, reply: reply{status: 404}, wantRequests: 1},
		{name: "400 POST not retried", method: http.MethodPost, reply: reply{status: 400}, wantRequests: 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			synctest.Test(t, func(t *testing.T) {
				f := &fakeTransport{script: []reply{tt.reply}}
				c := newFakeClient(t, f, WithRetry(policy))
				var in any
				if tt.method == http.MethodPost || tt.method == http.MethodPatch {
					in = map[string]string{"name": "x"}
				}
				start := time.Now()
				err := c.Do(t.Context(), tt.method, "/things", nil, in, nil)
				elapsed := virtualSince(t, start)

				if n := f.count(); n != tt.wantRequests {
					t.Errorf("requests = %d, want %d", n, tt.wantRequests)
				}
				// Each wait n is within [d/2, d], d doubling from 1s.
				for i := 1; i < f.count(); i++ {
					d := time.Second << (i - 1)
					if got := f.at[i].Sub(f.at[i-1]); got < d/2 || got > d {
						t.Errorf("wait before attempt %d = %v, want within [%v, %v]", i+1, got, d/2, d)
					}
				}
				if tt.wantRequests == 1 && elapsed != 0 {
					t.Errorf("Do waited %v on the bubble's clock without retrying, want 0", elapsed)
				}
				if tt.reply.err != nil {
					if !errors.Is(err, errConn) {
						t.Errorf("Do = %v, want the connection error in the chain", err)
					}
					return
				}
				var apiErr *Error
				if !errors.As(err, &apiErr) || apiErr.StatusCode != tt.reply.status {
					t.Errorf("Do = %v, want an *Error with status %d", err, tt.reply.status)
				}
			})
		})
	}
}

func TestRetryRecovers(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		f := &fakeTransport{script: []reply{{err: errConn}, unavailable, tooMany("2"), ok200}}
		c := newFakeClient(t, f, WithRetry(RetryPolicy{MaxAttempts: 4, BaseDelay: time.Second}))
		var out request
		if err := c.Do(t.Context(), http.MethodGet, "/things/thing_1", nil, nil, &out); err != nil {
			t.Fatalf("Do: %v", err)
		}
		if out.ID != "thing_1" || f.count() != 4 {
			t.Errorf("got %+v after %d requests, want thing_1 after 4", out, f.count())
		}
		if got := f.at[3].Sub(f.at[2]); got != 2*time.Second {
			t.Errorf("wait after the 429 = %v, want its Retry-After 2s", got)
		}
	})
}

func TestWithoutRetry(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name  string
		reply reply
	}{
		{name: "429", reply: tooMany("1")},
		{name: "503", reply: unavailable},
		{name: "connection error", reply: reply{err: errConn}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			synctest.Test(t, func(t *testing.T) {
				f := &fakeTransport{script: []reply{tt.reply, ok200}}
				c := newFakeClient(t, f, WithoutRetry())
				start := time.Now()
				if err := c.Do(t.Context(), http.MethodGet, "/things", nil, nil, nil); err == nil {
					t.Error("Do succeeded, want the first reply's error")
				}
				if n := f.count(); n != 1 {
					t.Errorf("requests = %d, want 1", n)
				}
				if got := virtualSince(t, start); got != 0 {
					t.Errorf("Do waited %v on the bubble's clock, want 0", got)
				}
			})
		})
	}
}

// TestRetryCancelledMidWait checks that a call cancelled while it waits
// to retry returns at once with the last answer (the 429, so
// IsRateLimited still tells) wrapping context.Canceled, or with the last
// connection error.
func TestRetryCancelledMidWait(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name        string
		first       reply
		rateLimited bool
		wantErr     error // also in the chain
	}{
		{name: "429", first: tooMany("30"), rateLimited: true},
		{name: "connection error", first: reply{err: errConn}, wantErr: errConn},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			synctest.Test(t, func(t *testing.T) {
				f := &fakeTransport{script: []reply{tt.first, ok200}}
				c := newFakeClient(t, f)
				ctx, cancel := context.WithCancel(t.Context())
				start := time.Now()
				done := make(chan error, 1)
				go func() { done <- c.Do(ctx, http.MethodGet, "/things", nil, nil, nil) }()

				synctest.Wait() // Do is now waiting to retry.
				if n := f.count(); n != 1 {
					t.Fatalf("requests before cancel = %d, want 1", n)
				}
				cancel()
				err := <-done
				if got := virtualSince(t, start); got != 0 {
					t.Errorf("Do returned after %v, want at once on cancel", got)
				}
				if !errors.Is(err, context.Canceled) {
					t.Errorf("Do = %v, want context.Canceled in the chain", err)
				}
				if ra, ok := IsRateLimited(err); ok != tt.rateLimited || (ok && ra != 30*time.Second) {
					t.Errorf("IsRateLimited(%v) = %v, %v; want %v, 30s", err, ra, ok, tt.rateLimited)
				}
				if tt.wantErr != nil && !errors.Is(err, tt.wantErr) {
					t.Errorf("Do = %v, want %v in the chain", err, tt.wantErr)
				}
				if n := f.count(); n != 1 {
					t.Errorf("requests = %d, want 1", n)
				}
			})
		})
	}
}

// TestRetryDeadlineMidWait checks that a retry wait that cannot end before
// the context's deadline is not begun: the call returns at once with the
// 429 it got, wrapping context.DeadlineExceeded; and that a wait that ends
// before the deadline is waited and retried.
func TestRetryDeadlineMidWait(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name     string
		timeout  time.Duration
		wantWait time.Duration
		wantSent int
	}{
		{name: "deadline before the wait ends", timeout: 10 * time.Second, wantWait: 0, wantSent: 1},
		{name: "deadline when the wait ends", timeout: 30 * time.Second, wantWait: 0, wantSent: 1},
		{name: "deadline after the wait", timeout: 31 * time.Second, wantWait: 30 * time.Second, wantSent: 2},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			synctest.Test(t, func(t *testing.T) {
				f := &fakeTransport{script: []reply{tooMany("30"), ok200}}
				c := newFakeClient(t, f)
				ctx, cancel := context.WithTimeout(t.Context(), tt.timeout)
				t.Cleanup(cancel)
				start := time.Now()
				err := c.Do(ctx, http.MethodGet, "/things", nil, nil, nil)
				if got := virtualSince(t, start); got != tt.wantWait {
					t.Errorf("Do returned after %v, want %v", got, tt.wantWait)
				}
				if n := f.count(); n != tt.wantSent {
					t.Errorf("requests = %d, want %d", n, tt.wantSent)
				}
				if tt.wantSent == 2 {
					if err != nil {
						t.Errorf("Do = %v, want the retry's success", err)
					}
					return
				}
				if !errors.Is(err, context.DeadlineExceeded) {
					t.Errorf("Do = %v, want context.DeadlineExceeded in the chain", err)
				}
				if ra, ok := IsRateLimited(err); !ok || ra != 30*time.Second {
					t.Errorf("IsRateLimited(%v) = %v, %v; want 30s, true", err, ra, ok)
				}
			})
		})
	}
}

// TestDeleteRetriedAfterUnknownOutcome checks that a DELETE whose attempt
// may have taken effect (a connection error, a 5xx) and whose retry
// answers 404 not found succeeds, and that every other 404 stays an error.
func TestDeleteRetriedAfterUnknownOutcome(t *testing.T) {
	t.Parallel()
	notFound := reply{status: 404, body: `{"status_code":404,"msg":"Resource not found.","error_code":"ERR_ACCTAPI_NOT_FOUND"}`}
	realNotFound := reply{status: 404, body: `{"status_code":404,"msg":"Resource not found","details":{"operation_id":"op_1"}}`}
	noRoute := reply{status: 404, body: `{"status_code":404,"msg":"No API path.","error_code":"ERR_ACCTAPI_NO_ROUTE"}`}
	tests := []struct {
		name    string
		method  string
		script  []reply
		wantErr bool
	}{
		{name: "connection error, then 404", method: http.MethodDelete, script: []reply{{err: errConn}, notFound}},
		{name: "503, then 404", method: http.MethodDelete, script: []reply{unavailable, notFound}},
		{name: "500, then 404", method: http.MethodDelete, script: []reply{{status: 500}, notFound}},
		{name: "504, then 404", method: http.MethodDelete, script: []reply{{status: 504}, notFound}},
		{name: "connection error, 429, then 404", method: http.MethodDelete, script: []reply{{err: errConn}, tooMany("1"), notFound}},
		{name: "real service's 404 after a connection error", method: http.MethodDelete, script: []reply{{err: errConn}, realNotFound}},
		{name: "404 at once", method: http.MethodDelete, script: []reply{notFound}, wantErr: true},
		{name: "429, then 404: the server did not act", method: http.MethodDelete, script: []reply{tooMany("1"), notFound}, wantErr: true},
		{name: "no route after a connection error", method: http.MethodDelete, script: []reply{{err: errConn}, noRoute}, wantErr: true},
		{name: "GET: 404 after a connection error", method: http.MethodGet, script: []reply{{err: errConn}, notFound}, wantErr: true},
		// A refused connection sent nothing: its outcome is known (a
		// second review found a typo'd id reported deleted).
		{name: "dial refused, then 404", method: http.MethodDelete, script: []reply{{err: &net.OpError{Op: "dial", Net: "tcp", Err: errors.New("connect: connection refused")}}, notFound}, wantErr: true},
		// A 404 with neither an error code nor an operation id is not the
		// API's (Go's "404 page not found" from another server).
		{name: "502, then a 404 that is not the API's", method: http.MethodDelete, script: []reply{{status: 502}, {status: 404, body: "404 page not found"}}, wantErr: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			synctest.Test(t, func(t *testing.T) {
				f := &fakeTransport{script: tt.script}
				err := newFakeClient(t, f).Do(t.Context(), tt.method, "/things/1", nil, nil, nil)
				if tt.wantErr != (err != nil) {
					t.Errorf("Do = %v, want an error: %v", err, tt.wantErr)
				}
				if tt.wantErr && !errors.As(err, new(*Error)) {
					t.Errorf("Do = %v, want the 404 as an *Error", err)
				}
				if n := f.count(); n != len(tt.script) {
					t.Errorf("requests = %d, want %d", n, len(tt.script))
				}
			})
		})
	}
}

// TestRetryCancelledDuringRetry checks that when the context ends while a
// retry is in flight, the call's error is still the answer being retried
// (the 429, for IsRateLimited), wrapping the context's error: a second
// review found the 429 lost there, though kept when the context ended
// during the wait.
func TestRetryCancelledDuringRetry(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		ctx, cancel := context.WithCancel(t.Context())
		var calls int
		rt := roundTripFunc(func(r *http.Request) (*http.Response, error) {
			calls++
			if calls == 1 {
				return &http.Response{StatusCode: 429, Header: http.Header{"Retry-After": {"1"}}, Body: io.NopCloser(strings.NewReader(`{"status_code":429,"msg":"slow down","error_code":"ERR_NGROK_226"}`)), Request: r}, nil
			}
			cancel()
			return nil, context.Canceled
		})
		err := newFakeClient(t, rt).Do(ctx, http.MethodGet, "/things", nil, nil, nil)
		if _, ok := IsRateLimited(err); !ok || !errors.Is(err, context.Canceled) {
			t.Errorf("Do = %v; want the 429 (IsRateLimited) wrapping context.Canceled", err)
		}
		if calls != 2 {
			t.Errorf("requests = %d, want 2", calls)
		}
	})
}

func TestRetryCancelledDuringRequest(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		ctx, cancel := context.WithCancel(t.Context())
		var calls int
		rt := roundTripFunc(func(r *http.Request) (*http.Response, error) {
			calls++
			cancel() // The caller gives up while the request is in flight.
			return &http.Response{StatusCode: 503, Header: http.Header{}, Body: io.NopCloser(strings.NewReader("")), Request: r}, nil
		})
		c := newFakeClient(t, rt)
		err := c.Do(ctx, http.MethodGet, "/things", nil, nil, nil)
		if !errors.Is(err, context.Canceled) {
			t.Errorf("Do = %v, want context.Canceled in the chain", err)
		}
		if calls != 1 {
			t.Errorf("requests = %d, want 1", calls)
		}
	})
}

func TestBackoff(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name     string
		policy   RetryPolicy
		n        int
		min, max time.Duration
	}{
		{name: "first", policy: RetryPolicy{BaseDelay: 100 * time.Millisecond}, n: 1, min: 50 * time.Millisecond, max: 100 * time.Millisecond},
		{name: "third doubles twice", policy: RetryPolicy{BaseDelay: 100 * time.Millisecond}, n: 3, min: 200 * time.Millisecond, max: 400 * time.Millisecond},
		{name: "capped by MaxDelay", policy: RetryPolicy{BaseDelay: time.Second, MaxDelay: 3 * time.Second}, n: 5, min: 1500 * time.Millisecond, max: 3 * time.Second},
		{name: "MaxDelay below BaseDelay", policy: RetryPolicy{BaseDelay: time.Second, MaxDelay: 10 * time.Millisecond}, n: 1, min: 5 * time.Millisecond, max: 10 * time.Millisecond},
		{name: "no cap does not overflow", policy: RetryPolicy{BaseDelay: 250 * time.Millisecond}, n: 200, min: maxBackoff / 4, max: maxBackoff},
		{name: "one nanosecond", policy: RetryPolicy{BaseDelay: 1}, n: 1, min: 1, max: 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			for range 1000 {
				if got := tt.policy.backoff(tt.n); got < tt.min || got > tt.max {
					t.Fatalf("backoff(%d) = %v, want within [%v, %v]", tt.n, got, tt.min, tt.max)
				}
			}
		})
	}
}

func TestParseRetryAfter(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	tests := []struct {
		name  string
		value string
		want  time.Duration
	}{
		{name: "absent", value: "", want: 0},
		{name: "seconds", value: "7", want: 7 * time.Second},
		{name: "zero", value: "0", want: 0},
		{name: "negative", value: "-3", want: 0},
		{name: "huge seconds capped", value: "99999999999", want: maxRetryAfter},
		{name: "seconds beyond an int64 capped", value: "99999999999999999999", want: maxRetryAfter},
		{name: "zero beyond an int64's digits", value: "000000000000000000000", want: 0},
		{name: "fractional", value: "1.5", want: 0},
		{name: "HTTP date", value: now.Add(90 * time.Second).Format(http.TimeFormat), want: 90 * time.Second},
		{name: "RFC 850 date", value: now.Add(time.Minute).Format(time.RFC850), want: time.Minute},
		{name: "date in the past", value: now.Add(-time.Minute).Format(http.TimeFormat), want: 0},
		{name: "far date capped", value: now.AddDate(1, 0, 0).Format(http.TimeFormat), want: maxRetryAfter},
		{name: "garbage", value: "tomorrow", want: 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			if got := parseRetryAfter(tt.value, now); got != tt.want {
				t.Errorf("parseRetryAfter(%q) = %v, want %v", tt.value, got, tt.want)
			}
		})
	}
}

// virtualSince is time.Since(start) inside a testing/synctest bubble, where
// it reads the bubble's fake clock exactly and takes no real time. It fails
// t outside a bubble (where time.Now carries a monotonic reading), so an
// elapsed-time assertion here can never become a bound on wall-clock time.
func virtualSince(t *testing.T, start time.Time) time.Duration {
	t.Helper()
	if now := time.Now(); now != now.Round(0) {
		t.Fatal("virtualSince outside a testing/synctest bubble: it would measure the wall clock")
	}
	return time.Since(start)
}

// TestBackoffJitter checks the equal jitter RetryPolicy documents: each
// delay drawn from [delay/2, delay], spread over the range (a mutation that
// always waited the whole delay survived every other test). With 250
// draws, a correct policy leaves the lowest or the highest tenth of the
// range empty with a probability of 2 × 0.9^250, about 7e-12, for each of
// the two delays.
func TestBackoffJitter(t *testing.T) {
	t.Parallel()
	p := RetryPolicy{MaxAttempts: 5, BaseDelay: time.Second}
	for n, d := range map[int]time.Duration{1: time.Second, 3: 4 * time.Second} {
		lo, hi := d, time.Duration(0)
		for range 250 {
			got := p.backoff(n)
			if got < d/2 || got > d {
				t.Fatalf("backoff(%d) = %v, want it in [%v, %v]", n, got, d/2, d)
			}
			lo, hi = min(lo, got), max(hi, got)
		}
		if lo > d/2+d/20 || hi < d-d/20 {
			t.Errorf("backoff(%d) drew from [%v, %v] only; want the whole of [%v, %v]", n, lo, hi, d/2, d)
		}
	}
}

// TestDeleteUnsureOnlyWhenSent pins a review's finding: a DELETE whose
// first attempt never reached the server (its dial hung until the HTTP
// client's Timeout, which leaves no dial error in the chain) was taken as
// one that may have deleted the resource, so the retry's 404 read as
// success. Through net/http's Transport an attempt now counts as maybe
// sent only once its headers were written: a 404 after a hung dial is
// the error it is, and one after a connection that read the request and
// closed is success. (synctest: the 30 s are the bubble's; the
// connection is a net.Pipe.)
func TestDeleteUnsureOnlyWhenSent(t *testing.T) {
	t.Parallel()
	notFound := func(r *http.Request) *http.Response {
		body := `{"status_code":404,"msg":"Resource not found","error_code":"ERR_ACCTAPI_NOT_FOUND","details":{"operation_id":"op_1"}}`
		return &http.Response{StatusCode: 404, Header: http.Header{"Content-Type": {"application/json"}},
			Body: io.NopCloser(strings.NewReader(body)), Request: r}
	}
	for _, tt := range []struct {
		name string
		dial func(ctx context.Context, network, addr string) (net.Conn, error)
		ok   bool
	}{
		{"a dial that hangs until the timeout", func(ctx context.Context, network, addr string) (net.Conn, error) {
			<-ctx.Done()
			return nil, &net.OpError{Op: "dial", Net: network, Err: ctx.Err()}
		}, false},
		{"a connection that reads the request and closes", func(ctx context.Context, network, addr string) (net.Conn, error) {
			client, server := net.Pipe()
			go func() {
				_, _ = http.ReadRequest(bufio.NewReader(server))
				server.Close()
			}()
			return client, nil
		}, true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			synctest.Test(t, func(t *testing.T) {
				tr := &http.Transport{DialContext: tt.dial}
				defer tr.CloseIdleConnections()
				var n atomic.Int32
				rt := roundTripFunc(func(r *http.Request) (*http.Response, error) {
					if n.Add(1) == 1 {
						return tr.RoundTrip(r)
					}
					return notFound(r), nil
				})
				c, err := NewClient(testKey, WithBaseURL("http://api.test"),
					WithRetry(RetryPolicy{MaxAttempts: 2, BaseDelay: time.Second}),
					WithHTTPClient(&http.Client{Transport: rt, Timeout: 30 * time.Second}))
				if err != nil {
					t.Fatal(err)
				}
				err = c.Do(context.Background(), http.MethodDelete, "/service_users/service_1", nil, nil, nil)
				if n.Load() != 2 || (err == nil) != tt.ok || !tt.ok && !IsNotFound(err) {
					t.Errorf("%d attempts, error %v; want 2, success %v (else the 404)", n.Load(), err, tt.ok)
				}
			})
		})
	}
}
