package events_test

import (
	"testing"

	"github.com/acctapi/acctapi"
	"github.com/acctapi/acctapi/events"
)

// BenchmarkTranslate measures what a server of both dialects pays per body:
// a body with nothing to rename (the common case, a scan), and a
// destination with a datadog target to rename.
func BenchmarkTranslate(b *testing.B) {
	for _, bb := range []struct {
		name string
		body string
		to   acctapi.Dialect
	}{
		{"nothing to rename", `{"description":"d","metadata":"","format":"JSON","target":{"kinesis":{"auth":{"role":{"role_arn":"arn:r"},"creds":null},"stream_arn":"arn:s"}}}`, acctapi.DialectSpec},
		{"datadog to spec", `{"description":"d","metadata":"","format":"JSON","target":{"datadog":{"api_key":"k","ddtags":"env:ci","service":"svc","ddsite":"eu"}}}`, acctapi.DialectSpec},
	} {
		b.Run(bb.name, func(b *testing.B) {
			body := []byte(bb.body)
			b.ReportAllocs()
			b.SetBytes(int64(len(body)))
			for b.Loop() {
				if _, err := events.Translate(body, bb.to); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
