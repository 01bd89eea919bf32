package events_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"

	"github.com/acctapi/acctapi"
	"github.com/acctapi/acctapi/events"
)

func ExampleDestinations_Create() {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusCreated)
		_, _ = io.WriteString(w, `{"id":"ed_1","format":"JSON","target":{"firehose":null,
			"kinesis":{"auth":{"role":{"role_arn":"arn:role"},"creds":null},"stream_arn":"arn:stream"},
			"cloudwatch_logs":null,"s3":null,"monitoring":null,"cloud_logs_ingestion":null}}`)
	}))
	defer srv.Close()
	c, _ := acctapi.NewClient("key", acctapi.WithBaseURL(srv.URL))

	d, err := events.NewDestinations(c).Create(context.Background(), &events.DestinationCreate{
		Format: "json",
		Target: events.Target{Kinesis: &events.Kinesis{
			Auth:      events.CloudAuth{Role: &events.Role{RoleARN: "arn:role"}},
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
	// Output: target.kinesis.auth ERR_NGROK_215
}

func ExampleSources_List() {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.WriteString(w, `{"sources":[{"type":"api_key_created.v0","uri":"u"}],"uri":"u"}`)
	}))
	defer srv.Close()
	c, _ := acctapi.NewClient("key", acctapi.WithBaseURL(srv.URL))

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
