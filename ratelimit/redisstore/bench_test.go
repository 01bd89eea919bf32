package redisstore

import (
	"context"
	"fmt"
	"runtime"
	"strconv"
	"strings"
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
