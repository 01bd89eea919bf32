package k8sop

import (
	"errors"
	"fmt"
	"os"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/google/cel-go/common/types"

	"github.com/acctapi/acctapi"
)

func TestSelectors(t *testing.T) {
	now := time.Date(2030, 1, 10, 0, 0, 0, 0, time.UTC)
	ep := &Endpoint{ID: "ep_1", URL: "https://svc.ns", Type: "cloud", Port: 443, CreatedAt: time.Date(2030, 1, 5, 0, 0, 0, 0, time.UTC),
		Bindings: []string{"kubernetes"}, Metadata: `{"a":1}`, Name: "web", Tunnel: &acctapi.Ref{ID: "tn_1"}}
	tests := []struct {
		name  string
		exprs []string
		want  bool
	}{
		{"match", []string{`endpoint.url.startsWith("https://") && "kubernetes" in endpoint.bindings`}, true},
		{"no match", []string{`endpoint.type == "agent"`}, false},
		{"second matches", []string{`endpoint.name == "api"`, `endpoint.port == 443`}, true},
		{"nil ref reads empty", []string{`endpoint.domain.id == ""`}, true},
		{"timestamp", []string{`endpoint.created_at < timestamp("2031-01-01T00:00:00Z")`}, true},
		{"bool member", []string{`endpoint.pooling_enabled`}, false},
		{"in a list literal", []string{`endpoint.type in ["edge", "cloud"] && size(endpoint.bindings) == 1`}, true},
		{"empty list", nil, false},
		// The constructs of list filters (contract §3) that selectors
		// lacked: time.now, add and subtract, == null.
		{"time.now.subtract", []string{`endpoint.created_at > time.now.subtract("7d")`}, true},
		{"time.now.subtract, older", []string{`endpoint.created_at > time.now.subtract("4d")`}, false},
		{"timestamp().add", []string{`endpoint.created_at < timestamp("2030-01-04T00:00:00Z").add("1d12h")`}, true},
		{"time.now.add", []string{`time.now.add("1h") > endpoint.created_at`}, true},
		// Comparisons across int, uint and double, as CEL defines them
		// (a review saw them refused with the checker's overload error).
		{"int < double", []string{`endpoint.port < 443.5 && 1 < 2.5 && endpoint.url.size() > 1.5`}, true},
		{"int and uint", []string{`endpoint.port > 442u && endpoint.port >= 443.0 && 2u <= 2.0`}, true},
		// ! is supported, so !! is too (the parser folds it).
		{"double !", []string{`!!(endpoint.type == "cloud") && !!!(endpoint.port == 1)`}, true},
		{"negative literals", []string{`endpoint.port > -1 && endpoint.port in [-2, 443, - 3.5]`}, true},
		{"minus in strings", []string{`endpoint.url != "--x" && endpoint.url != r'\' && endpoint.url != '--' && endpoint.url != """--"""`}, true},
		// A reference the record shows as null is null (a review: it read
		// as a reference with empty members, never null).
		{"absent ref == null", []string{`endpoint.domain == null && null == endpoint.edge`}, true},
		{"absent ref != null", []string{`endpoint.domain != null || null != endpoint.edge`}, false},
		{"present ref == null", []string{`endpoint.tunnel == null`}, false},
		{"present ref != null", []string{`endpoint.tunnel != null && !(endpoint.tunnel == null)`}, true},
		{"substring on other ids", []string{`endpoint.tunnel.id.startsWith("tn_")`}, true},
		// As in list filters, null is an empty description or metadata
		// (the real service omits them when empty).
		{"empty description == null", []string{`endpoint.description == null && null != endpoint.metadata`}, true},
		{"metadata == null", []string{`endpoint.metadata == null`}, false},
		{"description in a list with null", []string{`endpoint.description in ["x", null]`}, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, err := CompileSelectors(tt.exprs)
			if err != nil {
				t.Fatal(err)
			}
			got, err := s.MatchAt(ep, now)
			if err != nil || got != tt.want {
				t.Errorf("Match = %v, %v; want %v, nil", got, err, tt.want)
			}
		})
	}
}

func TestCompileSelectorsErrors(t *testing.T) {
	tests := []struct {
		name, expr, reason string
	}{
		{"syntax", `endpoint.url ==`, "Syntax error"},
		{"unknown member", `endpoint.nope == "x"`, "undefined field 'nope'"},
		{"unknown variable", `req.host == "x"`, "only endpoint.<field> may be selected"},
		{"unknown name", `req == "x"`, "unknown name req"},
		{"not boolean", `endpoint.url`, "want bool"},
		{"int", `endpoint.port + 1 > 0`, "arithmetic (+) is not supported"},
		{"empty", ``, "Syntax error"},
		{"matches", `endpoint.url.matches("a+")`, "matches is not supported"},
		{"has", `has(endpoint.url)`, "the function has is not supported"},
		{"reference in a list", `endpoint.tunnel in [null]`, "a reference may be compared only with == null or != null"},
		{"null != bindings", `null != endpoint.bindings`, "endpoint.bindings is a list, never null"},
		{"comprehension", `endpoint.bindings.exists(b, b == "kubernetes")`, "the macro exists is not supported"},
		{"nested comprehensions", `[1,2,3].all(a, [1,2,3].all(b, a+b > 0))`, "the macro all is not supported"},
		{"list literal", `endpoint.bindings == ["kubernetes"]`, "a list literal is supported only on the right of in"},
		{"map literal", `{"a": 1} == {"a": 1}`, "map literals are not supported"},
		{"conversion", `string(endpoint.port) == "443"`, "the conversion string() is not supported"},
		{"index", `endpoint.bindings[0] == "kubernetes"`, "index access is not supported"},
		{"clock misspelt", `endpoint.created_at < time.later`, "only endpoint.<field> may be selected"},
		{"bad duration", `endpoint.created_at < time.now.subtract("1w")`, `invalid duration "1w"`},
		{"duration not a literal", `endpoint.created_at < time.now.subtract(endpoint.name)`, "subtract() takes a string literal"},
		{"constant time out of range", `endpoint.created_at < timestamp("9999-12-31T00:00:00Z").add("2d")`, "timestamp out of range"},
		{"startsWith on id", `endpoint.id.startsWith("ep_")`, "startsWith is not supported on endpoint.id"},
		{"contains of id", `"ep_1ab".contains(endpoint.id)`, "contains is not supported on endpoint.id"},
		{"endsWith on id", `endpoint.id.endsWith("x") || true`, "endsWith is not supported on endpoint.id"},
		{"list == null", `endpoint.bindings == null`, "endpoint.bindings is a list, never null; compare size(endpoint.bindings) with 0"},
		// == null on a member that is never null was false for every
		// endpoint, a silent "no match" (a review).
		{"string == null", `endpoint.url == null`, `endpoint.url is a string, never null; compare it with == ""`},
		{"null != string", `null != endpoint.host`, `endpoint.host is a string, never null`},
		{"int == null", `endpoint.port == null`, "endpoint.port is a number, never null"},
		{"bool == null", `endpoint.pooling_enabled != null`, "endpoint.pooling_enabled is a bool, never null"},
		{"time == null", `endpoint.created_at == null`, "endpoint.created_at is a timestamp, never null"},
		{"ref member == null", `endpoint.tunnel.id == null`, "endpoint.tunnel.id is a string, never null"},
		{"present ref == null", `endpoint.principal == null`, "endpoint.principal is never null"},
		{"null in a list", `endpoint.url in ["a", null]`, "in: endpoint.url is a string, never null; take null out of the list"},
		// A supported function called wrongly says how it is called
		// (a review saw "the function add is not supported").
		{"add, two arguments", `endpoint.created_at.add("1d", "2d") > time.now`, `add takes 1 argument, not 2: t.add("<duration>")`},
		{"subtract, not a method", `subtract(endpoint.created_at, "1d") > time.now`, "subtract is a method"},
		{"size, two arguments", `size(endpoint.description, 1) == 0`, "size takes one value: size(x) or x.size(), not 2 arguments"},
		{"size(), none", `size() == 0`, "size takes one value"},
		{"timestamp as a method", `"2020-01-01T00:00:00Z".timestamp() < time.now`, `timestamp is called as timestamp("<RFC 3339>"), not as a method`},
		{"contains, no argument", `endpoint.url.contains()`, "contains takes 1 argument, not 0"},
		{"startsWith, not a method", `startsWith(endpoint.url, "a")`, "startsWith is a method"},
		// The parser folds an even number of negations away (a review
		// saw --"abc" == "abc" accepted).
		{"--string", `--"abc" == "abc"`, "arithmetic (-) is not supported"},
		{"- -member", `- -endpoint.port == endpoint.port`, "arithmetic (-) is not supported"},
		{"----time", `----endpoint.created_at < time.now`, "arithmetic (-) is not supported"},
		{"--number", `endpoint.port == --1`, "arithmetic (-) is not supported"},
		{"-(-member)", `-(-endpoint.port) == 1`, "arithmetic (-) is not supported"},
		{"-- after a comment", "endpoint.port == - // x\n -1", "arithmetic (-) is not supported"},
		{"lists compared", `endpoint.bindings != endpoint.bindings`, "endpoint.bindings may be used only with in and size(), not compared"},
		{"references compared", `endpoint.domain == endpoint.tunnel`, "a reference may be compared only with null"},
		{"reference compared with a member", `endpoint.principal != endpoint.tunnel || true`, "a reference may be compared only with null"},
		{"bad time", `endpoint.created_at < timestamp("soon")`, `timestamp("soon")`},
		{"too long", `endpoint.url == "` + strings.Repeat("a", MaxSelectorBytes-len(`endpoint.url == ""`)+1) + `"`, "is 1025 bytes; at most 1024"},
		{"too costly", strings.Repeat(`endpoint.metadata.contains("b") || `, 25) + "false", "may cost more than 10000 per endpoint"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := CompileSelectors([]string{"true", tt.expr})
			fes := acctapi.FieldErrors(err)
			// The reason is in the FieldError's Reason, which a server
			// answers with (the fake's error body), not only in its Err.
			if len(fes) != 1 || fes[0].Field != "endpoint_selectors[1]" || fes[0].Code != acctapi.CodeInvalidValue ||
				!strings.Contains(fes[0].Reason, tt.reason) || strings.Contains(fes[0].Reason, "\n") {
				t.Errorf("errors = %v; want one on endpoint_selectors[1] whose reason says %q", err, tt.reason)
			}
		})
	}
}

// TestSelectorLimits checks contract §6's limits on an operator's
// selectors, as the SDK's validation (which the fake runs) reports them.
func TestSelectorLimits(t *testing.T) {
	create := func(sel []string) error {
		r := &OperatorCreate{EnabledFeatures: []string{"bindings"}, Binding: &BindingCreate{EndpointSelectors: sel}}
		return r.Validate()
	}
	fields := func(err error) []string {
		var out []string
		for _, fe := range acctapi.FieldErrors(err) {
			out = append(out, fe.Field)
		}
		return out
	}
	most := strings.Repeat(`endpoint.metadata.contains("b") || `, 23) + "false"
	if len(most) > MaxSelectorBytes {
		t.Fatalf("selector of %d bytes", len(most))
	}
	if err := create(slices.Repeat([]string{most}, MaxSelectors)); err != nil {
		t.Errorf("%d selectors of cost near the limit: %v", MaxSelectors, err)
	}
	exact := `endpoint.url == "` + strings.Repeat("a", MaxSelectorBytes-len(`endpoint.url == ""`)) + `"`
	if err := create([]string{exact}); err != nil {
		t.Errorf("a selector of %d bytes: %v", len(exact), err)
	}
	if got := fields(create(slices.Repeat([]string{"true"}, MaxSelectors+1))); len(got) != 1 || got[0] != "binding.endpoint_selectors" {
		t.Errorf("%d selectors: errors on %v; want binding.endpoint_selectors", MaxSelectors+1, got)
	}
	// The issue's reproduction: 149,776 selectors "true", refused without
	// compiling one.
	if got := fields(create(slices.Repeat([]string{"true"}, 149_776))); len(got) != 1 || got[0] != "binding.endpoint_selectors" {
		t.Errorf("149,776 selectors: errors on %v; want binding.endpoint_selectors", got)
	}
	// The limit is in bytes: 1,024 characters of two bytes each are over it.
	wide := `endpoint.url == "` + strings.Repeat("é", MaxSelectorBytes-len(`endpoint.url == ""`)) + `"`
	if got := fields(create([]string{wide})); fmt.Sprint(got) != "[binding.endpoint_selectors[0]]" {
		t.Errorf("a selector of %d characters and %d bytes: errors on %v", utf8.RuneCountInString(wide), len(wide), got)
	}
	long := exact + " "
	if got := fields(create([]string{"true", long, "true", long})); fmt.Sprint(got) != "[binding.endpoint_selectors[1] binding.endpoint_selectors[3]]" {
		t.Errorf("selectors over %d bytes: errors on %v", MaxSelectorBytes, got)
	}
	upd := &OperatorUpdate{Binding: &BindingUpdate{EndpointSelectors: &[]string{`endpoint.url.matches("a")`}}}
	if got := fields(upd.Validate()); fmt.Sprint(got) != "[binding.endpoint_selectors[0]]" {
		t.Errorf("update with a regular expression: errors on %v", got)
	}
}

// maxEndpoint is an endpoint of the largest size MaxSelectorCost assumes,
// its strings all "a" (so that searches for "a…ab" nearly match
// everywhere), bound to kubernetes.
func maxEndpoint() *Endpoint {
	a := func(n int) string { return strings.Repeat("a", n) }
	s := a(MaxEndpointStringBytes)
	ref := &acctapi.Ref{ID: s, URI: s}
	b := make([]string, MaxBindings)
	for i := range b {
		b[i] = s
	}
	b[len(b)-1] = "kubernetes"
	return &Endpoint{ID: s, URI: s, Region: s, CreatedAt: time.Date(2026, 11, 22, 0, 0, 0, 0, time.UTC), PublicURL: s,
		Proto: s, Scheme: s, HostPort: s, Host: s, Type: s, Metadata: a(acctapi.MaxMetadataBytes), Description: a(acctapi.MaxDescriptionBytes),
		Domain: ref, TCPAddr: ref, Tunnel: ref, Edge: ref, UpstreamURL: s, UpstreamProto: s, URL: s, Principal: *ref,
		TrafficPolicy: s, Bindings: b, TunnelSession: ref, Name: s}
}

// worstSelector is one of the costliest selectors we could build, and an
// operator's worst: MaxSelectors copies of it.
type worstSelector struct {
	name, expr string
	all        *Selectors
}

// worstSelectors are the costliest selectors we could build: each the
// longest chain of a term, none matching maxEndpoint, that CompileSelectors
// accepts. They are built once per test binary.
func worstSelectors(tb testing.TB) []worstSelector {
	tb.Helper()
	w, err := builtWorstSelectors()
	if err != nil {
		tb.Fatal(err)
	}
	return w
}

var builtWorstSelectors = sync.OnceValues(func() ([]worstSelector, error) {
	a := func(n int) string { return strings.Repeat("a", n) }
	terms := []struct{ name, term string }{
		{"or-equal", `endpoint.url == "b"`},
		{"or-ref-equal", `endpoint.domain.id == "b"`},
		{"or-contains", `endpoint.traffic_policy.contains("b")`},
		{"or-contains-60", `endpoint.metadata.contains("` + a(60) + `b")`},
		{"contains-1000", `endpoint.metadata.contains("` + a(980) + `b")`},
		{"or-in-bindings", `"b" in endpoint.bindings`},
		{"or-in-list", `endpoint.name in ["b", "c", "d", "e", "f", "g", "h"]`},
		{"or-size", `size(endpoint.metadata) == 0`},
		{"or-timestamp", `endpoint.created_at < timestamp("2000-01-01T00:00:00Z")`},
		{"or-false", `false`},
		{"or-not", `!true`},
		{"or-startsWith-100", `endpoint.host.startsWith("` + a(100) + `b")`},
		{"or-clock", `endpoint.created_at < time.now.subtract("99999d")`},
		{"or-ref-null", `endpoint.domain == null`},
	}
	out := make([]worstSelector, 0, len(terms))
	for _, tt := range terms {
		for n := MaxSelectorBytes / (len(tt.term) + 4); ; n-- {
			if n == 0 {
				return nil, fmt.Errorf("%s: no chain of %s compiles", tt.name, tt.term)
			}
			expr := strings.Repeat(tt.term+" || ", n-1) + tt.term
			if _, err := CompileSelectors([]string{expr}); err != nil {
				continue
			}
			s, err := CompileSelectors(slices.Repeat([]string{expr}, MaxSelectors))
			if err != nil {
				return nil, err
			}
			out = append(out, worstSelector{tt.name, expr, s})
			break
		}
	}
	return out, nil
})

// TestSelectorCostBound checks each of the worst selectors on a
// max-size endpoint: it matches nothing, and costs within MaxSelectorCost.
func TestSelectorCostBound(t *testing.T) {
	ep := maxEndpoint()
	for _, w := range worstSelectors(t) {
		s, err := CompileSelectors([]string{w.expr})
		if err != nil {
			t.Fatal(err)
		}
		ok, cost, err := s.match(ep, types.Timestamp{Time: ep.CreatedAt}, MaxSelectorCost)
		if ok || err != nil || cost > MaxSelectorCost {
			t.Errorf("%s: match %v, cost %d, %v; want no match within %d", w.name, ok, cost, err, MaxSelectorCost)
		}
		t.Logf("%s: %d bytes, cost %d", w.name, len(w.expr), cost)
	}
}

// TestMatcherBudget runs, for each of the worst selectors, a request of
// MaxSelectors copies of it over 10,000 max-size endpoints, and checks
// that the Matcher refuses to go on once its budget is spent, and not
// before: what it spent is over the budget by less than one selector's
// cost. The short run gives requests a twentieth of MatchBudget (under
// -race, the real one takes seconds); ACCTAPI_LONG=1 runs them with
// MatchBudget.
func TestMatcherBudget(t *testing.T) {
	budget := uint64(MatchBudget / 20)
	if os.Getenv("ACCTAPI_LONG") != "" {
		budget = MatchBudget
	}
	ep := maxEndpoint()
	for _, w := range worstSelectors(t) {
		t.Run(w.name, func(t *testing.T) {
			m := w.all.Matcher(budget)
			var err error
			evals := 0
			for range 10_000 {
				evals++
				if _, err = m.Match(ep); err != nil {
					break
				}
			}
			if !errors.Is(err, ErrMatchBudget) {
				t.Fatalf("after %d endpoints: %v; want ErrMatchBudget", evals, err)
			}
			if m.Spent() <= budget || m.Spent() > budget+MaxSelectorCost {
				t.Errorf("spent %d; want in (%d, %d]", m.Spent(), budget, budget+MaxSelectorCost)
			}
			if _, err := m.Match(&Endpoint{}); !errors.Is(err, ErrMatchBudget) {
				t.Errorf("after the budget: %v; want ErrMatchBudget", err)
			}
			t.Logf("refused at endpoint %d, spent %d", evals, m.Spent())
		})
	}
}

// TestNilSelectorsFail pins a review's finding: a nil *Selectors (never
// compiled) and a zero Matcher matched nothing, silently, so a test of
// bindings whose selectors were never set passed as "nothing bound". They
// are errors now; selectors compiled from an empty list still match
// nothing.
func TestNilSelectorsFail(t *testing.T) {
	var s *Selectors
	if ok, err := s.Match(&Endpoint{}); ok || err == nil || !strings.Contains(err.Error(), "nil") {
		t.Errorf("Match = %v, %v; want an error naming the nil *Selectors", ok, err)
	}
	if ok, err := s.Matcher(1).Match(&Endpoint{}); ok || err == nil {
		t.Errorf("Matcher.Match = %v, %v; want an error", ok, err)
	}
	var m Matcher
	if ok, err := m.Match(&Endpoint{}); ok || err == nil {
		t.Errorf("zero Matcher: Match = %v, %v; want an error", ok, err)
	}
	none, err := CompileSelectors(nil)
	if err != nil {
		t.Fatal(err)
	}
	if ok, err := none.Match(&Endpoint{}); ok || err != nil || none.Len() != 0 || s.Len() != 0 {
		t.Errorf("no selectors: Match = %v, %v, Len %d (nil: %d); want false, nil, 0, 0", ok, err, none.Len(), s.Len())
	}
	// What validation hands out can be matched with: an empty list given
	// compiles to selectors that match nothing (a second review found it
	// handed out nil); nil stands only for none given.
	p, err := (&OperatorCreate{EnabledFeatures: []string{FeatureBindings}, Binding: &BindingCreate{EndpointSelectors: []string{}}}).ValidateParsed()
	if err != nil {
		t.Fatal(err)
	}
	if ok, err := p.Selectors.Match(&Endpoint{}); ok || err != nil {
		t.Errorf("an empty list given: Match = %v, %v; want false, nil", ok, err)
	}
	p, err = (&OperatorCreate{EnabledFeatures: []string{FeatureBindings}, Binding: &BindingCreate{}}).ValidateParsed()
	if err != nil || p.Selectors != nil {
		t.Errorf("no list given: %v, %v; want nil selectors", p.Selectors, err)
	}
}

func ExampleSelectors_Matcher() {
	sel, err := CompileSelectors([]string{`"kubernetes" in endpoint.bindings && endpoint.port == 443`})
	if err != nil {
		panic(err)
	}
	// One Matcher per request: it stops the request once its evaluations
	// have cost more than the budget.
	m := sel.Matcher(MatchBudget)
	endpoints := []Endpoint{
		{ID: "ep_2", Port: 443, Bindings: []string{"kubernetes"}},
		{ID: "ep_1", Port: 80, Bindings: []string{"kubernetes"}},
	}
	for _, e := range endpoints {
		ok, err := m.Match(&e)
		if errors.Is(err, ErrMatchBudget) {
			fmt.Println("too costly")
			return
		}
		fmt.Println(e.ID, ok)
	}
	// Output:
	// ep_2 true
	// ep_1 false
}

func BenchmarkMatch(b *testing.B) {
	s, err := CompileSelectors([]string{`endpoint.type == "agent"`, `"kubernetes" in endpoint.bindings`})
	if err != nil {
		b.Fatal(err)
	}
	ep := &Endpoint{Bindings: []string{"public", "kubernetes"}}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := s.Match(ep); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkMatcherWorst measures one bound-endpoints request's matching
// with MatchBudget: MaxSelectors copies of each of the worst selectors,
// over 10,000 max-size endpoints (each op is one request; endpoints/op is
// how many it looked at before its budget ended it).
func BenchmarkMatcherWorst(b *testing.B) {
	ep := maxEndpoint()
	for _, w := range worstSelectors(b) {
		b.Run(w.name, func(b *testing.B) {
			var n int
			b.ReportAllocs()
			for b.Loop() {
				m := w.all.Matcher(MatchBudget)
				for n = 1; n <= 10_000; n++ {
					if _, err := m.Match(ep); err != nil {
						break
					}
				}
			}
			b.ReportMetric(float64(n), "endpoints/op")
		})
	}
}

// TestMatchNilEndpoint pins a review's finding: a nil endpoint "did not
// match", so a test whose endpoint pointer was never set passed. It is an
// error, through Selectors and a Matcher, with selectors or none.
func TestMatchNilEndpoint(t *testing.T) {
	s, err := CompileSelectors([]string{`endpoint.name == "x"`})
	if err != nil {
		t.Fatal(err)
	}
	for name, ss := range map[string]*Selectors{"selectors": s, "none": nil} {
		if ok, err := ss.Match(nil); ok || err == nil {
			t.Errorf("%s: Match(nil) = %v, %v; want an error", name, ok, err)
		}
		if ok, err := ss.MatcherAt(time.Now(), MatchBudget).Match(nil); ok || err == nil {
			t.Errorf("%s: Matcher.Match(nil) = %v, %v; want an error", name, ok, err)
		}
	}
}
