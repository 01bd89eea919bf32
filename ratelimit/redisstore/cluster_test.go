package redisstore

import (
	"context"
	"flag"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/acctapi/acctapi/ratelimit"
	"github.com/acctapi/acctapi/ratelimit/redisstore/internal/redistest"
	"github.com/redis/go-redis/v9"
	"pgregory.net/rapid"
)

// TestMain lengthens the property tests when ACCTAPI_LONG is set,
// silences go-redis's log of failed dials (the fault tests stop the
// server on purpose), and starts a redis-server for the examples at
// REDIS_ADDR. Without redis-server (and ACCTAPI_REQUIRE_REDIS unset) it
// skips the package, as each test would skip.
func TestMain(m *testing.M) {
	flag.Parse()
	if os.Getenv("ACCTAPI_LONG") != "" {
		if f := flag.Lookup("rapid.checks"); f != nil && f.Value.String() == "100" {
			_ = flag.Set("rapid.checks", "5000")
		}
	}
	redis.SetLogger(quiet{})
	os.Exit(run(m))
}

func run(m *testing.M) int {
	bin, err := exec.LookPath("redis-server")
	if err != nil {
		if os.Getenv("ACCTAPI_REQUIRE_REDIS") != "" {
			fmt.Fprintln(os.Stderr, "redis-server not found and ACCTAPI_REQUIRE_REDIS is set:", err)
			return 1
		}
		fmt.Println("skipping: redis-server not found (apt-get install redis-server); set ACCTAPI_REQUIRE_REDIS=1 to make this a failure")
		return 0
	}
	dir, err := os.MkdirTemp("", "redisstore")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer os.RemoveAll(dir)
	cmd, port, err := redistest.LaunchFree(bin, dir)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
	}()
	os.Setenv("REDIS_ADDR", "127.0.0.1:"+strconv.Itoa(port))
	return m.Run()
}

type quiet struct{}

func (quiet) Printf(context.Context, string, ...any) {}

// decision is one request as the server decided it: its bucket's Redis
// key, whether it was admitted, and the time the script used.
type decision struct {
	key     string
	allowed bool
	at      time.Time
}

// TestAcrossProcesses: four limiters, each with its own store and client
// (four processes), share one Redis and hit the same keys from 16
// goroutines on random timelines. For every key, the log of admissions on
// the server's timeline never has more than capacity in a window, and all
// checks together admit at least 95% of what an exact sliding log admits
// on the same requests.
func TestAcrossProcesses(t *testing.T) {
	srv := startServer(t)
	var (
		mu  sync.Mutex
		log []decision
	)
	stores := make([]*Store, 4)
	for i := range stores {
		stores[i] = New(srv.client(), WithCallerClock())
		stores[i].observe = func(key string, allowed bool, at time.Time) {
			mu.Lock()
			log = append(log, decision{key, allowed, at})
			mu.Unlock()
		}
	}
	const window = time.Minute
	var admitted, exact, requests int
	n := 0
	rapid.Check(t, func(t *rapid.T) {
		n++
		log = log[:0]
		capacity := rapid.SampledFrom([]int64{1, 3, 8, 9, 20, 100}).Draw(t, "capacity")
		keys := rapid.IntRange(1, 3).Draw(t, "keys")
		limiters := make([]*ratelimit.Limiter, len(stores))
		for i, st := range stores {
			// The same limit in every process; a new one per check.
			l, err := ratelimit.NewLimiter(capacity, window, ratelimit.WithStore(prefixed{st, fmt.Sprint(n)}, ratelimit.FailClosed, time.Hour)) // no deadline that a loaded machine could miss: the test counts admissions
			if err != nil {
				t.Fatal(err)
			}
			limiters[i] = l
		}
		type req struct {
			gap     time.Duration
			key     string
			limiter int
		}
		// The requests spread over a few windows (a quarter of them in
		// bursts), so that admissions leave windows and come back.
		span := time.Duration(rapid.IntRange(2, 6).Draw(t, "windows")) * window
		counts := make([]int, 16)
		total := 0
		for g := range counts {
			counts[g] = rapid.IntRange(0, 100).Draw(t, "requests")
			total += counts[g]
		}
		maxGap := 8 * int64(span/time.Microsecond) / int64(3*max(total, 1))
		plans := make([][]req, len(counts))
		for g := range plans {
			for range counts[g] {
				gap := time.Duration(0)
				if rapid.IntRange(0, 3).Draw(t, "burst") > 0 {
					gap = time.Duration(rapid.Int64Range(0, maxGap).Draw(t, "gap µs")) * time.Microsecond
				}
				plans[g] = append(plans[g], req{gap, fmt.Sprint("k", rapid.IntRange(1, keys).Draw(t, "key")), rapid.IntRange(0, 3).Draw(t, "limiter")})
			}
		}
		var clock atomic.Int64 // µs after base: the processes' shared timeline
		err := concurrently(len(plans), func(g int) error {
			for _, r := range plans[g] {
				now := base.Add(time.Duration(clock.Add(int64(r.gap/time.Microsecond))) * time.Microsecond)
				if _, err := limiters[r.limiter].AllowContext(context.Background(), r.key, now); err != nil {
					return err
				}
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		byKey := map[string][]decision{}
		for _, d := range log {
			byKey[d.key] = append(byKey[d.key], d)
		}
		for key, ds := range byKey {
			a, e := checkBucket(t, key, ds, capacity, window)
			admitted += a
			requests += len(ds)
			exact += e
		}
	})
	t.Logf("%d requests: admitted %d, an exact sliding log %d", requests, admitted, exact)
	if float64(admitted) < 0.95*float64(exact) {
		t.Errorf("admitted %d, less than 95%% of an exact sliding log's %d", admitted, exact)
	}
}

// concurrently runs f(0) to f(n-1) on n goroutines and returns the first
// error one of them returned, or nil.
func concurrently(n int, f func(g int) error) error {
	errs := make(chan error, n)
	var wg sync.WaitGroup
	for g := range n {
		wg.Go(func() {
			if err := f(g); err != nil {
				errs <- err
			}
		})
	}
	wg.Wait()
	close(errs)
	return <-errs
}

// checkBucket sorts ds, one bucket's decisions, by time, fails t if the
// admissions among them exceed capacity in a window, and returns how many
// were admitted and how many an exact sliding log admits.
func checkBucket(t interface {
	Helper()
	Fatalf(string, ...any)
}, key string, ds []decision, capacity int64, window time.Duration) (admitted, exact int) {
	t.Helper()
	slices.SortStableFunc(ds, func(a, b decision) int { return a.at.Compare(b.at) })
	var got []time.Time
	for _, d := range ds {
		if d.allowed {
			got = append(got, d.at)
		}
	}
	if m, at := maxInWindow(got, window); m > int(capacity) {
		t.Fatalf("key %s: %d admissions in the window ending %v, capacity %d", key, m, at, capacity)
	}
	return len(got), exactLog(ds, capacity, window)
}

// exactLog returns how many of ds (sorted by time) an exact sliding log
// of capacity per window admits.
func exactLog(ds []decision, capacity int64, window time.Duration) int {
	var q []time.Time
	n := 0
	for _, d := range ds {
		for len(q) > 0 && !q[0].Add(window).After(d.at) {
			q = q[1:]
		}
		if int64(len(q)) < capacity {
			q = append(q, d.at)
			n++
		}
	}
	return n
}

// prefixed gives every check of a property its own buckets.
type prefixed struct {
	s      *Store
	prefix string
}

func (p prefixed) Allow(ctx context.Context, b ratelimit.Bucket, now time.Time) (ratelimit.Decision, error) {
	b.Limit = p.prefix + b.Limit
	return p.s.Allow(ctx, b, now)
}

// TestServerClockAcrossProcesses is TestAcrossProcesses on the default
// path, where the Redis server's TIME decides: four limiter processes
// (each its own store and client) whose clocks are skewed by minutes share
// one Redis, and 16 goroutines decide on the same keys in real time until
// the server's timeline spans four windows of a second. Every decision's
// time lies on the server's clock (between a TIME read before the run and
// one after it, whatever the callers passed), no window of the server's
// timeline holds more than capacity admissions for a bucket, and the
// admissions are at least 95% of an exact sliding log's on the same
// timeline. Decisions have an hour each: the test counts outcomes only.
func TestServerClockAcrossProcesses(t *testing.T) {
	srv := startServer(t)
	ctx := context.Background()
	const (
		window = time.Second
		span   = 4 * window
		keys   = 2
	)
	capacities := []int64{1, 3, 8, 9, 20}
	// The callers' clocks: one right, the others minutes off either way.
	skews := []time.Duration{0, -7 * time.Minute, 3 * time.Minute, 11 * time.Minute}
	// The run ends once the server's timeline spans span and every bucket
	// has had minPerBucket decisions: a machine that stalls early in the
	// span still decides every bucket.
	const minPerBucket = 50
	var (
		mu      sync.Mutex
		log     []decision
		first   time.Time
		done    atomic.Bool
		perKey  = map[string]int{}
		lacking = len(capacities) * keys // buckets with fewer than minPerBucket
	)
	observe := func(key string, allowed bool, at time.Time) {
		mu.Lock()
		defer mu.Unlock()
		log = append(log, decision{key, allowed, at})
		if perKey[key]++; perKey[key] == minPerBucket {
			lacking--
		}
		if first.IsZero() || at.Before(first) {
			first = at
		}
		if at.Sub(first) >= span && lacking == 0 {
			done.Store(true)
		}
	}
	limiters := make([][]*ratelimit.Limiter, len(skews)) // per process, per capacity
	capacityOf := map[string]int64{}                     // Redis key → capacity
	for p := range limiters {
		st := New(srv.client())
		st.observe = observe
		for _, c := range capacities {
			l, err := ratelimit.NewLimiter(c, window, ratelimit.WithStore(st, ratelimit.FailClosed, time.Hour))
			if err != nil {
				t.Fatal(err)
			}
			limiters[p] = append(limiters[p], l)
			for k := range keys {
				capacityOf[st.Key(ratelimit.Bucket{Key: fmt.Sprint("k", k), Capacity: c, Window: window})] = c
			}
		}
	}
	admin := srv.client()
	before, err := admin.Time(ctx).Result()
	if err != nil {
		t.Fatal(err)
	}
	const maxPerGoroutine = 200_000 // a bound that ends the run should the server's clock stand still
	err = concurrently(16, func(g int) error {
		rng := rand.New(rand.NewPCG(uint64(g), 16))
		for n := 0; !done.Load() && n < maxPerGoroutine; n++ {
			p := rng.IntN(len(limiters))
			l := limiters[p][rng.IntN(len(capacities))]
			if _, err := l.AllowContext(ctx, fmt.Sprint("k", rng.IntN(keys)), time.Now().Add(skews[p])); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	after, err := admin.Time(ctx).Result()
	if err != nil {
		t.Fatal(err)
	}
	if !done.Load() {
		t.Fatalf("the server's timeline spans less than %v, or a bucket had fewer than %d decisions, after %d decisions per goroutine", span, minPerBucket, maxPerGoroutine)
	}
	byKey := map[string][]decision{}
	for _, d := range log {
		if d.at.Before(before) || d.at.After(after) {
			t.Fatalf("a decision at %v, outside the server's TIME %v to %v: not the server's clock", d.at, before, after)
		}
		byKey[d.key] = append(byKey[d.key], d)
	}
	if len(byKey) != len(capacityOf) {
		t.Fatalf("%d buckets decided, want %d", len(byKey), len(capacityOf))
	}
	var admitted, exact int
	for key, ds := range byKey {
		capacity, ok := capacityOf[key]
		if !ok {
			t.Fatalf("a decision on an unknown key %s", key)
		}
		a, e := checkBucket(t, key, ds, capacity, window)
		t.Logf("capacity %d: %d requests, admitted %d, an exact sliding log %d", capacity, len(ds), a, e)
		admitted += a
		exact += e
	}
	t.Logf("%d requests: admitted %d, an exact sliding log %d", len(log), admitted, exact)
	if float64(admitted) < 0.95*float64(exact) {
		t.Errorf("admitted %d, less than 95%% of an exact sliding log's %d", admitted, exact)
	}
}
