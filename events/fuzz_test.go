package events

import (
	"encoding/json"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
)

// FuzzRequests decodes arbitrary JSON into each request type: Validate and
// Normalize never panic, and a request that validates survives an encode
// and decode unchanged.
func FuzzRequests(f *testing.F) {
	f.Add(`{"format":"json","target":{"kinesis":{"auth":{"role":{"role_arn":"r"}},"stream_arn":"s"}}}`)
	f.Add(`{"id":"ed_1","format":"JSON","target":{"s3":{"auth":{"creds":{"cloud_access_key_id":"a","cloud_secret_access_key":"b"}},"bucket_arn":"b","max_file_size":-1}}}`)
	f.Add(`{"target":{"cloud_logs_ingestion":{"tenant_id":"t","client_id":"c","client_secret":"s","logs_ingestion_uri":"u","data_collection_rule_id":"r","data_collection_stream_name":"n"},"monitoring":null}}`)
	f.Add(`{"sources":[{"type":"api_key_created.v0"}],"destination_ids":["ed_1"],"subscription_id":"esb_1","type":"vault_created.v0"}`)
	f.Add(`{"sources":[],"destination_ids":null,"type":""}`)
	f.Fuzz(func(t *testing.T, in string) {
		checkRoundTrip[DestinationCreate](t, in)
		checkRoundTrip[DestinationUpdate](t, in)
		checkRoundTrip[SubscriptionCreate](t, in)
		checkRoundTrip[SubscriptionUpdate](t, in)
		checkRoundTrip[SourceCreate](t, in)
		checkRoundTrip[SourceUpdate](t, in)
	})
}

func checkRoundTrip[T any, PT interface {
	*T
	Validate() error
}](t *testing.T, in string) {
	t.Helper()
	r := PT(new(T))
	if json.Unmarshal([]byte(in), r) != nil || r.Validate() != nil {
		return
	}
	b, err := json.Marshal(r)
	if err != nil {
		t.Fatalf("encode %+v: %v", r, err)
	}
	again := PT(new(T))
	if err := json.Unmarshal(b, again); err != nil {
		t.Fatalf("decode %s: %v", b, err)
	}
	if diff := cmp.Diff(r, again, cmpopts.EquateEmpty()); diff != "" {
		t.Errorf("round trip of %s (-first +second):\n%s", in, diff)
	}
	if n, ok := any(r).(interface{ Normalize() }); ok {
		n.Normalize()
		if err := r.Validate(); err != nil {
			t.Errorf("normalized request no longer validates: %v", err)
		}
	}
}
