package k8sop

import (
	"encoding/json"
	"encoding/pem"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/acctapi/acctapi"
	"github.com/acctapi/acctapi/internal/apitest"
)

func TestOperatorJSON(t *testing.T) {
	op := apitest.ReadGolden[Operator](t, "operator_create_response.json")
	if op.Binding == nil || !op.Binding.Cert.NotBefore.IsZero() || op.Binding.Cert.Cert != "" {
		t.Errorf("binding = %+v; want an empty cert with zero times", op.Binding)
	}
	if op.Binding.EndpointSelectors != nil {
		t.Errorf("endpoint_selectors = %v; want nil", op.Binding.EndpointSelectors)
	}
}

func TestEndpointListJSON(t *testing.T) {
	l := apitest.ReadGolden[EndpointList](t, "bound_endpoints_response.json")
	if len(l.Endpoints) != 1 || l.Endpoints[0].Port != 443 || l.NextPage() != "" {
		t.Errorf("list = %+v", l)
	}
}

func TestZeroCertJSON(t *testing.T) {
	b, err := json.Marshal(Cert{})
	if err != nil {
		t.Fatal(err)
	}
	const want = `{"cert":"","not_before":"0001-01-01T00:00:00Z","not_after":"0001-01-01T00:00:00Z"}`
	if string(b) != want {
		t.Errorf("zero cert = %s; want %s", b, want)
	}
}

const invalid = " " + acctapi.CodeInvalidValue

func TestOperatorCreateValidate(t *testing.T) {
	csr := newCSR(t)
	bindings := []string{"Bindings"}
	apitest.RunValidate(t, []apitest.ValidateCase{
		{"zero", &OperatorCreate{}, nil},
		{"description at limit", &OperatorCreate{Description: strings.Repeat("é", 127) + "x"}, nil},
		{"description past limit", &OperatorCreate{Description: strings.Repeat("é", 128)}, []string{"description " + acctapi.CodeDescriptionTooLong}},
		{"metadata at limit", &OperatorCreate{Metadata: strings.Repeat("m", 4096)}, nil},
		{"metadata past limit", &OperatorCreate{Metadata: strings.Repeat("m", 4097)}, []string{"metadata " + acctapi.CodeMetadataTooLong}},
		{"features any case", &OperatorCreate{EnabledFeatures: []string{"INGRESS", "gateway", "Bindings", "ingress"}}, nil},
		{"unknown feature", &OperatorCreate{EnabledFeatures: []string{"ingress", "bindingss"}}, []string{"enabled_features[1]" + invalid}},
		{"empty feature", &OperatorCreate{EnabledFeatures: []string{""}}, []string{"enabled_features[0]" + invalid}},
		{"binding with bindings", &OperatorCreate{EnabledFeatures: bindings, Binding: &BindingCreate{}}, nil},
		{"binding without bindings", &OperatorCreate{EnabledFeatures: []string{"ingress"}, Binding: &BindingCreate{}}, []string{"binding" + invalid}},
		{"valid csr", &OperatorCreate{EnabledFeatures: bindings, Binding: &BindingCreate{CSR: csr}}, nil},
		{"csr not PEM", &OperatorCreate{EnabledFeatures: bindings, Binding: &BindingCreate{CSR: "csr"}}, []string{"binding.csr" + invalid}},
		{"valid selector", &OperatorCreate{EnabledFeatures: bindings, Binding: &BindingCreate{EndpointSelectors: []string{"true"}}}, nil},
		{"invalid selector", &OperatorCreate{EnabledFeatures: bindings, Binding: &BindingCreate{EndpointSelectors: []string{"true", "1"}}}, []string{"binding.endpoint_selectors[1]" + invalid}},
	})
}

func TestOperatorUpdateValidate(t *testing.T) {
	long := strings.Repeat("d", 256)
	bad := []string{"nope"}
	apitest.RunValidate(t, []apitest.ValidateCase{
		{"empty", &OperatorUpdate{ID: "k8sop_1"}, nil},
		{"description past limit", &OperatorUpdate{Description: &long}, []string{"description " + acctapi.CodeDescriptionTooLong}},
		{"metadata past limit", &OperatorUpdate{Metadata: apitest.Ptr(strings.Repeat("m", 4097))}, []string{"metadata " + acctapi.CodeMetadataTooLong}},
		{"unknown feature", &OperatorUpdate{EnabledFeatures: &bad}, []string{"enabled_features[0]" + invalid}},
		{"binding, features absent", &OperatorUpdate{Binding: &BindingUpdate{}}, nil},
		{"binding, bindings sent", &OperatorUpdate{EnabledFeatures: &[]string{"BINDINGS"}, Binding: &BindingUpdate{}}, nil},
		{"binding, bindings not sent", &OperatorUpdate{EnabledFeatures: &[]string{"ingress"}, Binding: &BindingUpdate{}}, []string{"binding" + invalid}},
		{"bad csr", &OperatorUpdate{Binding: &BindingUpdate{CSR: apitest.Ptr("-----BEGIN CERTIFICATE REQUEST-----\nAAAA\n-----END CERTIFICATE REQUEST-----\n")}}, []string{"binding.csr" + invalid}},
		{"bad selector", &OperatorUpdate{Binding: &BindingUpdate{EndpointSelectors: &[]string{"endpoint.url"}}}, []string{"binding.endpoint_selectors[0]" + invalid}},
		{"deployment", &OperatorUpdate{Deployment: &DeploymentUpdate{Name: apitest.Ptr("n"), Version: apitest.Ptr("v")}}, nil},
	})
}

func TestOperatorUpdateCheckBinding(t *testing.T) {
	tests := []struct {
		name   string
		r      OperatorUpdate
		stored []string
		ok     bool
	}{
		{"no binding", OperatorUpdate{}, nil, true},
		{"stored bindings", OperatorUpdate{Binding: &BindingUpdate{}}, []string{"bindings"}, true},
		{"stored without bindings", OperatorUpdate{Binding: &BindingUpdate{}}, []string{"ingress"}, false},
		{"sent features win", OperatorUpdate{EnabledFeatures: &[]string{"ingress"}, Binding: &BindingUpdate{}}, []string{"bindings"}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if err := tt.r.CheckBinding(tt.stored); (err == nil) != tt.ok {
				t.Errorf("CheckBinding = %v; want ok %v", err, tt.ok)
			}
		})
	}
}

func TestNormalize(t *testing.T) {
	c := OperatorCreate{EnabledFeatures: []string{"Ingress", "BINDINGS", "ingress"}}
	c.Normalize()
	want := OperatorCreate{EnabledFeatures: []string{"ingress", "bindings"}, Region: DefaultRegion}
	if diff := cmp.Diff(want, c); diff != "" {
		t.Errorf("create Normalize (-want +got):\n%s", diff)
	}
	u := OperatorUpdate{EnabledFeatures: &[]string{"Gateway", "gateway"}, Region: apitest.Ptr("")}
	u.Normalize()
	wantU := OperatorUpdate{EnabledFeatures: &[]string{"gateway"}, Region: apitest.Ptr(DefaultRegion)}
	if diff := cmp.Diff(wantU, u); diff != "" {
		t.Errorf("update Normalize (-want +got):\n%s", diff)
	}
}

func TestParseCSR(t *testing.T) {
	good := newCSR(t)
	block, _ := pem.Decode([]byte(good))
	tampered := append([]byte(nil), block.Bytes...)
	tampered[len(tampered)-3] ^= 0xff
	tests := []struct {
		name string
		in   string
		ok   bool
	}{
		{"valid", good, true},
		{"surrounded by white space", "\n\n" + good + "\n \n", true},
		{"empty", "", false},
		{"not PEM", "hello", false},
		{"text before", "x" + good, false},
		{"text after", good + "x", false},
		{"two blocks", good + good, false},
		{"wrong type", strings.ReplaceAll(good, "CERTIFICATE REQUEST", "CERTIFICATE"), false},
		{"bad signature", string(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE REQUEST", Bytes: tampered})), false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if _, err := ParseCSR(tt.in); (err == nil) != tt.ok {
				t.Errorf("ParseCSR = %v; want ok %v", err, tt.ok)
			}
		})
	}
}
