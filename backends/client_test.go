package backends_test

import (
	"testing"

	"github.com/acctapi/acctapi/backends"
)

func TestFailovers(t *testing.T) {
	testCalls(t, crudCalls[*backends.Failovers, backends.Failover, backends.FailoverList](backends.NewFailovers, "/backends/failover",
		&backends.FailoverCreate{Backends: []string{"bkdhr_1", "bkdtg_1"}}, `{"backends":["bkdhr_1","bkdtg_1"]}`,
		&backends.FailoverUpdate{ID: id, Backends: &[]string{}}, `{"id":"a/b c","backends":[]}`,
		paging, pagingQuery))
}

func TestHTTPResponses(t *testing.T) {
	testCalls(t, crudCalls[*backends.HTTPResponses, backends.HTTPResponse, backends.HTTPResponseList](backends.NewHTTPResponses, "/backends/http_response",
		&backends.HTTPResponseCreate{StatusCode: 418, Body: "teapot", Headers: map[string]string{"content-type": "text/plain"}},
		`{"status_code":418,"body":"teapot","headers":{"content-type":"text/plain"}}`,
		&backends.HTTPResponseUpdate{ID: id, StatusCode: ptr(503), Headers: &map[string]string{}}, `{"id":"a/b c","status_code":503,"headers":{}}`,
		paging, pagingQuery))
}

func TestTunnelGroups(t *testing.T) {
	testCalls(t, crudCalls[*backends.TunnelGroups, backends.TunnelGroup, backends.TunnelGroupList](backends.NewTunnelGroups, "/backends/tunnel_group",
		&backends.TunnelGroupCreate{Description: "api", Labels: labels}, `{"description":"api","labels":{"app":"api"}}`,
		&backends.TunnelGroupUpdate{ID: id, Metadata: ptr("{}")}, `{"id":"a/b c","metadata":"{}"}`,
		filter, filterQuery))
}

func TestNilOptions(t *testing.T) {
	testCalls(t, crudCalls[*backends.Failovers, backends.Failover, backends.FailoverList](backends.NewFailovers, "/backends/failover",
		&backends.FailoverCreate{}, `{}`, &backends.FailoverUpdate{ID: id}, `{"id":"a/b c"}`, nil, ""))
}
