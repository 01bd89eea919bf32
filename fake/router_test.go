package fake

import (
	"net/http"
	"strings"
	"testing"
)

// TestRouterMatch checks path matching: literal segments win over
// parameters, parameters come back unescaped, and empty, undecodable or
// overlong paths match nothing.
func TestRouterMatch(t *testing.T) { // not parallel: AllocsPerRun
	var rt router
	noop := func(*call) (int, any, error) { return 0, nil, nil }
	items := rt.handle(http.MethodGet, "/things/{id}", nil, noop)
	special := rt.handle(http.MethodGet, "/things/special", nil, noop)
	sources := rt.handle(http.MethodGet, "/subs/{id}/sources/{type}", nil, noop)
	tests := []struct {
		path   string
		want   *route
		params map[string]string
	}{
		{"/things/x_1", items, map[string]string{"id": "x_1"}},
		{"/things/special", special, map[string]string{"id": ""}},
		{"/things/a%2Fb%20c", items, map[string]string{"id": "a/b c"}},
		{"/things/x_1/", nil, nil},
		{"//things/x_1", nil, nil},
		{"things/x_1", nil, nil},
		{"/subs/esb_1/sources/api_key_created.v0", sources, map[string]string{"id": "esb_1", "type": "api_key_created.v0"}},
		{"/subs/esb_1/sources/x%2Fy", sources, map[string]string{"id": "esb_1", "type": "x/y"}},
		{"/", nil, nil},
		{"", nil, nil},
		{"/things//x", nil, nil},
		{"/things/%zz", nil, nil},
		{"/things/%2F", items, map[string]string{"id": "/"}},
		{"/nothing/here", nil, nil},
		{strings.Repeat("/things", maxSegments+1), nil, nil},
	}
	for _, tt := range tests {
		got, p := rt.match(tt.path)
		if got != tt.want {
			t.Errorf("%q: matched %v, want %v", tt.path, got, tt.want)
			continue
		}
		for name, want := range tt.params {
			if v := p.get(name); v != want {
				t.Errorf("%q: %s = %q, want %q", tt.path, name, v, want)
			}
		}
	}
	if n := testing.AllocsPerRun(100, func() { rt.match("/subs/esb_1/sources/api_key_created.v0") }); n != 0 {
		t.Errorf("%v allocations to match a path without escapes, want 0", n)
	}
}
