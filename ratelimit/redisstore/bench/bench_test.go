package bench

import (
	"context"
	"crypto/sha1"
	"encoding/hex"
	"fmt"
	"os"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/acctapi/acctapi/ratelimit"
	"github.com/acctapi/acctapi/ratelimit/redisstore"
	"github.com/acctapi/acctapi/ratelimit/redisstore/internal/redistest"
	"github.com/redis/go-redis/v9"
	"github.com/redis/rueidis"
)

// BenchmarkClients runs ratelimit/redisstore's decision script through
// each client against one local redis-server, one goroutine after another
// decision (Sequential) and from b.RunParallel with SetParallelism(32),
// that is 32 × GOMAXPROCS goroutines (Parallel32). Every decision is an
// admission (capacity 10^9 per minute, so the script writes the record
// each time) on one of 1,000 buckets, on Redis's clock (TIME), the
// database flushed before each run. The variants:
//
//   - store-goredis-poolN: redisstore.Store.Allow on a go-redis client
//     with a pool of N connections (the default is 10 × GOMAXPROCS): the
//     store as users run it. ContextTimeoutEnabled is set, so the store
//     calls the client directly (without it the store adds a goroutine
//     per decision to honour deadlines).
//   - script-goredis-poolN: what Allow sends, by hand: the bucket's key
//     from Store.Key (SHA-256), the store's five arguments as ints and
//     "", go-redis's Script.Run (EVALSHA, EVAL on NOSCRIPT), the answer
//     read as []int64. This is the go-redis side of the client
//     comparison; it should match store-goredis.
//   - script-rueidis: the same key, the same five arguments formatted as
//     strings (rueidis takes strings), the same script text through
//     rueidis.NewLuaScript's Exec (EVALSHA, EVAL on NOSCRIPT) on a client
//     with rueidis's defaults (auto pipelining of concurrent commands on
//     2^2 = 4 connections), the answer read with AsIntSlice.
//   - script-rueidis-nopipeline: the same on a rueidis client with
//     DisableAutoPipelining (each command takes a connection of its own
//     from a pool of up to 1,024), to tell pipelining from the rest of
//     rueidis.
//
// The script is ../script.lua, read at run time; the benchmark checks
// that the store runs the same text (SCRIPT EXISTS of its SHA-1 after a
// decision by the store). Each row also reports decisions/s and
// scripts/op, the EVALSHA and EVAL calls the server counted
// (INFO commandstats) per decision: 1 when every decision ran the script
// once.
func BenchmarkClients(b *testing.B) {
	ctx := context.Background()
	addr := redistest.Start(b)
	src, err := os.ReadFile("../script.lua")
	if err != nil {
		b.Fatal(err)
	}
	def := goredisClient(b, addr, 0)
	pool64 := goredisClient(b, addr, 64)
	rc := rueidisClient(b, rueidis.ClientOption{InitAddress: []string{addr}})
	rcPool := rueidisClient(b, rueidis.ClientOption{InitAddress: []string{addr}, DisableAutoPipelining: true})

	buckets := make([]ratelimit.Bucket, 1000)
	for i := range buckets {
		buckets[i] = ratelimit.Bucket{Key: "203.0.113." + strconv.Itoa(i), Capacity: 1e9, Window: time.Minute}
	}
	keyer := redisstore.New(def)
	if _, err := keyer.Allow(ctx, buckets[0], time.Time{}); err != nil {
		b.Fatal(err)
	}
	sum := sha1.Sum(src)
	if ok, err := def.ScriptExists(ctx, hex.EncodeToString(sum[:])).Result(); err != nil || !ok[0] {
		b.Fatalf("the store's script is not ../script.lua (SCRIPT EXISTS: %v, %v)", ok, err)
	}

	goredisScript := redis.NewScript(string(src))
	rueidisScript := rueidis.NewLuaScript(string(src))
	storeOn := func(c *redis.Client) func(context.Context, ratelimit.Bucket) error {
		st := redisstore.New(c)
		return func(ctx context.Context, bk ratelimit.Bucket) error {
			d, err := st.Allow(ctx, bk, time.Time{})
			if err == nil && !d.Allowed {
				err = fmt.Errorf("rejected: %+v", d)
			}
			return err
		}
	}
	scriptOn := func(c *redis.Client) func(context.Context, ratelimit.Bucket) error {
		return func(ctx context.Context, bk ratelimit.Bucket) error {
			capacity, window, slot, group := scriptArgs(bk)
			r, err := goredisScript.Run(ctx, c, []string{keyer.Key(bk)}, capacity, window, slot, group, "").Int64Slice()
			return checkAnswer(r, err)
		}
	}
	rueidisOn := func(c rueidis.Client) func(context.Context, ratelimit.Bucket) error {
		return func(ctx context.Context, bk ratelimit.Bucket) error {
			capacity, window, slot, group := scriptArgs(bk)
			args := []string{strconv.FormatInt(capacity, 10), strconv.FormatInt(window, 10),
				strconv.FormatInt(slot, 10), strconv.FormatInt(group, 10), ""}
			r, err := rueidisScript.Exec(ctx, c, []string{keyer.Key(bk)}, args).AsIntSlice()
			return checkAnswer(r, err)
		}
	}
	poolName := func(c *redis.Client) string { return "pool" + strconv.Itoa(c.Options().PoolSize) }
	variants := []struct {
		name   string
		decide func(context.Context, ratelimit.Bucket) error
	}{
		{"store-goredis-" + poolName(def), storeOn(def)},
		{"store-goredis-" + poolName(pool64), storeOn(pool64)},
		{"script-goredis-" + poolName(def), scriptOn(def)},
		{"script-goredis-" + poolName(pool64), scriptOn(pool64)},
		{"script-rueidis", rueidisOn(rc)},
		{"script-rueidis-nopipeline", rueidisOn(rcPool)},
	}
	// fresh empties the database, warms the variant (loads the script,
	// opens a connection) and resets the server's command counts before
	// a run.
	fresh := func(b *testing.B, decide func(context.Context, ratelimit.Bucket) error) {
		if err := decide(ctx, buckets[0]); err != nil {
			b.Fatal(err)
		}
		if err := def.FlushAll(ctx).Err(); err != nil {
			b.Fatal(err)
		}
		if err := def.ConfigResetStat(ctx).Err(); err != nil {
			b.Fatal(err)
		}
	}
	report := func(b *testing.B, start time.Time) {
		b.ReportMetric(float64(b.N)/time.Since(start).Seconds(), "decisions/s")
		b.ReportMetric(float64(scriptCalls(b, def))/float64(b.N), "scripts/op")
	}
	for _, v := range variants {
		b.Run("Sequential/"+v.name, func(b *testing.B) {
			fresh(b, v.decide)
			b.ReportAllocs()
			start := time.Now()
			for i := 0; b.Loop(); i++ {
				if err := v.decide(ctx, buckets[i%len(buckets)]); err != nil {
					b.Fatal(err)
				}
			}
			report(b, start)
		})
	}
	for _, v := range variants {
		b.Run("Parallel32/"+v.name, func(b *testing.B) {
			fresh(b, v.decide)
			b.ReportAllocs()
			b.SetParallelism(32)
			var next atomic.Int64
			b.ResetTimer()
			start := time.Now()
			b.RunParallel(func(pb *testing.PB) {
				for pb.Next() {
					if err := v.decide(ctx, buckets[next.Add(1)%int64(len(buckets))]); err != nil {
						b.Error(err)
						return
					}
				}
			})
			report(b, start)
		})
	}
}

// goredisClient returns a go-redis client of addr with a pool of size
// connections (0: go-redis's default), closed when b ends.
func goredisClient(b *testing.B, addr string, size int) *redis.Client {
	c := redis.NewClient(&redis.Options{Addr: addr, PoolSize: size, ContextTimeoutEnabled: true})
	b.Cleanup(func() { c.Close() })
	if err := c.Ping(context.Background()).Err(); err != nil {
		b.Fatal(err)
	}
	return c
}

// rueidisClient returns a rueidis client with opt, closed when b ends.
func rueidisClient(b *testing.B, opt rueidis.ClientOption) rueidis.Client {
	c, err := rueidis.NewClient(opt)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(c.Close)
	return c
}

// scriptCalls returns the EVALSHA and EVAL calls the server has counted
// since its statistics were last reset.
func scriptCalls(b *testing.B, c *redis.Client) int64 {
	info, err := c.Info(context.Background(), "commandstats").Result()
	if err != nil {
		b.Fatal(err)
	}
	var n int64
	for line := range strings.SplitSeq(info, "\r\n") {
		for _, cmd := range []string{"cmdstat_evalsha:calls=", "cmdstat_eval:calls="} {
			if v, ok := strings.CutPrefix(line, cmd); ok {
				calls, err := strconv.ParseInt(strings.SplitN(v, ",", 2)[0], 10, 64)
				if err != nil {
					b.Fatal(err)
				}
				n += calls
			}
		}
	}
	return n
}

// scriptArgs returns the script's first four arguments for bk as
// redisstore's Allow computes them (see store.go; the fifth, "", asks
// for Redis's clock): capacity, window in µs, ring slot in µs (0 at a
// capacity of 8 or less) and group size.
func scriptArgs(bk ratelimit.Bucket) (capacity, window, slot, group int64) {
	wsec := int64(bk.Window / time.Second)
	if bk.Capacity > 8 {
		slot = max(1, wsec/60) * 1e6
	}
	return bk.Capacity, wsec * 1e6, slot, (bk.Capacity + 11) / 12
}

// checkAnswer reports an error unless the script answered an admission
// (four values, the first 1).
func checkAnswer(r []int64, err error) error {
	if err != nil {
		return err
	}
	if len(r) != 4 || r[0] != 1 {
		return fmt.Errorf("script answered %v, want an admission", r)
	}
	return nil
}
