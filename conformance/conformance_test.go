package conformance_test

import (
	"os"
	"testing"

	"github.com/acctapi/acctapi/conformance"
	"github.com/acctapi/acctapi/fake"
)

// TestConformance runs the suite against the fake over loopback TCP, or,
// when ACCTAPI_CONFORMANCE_URL and ACCTAPI_CONFORMANCE_KEY are set, against
// that server instead (.ci/acctfake-suite points it at cmd/acctfake).
func TestConformance(t *testing.T) {
	if u, k := os.Getenv("ACCTAPI_CONFORMANCE_URL"), os.Getenv("ACCTAPI_CONFORMANCE_KEY"); u != "" || k != "" {
		if u == "" || k == "" {
			t.Fatal("set both ACCTAPI_CONFORMANCE_URL and ACCTAPI_CONFORMANCE_KEY, or neither")
		}
		t.Logf("target: %s", u)
		conformance.Run(t, conformance.Target{BaseURL: u, APIKey: k})
		return
	}
	srv := fake.Start(t)
	conformance.Run(t, conformance.Target{BaseURL: srv.URL, APIKey: srv.APIKey(), HTTPClient: srv.HTTPClient()})
}

// TestConformanceLeavesNothingBehind runs the suite twice on one fake that
// already holds resources of its own, and checks that the suite neither
// assumed an empty account nor left anything behind.
func TestConformanceLeavesNothingBehind(t *testing.T) {
	if os.Getenv("ACCTAPI_CONFORMANCE_URL") != "" {
		t.Skip("runs against the in-process fake only")
	}
	srv := fake.Start(t, fake.WithoutListener())
	if err := srv.LoadFixtures(stringsReader(preexisting)); err != nil {
		t.Fatal(err)
	}
	want := countAll(srv)
	target := conformance.Target{BaseURL: srv.URL, APIKey: srv.APIKey(), HTTPClient: srv.HTTPClient()}
	for i := range 2 {
		conformance.Run(t, target)
		if got := countAll(srv); got != want {
			t.Fatalf("after run %d: %d resources, want the %d there were before", i+1, got, want)
		}
	}
}
