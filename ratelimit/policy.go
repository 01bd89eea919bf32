package ratelimit

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/acctapi/acctapi/internal/field"
	"github.com/google/cel-go/cel"
	"github.com/google/cel-go/common/types"
)

// ActionTypeCustomResponse is the terminating action a [Policy] supports
// besides rate-limit.
const ActionTypeCustomResponse = "custom-response"

// A Policy is a traffic policy of on_http_request rules, compiled, that
// serves as net/http middleware through [Policy.Handler].
//
// The document is JSON:
//
//	{"on_http_request": [
//	  {"name": "...", "expressions": ["<CEL>", ...], "actions": [
//	    {"type": "rate-limit", "config": {...}},
//	    {"type": "custom-response", "config": {"status_code": 429, "body": "...", "headers": {"k": "v"}}}
//	  ]}
//	]}
//
// Rules run in order. A rule's actions run when all its expressions are
// true (a rule without expressions always matches; an expression that fails
// to evaluate counts as false). Expressions see the traffic-policy
// variables and the actions.ngrok.rate_limit.* variables of the last
// rate-limit action that ran. A rate-limit action does not terminate: under
// its limit, or with enforce false, processing continues; an enforced limit
// answers 429 with retry-after. A custom-response action answers and
// terminates. When no action answers, the request goes to the next
// handler.
//
// Each rate-limit action has its own buckets, and its capacity is per
// process: like the real service, which applies capacity per ingress
// server, several processes each enforce it on their own.
//
// A Policy is safe for concurrent use. The zero value is not usable; create
// one with [NewPolicy].
type Policy struct {
	rules    []rule
	clientIP func(*http.Request) string
	now      func() time.Time
	headers  bool
	pool     sync.Pool
}

type rule struct {
	exprs   []cel.Program
	actions []policyAction
}

// policyAction is one compiled action: exactly one field is set.
type policyAction struct {
	limit    *Limit
	response *customResponse
}

type customResponse struct {
	status  int
	body    string
	headers http.Header
}

// Wire forms of a policy document; unknown members are errors.
type (
	ruleDoc struct {
		Name        string      `json:"name"`
		Expressions []string    `json:"expressions"`
		Actions     []actionDoc `json:"actions"`
	}
	actionDoc struct {
		Type   string          `json:"type"`
		Config json.RawMessage `json:"config"`
	}
	customResponseDoc struct {
		StatusCode int               `json:"status_code"`
		Body       string            `json:"body"`
		Headers    map[string]string `json:"headers"`
	}
)

// Phases of the real service that a Policy does not support.
var otherPhases = map[string]bool{"on_tcp_connect": true, "on_http_response": true}

// NewPolicy parses and compiles a policy document. Everything wrong with it
// is reported at once as joined [*field.Error] values naming JSON
// paths ("on_http_request[0].actions[1].type"): unsupported phases, unknown
// action types or members, invalid configs and expressions that do not
// compile or are not boolean. It uses the options [WithClientIP],
// [WithClock], [WithMaxBuckets] and [WithRateLimitHeaders].
func NewPolicy(doc []byte, opts ...Option) (*Policy, error) {
	var top map[string]json.RawMessage
	if err := json.Unmarshal(doc, &top); err != nil {
		return nil, &field.Error{Reason: "the policy is not a JSON object", Code: field.CodeInvalidJSON, Err: err}
	}
	var errs []error
	for phase := range top {
		switch {
		case phase == "on_http_request":
		case otherPhases[phase]:
			errs = append(errs, field.Invalid(phase, "phase %s is not supported; only on_http_request is", phase))
		default:
			errs = append(errs, field.Invalid(phase, "unknown phase; only on_http_request is supported"))
		}
	}
	var rules []ruleDoc
	if raw, ok := top["on_http_request"]; ok {
		if err := strictUnmarshal(raw, &rules); err != nil {
			errs = append(errs, field.Invalid("on_http_request", "%v", err))
			rules = nil
		}
	}
	o := buildOptions(opts)
	p := &Policy{clientIP: o.clientIP, now: o.now, headers: o.headers}
	p.pool.New = func() any { return new(activation) }
	for i, rd := range rules {
		path := fmt.Sprintf("on_http_request[%d]", i)
		var r rule
		for j, expr := range rd.Expressions {
			prog, err := compile(expr, cel.BoolType)
			if err != nil {
				errs = append(errs, field.Invalid(fmt.Sprintf("%s.expressions[%d]", path, j), "%v", err))
				continue
			}
			r.exprs = append(r.exprs, prog)
		}
		if len(rd.Actions) == 0 {
			errs = append(errs, field.Invalid(path+".actions", "is required"))
		}
		for j, ad := range rd.Actions {
			apath := fmt.Sprintf("%s.actions[%d]", path, j)
			a, err := compileAction(ad, opts)
			if err != nil {
				errs = append(errs, field.Prefix(apath, err))
				continue
			}
			r.actions = append(r.actions, a)
		}
		p.rules = append(p.rules, r)
	}
	if len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	return p, nil
}

func compileAction(ad actionDoc, opts []Option) (policyAction, error) {
	switch ad.Type {
	case ActionType:
		var cfg Config
		if err := strictUnmarshal(ad.Config, &cfg); err != nil {
			return policyAction{}, field.Invalid("config", "%v", err)
		}
		l, err := NewLimit(cfg, opts...)
		if err != nil {
			return policyAction{}, field.Prefix("config", err)
		}
		return policyAction{limit: l}, nil
	case ActionTypeCustomResponse:
		var cd customResponseDoc
		if err := strictUnmarshal(ad.Config, &cd); err != nil {
			return policyAction{}, field.Invalid("config", "%v", err)
		}
		// 1xx codes are informational: net/http would send a 200 after
		// them, not the response the policy describes.
		if cd.StatusCode < 200 || cd.StatusCode > 599 {
			return policyAction{}, field.Invalid("config.status_code", "%d is not an HTTP status code from 200 to 599", cd.StatusCode)
		}
		h := make(http.Header, len(cd.Headers))
		for k, v := range cd.Headers {
			h.Set(k, v)
		}
		return policyAction{response: &customResponse{status: cd.StatusCode, body: cd.Body, headers: h}}, nil
	case "":
		return policyAction{}, field.Invalid("type", "is required")
	}
	return policyAction{}, field.Invalid("type", "unknown action type %q; supported: %q, %q", ad.Type, ActionType, ActionTypeCustomResponse)
}

func strictUnmarshal(raw json.RawMessage, v any) error {
	if len(raw) == 0 {
		raw = json.RawMessage("{}")
	}
	d := json.NewDecoder(bytes.NewReader(raw))
	d.DisallowUnknownFields()
	return d.Decode(v)
}

// Handler returns next wrapped in the policy.
func (p *Policy) Handler(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if p.serve(w, r) {
			return
		}
		next.ServeHTTP(w, r)
	})
}

// serve runs the rules for r and reports whether an action answered.
func (p *Policy) serve(w http.ResponseWriter, r *http.Request) bool {
	a := p.pool.Get().(*activation)
	a.reset(r, p.clientIP)
	defer func() {
		a.reset(nil, nil)
		p.pool.Put(a)
	}()
	var now time.Time
	for i := range p.rules {
		rl := &p.rules[i]
		if !matches(rl.exprs, a) {
			continue
		}
		for _, act := range rl.actions {
			if resp := act.response; resp != nil {
				h := w.Header()
				for k, v := range resp.headers {
					h[k] = slices.Clone(v) // the handler's writer may append to them
				}
				w.WriteHeader(resp.status)
				_, _ = w.Write([]byte(resp.body))
				return true
			}
			if now.IsZero() {
				now = p.now()
			}
			res := act.limit.evaluate(a, now)
			a.vars = actionVars{bucketKey: res.BucketKey, limited: res.Limited, errCode: res.ErrorCode, errMessage: res.ErrorMessage}
			if p.headers && res.ErrorCode == "" {
				p.writeHeaders(w.Header(), act.limit, res)
			}
			if res.Reject {
				w.Header().Set("Retry-After", strconv.FormatInt(int64(res.RetryAfter/time.Second), 10))
				http.Error(w, http.StatusText(http.StatusTooManyRequests), http.StatusTooManyRequests)
				return true
			}
		}
	}
	return false
}

func matches(exprs []cel.Program, a *activation) bool {
	for _, e := range exprs {
		v, _, err := e.Eval(a)
		if b, ok := v.(types.Bool); err != nil || !ok || !bool(b) {
			return false
		}
	}
	return true
}

// writeHeaders adds the draft RateLimit-Policy and RateLimit fields.
func (p *Policy) writeHeaders(h http.Header, l *Limit, res Result) {
	name := sfString(l.cfg.Name)
	h.Add("RateLimit-Policy", name+";q="+strconv.FormatInt(l.cfg.Capacity, 10)+
		";w="+strconv.FormatInt(int64(l.limiter.window/time.Second), 10))
	v := name + ";r=" + strconv.FormatInt(res.Remaining, 10)
	if res.Limited {
		v += ";t=" + strconv.FormatInt(int64(res.RetryAfter/time.Second), 10)
	}
	h.Add("RateLimit", v)
}

// sfString renders s as a structured-field string (RFC 8941): printable
// ASCII only, with '"' and '\' escaped; anything else becomes '?'.
func sfString(s string) string {
	var b strings.Builder
	b.WriteByte('"')
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == '"' || c == '\\':
			b.WriteByte('\\')
			b.WriteByte(c)
		case c < 0x20 || c > 0x7e:
			b.WriteByte('?')
		default:
			b.WriteByte(c)
		}
	}
	b.WriteByte('"')
	return b.String()
}
