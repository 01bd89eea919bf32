package bench

import (
	"context"
	"fmt"
	"math/rand/v2"
	"runtime"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/acctapi/acctapi/internal/counterclock"
	"github.com/acctapi/acctapi/ratelimit"
	"github.com/sethvargo/go-limiter/memorystore"
	ulule "github.com/ulule/limiter/v3"
	ululemem "github.com/ulule/limiter/v3/drivers/store/memory"
	"golang.org/x/time/rate"
)

func init() {
	// Measure Limiter.Allow as a production binary runs it: in a test
	// binary it reads the clock as time.Since does (see
	// internal/counterclock).
	counterclock.InTests.Store(true)
}

// allower is the common shape of the limiters compared here. allow is
// given the time (only ours and x/time/rate take it; the others read the
// clock themselves, and the accuracy runs use it); take is the call each
// library's users write, which reads the clock the library's own way: ours
// Limiter.Allow (the processor's time-stamp counter where Linux keeps its
// clock by it, the monotonic clock elsewhere), x/time/rate's Allow
// (time.Now), sethvargo's Take (the runtime's wall and monotonic clocks),
// ulule's Get (time.Now).
type allower interface {
	allow(key string, now time.Time) bool
	take(key string) bool
}

type impl struct {
	name string
	new  func(tb testing.TB, capacity int64, window time.Duration) allower
}

var impls = []impl{
	{"acctapi", func(tb testing.TB, c int64, w time.Duration) allower {
		l, err := ratelimit.NewLimiter(c, w)
		if err != nil {
			tb.Fatal(err)
		}
		return ours{l}
	}},
	{"x-time-rate", func(_ testing.TB, c int64, w time.Duration) allower {
		return &xrate{m: map[string]*rate.Limiter{}, limit: rate.Limit(float64(c) / w.Seconds()), burst: int(c)}
	}},
	{"sethvargo", func(tb testing.TB, c int64, w time.Duration) allower {
		s, err := memorystore.New(&memorystore.Config{Tokens: uint64(c), Interval: w})
		if err != nil {
			tb.Fatal(err)
		}
		tb.Cleanup(func() { _ = s.Close(context.Background()) })
		return sethvargo{s}
	}},
	{"ulule", func(_ testing.TB, c int64, w time.Duration) allower {
		return ululeLimiter{ulule.New(ululemem.NewStore(), ulule.Rate{Period: w, Limit: c})}
	}},
}

type ours struct{ l *ratelimit.Limiter }

func (o ours) allow(key string, now time.Time) bool { return o.l.AllowAt(key, now).Allowed }
func (o ours) take(key string) bool                 { return o.l.Allow(key).Allowed }

// xrate is one golang.org/x/time/rate limiter per key in a map.
type xrate struct {
	mu    sync.Mutex
	m     map[string]*rate.Limiter
	limit rate.Limit
	burst int
}

func (x *xrate) allow(key string, now time.Time) bool { return x.get(key).AllowN(now, 1) }
func (x *xrate) take(key string) bool                 { return x.get(key).Allow() }

func (x *xrate) get(key string) *rate.Limiter {
	x.mu.Lock()
	l, ok := x.m[key]
	if !ok {
		l = rate.NewLimiter(x.limit, x.burst)
		x.m[key] = l
	}
	x.mu.Unlock()
	return l
}

type sethvargo struct {
	s interface {
		Take(context.Context, string) (uint64, uint64, uint64, bool, error)
		Close(context.Context) error
	}
}

// close stops the store's sweeping goroutine and lets its keys go, for
// benchmarks that make many (the test's cleanup closes it too, which does
// nothing more).
func (s sethvargo) close() { _ = s.s.Close(context.Background()) }

func (s sethvargo) allow(key string, _ time.Time) bool { return s.take(key) }

func (s sethvargo) take(key string) bool {
	_, _, _, ok, _ := s.s.Take(context.Background(), key)
	return ok
}

type ululeLimiter struct{ l *ulule.Limiter }

func (u ululeLimiter) allow(key string, _ time.Time) bool { return u.take(key) }

func (u ululeLimiter) take(key string) bool {
	c, err := u.l.Get(context.Background(), key)
	return err == nil && !c.Reached
}

func keys(n int) []string {
	k := make([]string, n)
	for i := range k {
		k[i] = fmt.Sprintf("198.51.%d.%d|key-%06d", (i>>8)&255, i&255, i)
	}
	return k
}

// admitting runs bench for each library, on a limiter of 2^30 requests an
// hour, which admits every request of a run.
func admitting(b *testing.B, bench func(b *testing.B, l allower)) {
	for _, im := range impls {
		b.Run(im.name, func(b *testing.B) { bench(b, im.new(b, 1<<30, time.Hour)) })
	}
}

// BenchmarkSingleKey: one existing key, always admitted, each library
// reading the clock its own way (take).
func BenchmarkSingleKey(b *testing.B) {
	admitting(b, func(b *testing.B, l allower) {
		l.take("203.0.113.7")
		b.ReportAllocs()
		for b.Loop() {
			l.take("203.0.113.7")
		}
	})
}

// BenchmarkKeys100kParallel: 100,000 existing keys, random access, all
// procs, each library reading the clock its own way (take).
func BenchmarkKeys100kParallel(b *testing.B) {
	ks := keys(100_000)
	admitting(b, func(b *testing.B, l allower) { randomKeys(b, l, ks) })
}

// randomKeys gives l a request for each of ks, then times requests for
// random keys of ks from all procs (take).
func randomKeys(b *testing.B, l allower, ks []string) {
	now := time.Now()
	for _, k := range ks {
		l.allow(k, now)
	}
	b.ReportAllocs()
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		r := rand.New(rand.NewPCG(rand.Uint64(), 1))
		for pb.Next() {
			l.take(ks[r.IntN(len(ks))])
		}
	})
}

// BenchmarkKeys100kPaired is Keys100kParallel for acctapi and sethvargo
// taken in turns within one process, for the ratio of their times: each
// iteration builds a fresh limiter of each (in alternating order), gives
// it the 100,000 keys, and times pairedOps decisions for random keys from
// GOMAXPROCS goroutines. It reports acctapi's median time a decision as
// ns/op (not an iteration's time: an iteration is two rounds), sethvargo's
// as sethvargo-ns/op, and the median of the iterations' ratios,
// sethvargo's time over acctapi's, as x-sethvargo: the paired figure,
// which need not equal the quotient of the two medians. The two rounds of
// an iteration are a fraction of a second apart, so they see the same
// state of a shared machine, whose speed changes from minute to minute;
// run it with -benchtime 20x or more, on a machine doing nothing else.
func BenchmarkKeys100kPaired(b *testing.B) {
	ks := keys(100_000)
	pair := [2]impl{byName(b, "acctapi"), byName(b, "sethvargo")}
	var times [2][]float64
	var ratios []float64
	i := 0
	for b.Loop() {
		var d [2]float64
		for j := range 2 {
			k := (i + j) % 2
			d[k] = pairedRound(b, pair[k], ks)
		}
		times[0], times[1] = append(times[0], d[0]), append(times[1], d[1])
		ratios = append(ratios, d[1]/d[0])
		i++
	}
	b.ReportMetric(median(times[0]), "ns/op")
	b.ReportMetric(median(times[1]), "sethvargo-ns/op")
	b.ReportMetric(median(ratios), "x-sethvargo")
}

// pairedOps is the number of decisions a round of Keys100kPaired times.
const pairedOps = 2_000_000

// pairedRound builds im's limiter, gives it a request for each of ks, and
// returns the time a decision took over pairedOps decisions for random
// keys of ks from GOMAXPROCS goroutines (after a quarter as many to warm
// up), as Keys100kParallel does.
func pairedRound(b *testing.B, im impl, ks []string) float64 {
	l := im.new(b, 1<<30, time.Hour)
	if c, ok := l.(interface{ close() }); ok {
		defer c.close()
	}
	now := time.Now()
	for _, k := range ks {
		l.allow(k, now)
	}
	runtime.GC()
	run := func(n int) time.Duration {
		procs := runtime.GOMAXPROCS(0)
		var wg sync.WaitGroup
		start := time.Now()
		for range procs {
			wg.Go(func() {
				r := rand.New(rand.NewPCG(rand.Uint64(), 1))
				for range n / procs {
					l.take(ks[r.IntN(len(ks))])
				}
			})
		}
		wg.Wait()
		return time.Since(start)
	}
	run(pairedOps / 4)
	return float64(run(pairedOps).Nanoseconds()) / pairedOps
}

func byName(tb testing.TB, name string) impl {
	for _, im := range impls {
		if im.name == name {
			return im
		}
	}
	tb.Fatalf("no library %q", name)
	return impl{}
}

// median returns the median of x, the mean of the middle two for an even
// count.
func median(x []float64) float64 {
	y := slices.Clone(x)
	slices.Sort(y)
	n := len(y)
	if n%2 == 0 {
		return (y[n/2-1] + y[n/2]) / 2
	}
	return y[n/2]
}

// BenchmarkHotKeyParallel: one existing key, always admitted, from all
// procs at once (a limit shared by every request), each library reading
// the clock its own way (take).
func BenchmarkHotKeyParallel(b *testing.B) {
	admitting(b, func(b *testing.B, l allower) {
		l.take("203.0.113.7")
		b.ReportAllocs()
		b.RunParallel(func(pb *testing.PB) {
			for pb.Next() {
				l.take("203.0.113.7")
			}
		})
	})
}

// BenchmarkBytesPerKey reports the live heap per key after 100,000 keys
// (capacity 100 per minute), beyond the key strings themselves.
func BenchmarkBytesPerKey(b *testing.B) {
	const n = 100_000
	ks := keys(n)
	for _, im := range impls {
		b.Run(im.name, func(b *testing.B) {
			var before, after runtime.MemStats
			runtime.GC()
			runtime.ReadMemStats(&before)
			l := im.new(b, 100, time.Minute)
			now := time.Now()
			for _, k := range ks {
				l.allow(k, now)
			}
			runtime.GC()
			runtime.ReadMemStats(&after)
			runtime.KeepAlive(l)
			for b.Loop() {
			}
			b.ReportMetric(float64(after.HeapAlloc-before.HeapAlloc)/n, "B/key")
		})
	}
}

// accuracy is the outcome of a traffic run.
type accuracy struct {
	admitted, exact int
	maxInWindow     int
	capacity        int
}

// pattern returns arrival offsets, in units of the window, for a limit of
// capacity requests per window.
type pattern func(capacity int) []float64

// poisson is Poisson traffic at 1.5 times the limit over windows windows.
func poisson(windows int) pattern {
	return func(capacity int) []float64 {
		rng := rand.New(rand.NewPCG(7, 7))
		var at []float64
		for t := 0.0; t < float64(windows); t += rng.ExpFloat64() / (1.5 * float64(capacity)) {
			at = append(at, t)
		}
		return at
	}
}

// boundary is the adversarial pattern: one request at 0 (which anchors
// fixed windows), the rest of the capacity just before the end of the first
// window, then a flood at ten times the limit for two windows.
func boundary(capacity int) []float64 {
	at := []float64{0}
	for i := range capacity - 1 {
		at = append(at, 0.95+0.04*float64(i)/float64(capacity))
	}
	for t := 1.0; t < 3; t += 0.1 / float64(capacity) {
		at = append(at, t)
	}
	return at
}

// periodic is a burst of capacity requests once every window (maxDelta
// 0) or every 1+delta windows with delta drawn afresh from [0, maxDelta)
// for each burst, over about windows windows; each burst is spread evenly
// over spread windows (0: at one instant). A client sending a batch from a
// cron job does this; an exact sliding log admits every burst in full
// whenever the period is at least a window.
func periodic(windows int, maxDelta, spread float64) pattern {
	return func(capacity int) []float64 {
		rng := rand.New(rand.NewPCG(13, 13))
		var at []float64
		for t := 0.25; t < float64(windows); t += 1 + maxDelta*rng.Float64() {
			for i := range capacity {
				at = append(at, t+spread*float64(i)/float64(capacity))
			}
		}
		return at
	}
}

var (
	accOnce sync.Once
	accRes  map[string]accuracy
)

// BenchmarkAccuracy reports, per traffic pattern, admissions relative to
// the exact sliding log fed the same arrival times, and the most admissions
// in any window relative to capacity. The periodic patterns send a burst of
// capacity requests once every window (periodic-burst), once every window
// plus up to a 60th of one (+delta), or the same spread over a 100th of a
// window (spread). Limiters that take the time (acctapi,
// x/time/rate) run 100 per minute in virtual time; the others read the
// clock themselves and run 100 per second in real time (their fixed-window
// algorithms behave the same at any scale). The runs happen once; b.N is
// ignored.
func BenchmarkAccuracy(b *testing.B) {
	// delta is up to one sub-window of the acctapi limiter (1/60).
	patterns := []struct {
		name string
		p    pattern
	}{
		{"poisson-1.5x", nil},
		{"boundary-burst", boundary},
		{"periodic-burst", nil},
		{"periodic-burst+delta", nil},
		{"periodic-spread+delta", nil},
	}
	accOnce.Do(func() {
		accRes = map[string]accuracy{}
		for _, im := range impls {
			virtual := im.name == "acctapi" || im.name == "x-time-rate"
			for _, pt := range patterns {
				// Virtual time runs long enough for stable figures; real
				// time runs 6 windows.
				p, window, n := pt.p, time.Second, 6
				if virtual {
					n = 200
				}
				switch pt.name {
				case "poisson-1.5x":
					p = poisson(n)
				case "periodic-burst":
					p = periodic(n, 0, 0)
				case "periodic-burst+delta":
					p = periodic(n, 1.0/60, 0)
				case "periodic-spread+delta":
					p = periodic(n, 1.0/60, 0.01)
				}
				if virtual {
					window = time.Minute
				}
				accRes[pt.name+"/"+im.name] = runAccuracy(b, im, 100, window, p(100), !virtual)
			}
		}
	})
	for _, pt := range patterns {
		for _, im := range impls {
			name := pt.name + "/" + im.name
			b.Run(name, func(b *testing.B) {
				for b.Loop() {
				}
				a := accRes[name]
				b.ReportMetric(float64(a.admitted)/float64(a.exact), "admitted/exact")
				b.ReportMetric(float64(a.maxInWindow)/float64(a.capacity), "max-window/capacity")
			})
		}
	}
}

func runAccuracy(tb testing.TB, im impl, capacity int, window time.Duration, offsets []float64, realTime bool) accuracy {
	l := im.new(tb, int64(capacity), window)
	var exact, ours []time.Time
	start := time.Now()
	for _, off := range offsets {
		next := start.Add(time.Duration(off * float64(window)))
		now := next
		if realTime {
			now = time.Now()
			for now.Before(next) { // spin: sleeping is too coarse
				now = time.Now()
			}
		}
		if l.allow("k", now) {
			ours = append(ours, now)
		}
		// The exact sliding log on the same arrival times.
		in := 0
		for i := len(exact) - 1; i >= 0 && now.Sub(exact[i]) < window; i-- {
			in++
		}
		if in < capacity {
			exact = append(exact, now)
		}
	}
	a := accuracy{admitted: len(ours), exact: len(exact), capacity: capacity}
	for i, j := 0, 0; j < len(ours); j++ {
		for ours[j].Sub(ours[i]) >= window {
			i++
		}
		a.maxInWindow = max(a.maxInWindow, j-i+1)
	}
	return a
}

// BenchmarkAccuracyRandom reports, over 1,000 random timelines, the
// distribution of admissions relative to the exact sliding log fed the
// same arrival times (1st and 10th percentile, median, worst), for the
// limiters that take the time (the others would need hours of real time).
// A timeline has a capacity from 1 to 20, a window from 60s to an hour,
// and 400 requests arriving in a Poisson stream of events at 0.5 to 4 times
// the limit, a quarter of the events a burst of up to capacity requests at
// one instant.
func BenchmarkAccuracyRandom(b *testing.B) {
	windows := []int{60, 70, 90, 100, 110, 120, 190, 600, 3600}
	for _, im := range impls[:2] {
		b.Run(im.name, func(b *testing.B) {
			for b.Loop() {
			}
			rng := rand.New(rand.NewPCG(3, 3))
			var ratios []float64
			for range 1000 {
				capacity := 1 + rng.IntN(20)
				window := time.Duration(windows[rng.IntN(len(windows))]) * time.Second
				load := 0.5 + 3.5*rng.Float64()
				var at []float64
				for t := 0.0; len(at) < 400; t += rng.ExpFloat64() / (load * float64(capacity)) {
					n := 1
					if rng.IntN(4) == 0 {
						n = 1 + rng.IntN(capacity)
					}
					for range n {
						at = append(at, t)
					}
				}
				a := runAccuracy(b, im, capacity, window, at, false)
				if im.name == "acctapi" && a.maxInWindow > capacity {
					b.Fatalf("%d admitted in a window, capacity %d", a.maxInWindow, capacity)
				}
				ratios = append(ratios, float64(a.admitted)/float64(a.exact))
			}
			slices.Sort(ratios)
			b.ReportMetric(ratios[len(ratios)/100], "p1")
			b.ReportMetric(ratios[len(ratios)/10], "p10")
			b.ReportMetric(ratios[len(ratios)/2], "p50")
			b.ReportMetric(ratios[0], "worst")
		})
	}
}
