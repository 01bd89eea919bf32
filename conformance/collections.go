package conformance

import (
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/acctapi/acctapi"
	"github.com/acctapi/acctapi/internal/resources"
)

// testCollections holds every collection that internal/resources
// describes to its description: its list member and uri, whether it takes
// a filter, and a 404 for an id of its prefix that does not exist. A
// resource added to the description is covered here without a new
// scenario.
func (s *suite) testCollections(t *testing.T) {
	for _, d := range resources.All() {
		if d.NoAPI {
			continue
		}
		paths := []struct {
			path, member string
			filter       bool
		}{{d.Path(), d.Member, d.Filter != nil}}
		if d.Alias != "" {
			paths = append(paths, struct {
				path, member string
				filter       bool
			}{d.AliasPath(), d.AliasMember, false})
		}
		for _, p := range paths {
			t.Run(strings.TrimPrefix(p.path, "/"), func(t *testing.T) {
				page := s.getPage(t, p.path+"?limit=1", p.member)
				if want := s.target.BaseURL + p.path; page.uri != want {
					t.Errorf("GET %s: uri %q, want %q", p.path, page.uri, want)
				}
				filtered := p.path + "?limit=1&filter=" + url.QueryEscape(`obj.id == ""`)
				if p.filter {
					s.getPage(t, filtered, p.member)
				} else {
					wantError(t, "filter on "+p.path, s.do(t, request{method: http.MethodGet, path: filtered}),
						http.StatusBadRequest, acctapi.CodeUnknownQueryParam)
				}
				id := d.Prefix + "_" + strings.Repeat("0", 27)
				wantError(t, "GET unknown "+id, s.do(t, request{method: http.MethodGet, path: p.path + "/" + id}), http.StatusNotFound, "")
			})
		}
	}
}
