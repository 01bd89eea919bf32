package ratelimit

import (
	"math"
	"os"
	"runtime"
	"sort"
	"strings"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"pgregory.net/rapid"

	"github.com/acctapi/acctapi/internal/counterclock"
)

// counterModel is a simulated time-stamp counter: its reading when the
// monotonic clock reads ns.
type counterModel interface{ at(ns uint64) uint64 }

// tsc is a counter ticking at hz, reading off at ns 0.
type tsc struct {
	hz  float64
	off uint64
}

func (c tsc) at(ns uint64) uint64 { return c.off + uint64(float64(ns)*c.hz/1e9) }

// slewed is a counter whose rate against the clock changes (as when the
// kernel slews its clock): from segs[i].ns on it ticks at segs[i].hz.
type slewed struct {
	segs []segment
	last uint64 // the latest ns read
}

type segment struct {
	ns, tick uint64
	hz       float64
}

func (s *slewed) at(ns uint64) uint64 {
	s.last = max(s.last, ns)
	i := sort.Search(len(s.segs), func(i int) bool { return s.segs[i].ns > ns }) - 1
	g := s.segs[max(i, 0)]
	return g.tick + uint64(float64(ns-g.ns)*g.hz/1e9)
}

// change makes the counter tick at hz from ns on, or from the latest
// reading if that is later (readings taken stay as they were).
func (s *slewed) change(ns uint64, hz float64) {
	ns = max(ns, s.last)
	s.segs = append(s.segs, segment{ns: ns, tick: s.at(ns), hz: hz})
}

// calibrated returns the anchor a counter c makes from readings at ns0
// and ns0+gap, failing t if it makes none.
func calibrated(t testing.TB, c counterModel, ns0, gap uint64) *anchor {
	t.Helper()
	a := &anchor{tick: c.at(ns0), ns: ns0}
	n, v := a.next(c.at(ns0+gap), ns0+gap)
	if v != replace || n.mult == 0 {
		t.Fatalf("no rate measured after %d ns (%+v, verdict %d)", gap, n, v)
	}
	return n
}

func TestAnchorMeasuresRate(t *testing.T) {
	c := tsc{hz: 2.6e9, off: 1 << 40}
	a := &anchor{tick: c.at(1000), ns: 1000}
	if n, v := a.next(c.at(1000+minBaseline-1), 1000+minBaseline-1); v != keep || n != a {
		t.Fatalf("below the baseline: %+v, %v; want the same anchor", n, v)
	}
	if _, ok := a.at(c.at(2000)); ok {
		t.Fatal("an anchor without a rate converted a reading")
	}
	n := calibrated(t, c, 1000, minBaseline)
	if got, want := float64(n.mult)/(1<<32), 1e9/c.hz; math.Abs(got-want) > 1e-6 {
		t.Errorf("rate %v ns a tick, want %v", got, want)
	}
	if n.seq != 1 || n.fails != 0 {
		t.Errorf("seq %d, fails %d; want 1 and 0", n.seq, n.fails)
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
		want verdict
		rate bool // the new anchor has a rate
	}{
		{"on time", c.at(ns), ns, replace, true},
		// A 2% slew over two spans and the bracket's error (at 2.6 GHz)
		// come to about 47 µs: such an anchor keeps the rate.
		{"45 µs ahead", c.at(ns) + 45_000*3, ns, replace, true},
		{"60 µs ahead", c.at(ns) + 60_000*3, ns, replace, false},
		{"within the skew", c.at(ns) + maxSkew*3*9/10, ns, replace, true},
		{"ahead past the skew", c.at(ns) + maxSkew*3*11/10, ns, replace, false},
		{"behind past the skew", c.at(ns) - maxSkew*3*11/10, ns, replace, false},
		{"behind past the skew, two spans on", c.at(ns+2*spanNs) - maxSkew*3*11/10, ns + 2*spanNs, replace, true},
		{"stopped", a.tick + 1, a.ns + 10*spanNs, replace, false},
		{"counter back", a.tick - maxBracket - 1, ns, turnOff, false},
		{"counter back, just", a.tick - maxBracket, ns, keep, true},
		{"clock back", c.at(ns), a.ns - 1, turnOff, false},
		{"clock back, with the counter", a.tick + 10, a.ns - 1, keep, true},
	} {
		n, v := a.next(tc.tick, tc.ns)
		if v != tc.want || (v != turnOff && (n == nil || (n.mult != 0) != tc.rate)) {
			t.Errorf("%s: next = %+v, verdict %d; want verdict %d, a rate %v", tc.name, n, v, tc.want, tc.rate)
		}
	}

	// Anchors off their predictions: maxFails in a row turn the counter
	// off; one on its prediction in between starts the count over.
	for _, onTimeAfter := range []int{0, maxFails - 1} {
		c := c
		b, fails := a, 0
		for i := 1; ; i++ {
			ns := b.ns + spanNs
			if i == onTimeAfter+1 && onTimeAfter > 0 {
				var v verdict
				if b, v = b.next(c.at(ns), ns); v != replace || b.fails != 0 || b.mult == 0 {
					t.Fatalf("on time after %d fails: %+v, verdict %d", fails, b, v)
				}
				fails = 0
				continue
			}
			n, v := b.next(c.at(ns)+maxSkew*3*2, ns) // 2 maxSkew ahead
			if fails++; fails == maxFails {
				if v != turnOff {
					t.Fatalf("%d anchors in a row off their predictions: verdict %d, want turnOff", fails, v)
				}
				want := maxFails
				if onTimeAfter > 0 {
					want += onTimeAfter + 1
				}
				if i != want {
					t.Fatalf("turned off at anchor %d, want %d", i, want)
				}
				break
			}
			if v != replace || n.fails != uint8(fails) || n.mult != 0 {
				t.Fatalf("anchor %d off its prediction: %+v, verdict %d", i, n, v)
			}
			// The rate is measured over from n, the counter reading as
			// it did there; the fails carry over.
			c.off += maxSkew * 3 * 2
			ns = n.ns + minBaseline
			if b, v = n.next(c.at(ns), ns); v != replace || b.fails != uint8(fails) || b.mult == 0 {
				t.Fatalf("measured again after %d fails: %+v, verdict %d", fails, b, v)
			}
		}
	}

	// An anchor made too long after the last to be checked ends a row of
	// anchors off their predictions.
	row := *a
	row.fails = maxFails - 1
	if n, v := row.next(c.at(row.ns+3*spanNs), row.ns+3*spanNs); v != replace || n.fails != 0 || n.mult == 0 {
		t.Errorf("unchecked anchor after %d fails: %+v, verdict %d", row.fails, n, v)
	}

	// Rates, measured from an anchor without one.
	u := &anchor{tick: 1 << 40, ns: 1 << 30}
	for _, tc := range []struct {
		name string
		dt   uint64 // ticks in minBaseline
		ok   bool
	}{
		{"600 MHz", minBaseline * 6 / 10, true},
		{"400 MHz", minBaseline * 4 / 10, false},
		{"15 GHz", minBaseline * 15, true},
		{"17 GHz", minBaseline * 17, false},
		{"one tick", 1, false},
	} {
		n, v := u.next(u.tick+tc.dt, u.ns+minBaseline)
		if ok := v == replace && n.mult != 0; ok != tc.ok {
			t.Errorf("%s: next = %+v, verdict %d; want a rate %v", tc.name, n, v, tc.ok)
		}
	}
}

// tickerAt models tickClock.now for tests: the counter c read at ns, and
// if need be the clock read at ns+read and the counter again at ns+end.
// It reports whether it read the clock.
func tickerAt(k *tickClock, c counterModel, ns, read, end uint64) (uint64, bool) {
	a := k.cur.Load()
	if a == nil {
		return ns + read, true
	}
	t0 := c.at(ns)
	if v, ok := a.at(t0); ok {
		return v, false
	}
	return k.slow(a, t0, ns+read, c.at(ns+end)), true
}

func TestTickClockSlow(t *testing.T) {
	c := tsc{hz: 2e9, off: 7}
	k := tickClock{}
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
	// A counter that went backwards turns the counter off for good.
	d := k.cur.Load()
	if got := k.slow(d, d.tick-2*maxBracket, d.ns+spanNs, d.tick-2*maxBracket); got != d.ns+spanNs || k.cur.Load() != nil {
		t.Fatalf("counter back: %d and anchor %+v, want the clock and none", got, k.cur.Load())
	}
	if got, _ := tickerAt(&k, c, ns+10*spanNs, 0, 0); got != ns+10*spanNs {
		t.Fatalf("off: %d, want the clock's %d", got, ns+10*spanNs)
	}
}

func TestTickClockRechecks(t *testing.T) {
	for _, async := range []bool{false, true} {
		c := tsc{hz: 2e9}
		var checks atomic.Int32
		var usable atomic.Bool
		usable.Store(true)
		k := tickClock{recheck: func() bool { checks.Add(1); return usable.Load() }, async: async}
		a := calibrated(t, c, 1000, minBaseline)
		k.cur.Store(a)
		ns := a.ns
		for i := range 3*recheckEvery + 1 {
			if i == 2*recheckEvery+recheckEvery/2 {
				usable.Store(false)
			}
			ns += spanNs + 1
			tickerAt(&k, c, ns, 0, 0)
			// A recheck in the background ends before the next anchor
			// would start another (each clears checking when done).
			for k.checking.Load() {
				runtime.Gosched()
			}
			if k.cur.Load() == nil {
				break
			}
		}
		if want := int32(3); checks.Load() != want || k.cur.Load() != nil {
			t.Fatalf("async %v: %d checks, counter on %v; want %d and off", async, checks.Load(), k.cur.Load() != nil, want)
		}
	}
}

func TestStillUsable(t *testing.T) {
	for _, tc := range []struct {
		file string
		err  error
		want bool
	}{
		{"tsc\n", nil, true},
		{"hpet\n", nil, false},
		{"kvm-clock\n", nil, false},
		{"", nil, false},
		{"", os.ErrPermission, true}, // cannot tell: keep the counter
	} {
		if got := stillUsable([]byte(tc.file), tc.err); got != tc.want {
			t.Errorf("stillUsable(%q, %v) = %v, want %v", tc.file, tc.err, got, tc.want)
		}
	}
}

// TestTickClockTracksTheClock: for any counter rate the kernel would
// keep its clock by, any pattern of calls, the clock read anywhere
// between two counter readings (up to a little more than maxBracket ticks
// apart) and, if drawn, the counter's rate against the clock's moving
// within slew of its own (so changing by up to twice slew) at most once
// every 5 ms, a call that reads the clock returns its time, a converted
// time stays within the bound clock.go states of the true time, and the
// counter stays on.
func TestTickClockTracksTheClock(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		hz := rapid.Float64Range(0.6e9, 5e9).Draw(t, "hz")
		c := &slewed{segs: []segment{{tick: rapid.Uint64Range(0, 1<<50).Draw(t, "off"), hz: hz}}}
		slew := rapid.SampledFrom([]float64{0, 0.005, 0.02, 0.083}).Draw(t, "slew")
		k := tickClock{}
		ns := rapid.Uint64Range(0, 1<<40).Draw(t, "start")
		k.cur.Store(&anchor{tick: c.at(ns), ns: ns})
		// bracket is maxBracket ticks in ns (at the slowest rate); an
		// anchor is off by at most half of it, the rate by twice that
		// over minBaseline, and by the change of rate over a span (a
		// span in ticks, converted at the old rate, is up to 1/(1-2slew)
		// spans at the new).
		bracket := uint64(float64(maxBracket) * 1e9 / (hz * (1 - slew)))
		change := 2 * slew
		bound := bracket/2 + bracket*spanNs/minBaseline + uint64(change/(1-change)*float64(spanNs)) + 2
		changed := ns
		for i := range rapid.IntRange(1, 3000).Draw(t, "calls") {
			ns += rapid.Uint64Range(0, 3*spanNs).Draw(t, "gap")
			if slew > 0 && ns-changed >= 5*spanNs && rapid.IntRange(0, 5).Draw(t, "change") == 0 {
				c.change(ns, hz*(1+rapid.Float64Range(-slew, slew).Draw(t, "rate")))
				changed = ns
			}
			end := rapid.Uint64Range(0, bracket*5/4).Draw(t, "end")
			read := rapid.Uint64Range(0, end).Draw(t, "read")
			got, clocked := tickerAt(&k, c, ns, read, end)
			if k.cur.Load() == nil {
				t.Fatalf("call %d: the counter was turned off", i)
			}
			if clocked && got != ns+read {
				t.Fatalf("call %d read the clock at %d and returned %d", i, ns+read, got)
			}
			if !clocked && max(got, ns)-min(got, ns) > bound {
				t.Fatalf("call %d at %d: %d, off by more than %d", i, ns, got, bound)
			}
		}
	})
}

// TestAnchorAtTheBracketsMiddle: an anchor takes the middle of the two
// counter readings around the clock's, so one read midway is exact,
// and converts the counter as exactly.
func TestAnchorAtTheBracketsMiddle(t *testing.T) {
	c := tsc{hz: 2.5e9, off: 1 << 33}
	k := tickClock{}
	a := calibrated(t, c, 0, 2*minBaseline)
	k.cur.Store(a)
	ns := a.ns + spanNs + 100
	half := uint64(maxBracket / 2 * 1e9 / c.hz) // ns: half the bracket
	if _, clocked := tickerAt(&k, c, ns, half, 2*half); !clocked {
		t.Fatal("the clock was not read past the span")
	}
	n := k.cur.Load()
	if n == a || n.ns != ns+half || max(n.tick, c.at(ns+half))-min(n.tick, c.at(ns+half)) > 1 {
		t.Fatalf("anchor %+v; want the clock %d at the counter's %d", n, ns+half, c.at(ns+half))
	}
	for _, d := range []uint64{1, spanNs / 2, spanNs - 10} {
		if got, clocked := tickerAt(&k, c, n.ns+d, 0, 0); clocked || max(got, n.ns+d)-min(got, n.ns+d) > 2 {
			t.Errorf("+%d ns: %d (clock read %v), want %d", d, got, clocked, n.ns+d)
		}
	}
}

// TestTickClockAgrees reads a clock started as the process's is between
// two reads of the monotonic clock: where the counter is used, the time
// it gives lies between them, give or take what clock.go states (however
// slow the machine: a pause between the reads only widens the interval).
// The slack is what holds by construction, a span, rather than the few
// microseconds measured, so that a kernel slewing its clock fast cannot
// fail it.
func TestTickClockAgrees(t *testing.T) {
	k := tickClock{recheck: ticksStillUsable}
	usable := ticksUsable()
	if usable {
		k.start()
	}
	if runtime.GOOS == "linux" && runtime.GOARCH == "amd64" {
		b, err := os.ReadFile("/sys/devices/system/clocksource/clocksource0/current_clocksource")
		want := err == nil && strings.TrimSpace(string(b)) == "tsc" && cpuHasFlags("constant_tsc", "nonstop_tsc")
		if usable != want {
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
	slack := int64(spanNs)
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
	if behind > slack || ahead > slack {
		t.Errorf("%d ns behind the clock and %d ns ahead, past %d", behind, ahead, slack)
	}
}

func TestCPUHasFlags(t *testing.T) {
	if runtime.GOOS != "linux" || runtime.GOARCH != "amd64" {
		t.Skip("reads /proc/cpuinfo on Linux amd64 only")
	}
	if cpuHasFlags("no_such_flag") {
		t.Error("a flag no processor has was found")
	}
	if !cpuHasFlags("fpu", "sse2") { // every amd64 processor has both
		t.Error("fpu and sse2 not found")
	}
}

// useCounterInTests lets limiters created by the test read the counter,
// as in a production binary (see counterclock).
func useCounterInTests(tb testing.TB) {
	counterclock.InTests.Store(true)
	tb.Cleanup(func() { counterclock.InTests.Store(false) })
}

// TestAllowReadsTheClock: the time Allow uses is the monotonic clock's
// since the limiter's epoch, as AllowAt(time.Now()) would use (within a
// span, as in TestTickClockAgrees), read through the counter where it is
// used; in a test binary, through time.Since unless counterclock says
// otherwise.
func TestAllowReadsTheClock(t *testing.T) {
	for _, counter := range []bool{false, true} {
		if counter {
			useCounterInTests(t)
		}
		l := mustLimiter(t, 1, time.Hour)
		if d := l.Allow("k"); !d.Allowed {
			t.Fatalf("first request: %+v", d)
		}
		want := uint32(clockSince)
		if counter && startTicker() {
			want = clockTicker
		}
		if got := l.clock.Load(); got != want {
			t.Fatalf("counterclock.InTests %v: Allow's clock %d, want %d", counter, got, want)
		}
		slack := time.Duration(spanNs)
		for range 100_000 {
			n1 := time.Since(l.epoch)
			got := l.elapsed()
			n2 := time.Since(l.epoch)
			if got < n1-slack || got > n2+slack {
				t.Fatalf("Allow's time %v, the clock's %v to %v", got, n1, n2)
			}
		}
		if d := l.AllowAt("k", time.Now().Add(time.Hour+time.Second)); !d.Allowed {
			t.Fatalf("a window and a second after Allow: %+v", d)
		}
	}
}

// TestTickClockInBubble: in a synctest bubble the monotonic clock cannot
// be read, and a call that must read it says so (Allow then reads the
// bubble's clock), leaving the anchor as it was.
func TestTickClockInBubble(t *testing.T) {
	c := tsc{hz: 2e9}
	k := tickClock{}
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

// TestLimiterFirstCalledInBubble: a limiter created outside a synctest
// bubble and first called in one reads the bubble's clock, so a test
// that sleeps there sees its requests admitted again, whether or not the
// counter may be used.
func TestLimiterFirstCalledInBubble(t *testing.T) {
	for _, counter := range []bool{false, true} {
		if counter {
			useCounterInTests(t)
		}
		l := mustLimiter(t, 1, time.Second)
		synctest.Test(t, func(t *testing.T) { sleepsRefill(t, l, "k") })
		if got := l.clock.Load(); got != clockSince {
			t.Fatalf("counterclock.InTests %v: Allow's clock %d, want clockSince", counter, got)
		}
	}
}

// TestLimiterCalledOutsideThenInBubble: in a test binary, a limiter first
// called outside a synctest bubble, then in one, reads the bubble's clock
// there, for a key the bubble alone uses, as it did before Allow read the
// counter (counterclock.InTests off, as in users' tests). The sleep, which
// no assertion measures, lets a counter wrongly chosen make an anchor the
// bubble's first calls would read (TestAllowReadsTheClock pins the choice
// itself whatever the timing).
func TestLimiterCalledOutsideThenInBubble(t *testing.T) {
	l := mustLimiter(t, 1, time.Second)
	l.Allow("outside")
	time.Sleep(2 * time.Millisecond) // past a span of the process's counter
	l.Allow("outside")
	synctest.Test(t, func(t *testing.T) { sleepsRefill(t, l, "k") })
}

// sleepsRefill checks, in a synctest bubble, that l (1 a second) admits
// one request for key, refuses the next, and admits one again after a
// second's sleep, 1,000 times.
func sleepsRefill(t *testing.T, l *Limiter, key string) {
	for i := range 1000 {
		if d := l.Allow(key); !d.Allowed {
			t.Fatalf("round %d: first request refused: %+v", i, d)
		}
		if d := l.Allow(key); d.Allowed || d.RetryAfter != time.Second {
			t.Fatalf("round %d: second request: %+v, want a retry after 1s", i, d)
		}
		time.Sleep(time.Second)
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
