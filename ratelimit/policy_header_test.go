package ratelimit

import (
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestPolicyCustomResponseHeaderNames pins a finding of a review: header
// names that are not HTTP field names ("X-Reason Code", "X-Réason") were
// accepted, and net/http then dropped them silently. NewPolicy now refuses
// them, a name given twice in different case (one would overwrite the
// other), Content-Length and Transfer-Encoding (a value other than
// net/http's own breaks the response), and a value whose text has a control character net/http would
// change or drop, each naming the header.
func TestPolicyCustomResponseHeaderNames(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		headers string // YAML flow mapping members
		want    map[string]string
	}{
		{"space in the name", `"X-Reason Code": a`, map[string]string{"X-Reason Code": `"X-Reason Code" is not an HTTP header name`}},
		{"letter beyond ASCII", `"X-Réason": a`, map[string]string{"X-Réason": "is not an HTTP header name"}},
		{"colon in the name", `"X-A:B": a`, map[string]string{"X-A:B": "is not an HTTP header name"}},
		{"empty name", `"": a`, map[string]string{"": "is not an HTTP header name"}},
		{"same name twice", `X-Reason: a, x-reason: b`, map[string]string{"x-reason": "names the same header as X-Reason"}},
		{"framing headers", `content-length: "3", Transfer-Encoding: gzip`, map[string]string{
			"content-length":    "content-length is net/http's to set from the body",
			"Transfer-Encoding": "Transfer-Encoding is net/http's to set"}},
		{"line break in the value", `X-Reason: "a\r\nSet-Cookie: b"`, map[string]string{"X-Reason": `the value has the control character '\r'`}},
		{"NUL in the value", `X-Reason: "a\0b"`, map[string]string{"X-Reason": `control character '\x00'`}},
		{"line break around a placeholder", `X-Reason: "${req.host}\n"`, map[string]string{"X-Reason": `control character '\n'`}},
		{"all valid", "X-Reason: \"a\\tb\", \"x-!#$%&'*+.^_`|~1\": c, x-host: \"${req.host}\"", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			doc := "on_http_request:\n  - actions: [{type: custom-response, config: {status_code: 429, headers: {" + tt.headers + "}}}]\n"
			_, err := NewPolicy([]byte(doc))
			want := map[string]string{}
			for h, reason := range tt.want {
				want["on_http_request[0].actions[0].config.headers."+h] = reason
			}
			checkFieldErrors(t, err, want)
		})
	}
}

// TestPolicyCustomResponseHeaderValue: a placeholder's value, which the
// request chooses, goes out with each control character a space, as
// HTTP/1 and HTTP/2 alike can send it.
func TestPolicyCustomResponseHeaderValue(t *testing.T) {
	t.Parallel()
	const doc = "on_http_request:\n  - actions: [{type: custom-response, config: {status_code: 403, headers: {X-Was: \"<${getReqHeader('X-In')[0]}>\\t.\"}}}]\n"
	h := mustPolicy(t, doc).Handler(okHandler)
	r := newRequest("GET", "http://h/")
	r.Header.Set("X-In", "a\r\nb\x00c\x7fd\te")
	w := httptest.NewRecorder()
	h.ServeHTTP(w, r)
	if diff := cmp.Diff(http.Header{"X-Was": {"<a  b c d\te>\t."}}, w.Header()); diff != "" {
		t.Errorf("header (-want +got):\n%s", diff)
	}
}

// TestPolicyCustomResponseAsDocumented pins a review's finding against
// ngrok's documentation of custom-response: status_code defaults to 200
// (its "Custom JSON API response" example gives none, and NewPolicy
// refused it), and headers take at most 10 properties (11 were accepted,
// so a policy that the real service refuses passed here).
func TestPolicyCustomResponseAsDocumented(t *testing.T) {
	t.Parallel()
	header := func(n int) string {
		var b []byte
		for i := range n {
			if i > 0 {
				b = append(b, ", "...)
			}
			b = append(b, "X-H"...)
			b = append(b, byte('a'+i))
			b = append(b, ": v"...)
		}
		return string(b)
	}
	tests := []struct {
		name   string
		config string
		status int
		want   map[string]string
	}{
		{"no status_code", `{body: '{"ok": true}'}`, http.StatusOK, nil},
		{"no config", ``, http.StatusOK, nil},
		{"status_code null", `{status_code: null}`, http.StatusOK, nil},
		{"status_code 0", `{status_code: 0}`, 0, map[string]string{"on_http_request[0].actions[0].config.status_code": "0 is not an HTTP status code from 200 to 599"}},
		{"ten headers", `{status_code: 503, headers: {` + header(10) + `}}`, 503, nil},
		{"eleven headers", `{status_code: 503, headers: {` + header(11) + `}}`, 0, map[string]string{"on_http_request[0].actions[0].config.headers": "has 11 headers; the real service takes at most 10"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			action := "{type: custom-response}"
			if tt.config != "" {
				action = "{type: custom-response, config: " + tt.config + "}"
			}
			p, err := NewPolicy([]byte("on_http_request:\n  - actions: [" + action + "]\n"))
			checkFieldErrors(t, err, tt.want)
			if err != nil {
				return
			}
			w := httptest.NewRecorder()
			p.Handler(http.NotFoundHandler()).ServeHTTP(w, httptest.NewRequest("GET", "http://h/", nil))
			if w.Code != tt.status {
				t.Errorf("status %d, want %d", w.Code, tt.status)
			}
		})
	}
}
