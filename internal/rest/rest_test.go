package rest_test

import (
	"testing"

	"github.com/acctapi/acctapi/internal/rest"
)

func TestPath(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name     string
		segments []string
		want     string
	}{
		{name: "none", want: ""},
		{name: "one", segments: []string{"service_users"}, want: "/service_users"},
		{name: "slash in id", segments: []string{"service_users", "a/b"}, want: "/service_users/a%2Fb"},
		{name: "space and question mark", segments: []string{"things", "a/b c?d"}, want: "/things/a%2Fb%20c%3Fd"},
		{name: "percent and hash", segments: []string{"things", "50%#1"}, want: "/things/50%25%231"},
		{name: "multi-byte", segments: []string{"things", "é"}, want: "/things/%C3%A9"},
		{name: "empty id", segments: []string{"things", ""}, want: "/things/"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			if got := rest.Path(tt.segments...); got != tt.want {
				t.Errorf("Path(%q) = %q, want %q", tt.segments, got, tt.want)
			}
		})
	}
}
