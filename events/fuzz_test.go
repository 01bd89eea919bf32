package events

import (
	"testing"

	"github.com/acctapi/acctapi/internal/apitest"
)

// FuzzRequests decodes arbitrary JSON into each request type: Validate and
// Normalize never panic, and a request that validates survives an encode
// and decode unchanged.
func FuzzRequests(f *testing.F) {
	apitest.FuzzRequests(f, []func() apitest.Validator{
		apitest.New[DestinationCreate],
		apitest.New[DestinationUpdate],
		apitest.New[SubscriptionCreate],
		apitest.New[SubscriptionUpdate],
		apitest.New[SourceCreate],
		apitest.New[SourceUpdate],
	},
		`{"format":"json","target":{"kinesis":{"auth":{"role":{"role_arn":"arn:aws:iam::123456789012:role/r"}},"stream_arn":"s"}}}`,
		`{"id":"ed_1","format":"JSON","target":{"s3":{"auth":{"creds":{"cloud_access_key_id":"a","cloud_secret_access_key":"b"}},"bucket_arn":"b","max_file_size":-1}}}`,
		`{"target":{"cloud_logs_ingestion":{"tenant_id":"t","client_id":"c","client_secret":"s","logs_ingestion_uri":"u","data_collection_rule_id":"r","data_collection_stream_name":"n"},"monitoring":null}}`,
		`{"sources":[{"type":"api_key_created.v0"}],"destination_ids":["ed_1"],"subscription_id":"esb_1","type":"vault_created.v0"}`,
		`{"sources":[],"destination_ids":null,"type":""}`,
	)
}
