package k8sop

import (
	"testing"

	"github.com/acctapi/acctapi"
)

func TestSelectors(t *testing.T) {
	ep := &Endpoint{ID: "ep_1", URL: "https://svc.ns", Type: "cloud", Port: 443,
		Bindings: []string{"kubernetes"}, Metadata: `{"a":1}`, Name: "web"}
	tests := []struct {
		name  string
		exprs []string
		want  bool
	}{
		{"match", []string{`endpoint.url.startsWith("https://") && "kubernetes" in endpoint.bindings`}, true},
		{"no match", []string{`endpoint.type == "agent"`}, false},
		{"second matches", []string{`endpoint.name == "api"`, `endpoint.port == 443`}, true},
		{"nil ref reads empty", []string{`endpoint.domain.id == ""`}, true},
		{"timestamp", []string{`endpoint.created_at < timestamp("2026-01-01T00:00:00Z")`}, true},
		{"bool member", []string{`endpoint.pooling_enabled`}, false},
		{"empty list", nil, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, err := CompileSelectors(tt.exprs)
			if err != nil {
				t.Fatal(err)
			}
			got, err := s.Match(ep)
			if err != nil || got != tt.want {
				t.Errorf("Match = %v, %v; want %v, nil", got, err, tt.want)
			}
		})
	}
}

func TestCompileSelectorsErrors(t *testing.T) {
	tests := []struct {
		name string
		expr string
	}{
		{"syntax", `endpoint.url ==`},
		{"unknown member", `endpoint.nope == "x"`},
		{"unknown variable", `req.host == "x"`},
		{"not boolean", `endpoint.url`},
		{"int", `endpoint.port + 1`},
		{"empty", ``},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := CompileSelectors([]string{"true", tt.expr})
			fes := acctapi.FieldErrors(err)
			if len(fes) != 1 || fes[0].Field != "endpoint_selectors[1]" || fes[0].Code != acctapi.CodeInvalidValue {
				t.Errorf("errors = %v; want one on endpoint_selectors[1]", err)
			}
		})
	}
}

func TestSelectorsCostLimit(t *testing.T) {
	s, err := CompileSelectors([]string{`[1,2,3,4,5,6,7,8,9,10].all(a, [1,2,3,4,5,6,7,8,9,10].all(b, [1,2,3,4,5,6,7,8,9,10].all(c, [1,2,3,4,5,6,7,8,9,10].all(d, a+b+c+d > 0))))`})
	if err != nil {
		t.Fatal(err)
	}
	if ok, err := s.Match(&Endpoint{}); ok || err == nil {
		t.Errorf("Match = %v, %v; want false and a cost error", ok, err)
	}
}

func TestNilSelectorsMatchNothing(t *testing.T) {
	var s *Selectors
	if ok, err := s.Match(&Endpoint{}); ok || err != nil {
		t.Errorf("Match = %v, %v; want false, nil", ok, err)
	}
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
