package k8sop

import (
	"testing"
	"time"

	"github.com/acctapi/acctapi/internal/apitest"
)

func TestGoldenRoundTrip(t *testing.T) {
	apitest.RunGolden(t, []apitest.GoldenFile{
		{"operator.golden.json", new(Operator)},
		{"operator_list.golden.json", new(OperatorList)},
		{"endpoint_list.golden.json", new(EndpointList)},
	})
}

func TestGoldenValues(t *testing.T) {
	op := apitest.ReadGolden[Operator](t, "operator.golden.json")
	if op.Binding == nil || !op.Binding.Cert.NotBefore.IsZero() || op.Binding.Cert.Cert != "" {
		t.Errorf("binding = %+v; want an empty cert with zero times", op.Binding)
	}
	if op.Binding.EndpointSelectors != nil {
		t.Errorf("endpoint_selectors = %v; want nil", op.Binding.EndpointSelectors)
	}

	l := apitest.ReadGolden[OperatorList](t, "operator_list.golden.json")
	if len(l.PageItems()) != 2 || l.NextPageURI == nil || l.NextPage() != *l.NextPageURI {
		t.Fatalf("operator list = %+v; want two operators and a next page", l)
	}
	bound := l.Operators[0]
	if want := time.Date(2026, 8, 21, 9, 15, 30, 0, time.UTC); bound.Binding == nil || !bound.Binding.Cert.NotAfter.Equal(want) ||
		bound.Binding.IngressEndpoint == "" || len(bound.Binding.EndpointSelectors) != 2 {
		t.Errorf("first operator's binding = %+v; want a cert until %v, an ingress endpoint and two selectors", bound.Binding, want)
	}
	if _, err := CompileSelectors(bound.Binding.EndpointSelectors); err != nil {
		t.Errorf("golden selectors do not compile: %v", err)
	}
	if f := l.Operators[1].EnabledFeatures; f == nil || len(f) != 0 {
		t.Errorf("second operator's features = %#v; want empty, non-nil", f)
	}

	el := apitest.ReadGolden[EndpointList](t, "endpoint_list.golden.json")
	if len(el.Endpoints) != 1 || el.Endpoints[0].Port != 443 || el.NextPage() != "" {
		t.Errorf("endpoint list = %+v", el)
	}
}
