package redisstore

import (
	"context"
	"fmt"
	"math/rand/v2"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/acctapi/acctapi/ratelimit"
	"github.com/go-redis/redis_rate/v10"
	"github.com/redis/go-redis/v9"
	ulule "github.com/ulule/limiter/v3"
	ulredis "github.com/ulule/limiter/v3/drivers/store/redis"
)

// The shared limiters side by side on one local redis-server: this store
// (sliding window, never over capacity), go-redis/redis_rate (GCRA) and
// ulule/limiter's Redis store (fixed window). Run with
//
//	go test -run '^$' -bench Decisions -benchtime 1s -count 4
//	go test -run '^$' -bench Keys -benchtime 20000x -count 2
//
// Each row reports decisions/s, round trips per decision (commands or
// pipelines sent, counted by a go-redis hook) and, for BenchmarkKeys,
// the server's used_memory per key (give it a fixed count: with a count
// that varies, the growth of Redis's tables skews the figure).

// decider is one shared limiter: a decision for key.
type decider func(ctx context.Context, key string) error

// impls returns the three limiters on c, each at capacity per minute.
func impls(b *testing.B, c *redis.Client, capacity int) map[string]decider {
	l, err := ratelimit.NewLimiter(int64(capacity), time.Minute, ratelimit.WithStore(New(c), ratelimit.FailClosed, time.Second))
	if err != nil {
		b.Fatal(err)
	}
	rr := redis_rate.NewLimiter(c)
	st, err := ulredis.NewStore(c)
	if err != nil {
		b.Fatal(err)
	}
	ul := ulule.New(st, ulule.Rate{Period: time.Minute, Limit: int64(capacity)})
	return map[string]decider{
		"acctapi": func(ctx context.Context, key string) error {
			_, err := l.AllowContext(ctx, key, time.Time{})
			return err
		},
		"redis_rate": func(ctx context.Context, key string) error {
			_, err := rr.Allow(ctx, key, redis_rate.PerMinute(capacity))
			return err
		},
		"ulule": func(ctx context.Context, key string) error {
			_, err := ul.Get(ctx, key)
			return err
		},
	}
}

// countHook counts what a client sends: each command or pipeline is one
// round trip.
type countHook struct{ n *atomic.Int64 }

func (h countHook) DialHook(next redis.DialHook) redis.DialHook { return next }
func (h countHook) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error { h.n.Add(1); return next(ctx, cmd) }
}
func (h countHook) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return func(ctx context.Context, cmds []redis.Cmder) error { h.n.Add(1); return next(ctx, cmds) }
}

func benchServer(b *testing.B) (*server, *redis.Client, *atomic.Int64) {
	srv := startServer(b)
	n := new(atomic.Int64)
	c := srv.client(func(o *redis.Options) { o.PoolSize = 64 })
	c.AddHook(countHook{n})
	return srv, c, n
}

// BenchmarkDecisions: admitted decisions on 1,000 keys (capacity 10^9 per
// minute), from 1 and from 64 goroutines.
func BenchmarkDecisions(b *testing.B) {
	_, c, sent := benchServer(b)
	keys := make([]string, 1000)
	for i := range keys {
		keys[i] = "203.0.113." + strconv.Itoa(i)
	}
	ctx := context.Background()
	for _, name := range []string{"acctapi", "redis_rate", "ulule"} {
		decide := impls(b, c, 1e9)[name]
		for _, g := range []int{1, 64} {
			b.Run(fmt.Sprintf("%s/goroutines=%d", name, g), func(b *testing.B) {
				_ = decide(ctx, keys[0]) // load the script
				b.ReportAllocs()
				b.SetParallelism(max(1, g/runtime.GOMAXPROCS(0)))
				var i atomic.Int64
				sent.Store(0)
				start := time.Now()
				if g == 1 {
					for n := 0; b.Loop(); n++ {
						if err := decide(ctx, keys[n%len(keys)]); err != nil {
							b.Fatal(err)
						}
					}
				} else {
					b.RunParallel(func(pb *testing.PB) {
						for pb.Next() {
							if err := decide(ctx, keys[i.Add(1)%int64(len(keys))]); err != nil {
								b.Error(err)
								return
							}
						}
					})
				}
				b.ReportMetric(float64(b.N)/time.Since(start).Seconds(), "decisions/s")
				b.ReportMetric(float64(sent.Load())/float64(b.N), "roundtrips/op")
			})
		}
	}
}

// BenchmarkKeys: one decision on each of b.N new keys (capacity 100 per
// minute); bytes/key is the growth of the server's used_memory per key.
func BenchmarkKeys(b *testing.B) {
	_, c, _ := benchServer(b)
	ctx := context.Background()
	for _, name := range []string{"acctapi", "redis_rate", "ulule"} {
		b.Run(name, func(b *testing.B) {
			decide := impls(b, c, 100)[name]
			if err := c.FlushAll(ctx).Err(); err != nil {
				b.Fatal(err)
			}
			_ = decide(ctx, "warm")
			before := usedMemory(b, c)
			n := 0
			for ; b.Loop(); n++ {
				if err := decide(ctx, "key:"+strconv.Itoa(n)); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(usedMemory(b, c)-before)/float64(n), "bytes/key")
		})
	}
}

func usedMemory(b *testing.B, c *redis.Client) int64 {
	info, err := c.Info(context.Background(), "memory").Result()
	if err != nil {
		b.Fatal(err)
	}
	for line := range strings.SplitSeq(info, "\r\n") {
		if v, ok := strings.CutPrefix(line, "used_memory:"); ok {
			n, err := strconv.ParseInt(v, 10, 64)
			if err != nil {
				b.Fatal(err)
			}
			return n
		}
	}
	b.Fatal("no used_memory in INFO memory")
	return 0
}

// The accuracy workloads of ratelimit/bench's BenchmarkAccuracy (see its
// README), on the shared limiters. acctapi's script takes the time under
// WithCallerClock, so "acctapi" runs 100 per minute in virtual time over
// 200 windows, as the in-process table does (the script is the same on
// either clock); "acctapi-server-clock" (the default path), redis_rate and
// ulule read Redis's TIME and run 100 per second in real time over 6
// windows, about 6 seconds per pattern. Run with
//
//	go test -run '^$' -bench Accuracy -benchtime 1x
//
// The exact log and the most admitted in any window use the caller's
// arrival times; for the real-time limiters Redis's clock is this
// machine's, read a round trip later.

// accuracyPatterns returns the workloads for capacity per window over n
// windows, as arrival offsets in windows.
func accuracyPatterns(capacity, n int) [][]float64 {
	c := float64(capacity)
	poisson := func() []float64 {
		rng := rand.New(rand.NewPCG(7, 7))
		var at []float64
		for t := 0.0; t < float64(n); t += rng.ExpFloat64() / (1.5 * c) {
			at = append(at, t)
		}
		return at
	}
	// One request at 0 (anchoring fixed windows), the rest of the
	// capacity just before the first window ends, then a flood at ten
	// times the limit for two windows.
	boundary := func() []float64 {
		at := []float64{0}
		for i := range capacity - 1 {
			at = append(at, 0.95+0.04*float64(i)/c)
		}
		for t := 1.0; t < 3; t += 0.1 / c {
			at = append(at, t)
		}
		return at
	}
	// capacity requests spread over spread windows, every 1 + [0, delta)
	// windows.
	periodic := func(delta, spread float64) []float64 {
		rng := rand.New(rand.NewPCG(13, 13))
		var at []float64
		for t := 0.25; t < float64(n); t += 1 + delta*rng.Float64() {
			for i := range capacity {
				at = append(at, t+spread*float64(i)/c)
			}
		}
		return at
	}
	return [][]float64{poisson(), boundary(), periodic(0, 0), periodic(1.0/60, 0), periodic(1.0/60, 0.01)}
}

var accuracyNames = []string{"poisson-1.5x", "boundary-burst", "periodic-burst", "periodic-burst+delta", "periodic-spread+delta"}

// admitter is a shared limiter deciding for key at now (which the
// real-time ones ignore).
type admitter func(key string, now time.Time) bool

func accuracyImpls(b *testing.B, c *redis.Client) map[string]admitter {
	ctx := context.Background()
	ours := func(window time.Duration, opts ...Option) admitter {
		l, err := ratelimit.NewLimiter(100, window, ratelimit.WithStore(New(c, opts...), ratelimit.FailClosed, time.Hour))
		if err != nil {
			b.Fatal(err)
		}
		return func(key string, now time.Time) bool {
			d, err := l.AllowContext(ctx, key, now)
			if err != nil {
				b.Fatal(err)
			}
			return d.Allowed
		}
	}
	rr := redis_rate.NewLimiter(c)
	st, err := ulredis.NewStore(c)
	if err != nil {
		b.Fatal(err)
	}
	ul := ulule.New(st, ulule.Rate{Period: time.Second, Limit: 100})
	return map[string]admitter{
		"acctapi":              ours(time.Minute, WithCallerClock()),
		"acctapi-server-clock": ours(time.Second),
		"redis_rate": func(key string, _ time.Time) bool {
			r, err := rr.Allow(ctx, key, redis_rate.PerSecond(100))
			if err != nil {
				b.Fatal(err)
			}
			return r.Allowed > 0
		},
		"ulule": func(key string, _ time.Time) bool {
			r, err := ul.Get(ctx, key)
			if err != nil {
				b.Fatal(err)
			}
			return !r.Reached
		},
	}
}

var (
	redisAccOnce sync.Once
	redisAccRes  map[string][2]float64 // admitted/exact, max-window/capacity
)

// BenchmarkAccuracy reports, per workload and limiter, admissions
// relative to an exact sliding log fed the same arrival times and the
// most admissions in any window relative to capacity. The runs happen
// once; b.N is ignored.
func BenchmarkAccuracy(b *testing.B) {
	names := []string{"acctapi", "acctapi-server-clock", "redis_rate", "ulule"}
	redisAccOnce.Do(func() {
		_, c, _ := benchServer(b)
		im := accuracyImpls(b, c)
		redisAccRes = map[string][2]float64{}
		for _, name := range names {
			virtual := name == "acctapi"
			window, n := time.Second, 6
			if virtual {
				window, n = time.Minute, 200
			}
			for i, offsets := range accuracyPatterns(100, n) {
				admitted, exact, most := replay(im[name], fmt.Sprint(name, i), 100, window, offsets, !virtual)
				redisAccRes[accuracyNames[i]+"/"+name] = [2]float64{float64(admitted) / float64(exact), float64(most) / 100}
			}
		}
	})
	for _, pattern := range accuracyNames {
		for _, name := range names {
			b.Run(pattern+"/"+name, func(b *testing.B) {
				for b.Loop() {
				}
				r := redisAccRes[pattern+"/"+name]
				b.ReportMetric(r[0], "admitted/exact")
				b.ReportMetric(r[1], "max-window/capacity")
			})
		}
	}
}

// replay sends requests for key at offsets (in windows) and returns how
// many allow admitted, how many an exact sliding log of capacity admits
// on the same arrival times, and the most allow admitted in any window.
// In real time it waits for each arrival by spinning on the clock
// (sleeping is too coarse).
func replay(allow admitter, key string, capacity int, window time.Duration, offsets []float64, realTime bool) (admitted, exact, most int) {
	var ours, log []time.Time
	start := time.Now()
	for _, off := range offsets {
		now := start.Add(time.Duration(off * float64(window)))
		if realTime {
			next := now
			for now = time.Now(); now.Before(next); now = time.Now() {
			}
		}
		if allow(key, now) {
			ours = append(ours, now)
		}
		in := 0
		for i := len(log) - 1; i >= 0 && now.Sub(log[i]) < window; i-- {
			in++
		}
		if in < capacity {
			log = append(log, now)
		}
	}
	for i, j := 0, 0; j < len(ours); j++ {
		for ours[j].Sub(ours[i]) >= window {
			i++
		}
		most = max(most, j-i+1)
	}
	return len(ours), len(log), most
}
