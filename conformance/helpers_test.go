package conformance_test

import (
	"io"
	"strings"

	"github.com/acctapi/acctapi/account"
	"github.com/acctapi/acctapi/backends"
	"github.com/acctapi/acctapi/events"
	"github.com/acctapi/acctapi/fake"
	"github.com/acctapi/acctapi/k8sop"
)

// preexisting are resources an account holds before the suite runs.
const preexisting = `[
	{"path": "/service_users", "body": {"name": "already-here"}},
	{"path": "/api_keys", "body": {"description": "already-here"}},
	{"path": "/backends/http_response", "body": {"status_code": 200}},
	{"path": "/event_destinations", "body": {"format": "JSON", "target": {"monitoring": {"api_key": "x"}}}},
	{"path": "/kubernetes_operators", "body": {"enabled_features": ["ingress"]}}
]`

func stringsReader(s string) io.Reader { return strings.NewReader(s) }

// countAll counts the resources of the server's first account.
func countAll(srv *fake.Server) int {
	return len(fake.List[account.ServiceUser](srv, "")) +
		len(fake.List[account.APIKey](srv, "")) +
		len(fake.List[account.CertificateAuthority](srv, "")) +
		len(fake.List[backends.Failover](srv, "")) +
		len(fake.List[backends.HTTPResponse](srv, "")) +
		len(fake.List[backends.TunnelGroup](srv, "")) +
		len(fake.List[events.Destination](srv, "")) +
		len(fake.List[events.Subscription](srv, "")) +
		len(fake.List[k8sop.Operator](srv, ""))
}
