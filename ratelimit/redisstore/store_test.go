package redisstore

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/acctapi/acctapi/ratelimit"
	"github.com/redis/go-redis/v9"
	"pgregory.net/rapid"
)

var base = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

func limiter(t testing.TB, st ratelimit.Store, capacity int64, window time.Duration, mode ratelimit.FailureMode) *ratelimit.Limiter {
	t.Helper()
	l, err := ratelimit.NewLimiter(capacity, window, ratelimit.WithStore(st, mode, time.Hour)) // no deadline a loaded machine could miss: the tests assert exact decisions
	if err != nil {
		t.Fatal(err)
	}
	return l
}

// TestWindowEdge: capacity 3 per minute on the caller's clock; the fourth
// request waits until the first leaves the window, and no longer.
func TestWindowEdge(t *testing.T) {
	srv := startServer(t)
	l := limiter(t, New(srv.client(), WithCallerClock()), 3, time.Minute, ratelimit.FailClosed)
	ctx := context.Background()
	step := func(at time.Duration, wantOK bool, wantRetry time.Duration) {
		t.Helper()
		d, err := l.AllowContext(ctx, "k", base.Add(at))
		if err != nil {
			t.Fatal(err)
		}
		if d.Allowed != wantOK || d.RetryAfter != wantRetry {
			t.Fatalf("at %v: %+v, want allowed=%v retry=%v", at, d, wantOK, wantRetry)
		}
	}
	step(0, true, 0)
	step(time.Second, true, 0)
	step(2*time.Second, true, 0)
	step(10*time.Second, false, 50*time.Second)
	step(60*time.Second-time.Microsecond, false, time.Second)
	step(60*time.Second, true, 0)
	step(60*time.Second, false, time.Second)
	step(61*time.Second, true, 0)
}

// TestRedisProperties: on random timelines and capacities, on one key,
// the admissions never exceed capacity in any window, and each
// rejection's retry-after is truthful: that much later the key is
// admitted.
func TestRedisProperties(t *testing.T) {
	srv := startServer(t)
	st := New(srv.client(), WithCallerClock())
	ctx := context.Background()
	n := 0
	rapid.Check(t, func(t *rapid.T) {
		n++
		capacity := rapid.SampledFrom([]int64{1, 2, 5, 8, 9, 20, 100, 1000}).Draw(t, "capacity")
		window := time.Duration(rapid.SampledFrom([]int{1, 10, 60, 3600}).Draw(t, "window")) * time.Minute
		b := ratelimit.Bucket{Limit: fmt.Sprint("p", n), Key: "k", Capacity: capacity, Window: window}
		var admitted []time.Time
		now := base
		steps := rapid.IntRange(1, 300).Draw(t, "steps")
		for i := range steps {
			gap := rapid.SampledFrom([]time.Duration{0, time.Microsecond, time.Second, window / 7, window - time.Microsecond, window}).Draw(t, "gap")
			if rapid.Bool().Draw(t, "random gap") {
				gap = time.Duration(rapid.Int64Range(0, int64(window)/int64(time.Microsecond)).Draw(t, "µs")) * time.Microsecond
			}
			now = now.Add(gap)
			d, err := st.Allow(ctx, b, now)
			if err != nil {
				t.Fatal(err)
			}
			if d.Allowed {
				admitted = append(admitted, now)
				continue
			}
			// Not too long either: at most a slot (max(1 s, window/60))
			// past what an exact sliding log of the admissions would
			// answer, rounded up to whole seconds.
			exact := time.Duration(0)
			if k := len(admitted) - int(capacity); k >= 0 {
				exact = max(0, admitted[k].Add(window).Sub(now))
			}
			if most := (exact + max(time.Second, window/60) + time.Second - 1).Truncate(time.Second); d.RetryAfter > most {
				t.Fatalf("rejected at %v with retry-after %v; an exact log says %v, so at most %v", now.Sub(base), d.RetryAfter, exact, most)
			}
			if i == steps-1 || rapid.Bool().Draw(t, "check retry") {
				later := now.Add(d.RetryAfter)
				if d, err := st.Allow(ctx, b, later); err != nil || !d.Allowed {
					t.Fatalf("rejected at %v with retry-after %v, but %v later: %+v %v", now.Sub(base), d.RetryAfter, d.RetryAfter, d, err)
				}
				admitted = append(admitted, later)
				now = later
			}
		}
		if m, at := maxInWindow(admitted, window); m > int(capacity) {
			t.Fatalf("%d admissions in the window ending %v, capacity %d", m, at.Sub(base), capacity)
		}
	})
}

// maxInWindow returns the most times of ts (sorted) inside any window
// (x-window, x], and the end of one such window.
func maxInWindow(ts []time.Time, window time.Duration) (int, time.Time) {
	best, at, j := 0, time.Time{}, 0
	for i := range ts {
		for ts[i].Sub(ts[j]) >= window {
			j++
		}
		if i-j+1 > best {
			best, at = i-j+1, ts[i]
		}
	}
	return best, at
}

// TestServerClock: without WithCallerClock the server's TIME decides, so
// the caller's time does not matter.
func TestServerClock(t *testing.T) {
	srv := startServer(t)
	l := limiter(t, New(srv.client()), 2, time.Hour, ratelimit.FailClosed)
	for i, at := range []time.Time{base, base.Add(-24 * time.Hour), base.Add(24 * time.Hour)} {
		d, err := l.AllowContext(context.Background(), "k", at)
		if err != nil {
			t.Fatal(err)
		}
		if wantOK := i < 2; d.Allowed != wantOK {
			t.Fatalf("request %d: %+v", i, d)
		}
		if i == 2 && (d.RetryAfter < time.Second || d.RetryAfter > time.Hour) {
			t.Fatalf("retry-after %v not within the window", d.RetryAfter)
		}
	}
}

// TestKeys: one key per bucket, hashed, expiring with its window; limits
// that differ in name, capacity or window are different buckets.
func TestKeys(t *testing.T) {
	srv := startServer(t)
	c := srv.client()
	st := New(c, WithPrefix("rl:"), WithCallerClock())
	ctx := context.Background()
	b := ratelimit.Bucket{Limit: "per-ip", Key: "203.0.113.7", Capacity: 100, Window: time.Minute}
	for _, x := range []ratelimit.Bucket{b, {Limit: "other", Key: b.Key, Capacity: 100, Window: time.Minute},
		{Limit: b.Limit, Key: b.Key, Capacity: 99, Window: time.Minute}, {Limit: b.Limit, Key: b.Key, Capacity: 100, Window: time.Hour}} {
		if d, err := st.Allow(ctx, x, base); err != nil || d.Remaining != 99-(100-x.Capacity) {
			t.Fatalf("%+v: %+v %v, want a fresh bucket", x, d, err)
		}
	}
	keys, err := c.Keys(ctx, "*").Result()
	if err != nil {
		t.Fatal(err)
	}
	if len(keys) != 4 {
		t.Fatalf("keys %q, want 4", keys)
	}
	for _, k := range keys {
		if !strings.HasPrefix(k, "rl:") || len(k) != len("rl:")+22 || strings.Contains(k, "203.0.113") || strings.Contains(k, "per-ip") {
			t.Errorf("key %q is not prefix + 22 base64 digits", k)
		}
	}
	k := st.Key(b)
	ttl, err := c.PTTL(ctx, k).Result()
	if err != nil {
		t.Fatal(err)
	}
	// Window + slot (1s) + 1ms after the latest admission.
	if ttl <= 0 || ttl > 61001*time.Millisecond {
		t.Errorf("ttl %v, want at most 61.001s", ttl)
	}
	if n, err := c.StrLen(ctx, k).Result(); err != nil || n != 37 {
		t.Errorf("record %d bytes (%v), want 37: header 17, a group 12, a slot 8", n, err)
	}
}

// TestStoppedServer: with Redis down, FailOpen admits and FailClosed
// rejects, both with the error in the Result; after a restart (an empty
// server, without the script) decisions are the store's again.
func TestStoppedServer(t *testing.T) {
	srv := startServer(t)
	c := srv.client()
	cfg := ratelimit.Config{Name: "n", Algorithm: "sliding_window", Capacity: 1, Rate: "60s", BucketKey: []string{"conn.client_ip"}}
	limits := map[ratelimit.FailureMode]*ratelimit.Limit{}
	for _, mode := range []ratelimit.FailureMode{ratelimit.FailOpen, ratelimit.FailClosed} {
		l, err := ratelimit.NewLimit(cfg, ratelimit.WithStore(New(c, WithPrefix(fmt.Sprint(mode))), mode, time.Hour)) // a refused connection fails at once; no deadline a loaded machine could miss
		if err != nil {
			t.Fatal(err)
		}
		limits[mode] = l
	}
	req := func() *http.Request { return httptest.NewRequest("GET", "http://x/", nil) }
	for mode, l := range limits {
		if res := l.Evaluate(req()); res.Limited || res.ErrorCode != "" {
			t.Fatalf("mode %d, up: %+v", mode, res)
		}
	}
	srv.stop()
	for mode, l := range limits {
		res := l.Evaluate(req())
		if res.ErrorCode != ratelimit.CodeStoreFailed || res.ErrorMessage == "" {
			t.Errorf("mode %d, down: %+v, want the store's error", mode, res)
		}
		if want := mode == ratelimit.FailClosed; res.Limited != want || res.Reject != want {
			t.Errorf("mode %d, down: limited %v, want %v", mode, res.Limited, want)
		}
	}
	srv.start()
	for mode, l := range limits {
		// The restarted server is empty: a fresh bucket, then a full one.
		if res := l.Evaluate(req()); res.Limited || res.ErrorCode != "" {
			t.Errorf("mode %d, restarted: %+v", mode, res)
		}
		if res := l.Evaluate(req()); !res.Limited || res.ErrorCode != "" {
			t.Errorf("mode %d, restarted, second request: %+v", mode, res)
		}
	}
}

// TestPausedServer: with the server paused (CLIENT PAUSE), a decision
// ends at the limiter's timeout with ErrStoreTimeout and the failure
// mode's decision, whether the client honours context deadlines itself or
// the store has to guard it.
func TestPausedServer(t *testing.T) {
	srv := startServer(t)
	admin := srv.client()
	honours := srv.client()
	ignores := srv.client(func(o *redis.Options) { o.ContextTimeoutEnabled = false })
	stores := map[string]*Store{"ContextTimeoutEnabled": New(honours), "guarded": New(ignores)}
	if stores["ContextTimeoutEnabled"].guard || !stores["guarded"].guard {
		t.Fatal("guard chosen wrongly")
	}
	for _, st := range stores {
		if _, err := st.Allow(context.Background(), ratelimit.Bucket{Key: "warm", Capacity: 5, Window: time.Minute}, base); err != nil {
			t.Fatal(err)
		}
	}
	if err := admin.Do(context.Background(), "CLIENT", "PAUSE", "600000", "ALL").Err(); err != nil {
		t.Fatal(err)
	}
	for name, st := range stores {
		l, err := ratelimit.NewLimiter(5, time.Minute, ratelimit.WithStore(st, ratelimit.FailClosed, 100*time.Millisecond))
		if err != nil {
			t.Fatal(err)
		}
		d, err := l.AllowContext(context.Background(), "k", base)
		if !errors.Is(err, ratelimit.ErrStoreTimeout) {
			t.Errorf("%s: err %v, want ErrStoreTimeout", name, err)
		}
		if d.Allowed {
			t.Errorf("%s: %+v, want FailClosed's rejection", name, d)
		}
	}
	srv.stop() // the paused server would hold the clients' connections
}

// TestBadBucket: what the limiter never passes is an error, not a script
// error on the server.
func TestBadBucket(t *testing.T) {
	st := New(redis.NewClient(&redis.Options{Addr: "127.0.0.1:1"}))
	for _, b := range []ratelimit.Bucket{{Capacity: 0, Window: time.Minute}, {Capacity: 1, Window: time.Millisecond}} {
		if _, err := st.Allow(context.Background(), b, base); !errors.Is(err, ErrBucket) {
			t.Errorf("%+v: %v, want ErrBucket", b, err)
		}
	}
}

// TestNewNilClient checks that a nil client is refused when the store is
// made (found by a black-box check: it was accepted, and the first
// decision crashed the process from a goroutine no caller could recover).
func TestNewNilClient(t *testing.T) {
	defer func() {
		if r := recover(); r == nil || !strings.Contains(fmt.Sprint(r), "nil client") {
			t.Errorf("recovered %v; want a panic naming the nil client", r)
		}
	}()
	New(nil)
}

// TestPolicySameNames: two rate-limit actions of one policy that share a
// name keep their own buckets on Redis, as they do in process (a review
// found them sharing one), and a second process running the policy shares
// each action's buckets with the first.
func TestPolicySameNames(t *testing.T) {
	srv := startServer(t)
	const doc = `on_http_request:
  - expressions: ["req.url.path == '/a'"]
    actions:
      - type: rate-limit
        config: {name: per client, algorithm: sliding_window, capacity: 2, rate: 60s, bucket_key: [conn.client_ip]}
  - expressions: ["req.url.path == '/b'"]
    actions:
      - type: rate-limit
        config: {name: per client, algorithm: sliding_window, capacity: 2, rate: 60s, bucket_key: [conn.client_ip]}
`
	handler := func(opts ...ratelimit.PolicyOption) http.Handler {
		p, err := ratelimit.NewPolicy([]byte(doc), append(opts, ratelimit.WithClock(func() time.Time { return base }))...)
		if err != nil {
			t.Fatal(err)
		}
		return p.Handler(http.HandlerFunc(func(http.ResponseWriter, *http.Request) {}))
	}
	status := func(h http.Handler, path string) int {
		w := httptest.NewRecorder()
		h.ServeHTTP(w, httptest.NewRequest("GET", path, nil))
		return w.Code
	}
	store := New(srv.client(), WithCallerClock())
	inProcess := handler()
	replicas := []http.Handler{handler(ratelimit.WithStore(store, ratelimit.FailClosed, time.Hour)),
		handler(ratelimit.WithStore(store, ratelimit.FailClosed, time.Hour))}
	var got, want []int
	for i, path := range []string{"/a", "/b", "/a", "/b", "/a", "/b"} {
		want = append(want, status(inProcess, path))
		got = append(got, status(replicas[i/2%2], path)) // each /a, /b pair from the other replica than the last
	}
	if fmt.Sprint(want) != "[200 200 200 200 429 429]" {
		t.Fatalf("in process: %v", want)
	}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("on Redis: %v, want %v as in process", got, want)
	}
}
