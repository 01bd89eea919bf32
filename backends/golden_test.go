package backends_test

import (
	"testing"

	"github.com/acctapi/acctapi/backends"
	"github.com/acctapi/acctapi/internal/apitest"
)

func TestGoldenRoundTrip(t *testing.T) {
	apitest.RunGolden(t, []apitest.GoldenFile{
		{"failover.golden.json", new(backends.Failover)},
		{"failover_list.golden.json", new(backends.FailoverList)},
		{"http_response.golden.json", new(backends.HTTPResponse)},
		{"http_response_list.golden.json", new(backends.HTTPResponseList)},
		{"tunnel_group.golden.json", new(backends.TunnelGroup)},
		{"tunnel_group_list.golden.json", new(backends.TunnelGroupList)},
	})
}

func TestGoldenValues(t *testing.T) {
	var fo backends.Failover
	apitest.RoundTrip(t, "failover.golden.json", &fo)
	if fo.Backends == nil || len(fo.Backends) != 0 {
		t.Errorf("Backends = %#v, want an empty, non-nil slice", fo.Backends)
	}
	var list backends.HTTPResponseList
	apitest.RoundTrip(t, "http_response_list.golden.json", &list)
	if got, want := list.NextPage(), *list.NextPageURI; got != want || got == "" {
		t.Errorf("NextPage() = %q, want %q", got, want)
	}
	if got := list.PageItems()[0].StatusCode; got != 418 {
		t.Errorf("StatusCode = %d, want 418", got)
	}
}
