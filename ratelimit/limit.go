package ratelimit

import (
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/google/cel-go/cel"

	"github.com/acctapi/acctapi/internal/trunc"
)

// CodeEvalFailed is the error code a [Result] carries when a bucket key
// fails to evaluate (the real service's "Failed to evaluate CEL expression
// at runtime").
const CodeEvalFailed = "ERR_NGROK_2253"

// Result is the outcome of evaluating a rate-limit action for one request.
// Its fields are the action's result variables.
type Result struct {
	// Limited reports that the bucket was full: the request would be (or,
	// when enforcing, is) rejected. It is actions.ngrok.rate_limit.limited.
	Limited bool
	// Reject is Limited for an enforced limit: the caller answers 429.
	Reject bool
	// BucketKey is actions.ngrok.rate_limit.bucket_key: the single
	// expression's value, or for several expressions their values each
	// written as "<length>:<value>" and joined with ",".
	BucketKey string
	// RetryAfter is, when Limited, the whole-second wait for retry-after.
	RetryAfter time.Duration
	// Remaining is how many more requests the bucket admits now.
	Remaining int64
	// ErrorCode and ErrorMessage are actions.ngrok.rate_limit.error.code and
	// .message: set when a bucket key failed to evaluate ([CodeEvalFailed]),
	// in which case the request is not limited and not counted (unless the
	// package's own bounds on an evaluation stopped it: the request is then
	// counted in one bucket all such requests share, so that no request can
	// lift the limit by being costly to evaluate), or when the
	// limit's [Store] failed or timed out ([CodeStoreFailed]), in which case
	// the [FailureMode] decided (FailOpen: not limited, not counted;
	// FailClosed: limited, retry-after one second).
	ErrorCode, ErrorMessage string
}

// A Limit is a compiled rate-limit action: the bucket-key expressions,
// compiled once, and the [Limiter] holding its buckets.
//
// Capacity is per Limit, and so per process: like the real service, which
// applies capacity per ingress server, several processes each enforce it
// on their own. With [WithStore], the buckets are the store's instead,
// named by the action's name, capacity and window, and capacity holds
// across every process that shares the store.
//
// A Limit is safe for concurrent use. The zero value is not usable; create
// one with [NewLimit].
type Limit struct {
	cfg      Config
	id       string // the name the decision hook and a store see (see Policy.nameStoreBuckets)
	enforce  bool
	limiter  *Limiter
	keys     []keyProgram
	clientIP func(*http.Request) string
	now      func() time.Time
	hook     func(*http.Request, string, Result)
	prov     *providers
	pool     sync.Pool
}

// NewLimit validates cfg (see [Config.Validate]), compiles its bucket keys
// and returns the action. A bucket key that uses outside data (conn.geo.*,
// endpoint.*, secrets.get, ...) needs the option that provides it, and
// the error names that option.
//
// A bucket key that reads the action's own results
// (actions.ngrok.rate_limit.*) is refused: it is evaluated before the
// result exists, so it could only read the empty one. (In a [Policy], a
// later rate-limit action may read an earlier one's.) So is a provider of
// outside data ([WithEndpoint], [WithIPIntel], ...) that no bucket key
// reads, a [WithUserAgentParser] when no key reads a parsed
// req.user_agent field, and a [WithClientIP] when no key reads the client
// address (conn.client_ip, conn.client_ip.*, conn.geo.*): it would do
// nothing. So is [WithMaxBuckets] with [WithStore].
func NewLimit(cfg Config, opts ...LimitOption) (*Limit, error) {
	o, err := buildOptions(opts)
	if err != nil {
		return nil, err
	}
	l, err := newLimit(cfg, o)
	if err != nil {
		return nil, err
	}
	errs := o.providers.unused("bucket key")
	for _, r := range bucketKeyReads(cfg.BucketKey, &o.providers) {
		errs = append(errs, readTooEarly(strings.TrimPrefix(r.path, "config."), r.name, "a Limit's bucket key is evaluated before its result exists"))
	}
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	return l, nil
}

func newLimit(cfg Config, o options) (*Limit, error) {
	keys, err := cfg.compile(&o.providers)
	if err != nil {
		return nil, err
	}
	window, _ := cfg.Window()
	cfg = cfg.clone()
	store := o.store
	if store != nil {
		s := *store // each limit names its own buckets (setID)
		store = &s
	}
	lim := newLimiter(cfg.Capacity, window, o.maxBuckets, store)
	l := &Limit{
		cfg:      cfg,
		enforce:  cfg.Enforced(),
		limiter:  lim,
		keys:     keys,
		clientIP: o.providers.clientIP,
		now:      o.now,
		hook:     o.hook,
		prov:     &o.providers,
	}
	l.pool.New = func() any { return new(activation) }
	l.setID(cfg.Name)
	return l, nil
}

// setID sets the name the decision hook and a store (Bucket.Limit) see
// for l: its config's name, unless a Policy names it apart (see
// Policy.nameStoreBuckets).
func (l *Limit) setID(id string) {
	l.id = id
	if s := l.limiter.shared; s != nil {
		s.limit = id
	}
}

// Config returns a copy of the configuration l was built from: changing
// it, through its pointer and slice too, changes nothing in l.
func (l *Limit) Config() Config { return l.cfg.clone() }

// clone returns a copy of c that shares no memory with it.
func (c Config) clone() Config {
	c.BucketKey = slices.Clone(c.BucketKey)
	if c.Enforce != nil {
		e := *c.Enforce
		c.Enforce = &e
	}
	return c
}

// Limiter returns the limiter holding l's buckets, for [Limiter.Sweep] and
// [Limiter.Len].
func (l *Limit) Limiter() *Limiter { return l.limiter }

// Evaluate is shorthand for EvaluateAt(r, now) with now from the clock
// ([WithClock], by default time.Now).
func (l *Limit) Evaluate(r *http.Request) Result {
	return l.EvaluateAt(r, l.now())
}

// EvaluateAt evaluates the bucket keys for r, and counts r in its bucket
// at now unless the bucket is full. It never writes a response. The
// [WithDecisionHook] hook, if any, sees the result.
//
// A request without a URL (one built by hand) is evaluated as one for
// the URL "" (req.url.path is "", and so on). A nil request is not
// evaluated: the result carries [CodeEvalFailed] and says so, nothing is
// counted, and the hook is not called.
func (l *Limit) EvaluateAt(r *http.Request, now time.Time) Result {
	if r == nil {
		return Result{ErrorCode: CodeEvalFailed, ErrorMessage: "ratelimit: " + l.cfg.Name + ": cannot evaluate a nil *http.Request"}
	}
	r = withURL(r)
	a := l.pool.Get().(*activation)
	a.reset(r, now, l.clientIP, l.prov)
	res := l.evaluate(a, now)
	a.reset(nil, time.Time{}, nil, nil)
	l.pool.Put(a)
	return res
}

// evaluate is EvaluateAt with a prepared activation; it calls the decision
// hook.
func (l *Limit) evaluate(a *activation, now time.Time) Result {
	res := l.decide(a, now)
	if l.hook != nil {
		l.hook(a.r, l.id, res)
	}
	return res
}

func (l *Limit) decide(a *activation, now time.Time) Result {
	var key string
	if len(l.keys) == 1 {
		s, err := l.keys[0].eval(a)
		if err != nil {
			return l.evalError(a, now, 0, err)
		}
		key = s
	} else {
		var buf [256]byte
		b := buf[:0]
		for i, k := range l.keys {
			s, err := k.eval(a)
			if err != nil {
				return l.evalError(a, now, i, err)
			}
			if i > 0 {
				b = append(b, ',')
			}
			b = strconv.AppendInt(b, int64(len(s)), 10)
			b = append(b, ':')
			b = append(b, s...)
		}
		key = string(b)
	}
	res := Result{BucketKey: key}
	l.allow(a, now, key, &res)
	return res
}

// allow counts the request in the bucket key at now and sets the
// decision's outcome in res.
func (l *Limit) allow(a *activation, now time.Time, key string, res *Result) {
	d, err := l.limiter.AllowContext(a.r.Context(), key, now)
	res.Limited, res.Reject = !d.Allowed, !d.Allowed && l.enforce
	res.RetryAfter, res.Remaining = d.RetryAfter, d.Remaining
	if err != nil {
		*res = storeError(*res, err)
	}
}

// maxMessageBytes bounds the evaluation error in a Result's message:
// cel-go's errors quote the values they failed on ("no such key: " and a
// 1 MiB header used as the key).
const maxMessageBytes = 512

// overBudgetKey is the bucket of the requests whose bucket key one of the
// package's bounds stopped (see budgetError); no request's data makes it
// the value of a key by accident.
const overBudgetKey = "\x00ratelimit: bucket key over budget"

// evalError is the result of bucket key i failing to evaluate with err.
// The request is not limited (contract §7), unless the failure is one of
// the package's own bounds (overBudgetErr): then it is counted in the
// bucket overBudgetKey, which all such requests share. Otherwise a client
// could lift any limit whose key splits, maps or joins request data by
// sending a request large enough to exceed the bound (a black-box check
// did it with an X-Forwarded-For of a million commas), though the
// expression handles every failure its inputs can cause.
func (l *Limit) evalError(a *activation, now time.Time, i int, err error) Result {
	res := Result{
		ErrorCode:    CodeEvalFailed,
		ErrorMessage: fmt.Sprintf("failed to evaluate CEL expression on bucket_key[%d] for rate-limit at runtime: %s", i, trunc.String(err.Error(), maxMessageBytes)),
	}
	if !overBudgetErr(err) {
		return res
	}
	l.allow(a, now, overBudgetKey, &res)
	return res
}

// keyProgram is one compiled bucket-key expression. A bare variable of
// string type is read directly, without CEL, and so is
// getReqHeader('<literal>'): neither allocates.
type keyProgram struct {
	prog   cel.Program
	direct *varSpec // the variable, for the direct path
	header string   // the canonical header name, for the direct path
}

func compileKey(expr string, prov *providers) (keyProgram, error) {
	c, err := compile(expr, nil, prov)
	if err != nil {
		return keyProgram{}, err
	}
	k := keyProgram{prog: c.prog}
	if v, ok := varIndex[strings.TrimSpace(expr)]; ok && v.str != nil {
		k.direct = v
	} else if h, ok := literalHeader(c.checked); ok {
		k.header = h
	}
	return k, nil
}

func (k *keyProgram) eval(a *activation) (string, error) {
	if k.direct != nil {
		return k.direct.read(a)
	}
	if k.header != "" {
		return strings.Join(a.r.Header[k.header], ","), nil
	}
	v, _, err := k.prog.Eval(a)
	if err != nil {
		return "", err
	}
	return keyString(v)
}

// withURL returns r, or when r has no URL (a request built by hand rather
// than by net/http or http.NewRequest) a shallow copy of it with an empty
// one, which every variable of the request's URL reads.
func withURL(r *http.Request) *http.Request {
	if r.URL != nil {
		return r
	}
	c := *r
	c.URL = new(url.URL)
	return &c
}
