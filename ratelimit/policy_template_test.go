package ratelimit

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestCustomResponseInterpolation pins a finding of a black-box check:
// ${...} placeholders in a custom-response's body and header values (the
// fields the Traffic Policy documentation marks as taking CEL
// interpolation) were sent literally.
func TestCustomResponseInterpolation(t *testing.T) {
	t.Parallel()
	const doc = `
on_http_request:
  - actions:
      - type: rate-limit
        config: {name: n, algorithm: sliding_window, capacity: 1, rate: 60s, bucket_key: [conn.client_ip], enforce: false}
      - type: custom-response
        config:
          status_code: 418
          body: "limited ${actions.ngrok.rate_limit.limited} for ${actions.ngrok.rate_limit.bucket_key} at ${req.url.path} {not a placeholder}"
          headers:
            x-ip: "${conn.client_ip}"
            x-sum: "${1 + 2}"
            x-map: "${{'a': 'b}'}['a']}"
            x-quoted: "${'}' + \"}\" + '''}'''}"
            x-failed: "a${getReqHeader('x-missing')[0]}b"
            x-list: "${getReqHeader('x-two')}"
            x-plain: "no placeholder"
            x-literal: "${'${'}HOME}"
            x-comment: "${1 // a } in a comment\n}"
`
	h := mustPolicy(t, doc).Handler(okHandler)
	names := []string{"x-ip", "x-sum", "x-map", "x-quoted", "x-failed", "x-list", "x-plain", "x-literal", "x-comment"}
	for i, limited := range []string{"false", "true"} {
		r := newRequest("GET", "http://h/some/path")
		r.RemoteAddr = "203.0.113.9:1234"
		r.Header.Add("X-Two", "a")
		r.Header.Add("X-Two", "b")
		got := serve(h, r, names...)
		want := response{Status: 418, Body: "limited " + limited + " for 203.0.113.9 at /some/path {not a placeholder}",
			Headers: map[string]string{"x-ip": "203.0.113.9", "x-sum": "3", "x-map": "b}", "x-quoted": "}}}",
				"x-failed": "ab", "x-list": "a,b", "x-plain": "no placeholder", "x-literal": "${HOME}", "x-comment": "1"}}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("request %d (-want +got):\n%s", i, diff)
		}
	}
}

func TestCustomResponseTemplateErrors(t *testing.T) {
	t.Parallel()
	for value, want := range map[string]string{
		"${req.nope}":      "config.headers.x: the placeholder ${req.nope} does not compile: unknown name req.nope",
		"a ${req.host":     "config.headers.x: the placeholder at byte 2 has no closing }",
		"${ }":             "config.headers.x: the placeholder at byte 0 is empty",
		"${'unclosed}":     "has no closing }",
		"${conn.geo.city}": "conn.geo.city needs ratelimit.WithIPIntel",
		"${ {'a': 1} }":    "the placeholder ${ {'a': 1} } is a map, which has no text form",
	} {
		doc := `{"on_http_request": [{"actions": [{"type": "custom-response", "config": {"status_code": 429, "headers": {"x": ` + quoteJSON(value) + `}}}]}]}`
		_, err := NewPolicy([]byte(doc))
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: error %v; want it to contain %q", value, err, want)
		}
	}
}

func quoteJSON(s string) string {
	return `"` + strings.NewReplacer(`\`, `\\`, `"`, `\"`).Replace(s) + `"`
}
