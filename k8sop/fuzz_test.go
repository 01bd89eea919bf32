package k8sop

import (
	"testing"

	"github.com/acctapi/acctapi/internal/apitest"
)

// FuzzRequests decodes arbitrary JSON into each request type: Validate and
// Normalize never panic, and a request that validates survives an encode
// and decode unchanged.
func FuzzRequests(f *testing.F) {
	apitest.FuzzRequests(f, []func() apitest.Validator{
		apitest.New[OperatorCreate],
		apitest.New[OperatorUpdate],
	},
		`{"description":"d","enabled_features":["Ingress","BINDINGS"],"region":"eu","deployment":{"name":"n"},"binding":{"endpoint_selectors":["endpoint.port == 443"]}}`,
		`{"id":"k8sop_1","enabled_features":["bindings"],"binding":{"endpoint_selectors":["endpoint.url"],"csr":"x"},"deployment":{"version":"1"}}`,
		`{"binding":{"csr":`+apitest.Quote(newCSR(f))+`}}`,
		`{"enabled_features":[""],"region":null,"binding":null}`,
	)
}
