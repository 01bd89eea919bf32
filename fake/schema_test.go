package fake

import (
	"testing"

	"github.com/acctapi/acctapi/internal/resources"
)

// TestResourcesRegistered checks that the server registers every resource
// the description lists, under its name and prefix, and that ids fit the
// filter cost bounds.
func TestResourcesRegistered(t *testing.T) {
	t.Parallel()
	srv := Start(t, WithoutListener())
	if len(srv.resByKind) != len(resources.All()) {
		t.Errorf("%d resources registered, %d described", len(srv.resByKind), len(resources.All()))
	}
	for _, d := range resources.All() {
		info := srv.resByKind[d.Name]
		if info == nil {
			t.Errorf("%s: not registered", d.Name)
			continue
		}
		if info.prefix != d.Prefix {
			t.Errorf("%s: prefix %q, described %q", d.Name, info.prefix, d.Prefix)
		}
		// Filter cost bounds rely on maxIDLen (see fieldSizes).
		if n := len(d.Prefix) + 1 + 27; n > maxIDLen {
			t.Errorf("%s: ids of %d characters, more than maxIDLen", d.Name, n)
		}
	}
}
