// Package redisstore is a [ratelimit.Store] on Redis: limiters in many
// processes share their buckets, so a limit of capacity per window holds
// for the cluster rather than per process.
//
// Each decision is one atomic Lua script on the server (one round trip,
// EVALSHA, loaded on first use). It keeps the in-process limiter's
// guarantee: never more than capacity admissions for a bucket in any window
// of its length, rejected requests not counted, and a truthful
// retry-after (a request for the bucket sent that many seconds later, with
// none in between, is admitted). Decisions are timed by the Redis server's
// TIME, one clock for every process, so replicas with skewed clocks still
// never exceed capacity together.
//
// # Record
//
// A bucket is one Redis string, the same two conservative counts as the
// in-process limiter (see ratelimit's limiter_bucket.go), with exact
// microsecond times instead of a grid:
//
//   - up to 8 groups of consecutive admissions, each the time of its latest
//     admission and its count; an admission joins the newest group at the
//     same instant or while it holds fewer than ceil(capacity/12), a group
//     leaves the window in full when its latest admission does. With a
//     capacity of 8 or less the groups are an exact sliding log.
//   - above a capacity of 8, a ring of counters per slot of
//     max(1s, window/60) in whole seconds, a slot counted in full until its
//     last instant has left the window.
//
// A request is admitted while the smaller count is below capacity. The
// record is little-endian: the latest time (float64 µs), the number of
// groups (a byte), the ring's total (float64), then per group its time
// (float64 µs) and count (uint32), then per live slot its number and count
// (uint32 each), oldest first: 29 bytes for a bucket with one admission
// (37 with a ring), at most 17 + 8×12 + 8 × (slots in a window + 1)
// bytes. A decision reads the ring's slots only to drop those that left
// the window (and, on a rejection, to compute retry-after), so its cost
// does not grow with the ring. The record expires window + slot after its
// latest admission, when it no longer counts anything; a rejected request
// writes nothing.
//
// Keys are the prefix and 128 bits of a SHA-256 of the bucket's limit
// name, capacity, window and key (22 characters, unpadded base64url): no
// request data is stored in clear, and limits that differ in any of those
// never share a bucket.
//
// # Faults
//
// A decision that ran out of the limiter's time may still reach Redis
// later, held up by the network, and be counted there although the
// limiter has applied its failure mode (under FailOpen the request was
// admitted uncounted, and is then counted as well). Such a late admission
// only makes the limit stricter for a window; it never lets more than
// capacity through.
//
// A Redis that restarts without its data (no persistence, or a failover
// to a replica that had not yet received the latest writes) starts with
// empty buckets: in a window spanning the restart, the server before it
// and the one after it may each admit up to capacity. Each server alone
// never admits more.
//
// A Redis that cannot be reached (down, or a wrong address) is retried by
// go-redis, which decides how long through redis.Options (DialTimeout,
// MaxRetries, the retry backoffs): with its default options, about 1.7 s
// (go-redis v9.23, measured by a review). A decision's timeout
// (ratelimit.WithStore) shorter than that ends first: the decision waits
// the whole timeout, and its error is ratelimit.ErrStoreTimeout around
// the context's, not "connection refused", which reaches go-redis's own
// log only. With a longer timeout the error is the dial's, after the
// retries. Either way the failure mode applies.
package redisstore

import (
	"context"
	"crypto/sha256"
	_ "embed"
	"encoding/base64"
	"encoding/binary"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/acctapi/acctapi/ratelimit"
	"github.com/redis/go-redis/v9"
)

//go:embed script.lua
var scriptSource string

var script = redis.NewScript(scriptSource)

// DefaultPrefix starts every key the store writes unless [WithPrefix]
// says otherwise.
const DefaultPrefix = "ratelimit:"

// A Store keeps [ratelimit] buckets on Redis. It is safe for concurrent
// use; create one with [New] and give it to the limiter with
// [ratelimit.WithStore].
type Store struct {
	c           redis.Scripter
	prefix      string
	callerClock bool
	guard       bool                                         // the client may ignore ctx's deadline
	observe     func(key string, allowed bool, at time.Time) // tests: every decision's time
}

// An Option configures a [Store].
type Option func(*Store)

// WithPrefix starts every key with prefix instead of [DefaultPrefix].
func WithPrefix(prefix string) Option {
	return func(s *Store) { s.prefix = prefix }
}

// WithCallerClock makes decisions use the time the limiter passes in
// (ratelimit's AllowAt, EvaluateAt) instead of the Redis server's TIME.
// It exists for tests, which need windows on a clock they control; keys
// still expire on the server's clock (window + slot after their latest
// admission), so a test's times must not run ahead of it by more than
// that, and must lie between 1970 and 2106 (the record's slot numbers
// are 32-bit). Times are used to the microsecond, as the server's are
// (the nanoseconds are dropped): two requests less than a window apart
// but a whole number of microseconds apart once truncated can both be
// admitted, where the in-process limiter, which keeps nanoseconds, admits
// one. In production, processes with skewed clocks could together
// admit more than capacity under this option; leave it out.
func WithCallerClock() Option {
	return func(s *Store) { s.callerClock = true }
}

// New returns a store on c: a *redis.Client, *redis.ClusterClient,
// *redis.Ring, or any other client with go-redis's scripting commands
// (redis.Scripter), for example one the program already has. Each bucket
// is one key, so a cluster is fine.
//
// A decision must end by its context's deadline (the limiter's timeout).
// go-redis honours deadlines only with ContextTimeoutEnabled; for a
// client of those three types without it, and for any other client
// type, the store waits for the answer on another goroutine and returns
// at the deadline (the command still runs to the client's own read
// timeout), at the cost of a goroutine per decision.
//
// New panics if c is nil, as http.Handle does with a nil handler: a nil
// client would otherwise fail on the first decision, on a goroutine of
// its own where no caller could recover.
func New(c redis.Scripter, opts ...Option) *Store {
	if c == nil {
		panic("redisstore: New with a nil client")
	}
	s := &Store{c: c, prefix: DefaultPrefix, guard: true}
	switch c := c.(type) {
	case *redis.Client:
		s.guard = !c.Options().ContextTimeoutEnabled
	case *redis.ClusterClient:
		s.guard = !c.Options().ContextTimeoutEnabled
	case *redis.Ring:
		s.guard = !c.Options().ContextTimeoutEnabled
	}
	for _, o := range opts {
		if o != nil {
			o(s)
		}
	}
	return s
}

// Key returns the Redis key that holds bucket b.
func (s *Store) Key(b ratelimit.Bucket) string {
	h := sha256.New()
	var n [8]byte
	for _, f := range []string{b.Limit, b.Key} {
		binary.LittleEndian.PutUint64(n[:], uint64(len(f)))
		h.Write(n[:])
		h.Write([]byte(f))
	}
	binary.LittleEndian.PutUint64(n[:], uint64(b.Capacity))
	h.Write(n[:])
	binary.LittleEndian.PutUint64(n[:], uint64(b.Window))
	h.Write(n[:])
	var sum [sha256.Size]byte
	return s.prefix + base64.RawURLEncoding.EncodeToString(h.Sum(sum[:0])[:16])
}

// ErrBucket is the error, wrapped, for a bucket the store cannot hold: a
// capacity from 1 to [ratelimit.MaxCapacity] and a window of whole seconds
// from 1s are what the limiter passes.
var ErrBucket = errors.New("redisstore: invalid bucket")

// Allow decides one request for b with one script on the server; see the
// package documentation. now is used only under [WithCallerClock].
func (s *Store) Allow(ctx context.Context, b ratelimit.Bucket, now time.Time) (ratelimit.Decision, error) {
	if b.Capacity < 1 || b.Capacity > ratelimit.MaxCapacity || b.Window < time.Second || b.Window%time.Second != 0 {
		return ratelimit.Decision{}, fmt.Errorf("%w: capacity %d, window %v", ErrBucket, b.Capacity, b.Window)
	}
	wsec := int64(b.Window / time.Second)
	// The in-process limiter's shape (ratelimit's limiter_bucket.go):
	// nGroups = 8 groups of ceil(capacity/12) admissions, and a ring of
	// max(1 s, window/60) slots above a capacity of 8. Keep them in step.
	slot := int64(0) // ring slot in µs; none at a capacity of 8 or less
	if b.Capacity > 8 {
		slot = max(1, wsec/60) * 1e6
	}
	at := ""
	if s.callerClock {
		at = strconv.FormatInt(now.UnixMicro(), 10)
	}
	keys := []string{s.Key(b)}
	args := []any{b.Capacity, wsec * 1e6, slot, (b.Capacity + 11) / 12, at}
	var (
		r   []int64
		err error
	)
	if s.guard {
		r, err = s.runGuarded(ctx, keys, args)
	} else {
		r, err = script.Run(ctx, s.c, keys, args...).Int64Slice()
	}
	if err != nil {
		return ratelimit.Decision{}, fmt.Errorf("redisstore: %w", err)
	}
	if len(r) != 4 {
		return ratelimit.Decision{}, fmt.Errorf("redisstore: script answered %d values, want 4", len(r))
	}
	if s.observe != nil {
		s.observe(keys[0], r[0] == 1, time.UnixMicro(r[3]))
	}
	if r[0] == 1 {
		return ratelimit.Decision{Allowed: true, Remaining: r[1]}, nil
	}
	// Whole seconds, rounded up, at least one.
	wait := max(1, (r[2]+1e6-1)/1e6)
	return ratelimit.Decision{RetryAfter: time.Duration(wait) * time.Second}, nil
}

// runGuarded runs the script on another goroutine and returns when it
// answers or ctx is done, whichever is first.
func (s *Store) runGuarded(ctx context.Context, keys []string, args []any) ([]int64, error) {
	type answer struct {
		r   []int64
		err error
	}
	ch := make(chan answer, 1)
	go func() {
		r, err := script.Run(context.WithoutCancel(ctx), s.c, keys, args...).Int64Slice()
		ch <- answer{r, err}
	}()
	select {
	case a := <-ch:
		return a.r, a.err
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}
