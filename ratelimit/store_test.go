package ratelimit

import (
	"context"
	"errors"
	"math"
	"net/http"
	"net/http/httptest"
	"runtime"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/google/go-cmp/cmp"
)

// countingStore is a Store in memory that admits capacity requests per
// bucket, ever: enough to see that the limiter asks it, and with what.
type countingStore struct {
	mu      sync.Mutex
	n       map[Bucket]int64
	buckets []Bucket
	err     error
	block   bool // wait for ctx to end, then fail with its error
}

func (s *countingStore) Allow(ctx context.Context, b Bucket, now time.Time) (Decision, error) {
	if s.block {
		<-ctx.Done()
		return Decision{}, ctx.Err()
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.buckets = append(s.buckets, b)
	if s.err != nil {
		return Decision{}, s.err
	}
	if s.n == nil {
		s.n = map[Bucket]int64{}
	}
	if s.n[b] >= b.Capacity {
		return Decision{RetryAfter: 7 * time.Second}, nil
	}
	s.n[b]++
	return Decision{Allowed: true, Remaining: b.Capacity - s.n[b]}, nil
}

func TestStoreDecides(t *testing.T) {
	s := &countingStore{}
	// A timeout of an hour in these tests, whose stores answer at once: a
	// short one (the default, 100 ms) is a deadline a loaded machine
	// could miss, and the late answer would become FailClosed's 429 (a
	// review saw it).
	l, err := NewLimiter(2, time.Minute, WithStore(s, FailClosed, time.Hour))
	if err != nil {
		t.Fatal(err)
	}
	var got []Decision
	for range 3 {
		got = append(got, l.AllowAt("k", base))
	}
	want := []Decision{{Allowed: true, Remaining: 1}, {Allowed: true}, {RetryAfter: 7 * time.Second}}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("decision %d = %+v, want %+v", i, got[i], want[i])
		}
	}
	if b := s.buckets[0]; b != (Bucket{Key: "k", Capacity: 2, Window: time.Minute}) {
		t.Errorf("bucket = %+v", b)
	}
	if n := l.Len(); n != 0 {
		t.Errorf("Len = %d in process, want 0 (the store holds the buckets)", n)
	}
}

// allocated returns the bytes build allocates: the least of five
// measurements, since what other goroutines allocate meanwhile (left by
// earlier tests, or the race detector's) only adds to one. (Measured as the
// live heap's growth, this test failed 2 runs in 25 under -race.)
func allocated(build func() any) float64 {
	least := math.MaxFloat64
	for range 5 {
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		v := build()
		runtime.ReadMemStats(&after)
		runtime.KeepAlive(v)
		least = min(least, float64(after.TotalAlloc-before.TotalAlloc))
	}
	return least
}

// TestStoreKeepsNoTable: a limiter whose buckets live in a store builds
// no in-process table of its own (64 shards, about 15 KB, without one),
// and Allow, which reads the clock itself, asks the store too.
func TestStoreKeepsNoTable(t *testing.T) {
	s := &countingStore{}
	withStore := allocated(func() any {
		l, _ := NewLimiter(2, time.Minute, WithStore(s, FailClosed, time.Hour))
		return l
	})
	without := allocated(func() any {
		l, _ := NewLimiter(2, time.Minute)
		return l
	})
	if withStore > 2048 || without < 8*withStore {
		t.Errorf("NewLimiter holds %.0f bytes with a store, %.0f without", withStore, without)
	}
	l, _ := NewLimiter(1, time.Minute, WithStore(s, FailClosed, time.Hour))
	if d := l.Allow("k"); !d.Allowed {
		t.Fatalf("first Allow: %+v", d)
	}
	if d := l.Allow("k"); d.Allowed || d.RetryAfter != 7*time.Second {
		t.Fatalf("second Allow, the store's answer: %+v", d)
	}
	if l.Len() != 0 || l.Sweep(time.Now()) != 0 {
		t.Error("the process holds buckets")
	}
}

func TestStoreNamesLimit(t *testing.T) {
	s := &countingStore{}
	doc := `on_http_request:
  - actions:
      - type: rate-limit
        config: {name: a, algorithm: sliding_window, capacity: 1, rate: 60s, bucket_key: [conn.client_ip]}
      - type: rate-limit
        config: {name: b, algorithm: sliding_window, capacity: 1, rate: 60s, bucket_key: [conn.client_ip]}
`
	p, err := NewPolicy([]byte(doc), WithStore(s, FailOpen, time.Second))
	if err != nil {
		t.Fatal(err)
	}
	w := httptest.NewRecorder()
	p.Handler(http.NotFoundHandler()).ServeHTTP(w, newRequest("GET", "http://x/"))
	if len(s.buckets) != 2 || s.buckets[0].Limit != "a" || s.buckets[1].Limit != "b" || s.buckets[0].Key != "203.0.113.7" {
		t.Fatalf("buckets = %+v, want one per action, named", s.buckets)
	}
}

func TestStoreFailureModes(t *testing.T) {
	cfg := Config{Name: "n", Algorithm: "sliding_window", Capacity: 5, Rate: "60s", BucketKey: []string{"conn.client_ip"}}
	for _, tc := range []struct {
		mode FailureMode
		want Result
	}{
		{FailOpen, Result{BucketKey: "203.0.113.7", Remaining: 4, ErrorCode: CodeStoreFailed}},
		{FailClosed, Result{Limited: true, Reject: true, BucketKey: "203.0.113.7", RetryAfter: time.Second, ErrorCode: CodeStoreFailed}},
	} {
		var hooked []Result
		s := &countingStore{err: errors.New("connection refused")}
		l, err := NewLimit(cfg, WithStore(s, tc.mode, 0), WithDecisionHook(func(_ *http.Request, _ string, r Result) {
			hooked = append(hooked, r)
		}))
		if err != nil {
			t.Fatal(err)
		}
		res := l.EvaluateAt(newRequest("GET", "http://x/"), base)
		if !strings.Contains(res.ErrorMessage, "connection refused") {
			t.Errorf("mode %d: message %q does not carry the store's error", tc.mode, res.ErrorMessage)
		}
		res.ErrorMessage = ""
		if res != tc.want {
			t.Errorf("mode %d: result %+v, want %+v", tc.mode, res, tc.want)
		}
		if len(hooked) != 1 || hooked[0].ErrorCode != CodeStoreFailed {
			t.Errorf("mode %d: hook saw %+v", tc.mode, hooked)
		}
	}
}

// TestStoreTimeout: a store that never answers costs the timeout, not a
// hang; the error says so. (synctest: no wall-clock time passes.)
func TestStoreTimeout(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		l, err := NewLimiter(5, time.Minute, WithStore(&countingStore{block: true}, FailClosed, 250*time.Millisecond))
		if err != nil {
			t.Fatal(err)
		}
		start := time.Now()
		d, err := l.AllowContext(context.Background(), "k", base)
		if !errors.Is(err, ErrStoreTimeout) || !errors.Is(err, context.DeadlineExceeded) {
			t.Errorf("err = %v, want ErrStoreTimeout wrapping the deadline", err)
		}
		if d != (Decision{RetryAfter: time.Second}) {
			t.Errorf("decision = %+v, want FailClosed's", d)
		}
		if waited := time.Since(start); waited != 250*time.Millisecond {
			t.Errorf("waited %v of the bubble's clock, want the timeout", waited)
		}
		if d := l.AllowAt("k", base); d.Allowed {
			t.Errorf("AllowAt = %+v, want FailClosed's rejection", d)
		}
	})
}

// storeFunc is a Store made of a function.
type storeFunc func(ctx context.Context, b Bucket, now time.Time) (Decision, error)

func (f storeFunc) Allow(ctx context.Context, b Bucket, now time.Time) (Decision, error) {
	return f(ctx, b, now)
}

// TestStoreLateAnswer pins a review's finding: a store that ignored its
// context and admitted two seconds later, under a timeout of 50 ms, had
// its late admission used, with no error. A late answer now counts as a
// timeout. (synctest: the two seconds are the bubble's.)
func TestStoreLateAnswer(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		late := storeFunc(func(context.Context, Bucket, time.Time) (Decision, error) {
			time.Sleep(2 * time.Second)
			return Decision{Allowed: true, Remaining: 4}, nil
		})
		l, err := NewLimiter(5, time.Minute, WithStore(late, FailClosed, 50*time.Millisecond))
		if err != nil {
			t.Fatal(err)
		}
		d, err := l.AllowContext(context.Background(), "k", base)
		if !errors.Is(err, ErrStoreTimeout) || !strings.Contains(err.Error(), "after its deadline") {
			t.Errorf("err = %v, want ErrStoreTimeout saying the answer came after the deadline", err)
		}
		if d != (Decision{RetryAfter: time.Second}) {
			t.Errorf("decision = %+v, want FailClosed's", d)
		}
	})
}

// TestStoreInvalidDecision pins a review's finding: a store's decision
// reached the wire as it was, Retry-After: -5 included. A decision the
// limiter could not have made is now the store's failure.
func TestStoreInvalidDecision(t *testing.T) {
	for _, bad := range []Decision{
		{RetryAfter: -5 * time.Second, Remaining: 0},
		{RetryAfter: 0},
		{RetryAfter: 1500 * time.Millisecond},
		{RetryAfter: time.Second, Remaining: -3},
		{Allowed: true, Remaining: 6},
		{Allowed: true, RetryAfter: time.Second},
	} {
		s := storeFunc(func(context.Context, Bucket, time.Time) (Decision, error) { return bad, nil })
		l, err := NewLimiter(5, time.Minute, WithStore(s, FailOpen, time.Hour))
		if err != nil {
			t.Fatal(err)
		}
		d, err := l.AllowContext(context.Background(), "k", base)
		if err == nil || !strings.Contains(err.Error(), "invalid decision") || errors.Is(err, ErrStoreTimeout) {
			t.Errorf("%+v: err = %v; want an invalid decision, not a timeout", bad, err)
		}
		if d != (Decision{Allowed: true, Remaining: 4}) {
			t.Errorf("%+v: decision = %+v; want FailOpen's", bad, d)
		}
	}
	// The limits themselves are decisions the limiter makes.
	for _, good := range []Decision{{RetryAfter: time.Hour}, {Allowed: true, Remaining: 0}, {Allowed: true, Remaining: 5}} {
		s := storeFunc(func(context.Context, Bucket, time.Time) (Decision, error) { return good, nil })
		l, _ := NewLimiter(5, time.Minute, WithStore(s, FailOpen, time.Hour))
		if d, err := l.AllowContext(context.Background(), "k", base); err != nil || d != good {
			t.Errorf("%+v: got %+v, %v", good, d, err)
		}
	}
}

// TestWithStoreMisuse pins a review's finding: WithStore(nil, ...) meant
// "no store", so a test that built its store wrong (a nil *Store from a
// constructor that failed) ran in process and passed; a negative timeout
// meant the default. Each is now an error of every constructor, naming
// WithStore; a timeout of 0 still means DefaultStoreTimeout.
func TestWithStoreMisuse(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		name string
		opt  Option
		want string
	}{
		{"nil", WithStore(nil, FailOpen, 0), "ratelimit: WithStore: the Store is nil"},
		{"nil pointer", WithStore((*countingStore)(nil), FailOpen, 0), "ratelimit: WithStore: the Store is a nil *ratelimit.countingStore"},
		{"nil function", WithStore(storeFunc(nil), FailClosed, 0), "ratelimit: WithStore: the Store is a nil ratelimit.storeFunc"},
		{"negative timeout", WithStore(&countingStore{}, FailClosed, -time.Second), "ratelimit: WithStore: the timeout -1s is negative"},
	} {
		if _, err := NewLimiter(1, time.Minute, tt.opt); err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%s: NewLimiter = %v; want an error containing %q", tt.name, err, tt.want)
		}
		if _, err := NewLimit(keyConfig("req.host"), tt.opt); err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%s: NewLimit = %v; want an error containing %q", tt.name, err, tt.want)
		}
		if _, err := NewPolicy([]byte(sameNamesPolicy), tt.opt); err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%s: NewPolicy = %v; want an error containing %q", tt.name, err, tt.want)
		}
	}
	l, err := NewLimiter(1, time.Minute, WithStore(&countingStore{}, FailOpen, 0))
	if err != nil {
		t.Fatal(err)
	}
	if l.shared == nil || l.shared.timeout != DefaultStoreTimeout {
		t.Errorf("WithStore(s, FailOpen, 0): store %+v; want the timeout DefaultStoreTimeout", l.shared)
	}
}

// sameNamesPolicy has three rate-limit actions, one a path, capacity 2:
// two share a name, and the third is named as a second action of that
// name would be if it took the name with " #2".
const sameNamesPolicy = `on_http_request:
  - expressions: ["req.url.path == '/a'"]
    actions:
      - type: rate-limit
        config: {name: Only allow 2 requests per minute, algorithm: sliding_window, capacity: 2, rate: 60s, bucket_key: [conn.client_ip]}
  - expressions: ["req.url.path == '/b'"]
    actions:
      - type: rate-limit
        config: {name: Only allow 2 requests per minute, algorithm: sliding_window, capacity: 2, rate: 60s, bucket_key: [conn.client_ip]}
  - expressions: ["req.url.path == '/c'"]
    actions:
      - type: rate-limit
        config: {name: "Only allow 2 requests per minute #2", algorithm: sliding_window, capacity: 2, rate: 60s, bucket_key: [conn.client_ip]}
`

// TestStoreSameDecisionsAsInProcess pins a finding of a review: with a
// store, two rate-limit actions of one name shared their buckets (the
// store's bucket was named by the name alone), without one they did not,
// so one policy limited /a and /b together or apart depending on where
// its buckets lived. Each action now has buckets of its own in both.
func TestStoreSameDecisionsAsInProcess(t *testing.T) {
	t.Parallel()
	paths := []string{"/a", "/a", "/b", "/b", "/c", "/c", "/a", "/b", "/c"}
	statuses := func(opts ...PolicyOption) []int {
		h := mustPolicy(t, sameNamesPolicy, append(opts, WithClock(func() time.Time { return base }))...).Handler(okHandler)
		var got []int
		for _, path := range paths {
			got = append(got, serve(h, newRequest("GET", "http://h"+path)).Status)
		}
		return got
	}
	want := []int{200, 200, 200, 200, 200, 200, 429, 429, 429}
	if diff := cmp.Diff(want, statuses()); diff != "" {
		t.Errorf("in process (-want +got):\n%s", diff)
	}
	s := &countingStore{}
	if diff := cmp.Diff(want, statuses(WithStore(s, FailClosed, time.Hour))); diff != "" {
		t.Errorf("with a store (-want +got):\n%s", diff)
	}
	// Every process running the policy names the buckets alike.
	var names []string
	for _, b := range s.buckets[:6] {
		names = append(names, b.Limit)
	}
	const n = "Only allow 2 requests per minute"
	if diff := cmp.Diff([]string{n, n, n + " #3", n + " #3", n + " #2", n + " #2"}, names); diff != "" {
		t.Errorf("Bucket.Limit (-want +got):\n%s", diff)
	}
}
