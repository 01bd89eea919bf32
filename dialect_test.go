package acctapi

import (
	"net/http"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestDialectDefault checks the dialect a client speaks: the real
// service's at its origin, the specification's elsewhere, and what
// WithDialect says whatever the URL.
func TestDialectDefault(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		opts []Option
		want Dialect
	}{
		{name: "default base URL", want: DialectReal},
		{name: "the real service's origin, given", opts: []Option{WithBaseURL("https://API.ngrok.com:443/")}, want: DialectReal},
		{name: "a fake", opts: []Option{WithBaseURL("http://127.0.0.1:8080")}, want: DialectSpec},
		{name: "the real host over http", opts: []Option{WithBaseURL("http://api.ngrok.com")}, want: DialectSpec},
		{name: "another port", opts: []Option{WithBaseURL("https://api.ngrok.com:8443")}, want: DialectSpec},
		{name: "explicit spec at the real service", opts: []Option{WithDialect(DialectSpec)}, want: DialectSpec},
		{name: "explicit real elsewhere, either order", opts: []Option{WithDialect(DialectReal), WithBaseURL("http://proxy.test")}, want: DialectReal},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			c, err := NewClient("k", tt.opts...)
			if err != nil {
				t.Fatal(err)
			}
			if got := c.Dialect(); got != tt.want {
				t.Errorf("Dialect() = %v, want %v", got, tt.want)
			}
		})
	}
	if _, err := NewClient("k", WithDialect(Dialect(2))); err == nil {
		t.Error("WithDialect(2), the first after the last dialect, accepted; want an error")
	}
	if _, err := NewClient("k", WithDialect(Dialect(7))); err == nil {
		t.Error("WithDialect(7) accepted, want an error")
	}
}

// TestVersionHeaders checks the version headers of each dialect: both in
// the specification's, only the real service's own in the real service's
// (which is how a server of both dialects tells its clients apart).
func TestVersionHeaders(t *testing.T) {
	t.Parallel()
	tests := []struct {
		dialect Dialect
		want    http.Header
	}{
		{DialectSpec, http.Header{"Service-Version": {"2"}, "Ngrok-Version": {"2"}}},
		{DialectReal, http.Header{"Ngrok-Version": {"2"}}},
	}
	for _, tt := range tests {
		t.Run(tt.dialect.String(), func(t *testing.T) {
			t.Parallel()
			rec := &recorder{}
			c, _ := newTestServer(t, rec.ServeHTTP, WithDialect(tt.dialect))
			if err := c.Do(t.Context(), http.MethodGet, "/things", nil, nil, nil); err != nil {
				t.Fatal(err)
			}
			h := rec.only(t).Header
			got := http.Header{}
			for _, k := range []string{"Service-Version", "Ngrok-Version"} {
				if v, ok := h[k]; ok {
					got[k] = v
				}
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("version headers (-want +got):\n%s", diff)
			}
		})
	}
}
