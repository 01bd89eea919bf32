package events_test

import (
	"context"
	"fmt"

	"github.com/acctapi/acctapi"
	"github.com/acctapi/acctapi/events"
	"github.com/acctapi/acctapi/internal/apitest"
)

func ExampleDestinations_Create() {
	c, stop := apitest.ExampleClient(`{"id":"ed_1","uri":"https://api.example/event_destinations/ed_1","format":"JSON","target":{"firehose":null,
		"kinesis":{"auth":{"role":{"role_arn":"arn:aws:iam::123456789012:role/r"},"creds":null},"stream_arn":"arn:stream"},
		"cloudwatch_logs":null,"s3":null,"monitoring":null,"cloud_logs_ingestion":null}}`)
	defer stop()

	d, err := events.NewDestinations(c).Create(context.Background(), &events.DestinationCreate{
		Format: "json",
		Target: events.Target{Kinesis: &events.Kinesis{
			Auth:      &events.CloudAuth{Role: &events.Role{RoleARN: "arn:aws:iam::123456789012:role/r"}},
			StreamARN: "arn:stream",
		}},
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(d.ID, d.Format, d.Target.Kinesis.StreamARN)
	// Output: ed_1 JSON arn:stream
}

func ExampleDestinationCreate_Validate() {
	r := &events.DestinationCreate{Target: events.Target{Kinesis: &events.Kinesis{StreamARN: "arn:stream"}}}
	for _, fe := range acctapi.FieldErrors(r.Validate()) {
		fmt.Println(fe.Field, fe.Code)
	}
	// Output:
	// format ERR_NGROK_235
	// target.kinesis.auth ERR_NGROK_5106
}

func ExampleSources_List() {
	c, stop := apitest.ExampleClient(`{"sources":[{"type":"api_key_created.v0","uri":"u"}],"uri":"u"}`)
	defer stop()

	l, err := events.NewSources(c).List(context.Background(), "esb_1")
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, s := range l.Sources {
		fmt.Println(s.Type, events.IsEventType(s.Type))
	}
	// Output: api_key_created.v0 true
}
