package k8sop

import (
	"fmt"
	"testing"
)

// TestValidateParsed: the requests' ValidateParsed answers as Validate
// does and returns the compiled selectors and the parsed CSR of a valid
// binding (nil for what it lacks), and nothing with an error.
func TestValidateParsed(t *testing.T) {
	t.Parallel()
	csr := newCSR(t)
	sel := []string{`"kubernetes" in endpoint.bindings`}
	bindings := []string{FeatureBindings}
	type row struct {
		name         string
		validate     func() error
		parse        func() (ParsedBinding, error)
		ok, sel, csr bool
	}
	create := func(name string, r *OperatorCreate, ok, sel, csr bool) row {
		return row{name, r.Validate, r.ValidateParsed, ok, sel, csr}
	}
	update := func(name string, r *OperatorUpdate, ok, sel, csr bool) row {
		return row{name, r.Validate, r.ValidateParsed, ok, sel, csr}
	}
	for _, tt := range []row{
		create("create without a binding", &OperatorCreate{}, true, false, false),
		create("create with both", &OperatorCreate{EnabledFeatures: bindings, Binding: &BindingCreate{EndpointSelectors: sel, CSR: csr}}, true, true, true),
		// An empty list compiles to selectors that match nothing; none
		// given is nil.
		create("create with an empty list of selectors", &OperatorCreate{EnabledFeatures: bindings, Binding: &BindingCreate{EndpointSelectors: []string{}, CSR: csr}}, true, true, true),
		create("create with no selectors", &OperatorCreate{EnabledFeatures: bindings, Binding: &BindingCreate{CSR: csr}}, true, false, true),
		create("create with a bad CSR", &OperatorCreate{EnabledFeatures: bindings, Binding: &BindingCreate{EndpointSelectors: sel, CSR: garbageCSR}}, false, false, false),
		create("create, valid binding, bad feature", &OperatorCreate{EnabledFeatures: []string{"bindings", "teleport"}, Binding: &BindingCreate{EndpointSelectors: sel}}, false, false, false),
		update("update without a binding", &OperatorUpdate{ID: "k8sop_1"}, true, false, false),
		update("update with selectors", &OperatorUpdate{ID: "k8sop_1", Binding: &BindingUpdate{EndpointSelectors: &sel}}, true, true, false),
		update("update with a CSR", &OperatorUpdate{ID: "k8sop_1", Binding: &BindingUpdate{CSR: &csr}}, true, false, true),
		update("update with a bad selector", &OperatorUpdate{ID: "k8sop_1", Binding: &BindingUpdate{EndpointSelectors: &[]string{"endpoint."}}}, false, false, false),
	} {
		t.Run(tt.name, func(t *testing.T) {
			p, err := tt.parse()
			if verr := tt.validate(); fmt.Sprint(verr) != fmt.Sprint(err) {
				t.Errorf("ValidateParsed's error %v, Validate's %v", err, verr)
			}
			if (err == nil) != tt.ok || (p.Selectors != nil) != tt.sel || (p.CSR != nil) != tt.csr {
				t.Errorf("ValidateParsed = selectors %v, CSR %v, error %v; want ok %v, selectors %v, CSR %v",
					p.Selectors != nil, p.CSR != nil, err, tt.ok, tt.sel, tt.csr)
			}
		})
	}
}

// A server validates an operator request once and keeps the selectors
// validation compiled (and the CSR it parsed) for later use, as the fake
// does.
func ExampleOperatorCreate_ValidateParsed() {
	r := &OperatorCreate{EnabledFeatures: []string{FeatureBindings},
		Binding: &BindingCreate{EndpointSelectors: []string{`"kubernetes" in endpoint.bindings`}}}
	p, err := r.ValidateParsed()
	if err != nil {
		fmt.Println(err)
		return
	}
	ok, err := p.Selectors.Matcher(MatchBudget).Match(&Endpoint{Bindings: []string{"kubernetes"}})
	fmt.Println(ok, err, p.CSR == nil)
	// Output:
	// true <nil> true
}
