package ratelimit

import (
	"flag"
	"os"
	"testing"
)

// TestMain lengthens the property tests when ACCTAPI_LONG is set.
func TestMain(m *testing.M) {
	flag.Parse()
	if os.Getenv("ACCTAPI_LONG") != "" {
		if f := flag.Lookup("rapid.checks"); f != nil && f.Value.String() == "100" {
			_ = flag.Set("rapid.checks", "200000")
		}
	}
	os.Exit(m.Run())
}
