package baseurl

import (
	"strings"
	"testing"
)

func TestParse(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct{ raw, want, err string }{
		{"https://api.example", "https://api.example", ""},
		{"http://127.0.0.1:8080/v2/", "http://127.0.0.1:8080/v2", ""},
		{"https://api.example/v2//", "https://api.example/v2", ""},
		{"https://api.example/a%2F/", "https://api.example/a%2F", ""},
		{"https://user:secret@api.example", "", "p https://user:xxxxx@api.example: must not carry user information"},
		{"https://api.example?x=1", "", "must not have a query or fragment"},
		{"https://api.example/?", "", "must not have a query or fragment"},
		{"https://api.example#f", "", "must not have a query or fragment"},
		{"ftp://api.example", "", "want an absolute http or https URL"},
		{"http://:", "", "want an absolute http or https URL"},
		{"http://:8080", "", "want an absolute http or https URL"},
		{"/v2", "", "want an absolute http or https URL"},
		{"http://a b", "", "p: invalid character"},
	} {
		u, err := Parse("p", tt.raw)
		switch {
		case tt.err == "" && (err != nil || u.String() != tt.want):
			t.Errorf("Parse(%q) = %v, %v; want %s", tt.raw, u, err, tt.want)
		case tt.err != "" && (err == nil || !strings.Contains(err.Error(), tt.err) || strings.Contains(err.Error(), "secret")):
			t.Errorf("Parse(%q) error %v; want one with %q and no password", tt.raw, err, tt.err)
		}
	}
}

func TestIsAbsolute(t *testing.T) {
	for s, want := range map[string]bool{
		"http://h": true, "https://h/x": true, "HTTP://h": true, "HtTpS://h": true,
		"/x": false, "http:/x": false, "ftp://h": false, "https:": false, "": false,
	} {
		if got := IsAbsolute(s); got != want {
			t.Errorf("IsAbsolute(%q) = %v, want %v", s, got, want)
		}
	}
}
