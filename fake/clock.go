package fake

import (
	"fmt"
	"sync"
	"time"
)

// Clock tells the fake what time it is. Every timestamp the fake writes, and
// the management API rate limit, read it.
type Clock interface {
	// Now returns the current time; the fake truncates what it stores to
	// whole seconds.
	Now() time.Time
}

// realClock is the wall clock. The server truncates what it reads to whole
// seconds, as the API's timestamps are, whatever the clock.
type realClock struct{}

func (realClock) Now() time.Time { return time.Now() }

// ManualClock is a [Clock] that moves only when told to. The zero value
// reads as the zero time, which [WithClock] refuses; use [NewManualClock].
// It is safe for concurrent use.
type ManualClock struct {
	mu  sync.Mutex
	now time.Time
}

// NewManualClock returns a ManualClock reading t. It panics when t is
// outside the years 1 to 9999 (see [ManualClock.Advance]).
func NewManualClock(t time.Time) *ManualClock {
	mustBeRepresentable("NewManualClock", t)
	return &ManualClock{now: t}
}

// Now returns the clock's time.
func (c *ManualClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

// Advance moves the clock forward by d (backward, if d is negative) and
// returns the new time. It panics, leaving the clock as it was, when the
// new time is outside the years 1 to 9999, which the API's timestamps
// (RFC 3339) cannot hold: a clock there would make every answer that
// carries a time fail.
func (c *ManualClock) Advance(d time.Duration) time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	t := c.now.Add(d)
	mustBeRepresentable("ManualClock.Advance", t)
	c.now = t
	return c.now
}

// Set moves the clock to t. It panics, leaving the clock as it was, when t
// is outside the years 1 to 9999 (see [ManualClock.Advance]).
func (c *ManualClock) Set(t time.Time) {
	mustBeRepresentable("ManualClock.Set", t)
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = t
}

// mustBeRepresentable panics when t cannot be written as an RFC 3339
// timestamp.
func mustBeRepresentable(op string, t time.Time) {
	if y := t.UTC().Year(); y < 1 || y > 9999 {
		panic(fmt.Sprintf("fake: %s: %v is outside the years 1 to 9999 that the API's timestamps can hold", op, t))
	}
}
