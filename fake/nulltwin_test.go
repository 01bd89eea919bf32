package fake_test

import "testing"

func TestNullTwinIsAbsent(t *testing.T) {
	srv, _ := start(t)
	for _, body := range []string{
		`{"format":"json","target":{"datadog":{"api_key":"k"},"monitoring":null}}`,
		`{"format":"json","target":{"monitoring":null,"datadog":{"api_key":"k"}}}`,
		`{"format":"json","target":{"datadog":{"api_key":"k","tags":null,"ddtags":"x"}}}`,
		`{"format":"json","target":{"datadog":{"api_key":"k","ddtags":"x","tags":null}}}`,
		`{"format":"json","target":{"datadog":{"api_key":"k","ddtags":null,"tags":null}}}`,
		`{"format":"json","target":{"kinesis":{"stream_arn":"s","auth":{"creds":{"aws_access_key_id":"a","cloud_access_key_id":null,"aws_secret_access_key":"s"}}}}}`,
	} {
		r := realClientRequest(t, srv, "POST", "/event_destinations", body)
		if r.status != 201 {
			t.Errorf("%s: %d %s, want 201", body, r.status, r.body)
		}
	}
	// Both given, neither null: still refused.
	if r := realClientRequest(t, srv, "POST", "/event_destinations", `{"format":"json","target":{"datadog":{"api_key":"k"},"monitoring":{"api_key":"k"}}}`); r.status != 400 {
		t.Errorf("both non-null: %d", r.status)
	}
}
