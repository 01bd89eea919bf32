package backends_test

import (
	"testing"

	"github.com/acctapi/acctapi/backends"
	"github.com/acctapi/acctapi/internal/apitest"
	"github.com/acctapi/acctapi/internal/resources"
)

func TestFailovers(t *testing.T) {
	apitest.RunCalls(t, `{"id":"x_1","uri":"https://api.example/x"}`, apitest.CRUDCalls[*backends.Failovers, backends.Failover, backends.FailoverList](backends.NewFailovers, resources.Failovers.Path(),
		&backends.FailoverCreate{Backends: []string{"bkdhr_1", "bkdtg_1"}}, `{"backends":["bkdhr_1","bkdtg_1"]}`,
		&backends.FailoverUpdate{ID: apitest.ID, Backends: &[]string{}}, `{"id":"a/b c","backends":[]}`,
		apitest.Paging(), apitest.PagingQuery))
}

func TestHTTPResponses(t *testing.T) {
	apitest.RunCalls(t, `{"id":"x_1","uri":"https://api.example/x"}`, apitest.CRUDCalls[*backends.HTTPResponses, backends.HTTPResponse, backends.HTTPResponseList](backends.NewHTTPResponses, resources.HTTPResponses.Path(),
		&backends.HTTPResponseCreate{StatusCode: 418, Body: "teapot", Headers: map[string]string{"content-type": "text/plain"}},
		`{"status_code":418,"body":"teapot","headers":{"content-type":"text/plain"}}`,
		&backends.HTTPResponseUpdate{ID: apitest.ID, StatusCode: apitest.Ptr(503), Headers: &map[string]string{}}, `{"id":"a/b c","status_code":503,"headers":{}}`,
		apitest.Paging(), apitest.PagingQuery))
}

func TestTunnelGroups(t *testing.T) {
	apitest.RunCalls(t, `{"id":"x_1","uri":"https://api.example/x"}`, apitest.CRUDCalls[*backends.TunnelGroups, backends.TunnelGroup, backends.TunnelGroupList](backends.NewTunnelGroups, resources.TunnelGroups.Path(),
		&backends.TunnelGroupCreate{Description: "api", Labels: labels}, `{"description":"api","labels":{"app":"api"}}`,
		&backends.TunnelGroupUpdate{ID: apitest.ID, Metadata: apitest.Ptr("{}")}, `{"id":"a/b c","metadata":"{}"}`,
		apitest.Filter(), apitest.FilterQuery))
}

func TestNilOptions(t *testing.T) {
	apitest.RunCalls(t, `{"id":"x_1","uri":"https://api.example/x"}`, apitest.CRUDCalls[*backends.Failovers, backends.Failover, backends.FailoverList](backends.NewFailovers, resources.Failovers.Path(),
		&backends.FailoverCreate{}, `{}`, &backends.FailoverUpdate{ID: apitest.ID}, `{"id":"a/b c"}`, nil, ""))
}
