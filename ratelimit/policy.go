package ratelimit

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/acctapi/acctapi/internal/field"
	"github.com/google/cel-go/cel"
	"github.com/google/cel-go/common/ast"
	"github.com/google/cel-go/common/types"
)

// ActionTypeCustomResponse is the terminating action a [Policy] supports
// besides rate-limit.
const ActionTypeCustomResponse = "custom-response"

// A Policy is a traffic policy of on_http_request rules, compiled, that
// serves as net/http middleware through [Policy.Handler].
//
// The document is YAML, as users of the real service write it, or JSON:
//
//	on_http_request:
//	  - name: "..."
//	    expressions: ["<CEL>", ...]
//	    actions:
//	      - type: rate-limit
//	        config: {...}
//	      - type: custom-response
//	        config: {status_code: 429, body: "...", headers: {k: v}}
//
// A document whose first non-blank character is "{" or "[" is read as
// JSON, with the same members ({"on_http_request": [...]}), or as YAML
// in flow style ({on_http_request: [...]}) if it stops being JSON at an
// unquoted word, a single quote or a comment; any other as YAML.
//
// Rules run in order. A rule's actions run when all its expressions are
// true (a rule without expressions always matches; an expression that fails
// to evaluate counts as false). Expressions see the traffic-policy
// variables and the actions.ngrok.rate_limit.* variables of the last
// rate-limit action that ran. A rate-limit action does not terminate: under
// its limit, or with enforce false, processing continues; an enforced limit
// answers 429 with retry-after. When no action answers, the request goes
// to the next handler, with the [Result] of the last rate-limit action
// that ran in its request's context ([ResultFromContext]). A document
// needs at least one rule: {}, on_http_request: [] and on_http_request:
// null are refused, as "" is, and so is one whose rules
// [WithSkipUnsupported] skips whole.
//
// Until a rate-limit action has run, its variables are empty (limited is
// false, the others ""), so a rule gated on them could never fire.
// [NewPolicy] refuses a read of them where no rate-limit action can have
// run: in a rule's expressions unless an earlier rule has a rate-limit
// action (a rule's expressions run before its actions), in a
// custom-response's placeholders unless an earlier rule or an earlier
// action of its rule has one, and in the bucket keys of a rate-limit
// action that no other can precede.
//
// A custom-response action answers and terminates, with its status_code
// (200 when it gives none, as the real service defaults it; otherwise 200
// to 599) and at most 10 headers (the real service's bound); its header
// names must be HTTP field names other than Content-Length and
// Transfer-Encoding (net/http sets them from the body), each header given
// once (in any case), and its header values may not hold control characters other
// than a tab (a placeholder's value has each such character replaced by a
// space). Its body and header values may hold ${expression} placeholders
// (Traffic Policy's CEL interpolation), each replaced by its expression's
// value in the form a bucket key takes (a list joined with ",", null as
// ""), or by nothing if it fails to evaluate. Every "${" begins a
// placeholder (the documentation gives no escape); write a literal one as
// ${'${'}. A rendered body is at most 1 MiB, and a rendered header value
// at most 8 KiB (a proxy in front of the server must hold the whole
// response header: nginx's default buffer for it is 4 or 8 KiB). A
// placeholder whose value would take its body or value past that is
// replaced by nothing too, as one that fails to evaluate, and the
// placeholders after it fill what room is left; text outside
// placeholders longer than that is refused by [NewPolicy].
//
// An action after a terminating action in its rule could never run, and
// [NewPolicy] refuses it, as the real service does (ERR_NGROK_2207). The
// terminating actions are custom-response and, of those
// [WithSkipUnsupported] skips, deny, close-connection and
// forward-internal (unless its on_error is continue); redirect is not
// one, as it answers only when it changes the URL. A rule without
// expressions that has a terminating action ends every request, so a
// rate-limit action of a later rule could never run either: NewPolicy
// refuses it too, naming that rule (a test that no request is limited
// would pass without it). Other actions of such later rules are left, as
// the real service leaves them.
//
// Each rate-limit action has its own buckets, whatever its name, and its
// capacity is per process: like the real service, which applies capacity
// per ingress server, several processes each enforce it on their own.
// With [WithStore], buckets live in the shared store instead (see [Limit]
// and [Bucket]), still each action's own.
//
// A Policy is safe for concurrent use. The zero value is not usable; create
// one with [NewPolicy].
type Policy struct {
	rules    []rule
	clientIP func(*http.Request) string
	now      func() time.Time
	headers  bool
	prov     *providers
	skipped  []string
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
	// the RateLimit fields' parts that depend on the action alone, made
	// when it is compiled (see writeHeaders): its name as a structured
	// field string, and the whole RateLimit-Policy value
	rlName, rlPolicy string
}

type customResponse struct {
	status  int
	body    template
	headers []responseHeader
}

// responseHeader is one of a custom response's headers; its value may
// have placeholders.
type responseHeader struct {
	name  string // canonical
	value template
}

// Wire forms of a policy document; unknown members are errors.
type (
	ruleDoc struct {
		Name        string      `json:"name"`
		Expressions []string    `json:"expressions"`
		Actions     []actionDoc `json:"actions"`
	}
	actionDoc struct {
		Type   string `json:"type"`
		Config any    `json:"config"` // decoded by the action's type
	}
	// customResponseDoc is a custom-response action's config.
	customResponseDoc struct {
		StatusCode *int              `json:"status_code"` // nil: 200, as the real service defaults it
		Body       string            `json:"body"`
		Headers    map[string]string `json:"headers"`
	}
)

// maxCustomHeaders is the most headers a custom-response sets, as the
// real service's documentation bounds its headers ("Maximum properties
// 10").
const maxCustomHeaders = 10

// Phases of the real service other than on_http_request.
var otherPhases = []string{"on_tcp_connect", "on_http_response", "on_event_stream_message"}

// actionTypes are the documented action types of the real service; the
// ones a Policy does not implement are skipped under WithSkipUnsupported.
var actionTypes = []string{
	"add-headers", "ai-gateway", "basic-auth", "circuit-breaker", "close-connection", "compress-response",
	ActionTypeCustomResponse, "deny", "forward-internal", "http-request", "jwt-validation", "log", "oauth",
	"oidc", "owasp-crs-request", "owasp-crs-response", ActionType, "redirect", "remove-headers",
	"request-body-find-replace", "response-body-find-replace", "restrict-ips", "set-vars",
	"sse-find-replace", "terminate-tls", "url-rewrite", "verify-webhook",
}

// MaxPolicyRules, MaxPolicyExpressions and MaxPolicyActions bound what
// [NewPolicy] compiles: the rules of on_http_request, the CEL expressions
// of the document in all (its rules' expressions, its bucket keys and its
// custom-response placeholders, ${...}), and its actions. A compiled
// expression takes tens of kilobytes; a document of 10,000 rules took
// seconds and a gigabyte to compile, as did one custom-response of 40,000
// placeholders. MaxPolicyNodes bounds the expressions' size in all, in
// the nodes of their syntax trees (about one per name, literal, operator
// and call), since checking an expression costs in proportion to them: a
// review's 32 expressions of 190 comprehensions each took 7 s and 2.8 GB
// to compile. An expression is also bounded alone: 4,096 bytes, nesting
// 64 deep, 16 comprehensions. The costliest documents within every bound
// that were measured (2026-11-29, a 2-vCPU AMD EPYC VM: expressions of 16
// comprehensions, of 60 header scans, of 100 comparisons) compiled in
// 0.36 to 0.48 s, allocating 210 to 280 MB in all.
const (
	MaxPolicyRules       = 256
	MaxPolicyExpressions = 2048
	MaxPolicyActions     = 256
	MaxPolicyNodes       = 65536
)

// MaxPolicyErrors bounds the errors [NewPolicy] reports for a document's
// rules: once they reach it, the rules after are not checked, and an
// error at the first of them says so.
const MaxPolicyErrors = 20

// checkPolicySize refuses rules beyond MaxPolicyRules,
// MaxPolicyExpressions and MaxPolicyActions, before any is compiled.
func checkPolicySize(rules []ruleDoc) error {
	if len(rules) > MaxPolicyRules {
		return field.Invalid("on_http_request", "has %d rules; a policy may have at most %d", len(rules), MaxPolicyRules)
	}
	exprs, actions := 0, 0
	for _, rd := range rules {
		exprs += len(rd.Expressions)
		actions += len(rd.Actions)
	}
	if exprs > MaxPolicyExpressions {
		return field.Invalid("on_http_request", "has %d expressions in its rules; a policy may have at most %d", exprs, MaxPolicyExpressions)
	}
	if actions > MaxPolicyActions {
		return field.Invalid("on_http_request", "has %d actions in its rules; a policy may have at most %d", actions, MaxPolicyActions)
	}
	return nil
}

// NewPolicy parses and compiles a policy document, YAML or JSON (see
// [Policy]). Everything wrong with it is reported at once as joined
// [*field.Error] values naming paths ("on_http_request[0].actions[1].type"):
// phases other than on_http_request and actions other than rate-limit and
// custom-response (unless [WithSkipUnsupported]), unknown members, invalid
// configs (a custom-response header name that is not an HTTP field name,
// at "on_http_request[0].actions[1].config.headers.X-Reason Code"),
// an action after a terminating action in its rule (named by its path,
// "on_http_request[0].actions[2]", skipped or not), a rate-limit action
// after a rule without expressions that always ends the request, and expressions that
// do not compile or are not boolean or read the rate-limit action's
// results where none can have run, and a document without rules. A
// document that is a bare rate-limit action or config gets one error
// saying so. It takes every option (see [PolicyOption]), but those only
// a rate-limit action uses, [WithDecisionHook], [WithRateLimitHeaders],
// [WithMaxBuckets] and [WithStore], given for a document without one,
// are errors ("ratelimit: WithDecisionHook: the policy has no rate-limit
// action, ..."): each would do nothing. So is a provider of outside data
// ([WithIPIntel], [WithServerRegion], [WithEndpoint], [WithSecrets],
// [WithServerCertificate], [WithTLSFingerprint], [WithPodIdentity]), a
// [WithUserAgentParser] or a [WithClientIP], that no expression of the
// document reads (a parsed req.user_agent field, for the parser; the
// client address, conn.client_ip, conn.client_ip.* or conn.geo.*, for
// WithClientIP), unless [WithSkipUnsupported] skipped some of it (what it
// skips is not compiled). So is [WithMaxBuckets] with [WithStore]. A
// document of more than [MaxPolicyRules] rules, [MaxPolicyExpressions]
// expressions or [MaxPolicyActions] actions is refused before anything is
// compiled, and its rules are checked until [MaxPolicyErrors] errors
// are found.
func NewPolicy(doc []byte, opts ...PolicyOption) (*Policy, error) {
	top, err := decodeDocument(doc)
	if err != nil {
		return nil, err
	}
	o, err := buildOptions(opts)
	if err != nil {
		return nil, err
	}
	left, nodesLeft := MaxPolicyExpressions, MaxPolicyNodes
	o.providers.left, o.providers.nodesLeft = &left, &nodesLeft
	p := &Policy{clientIP: o.providers.clientIP, now: o.now, headers: o.headers, prov: &o.providers}
	p.pool.New = func() any { return new(activation) }
	var errs []error
	for _, phase := range sortedKeys(top) {
		switch {
		case phase == "on_http_request":
		case slices.Contains(otherPhases, phase) && o.skip:
			p.skipped = append(p.skipped, phase)
		case slices.Contains(otherPhases, phase):
			errs = append(errs, field.Invalid(phase, "phase %s is not supported (only on_http_request is); "+
				"pass ratelimit.WithSkipUnsupported to skip it", phase))
		default:
			errs = append(errs, field.Invalid(phase, "unknown phase%s; the phases are on_http_request, %s",
				suggest(phase, append([]string{"on_http_request"}, otherPhases...)), strings.Join(otherPhases, ", ")))
		}
	}
	var rules []ruleDoc
	decodeErr := decodeValue("on_http_request", top["on_http_request"], &rules)
	if decodeErr != nil {
		errs = append(errs, decodeErr)
	} else if len(rules) == 0 && len(errs) == 0 { // (a phase's error says more: on_request)
		errs = append(errs, noRules(p.skipped))
	}
	if err := checkPolicySize(rules); err != nil {
		return nil, err
	}
	limited := false // whether a rate-limit action can have run before the rule
	ended := -1      // the first rule that always ends the request, if any
	reported := 0    // field errors of the rules so far
	for i, rd := range rules {
		path := fmt.Sprintf("on_http_request[%d]", i)
		if reported >= MaxPolicyErrors {
			// Each error costs a search for the closest names; a
			// document of thousands of bad expressions took seconds and
			// a gigabyte to report them all.
			errs = append(errs, field.Invalid(path, "and the rules after it are not checked: %d errors are reported above, the most NewPolicy reports", reported))
			break
		}
		before := len(errs)
		if ended >= 0 {
			if err := unreachableRule(path, rd, ended, rules[ended]); err != nil {
				errs = append(errs, err)
			}
		} else if len(rd.Expressions) == 0 && slices.ContainsFunc(rd.Actions, terminating) {
			ended = i
		}
		r, err := p.compileRule(path, rd, limited, o)
		limited = limited || slices.ContainsFunc(rd.Actions, func(ad actionDoc) bool { return ad.Type == ActionType })
		if err != nil {
			// What did not decode is reported once, not again as missing.
			if err := without(err, decodeErr); err != nil {
				errs = append(errs, err)
			}
		}
		for _, e := range errs[before:] {
			reported += len(field.Errors(e))
		}
		if err != nil {
			continue
		}
		if len(r.actions) > 0 {
			p.rules = append(p.rules, r)
		}
	}
	if o.skip && len(p.skipped) == 0 && len(errs) == 0 {
		errs = append(errs, fmt.Errorf("ratelimit: WithSkipUnsupported: the policy has no phase or action to skip, "+
			"so the option would do nothing; drop it"))
	}
	if len(errs) == 0 && len(rules) > 0 && len(p.rules) == 0 {
		errs = append(errs, field.Invalid("on_http_request", "every rule was skipped, as each has only actions "+
			"this package does not implement (see Policy.Skipped), so the policy would do nothing"))
	}
	if !limited && decodeErr == nil { // (a document that did not decode may have lost its rate-limit actions)
		// (A skipped action's expressions were not compiled: whether
		// they read the clock is not known.)
		clockRead := *o.providers.used&(1<<provClock) != 0 || len(p.skipped) > 0
		errs = append(errs, unusedOptions(opts, clockRead)...)
	}
	if len(errs) == 0 && len(p.skipped) == 0 {
		// (With rules or actions skipped, unchecked, a provider they read
		// is not known to be unused.)
		errs = append(errs, o.providers.unused("expression of the policy")...)
	}
	if len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	p.nameStoreBuckets()
	return p, nil
}

// noRules is the error for a document without on_http_request rules
// ({}, on_http_request: [] or null), whose policy would do nothing: a
// mistake, like the empty document.
func noRules(skipped []string) error {
	msg := "the policy has no rules, so it would do nothing; give on_http_request at least one rule"
	if len(skipped) > 0 {
		msg = "the policy has no on_http_request rules, the only phase this package runs (it skips " +
			strings.Join(skipped, ", ") + "), so it would do nothing"
	}
	return field.Invalid("on_http_request", "%s", msg)
}

// unusedOptions returns an error for each of opts that only a rate-limit
// action uses, given for a policy that has none: the option would do
// nothing, and a test of it (a decision hook's) would pass without it
// running. Options do not record which constructor they came from, so
// each is applied alone to zero options and recognised by what it sets:
// WithMaxBuckets sets maxBuckets to at least 1. WithClock is unused too
// unless an expression reads the time (clockRead).
func unusedOptions(opts []PolicyOption, clockRead bool) []error {
	var errs []error
	for _, opt := range opts {
		if opt == nil {
			continue // buildOptions reported it
		}
		var probe options
		opt.apply(&probe)
		var name, what string
		switch {
		case probe.maxBuckets != 0:
			name, what = "WithMaxBuckets", "there are no buckets to cap"
		case probe.store != nil:
			name, what = "WithStore", "no bucket would be kept in the store"
		case probe.hook != nil:
			name, what = "WithDecisionHook", "the hook would never be called"
		case probe.headers:
			name, what = "WithRateLimitHeaders", "no RateLimit field would be sent"
		case probe.now != nil && !clockRead:
			name, what = "WithClock", "nothing reads the clock (nor does an expression: time.now, req.ts.header_received)"
		default:
			continue
		}
		errs = append(errs, fmt.Errorf("ratelimit: %s: the policy has no rate-limit action, so %s; "+
			"drop the option, or add a rate-limit action", name, what))
	}
	return errs
}

// nameStoreBuckets names each rate-limit action apart from every other,
// for its buckets in a store (Bucket.Limit), which are then apart as they
// are in process, and for the decision hook: by the action's name, or, for
// the second and later actions sharing a name, by the name and " #2",
// " #3", ... (the first such that no action has as its name). The names
// depend on the document alone, so every process running the policy
// shares each action's buckets.
func (p *Policy) nameStoreBuckets() {
	var limits []*Limit
	names := map[string]bool{}
	for i := range p.rules {
		for _, a := range p.rules[i].actions {
			if a.limit != nil {
				limits = append(limits, a.limit)
				names[a.limit.cfg.Name] = true
			}
		}
	}
	used := make(map[string]bool, len(limits))
	for _, l := range limits {
		id := l.cfg.Name
		for n := 2; used[id]; n++ {
			if id = l.cfg.Name + " #" + strconv.Itoa(n); names[id] {
				id = l.cfg.Name // taken by an action of that name: try the next
			}
		}
		used[id] = true
		l.setID(id)
	}
}

// compileRule compiles one rule. Under WithSkipUnsupported, a rule whose
// actions are all skipped comes back without actions, its expressions
// unchecked. limited says whether a rate-limit action of an earlier rule
// can have run before it (see readTooEarly).
func (p *Policy) compileRule(path string, rd ruleDoc, limited bool, o options) (rule, error) {
	var errs []error
	if len(rd.Actions) == 0 {
		errs = append(errs, field.Invalid(path+".actions", "is required"))
	}
	var r rule
	end := -1            // the first terminating action, if any
	ranBefore := limited // whether a rate-limit action can have run before the action
	for j, ad := range rd.Actions {
		apath := fmt.Sprintf("%s.actions[%d]", path, j)
		if end >= 0 {
			errs = append(errs, unreachable(apath, ad.Type, end, rd.Actions[end].Type))
		} else if terminating(ad) {
			end = j
		}
		if o.skip && ad.Type != ActionType && ad.Type != ActionTypeCustomResponse && slices.Contains(actionTypes, ad.Type) {
			p.skipped = append(p.skipped, apath+" ("+ad.Type+")")
			continue
		}
		a, reads, err := compileAction(ad, o)
		if err == nil && !ranBefore {
			fix := "move this action after a rate-limit action of its rule, or into a later rule"
			if a.limit != nil {
				reads = bucketKeyReads(a.limit.cfg.BucketKey, &o.providers)
				fix = "a bucket key is evaluated before its own action's result exists"
			}
			var rerrs []error
			for _, at := range reads {
				rerrs = append(rerrs, readTooEarly(at.path, at.name, fix))
			}
			err = errors.Join(rerrs...)
		}
		ranBefore = ranBefore || ad.Type == ActionType
		if err != nil {
			errs = append(errs, field.Prefix(apath, err))
			continue
		}
		r.actions = append(r.actions, a)
	}
	if len(r.actions) == 0 && len(errs) == 0 {
		return r, nil
	}
	for j, expr := range rd.Expressions {
		epath := fmt.Sprintf("%s.expressions[%d]", path, j)
		c, err := compile(expr, cel.BoolType, &o.providers)
		if err != nil {
			errs = append(errs, field.Invalid(epath, "%v", err))
			continue
		}
		if name := resultRead(c.checked); name != "" && !limited {
			errs = append(errs, readTooEarly(epath, name, "rules run in order, and a rule's expressions before its actions; "+
				"put the test in a rule after one with a rate-limit action"))
			continue
		}
		r.exprs = append(r.exprs, c.prog)
	}
	return r, errors.Join(errs...)
}

// readTooEarly is the error for what reads name, one of the rate-limit
// action's results, at path, where no rate-limit action can have run:
// the value could never be any but its empty one, so a test of it could
// never pass (a rule gated on actions.ngrok.rate_limit.limited never
// fires). fix says what to do instead.
func readTooEarly(path, name, fix string) error {
	return field.Invalid(path, "reads %s, but no rate-limit action runs before it, so it can only see the empty "+
		"result (limited false, the others \"\"); %s", name, fix)
}

// resultRead returns the first of the rate-limit action's result variables
// (actions.ngrok.rate_limit.*) that checked reads, has() of one included,
// or "" if it reads none.
func resultRead(checked *cel.Ast) string {
	const prefix = "actions.ngrok.rate_limit."
	native := checked.NativeRep()
	refs := native.ReferenceMap()
	var name string
	ast.PreOrderVisit(native.Expr(), ast.NewExprVisitor(func(e ast.Expr) {
		if name != "" {
			return
		}
		if r, ok := refs[e.ID()]; ok && r.Value == nil && strings.HasPrefix(r.Name, prefix) {
			name = r.Name
			return
		}
		if e.Kind() == ast.CallKind && e.AsCall().FunctionName() == "__present" {
			if a := e.AsCall().Args(); len(a) == 2 && a[1].Kind() == ast.LiteralKind {
				if v, ok := a[1].AsLiteral().(types.String); ok && strings.HasPrefix(string(v), prefix) {
					name = string(v)
				}
			}
		}
	}))
	return name
}

// bucketKeyReads reports the bucket keys, of a rate-limit action that no
// other can have run before, that read the rate-limit action's results:
// a bucket key is evaluated before its own action's result exists.
// (They compiled once already, in the action; compiling those of such an
// action again is cheaper than keeping every expression's AST.)
func bucketKeyReads(keys []string, prov *providers) []resultReadAt {
	// Compiled a second time (the action compiled them first): not
	// counted again against the policy's bounds.
	uncounted := *prov
	uncounted.left, uncounted.nodesLeft = nil, nil
	var reads []resultReadAt
	for i, k := range keys {
		if c, err := compile(k, nil, &uncounted); err == nil {
			if name := resultRead(c.checked); name != "" {
				reads = append(reads, resultReadAt{fmt.Sprintf("config.bucket_key[%d]", i), name})
			}
		}
	}
	return reads
}

// terminating reports whether ad is one of the real service's terminating
// actions, which always end the request: custom-response, deny,
// close-connection, and forward-internal unless its config says
// on_error: continue. (redirect is not one: it does nothing when the URL
// would not change.)
func terminating(ad actionDoc) bool {
	switch ad.Type {
	case ActionTypeCustomResponse, "deny", "close-connection":
		return true
	case "forward-internal":
		cfg, _ := ad.Config.(map[string]any)
		return cfg["on_error"] != "continue"
	}
	return false
}

// unreachable is the error for the action at path, of type typ, which
// follows the terminating action actions[end], of type endType, in its
// rule: it could never run, and the real service refuses it
// (ERR_NGROK_2207).
func unreachable(path, typ string, end int, endType string) error {
	if typ == "" {
		typ = "this"
	}
	return field.Invalid(path, "the %s action is unreachable: actions[%d] (%s) before it always ends the request "+
		"(ERR_NGROK_2207); move it before actions[%d], or into a rule of its own", typ, end, endType, end)
}

// unreachableRule is the error for each rate-limit action of the rule at
// path, rd, which follows rule on_http_request[end], end: a rule without
// expressions with a terminating action, which ends every request before
// rd is reached. The action could never run, and a test that no request
// is limited would pass without it; nil when rd has no rate-limit action
// (other actions of a rule that cannot run are left, as the real service
// leaves them).
func unreachableRule(path string, rd ruleDoc, end int, endDoc ruleDoc) error {
	var errs []error
	i := slices.IndexFunc(endDoc.Actions, terminating)
	for j, ad := range rd.Actions {
		if ad.Type != ActionType {
			continue
		}
		errs = append(errs, field.Invalid(fmt.Sprintf("%s.actions[%d]", path, j),
			"the rate-limit action is unreachable: on_http_request[%d] before it has no expressions and its actions[%d] (%s) "+
				"always ends the request; move this rule before it, or give that rule expressions", end, i, endDoc.Actions[i].Type))
	}
	return errors.Join(errs...)
}

// resultReadAt is a place in an action's config that reads a rate-limit
// action's results: its path under the action ("config.body") and the
// first variable it reads.
type resultReadAt struct{ path, name string }

// compileAction compiles one action, and reports where its config's
// placeholders read the rate-limit action's results.
func compileAction(ad actionDoc, o options) (policyAction, []resultReadAt, error) {
	switch ad.Type {
	case ActionType:
		var cfg Config
		derr := decodeValue("config", ad.Config, &cfg)
		l, err := newLimit(cfg, o)
		if derr != nil || err != nil {
			return policyAction{}, nil, errors.Join(derr, without(field.Prefix("config", err), derr))
		}
		name := sfString(cfg.Name)
		return policyAction{limit: l, rlName: name,
			rlPolicy: name + ";q=" + strconv.FormatInt(cfg.Capacity, 10) + ";w=" + strconv.FormatInt(int64(l.limiter.window/time.Second), 10)}, nil, nil
	case ActionTypeCustomResponse:
		var cd customResponseDoc
		if err := decodeValue("config", ad.Config, &cd); err != nil {
			return policyAction{}, nil, err
		}
		// Without status_code the real service answers 200. 1xx codes are
		// informational: net/http would send a 200 after them, not the
		// response the policy describes.
		status := http.StatusOK
		if cd.StatusCode != nil {
			status = *cd.StatusCode
		}
		if status < 200 || status > 599 {
			return policyAction{}, nil, field.Invalid("config.status_code", "%d is not an HTTP status code from 200 to 599", status)
		}
		if len(cd.Headers) > maxCustomHeaders {
			return policyAction{}, nil, field.Invalid("config.headers", "has %d headers; the real service takes at most %d", len(cd.Headers), maxCustomHeaders)
		}
		resp := &customResponse{status: status}
		var errs []error
		var reads []resultReadAt
		var err error
		if resp.body, err = compileTemplate(cd.Body, maxBodyBytes, &o.providers); err != nil {
			errs = append(errs, field.Invalid("config.body", "%v", err))
		} else if resp.body.reads != "" {
			reads = append(reads, resultReadAt{"config.body", resp.body.reads})
		}
		seen := map[string]string{} // canonical name: the name as written
		for _, k := range sortedKeys(cd.Headers) {
			hpath := "config.headers." + k
			if !field.IsToken(k) {
				errs = append(errs, field.Invalid(hpath, "%q is not an HTTP header name (one or more of the letters, digits "+
					"and !#$%%&'*+-.^_`|~ of US-ASCII); net/http would not send it", k))
				continue
			}
			name := http.CanonicalHeaderKey(k)
			if name == "Content-Length" || name == "Transfer-Encoding" {
				errs = append(errs, field.Invalid(hpath, "%s is net/http's to set from the body; "+
					"another value would break the response (the client would read a truncated or unreadable body)", k))
				continue
			}
			if prev, dup := seen[name]; dup {
				errs = append(errs, field.Invalid(hpath, "names the same header as %s (header names are case-insensitive)", prev))
				continue
			}
			seen[name] = k
			v, err := compileTemplate(cd.Headers[k], maxHeaderValueBytes, &o.providers)
			if err == nil {
				err = checkFieldValue(v)
			}
			if err != nil {
				errs = append(errs, field.Invalid(hpath, "%v", err))
				continue
			}
			if v.reads != "" {
				reads = append(reads, resultReadAt{hpath, v.reads})
			}
			resp.headers = append(resp.headers, responseHeader{name, v})
		}
		if len(errs) > 0 {
			return policyAction{}, nil, errors.Join(errs...)
		}
		return policyAction{response: resp}, reads, nil
	case "":
		return policyAction{}, nil, field.Invalid("type", "is required")
	}
	if slices.Contains(actionTypes, ad.Type) {
		return policyAction{}, nil, field.Invalid("type", "action %s is not implemented by this package (only %s and %s are); "+
			"pass ratelimit.WithSkipUnsupported to skip it", ad.Type, ActionType, ActionTypeCustomResponse)
	}
	return policyAction{}, nil, field.Invalid("type", "unknown action type %q%s", ad.Type, suggest(ad.Type, actionTypes))
}

// suggest returns "; did you mean X?" for the element of names nearest to
// s, or "" when none is near.
func suggest(s string, names []string) string {
	if near := closest(s, 1, names); len(near) > 0 {
		return fmt.Sprintf("; did you mean %q?", near[0])
	}
	return ""
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

// Skipped returns what [WithSkipUnsupported] made the policy skip: phases
// ("on_http_response"), in name order, then actions
// ("on_http_request[0].actions[1] (deny)"), in document order; nil when
// nothing was skipped.
func (p *Policy) Skipped() []string { return slices.Clone(p.skipped) }

// without returns the field errors of err whose paths are not at or below
// those of decoded's, joined: a member that failed to decode is reported
// by its decoding error alone, not again by the validation of what it
// left empty.
func without(err, decoded error) error {
	fes := field.Errors(err)
	if len(fes) == 0 {
		return err // not field errors: keep as is
	}
	bad := field.Errors(decoded)
	var keep []error
	for _, e := range fes {
		if !slices.ContainsFunc(bad, func(d *field.Error) bool {
			return e.Field == d.Field || strings.HasPrefix(e.Field, d.Field+".") || strings.HasPrefix(e.Field, d.Field+"[")
		}) {
			keep = append(keep, e)
		}
	}
	return errors.Join(keep...)
}

// Handler returns next wrapped in the policy. When no action answers, next
// gets the request with the [Result] of the last rate-limit action that
// ran in its context (see [ResultFromContext]); carrying it costs two small
// allocations per such request, a new context and a copy of the request.
//
// Handler panics if next is nil (a nil [http.HandlerFunc] too), or p is,
// as [http.Handle] does for a nil handler: at once, rather than on the
// first request.
func (p *Policy) Handler(next http.Handler) http.Handler {
	if p == nil {
		panic("ratelimit: Handler called on a nil *Policy")
	}
	if f, isFunc := next.(http.HandlerFunc); next == nil || (isFunc && f == nil) {
		panic("ratelimit: Policy.Handler: nil handler")
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		res, ran, answered := p.serve(w, r)
		if answered {
			return
		}
		if ran {
			r = r.WithContext(&resultContext{Context: r.Context(), res: res})
		}
		next.ServeHTTP(w, r)
	})
}

// serve runs the rules for r. It returns the result of the last rate-limit
// action that ran, if any, and whether an action answered.
func (p *Policy) serve(w http.ResponseWriter, r *http.Request) (last Result, ran, answered bool) {
	a := p.pool.Get().(*activation)
	now := p.now()
	r = withURL(r) // a request built by hand may have none
	a.reset(r, now, p.clientIP, p.prov)
	defer func() {
		a.reset(nil, time.Time{}, nil, nil)
		p.pool.Put(a)
	}()
	for i := range p.rules {
		rl := &p.rules[i]
		if !matches(rl.exprs, a) {
			continue
		}
		for _, act := range rl.actions {
			if resp := act.response; resp != nil {
				resp.write(w, a)
				return last, ran, true
			}
			res := act.limit.evaluate(a, now)
			last, ran = res, true
			a.vars = actionVars{bucketKey: res.BucketKey, limited: res.Limited, errCode: res.ErrorCode, errMessage: res.ErrorMessage}
			if p.headers {
				writeHeaders(w.Header(), act, res)
			}
			if res.Reject {
				w.Header().Set("Retry-After", strconv.FormatInt(int64(res.RetryAfter/time.Second), 10))
				http.Error(w, http.StatusText(http.StatusTooManyRequests), http.StatusTooManyRequests)
				return last, ran, true
			}
		}
	}
	return last, ran, false
}

// write answers with r, its placeholders evaluated in a.
func (r *customResponse) write(w http.ResponseWriter, a *activation) {
	h := w.Header()
	for _, rh := range r.headers {
		v := rh.value.render(a)
		if rh.value.exprs != nil {
			v = fieldValue(v) // a placeholder's value is the request's to choose
		}
		h[rh.name] = []string{v}
	}
	w.WriteHeader(r.status)
	_, _ = io.WriteString(w, r.body.render(a))
}

// resultContext carries a Result without a separate allocation for it.
type resultContext struct {
	context.Context
	res Result
}

type resultKey struct{}

func (c *resultContext) Value(key any) any {
	if key == (resultKey{}) {
		return &c.res
	}
	return c.Context.Value(key)
}

// ResultFromContext returns the [Result] of the last rate-limit action a
// [Policy] evaluated for the request whose context is ctx (the
// actions.ngrok.rate_limit.* values, as with the real service only the
// last execution's), and false when none ran. A Policy's handler gives it
// to the next handler; with enforce: false, this is how the next handler
// sees that a request was over its limit.
func ResultFromContext(ctx context.Context) (Result, bool) {
	res, ok := ctx.Value(resultKey{}).(*Result)
	if !ok {
		return Result{}, false
	}
	return *res, true
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

// writeHeaders adds the draft RateLimit-Policy field for act and the
// RateLimit field, unless res has an error and is not limited: its bucket
// key failed to evaluate (and it was counted in no bucket of its own), or
// its store failed under FailOpen, so there is no quota to report. A
// limited request, whose 429 this may be, always has both.
func writeHeaders(h http.Header, act policyAction, res Result) {
	h.Add("RateLimit-Policy", act.rlPolicy)
	if res.ErrorCode != "" && !res.Limited {
		return // no bucket's count to report
	}
	v := act.rlName + ";r=" + strconv.FormatInt(res.Remaining, 10)
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
