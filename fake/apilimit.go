package fake

import "time"

// apiLimiter is the optional per-account limit on the management API.
type apiLimiter struct {
	n     int64
	every time.Duration
}

func (l *apiLimiter) init(n int64, every time.Duration) error {
	l.n, l.every = n, every
	return nil
}

func (l *apiLimiter) check(account string, now time.Time) error { return nil }
