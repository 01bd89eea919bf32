package events_test

import (
	"encoding/json"
	"fmt"

	"github.com/acctapi/acctapi"
	"github.com/acctapi/acctapi/events"
)

func ExampleTranslate() {
	// A request body as the real service's own clients write it...
	body := []byte(`{"description":"alerts","target":{"datadog":{"api_key":"k","ddsite":"eu"}}}`)

	// ...read by a server of the specification's dialect:
	spec, err := events.Translate(body, acctapi.DialectSpec)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(string(spec))

	// The model decodes either dialect.
	var r events.DestinationCreate
	if err := json.Unmarshal(body, &r); err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(r.Target.Monitoring.Site)

	// And a field error's path, named for a client of the real service:
	fmt.Println(events.TranslateField("target.monitoring.api_key", acctapi.DialectReal))
	// Output:
	// {"description":"alerts","target":{"monitoring":{"api_key":"k","site":"eu"}}}
	// eu
	// target.datadog.api_key
}

func ExampleMarshal() {
	d := &events.DestinationCreate{Format: events.FormatJSON, Target: events.Target{Kinesis: &events.Kinesis{
		Auth:      &events.CloudAuth{Creds: &events.Creds{AccessKeyID: "AKID", SecretAccessKey: "secret"}},
		StreamARN: "arn:stream",
	}}}
	b, err := events.Marshal(d.Target.Kinesis.Auth, acctapi.DialectReal)
	if err != nil {
		fmt.Println(err)
		return
	}
	// Only what sits under a "target" member is an event target.
	fmt.Println(string(b))
	b, err = events.Marshal(struct {
		Target events.Target `json:"target"`
	}{d.Target}, acctapi.DialectReal)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(string(b))
	// Output:
	// {"role":null,"creds":{"cloud_access_key_id":"AKID","cloud_secret_access_key":"secret"}}
	// {"target":{"firehose":null,"kinesis":{"auth":{"role":null,"creds":{"aws_access_key_id":"AKID","aws_secret_access_key":"secret"}},"stream_arn":"arn:stream"},"cloudwatch_logs":null,"s3":null,"datadog":null,"azure_logs_ingestion":null}}
}
