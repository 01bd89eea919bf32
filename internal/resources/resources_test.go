package resources

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestPaths pins the description to the API's paths, written out here
// from the specification, since the clients, the fake and their tests all
// read the description.
func TestPaths(t *testing.T) {
	t.Parallel()
	got := map[string]string{}
	for _, d := range All() {
		got[d.Path()] = d.Prefix + " " + d.Member
		if d.Alias != "" {
			got[d.AliasPath()] = d.Prefix + " " + d.AliasMember
		}
	}
	want := map[string]string{
		"/service_users":           "service service_users",
		"/bot_users":               "service bot_users",
		"/api_keys":                "ak keys",
		"/certificate_authorities": "ca certificate_authorities",
		"/backends/failover":       "bkdfo backends",
		"/backends/http_response":  "bkdhr backends",
		"/backends/tunnel_group":   "bkdtg backends",
		"/tunnels":                 "tn ",
		"/event_destinations":      "ed event_destinations",
		"/event_subscriptions":     "esb event_subscriptions",
		"/kubernetes_operators":    "k8sop operators",
		"/endpoints":               "ep ",
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("paths (-want +got):\n%s", diff)
	}
	for _, tt := range []struct{ got, want string }{
		{APIKeys.Item("a/b c"), "/api_keys/a%2Fb%20c"},
		{ServiceUsers.AliasItem("a/b"), "/bot_users/a%2Fb"},
		{Failovers.Item("x"), "/backends/failover/x"},
		{SubPath(EventSources, "esb_1"), "/event_subscriptions/esb_1/sources"},
		{SubPath(EventSources, "a/b", "t.v0"), "/event_subscriptions/a%2Fb/sources/t.v0"},
		{SubPath(BoundEndpoints, "k8sop_1"), "/kubernetes_operators/k8sop_1/bound_endpoints"},
	} {
		if tt.got != tt.want {
			t.Errorf("got %q, want %q", tt.got, tt.want)
		}
	}
}

func TestNormalPath(t *testing.T) {
	for in, want := range map[string]string{
		"/service_users":          "/service_users",
		"/service%5Fusers":        "/service_users",
		"/service%5fusers/ak%5f1": "/service_users/ak_1",
		"/service_users%2fx":      "/service_users%2Fx",
		"/%2e%2e/api_keys":        "/%2E%2E/api_keys",
		"/x/%2E":                  "/x/%2E",
		"/x/a%2Eb":                "/x/a.b",
		"/caf%c3%a9":              "/caf%C3%A9",
		"/%7e%41%30%2d":           "/~A0-",
	} {
		if got := NormalPath(in); got != want {
			t.Errorf("NormalPath(%q) = %q, want %q", in, got, want)
		}
	}
}
