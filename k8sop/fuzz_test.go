package k8sop

import (
	"encoding/json"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
)

// FuzzRequests decodes arbitrary JSON into each request type: Validate and
// Normalize never panic, and a request that validates survives an encode
// and decode unchanged.
func FuzzRequests(f *testing.F) {
	f.Add(`{"description":"d","enabled_features":["Ingress","BINDINGS"],"region":"eu","deployment":{"name":"n"},"binding":{"endpoint_selectors":["endpoint.port == 443"]}}`)
	f.Add(`{"id":"k8sop_1","enabled_features":["bindings"],"binding":{"endpoint_selectors":["endpoint.url"],"csr":"x"},"deployment":{"version":"1"}}`)
	f.Add(`{"binding":{"csr":` + jsonString(f, newCSR(f)) + `}}`)
	f.Add(`{"enabled_features":[""],"region":null,"binding":null}`)
	f.Fuzz(func(t *testing.T, in string) {
		checkRoundTrip[OperatorCreate](t, in)
		checkRoundTrip[OperatorUpdate](t, in)
	})
}

func jsonString(t testing.TB, s string) string {
	b, err := json.Marshal(s)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func checkRoundTrip[T any, PT interface {
	*T
	Validate() error
	Normalize()
}](t *testing.T, in string) {
	t.Helper()
	r := PT(new(T))
	if json.Unmarshal([]byte(in), r) != nil || r.Validate() != nil {
		return
	}
	b, err := json.Marshal(r)
	if err != nil {
		t.Fatalf("encode %+v: %v", r, err)
	}
	again := PT(new(T))
	if err := json.Unmarshal(b, again); err != nil {
		t.Fatalf("decode %s: %v", b, err)
	}
	if diff := cmp.Diff(r, again, cmpopts.EquateEmpty()); diff != "" {
		t.Errorf("round trip of %s (-first +second):\n%s", in, diff)
	}
	r.Normalize()
	if err := r.Validate(); err != nil {
		t.Errorf("normalized request no longer validates: %v", err)
	}
}
