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

// garbageCSR is a PEM block of the right type whose contents are not a
// certificate request.
const garbageCSR = "-----BEGIN CERTIFICATE REQUEST-----\nAAAA\n-----END CERTIFICATE REQUEST-----\n"

func TestValidateAnnotations(t *testing.T) {
	apitest.RunAnnotations(t, []apitest.Annotated{
		{"OperatorCreate", func(d, m string) apitest.Validator { return &OperatorCreate{Description: d, Metadata: m} }},
		{"OperatorUpdate", func(d, m string) apitest.Validator {
			return &OperatorUpdate{ID: "k8sop_1", Description: &d, Metadata: &m}
		}},
	})
}

func TestOperatorCreateValidate(t *testing.T) {
	csr := newCSR(t)
	bindings := []string{"Bindings"}
	apitest.RunValidate(t, []apitest.ValidateCase{
		{"zero", &OperatorCreate{}, nil},
		{"no features", &OperatorCreate{EnabledFeatures: []string{}}, nil},
		{"every feature", &OperatorCreate{EnabledFeatures: []string{"bindings", "ingress", "gateway"}}, nil},
		{"features any case", &OperatorCreate{EnabledFeatures: []string{"INGRESS", "gateway", "Bindings", "ingress"}}, nil},
		{"feature repeated", &OperatorCreate{EnabledFeatures: []string{"gateway", "GATEWAY", "Gateway"}}, nil},
		{"unknown feature", &OperatorCreate{EnabledFeatures: []string{"ingress", "bindingss"}}, []string{"enabled_features[1]" + invalid}},
		{"feature padded", &OperatorCreate{EnabledFeatures: []string{" ingress"}}, []string{"enabled_features[0]" + invalid}},
		{"singular feature", &OperatorCreate{EnabledFeatures: []string{"binding"}}, []string{"enabled_features[0]" + invalid}},
		{"empty feature", &OperatorCreate{EnabledFeatures: []string{""}}, []string{"enabled_features[0]" + invalid}},
		// Letter case is ASCII's: İ (U+0130) lowers to i in Unicode.
		{"non-ASCII capital", &OperatorCreate{EnabledFeatures: []string{"BİNDİNGS"}}, []string{"enabled_features[0]" + invalid}},
		{"two bad features", &OperatorCreate{EnabledFeatures: []string{"x", "gateway", "y"}}, []string{"enabled_features[0]" + invalid, "enabled_features[2]" + invalid}},
		{"region", &OperatorCreate{Region: "eu"}, nil},
		{"binding with bindings", &OperatorCreate{EnabledFeatures: bindings, Binding: &BindingCreate{}}, nil},
		{"binding with bindings among others", &OperatorCreate{EnabledFeatures: []string{"ingress", "BINDINGS"}, Binding: &BindingCreate{}}, nil},
		{"binding without bindings", &OperatorCreate{EnabledFeatures: []string{"ingress"}, Binding: &BindingCreate{}}, []string{"binding" + invalid}},
		{"binding without features", &OperatorCreate{Binding: &BindingCreate{}}, []string{"binding" + invalid}},
		{"binding with a misspelt bindings", &OperatorCreate{EnabledFeatures: []string{"bindingss"}, Binding: &BindingCreate{}},
			[]string{"enabled_features[0]" + invalid, "binding" + invalid}},
		{"binding without bindings and bad csr", &OperatorCreate{Binding: &BindingCreate{CSR: "x"}}, []string{"binding" + invalid, "binding.csr" + invalid}},
		{"valid csr", &OperatorCreate{EnabledFeatures: bindings, Binding: &BindingCreate{CSR: csr}}, nil},
		{"csr not PEM", &OperatorCreate{EnabledFeatures: bindings, Binding: &BindingCreate{CSR: "csr"}}, []string{"binding.csr" + invalid}},
		{"csr garbage in PEM", &OperatorCreate{EnabledFeatures: bindings, Binding: &BindingCreate{CSR: garbageCSR}}, []string{"binding.csr" + invalid}},
		{"csr a certificate", &OperatorCreate{EnabledFeatures: bindings, Binding: &BindingCreate{CSR: strings.ReplaceAll(csr, "CERTIFICATE REQUEST", "CERTIFICATE")}},
			[]string{"binding.csr" + invalid}},
		{"csr twice", &OperatorCreate{EnabledFeatures: bindings, Binding: &BindingCreate{CSR: csr + csr}}, []string{"binding.csr" + invalid}},
		{"valid selector", &OperatorCreate{EnabledFeatures: bindings, Binding: &BindingCreate{EndpointSelectors: []string{"true"}}}, nil},
		{"invalid selector", &OperatorCreate{EnabledFeatures: bindings, Binding: &BindingCreate{EndpointSelectors: []string{"true", "1"}}}, []string{"binding.endpoint_selectors[1]" + invalid}},
	})
}

func TestOperatorUpdateValidate(t *testing.T) {
	csr := newCSR(t)
	bad := []string{"nope"}
	apitest.RunValidate(t, []apitest.ValidateCase{
		{"empty", &OperatorUpdate{ID: "k8sop_1"}, nil},
		{"features any case, repeated", &OperatorUpdate{EnabledFeatures: &[]string{"Gateway", "INGRESS", "gateway"}}, nil},
		{"features cleared", &OperatorUpdate{EnabledFeatures: &[]string{}}, nil},
		{"unknown feature", &OperatorUpdate{EnabledFeatures: &bad}, []string{"enabled_features[0]" + invalid}},
		{"empty feature", &OperatorUpdate{EnabledFeatures: &[]string{"ingress", ""}}, []string{"enabled_features[1]" + invalid}},
		{"region empty", &OperatorUpdate{Region: apitest.Ptr("")}, nil},
		{"binding, features absent", &OperatorUpdate{Binding: &BindingUpdate{}}, nil},
		{"binding, bindings sent", &OperatorUpdate{EnabledFeatures: &[]string{"BINDINGS"}, Binding: &BindingUpdate{}}, nil},
		{"binding, bindings not sent", &OperatorUpdate{EnabledFeatures: &[]string{"ingress"}, Binding: &BindingUpdate{}}, []string{"binding" + invalid}},
		{"binding, features cleared", &OperatorUpdate{EnabledFeatures: &[]string{}, Binding: &BindingUpdate{}}, []string{"binding" + invalid}},
		{"valid csr", &OperatorUpdate{Binding: &BindingUpdate{CSR: &csr}}, nil},
		{"bad csr", &OperatorUpdate{Binding: &BindingUpdate{CSR: apitest.Ptr(garbageCSR)}}, []string{"binding.csr" + invalid}},
		{"csr not PEM", &OperatorUpdate{Binding: &BindingUpdate{CSR: apitest.Ptr("csr")}}, []string{"binding.csr" + invalid}},
		{"csr with text after", &OperatorUpdate{Binding: &BindingUpdate{CSR: apitest.Ptr(csr + "x")}}, []string{"binding.csr" + invalid}},
		{"bad selector", &OperatorUpdate{Binding: &BindingUpdate{EndpointSelectors: &[]string{"endpoint.url"}}}, []string{"binding.endpoint_selectors[0]" + invalid}},
		{"deployment", &OperatorUpdate{Deployment: &DeploymentUpdate{Name: apitest.Ptr("n"), Version: apitest.Ptr("v")}}, nil},
		{"deployment empty", &OperatorUpdate{Deployment: &DeploymentUpdate{}}, nil},
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

	// A region that is set stays; absent members stay absent; an empty
	// feature list stays empty, not nil.
	c = OperatorCreate{Region: "eu", EnabledFeatures: []string{}}
	c.Normalize()
	if diff := cmp.Diff(OperatorCreate{Region: "eu", EnabledFeatures: []string{}}, c); diff != "" {
		t.Errorf("create Normalize with a region (-want +got):\n%s", diff)
	}
	u = OperatorUpdate{ID: "k8sop_1", Region: apitest.Ptr("us")}
	u.Normalize()
	if diff := cmp.Diff(OperatorUpdate{ID: "k8sop_1", Region: apitest.Ptr("us")}, u); diff != "" {
		t.Errorf("update Normalize with a region (-want +got):\n%s", diff)
	}
	u = OperatorUpdate{}
	u.Normalize()
	if diff := cmp.Diff(OperatorUpdate{}, u); diff != "" {
		t.Errorf("Normalize of an empty update (-want +got):\n%s", diff)
	}
}

// TestDeploymentUpdateMembers checks that an update's deployment carries
// only name and version: it encodes no other member, and a strict decoder
// (as the fake's) refuses any other.
func TestDeploymentUpdateMembers(t *testing.T) {
	b, err := json.Marshal(OperatorUpdate{ID: "k8sop_1", Deployment: &DeploymentUpdate{Name: apitest.Ptr("n"), Version: apitest.Ptr("")}})
	if err != nil {
		t.Fatal(err)
	}
	if want := `{"id":"k8sop_1","deployment":{"name":"n","version":""}}`; string(b) != want {
		t.Errorf("encoded %s; want %s", b, want)
	}
	for _, member := range []string{"namespace", "cluster_name", "Namespace"} {
		dec := json.NewDecoder(strings.NewReader(`{"deployment":{"name":"n",` + apitest.Quote(member) + `:"x"}}`))
		dec.DisallowUnknownFields()
		if err := dec.Decode(new(OperatorUpdate)); err == nil {
			t.Errorf("strict decode of deployment.%s succeeded; want an unknown-member error", member)
		}
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
		{"a line of text before", "junk\n" + good, false},
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
