package ratelimit

import (
	"bufio"
	"math/bits"
	"os"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// Limiter.Allow reads the time from the processor's time-stamp counter
// where the operating system keeps its own clock by it (Linux on amd64
// with the "tsc" clocksource and a counter of constant rate that does not
// stop; see clock_amd64.go), and from the monotonic clock elsewhere.
//
// Why: the monotonic clock's read (time.Since, a vDSO call on a stack of
// its own) was most of a decision's cost. On a 2-vCPU AMD EPYC VM
// (2026-11-29 12:35), BenchmarkClock gave 9.56-9.62 ns a read for
// tickClock, 25.6-26.3 for time.Since and 47.8-48.0 for time.Now (3
// runs); on ratelimit/bench's SingleKey a decision took 43.5-46.4 ns with
// time.Since and 28.8-30.1 with the counter (6 alternating runs of a
// prototype).
//
// How: an anchor pairs a reading of the counter with one of the monotonic
// clock and the counter's rate, measured between two anchors at least
// minBaseline apart. A reading up to spanNs past the anchor is converted
// by the rate (a multiplication and a shift); a later one, or one before
// the anchor, reads the monotonic clock and the counter again and, if the
// two counter readings bracket the clock's within maxBracket ticks (no
// interrupt or preemption between them), makes the next anchor. So under
// steady calls the clock is read about once a millisecond, and an anchor
// (40 bytes) is allocated as often; a call more than a millisecond after
// the last reads the clock, as time.Since does, and the counter twice.
//
// Accuracy: a converted time differs from the monotonic clock's by the
// anchor's bracket (half of maxBracket ticks, 0.8 µs at 2.6 GHz) plus the
// rate's error over at most spanNs (each anchor's bracket over a baseline
// of at least minBaseline: 0.32%, 3.2 µs); measured, it stayed within 0.72
// µs of the clock read just before and after it (TestTickClockAgrees's
// runs on 2026-11-29: 52 to 716 ns).
// While the kernel changes its clock's rate against the counter's (NTP
// slewing, up to 8.3% with chrony's default maxslewrate), add the change
// of rate times spanNs, for up to two anchors (the first after the change
// measures a rate that blends the old and the new): 83 µs for a change of
// 8.3%, 166 µs for such a slew reversing. Converted times may run that
// much backwards across anchors; the limiter counts a key's time that is
// earlier than one it saw as the later one.
//
// Trust: a converted time lies between the anchor's clock reading, which
// is in the past, and spanNs after it, whatever the counter does. A new
// anchor made less than two spans after the last is checked against the
// last's prediction: a difference over maxSkew (the clock's rate changed,
// or the counter's) starts the rate's measurement over, and maxFails such
// anchors in a row turn the counter off for the process (Allow reads the
// monotonic clock from then on), as do a counter or a clock that went
// backwards, and a rate outside 500 MHz to 16 GHz. Every recheckEvery
// anchors the clocksource is read again, in a goroutine of its own:
// should the kernel have stopped trusting the counter and moved to
// another clock, the counter is turned off too (a failed read changes
// nothing). A counter that stops stops the kernel's clock as well while
// it is the clocksource, and the kernel takes a counter that stops in
// sleep states only if the processor says it does not (nonstop_tsc).
//
// Tests: in a test binary, Limiter.Allow reads time.Since unless
// internal/counterclock says otherwise (see Limiter.chooseClock).

// clockBase is the origin of the times tickClock returns.
var clockBase = time.Now()

// monotonic returns the monotonic clock's time since clockBase, in ns,
// or false in a testing/synctest bubble, where time.Now is the bubble's
// clock and has no monotonic reading.
func monotonic() (uint64, bool) {
	now := time.Now()
	if !hasMonotonic(now) {
		return 0, false
	}
	return uint64(now.Sub(clockBase)), true
}

// hasMonotonic reports whether t has a monotonic clock reading, as
// time.Now's have outside synctest bubbles (Round(0) strips it).
func hasMonotonic(t time.Time) bool { return t != t.Round(0) }

const (
	// maxBracket is the most counter ticks between the two readings
	// around a monotonic clock read for them to make an anchor.
	maxBracket = 1 << 12
	// minBaseline is the least time between two anchors to measure the
	// counter's rate between them.
	minBaseline = 500 * uint64(time.Microsecond)
	// spanNs is how far past its anchor a time is converted.
	spanNs = uint64(time.Millisecond)
	// maxSkew is the most a new anchor may differ from the last one's
	// prediction before the rate is measured over.
	maxSkew = 50 * uint64(time.Microsecond)
	// maxFails is the number of anchors in a row off their predictions
	// by more than maxSkew that turn the counter off.
	maxFails = 4
	// recheckEvery is how many anchors are made between reads of the
	// clocksource (about a second of steady calls).
	recheckEvery = 1024
)

// An anchor converts counter readings to times since clockBase. Anchors
// are immutable once published.
type anchor struct {
	tick  uint64 // the counter's reading when the clock read ns
	ns    uint64 // the monotonic clock, since clockBase
	mult  uint64 // ns per tick, 32.32 fixed point; 0 while the rate is unknown
	span  uint64 // ticks past tick that at converts: spanNs; 0 while the rate is unknown
	seq   uint32 // anchors made before this one
	fails uint8  // anchors in a row, up to this one, off their predictions
}

// at converts counter reading t, if it lies within the anchor's span.
func (a *anchor) at(t uint64) (uint64, bool) {
	if d := t - a.tick; d < a.span {
		return a.ns + d*a.mult>>32, true
	}
	return 0, false
}

// verdict is what next makes of a reading.
type verdict uint8

const (
	keep    verdict = iota // the anchor stays
	replace                // a new anchor replaces it
	turnOff                // the counter cannot be trusted
)

// next returns what follows a given a reading of the counter and of the
// clock taken together: a itself while they are too close to a to
// measure the rate, a new anchor, or turnOff.
func (a *anchor) next(tick, ns uint64) (*anchor, verdict) {
	if tick <= a.tick || ns <= a.ns {
		if max(tick, a.tick)-min(tick, a.tick) <= maxBracket {
			// Readings made as a was published (a counter read, on
			// another processor or ahead of loading a, may come out a
			// little earlier): nothing to measure.
			return a, keep
		}
		return nil, turnOff // the counter or the clock went backwards
	}
	dt, dns := tick-a.tick, ns-a.ns
	// fails counts checked anchors in a row off their predictions: one
	// on its prediction ends the row, and so does one made too long after
	// a to be checked (anchors a millisecond apart, under steady calls,
	// are all checked).
	fails := a.fails
	switch p := a.ns + dt*a.mult>>32; {
	case a.span == 0: // no rate to predict with
	case dt >= 2*a.span, max(p, ns)-min(p, ns) <= maxSkew:
		fails = 0
	case fails+1 >= maxFails:
		return nil, turnOff
	default:
		// Measure the rate over, from here.
		return &anchor{tick: tick, ns: ns, seq: a.seq + 1, fails: fails + 1}, replace
	}
	if dns < minBaseline {
		return a, keep
	}
	// mult = dns<<32 / dt, which fits when dt > dns>>32.
	hi, lo := bits.Mul64(dns, 1<<32)
	if hi >= dt {
		return nil, turnOff
	}
	mult, _ := bits.Div64(hi, lo, dt)
	if mult < 1<<28 || mult > 1<<33 { // 16 GHz to 500 MHz
		return nil, turnOff
	}
	return &anchor{tick: tick, ns: ns, mult: mult, span: spanNs << 32 / mult, seq: a.seq + 1, fails: fails}, replace
}

// A tickClock is the clock Limiter.Allow reads: the counter converted by
// the current anchor, or the monotonic clock when cur is nil.
type tickClock struct {
	cur atomic.Pointer[anchor]
	// recheck reports whether the counter can still be used, called
	// every recheckEvery anchors (in a goroutine of its own if async);
	// nil for never.
	recheck  func() bool
	async    bool
	checking atomic.Bool // a recheck is running
}

// stillUsable is a recheck's verdict on the clocksource file's contents
// (or the error reading it): whether it still names the counter. A failed
// read (a file descriptor limit reached for a moment) keeps the counter.
func stillUsable(clocksource []byte, err error) bool {
	return err != nil || strings.TrimSpace(string(clocksource)) == "tsc"
}

// ticker is the process's tickClock. Its rechecks read a file (about 23
// µs), so they run beside the call that asked for them, not in it.
var ticker = tickClock{recheck: ticksStillUsable, async: true}

// startTicker starts ticker, the first time it is called, if the counter
// is usable, and reports whether it started. It is called outside
// synctest bubbles only.
var startTicker = sync.OnceValue(func() bool {
	if ticksUsable() {
		ticker.start()
	}
	return ticker.cur.Load() != nil
})

// start turns the counter on, with a first anchor whose rate is not yet
// known, unless 100 tries find no close bracket or the call is in a
// synctest bubble.
func (c *tickClock) start() {
	for range 100 {
		t0 := ticks()
		ns, ok := monotonic()
		t1 := ticks()
		if !ok {
			return
		}
		if t1-t0 <= maxBracket {
			c.cur.Store(&anchor{tick: t0 + (t1-t0)/2, ns: ns})
			return
		}
	}
}

// now returns the time since clockBase in ns, or false if the counter is
// off or the call is in a synctest bubble and had to read the clock.
func (c *tickClock) now() (uint64, bool) {
	if a := c.cur.Load(); a != nil {
		t := ticks()
		if ns, ok := a.at(t); ok {
			return ns, true
		}
		return c.read(a, t)
	}
	return 0, false
}

// read is now for a counter reading t outside a's span: it reads the
// clock and the counter again, for the time and the next anchor.
func (c *tickClock) read(a *anchor, t uint64) (uint64, bool) {
	ns, ok := monotonic()
	if !ok {
		return 0, false
	}
	return c.slow(a, t, ns, ticks()), true
}

// slow returns ns, the monotonic clock read between counter readings t0
// and t1 after now loaded a and found t0 outside its span, and makes the
// next anchor from them if they bracket ns closely.
func (c *tickClock) slow(a *anchor, t0, ns, t1 uint64) uint64 {
	if t1-t0 > maxBracket {
		return ns
	}
	n, v := a.next(t0+(t1-t0)/2, ns)
	switch v {
	case turnOff:
		c.cur.Store(nil) // for good: nothing makes cur non-nil again
	case replace:
		// Fails if another call replaced a first; its anchor is as good.
		if c.cur.CompareAndSwap(a, n) && n.seq%recheckEvery == 0 && c.recheck != nil &&
			c.checking.CompareAndSwap(false, true) {
			if c.async {
				go c.runRecheck()
			} else {
				c.runRecheck()
			}
		}
	}
	return ns
}

// runRecheck turns the counter off if recheck says it can no longer be
// used.
func (c *tickClock) runRecheck() {
	defer c.checking.Store(false)
	if !c.recheck() {
		c.cur.Store(nil)
	}
}

// cpuHasFlags reports whether the first processor in /proc/cpuinfo (on
// Linux) lists every one of flags.
func cpuHasFlags(flags ...string) bool {
	f, err := os.Open("/proc/cpuinfo")
	if err != nil {
		return false
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		name, value, ok := strings.Cut(sc.Text(), ":")
		if !ok || strings.TrimSpace(name) != "flags" {
			continue
		}
		have := strings.Fields(value)
		for _, fl := range flags {
			if !slices.Contains(have, fl) {
				return false
			}
		}
		return true
	}
	return false
}
