package ratelimit

import (
	"fmt"
	"math"
	"math/rand/v2"
	"runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"
	"unsafe"

	"github.com/google/go-cmp/cmp"
	"pgregory.net/rapid"

	"github.com/acctapi/acctapi/internal/apitest"
)

// base is a fixed instant used by the tests; it sits on a whole minute, and
// so on a slot boundary for every window used below.
var base = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

func at(d time.Duration) time.Time { return base.Add(d) }

// fataler is what mustLimiter needs from a *testing.T or *rapid.T.
type fataler interface {
	Helper()
	Fatal(args ...any)
}

func mustLimiter(t fataler, capacity int64, window time.Duration, opts ...Option) *Limiter {
	t.Helper()
	l, err := NewLimiter(capacity, window, opts...)
	if err != nil {
		t.Fatal(err)
	}
	return l
}

// exactLog is the reference model: a sliding log of admitted times. A
// request at t is admitted when fewer than capacity admitted requests lie in
// (t-window, t].
type exactLog struct {
	capacity int64
	window   time.Duration
	log      []time.Time
	start    int // log[:start] has left the window; times never go back
}

// inWindow returns the admitted times inside (t-window, t], oldest first.
// t must not be earlier than in the previous call.
func (m *exactLog) inWindow(t time.Time) []time.Time {
	for m.start < len(m.log) && t.Sub(m.log[m.start]) >= m.window {
		m.start++
	}
	if m.start > 4096 && m.start > len(m.log)/2 {
		m.log = append(m.log[:0], m.log[m.start:]...)
		m.start = 0
	}
	return m.log[m.start:]
}

// check returns what the model would answer at t without recording
// anything, and the earliest time it admits a request: t itself, or when
// enough admissions have left the window.
func (m *exactLog) check(t time.Time) (Decision, time.Time) {
	w := m.inWindow(t)
	n := int64(len(w))
	if n < m.capacity {
		return Decision{Allowed: true, Remaining: m.capacity - n - 1}, t
	}
	// The (n-capacity+1)-th oldest must leave the window.
	leave := w[n-m.capacity].Add(m.window)
	return Decision{RetryAfter: ceilSeconds(leave.Sub(t))}, leave
}

func (m *exactLog) allow(t time.Time) Decision {
	d, _ := m.check(t)
	if d.Allowed {
		m.log = append(m.log, t)
	}
	return d
}

func TestNewLimiterErrors(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name     string
		capacity int64
		window   time.Duration
		want     string
	}{
		{"zero capacity", 0, time.Minute, "ratelimit: capacity 0 is not from 1 to 2000000000"},
		{"capacity too large", MaxCapacity + 1, time.Minute, "ratelimit: capacity 2000000001 is not from 1 to 2000000000"},
		{"window too short", 1, 999 * time.Millisecond, "ratelimit: window 999ms is not a whole number of seconds from 1s to 8784h0m0s"},
		{"window not whole seconds", 1, 1500 * time.Millisecond, "ratelimit: window 1.5s is not a whole number of seconds from 1s to 8784h0m0s"},
		{"window too long", 1, 367 * 24 * time.Hour, "ratelimit: window 8808h0m0s is not a whole number of seconds from 1s to 8784h0m0s"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := NewLimiter(tt.capacity, tt.window)
			if err == nil || err.Error() != tt.want {
				t.Errorf("NewLimiter(%d, %v) = %v, want %q", tt.capacity, tt.window, err, tt.want)
			}
		})
	}
}

// TestLimiterSteps walks one bucket through a scripted sequence.
func TestLimiterSteps(t *testing.T) {
	t.Parallel()
	type step struct {
		at   time.Duration
		key  string
		want Decision
	}
	tests := []struct {
		name     string
		capacity int64
		window   time.Duration
		steps    []step
	}{
		{
			name: "capacity then retry-after", capacity: 3, window: time.Minute,
			steps: []step{
				{0, "a", Decision{Allowed: true, Remaining: 2}},
				{10 * time.Second, "a", Decision{Allowed: true, Remaining: 1}},
				{20 * time.Second, "a", Decision{Allowed: true, Remaining: 0}},
				// The request at 0s leaves the window at 60s.
				{30 * time.Second, "a", Decision{RetryAfter: 30 * time.Second}},
				{30*time.Second + 400*time.Millisecond, "a", Decision{RetryAfter: 30 * time.Second}},
				// Other keys are independent.
				{30 * time.Second, "b", Decision{Allowed: true, Remaining: 2}},
				{59*time.Second + 999*time.Millisecond, "a", Decision{RetryAfter: time.Second}},
				{60 * time.Second, "a", Decision{Allowed: true, Remaining: 0}},
				// The request at 10s leaves at 70s.
				{61 * time.Second, "a", Decision{RetryAfter: 9 * time.Second}},
			},
		},
		{
			// The issue 15 case: exactly one window after an admission at
			// t0 (not on a second), the next request is admitted.
			name: "exactly one window later", capacity: 1, window: time.Minute,
			steps: []step{
				{500*time.Millisecond + 1, "a", Decision{Allowed: true, Remaining: 0}},
				{60*time.Second + 500*time.Millisecond, "a", Decision{RetryAfter: time.Second}},
				{60*time.Second + 500*time.Millisecond + 1, "a", Decision{Allowed: true, Remaining: 0}},
			},
		},
		{
			// Above a capacity of 8 there are fewer groups than requests
			// (here the newest takes the last three), but requests spread
			// like these are still admitted exactly.
			name: "research example: 10 per minute", capacity: 10, window: time.Minute,
			steps: append(func() []step {
				var s []step
				for i := range 10 {
					s = append(s, step{time.Duration(i) * time.Second, "k", Decision{Allowed: true, Remaining: int64(9 - i)}})
				}
				return s
			}(),
				step{30 * time.Second, "k", Decision{RetryAfter: 30 * time.Second}},
				step{61 * time.Second, "k", Decision{Allowed: true, Remaining: 1}},
				step{61 * time.Second, "k", Decision{Allowed: true, Remaining: 0}},
				step{62 * time.Second, "k", Decision{Allowed: true, Remaining: 0}},
				// The request at 3s leaves at 63s.
				step{62 * time.Second, "k", Decision{RetryAfter: time.Second}},
			),
		},
		{
			// A burst of capacity at one instant, once every window: an
			// exact log admits every burst in full, and so does the
			// limiter, at any capacity.
			name: "periodic burst", capacity: 100, window: time.Minute,
			steps: func() []step {
				var s []step
				for burst := range 3 {
					at := time.Duration(burst)*time.Minute + 1234567*time.Microsecond
					for i := range 100 {
						s = append(s, step{at, "k", Decision{Allowed: true, Remaining: int64(99 - i)}})
					}
					s = append(s, step{at, "k", Decision{RetryAfter: time.Minute}})
				}
				return s
			}(),
		},
		{
			name: "clock steps backwards", capacity: 2, window: time.Minute,
			steps: []step{
				{50 * time.Second, "a", Decision{Allowed: true, Remaining: 1}},
				{51 * time.Second, "a", Decision{Allowed: true, Remaining: 0}},
				// An hour earlier is treated as 51s: still full, not reset.
				// Its retry-after counts from the time passed in.
				{-time.Hour, "a", Decision{RetryAfter: time.Hour + 110*time.Second}},
				{110 * time.Second, "a", Decision{Allowed: true, Remaining: 0}},
			},
		},
		{
			name: "window of 10 minutes", capacity: 1, window: 10 * time.Minute,
			steps: []step{
				{time.Second, "a", Decision{Allowed: true, Remaining: 0}},
				{2 * time.Second, "a", Decision{RetryAfter: 599 * time.Second}},
				{600 * time.Second, "a", Decision{RetryAfter: time.Second}},
				{601 * time.Second, "a", Decision{Allowed: true, Remaining: 0}},
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			l := mustLimiter(t, tt.capacity, tt.window)
			for i, s := range tt.steps {
				got := l.AllowAt(s.key, at(s.at))
				if diff := cmp.Diff(s.want, got); diff != "" {
					t.Fatalf("step %d (%v, %q) (-want +got):\n%s", i, s.at, s.key, diff)
				}
			}
		})
	}
}

func TestSlotLength(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name     string
		capacity int64
		window   time.Duration
		slot     time.Duration
	}{
		{"one minute", 30, time.Minute, time.Second},
		{"70s", 30, 70 * time.Second, time.Second},
		{"90s", 30, 90 * time.Second, time.Second},
		{"10m", 30, 10 * time.Minute, 10 * time.Second},
		{"24h", 30, 24 * time.Hour, 24 * time.Minute},
		{"1h30m", 70000, 90 * time.Minute, 90 * time.Second},
		{"large capacity, 70s", 70000, 70 * time.Second, time.Second},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			l := mustLimiter(t, tt.capacity, tt.window, WithMaxBuckets(1))
			if got := time.Duration(l.ssec) * time.Second; got != tt.slot {
				t.Errorf("slot = %v, want %v", got, tt.slot)
			}
		})
	}
}

// TestLargeCapacityRetryAfter is issue 15's case: with a capacity above
// 65,535 and a window that is not whole minutes, slots were 2s long and
// retry-after 62s where 60s is exact. The burst is spread over a second
// and a half, so that neither the groups nor the ring know it exactly.
func TestLargeCapacityRetryAfter(t *testing.T) {
	t.Parallel()
	const capacity = 70000
	l := mustLimiter(t, capacity, 70*time.Second)
	m := &exactLog{capacity: capacity, window: 70 * time.Second}
	for i := range capacity {
		now := at(time.Duration(i) * 1500 * time.Millisecond / capacity)
		if d := l.AllowAt("k", now); !d.Allowed {
			t.Fatalf("request %d at %v rejected: %+v", i, now.Sub(base), d)
		}
		m.allow(now)
	}
	now := at(10 * time.Second)
	got := l.AllowAt("k", now)
	want, _ := m.check(now)
	if got.Allowed || got.RetryAfter < want.RetryAfter || got.RetryAfter > want.RetryAfter+retryTolerance(70*time.Second) {
		t.Fatalf("at 10s: %+v; exact retry-after %v, tolerance %v", got, want.RetryAfter, retryTolerance(70*time.Second))
	}
	if d := l.AllowAt("k", now.Add(got.RetryAfter)); !d.Allowed {
		t.Fatalf("retry after %v rejected: %+v", got.RetryAfter, d)
	}
}

// retryTolerance is the bound the issue sets on how much later than the
// exact model's answer the limiter's retry-after may be.
func retryTolerance(window time.Duration) time.Duration {
	return max(time.Second, window/60)
}

// TestLimiterProperties checks the limiter against the exact sliding log fed
// the limiter's own admissions, over random arrival times that may step
// backwards:
//   - never more than capacity admitted in any window (on the per-key
//     clamped timeline);
//   - every admission is one the exact model would make on the same history;
//   - retry-after is whole seconds, at least 1s, and no shorter than the
//     exact model's;
//   - a retry sent exactly retry-after later is admitted, and one sent a
//     second earlier is not;
//   - retry-after is at most max(1s, window/60) longer than the exact
//     model's.
//
// The exact model keeps one clock per key, as the limiter does. A key
// without a bucket (never seen, or reclaimed) starts again no earlier than
// its shard's latest reclamation, which another key's later time may have
// set when times step back (as [Limiter] documents); the model reads that
// horizon from the limiter (table.start) and moves the key's clock to it,
// so every check holds on every timeline. (Before, the admission checks
// were skipped when times stepped back across several keys.)
func TestLimiterProperties(t *testing.T) {
	t.Parallel()
	rapid.Check(t, func(rt *rapid.T) {
		// Capacities of 8 or less use the groups alone; above, the groups
		// are coarser and the ring bounds how late a request is admitted.
		capacity := rapid.Int64Range(1, 24).Draw(rt, "capacity")
		// Windows around slot-length changes (60 s, 120 s, 180 s: slots
		// of 1, 2 and 3 s) and sub's unit (65,536 s), and the smallest.
		window := time.Duration(rapid.SampledFrom([]int{1, 2, 59, 60, 61, 70, 90, 110, 119, 120, 121, 170, 179, 600, 610, 3600, 65535, 65536, 65600, 86400}).Draw(rt, "window_s")) * time.Second
		// Counter width in bytes (0: chosen by capacity). Wider counters
		// come with capacities beyond what a short run can fill; forcing
		// them here runs their code, and their slot rule, at small ones.
		width := rapid.SampledFrom([]int{0, 2, 4}).Draw(rt, "width")
		keys := rapid.IntRange(1, 3).Draw(rt, "keys")
		backwards := rapid.Bool().Draw(rt, "backwards")
		// Below 4,096 buckets there is one shard: the keys share its
		// horizon, and one key's new bucket reclaims another's.
		maxBuckets := rapid.SampledFrom([]int{DefaultMaxBuckets, 100}).Draw(rt, "max_buckets")
		l := newLimiterWidth(capacity, window, maxBuckets, width)
		tolerance := retryTolerance(window)
		models := make([]*exactLog, keys)
		clocks := make([]time.Time, keys)
		for k := range models {
			models[k] = &exactLog{capacity: capacity, window: window}
		}
		// at is the time the limiter decides key k's request at t: no
		// earlier than the key's latest, and, for a key without a bucket,
		// than its shard's horizon. It moves the key's clock there.
		at := func(k int, key string, t time.Time) time.Time {
			eff := later(clocks[k], t)
			if hz, live := l.t.start(l, l.hash(key)); !live {
				eff = later(eff, l.epoch.Add(time.Duration(hz)))
			}
			clocks[k] = eff
			return eff
		}
		now := base
		n := rapid.IntRange(1, 150).Draw(rt, "requests")
		for range n {
			// Mostly forward, sometimes backward, sometimes jumping far.
			back := int64(0)
			if backwards {
				back = -int64(20 * time.Second)
			}
			step := time.Duration(rapid.OneOf(
				rapid.Int64Range(0, int64(3*time.Second)),
				rapid.Int64Range(back, int64(window)),
				rapid.Int64Range(0, int64(2*window)),
			).Draw(rt, "step"))
			now = now.Add(step)
			k := rapid.IntRange(0, keys-1).Draw(rt, "key")
			key := fmt.Sprintf("key-%d", k)
			// The limiter treats a time earlier than the key's latest as
			// that latest time (eff); retry-after is measured from now.
			eff := at(k, key, now)
			want, leave := models[k].check(eff)
			got := l.AllowAt(key, now)
			if got.Allowed {
				if !want.Allowed {
					rt.Fatalf("%v: admitted %q; the exact model on the same history rejects (retry %v)", eff.Sub(base), key, want.RetryAfter)
				}
				if got.Remaining > want.Remaining {
					rt.Fatalf("%v: remaining %d, exact %d", eff.Sub(base), got.Remaining, want.Remaining)
				}
				models[k].allow(eff)
				continue
			}
			if got.RetryAfter < time.Second || got.RetryAfter%time.Second != 0 {
				rt.Fatalf("retry-after %v is not whole seconds >= 1s", got.RetryAfter)
			}
			// The exact model's answer to the caller at now: wait until
			// leave (or until eff, when it admits there).
			exact := time.Duration(0)
			if leave.After(now) {
				exact = ceilSeconds(leave.Sub(now))
			}
			if got.RetryAfter < exact {
				rt.Fatalf("%v (caller %v): retry-after %v is shorter than the exact %v", eff.Sub(base), now.Sub(base), got.RetryAfter, exact)
			}
			if got.RetryAfter > exact+tolerance {
				rt.Fatalf("%v (caller %v): retry-after %v; exact %v; tolerance %v", eff.Sub(base), now.Sub(base), got.RetryAfter, exact, tolerance)
			}
			switch rapid.IntRange(0, 3).Draw(rt, "probe") {
			case 0: // a second early: still rejected (and not counted)
				if got.RetryAfter > time.Second {
					early := now.Add(got.RetryAfter - time.Second)
					at(k, key, early)
					if d := l.AllowAt(key, early); d.Allowed {
						rt.Fatalf("%v: admitted a second before retry-after %v", early.Sub(base), got.RetryAfter)
					}
					if !backwards {
						now = later(now, early) // one clock: never back
					}
				}
			case 1: // exactly retry-after later: admitted
				retry := now.Add(got.RetryAfter)
				eff := at(k, key, retry)
				if d := l.AllowAt(key, retry); !d.Allowed {
					rt.Fatalf("%v: retry after %v rejected: %+v", retry.Sub(base), got.RetryAfter, d)
				}
				models[k].allow(eff)
				now = later(now, retry)
			}
		}
	})
}

// TestReclaimedKeyStartsAtHorizon pins what TestLimiterProperties models
// when times step back across keys: a key whose bucket another key's new
// bucket reclaimed starts again no earlier than that reclamation, and its
// admission counts from there.
func TestReclaimedKeyStartsAtHorizon(t *testing.T) {
	t.Parallel()
	l := newLimiterWidth(1, time.Minute, 100, 0) // one shard
	if d := l.AllowAt("a", base); !d.Allowed {
		t.Fatalf("a at 0: %+v", d)
	}
	if d := l.AllowAt("b", base.Add(61*time.Second)); !d.Allowed { // reclaims a, idle at 61 s
		t.Fatalf("b at 61 s: %+v", d)
	}
	hz, live := l.t.start(l, l.hash("a"))
	if live || !l.epoch.Add(time.Duration(hz)).Equal(base.Add(61*time.Second)) {
		t.Fatalf("a: live %v, horizon %v; want reclaimed, the horizon at 61 s", live, l.epoch.Add(time.Duration(hz)).Sub(base))
	}
	// At 50 s the exact log of a's own times would still hold its 0 s
	// admission; the limiter starts a's new bucket at 61 s.
	if d := l.AllowAt("a", base.Add(50*time.Second)); !d.Allowed {
		t.Fatalf("a at 50 s: %+v; want admitted, at the horizon", d)
	}
	if d := l.AllowAt("a", base.Add(100*time.Second)); d.Allowed || d.RetryAfter != 21*time.Second {
		t.Errorf("a at 100 s: %+v; want rejected until 121 s, a window after the horizon", d)
	}
}

// TestPeriodicBurstsProperty is issue 15's periodic-burst workload against
// the exact sliding log, each evolving on its own: capacity requests at one
// instant, once every period of window+delta (delta from 0 to a slot, or
// exactly 0), sometimes with more requests at the same instant or later
// that are rejected. The limiter admits exactly what the exact log admits,
// burst by burst, at every capacity; and it never admits what the exact
// log fed its own admissions would reject.
func TestPeriodicBurstsProperty(t *testing.T) {
	t.Parallel()
	rapid.Check(t, func(rt *rapid.T) {
		capacity := rapid.Int64Range(1, 300).Draw(rt, "capacity")
		// Long windows too: a burst at any nanosecond must leave exactly
		// one window later (found by a black-box check: above 65,528 s the
		// newest admission's time was rounded to a few ns).
		window := time.Duration(rapid.SampledFrom([]int{60, 70, 90, 110, 120, 190, 600, 3600, 65529, 86400, 366 * 86400}).Draw(rt, "window_s")) * time.Second
		width := rapid.SampledFrom([]int{0, 2, 4}).Draw(rt, "width")
		l := newLimiterWidth(capacity, window, DefaultMaxBuckets, width)
		slot := retryTolerance(window)
		exact := &exactLog{capacity: capacity, window: window}
		own := &exactLog{capacity: capacity, window: window}
		now := base.Add(time.Duration(rapid.Int64Range(0, int64(window)).Draw(rt, "start")))
		for burst := range rapid.IntRange(1, 6).Draw(rt, "bursts") {
			if burst > 0 {
				delta := time.Duration(rapid.OneOf(rapid.Just(int64(0)), rapid.Int64Range(0, int64(slot))).Draw(rt, "delta"))
				now = now.Add(window + delta)
			}
			extra := rapid.Int64Range(0, 3).Draw(rt, "extra")
			var ours, theirs int64
			for range capacity + extra {
				if d := l.AllowAt("k", now); d.Allowed {
					ours++
					if w, _ := own.check(now); !w.Allowed {
						rt.Fatalf("burst %d: admitted over capacity", burst)
					}
					own.allow(now)
				}
				if exact.allow(now).Allowed {
					theirs++
				}
			}
			if ours != theirs {
				rt.Fatalf("burst %d at %v: admitted %d, the exact log %d", burst, now.Sub(base), ours, theirs)
			}
			// Rejected requests later in the period do not change that.
			for range rapid.IntRange(0, 2).Draw(rt, "later") {
				at := now.Add(time.Duration(rapid.Int64Range(0, int64(window-time.Nanosecond)).Draw(rt, "later_at")))
				if d := l.AllowAt("k", at); d.Allowed {
					rt.Fatalf("admitted a request %v into a full window", at.Sub(now))
				}
			}
		}
	})
}

func later(a, b time.Time) time.Time {
	if a.After(b) {
		return a
	}
	return b
}

// TestReclaimedKeyAfterClockStepsBack pins what [Limiter] documents for a
// clock that steps back across keys: a key whose bucket was reclaimed
// starts again no earlier than the reclamation, because true time has
// passed the time that reclamation saw.
func TestReclaimedKeyAfterClockStepsBack(t *testing.T) {
	t.Parallel()
	l := mustLimiter(t, 1, time.Minute, WithMaxBuckets(1000)) // one shard
	steps := []struct {
		at   time.Duration
		key  string
		want Decision
	}{
		{0, "a", Decision{Allowed: true}},
		// b's new bucket reclaims a's, idle at 200s.
		{200 * time.Second, "b", Decision{Allowed: true}},
		// The clock steps back: a starts again at 200s, not at 30s.
		{30 * time.Second, "a", Decision{Allowed: true}},
		// a's admission at 200s leaves the window at 260s, 220s after 40s.
		{40 * time.Second, "a", Decision{RetryAfter: 220 * time.Second}},
		{260 * time.Second, "a", Decision{Allowed: true}},
	}
	for i, st := range steps {
		if diff := cmp.Diff(st.want, l.AllowAt(st.key, at(st.at))); diff != "" {
			t.Fatalf("step %d (%v, %q) (-want +got):\n%s", i, st.at, st.key, diff)
		}
	}
}

// TestBucketFromOverflow checks that a key that gets its own bucket after
// going through the overflow bucket inherits only what is still inside the
// window: counts that have left it do not come back.
func TestBucketFromOverflow(t *testing.T) {
	t.Parallel()
	l := mustLimiter(t, 2, time.Minute, WithMaxBuckets(1))
	steps := []struct {
		at   time.Duration
		key  string
		want Decision
	}{
		{0, "a", Decision{Allowed: true, Remaining: 1}},
		{0, "b", Decision{Allowed: true, Remaining: 1}},                // overflow bucket
		{30 * time.Second, "b", Decision{Allowed: true, Remaining: 0}}, // overflow bucket
		// a is idle at 70s and reclaimed; c's new bucket inherits b's
		// request at 30s, not the one at 0s, which has left the window.
		{70 * time.Second, "c", Decision{Allowed: true, Remaining: 0}},
		{70 * time.Second, "c", Decision{RetryAfter: 20 * time.Second}},
	}
	for i, st := range steps {
		if diff := cmp.Diff(st.want, l.AllowAt(st.key, at(st.at))); diff != "" {
			t.Fatalf("step %d (%v, %q) (-want +got):\n%s", i, st.at, st.key, diff)
		}
	}
}

// TestCapNeverExceeded checks the capacity bound with a small cap on live
// buckets, so that keys go through the shared overflow bucket and later get
// buckets of their own: per key, never more than capacity admitted in any
// window.
func TestCapNeverExceeded(t *testing.T) {
	t.Parallel()
	rapid.Check(t, func(rt *rapid.T) {
		capacity := rapid.Int64Range(1, 4).Draw(rt, "capacity")
		window := time.Duration(rapid.SampledFrom([]int{60, 90, 600}).Draw(rt, "window_s")) * time.Second
		maxBuckets := rapid.IntRange(1, 3).Draw(rt, "max_buckets")
		l := mustLimiter(rt, capacity, window, WithMaxBuckets(maxBuckets))
		admitted := map[string][]time.Time{}
		now := base
		for range rapid.IntRange(1, 200).Draw(rt, "requests") {
			now = now.Add(time.Duration(rapid.Int64Range(0, int64(window)/4).Draw(rt, "step")))
			key := fmt.Sprint(rapid.IntRange(0, 5).Draw(rt, "key"))
			if !l.AllowAt(key, now).Allowed {
				continue
			}
			in := 1
			for _, a := range admitted[key] {
				if now.Sub(a) < window {
					in++
				}
			}
			if int64(in) > capacity {
				rt.Fatalf("%v: key %q has %d admissions in the window ending now; capacity %d", now.Sub(base), key, in, capacity)
			}
			admitted[key] = append(admitted[key], now)
		}
	})
}

// TestCapFloodIsCheap checks that a flood of new keys at the cap does not
// scan the shard for every key: after one full sweep in a second, new keys
// go to the overflow bucket until the second ends.
func TestCapFloodIsCheap(t *testing.T) {
	t.Parallel()
	l := mustLimiter(t, 1, time.Minute, WithMaxBuckets(100))
	for i := range 100 {
		l.AllowAt(fmt.Sprint("held-", i), base)
	}
	sh := &(*l.t.(*shards[uint8]))[0]
	for i := range 50 {
		l.AllowAt(fmt.Sprint("new-", i), base.Add(500*time.Millisecond))
	}
	if sh.fullSweeps != 1 {
		t.Errorf("%d full sweeps for 50 new keys in one second, want 1", sh.fullSweeps)
	}
	// A second later the cap is scanned again (and still finds nothing idle).
	if d := l.AllowAt("later", base.Add(1500*time.Millisecond)); d.Allowed {
		t.Errorf("the overflow bucket admitted a second request: %+v", d)
	}
	if sh.fullSweeps != 2 {
		t.Errorf("%d full sweeps after a second passed, want 2", sh.fullSweeps)
	}
}

// TestPoissonAccuracy compares admissions with the exact model on Poisson
// traffic at 1.5 times the limit, each evolving on its own.
func TestPoissonAccuracy(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name     string
		capacity int64
		window   time.Duration
	}{
		{"100 per minute", 100, time.Minute},
		{"30 per minute", 30, time.Minute},
		{"1000 per 10 minutes", 1000, 10 * time.Minute},
		{"10000 per hour", 10000, time.Hour},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			ours, exact := poisson(t, tt.capacity, tt.window, 1.5, 200, 42)
			ratio := float64(ours) / float64(exact)
			t.Logf("admitted %d, exact %d, ratio %.4f", ours, exact, ratio)
			if ratio < 0.98 || ratio > 1 {
				t.Errorf("admitted %d of the exact model's %d (%.2f%%); want 98%%..100%%", ours, exact, 100*ratio)
			}
		})
	}
}

// poisson simulates windows windows of Poisson arrivals at load times the
// limit and returns the admissions of the limiter and of the exact model.
func poisson(t testing.TB, capacity int64, window time.Duration, load float64, windows int, seed uint64) (ours, exact int) {
	rng := rand.New(rand.NewPCG(seed, seed))
	l := mustLimiter(t, capacity, window)
	m := &exactLog{capacity: capacity, window: window}
	mean := float64(window) / (load * float64(capacity))
	end := base.Add(time.Duration(windows) * window)
	for now := base; now.Before(end); now = now.Add(time.Duration(rng.ExpFloat64() * mean)) {
		if l.AllowAt("k", now).Allowed {
			ours++
		}
		if m.allow(now).Allowed {
			exact++
		}
	}
	return ours, exact
}

func TestRejectedNotCounted(t *testing.T) {
	t.Parallel()
	l := mustLimiter(t, 2, time.Minute)
	l.AllowAt("k", at(0))
	l.AllowAt("k", at(time.Second))
	for i := range 1000 {
		if d := l.AllowAt("k", at(2*time.Second+time.Duration(i)*time.Millisecond)); d.Allowed {
			t.Fatalf("request %d admitted over capacity", i)
		}
	}
	// Had the rejections counted, this would be rejected.
	if d := l.AllowAt("k", at(61*time.Second)); !d.Allowed {
		t.Fatalf("after the first request left the window: %+v", d)
	}
}

// TestAllowReadsTheSameClock: Allow, which reads only the monotonic clock,
// counts in the same bucket and on the same time line as AllowAt given
// time.Now(). The counts are checked on the real clock (an hour's window
// leaves no room for the machine's speed); the retry delays, which are
// durations, in a synctest bubble, where they are exact.
func TestAllowReadsTheSameClock(t *testing.T) {
	t.Parallel()
	l := mustLimiter(t, 3, time.Hour)
	for i, allow := range []func() Decision{
		func() Decision { return l.Allow("k") },
		func() Decision { return l.AllowAt("k", time.Now()) },
		func() Decision { return l.Allow("k") },
	} {
		if d := allow(); !d.Allowed || d.Remaining != int64(2-i) {
			t.Fatalf("request %d: %+v, want %d remaining", i, d, 2-i)
		}
	}
	if d := l.Allow("k"); d.Allowed {
		t.Fatalf("Allow when full: %+v", d)
	}
	synctest.Test(t, func(t *testing.T) {
		l := mustLimiter(t, 3, time.Hour)
		l.Allow("k")
		l.AllowAt("k", time.Now())
		l.Allow("k")
		for _, d := range []Decision{l.AllowAt("k", time.Now()), l.Allow("k")} {
			if d.Allowed || d.RetryAfter != time.Hour {
				t.Fatalf("when full: %+v, want a retry after the hour", d)
			}
		}
		// After a request an hour on, passed in, Allow's earlier time
		// counts as that one, and its retry delay is measured from its own
		// clock: two hours.
		if d := l.AllowAt("k", time.Now().Add(time.Hour)); !d.Allowed || d.Remaining != 2 {
			t.Fatalf("an hour on: %+v", d)
		}
		for want := int64(1); want >= 0; want-- {
			if d := l.Allow("k"); !d.Allowed || d.Remaining != want {
				t.Fatalf("Allow after a later AllowAt: %+v, want %d remaining", d, want)
			}
		}
		if d := l.Allow("k"); d.Allowed || d.RetryAfter != 2*time.Hour {
			t.Fatalf("Allow when full an hour on: %+v, want a retry after two hours", d)
		}
		time.Sleep(2 * time.Hour) // the bubble's clock
		if d := l.Allow("k"); !d.Allowed {
			t.Fatalf("two hours later: %+v", d)
		}
	})
}

func TestSweepAndReclaim(t *testing.T) {
	t.Parallel()
	// A new bucket starts no earlier than the latest reclamation in its
	// shard. Whether "a" shares a shard with the other key depends on the
	// limiter's random hash seed, so each case picks its other key: one in
	// a different shard (then "a" restarts at the sweep that reclaimed it,
	// 71s) and one in the same shard (then at the later sweep that
	// reclaimed the other key, 91s). With one shard, every key shares it.
	cases := []struct {
		name      string
		opts      []Option
		sameShard bool
		want      time.Duration // retry-after of "a"'s second request at 91s
	}{
		{"other shard", nil, false, 40 * time.Second}, // counted at 70.5s
		{"same shard", nil, true, 59 * time.Second},   // counted at 90s
		{"one shard", []Option{WithMaxBuckets(1000)}, true, 59 * time.Second},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			l := mustLimiter(t, 1, time.Minute, c.opts...)
			other := keyInShard(t, l, "a", c.sameShard)
			l.AllowAt("a", at(10*time.Second+500*time.Millisecond))
			l.AllowAt(other, at(30*time.Second))
			l.AllowAt(other, at(40*time.Second)) // rejected: does not extend its life
			if got := l.Len(); got != 2 {
				t.Fatalf("Len = %d, want 2", got)
			}
			steps := []struct {
				at   time.Duration
				want int // reclaimed
				live int
			}{
				{70*time.Second + 499*time.Millisecond, 0, 2}, // a's admission at 10.5s still counts
				{70*time.Second + 500*time.Millisecond, 1, 1},
				{89 * time.Second, 0, 1},
				{90 * time.Second, 1, 0},
			}
			for _, s := range steps {
				if got := l.Sweep(at(s.at)); got != s.want {
					t.Errorf("Sweep(%v) = %d, want %d", s.at, got, s.want)
				}
				if got := l.Len(); got != s.live {
					t.Errorf("after Sweep(%v): Len = %d, want %d", s.at, got, s.live)
				}
			}
			if d := l.AllowAt("a", at(0)); !d.Allowed {
				t.Fatalf("reclaimed key: %+v", d)
			}
			if d := l.AllowAt("a", at(91*time.Second)); d.Allowed || d.RetryAfter != c.want {
				t.Fatalf("reclaimed key, second request: %+v; want retry after %v", d, c.want)
			}
		})
	}
}

// keyInShard returns a key that lies in key's shard of l, or in another
// shard when same is false.
func keyInShard(t *testing.T, l *Limiter, key string, same bool) string {
	t.Helper()
	shard := func(k string) uint64 { return l.hash(k) & l.shardMask }
	for i := range 10_000 {
		k := fmt.Sprint("other-", i)
		if (shard(k) == shard(key)) == same {
			return k
		}
	}
	t.Fatalf("no key found in the %s shard as %q", map[bool]string{true: "same", false: "other"}[same], key)
	return ""
}

func TestSweepAll(t *testing.T) {
	t.Parallel()
	for _, maxBuckets := range []int{1000, DefaultMaxBuckets} { // one shard, 64 shards
		l := mustLimiter(t, 1, time.Minute, WithMaxBuckets(maxBuckets))
		for i := range 1000 {
			l.AllowAt(fmt.Sprint("k", i), at(time.Duration(i)*time.Millisecond))
		}
		if got := l.Sweep(at(time.Minute - time.Nanosecond)); got != 0 {
			t.Errorf("max %d: Sweep within the window reclaimed %d", maxBuckets, got)
		}
		// The key admitted at 0 leaves the window at one minute exactly.
		if got := l.Sweep(at(time.Minute)); got != 1 {
			t.Errorf("max %d: Sweep at one minute reclaimed %d, want 1", maxBuckets, got)
		}
		if got := l.Sweep(at(time.Hour)); got != 999 {
			t.Errorf("max %d: Sweep reclaimed %d, want 999", maxBuckets, got)
		}
		if got := l.Len(); got != 0 {
			t.Errorf("max %d: Len = %d after a full sweep", maxBuckets, got)
		}
	}
}

func TestIncrementalReclaim(t *testing.T) {
	t.Parallel()
	l := mustLimiter(t, 1, time.Minute)
	for i := range 1000 {
		l.AllowAt(fmt.Sprint("old-", i), at(0))
	}
	// New keys an hour later reclaim old buckets as they are created.
	for i := range 1000 {
		l.AllowAt(fmt.Sprint("new-", i), at(time.Hour))
	}
	if got := l.Len(); got > 1200 {
		t.Errorf("Len = %d after 1000 idle and 1000 new keys; incremental reclaim is not working", got)
	}
}

func TestLongKeysHashed(t *testing.T) {
	t.Parallel()
	l := mustLimiter(t, 1, time.Minute)
	long := strings.Repeat("x", 1000)
	other := long[:999] + "y"
	if d := l.AllowAt(long, at(0)); !d.Allowed {
		t.Fatal("first long key rejected")
	}
	if d := l.AllowAt(long, at(time.Second)); d.Allowed {
		t.Fatal("long key not limited")
	}
	if d := l.AllowAt(other, at(time.Second)); !d.Allowed {
		t.Fatal("a different long key shares the bucket")
	}
	if got := l.Len(); got != 2 {
		t.Errorf("Len = %d, want 2", got)
	}
	if got := l.Sweep(at(time.Hour)); got != 2 {
		t.Errorf("Sweep reclaimed %d buckets, want 2", got)
	}
}

// TestShortKeysHashed checks the inline hashes of keys of up to 16 and of
// 17 to 32 bytes (and one past them, through maphash): every byte of
// every length counts,
// keys that differ only in length differ, and two limiters hash apart.
func TestShortKeysHashed(t *testing.T) {
	t.Parallel()
	l, m := mustLimiter(t, 1, time.Minute), mustLimiter(t, 1, time.Minute)
	seen := map[uint64]string{}
	add := func(k string) {
		h := l.hash(k)
		if prev, ok := seen[h]; ok && prev != k {
			t.Fatalf("hash(%q) = hash(%q)", k, prev)
		}
		seen[h] = k
		if h == m.hash(k) {
			t.Errorf("two limiters hash %q alike", k)
		}
	}
	add("")
	// Up to 33: keys of 17 to 32 bytes are hashed inline too, and 33
	// by maphash.
	for n := 1; n <= 33; n++ {
		k := []byte(strings.Repeat("a", n))
		add(string(k))
		for i := range n {
			for _, c := range []byte{'b', 0, 0xff} {
				k[i] = c
				add(string(k))
				k[i] = 'a'
			}
		}
	}
	// A short key and a bucket of its own, apart from its neighbours.
	if d := l.AllowAt("10.0.0.1", at(0)); !d.Allowed {
		t.Fatal("first request rejected")
	}
	if d := l.AllowAt("10.0.0.2", at(0)); !d.Allowed {
		t.Fatal("a different short key shares the bucket")
	}
	if d := l.AllowAt("10.0.0.1", at(0)); d.Allowed {
		t.Fatal("short key not limited")
	}
}

// TestHashSpreadsKeys checks that the bits of hash the limiter uses are
// spread evenly over sets of keys a limiter sees: the low six, which
// choose the shard; bits 9 to 20, among those that choose a key's slot in
// its shard's index (see entries.home); and the top eight, the index
// entries' tag. A chi-square statistic far above its mean (k-1, standard
// deviation sqrt(2(k-1)) for k cells) fails: eight deviations, which
// chance never gives, where a hash with constant tag or slot bits gives
// hundreds. (A review found every test passing with the tag or the slot
// bits forced to 0.) It also checks rearrangements that a hash of
// overlapping words with the same mixing for each word would collide on.
func TestHashSpreadsKeys(t *testing.T) {
	t.Parallel()
	l := mustLimiter(t, 1, time.Minute)
	const n = 100_000
	sets := map[string]func(i int) string{
		"IPv4":            func(i int) string { return fmt.Sprintf("10.%d.%d.%d", i>>16, i>>8&255, i&255) },
		"address and key": func(i int) string { return fmt.Sprintf("198.51.%d.%d|key-%06d", i>>8&255, i&255, i) },
		"IPv6":            func(i int) string { return fmt.Sprintf("2001:db8::%x:%x", i>>12, i&4095) },
		"17-byte numbers": func(i int) string { return fmt.Sprintf("%017d", i) },
		"32-byte numbers": func(i int) string { return fmt.Sprintf("%032d", i) },
		"40-byte numbers": func(i int) string { return fmt.Sprintf("%040d", i) },
	}
	ranges := []struct {
		name        string
		shift, bits uint
	}{{"shard (bits 0-5)", 0, 6}, {"slot (bits 9-20)", 9, 12}, {"tag (bits 56-63)", 56, 8}}
	for name, key := range sets {
		counts := make([][]int, len(ranges))
		for r, rg := range ranges {
			counts[r] = make([]int, 1<<rg.bits)
		}
		for i := range n {
			h := l.hash(key(i))
			for r, rg := range ranges {
				counts[r][h>>rg.shift&(1<<rg.bits-1)]++
			}
		}
		for r, rg := range ranges {
			k := float64(len(counts[r]))
			want := n / k
			chi := 0.0
			for _, c := range counts[r] {
				chi += (float64(c) - want) * (float64(c) - want) / want
			}
			if z := (chi - (k - 1)) / math.Sqrt(2*(k-1)); z > 8 {
				t.Errorf("%s keys, %s: chi-square %.0f over %.0f cells, %.1f deviations above its mean", name, rg.name, chi, k, z)
			}
		}
	}
	// Rearranged words, and one change repeated a word or two further on.
	r := rand.New(rand.NewPCG(1, 2))
	for size := 1; size <= 40; size++ {
		base := make([]byte, size)
		for i := range base {
			base[i] = byte(r.Uint32())
		}
		seen := map[uint64]string{l.hash(string(base)): string(base)}
		try := func(k []byte) {
			h := l.hash(string(k))
			if prev, ok := seen[h]; ok && prev != string(k) {
				t.Fatalf("hash(%q) = hash(%q)", k, prev)
			}
			seen[h] = string(k)
		}
		for half := 1; half < size; half++ {
			try(append(slices.Clone(base[half:]), base[:half]...)) // rotated
		}
		for i := range size {
			for _, d := range []int{0, 8, 16, 24} {
				if i+d < size {
					k := slices.Clone(base)
					k[i+d] ^= 0x5a
					try(k)
				}
			}
		}
	}
}

// TestMaxBuckets checks the documented behaviour at the cap: keys without a
// bucket share one overflow bucket, existing buckets are untouched, and
// reclaimed room is reused.
func TestMaxBuckets(t *testing.T) {
	t.Parallel()
	l := mustLimiter(t, 2, time.Minute, WithMaxBuckets(2))
	type step struct {
		at      time.Duration
		key     string
		allowed bool
	}
	steps := []step{
		{0, "a", true},
		{0, "b", true},
		{1 * time.Second, "c", true}, // overflow bucket: 1
		{2 * time.Second, "d", true}, // overflow bucket: 2
		{3 * time.Second, "e", false},
		{3 * time.Second, "c", false},
		{4 * time.Second, "a", true}, // a keeps its own bucket
		{5 * time.Second, "a", false},
	}
	for i, s := range steps {
		if got := l.AllowAt(s.key, at(s.at)); got.Allowed != s.allowed {
			t.Fatalf("step %d (%v %q): allowed %v, want %v", i, s.at, s.key, got.Allowed, s.allowed)
		}
	}
	if got := l.Len(); got != 2 {
		t.Errorf("Len = %d, want the cap 2", got)
	}
	// After a and b are idle, a new key gets a bucket of its own.
	if d := l.AllowAt("f", at(2*time.Minute)); !d.Allowed {
		t.Fatalf("f after room was freed: %+v", d)
	}
	if d := l.AllowAt("f", at(2*time.Minute)); !d.Allowed {
		t.Fatalf("f's second request: %+v", d)
	}
	if d := l.AllowAt("f", at(2*time.Minute)); d.Allowed {
		t.Fatal("f's third request admitted; f should have its own bucket of 2")
	}
}

func TestConcurrentUse(t *testing.T) {
	t.Parallel()
	const capacity = 50
	l := mustLimiter(t, capacity, time.Minute)
	var wg sync.WaitGroup
	var mu sync.Mutex
	admitted := map[string]int{}
	for g := range 8 {
		wg.Go(func() {
			for i := range 400 {
				key := fmt.Sprint("k", (g+i)%4)
				if l.AllowAt(key, at(time.Duration(i)*time.Millisecond)).Allowed {
					mu.Lock()
					admitted[key]++
					mu.Unlock()
				}
			}
		})
	}
	wg.Wait()
	want := map[string]int{"k0": capacity, "k1": capacity, "k2": capacity, "k3": capacity}
	if diff := cmp.Diff(want, admitted); diff != "" {
		t.Errorf("admitted per key (-want +got):\n%s", diff)
	}
}

// TestHotKeyCountsEvery takes one key from several goroutines at once, so
// that decisions take its record in turns, with and without the shard's
// lock, and the record goes between contended and uncontended: every
// admission must be counted, none lost to a decision that read the record
// before another's unlock (on amd64 a plain store; see unlock). Run
// without the race detector too, which builds the atomic unlock instead.
func TestHotKeyCountsEvery(t *testing.T) {
	// Not parallel: the goroutines must run at once, not beside other
	// tests. (A review found a fast path that unlocked before updating
	// passing the package's tests every time while this test ran in
	// parallel with them.)
	const (
		capacity   = 1 << 20
		goroutines = 8
		each       = 50_000
	)
	l := mustLimiter(t, capacity, time.Hour)
	var wg sync.WaitGroup
	var rejected atomic.Int64
	start := make(chan struct{})
	for g := range goroutines {
		wg.Go(func() {
			<-start
			for i := range each {
				if !l.AllowAt("hot", at(time.Duration(i*goroutines+g)*time.Microsecond)).Allowed {
					rejected.Add(1)
				}
			}
		})
	}
	close(start)
	wg.Wait()
	if n := rejected.Load(); n != 0 {
		t.Fatalf("%d of %d requests rejected, capacity %d", n, goroutines*each, capacity)
	}
	d := l.AllowAt("hot", at(time.Second))
	if want := int64(capacity - goroutines*each - 1); d.Remaining != want {
		t.Fatalf("after %d admissions and one more: %d remaining, want %d", goroutines*each, d.Remaining, want)
	}
}

// TestConcurrentSlidingWindows hammers a few keys from several goroutines
// while time moves on across many windows, with Sweep running alongside:
// per key, never more than capacity admitted in any window, and the
// limiter keeps admitting as old requests leave the window. Time moves in
// steps that every goroutine shares, so each admission's time is the one
// it was counted at.
func TestConcurrentSlidingWindows(t *testing.T) {
	t.Parallel()
	const (
		capacity = 40
		window   = time.Minute
		step     = 7 * time.Second
		steps    = 60
		keys     = 3
	)
	l := mustLimiter(t, capacity, window, WithMaxBuckets(1000))
	admitted := make([][keys]atomic.Int64, steps)
	for k := range steps {
		now := at(time.Duration(k) * step)
		var wg sync.WaitGroup
		for g := range 6 {
			wg.Go(func() {
				for i := range 12 {
					key := (g + i) % keys
					if l.AllowAt(fmt.Sprint("k", key), now).Allowed {
						admitted[k][key].Add(1)
					}
				}
			})
		}
		wg.Go(func() { l.Sweep(now) })
		wg.Wait()
	}
	total := 0
	for k := range steps {
		for key := range keys {
			in := int64(0)
			for j := k; j >= 0 && time.Duration(k-j)*step < window; j-- {
				in += admitted[j][key].Load()
			}
			if in > capacity {
				t.Fatalf("key %d: %d admitted in the window ending at step %d, capacity %d", key, in, k, capacity)
			}
			total += int(admitted[k][key].Load())
		}
	}
	// 420 s is seven windows: an exact limiter admits about 7 × capacity
	// = 280 per key; this one admits slots a second late at most.
	if total < keys*260 {
		t.Errorf("%d admissions in all, want at least %d", total, keys*260)
	}
}

// TestConcurrentLookupsWhileReclaiming drives decisions, which find
// existing buckets without the shard's lock, while other decisions
// create buckets, reclaim idle ones (moving index entries and reusing
// records for other keys) and grow the index, and Sweep runs alongside.
// Each phase comes a window after the last, so every bucket of the last
// phase is idle and may be reclaimed at any moment of this one. No
// decision may be lost or doubled: in each phase a key requested at least
// capacity times is admitted exactly capacity times, whichever goroutines
// and paths decided it, with 64 shards and with one.
func TestConcurrentLookupsWhileReclaiming(t *testing.T) {
	t.Parallel()
	const (
		capacity = 3
		keys     = 1500
		phases   = 5
		workers  = 6
		requests = 2500
	)
	for _, maxBuckets := range []int{DefaultMaxBuckets, 4000} {
		t.Run(fmt.Sprint(maxBuckets), func(t *testing.T) {
			t.Parallel()
			l := mustLimiter(t, capacity, time.Minute, WithMaxBuckets(maxBuckets))
			names := make([]string, keys)
			for i := range names {
				names[i] = fmt.Sprint("key-", i)
			}
			for p := range phases {
				now := at(time.Duration(p) * time.Minute)
				var admitted, requested [keys]atomic.Int32
				var wg sync.WaitGroup
				for w := range workers {
					wg.Go(func() {
						r := rand.New(rand.NewPCG(uint64(p), uint64(w)))
						for range requests {
							k := r.IntN(keys)
							requested[k].Add(1)
							if l.AllowAt(names[k], now).Allowed {
								admitted[k].Add(1)
							}
						}
					})
				}
				wg.Go(func() {
					for range 20 {
						l.Sweep(now)
						runtime.Gosched()
					}
				})
				wg.Wait()
				for k := range keys {
					want := min(requested[k].Load(), capacity)
					if got := admitted[k].Load(); got != want {
						t.Fatalf("phase %d, %s: %d admitted of %d requests, want %d",
							p, names[k], got, requested[k].Load(), want)
					}
				}
			}
		})
	}
}

// TestContendedBucket holds a key's record as a decision without the
// shard's lock would, and checks that a decision that waited for the
// shard's lock meanwhile waits for the record and makes the bucket
// contended (in the record and its index entry); that a contended bucket
// counts every admission; that calmDecisions decisions that did not wait
// keep it contended, and the next makes it uncontended again; and that a
// contended bucket is swept when idle.
func TestContendedBucket(t *testing.T) {
	t.Parallel()
	l := mustLimiter(t, 4, time.Minute)
	s := *l.t.(*shards[uint8])
	h := l.hash("k")
	k, sh := h|keyBits, &s[h&l.shardMask]
	l.AllowAt("k", at(0))
	record := func() (bucket[uint8], uint32) {
		t.Helper()
		id, b, _, ok := sh.find(k, false)
		if !ok {
			t.Fatal("no record for k")
		}
		x := sh.ids.load()
		for i := x.home(k); ; i = (i + 1) & x.mask {
			if e := x.at(i).Load(); e&idMask == uint32(id+1) {
				return b, e
			}
		}
	}
	contended := func() bool {
		t.Helper()
		b, e := record()
		w := b.word0().Load()
		if (w&uncontended == 0) != (e&contended != 0) {
			t.Fatalf("record word %#x and index entry %#x disagree", w, e)
		}
		return e&contended != 0
	}
	// A decision that waited for the shard's lock, as one does while
	// another decision holds it.
	waitedDecision := func(now time.Time) Decision {
		sh.mu.Lock()
		defer sh.mu.Unlock()
		return sh.allowLocked(l, k, l.since(now), true, 0, bucket[uint8]{}, false)
	}
	b, _ := record()
	if !b.tryLock(k) || contended() {
		t.Fatal("new bucket: tryLock failed, or contended")
	}
	done := make(chan Decision)
	go func() { done <- waitedDecision(at(time.Second)) }()
	// The decision marks the record before it waits for it.
	timeout := apitest.BeforeTimeout(t)
	for b.word0().Load()&uncontended != 0 {
		select {
		case <-timeout:
			t.Fatal("the decision that waited never marked the record contended")
		default:
		}
		runtime.Gosched()
	}
	// A decision that went past the held record would now finish: give
	// it every chance to before the holder leaves (a correct one never
	// does, so this costs no time but the yields).
	for range 1000 {
		select {
		case d := <-done:
			t.Fatalf("decision %+v made while the record was held", d)
		default:
		}
		runtime.Gosched()
	}
	b.unlock()
	if d := <-done; !d.Allowed || d.Remaining != 2 {
		t.Fatalf("decision after the holder left: %+v, want admitted with 2 remaining", d)
	}
	if !contended() || b.tryLock(k) {
		t.Fatal("not contended after a decision that waited, or tryLock took it")
	}
	if d := waitedDecision(at(2 * time.Second)); !d.Allowed || d.Remaining != 1 || !contended() {
		t.Fatalf("third request: %+v, contended %v; want admitted with 1 remaining, contended", d, contended())
	}
	// Decisions that find the shard's lock free: the bucket stays
	// contended for calmDecisions of them (a decision that waited in
	// between does not start the count again), and the next makes it
	// uncontended.
	calmRun := func(n int, now time.Time) {
		t.Helper()
		for i := range n {
			if d := l.AllowAt("k", now); d.Allowed || !contended() {
				t.Fatalf("calm decision %d of %d: %+v, contended %v; want rejected, contended", i+1, n, d, contended())
			}
		}
	}
	if d := l.AllowAt("k", at(3*time.Second)); !d.Allowed || d.Remaining != 0 || !contended() {
		t.Fatalf("fourth request: %+v, contended %v; want admitted with 0 remaining, contended", d, contended())
	}
	calmRun(10, at(3*time.Second))
	if d := waitedDecision(at(4 * time.Second)); d.Allowed || !contended() {
		t.Fatalf("decision that waited: %+v, contended %v; want rejected, contended", d, contended())
	}
	calmRun(calmDecisions-11, at(4*time.Second))
	if d := l.AllowAt("k", at(4*time.Second)); d.Allowed || contended() {
		t.Fatalf("decision after %d calm ones: %+v, contended %v; want rejected, uncontended", calmDecisions, d, contended())
	}
	if _, _, w, ok := sh.find(k, true); !ok || w != k {
		t.Fatalf("after the contention: the lookup without the lock found k %v, word %#x; want found, word %#x", ok, w, k)
	}
	waitedDecision(at(5 * time.Second)) // rejected, and contended again
	if !contended() {
		t.Fatal("not contended after a rejected decision that waited")
	}
	if n := l.Sweep(at(30 * time.Second)); n != 0 {
		t.Fatalf("swept %d buckets inside the window, want 0", n)
	}
	if n := l.Sweep(at(2 * time.Minute)); n != 1 || l.Len() != 0 {
		t.Fatalf("swept %d contended buckets, %d left; want 1 and 0", n, l.Len())
	}
	if d := l.AllowAt("k", at(2*time.Minute)); !d.Allowed || d.Remaining != 3 || contended() {
		t.Fatalf("request after the sweep: %+v, contended %v; want admitted with 3 remaining, uncontended", d, contended())
	}
}

// TestContendedEntryHidesNoOtherKey: a contended index entry sends its
// key's decisions to the shard's lock without reading the record, but it
// may carry another key's tag. A key behind it in the probe run with the
// same tag is still found without the lock, and its sequential decisions
// leave it uncontended (a review found them made contended).
func TestContendedEntryHidesNoOtherKey(t *testing.T) {
	t.Parallel()
	l := mustLimiter(t, 100, time.Minute, WithMaxBuckets(100)) // one shard
	s := *l.t.(*shards[uint8])
	sh := &s[0]
	now := l.since(at(0))
	const home = 5 << 9
	hA := uint64(0xAB)<<56 | 1<<40 | home
	hB := uint64(0xAB)<<56 | 2<<40 | home // A's tag and home, after A
	for _, h := range []uint64{hA, hB} {
		s.allow(l, h, now)
	}
	sh.mu.Lock()
	sh.allowLocked(l, hA|keyBits, now, true, 0, bucket[uint8]{}, false)
	sh.mu.Unlock()
	if _, b, _, ok := sh.find(hA|keyBits, false); !ok || b.word0().Load()&uncontended != 0 {
		t.Fatal("A not contended")
	}
	if _, _, _, ok := sh.find(hA|keyBits, true); ok {
		t.Fatal("the lookup without the lock found contended A")
	}
	for i := range 3 {
		s.allow(l, hB, now+uint64(i+1)*uint64(time.Millisecond))
		_, b, w, ok := sh.find(hB|keyBits, true)
		if !ok || w != hB|keyBits || b.word0().Load() != hB|keyBits {
			t.Fatalf("after B's request %d: the lookup without the lock found B %v, word %#x; want found, uncontended and unlocked", i+1, ok, w)
		}
	}
}

// heapDelta returns the bytes that build leaves live on the heap.
func heapDelta(build func() any) float64 {
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	v := build()
	runtime.GC()
	runtime.ReadMemStats(&after)
	runtime.KeepAlive(v)
	return float64(after.HeapAlloc) - float64(before.HeapAlloc)
}

// TestMemoryPerBucket measures the heap cost of live buckets beyond what
// their keys cost in a plain map[string]int32.
func TestMemoryPerBucket(t *testing.T) {
	if testing.Short() {
		t.Skip("allocates 100,000 buckets")
	}
	if raceEnabled {
		// A measurement of bytes, with no goroutines to watch: .ci/run
		// runs the package without the race detector too, where it
		// takes a few seconds rather than 44 (a review of the suite's
		// margin under the 10-minute default timeout).
		t.Skip("measures memory; runs without -race")
	}
	// bucket is the record's size, which the bytes per bucket must not
	// exceed by more than the 8 KiB chunks' rounding; total bounds all the bytes per key where issue 15 sets a
	// goal (128 bytes at capacity 10 per minute).
	tests := []struct {
		name          string
		capacity      int64
		window        time.Duration
		bucket, total float64
	}{
		// With a ring of one-byte counters, capacities 9 to 127 per minute
		// took 112 bytes and 128 to 226 took 192 (two-byte counters); the
		// ring in unary takes 2 words up to a capacity of 34, 5 at 100, 8
		// at 226 (see unaryWords).
		{"capacity 8 per minute", 8, time.Minute, 48, 60},
		{"capacity 10 per minute", 10, time.Minute, 64, 76},
		{"capacity 30 per minute", 30, time.Minute, 64, 76},
		{"capacity 100 per minute", 100, time.Minute, 88, 100},
		{"capacity 200 per minute", 200, time.Minute, 128, 140},
		{"capacity 250 per minute", 250, time.Minute, 192, 208},
		// A ring of counters lies apart from its record, and the
		// groups' counts with it (see bucket); records above 128 bytes
		// were rounded up to whole 64-byte lines before, to 320, 384 and
		// 384 bytes.
		{"capacity 1000 per 110s", 1000, 110 * time.Second, 288, 312},
		{"capacity 2e9 per 24h", MaxCapacity, 24 * time.Hour, 336, 360},
		{"capacity 2e9 per 70s", MaxCapacity, 70 * time.Second, 376, 400},
	}
	const n = 100_000
	keys := make([]string, n)
	for i := range keys {
		keys[i] = fmt.Sprintf("203.0.113.%03d:%06d", i%256, i) // 17 bytes
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var l *Limiter
			total := heapDelta(func() any {
				l = mustLimiter(t, tt.capacity, tt.window)
				for _, k := range keys {
					l.AllowAt(k, base)
				}
				return l
			})
			if got := l.Len(); got != n {
				t.Fatalf("Len = %d, want %d", got, n)
			}
			// The key: a four-byte entry in an index at most 7/8 full.
			var indexBytes, shardCount float64
			switch tb := l.t.(type) {
			case *shards[uint8]:
				indexBytes, shardCount = indexSize(*tb), float64(len(*tb))
			case *shards[uint16]:
				indexBytes, shardCount = indexSize(*tb), float64(len(*tb))
			case *shards[uint32]:
				indexBytes, shardCount = indexSize(*tb), float64(len(*tb))
			}
			// Fixed: at most one partly used chunk per shard.
			fixed := shardCount * chunkBytes
			per := (total - indexBytes - fixed) / n
			t.Logf("%.0f bytes per bucket in all: %.0f for the key's index entry, %.0f for the bucket (beyond %.0f KiB of fixed chunk slack)",
				total/n, indexBytes/n, per, fixed/1024)
			if per > 1.05*tt.bucket {
				t.Errorf("%.0f bytes per bucket beyond its key, want <= %.0f", per, tt.bucket)
			}
			if total/n > tt.total {
				t.Errorf("%.0f bytes per key in all, want <= %.0f", total/n, tt.total)
			}
		})
	}
}

// TestRingApart checks that with a ring of counters, kept apart from the
// record, admissions in the same second as the key's last request count
// in the record's pend and leave the ring untouched, that pend never
// counts more than 65,535, and that the first decision that needs the
// ring adds pend to last's slot. (TestLayoutsSameDecisions checks that the
// decisions are those of a limiter that never uses pend.)
func TestRingApart(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		capacity int64
		window   time.Duration
		width    int
		// Admissions in one second after the first: the first group's
		// size, ceil(capacity/12), less one, beyond which an admission
		// starts a group (and update leaves it to updateAll), or more than
		// pend counts.
		same int
	}{
		{100, 10 * time.Second, 1, 8},
		{1000, time.Minute, 2, 83},
		{1 << 30, time.Hour, 4, 70_000}, // beyond pend's 65,535
	} {
		t.Run(fmt.Sprint(tt.capacity, "/", tt.window), func(t *testing.T) {
			t.Parallel()
			l := mustLimiter(t, tt.capacity, tt.window)
			if l.ring == 0 || l.uwords != 0 {
				t.Fatalf("ring %d, unary words %d: want a ring of counters", l.ring, l.uwords)
			}
			switch s := l.t.(type) {
			case *shards[uint8]:
				checkRingApart(t, l, s, tt.width, tt.same)
			case *shards[uint16]:
				checkRingApart(t, l, s, tt.width, tt.same)
			case *shards[uint32]:
				checkRingApart(t, l, s, tt.width, tt.same)
			}
		})
	}
}

func checkRingApart[T counter](t *testing.T, l *Limiter, s *shards[T], width, same int) {
	if w := (bucket[T]{}).width(); w != width || same > int(l.group)-1 {
		t.Fatalf("counters of %d bytes, groups of %d: want %d bytes, groups of more than %d", w, l.group, width, same)
	}
	// A second that starts with the first request.
	t0 := base.Truncate(time.Second).Add(-l.epoch.Sub(l.epoch.Truncate(time.Second)))
	if d := l.AllowAt("k", t0); !d.Allowed {
		t.Fatalf("first request: %+v", d)
	}
	h := l.hash("k")
	sh := &(*s)[h&l.shardMask]
	id, b, _, ok := sh.find(h|keyBits, false)
	if !ok {
		t.Fatal("no record for the key")
	}
	if _, ring := sh.words(id); len(ring) == 0 || unsafe.Pointer(&ring[0]) != b.r {
		t.Fatalf("the ring's part is %d words at %p, want the bucket's ring at %p", len(ring), unsafe.SliceData(ring), b.r)
	}
	slot := l.ringDiv.mod(l.slotDiv.div(uint32(l.since(t0) / uint64(time.Second))))
	ring := b.ring(l.ring)
	if ring[slot] != 1 {
		t.Fatalf("after the first admission, the slot counts %d, want 1", ring[slot])
	}
	before := slices.Clone(ring)
	maxPend := uint16(0)
	for i := range same {
		// Spread over the second, never reaching its end.
		at := t0.Add(time.Duration(i+1) * (time.Second / time.Duration(same+1)))
		if d := l.AllowAt("k", at); !d.Allowed {
			t.Fatalf("admission %d: %+v", i+2, d)
		}
		maxPend = max(maxPend, *b.pend())
		if want := uint64(i + 2); uint64(ring[slot])+uint64(*b.pend()) != want || uint64(*b.total()) != want {
			t.Fatalf("after admission %d: slot %d + pend %d, total %d; want both %d", i+2, ring[slot], *b.pend(), *b.total(), want)
		}
	}
	if same <= math.MaxUint16 {
		if !slices.Equal(ring, before) || int(*b.pend()) != same {
			t.Fatalf("after %d admissions in the first's second: pend %d, ring changed %v; want pend %[1]d and the ring unchanged", same, *b.pend(), !slices.Equal(ring, before))
		}
	} else if maxPend != math.MaxUint16 {
		t.Fatalf("pend reached %d, want %d", maxPend, math.MaxUint16)
	}
	// The next slot: pend goes to the first's.
	next := t0.Add(time.Duration(l.ssec) * time.Second)
	if d := l.AllowAt("k", next); !d.Allowed {
		t.Fatalf("admission in the next slot: %+v", d)
	}
	if *b.pend() != 0 || int(ring[slot]) != same+1 || ring[l.ringDiv.mod(l.slotDiv.div(uint32(l.since(next)/uint64(time.Second))))] != 1 {
		t.Fatalf("after a request in the next slot: pend %d, first slot %d, next slot %d; want 0, %d, 1",
			*b.pend(), ring[slot], ring[(slot+1)%l.ring], same+1)
	}
}

func indexSize[T counter](s shards[T]) float64 {
	n := 0
	for i := range s {
		n += s[i].ids.size() * int(unsafe.Sizeof(atomic.Uint32{}))
	}
	return float64(n)
}

func TestCeilSeconds(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		in   time.Duration
		want time.Duration
	}{
		{"negative", -time.Second, time.Second},
		{"zero", 0, time.Second},
		{"a nanosecond", 1, time.Second},
		{"exact", 3 * time.Second, 3 * time.Second},
		{"just over", 3*time.Second + 1, 4 * time.Second},
	}
	for _, tt := range tests {
		if got := ceilSeconds(tt.in); got != tt.want {
			t.Errorf("%s: ceilSeconds(%v) = %v, want %v", tt.name, tt.in, got, tt.want)
		}
	}
}

func TestDivider(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(1, 2))
	for _, d := range []uint32{1, 2, 3, 7, 10, 60, 61, 111, 1440, 1<<31 + 1, 1<<32 - 1} {
		v := newDivider(d)
		for _, x := range []uint32{0, 1, d - 1, d, d + 1, 1<<32 - 1, rng.Uint32(), rng.Uint32(), rng.Uint32()} {
			if got, want := v.div(x), x/d; got != want {
				t.Errorf("%d/%d = %d, want %d", x, d, got, want)
			}
			if got, want := v.mod(x), x%d; got != want {
				t.Errorf("%d%%%d = %d, want %d", x, d, got, want)
			}
		}
	}
}

// TestReclaimLosesNothing checks that reclaiming buckets never changes a
// decision: a limiter swept at random moments answers exactly as one never
// swept, on traffic with a shared clock that only moves forward.
func TestReclaimLosesNothing(t *testing.T) {
	t.Parallel()
	rapid.Check(t, func(rt *rapid.T) {
		capacity := rapid.Int64Range(1, 5).Draw(rt, "capacity")
		window := time.Duration(rapid.SampledFrom([]int{60, 90, 600}).Draw(rt, "window_s")) * time.Second
		swept := mustLimiter(rt, capacity, window, WithMaxBuckets(1000))
		kept := mustLimiter(rt, capacity, window, WithMaxBuckets(1000))
		now := base
		for range rapid.IntRange(1, 200).Draw(rt, "requests") {
			now = now.Add(time.Duration(rapid.Int64Range(0, int64(window)).Draw(rt, "step")))
			if rapid.Bool().Draw(rt, "sweep") {
				swept.Sweep(now)
			}
			key := fmt.Sprint(rapid.IntRange(0, 5).Draw(rt, "key"))
			if a, b := swept.AllowAt(key, now), kept.AllowAt(key, now); a != b {
				rt.Fatalf("%v key %s: swept %+v, never swept %+v", now.Sub(base), key, a, b)
			}
		}
	})
}

// TestIndexModel checks a shard's index (four-byte entries holding a tag,
// confirmed against the hash in the bucket) against a map.
func TestIndexModel(t *testing.T) {
	t.Parallel()
	rapid.Check(t, func(rt *rapid.T) {
		rec, _ := recordBytes(1, 0, 0)
		sh := &(*newShards[uint8](1, 1<<20, rec, 0))[0]
		model := map[uint64]int32{}
		// Few distinct home bits, so probe runs collide and wrap, and few
		// distinct tags, so equal tags with different hashes are common.
		genKey := rapid.Custom(func(t *rapid.T) uint64 {
			return rapid.Uint64Range(0, 40).Draw(t, "home")<<9 |
				rapid.Uint64Range(0, 3).Draw(t, "mid")<<40 |
				rapid.Uint64Range(0, 3).Draw(t, "tag")<<62 | keyBits
		})
		for range rapid.IntRange(1, 300).Draw(rt, "ops") {
			k := genKey.Draw(rt, "key")
			switch rapid.IntRange(0, 2).Draw(rt, "op") {
			case 0:
				if _, ok := model[k]; !ok {
					id := sh.alloc()
					sh.at(id).word0().Store(k)
					sh.ids.put(k, id, sh.hashOf)
					model[k] = id
				}
			case 1:
				for i := range sh.ids.size() {
					if id, ok := sh.ids.at(i); ok && sh.hashOf(id) == k {
						sh.ids.deleteAt(i, sh.hashOf)
						delete(model, k)
						break
					}
				}
			}
			for mk, mid := range model {
				if id, _, _, ok := sh.find(mk, false); !ok || id != mid {
					rt.Fatalf("find(%#x) = %d, %v; want %d", mk, id, ok, mid)
				}
			}
			_, want := model[k]
			if _, _, _, ok := sh.find(k, false); ok != want {
				rt.Fatalf("find(%#x) found %v", k, ok)
			}
			if sh.ids.n != len(model) {
				rt.Fatalf("n = %d, want %d", sh.ids.n, len(model))
			}
		}
	})
}

// TestLayoutsSameDecisions checks that the unary ring is only a smaller
// form of the ring of counters, and update's fast path only a shorter way
// to updateAll's decision: limiters with each, fed the same requests (many
// in the same second, times stepping back and jumping far, several keys,
// sweeps), decide the same as one with counters and no fast path, to the
// retry delay and the remaining count.
func TestLayoutsSameDecisions(t *testing.T) {
	t.Parallel()
	var unary, fast atomic.Int64
	rapid.Check(t, func(rt *rapid.T) {
		capacity := rapid.Int64Range(1, 260).Draw(rt, "capacity")
		// Windows of 65,536 s or more keep the newest group's sub in
		// units above 1 ns.
		window := time.Duration(rapid.SampledFrom([]int{10, 60, 70, 110, 190, 600, 610, 3600, 65600, 86400, 366 * 86400}).Draw(rt, "window_s")) * time.Second
		width := rapid.SampledFrom([]int{0, 2, 4}).Draw(rt, "width")
		// One shard each (under 4,096 buckets), so that a key reclaimed
		// and seen again starts at the same horizon in all.
		ref := newLimiterLayout(capacity, window, 1000, width, true)
		ref.fast = false
		ls := []*Limiter{
			newLimiterLayout(capacity, window, 1000, width, false),
			newLimiterLayout(capacity, window, 1000, width, true),
		}
		if ls[0].uwords != 0 {
			unary.Add(1)
		}
		if ls[1].uwords != 0 {
			rt.Fatalf("the limiter forced to counters has a unary ring")
		}
		if ls[1].fast {
			fast.Add(1)
		}
		now := base
		for range rapid.IntRange(1, 400).Draw(rt, "requests") {
			step := time.Duration(rapid.OneOf(
				rapid.Int64Range(0, int64(10*time.Millisecond)),
				rapid.Int64Range(0, int64(time.Second)),
				rapid.Just(int64(0)),
				rapid.Int64Range(-int64(5*time.Second), int64(window)),
				rapid.Int64Range(0, int64(3*window)),
			).Draw(rt, "step"))
			now = now.Add(step)
			if rapid.IntRange(0, 20).Draw(rt, "sweep") == 0 {
				want := ref.Sweep(now)
				for i, l := range ls {
					if got := l.Sweep(now); got != want {
						rt.Fatalf("%v: limiter %d swept %d, the reference %d", now.Sub(base), i, got, want)
					}
				}
			}
			key := fmt.Sprint(rapid.IntRange(0, 2).Draw(rt, "key"))
			at := now
			for range rapid.IntRange(1, int(capacity)).Draw(rt, "burst") {
				want := ref.AllowAt(key, at)
				for i, l := range ls {
					if got := l.AllowAt(key, at); got != want {
						rt.Fatalf("%v key %s: limiter %d (unary %v, fast %v) %+v, the reference %+v", at.Sub(base), key, i, l.uwords != 0, l.fast, got, want)
					}
				}
				at = at.Add(time.Duration(rapid.Int64Range(0, int64(time.Millisecond)).Draw(rt, "within")))
			}
		}
	})
	if unary.Load() == 0 || fast.Load() == 0 {
		t.Fatalf("%d runs used the unary ring and %d the fast path; both must be used", unary.Load(), fast.Load())
	}
}

// TestUnaryRingModel checks the unary ring's operations against a slice
// of slot counts.
func TestUnaryRingModel(t *testing.T) {
	t.Parallel()
	rapid.Check(t, func(rt *rapid.T) {
		capacity := rapid.Int64Range(1, 200).Draw(rt, "capacity")
		ring := uint32(rapid.IntRange(2, 70).Draw(rt, "ring"))
		u := make(unaryRing, unaryWords(capacity, ring))
		slots := make([]int64, ring) // oldest first
		total := int64(0)
		for range rapid.IntRange(1, 300).Draw(rt, "ops") {
			switch rapid.IntRange(0, 2).Draw(rt, "op") {
			case 0: // an admission in the newest slot, within the bounds
				if slots[ring-1] < capacity && total < 2*capacity {
					u.add(uint(total) + uint(ring) - 1)
					slots[ring-1]++
					total++
				}
			case 1: // k new slots
				k := rapid.IntRange(1, int(ring)-1).Draw(rt, "k")
				want := int64(0)
				for _, c := range slots[:k] {
					want += c
				}
				if got := int64(u.drop(k)); got != want {
					rt.Fatalf("drop(%d) = %d, want %d", k, got, want)
				}
				slots = append(slots[k:], make([]int64, k)...)
				total -= want
			case 2: // when need admissions from slot jmin on have left
				first := uint32(1000)
				jmin := first + uint32(rapid.IntRange(0, 1).Draw(rt, "skip"))
				counted := total
				if jmin > first {
					counted -= slots[0]
				}
				if counted == 0 {
					continue
				}
				need := rapid.Int64Range(1, counted).Draw(rt, "need")
				want, left := jmin, need
				for i := jmin - first; ; i++ {
					if left -= slots[i]; left <= 0 {
						want = first + i
						break
					}
				}
				if got := u.free(first, jmin, need, ring); got != want {
					rt.Fatalf("free(need %d) = slot %d, want %d (slots %v)", need, got-first, want-first, slots)
				}
			}
			for i, off := 0, 0; i < int(ring); i++ {
				if got := u.run(off); int64(got) != slots[i] {
					rt.Fatalf("slot %d counts %d, want %d (slots %v)", i, got, slots[i], slots)
				}
				off += int(slots[i]) + 1
			}
			for i := int(total) + int(ring) - 1; i < 64*len(u); i++ {
				if u[i/64]>>(i%64)&1 != 0 {
					rt.Fatalf("bit %d beyond the used ones is set", i)
				}
			}
		}
	})
}

// TestSelectBit checks selectBit against a scan of the bits.
func TestSelectBit(t *testing.T) {
	t.Parallel()
	rapid.Check(t, func(rt *rapid.T) {
		x := rapid.Uint64().Draw(rt, "x")
		var want []int
		for i := range 64 {
			if x>>i&1 != 0 {
				want = append(want, i)
			}
		}
		for k, p := range want {
			if got := selectBit(x, k); got != p {
				rt.Fatalf("selectBit(%#x, %d) = %d, want %d", x, k, got, p)
			}
		}
	})
}

// TestLongWindowSameInstant pins a bug found in review: with windows of
// 65,529 s or more the newest group's time was kept to units above 1 ns
// (up to 512 ns at 366 days), rounded so that it could lie after the key's
// latest time; a request at that latest time then read the groups as a
// window old and dropped them, admitting without limit (with the unary
// ring, an index out of range). It is now kept in ns at every window.
// Offsets of 0 to 1,023 ns from one start are tried, since the rounding
// depended on them.
func TestLongWindowSameInstant(t *testing.T) {
	t.Parallel()
	for _, window := range []time.Duration{65529 * time.Second, 65536 * time.Second, 24 * time.Hour, maxWindow} {
		for _, capacity := range []int64{1, 10, 100} {
			start := time.Now()
			for off := range time.Duration(1024) {
				l := mustLimiter(t, capacity, window)
				now := start.Add(off)
				admitted := int64(0)
				for range 3 * capacity {
					if l.AllowAt("k", now).Allowed {
						admitted++
					}
				}
				if admitted != capacity {
					t.Fatalf("window %v, capacity %d, offset %v: %d admitted at one instant", window, capacity, off, admitted)
				}
			}
		}
	}
}

// TestSubFits checks that the newest group's sub, at most a grid step,
// fits its 41 bits at every window a limiter accepts, and that the word
// holding it keeps head, n and times[0] apart.
func TestSubFits(t *testing.T) {
	t.Parallel()
	for _, w := range []time.Duration{time.Second, time.Minute, 65528 * time.Second, 65529 * time.Second, 24 * time.Hour, maxWindow} {
		if l := mustLimiter(t, 10, w); l.gridNs >= subAtLast {
			t.Errorf("window %v: grid step %d ns leaves no 41-bit sub for subAtLast", w, l.gridNs)
		}
	}
	size, _ := recordBytes(1, 0, 0)
	rec := make([]uint64, size/8)
	b := bucket[uint8]{p: unsafe.Pointer(&rec[0])}
	b.times()[0] = 0xBEEF
	for _, c := range []struct {
		sub  uint64
		h, n uint8
	}{{0, 0, 0}, {1<<41 - 1, 7, 8}, {1 << 40, 3, 1}, {1<<40 - 1, 0, 15}, {12345678901, 5, 2}} {
		b.setSub(c.sub)
		b.setHeadN(c.h, c.n)
		b.setSub(c.sub)
		if b.sub() != c.sub || b.head() != c.h || b.n() != c.n || b.times()[0] != 0xBEEF {
			t.Errorf("set %d, %d, %d: read %d, %d, %d, times[0] %#x", c.sub, c.h, c.n, b.sub(), b.head(), b.n(), b.times()[0])
		}
	}
}

// TestForgottenKeyInheritsOverflow pins what [Limiter] documents at its
// cap (found by a black-box check, which read "forgetting never changes a
// decision" as holding there too): a key forgotten by Sweep that gets a
// new bucket while the overflow bucket counts other keys' requests starts
// with that count, so it is refused where a limiter that kept its bucket
// admits it.
func TestForgottenKeyInheritsOverflow(t *testing.T) {
	t.Parallel()
	swept := mustLimiter(t, 1, time.Second, WithMaxBuckets(1))
	kept := mustLimiter(t, 1, time.Second, WithMaxBuckets(1))
	for _, l := range []*Limiter{swept, kept} {
		l.AllowAt("a", base)                      // a's own bucket
		l.AllowAt("b", base.Add(time.Nanosecond)) // at the cap: the overflow bucket
	}
	t1 := base.Add(time.Second)
	if n := swept.Sweep(t1); n != 1 {
		t.Fatalf("Sweep reclaimed %d buckets, want a's", n)
	}
	if d := kept.AllowAt("a", t1); !d.Allowed {
		t.Fatalf("a, its bucket kept: %+v; want admitted", d)
	}
	if d := swept.AllowAt("a", t1); d.Allowed || d.RetryAfter != time.Second {
		t.Fatalf("a, forgotten while b's request is in the overflow bucket: %+v; want refused for 1s", d)
	}
}

// TestAddGroupCollapses drives addGroup's safety net, which no traffic in
// the tests reaches: groups that count twice the capacity (their
// counters' bound) collapse into one group at the admission's time
// holding what the admission was decided on, itself included, whether or
// not the admission is at the latest one's instant.
func TestAddGroupCollapses(t *testing.T) {
	t.Parallel()
	for _, same := range []bool{false, true} {
		l := mustLimiter(t, 20, time.Minute) // a ring; one-byte counters
		for i := range 4 {
			l.AllowAt("k", at(time.Duration(i)*time.Second))
		}
		h := l.hash("k")
		sh := &(*l.t.(*shards[uint8]))[h&l.shardMask]
		_, b, _, ok := sh.find(h|keyBits, false)
		if !ok || b.n() < 2 {
			t.Fatalf("no record of several groups for k (%v)", ok)
		}
		*b.grouped() = 2 * 20
		tn := l.since(at(3 * time.Second))
		if !same {
			tn = l.since(at(10 * time.Second))
		}
		*b.last() = tn // as updateAll sets it before addGroup
		const counted = 5
		b.addGroup(l, tn, l.grid(tn), same, counted)
		q := l.grid(tn)
		if b.head() != 0 || b.n() != 1 || *b.cur(0) != counted+1 || *b.grouped() != counted+1 || b.newest(l, q) != tn {
			t.Fatalf("same %v: head %d, %d groups, newest counting %d of %d grouped, at %d; want 0, 1, %d of %d at %d",
				same, b.head(), b.n(), *b.cur(0), *b.grouped(), b.newest(l, q), counted+1, counted+1, tn)
		}
	}
}

// TestWithMaxBucketsMisuse pins a review's finding: WithMaxBuckets took
// n < 1 as 1 and n > 1<<27 as 1<<27, and with WithStore it was dropped, as
// the store keeps the buckets; each ran without what the caller asked for.
// Each is now an error of every constructor, naming WithMaxBuckets (and
// WithStore for the pair, in either order).
func TestWithMaxBucketsMisuse(t *testing.T) {
	t.Parallel()
	store := WithStore(&countingStore{}, FailOpen, 0)
	for _, tt := range []struct {
		name string
		opts []Option
		want string
	}{
		{"zero", []Option{WithMaxBuckets(0)}, "ratelimit: WithMaxBuckets: 0 is not from 1 to 134217728"},
		{"negative", []Option{WithMaxBuckets(-1)}, "ratelimit: WithMaxBuckets: -1 is not from 1 to 134217728"},
		{"above the bound", []Option{WithMaxBuckets(1<<27 + 1)}, "ratelimit: WithMaxBuckets: 134217729 is not from 1 to 134217728"},
		{"with a store", []Option{WithMaxBuckets(100), store}, "ratelimit: WithMaxBuckets: it caps the buckets kept in the process, but with WithStore"},
		{"store first", []Option{store, WithMaxBuckets(DefaultMaxBuckets)}, "drop WithMaxBuckets or WithStore"},
	} {
		if _, err := NewLimiter(1, time.Minute, tt.opts...); err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%s: NewLimiter = %v; want an error containing %q", tt.name, err, tt.want)
		}
		limitOpts := make([]LimitOption, len(tt.opts))
		policyOpts := make([]PolicyOption, len(tt.opts))
		for i, o := range tt.opts {
			limitOpts[i], policyOpts[i] = o, o
		}
		if _, err := NewLimit(keyConfig("req.host"), limitOpts...); err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%s: NewLimit = %v; want an error containing %q", tt.name, err, tt.want)
		}
		if _, err := NewPolicy([]byte(sameNamesPolicy), policyOpts...); err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%s: NewPolicy = %v; want an error containing %q", tt.name, err, tt.want)
		}
	}
	// The bounds themselves are accepted, and so is each option alone.
	for _, opt := range []Option{WithMaxBuckets(1), WithMaxBuckets(1 << 27), store} {
		if _, err := NewLimiter(1, time.Minute, opt); err != nil {
			t.Error(err)
		}
	}
}
