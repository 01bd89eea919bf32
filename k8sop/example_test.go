package k8sop_test

import (
	"context"
	"fmt"

	"github.com/acctapi/acctapi"
	"github.com/acctapi/acctapi/internal/apitest"
	"github.com/acctapi/acctapi/k8sop"
)

func ExampleOperators_Create() {
	c, stop := apitest.ExampleClient(`{"id":"k8sop_1","uri":"https://api.example/kubernetes_operators/k8sop_1","enabled_features":["ingress"],"region":"global",
		"binding":{"endpoint_selectors":null,"cert":{"cert":"","not_before":"0001-01-01T00:00:00Z","not_after":"0001-01-01T00:00:00Z"}}}`)
	defer stop()

	op, err := k8sop.NewOperators(c).Create(context.Background(), &k8sop.OperatorCreate{
		Description:     "Example Kubernetes Operator",
		EnabledFeatures: []string{"Ingress"},
		Deployment:      k8sop.Deployment{Name: "ngrok-operator", Namespace: "ngrok-operator"},
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(op.ID, op.EnabledFeatures, op.Region, op.Binding.Cert.NotBefore.IsZero())
	// Output: k8sop_1 [ingress] global true
}

func ExampleCompileSelectors() {
	sel, err := k8sop.CompileSelectors([]string{`"kubernetes" in endpoint.bindings && endpoint.port == 443`})
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, ep := range []k8sop.Endpoint{
		{ID: "ep_1", Port: 443, Bindings: []string{"kubernetes"}},
		{ID: "ep_2", Port: 443, Bindings: []string{"public"}},
	} {
		ok, _ := sel.Match(&ep)
		fmt.Println(ep.ID, ok)
	}
	_, err = k8sop.CompileSelectors([]string{`endpoint.url`})
	fmt.Println(acctapi.FieldErrors(err)[0].Field)
	// Output:
	// ep_1 true
	// ep_2 false
	// endpoint_selectors[0]
}

func ExampleOperatorCreate_Normalize() {
	r := &k8sop.OperatorCreate{EnabledFeatures: []string{"Bindings", "INGRESS", "bindings"}}
	if err := r.Validate(); err != nil {
		fmt.Println(err)
		return
	}
	r.Normalize()
	fmt.Println(r.EnabledFeatures, r.Region)
	// Output: [bindings ingress] global
}
