package ratelimit

import (
	"context"
	"errors"
	"fmt"
	"time"
)

// A Store keeps buckets outside the process, so that limiters in several
// processes (replicas behind a load balancer) share one limit: capacity
// then holds for the cluster, not per process. Give one to [NewLimiter],
// [NewLimit] or [NewPolicy] with [WithStore]; without it buckets live in
// the process, which is the specification's semantics (capacity per
// ingress server) and the default.
//
// The package ratelimit/redisstore (its own module) is a Store on Redis
// with the same sliding-window guarantee as the in-process limiter: never
// more than capacity admissions in any window, a truthful retry-after.
type Store interface {
	// Allow decides one request for bucket b, counting it if admitted,
	// atomically with respect to every other process sharing the store.
	// now is the caller's time; a store may use a clock of its own
	// instead (redisstore uses the Redis server's). Decision.RetryAfter
	// is whole seconds, at least one, when the request is rejected, and
	// zero when it is admitted; Decision.Remaining is from 0 to the
	// capacity. Allow must return when ctx is done. On an error, a
	// decision outside those rules, or an answer after ctx's deadline, the
	// limiter ignores the Decision and applies its [FailureMode].
	Allow(ctx context.Context, b Bucket, now time.Time) (Decision, error)
}

// Bucket names one bucket of a [Store]: the limit it belongs to and the
// request's key. A store must keep buckets apart that differ in any field.
type Bucket struct {
	// Limit names the limit: a rate-limit action's name for a [Limit],
	// "" for a bare [Limiter]. For a [Policy] it is the action's name too,
	// unless an earlier action of the policy has the same name: then the
	// name and " #2" (" #3" for the third, and so on, passing over any
	// such name an action of the policy has), so that each action's
	// buckets are its own, as they are without a store, and named alike
	// in every process running the same policy.
	Limit string
	// Key is the bucket key (a [Result]'s BucketKey). It may hold request
	// data such as client addresses; a store should not keep it in clear.
	Key string
	// Capacity is the limit's capacity: at most Capacity admissions in any
	// window of length Window.
	Capacity int64
	// Window is the length of the limit's sliding window, a whole number
	// of seconds.
	Window time.Duration
}

// FailureMode says what a limiter with a [Store] decides when the store
// fails or does not answer within the timeout.
type FailureMode uint8

const (
	// FailOpen admits the request: an outage of the store lifts the limit
	// rather than the service. The request is not counted, unless a store
	// that timed out still receives the decision later (which can only make
	// the limit stricter).
	FailOpen FailureMode = iota
	// FailClosed rejects the request with a retry-after of one second: an
	// outage of the store stops the traffic the limit guards.
	FailClosed
)

// DefaultStoreTimeout is the time a limiter gives its [Store] for one
// decision unless [WithStore] says otherwise.
const DefaultStoreTimeout = 100 * time.Millisecond

// CodeStoreFailed is the error code a [Result] carries when the limit's
// [Store] failed or timed out; the decision then follows the
// [FailureMode]. (It is this package's code: the real service has no
// shared store.)
const CodeStoreFailed = "ERR_RATELIMIT_STORE"

// WithStore makes the limiter (each rate-limit action of a [Limit] or
// [Policy]) keep its buckets in s, shared with every other limiter using
// the same store, instead of in the process. Each decision gives s a
// context whose deadline is timeout away ([DefaultStoreTimeout] when
// timeout is 0), within the request's context for a Limit or Policy.
// When s fails, answers after that deadline (a store that ignores its
// context holds the request as long as it takes, and its late answer
// is not used) or answers with a decision the limiter could not have made
// (see [Store]), mode decides and the [Result] carries [CodeStoreFailed]
// and the error (so does the [WithDecisionHook] hook, for metrics).
// [Limiter.AllowContext] returns the error itself.
//
// Buckets are named by [Bucket]: a Limit's are its action's name with its
// capacity and window, so every process running the same policy shares
// them; each action of a Policy has its own, as without a store, even
// when two share a name (see Bucket.Limit). Limiters from NewLimiter have no name: two of the same capacity
// and window on one store share buckets unless the store keeps them apart
// (redisstore.WithPrefix).
//
// With a store, [Limiter.Sweep] and [Limiter.Len] see only in-process
// buckets (none): the store expires its own, and [WithMaxBuckets], which
// caps in-process buckets, is refused alongside WithStore.
//
// A nil s (also a nil pointer, map or function of a type that implements
// Store), an unknown mode and a negative timeout make the constructor
// return an error naming WithStore: to keep buckets in the process, leave
// the option out. [NewPolicy] refuses a store for a policy with no
// rate-limit action.
func WithStore(s Store, mode FailureMode, timeout time.Duration) Option {
	return limiterOpt(func(o *options) {
		switch {
		case s == nil:
			o.invalid("WithStore", "the Store is nil; to keep buckets in the process, leave the option out")
		case isNil(s):
			o.invalid("WithStore", "the Store is a nil %T; to keep buckets in the process, leave the option out", s)
		case mode != FailOpen && mode != FailClosed:
			o.invalid("WithStore", "unknown FailureMode(%d)", mode)
		case timeout < 0:
			o.invalid("WithStore", "the timeout %v is negative; give 0 for DefaultStoreTimeout (%v)", timeout, DefaultStoreTimeout)
		default:
			if timeout == 0 {
				timeout = DefaultStoreTimeout
			}
			o.store = &shared{store: s, mode: mode, timeout: timeout}
		}
	})
}

// shared is a limiter's store and what to do when it fails.
type shared struct {
	store   Store
	mode    FailureMode
	timeout time.Duration
	limit   string // Bucket.Limit
}

// ErrStoreTimeout is the error, wrapped with the store's own, when a
// [Store] did not decide within the limiter's timeout.
var ErrStoreTimeout = errors.New("ratelimit: store did not answer within the timeout")

// AllowContext is [Limiter.AllowAt] under ctx, reporting a [Store]'s
// error: with a store (see [WithStore]), the decision is the store's, or
// on an error (returned, wrapped) the [FailureMode]'s. Without one it is
// AllowAt's, and the error is nil.
func (l *Limiter) AllowContext(ctx context.Context, key string, now time.Time) (Decision, error) {
	s := l.shared
	if s == nil {
		return l.AllowAt(key, now), nil
	}
	return s.allow(ctx, key, l.capacity, l.window, now)
}

// allowShared is AllowAt with a store: the error is dropped, the failure
// mode applies.
func (l *Limiter) allowShared(key string, now time.Time) Decision {
	d, _ := l.shared.allow(context.Background(), key, l.capacity, l.window, now)
	return d
}

func (s *shared) allow(ctx context.Context, key string, capacity int64, window time.Duration, now time.Time) (Decision, error) {
	ctx, cancel := context.WithTimeout(ctx, s.timeout)
	d, err := s.store.Allow(ctx, Bucket{Limit: s.limit, Key: key, Capacity: capacity, Window: window}, now)
	// A client may report its deadline as its own error (an i/o timeout),
	// possibly before ctx's timer has fired. A store that answers after
	// its deadline, error or not, has not answered in time: its answer is
	// not used.
	dl, _ := ctx.Deadline()
	late := errors.Is(ctx.Err(), context.DeadlineExceeded) || !time.Now().Before(dl)
	cancel()
	switch {
	case late && err == nil:
		err = errors.New("it answered after its deadline")
	case err == nil:
		if err = validDecision(d, capacity); err == nil {
			return d, nil
		}
		late = false
	}
	if late || errors.Is(err, context.DeadlineExceeded) {
		err = fmt.Errorf("%w (%v): %w", ErrStoreTimeout, s.timeout, err)
	} else {
		err = fmt.Errorf("ratelimit: store: %w", err)
	}
	if s.mode == FailClosed {
		return Decision{RetryAfter: time.Second}, err
	}
	return Decision{Allowed: true, Remaining: capacity - 1}, err
}

// validDecision reports why d, a store's decision for a limit of
// capacity, is not one the limiter could have made, if it is not: an
// admission with a retry-after, a rejection whose retry-after is not
// whole seconds of at least one, or a remaining count outside 0 to
// capacity.
func validDecision(d Decision, capacity int64) error {
	switch {
	case d.Allowed && d.RetryAfter != 0:
		return fmt.Errorf("invalid decision %+v: an admission with a retry-after", d)
	case !d.Allowed && (d.RetryAfter < time.Second || d.RetryAfter%time.Second != 0):
		return fmt.Errorf("invalid decision %+v: a rejection's retry-after must be whole seconds, at least one", d)
	case d.Remaining < 0 || d.Remaining > capacity:
		return fmt.Errorf("invalid decision %+v: remaining must be from 0 to the capacity, %d", d, capacity)
	}
	return nil
}

// storeError is the Result of a failed store: the failure mode's decision,
// with the error's code and message.
func storeError(res Result, err error) Result {
	res.ErrorCode = CodeStoreFailed
	res.ErrorMessage = err.Error()
	return res
}
