package ratelimit

import (
	"errors"
	"fmt"
	"net/http"
	"reflect"
	"time"
)

// The three option types say where an option applies, so that a misplaced
// option is a compile error rather than silently ignored:
//
//   - an [Option] applies to [NewLimiter], [NewLimit] and [NewPolicy];
//   - a [LimitOption] applies to [NewLimit] and [NewPolicy];
//   - a [PolicyOption] applies to [NewPolicy] only.
//
// For example NewLimiter(1, time.Minute, WithClock(c)) does not compile:
// a LimitOption is not an Option. Options apply in order: one given twice
// (two WithClock) takes the later value, as functional options do in Go.
//
// A nil option, an option given what it cannot use (a nil function, a
// nil Store, an unknown FailureMode, a negative timeout, a bucket cap
// below 1, an empty region, the zero Endpoint), and one that would do
// nothing (a provider no expression reads, WithMaxBuckets with WithStore)
// makes the constructor return an error naming it, rather than run
// without what the caller asked for.

// PolicyOption configures a [Policy]. Every [LimitOption] and [Option] is
// also a PolicyOption; [WithRateLimitHeaders] and [WithSkipUnsupported]
// are PolicyOptions only. For every option type, a nil option, and an
// option given what it cannot use (a nil function, a nil [Store], an
// unknown [FailureMode], an empty region, the zero [Endpoint]), makes the
// constructor return an error naming it.
type PolicyOption interface {
	apply(*options)
}

// LimitOption configures a [Limit], and a [Policy]'s rate-limit actions.
// Every [Option] is also a LimitOption.
type LimitOption interface {
	PolicyOption
	limitOption()
}

// Option configures a [Limiter], and so also a [Limit] or a [Policy]:
// [WithMaxBuckets] and [WithStore].
type Option interface {
	LimitOption
	limiterOption()
}

type (
	policyOpt  func(*options)
	limitOpt   func(*options)
	limiterOpt func(*options)
)

func (f policyOpt) apply(o *options)  { f(o) }
func (f limitOpt) apply(o *options)   { f(o) }
func (f limitOpt) limitOption()       {}
func (f limiterOpt) apply(o *options) { f(o) }
func (f limiterOpt) limitOption()     {}
func (f limiterOpt) limiterOption()   {}

type options struct {
	maxBuckets    int
	maxBucketsSet bool // WithMaxBuckets was given (see buildOptions)
	store         *shared
	now           func() time.Time
	headers       bool
	skip          bool
	hook          func(*http.Request, string, Result)
	providers     providers
	errs          []error // options given what they cannot use
}

// buildOptions applies opts, of whichever option type the constructor
// takes, over the defaults. A nil option, an option given what it cannot
// use (a nil function, an unknown [FailureMode], an empty region), and
// WithMaxBuckets with WithStore, is an error naming it: each is a
// variable the caller never set, or a setting that would be dropped, and
// running without what they asked for would let a wrong test pass.
func buildOptions[O PolicyOption](opts []O) (options, error) {
	o := options{maxBuckets: DefaultMaxBuckets, now: time.Now, providers: providers{used: new(uint32)}}
	for i, opt := range opts {
		if PolicyOption(opt) == nil {
			o.errs = append(o.errs, fmt.Errorf("ratelimit: option %d of %d is nil", i+1, len(opts)))
			continue
		}
		opt.apply(&o)
	}
	if o.maxBucketsSet && o.store != nil {
		// The store keeps the buckets; the in-process cap would cap nothing.
		o.errs = append(o.errs, errors.New("ratelimit: WithMaxBuckets: it caps the buckets kept in the process, "+
			"but with WithStore the store keeps them, so it would do nothing; drop WithMaxBuckets or WithStore"))
	}
	return o, errors.Join(o.errs...)
}

// invalid records that option name was given what it cannot use.
func (o *options) invalid(name, format string, args ...any) {
	o.errs = append(o.errs, fmt.Errorf("ratelimit: %s: %s", name, fmt.Sprintf(format, args...)))
}

// funcOption is a LimitOption that sets a function with set, or, when fn
// is nil, is an error naming the option.
func funcOption[F any](name string, fn F, set func(*options, F)) LimitOption {
	return limitOpt(func(o *options) {
		if isNil(fn) {
			o.invalid(name, "the function is nil")
			return
		}
		set(o, fn)
	})
}

// isNil reports whether v is nil, or holds a nil pointer, map, slice,
// channel or function: a value whose methods a caller most likely did not
// mean to run on nothing.
func isNil(v any) bool {
	if v == nil {
		return true
	}
	switch rv := reflect.ValueOf(v); rv.Kind() {
	case reflect.Pointer, reflect.Map, reflect.Slice, reflect.Chan, reflect.Func, reflect.Interface, reflect.UnsafePointer:
		return rv.IsNil()
	}
	return false
}

// WithMaxBuckets caps the number of live buckets of each limiter at n,
// which must be from 1 to 1<<27 (134,217,728); any other n makes the
// constructor return an error naming WithMaxBuckets. See [Limiter] for
// what happens when the cap is reached. The default is
// [DefaultMaxBuckets]. It caps buckets kept in the process, so it is
// refused together with [WithStore], whose store keeps the buckets, and
// [NewPolicy] refuses it for a policy with no rate-limit action: either
// way it would do nothing.
func WithMaxBuckets(n int) Option {
	return limiterOpt(func(o *options) {
		if n < 1 || n > maxBuckets {
			o.invalid("WithMaxBuckets", "%d is not from 1 to %d", n, maxBuckets)
			return
		}
		o.maxBuckets = n
		o.maxBucketsSet = true
	})
}

// maxBuckets bounds WithMaxBuckets so that a shard's bucket ids (see
// idBits) never overflow: 64 shards of at most 1<<21 buckets.
const maxBuckets = 1 << 27

// WithClientIP makes conn.client_ip (and so a bucket key such as
// "conn.client_ip", and the IP intelligence looked up for it) come from fn
// instead of the connection's remote address. Use it behind a trusted
// proxy, for example to read the last address of X-Forwarded-For that the
// proxy appended; never trust a header a client can set. conn.client_port
// stays the connection's.
//
// fn must return an IP address without a port (netip.ParseAddr's forms).
// Any other answer ("", "unknown", r.RemoteAddr, which is host:port) makes
// conn.client_ip fail to evaluate, with an error naming WithClientIP: a
// bucket key on it then counts the request in the one bucket all such
// requests share (as for the package's other bounds, see [Result]), so a
// mistaken fn limits more, never less, and the [Result] says why.
//
// [NewLimit] and [NewPolicy] refuse it, naming WithClientIP, when no
// expression (bucket key, rule expression, placeholder) reads the client
// address: conn.client_ip, or the IP intelligence looked up for it
// (conn.client_ip.*, conn.geo.*, which also need [WithIPIntel]). It would
// do nothing then; conn.client_port does not come from fn. As for the
// providers, NewPolicy does not refuse it when [WithSkipUnsupported]
// skipped part of the document.
func WithClientIP(fn func(r *http.Request) string) LimitOption {
	return funcOption("WithClientIP", fn, func(o *options, fn func(*http.Request) string) { o.providers.clientIP = fn })
}

// WithClock sets the clock a [Limit] or [Policy] reads for each request
// (and for time.now and req.ts.header_received); the default is time.Now.
// Tests pass a fake clock. [NewPolicy] refuses it for a policy with no
// rate-limit action and no expression that reads the time, where it
// would do nothing.
func WithClock(now func() time.Time) LimitOption {
	return funcOption("WithClock", now, func(o *options, now func() time.Time) { o.now = now })
}

// WithDecisionHook makes every evaluation of a rate-limit action call fn
// with the request, the action's name and the [Result], after the bucket
// is updated and before any response is
// written; with enforce: false too, so it suits counting decisions for
// metrics. The name is the action's config name, and for the second and
// later rate-limit actions of a [Policy] with the same name, that name and
// " #2", " #3" and so on, as in [Bucket]'s Limit: each action's
// decisions are told apart. fn runs on the request's goroutine, so it
// must be safe for concurrent use and should be quick. [NewPolicy]
// refuses it for a policy with no rate-limit action, where it would do
// nothing.
func WithDecisionHook(fn func(r *http.Request, name string, res Result)) LimitOption {
	return funcOption("WithDecisionHook", fn, func(o *options, fn func(*http.Request, string, Result)) { o.hook = fn })
}

// WithRateLimitHeaders makes a [Policy] add the IETF draft
// (draft-ietf-httpapi-ratelimit-headers) RateLimit-Policy and RateLimit
// fields for the rate-limit actions it evaluates, for example
//
//	RateLimit-Policy: "per-ip";q=30;w=60
//	RateLimit: "per-ip";r=0;t=12
//
// RateLimit-Policy (the action's name, capacity and window) comes with
// every evaluation. RateLimit (the requests its bucket admits now, and
// when limited the seconds to wait) comes with every request that a
// bucket decided or that the action limited: a 429 of the action always
// has both fields, and so does a request the action limits with enforce
// false. Only a request that no bucket counted and that the action let
// through has no RateLimit field, as it has no quota to report: its bucket
// key failed to evaluate ([CodeEvalFailed]), or its [Store] failed under
// [FailOpen]. (A request whose bucket key one of the package's bounds
// stopped is counted in a bucket all such requests share; it gets the
// field only once that bucket limits it.) [NewPolicy] refuses it for a
// policy with no rate-limit action, where it would do nothing.
func WithRateLimitHeaders() PolicyOption {
	return policyOpt(func(o *options) { o.headers = true })
}

// WithSkipUnsupported makes [NewPolicy] accept a document written for the
// real service that has phases other than on_http_request
// (on_tcp_connect, on_http_response, on_event_stream_message) or actions
// this package does not implement (deny, add-headers, jwt-validation, and
// the other documented action types): it runs only the rate-limit and
// custom-response actions and skips the rest, listed by
// [Policy.Skipped]. Skipped actions do not run at all, so a skipped
// terminating action (deny, close-connection, forward-internal) no longer
// ends the request: the rules after it run. An action after a terminating
// action in its rule is still an error, skipped or not, and whichever of
// the two is skipped: the real service refuses the document
// (ERR_NGROK_2207), and running the action would do what the document
// says never happens. A rule whose actions are all skipped is skipped
// whole, its expressions unchecked. Unknown phases and action types
// (typing mistakes) are still errors, and so is a document with nothing
// left to run once the rest is skipped (only other phases, or every rule
// skipped): a middleware that would do nothing is refused, as a document
// without rules is. So is the option itself when the document has nothing
// to skip: it would do nothing.
func WithSkipUnsupported() PolicyOption {
	return policyOpt(func(o *options) { o.skip = true })
}
