package events_test

import (
	"bytes"
	"encoding/json"
	"testing"

	"github.com/acctapi/acctapi"
	"github.com/acctapi/acctapi/events"
)

// FuzzTranslate checks that Translate, given one valid JSON value, returns
// valid JSON or an error, and that translating its output to the same
// dialect again changes nothing. (A review found two null twins cut from
// one object leaving invalid JSON, which no example test had.)
func FuzzTranslate(f *testing.F) {
	for _, seed := range []string{
		`{"target":{"monitoring":{"tags":null,"site":null,"ddtags":"a","ddsite":"b"}}}`,
		`{"target":{"monitoring":null,"cloud_logs_ingestion":null,"datadog":{},"azure_logs_ingestion":{}}}`,
		`{"target":{"kinesis":{"stream_arn":"s","auth":{"creds":{"cloud_access_key_id":null,"aws_access_key_id":"a"}}}}}`,
		`{"event_destinations":[{"target":{"datadog":{"api_key":"k"},"monitoring":null}}]}`,
		`{"target":{"datadog":{"ddtags":null,"tags":null}}}`,
		`[1, "x", null, {"target": {}}]`,
	} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, body string) {
		if !json.Valid([]byte(body)) {
			return
		}
		for _, d := range []acctapi.Dialect{acctapi.DialectSpec, acctapi.DialectReal} {
			out, err := events.Translate([]byte(body), d)
			if err != nil {
				continue
			}
			if !json.Valid(out) {
				t.Fatalf("Translate(%s, %v) = %s: not valid JSON", body, d, out)
			}
			again, err := events.Translate(out, d)
			if err != nil || !bytes.Equal(again, out) {
				t.Fatalf("Translate(%s, %v) = %s; again: %s, %v", body, d, out, again, err)
			}
		}
	})
}
