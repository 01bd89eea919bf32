package fake

import (
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
// reads as the zero time; use [NewManualClock]. It is safe for concurrent
// use.
type ManualClock struct {
	mu  sync.Mutex
	now time.Time
}

// NewManualClock returns a ManualClock reading t.
func NewManualClock(t time.Time) *ManualClock { return &ManualClock{now: t} }

// Now returns the clock's time.
func (c *ManualClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

// Advance moves the clock forward by d (backward, if d is negative) and
// returns the new time.
func (c *ManualClock) Advance(d time.Duration) time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
	return c.now
}

// Set moves the clock to t.
func (c *ManualClock) Set(t time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = t
}
