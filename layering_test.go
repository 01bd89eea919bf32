package acctapi_test

import (
	"os/exec"
	"slices"
	"strings"
	"testing"
)

// deps returns the packages pkg imports, directly or not, as go list
// reports them.
func deps(t *testing.T, pkg string) []string {
	t.Helper()
	goBin, err := exec.LookPath("go")
	if err != nil {
		t.Fatalf("no go command on PATH: %v", err)
	}
	out, err := exec.Command(goBin, "list", "-deps", pkg).Output()
	if err != nil {
		t.Fatalf("go list -deps %s: %v", pkg, err)
	}
	return strings.Fields(string(out))
}

// TestLayering pins the module's layers: the rate-limit action is usable
// without the HTTP transport of the SDK.
func TestLayering(t *testing.T) {
	tests := []struct {
		pkg     string
		mustNot []string
	}{
		{pkg: "./ratelimit", mustNot: []string{"github.com/acctapi/acctapi", "github.com/acctapi/acctapi/internal/iox", "github.com/acctapi/acctapi/internal/rest"}},
		// The fake's store is a layer: none of the fake, nor the API.
		{pkg: "./fake/internal/store", mustNot: []string{"github.com/acctapi/acctapi/fake", "github.com/acctapi/acctapi", "github.com/acctapi/acctapi/internal/resources"}},
	}
	for _, tt := range tests {
		t.Run(tt.pkg, func(t *testing.T) {
			got := deps(t, tt.pkg)
			for _, p := range tt.mustNot {
				if slices.Contains(got, p) {
					t.Errorf("%s imports %s", tt.pkg, p)
				}
			}
		})
	}
}
