package k8sop_test

import (
	"fmt"
	"strings"
	"time"

	"github.com/acctapi/acctapi"
	"github.com/acctapi/acctapi/k8sop"
)

func ExampleSelectors_MatchAt() {
	// time.now is the time passed in, such as a fake's clock.
	sel, err := k8sop.CompileSelectors([]string{`endpoint.created_at > time.now.subtract("7d") && !endpoint.pooling_enabled`})
	if err != nil {
		fmt.Println(err)
		return
	}
	now := time.Date(2030, 1, 10, 0, 0, 0, 0, time.UTC)
	for _, ep := range []k8sop.Endpoint{
		{ID: "ep_2", CreatedAt: now.AddDate(0, 0, -1)},
		{ID: "ep_1", CreatedAt: now.AddDate(0, 0, -30)},
	} {
		ok, err := sel.MatchAt(&ep, now)
		fmt.Println(ep.ID, ok, err)
	}
	// A refused selector says why.
	_, err = k8sop.CompileSelectors([]string{`endpoint.id.startsWith("ep_")`})
	fmt.Println(acctapi.FieldErrors(err)[0].Reason)
	// Output:
	// ep_2 true <nil>
	// ep_1 false <nil>
	// is not a valid endpoint selector: startsWith is not supported on endpoint.id; compare it with ==
}

func ExampleEndpoint_Validate() {
	ep := &k8sop.Endpoint{Host: strings.Repeat("a", 5000) + ".example.com", Bindings: []string{"kubernetes"}}
	for _, fe := range acctapi.FieldErrors(ep.Validate()) {
		fmt.Println(fe.Field, fe.Reason)
	}
	// Output:
	// host is 5012 bytes; at most 4096
}
