package fake

import (
	"fmt"
	"net/http"
	"strconv"
	"sync/atomic"
	"time"

	"github.com/acctapi/acctapi"
	"github.com/acctapi/acctapi/ratelimit"
)

// apiLimiter is the optional per-account limit on the management API
// (contract §7), built on the ratelimit package's sliding-window limiter
// keyed by account id. The zero value limits nothing.
type apiLimiter struct {
	l     atomic.Pointer[ratelimit.Limiter] // replaced by reset
	n     int64
	every time.Duration
}

func (a *apiLimiter) init(n int64, every time.Duration) error {
	if n == 0 {
		return nil
	}
	l, err := ratelimit.NewLimiter(n, every)
	if err != nil {
		return fmt.Errorf("fake: WithRateLimit: %w", err)
	}
	a.l.Store(l)
	a.n, a.every = n, every
	return nil
}

// reset forgets every request counted so far. n and every never change
// after init, so requests in flight may read them meanwhile.
func (a *apiLimiter) reset() {
	if a.l.Load() == nil {
		return
	}
	if l, err := ratelimit.NewLimiter(a.n, a.every); err == nil { // init accepted these
		a.l.Store(l)
	}
}

// check counts one request of account at now, and answers 429 with
// Retry-After when the account is over its limit.
func (a *apiLimiter) check(account string, now time.Time) error {
	l := a.l.Load()
	if l == nil {
		return nil
	}
	d := l.AllowAt(account, now)
	if d.Allowed {
		return nil
	}
	secs := strconv.Itoa(int(d.RetryAfter / time.Second))
	return &apiError{status: http.StatusTooManyRequests, code: acctapi.CodeRateLimited,
		msg:    fmt.Sprintf("Your account is rate limited to %d API requests per %v.", a.n, a.every),
		header: http.Header{"Retry-After": {secs}}}
}
