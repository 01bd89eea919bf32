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

// TestCustomResponseBudget pins a review's finding: a body of 200
// placeholders echoing a 900 KB header came out at 180,000,000 bytes
// (and a header value at 1.8 MB), as only each placeholder was bounded.
// A rendered body is at most maxBodyBytes and a header value at most
// maxHeaderValueBytes: a placeholder whose value does not fit in what is
// left is replaced by nothing, as one that fails to evaluate, and the
// ones after it still fill what is left.
func TestCustomResponseBudget(t *testing.T) {
	t.Parallel()
	const doc = `
on_http_request:
  - actions:
      - type: custom-response
        config:
          status_code: 200
          body: "<${getReqHeader('x')[0]}|${getReqHeader('x')[0]}|${getReqHeader('x')}|${getReqHeader('y')[0]}>"
          headers:
            x-echo: "v=${getReqHeader('x')[0]}${getReqHeader('y')[0]}"
`
	h := mustPolicy(t, doc).Handler(okHandler)
	h8186 := strings.Repeat("h", maxHeaderValueBytes-len("v=tail"))
	all := func(x string) string { return "<" + x + "|" + x + "|" + x + "|tail>" }
	tests := []struct {
		name       string
		x          []string // X's values
		body, echo string
	}{
		{"each fits", []string{"ab"}, "<ab|ab|ab|tail>", "v=abtail"},
		// 6 bytes of text and "tail": 1 MiB - 10 bytes is room for one
		// of 600,000 bytes, not two.
		{"the second does not fit", []string{strings.Repeat("a", 600_000)},
			"<" + strings.Repeat("a", 600_000) + "|||tail>", "v=tail"},
		{"a list's joined form does not fit", []string{strings.Repeat("a", 600_000), strings.Repeat("b", 400_000)},
			"<" + strings.Repeat("a", 600_000) + "|||tail>", "v=tail"},
		{"exactly the budget", []string{strings.Repeat("a", maxBodyBytes-10)},
			"<" + strings.Repeat("a", maxBodyBytes-10) + "|||tail>", "v=tail"},
		// "v=", X and "tail": X of 8,186 bytes fills 8 KiB; one more, and
		// "tail" no longer fits.
		{"a header value of exactly its budget", []string{h8186}, all(h8186), "v=" + h8186 + "tail"},
		{"a header value one byte over", []string{h8186 + "h"}, all(h8186 + "h"), "v=" + h8186 + "h"},
	}
	for _, tt := range tests {
		r := newRequest("GET", "http://h/")
		for _, v := range tt.x {
			r.Header.Add("X", v)
		}
		r.Header.Set("Y", "tail")
		got := serve(h, r, "x-echo")
		if len(got.Body) > maxBodyBytes || len(got.Headers["x-echo"]) > maxHeaderValueBytes {
			t.Errorf("%s: a body of %d bytes and an X-Echo of %d; want at most %d and %d",
				tt.name, len(got.Body), len(got.Headers["x-echo"]), maxBodyBytes, maxHeaderValueBytes)
		}
		want := response{Status: 200, Body: tt.body, Headers: map[string]string{"x-echo": tt.echo}}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("%s (-want +got):\n%.2000s", tt.name, diff)
		}
	}
}

// TestCustomResponseBudgetLiteral checks that text outside placeholders
// longer than its budget, which would exceed it on every request, is
// refused at NewPolicy, and text of exactly the budget is not.
func TestCustomResponseBudgetLiteral(t *testing.T) {
	t.Parallel()
	policy := func(body, header string) string {
		return `{"on_http_request": [{"actions": [{"type": "custom-response", "config": {"status_code": 200, ` +
			`"body": ` + quoteJSON(body) + `, "headers": {"x": ` + quoteJSON(header) + `}}}]}]}`
	}
	if _, err := NewPolicy([]byte(policy(strings.Repeat("b", maxBodyBytes-5)+"${1}", strings.Repeat("h", maxHeaderValueBytes)))); err != nil {
		t.Errorf("text of exactly the budgets: %v", err)
	}
	_, err := NewPolicy([]byte(policy(strings.Repeat("b", maxBodyBytes-3)+"${1}////", strings.Repeat("h", maxHeaderValueBytes+1))))
	checkFieldErrors(t, err, map[string]string{
		"on_http_request[0].actions[0].config.body":      "the text outside placeholders is 1048577 bytes; the most is 1048576",
		"on_http_request[0].actions[0].config.headers.x": "the text outside placeholders is 8193 bytes; the most is 8192",
	})
}

// BenchmarkCustomResponseOverBudget renders the review's body, 200
// placeholders each echoing a 900 KB header: the first fills most of the
// 1 MiB budget and the rest are replaced by nothing, so a request
// allocates about one budget's worth, not the 180 MB body it was.
func BenchmarkCustomResponseOverBudget(b *testing.B) {
	body := strings.Repeat("${getReqHeader('x')[0]}", 200)
	h := mustPolicy(b, `{"on_http_request": [{"actions": [{"type": "custom-response", "config": {"status_code": 200, "body": "`+body+`"}}]}]}`).Handler(okHandler)
	r := newRequest("GET", "http://h/")
	r.Header.Set("X", strings.Repeat("a", 900_000))
	b.ReportAllocs()
	for b.Loop() {
		if got := serve(h, r); len(got.Body) != 900_000 {
			b.Fatalf("a body of %d bytes; want 900000", len(got.Body))
		}
	}
}
