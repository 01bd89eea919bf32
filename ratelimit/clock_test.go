package ratelimit

import (
	"math"
	"os"
	"runtime"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"pgregory.net/rapid"
)

// tsc simulates a time-stamp counter: ticks at hz from off at ns 0.
type tsc struct {
	hz  float64
	off uint64
}

func (c tsc) at(ns uint64) uint64 { return c.off + uint64(float64(ns)*c.hz/1e9) }

// calibrated returns the anchor a counter c makes from readings at ns0
// and ns0+gap, failing t if it makes none.
func calibrated(t testing.TB, c tsc, ns0, gap uint64) *anchor {
	t.Helper()
	a := &anchor{tick: c.at(ns0), ns: ns0}
	n, ok := a.next(c.at(ns0+gap), ns0+gap)
	if !ok || n == a {
		t.Fatalf("no rate measured after %d ns (ok %v)", gap, ok)
	}
	return n
}

func TestAnchorMeasuresRate(t *testing.T) {
	c := tsc{hz: 2.6e9, off: 1 << 40}
	a := &anchor{tick: c.at(1000), ns: 1000}
	if n, ok := a.next(c.at(1000+minBaseline-1), 1000+minBaseline-1); !ok || n != a {
		t.Fatalf("below the baseline: %+v, %v; want the same anchor", n, ok)
	}
	if _, ok := a.at(c.at(2000)); ok {
		t.Fatal("an anchor without a rate converted a reading")
	}
	n := calibrated(t, c, 1000, minBaseline)
	if got, want := float64(n.mult)/(1<<32), 1e9/c.hz; math.Abs(got-want) > 1e-6 {
		t.Errorf("rate %v ns a tick, want %v", got, want)
	}
	for _, d := range []uint64{0, 1, 999, 400_000, spanNs - 1000} {
		got, ok := n.at(c.at(n.ns + d))
		if !ok {
			t.Fatalf("+%d ns: not converted", d)
		}
		if want := n.ns + d; max(got, want)-min(got, want) > 2 {
			t.Errorf("+%d ns: %d, want %d", d, got, want)
		}
	}
	for _, tick := range []uint64{n.tick + n.span, n.tick + n.span*1000, n.tick - 1, 0} {
		if v, ok := n.at(tick); ok {
			t.Errorf("tick %d, outside the span [%d, %d): converted to %d", tick, n.tick, n.tick+n.span, v)
		}
	}
}

func TestAnchorDistrustsTheCounter(t *testing.T) {
	c := tsc{hz: 3e9, off: 1 << 30}
	a := calibrated(t, c, 5000, 2*minBaseline)
	ns := a.ns + spanNs + 1000
	for _, tc := range []struct {
		name string
		tick uint64
		ns   uint64
		ok   bool
	}{
		{"on time", c.at(ns), ns, true},
		{"within the skew", c.at(ns) + maxSkew*3*9/10, ns, true},
		{"ahead past the skew", c.at(ns) + maxSkew*3*11/10, ns, false},
		{"behind past the skew", c.at(ns) - maxSkew*3*11/10, ns, false},
		{"behind past the skew, two spans on", c.at(ns+2*spanNs) - maxSkew*3*11/10, ns + 2*spanNs, true},
		{"counter back", a.tick - maxBracket - 1, ns, false},
		{"counter back, just", a.tick - maxBracket, ns, true},
		{"clock back", c.at(ns), a.ns - 1, false},
		{"clock back, with the counter", a.tick + 10, a.ns - 1, true},
		{"stopped", a.tick + 1, a.ns + 10*spanNs, false},
	} {
		n, ok := a.next(tc.tick, tc.ns)
		if ok != tc.ok || (ok && n == nil) {
			t.Errorf("%s: next = %v, %v; want ok %v", tc.name, n, ok, tc.ok)
		}
	}
	// Rates, measured from an anchor without one.
	u := &anchor{tick: 1 << 40, ns: 1 << 30}
	for _, tc := range []struct {
		name string
		dt   uint64 // ticks in minBaseline
		ok   bool
	}{
		{"70 MHz", minBaseline * 7 / 100, true},
		{"60 MHz", minBaseline * 6 / 100, false},
		{"15 GHz", minBaseline * 15, true},
		{"17 GHz", minBaseline * 17, false},
		{"one tick", 1, false},
	} {
		n, ok := u.next(u.tick+tc.dt, u.ns+minBaseline)
		if ok != tc.ok || (ok && (n == nil || n.mult == 0)) {
			t.Errorf("%s: next = %+v, %v; want ok %v", tc.name, n, ok, tc.ok)
		}
	}
}

// tickerAt models tickClock.now for tests: the counter c read at ns, and
// if need be the clock read at ns+read and the counter again at ns+end.
func tickerAt(k *tickClock, c tsc, ns, read, end uint64) uint64 {
	a := k.cur.Load()
	if a == nil {
		return ns + read
	}
	t0 := c.at(ns)
	if v, ok := a.at(t0); ok {
		return v
	}
	return k.slow(a, t0, ns+read, c.at(ns+end))
}

func TestTickClockSlow(t *testing.T) {
	c := tsc{hz: 2e9, off: 7}
	var k tickClock
	a := calibrated(t, c, 1000, minBaseline)
	k.cur.Store(a)
	ns := a.ns + spanNs + 10
	// A bracket too wide: the clock's time, no anchor.
	if got := k.slow(a, c.at(ns), ns+3000, c.at(ns+3000)); got != ns+3000 || k.cur.Load() != a {
		t.Fatalf("wide bracket: %d and anchor %p, want %d and %p", got, k.cur.Load(), ns+3000, a)
	}
	// Another call replaced a first: its anchor stays.
	b := &anchor{tick: c.at(ns), ns: ns, mult: a.mult, span: a.span}
	k.cur.Store(b)
	if got := k.slow(a, c.at(ns+5), ns+5, c.at(ns+5)); got != ns+5 || k.cur.Load() != b {
		t.Fatalf("replaced: %d and anchor %+v, want %d and %+v", got, k.cur.Load(), ns+5, b)
	}
	// A new anchor.
	if got := k.slow(b, c.at(ns+spanNs+1), ns+spanNs+1, c.at(ns+spanNs+1)); got != ns+spanNs+1 || k.cur.Load() == b {
		t.Fatalf("new anchor: %d and anchor %+v", got, k.cur.Load())
	}
	// A counter that disagrees turns the counter off for good.
	d := k.cur.Load()
	if got := k.slow(d, d.tick+d.span, d.ns+spanNs/2, d.tick+d.span); got != d.ns+spanNs/2 || k.cur.Load() != nil {
		t.Fatalf("disagreeing counter: %d and anchor %+v, want the clock and none", got, k.cur.Load())
	}
	if got := tickerAt(&k, c, ns+10*spanNs, 0, 0); got != ns+10*spanNs {
		t.Fatalf("off: %d, want the clock's %d", got, ns+10*spanNs)
	}
}

// TestTickClockTracksTheClock: for any counter rate the kernel would
// keep its clock by and any pattern of calls, with the clock read
// anywhere between two counter readings (up to a little more than
// maxBracket ticks apart), the converted time stays within the bound
// clock.go states of the true time, and the counter stays on.
func TestTickClockTracksTheClock(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		c := tsc{hz: rapid.Float64Range(0.5e9, 5e9).Draw(t, "hz"), off: rapid.Uint64Range(0, 1<<50).Draw(t, "off")}
		var k tickClock
		ns := rapid.Uint64Range(0, 1<<40).Draw(t, "start")
		k.cur.Store(&anchor{tick: c.at(ns), ns: ns})
		// bracket is maxBracket ticks in ns; an anchor is off by at most
		// half of it, the rate by twice that over minBaseline.
		bracket := uint64(float64(maxBracket) * 1e9 / c.hz)
		bound := bracket/2 + bracket*spanNs/minBaseline + 2
		anchors := 0
		for i := range rapid.IntRange(1, 3000).Draw(t, "calls") {
			ns += rapid.Uint64Range(0, 3*spanNs).Draw(t, "gap")
			end := rapid.Uint64Range(0, bracket*5/4).Draw(t, "end")
			read := rapid.Uint64Range(0, end).Draw(t, "read")
			before := k.cur.Load()
			got := tickerAt(&k, c, ns, read, end)
			if a := k.cur.Load(); a == nil {
				t.Fatalf("call %d: the counter was turned off", i)
			} else if a != before {
				anchors++
			}
			// A call that read the clock returns its time, up to end late.
			if max(got, ns)-min(got, ns) > bound+end {
				t.Fatalf("call %d at %d: %d, off by more than %d", i, ns, got, bound+end)
			}
		}
		t.Logf("%d anchors", anchors)
	})
}

// TestTickClockAgrees reads the process's clock between two reads of the
// monotonic clock: wherever the counter is used, the time it gives lies
// between them, give or take the bound clock.go states (however slow the
// machine: a pause between the reads only widens the interval).
func TestTickClockAgrees(t *testing.T) {
	var k tickClock
	usable := ticksUsable()
	k.start(usable)
	if runtime.GOOS == "linux" && runtime.GOARCH == "amd64" {
		b, err := os.ReadFile("/sys/devices/system/clocksource/clocksource0/current_clocksource")
		if want := err == nil && strings.TrimSpace(string(b)) == "tsc"; usable != want {
			t.Fatalf("ticksUsable() = %v with clocksource %q", usable, b)
		}
	}
	if !usable {
		if _, ok := k.now(); ok {
			t.Fatal("the counter is not usable and now read it")
		}
		return
	}
	if k.cur.Load() == nil {
		t.Fatal("the counter is usable and not used")
	}
	const slack = 20 * time.Microsecond
	var behind, ahead int64
	for range 1_000_000 {
		n1, _ := monotonic()
		got, ok := k.now()
		n2, _ := monotonic()
		if !ok {
			t.Fatal("the counter was turned off")
		}
		behind = max(behind, int64(n1)-int64(got))
		ahead = max(ahead, int64(got)-int64(n2))
	}
	t.Logf("at most %d ns behind the clock and %d ns ahead", behind, ahead)
	if behind > int64(slack) || ahead > int64(slack) {
		t.Errorf("%d ns behind the clock and %d ns ahead, past %v", behind, ahead, slack)
	}
}

// TestAllowReadsTheClock: the time Allow uses is the monotonic clock's
// since the limiter's epoch, as AllowAt(time.Now()) would use.
func TestAllowReadsTheClock(t *testing.T) {
	l := mustLimiter(t, 1, time.Hour)
	for range 100_000 {
		n1 := time.Since(l.epoch)
		got := l.elapsed()
		n2 := time.Since(l.epoch)
		if got < n1-20*time.Microsecond || got > n2+20*time.Microsecond {
			t.Fatalf("Allow's time %v, the clock's %v to %v", got, n1, n2)
		}
	}
	d := l.Allow("k")
	if !d.Allowed {
		t.Fatalf("first request: %+v", d)
	}
	if d := l.AllowAt("k", time.Now().Add(time.Hour+time.Second)); !d.Allowed {
		t.Fatalf("a window and a second after Allow: %+v", d)
	}
}

// TestTickClockInBubble: in a synctest bubble the monotonic clock cannot
// be read, and a call that must read it says so (Allow then reads the
// bubble's clock), leaving the anchor as it was.
func TestTickClockInBubble(t *testing.T) {
	c := tsc{hz: 2e9}
	var k tickClock
	a := calibrated(t, c, 1000, minBaseline)
	k.cur.Store(a)
	synctest.Test(t, func(t *testing.T) {
		if _, ok := monotonic(); ok {
			t.Fatal("monotonic read in a bubble")
		}
		// The process's counter is far past a's span.
		if _, ok := k.now(); ok {
			t.Fatal("now read the clock in a bubble")
		}
		if k.cur.Load() != a {
			t.Fatal("the anchor changed")
		}
	})
	if _, ok := monotonic(); !ok {
		t.Fatal("monotonic not read outside a bubble")
	}
}

// BenchmarkClock: what a read of Allow's clock costs (the process's
// tickClock, the time-stamp counter where it is used, or nothing and
// then time.Since where not), against time.Since and time.Now.
func BenchmarkClock(b *testing.B) {
	startTicker()
	var sink uint64
	b.Run("ticker", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			ns, ok := ticker.now()
			if !ok {
				ns = uint64(time.Since(clockBase))
			}
			sink += ns
		}
	})
	b.Run("time.Since", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			sink += uint64(time.Since(clockBase))
		}
	})
	b.Run("time.Now", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			sink += uint64(time.Now().UnixNano())
		}
	})
	b.Logf("counter used: %v (%d)", ticker.cur.Load() != nil, sink%2)
}
