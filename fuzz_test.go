package acctapi

import (
	"cmp"
	"errors"
	"io"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"
)

// FuzzDecodeError feeds decodeError arbitrary error responses: it always
// yields an *Error with the response's status, a Retry-After within its
// bound, and a message cut to its bound when the body is not the
// contract's.
func FuzzDecodeError(f *testing.F) {
	f.Add(404, "", "", []byte(`{"status_code":404,"msg":"not found","error_code":"ERR_X","details":{"operation_id":"op_1"}}`))
	f.Add(429, "3", "op_2", []byte(`{"msg":"slow down","details":{"n":[1,2],"m":{"a":null}}}`))
	f.Add(503, "Wed, 21 Oct 2015 07:28:00 GMT", "", []byte("<html>gateway</html>"))
	f.Add(500, "-1", "", []byte(""))
	f.Add(418, "99999999999999999999", "op_3", []byte(`{"msg":""}`))
	f.Add(599, "1e3", "", []byte(strings.Repeat("x", 1000)))
	f.Fuzz(func(t *testing.T, status int, retryAfter, opID string, body []byte) {
		resp := &http.Response{StatusCode: status, Header: http.Header{}, Body: io.NopCloser(strings.NewReader(string(body)))}
		resp.Header.Set("Retry-After", retryAfter)
		resp.Header.Set("Operation-Id", opID)
		err := decodeError(resp)
		var e *Error
		if !errors.As(err, &e) {
			t.Fatalf("decodeError = %v, not an *Error", err)
		}
		if e.StatusCode != status {
			t.Errorf("StatusCode %d, want %d", e.StatusCode, status)
		}
		if e.RetryAfter < 0 || e.RetryAfter > maxRetryAfter {
			t.Errorf("RetryAfter %v outside [0, %v]", e.RetryAfter, maxRetryAfter)
		}
		if e.ErrorCode == "" && len(e.Msg) > maxErrorMsg+len("…") {
			t.Errorf("a message of %d bytes from a body that is not the contract's", len(e.Msg))
		}
		_ = e.Error()
	})
}

// FuzzResolve checks, for any base URL and any path or absolute URL (such
// as a next_page_uri), that a request is only ever built for the base URL's
// origin: the API key is never sent anywhere else. (internal/rest's
// FuzzOnBase checks the pager's rewriting of next_page_uri on top of this.)
func FuzzResolve(f *testing.F) {
	f.Add("https://api.example.test", "/service_users", "")
	f.Add("https://api.example.test/v2/", "/service_users/a%2Fb", "https://other.test/v2/service_users?before_id=x")
	f.Add("http://127.0.0.1:8080", "https://evil.test/x", "//evil.test/x")
	f.Add("http://127.0.0.1:8080", "/../x", "http://user:pass@127.0.0.1:8080/x")
	f.Add("http://:", "http://", "https://api.example.test:443/x") // no host; a default port written out
	f.Fuzz(func(t *testing.T, base, path, next string) {
		c, err := NewClient("k", WithBaseURL(base))
		if err != nil {
			return
		}
		for _, p := range []string{path, next} {
			u, err := c.resolve(p, url.Values{"limit": {"1"}})
			if err != nil {
				continue
			}
			// The same scheme, host and port, a default port written out or
			// not (https://h:443 is https://h).
			port := func(u *url.URL) string {
				return cmp.Or(u.Port(), map[string]string{"http": "80", "https": "443"}[u.Scheme])
			}
			if u.Scheme != c.base.Scheme || u.Hostname() == "" || !strings.EqualFold(u.Hostname(), c.base.Hostname()) ||
				port(u) != port(c.base) || u.User != nil {
				t.Fatalf("base %q, path %q: request for %s, off the base origin", base, p, u.Redacted())
			}
		}
	})
}

// TestParseRetryAfterBounds pins the edges FuzzDecodeError relies on.
func TestParseRetryAfterBounds(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	for _, tt := range []struct {
		in   string
		want time.Duration
	}{
		{"", 0}, {"0", 0}, {"-5", 0}, {"1", time.Second}, {"86401", maxRetryAfter},
		{"99999999999999999999", maxRetryAfter}, {"Thu, 01 Jan 2026 00:00:10 GMT", 10 * time.Second},
		{"Wed, 31 Dec 2025 00:00:00 GMT", 0}, {"soon", 0},
	} {
		if got := parseRetryAfter(tt.in, now); got != tt.want {
			t.Errorf("parseRetryAfter(%q) = %v, want %v", tt.in, got, tt.want)
		}
	}
}
