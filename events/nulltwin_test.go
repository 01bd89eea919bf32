package events_test

import (
	"testing"

	"github.com/acctapi/acctapi"
	"github.com/acctapi/acctapi/events"
)

// TestTranslateNullTwin checks that a member given in both dialects, one
// of them null, is the other one alone: null is the same as absent.
func TestTranslateNullTwin(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		body string
		to   acctapi.Dialect
		want string
	}{
		{`{"target":{"datadog":{"api_key":"k"},"monitoring":null}}`, acctapi.DialectSpec, `{"target":{"monitoring":{"api_key":"k"}}}`},
		{`{"target":{"monitoring":null,"datadog":{"api_key":"k"}}}`, acctapi.DialectSpec, `{"target":{"monitoring":{"api_key":"k"}}}`},
		{`{"target":{"kinesis":null,"monitoring":null,"datadog":{"api_key":"k"},"s3":null}}`, acctapi.DialectSpec, `{"target":{"kinesis":null,"monitoring":{"api_key":"k"},"s3":null}}`},
		{`{"target":{"datadog":{"api_key":"k","tags":null,"ddtags":"x"}}}`, acctapi.DialectSpec, `{"target":{"monitoring":{"api_key":"k","tags":"x"}}}`},
		{`{"target":{"datadog":{"ddtags":null,"tags":null}}}`, acctapi.DialectSpec, `{"target":{"monitoring":{"tags":null}}}`},
		{`{"target":{"monitoring":{"api_key":"k"},"datadog":null}}`, acctapi.DialectReal, `{"target":{"datadog":{"api_key":"k"}}}`},
		{`{"target":{"monitoring":null,"kinesis":{}}}`, acctapi.DialectReal, `{"target":{"datadog":null,"kinesis":{}}}`},
		// Two null twins cut from one object, the first member among them
		// (a review: the second cut took the object's brace with it).
		{`{"target":{"monitoring":{"tags":null,"site":null,"ddtags":"a","ddsite":"b"}}}`, acctapi.DialectSpec, `{"target":{"monitoring":{"tags":"a","site":"b"}}}`},
		{`{"target":{"monitoring":null,"cloud_logs_ingestion":null,"datadog":{},"azure_logs_ingestion":{}}}`, acctapi.DialectSpec, `{"target":{"monitoring":{},"cloud_logs_ingestion":{}}}`},
	} {
		got, err := events.Translate([]byte(tt.body), tt.to)
		if err != nil || string(got) != tt.want {
			t.Errorf("Translate(%s) = %s, %v; want %s", tt.body, got, err, tt.want)
		}
	}
}
