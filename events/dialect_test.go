package events_test

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/acctapi/acctapi"
	"github.com/acctapi/acctapi/events"
)

var (
	role  = &events.CloudAuth{Role: &events.Role{RoleARN: "arn:aws:iam::123456789012:role/r"}}
	creds = &events.CloudAuth{Creds: &events.Creds{AccessKeyID: "AKID", SecretAccessKey: "secret"}}
)

// targets is one target of every kind, each cloud kind with each kind of
// auth, and the target as each dialect writes it (the other members null),
// written out by hand so that the mapping is pinned, not recomputed.
var targets = []struct {
	name       string
	target     events.Target
	spec, real string
}{
	{"firehose role", events.Target{Firehose: &events.Firehose{Auth: role, DeliveryStreamARN: "arn:fh"}},
		`"firehose":{"auth":{"role":{"role_arn":"arn:aws:iam::123456789012:role/r"},"creds":null},"delivery_stream_arn":"arn:fh"}`,
		`"firehose":{"auth":{"role":{"role_arn":"arn:aws:iam::123456789012:role/r"},"creds":null},"delivery_stream_arn":"arn:fh"}`},
	{"firehose creds", events.Target{Firehose: &events.Firehose{Auth: creds, DeliveryStreamARN: "arn:fh"}},
		`"firehose":{"auth":{"role":null,"creds":{"cloud_access_key_id":"AKID","cloud_secret_access_key":"secret"}},"delivery_stream_arn":"arn:fh"}`,
		`"firehose":{"auth":{"role":null,"creds":{"aws_access_key_id":"AKID","aws_secret_access_key":"secret"}},"delivery_stream_arn":"arn:fh"}`},
	{"kinesis creds", events.Target{Kinesis: &events.Kinesis{Auth: creds, StreamARN: "arn:k"}},
		`"kinesis":{"auth":{"role":null,"creds":{"cloud_access_key_id":"AKID","cloud_secret_access_key":"secret"}},"stream_arn":"arn:k"}`,
		`"kinesis":{"auth":{"role":null,"creds":{"aws_access_key_id":"AKID","aws_secret_access_key":"secret"}},"stream_arn":"arn:k"}`},
	{"cloudwatch_logs creds", events.Target{CloudWatchLogs: &events.CloudWatchLogs{Auth: creds, LogGroupARN: "arn:cw"}},
		`"cloudwatch_logs":{"auth":{"role":null,"creds":{"cloud_access_key_id":"AKID","cloud_secret_access_key":"secret"}},"log_group_arn":"arn:cw"}`,
		`"cloudwatch_logs":{"auth":{"role":null,"creds":{"aws_access_key_id":"AKID","aws_secret_access_key":"secret"}},"log_group_arn":"arn:cw"}`},
	{"s3 creds", events.Target{S3: &events.S3{Auth: creds, BucketARN: "arn:s3", ObjectPrefix: "p/", Compression: true, MaxFileSize: 1 << 20, MaxFileAge: 60}},
		`"s3":{"auth":{"role":null,"creds":{"cloud_access_key_id":"AKID","cloud_secret_access_key":"secret"}},"bucket_arn":"arn:s3","object_prefix":"p/","compression":true,"max_file_size":1048576,"max_file_age":60}`,
		`"s3":{"auth":{"role":null,"creds":{"aws_access_key_id":"AKID","aws_secret_access_key":"secret"}},"bucket_arn":"arn:s3","object_prefix":"p/","compression":true,"max_file_size":1048576,"max_file_age":60}`},
	{"monitoring", events.Target{Monitoring: &events.Monitoring{APIKey: "k", Tags: "env:ci", Service: "svc", Site: "eu"}},
		`"monitoring":{"api_key":"k","tags":"env:ci","service":"svc","site":"eu"}`,
		`"datadog":{"api_key":"k","ddtags":"env:ci","service":"svc","ddsite":"eu"}`},
	{"cloud_logs_ingestion", events.Target{CloudLogsIngestion: &events.CloudLogsIngestion{TenantID: "t", ClientID: "c", ClientSecret: "s",
		LogsIngestionURI: "https://logs.test", DataCollectionRuleID: "dcr", DataCollectionStreamName: "stream"}},
		`"cloud_logs_ingestion":{"tenant_id":"t","client_id":"c","client_secret":"s","logs_ingestion_uri":"https://logs.test","data_collection_rule_id":"dcr","data_collection_stream_name":"stream"}`,
		`"azure_logs_ingestion":{"tenant_id":"t","client_id":"c","client_secret":"s","logs_ingestion_uri":"https://logs.test","data_collection_rule_id":"dcr","data_collection_stream_name":"stream"}`},
}

// wholeTarget returns the JSON of a target with member set as given and
// every other member of dialect d null, in the struct's order.
func wholeTarget(d acctapi.Dialect, set string) string {
	names := []string{"firehose", "kinesis", "cloudwatch_logs", "s3", "monitoring", "cloud_logs_ingestion"}
	if d == acctapi.DialectReal {
		names[4], names[5] = "datadog", "azure_logs_ingestion"
	}
	out := "{"
	for i, n := range names {
		if i > 0 {
			out += ","
		}
		var m map[string]json.RawMessage
		if json.Unmarshal([]byte("{"+set+"}"), &m) == nil && m[n] != nil {
			out += set
		} else {
			out += `"` + n + `":null`
		}
	}
	return out + "}"
}

// TestDialectRoundTrip sends every kind of target through the mapping in
// both dialects: Marshal writes each dialect's names, Translate turns one
// dialect's JSON into the other's and back, and decoding either gives the
// target back.
func TestDialectRoundTrip(t *testing.T) {
	t.Parallel()
	for _, tt := range targets {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			in := &events.DestinationCreate{Description: "d", Format: events.FormatJSON, Target: tt.target}
			want := map[acctapi.Dialect]string{
				acctapi.DialectSpec: `{"description":"d","metadata":"","format":"JSON","target":` + wholeTarget(acctapi.DialectSpec, tt.spec) + `}`,
				acctapi.DialectReal: `{"description":"d","metadata":"","format":"JSON","target":` + wholeTarget(acctapi.DialectReal, tt.real) + `}`,
			}
			for d, w := range want {
				got, err := in.MarshalDialect(d)
				if err != nil {
					t.Fatalf("MarshalDialect(%v): %v", d, err)
				}
				if diff := cmp.Diff(w, string(got)); diff != "" {
					t.Errorf("MarshalDialect(%v) (-want +got):\n%s", d, diff)
				}
				other := acctapi.Dialect(1 - d)
				there, err := events.Translate(got, other)
				if err != nil {
					t.Fatalf("Translate to %v: %v", other, err)
				}
				if diff := cmp.Diff(want[other], string(there)); diff != "" {
					t.Errorf("Translate(%v JSON, %v) (-want +got):\n%s", d, other, diff)
				}
				var back events.DestinationCreate
				if err := json.Unmarshal(got, &back); err != nil {
					t.Fatalf("decode %v JSON: %v", d, err)
				}
				if diff := cmp.Diff(in, &back); diff != "" {
					t.Errorf("decoded %v JSON (-want +got):\n%s", d, diff)
				}
			}
		})
	}
}

// TestTranslateLists checks a list of destinations, where targets sit one
// level deeper, and an update body, whose target may be absent.
func TestTranslateLists(t *testing.T) {
	t.Parallel()
	list := &events.DestinationList{URI: "https://api.test/event_destinations", Destinations: []events.Destination{
		{ID: "ed_1", Target: targets[5].target}, {ID: "ed_2", Target: targets[1].target},
	}}
	b, err := events.Marshal(list, acctapi.DialectReal)
	if err != nil {
		t.Fatal(err)
	}
	var raw struct {
		Destinations []struct{ Target map[string]json.RawMessage } `json:"event_destinations"`
	}
	if err := json.Unmarshal(b, &raw); err != nil {
		t.Fatal(err)
	}
	if d := raw.Destinations[0].Target; string(d["datadog"]) == "null" || d["monitoring"] != nil {
		t.Errorf("first target in the real dialect: %s", b)
	}
	var back events.DestinationList
	if err := json.Unmarshal(b, &back); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(list, &back); diff != "" {
		t.Errorf("decoded list (-want +got):\n%s", diff)
	}
	up, err := (&events.DestinationUpdate{ID: "ed_1"}).MarshalDialect(acctapi.DialectReal)
	if err != nil || string(up) != `{"id":"ed_1"}` {
		t.Errorf("an update without a target: %s, %v", up, err)
	}
}

// TestTranslateOneMemberInBothDialects checks that a member given in both
// dialects at once is an error naming it, from Translate and from decoding.
func TestTranslateOneMemberInBothDialects(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, body string
		to         acctapi.Dialect
		wantField  string
	}{
		{"kind, to the real dialect", `{"target":{"monitoring":{"api_key":"a"},"datadog":{"api_key":"b"}}}`, acctapi.DialectReal, "target.datadog"},
		{"kind, to the spec", `{"target":{"datadog":{"api_key":"a"},"monitoring":{"api_key":"b"}}}`, acctapi.DialectSpec, "target.monitoring"},
		{"monitoring member", `{"target":{"datadog":{"api_key":"a","tags":"x","ddtags":"y"}}}`, acctapi.DialectSpec, "target.monitoring.tags"},
		{"creds member", `{"target":{"kinesis":{"auth":{"creds":{"aws_access_key_id":"a","cloud_access_key_id":"b"}}}}}`, acctapi.DialectSpec, "target.kinesis.auth.creds.cloud_access_key_id"},
		{"in a list", `{"event_destinations":[{},{"target":{"azure_logs_ingestion":{},"cloud_logs_ingestion":{}}}]}`, acctapi.DialectReal, "event_destinations[1].target.azure_logs_ingestion"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			_, err := events.Translate([]byte(tt.body), tt.to)
			var fe *acctapi.FieldError
			if !errors.As(err, &fe) || fe.Field != tt.wantField || fe.Code != acctapi.CodeInvalidValue {
				t.Errorf("Translate = %v, want a field error on %s", err, tt.wantField)
			}
		})
	}
	var d events.Destination
	if err := json.Unmarshal([]byte(tests[0].body), &d); !errors.Is(err, acctapi.ErrInvalid) {
		t.Errorf("decoding a target in both dialects = %v, want ErrInvalid", err)
	}
}

// TestTranslateLeavesTheRestAlone checks what Translate does not touch:
// names outside event targets, bodies with nothing to rename, and bodies
// that are not JSON.
func TestTranslateLeavesTheRestAlone(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, body, want string
		to               acctapi.Dialect
	}{
		{"nothing to rename is the same bytes", "{ \"a\" : 1 }", "{ \"a\" : 1 }", acctapi.DialectReal},
		{"names outside a target", `{"tags":"x","monitoring":1,"metadata":"{\"site\":1}","target":{"monitoring":{"tags":"t"}}}`,
			`{"tags":"x","monitoring":1,"metadata":"{\"site\":1}","target":{"datadog":{"ddtags":"t"}}}`, acctapi.DialectReal},
		{"escaped names", `{"target":{"d\u0061tadog":{"ddsite":"<&>"}}}`, `{"target":{"monitoring":{"site":"<&>"}}}`, acctapi.DialectSpec},
		{"numbers as written", `{"target":{"s3":{"max_file_size":1e3,"auth":{"creds":{"aws_access_key_id":"a"}}}}}`,
			`{"target":{"s3":{"max_file_size":1e3,"auth":{"creds":{"cloud_access_key_id":"a"}}}}}`, acctapi.DialectSpec},
		{"not JSON", `{"target":{"datadog":`, `{"target":{"datadog":`, acctapi.DialectSpec},
		{"more after the value", `{"target":{"datadog":{}}} {}`, `{"target":{"datadog":{}}} {}`, acctapi.DialectSpec},
		{"a null target", `{"target":null,"datadog":{}}`, `{"target":null,"datadog":{}}`, acctapi.DialectSpec},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got, err := events.Translate([]byte(tt.body), tt.to)
			if err != nil || string(got) != tt.want {
				t.Errorf("Translate(%s) = %s, %v; want %s", tt.body, got, err, tt.want)
			}
		})
	}
	if _, err := events.Translate([]byte(`{}`), acctapi.Dialect(9)); err == nil {
		t.Error("Translate to an unknown dialect: no error")
	}
}

func TestTranslateField(t *testing.T) {
	t.Parallel()
	tests := []struct {
		path string
		to   acctapi.Dialect
		want string
	}{
		{"target.monitoring.tags", acctapi.DialectReal, "target.datadog.ddtags"},
		{"target.datadog.ddsite", acctapi.DialectSpec, "target.monitoring.site"},
		{"target.monitoring.api_key", acctapi.DialectReal, "target.datadog.api_key"},
		{"target.cloud_logs_ingestion.tenant_id", acctapi.DialectReal, "target.azure_logs_ingestion.tenant_id"},
		{"target.firehose.auth.creds.cloud_secret_access_key", acctapi.DialectReal, "target.firehose.auth.creds.aws_secret_access_key"},
		{"event_destinations[3].target.s3.auth.creds.aws_access_key_id", acctapi.DialectSpec, "event_destinations[3].target.s3.auth.creds.cloud_access_key_id"},
		{"tags", acctapi.DialectReal, "tags"},
		{"target", acctapi.DialectReal, "target"},
		{"", acctapi.DialectReal, ""},
	}
	for _, tt := range tests {
		if got := events.TranslateField(tt.path, tt.to); got != tt.want {
			t.Errorf("TranslateField(%q, %v) = %q, want %q", tt.path, tt.to, got, tt.want)
		}
	}
	// ValidateDialect, which translates fields, says so in an error (a
	// second review found it panicking through TranslateField).
	if err := (&events.DestinationCreate{}).ValidateDialect(acctapi.Dialect(9)); err == nil || !strings.Contains(err.Error(), "unknown dialect") {
		t.Errorf("ValidateDialect(Dialect(9)) = %v; want an error naming the unknown dialect", err)
	}
	// An unknown dialect panics, as Translate and Marshal return an error
	// for it (a review found the path returned as it was).
	defer func() {
		if r := recover(); r == nil || !strings.Contains(fmt.Sprint(r), "unknown dialect 9") {
			t.Errorf("TranslateField with Dialect(9): recovered %v; want a panic naming the dialect", r)
		}
	}()
	events.TranslateField("target.monitoring.tags", acctapi.Dialect(9))
}

// TestValidateDialectReasons pins a review's finding: in the real
// service's dialect, the client's own check named the field in that
// dialect but the kinds in its reason in the specification's ("sets 2
// kinds (monitoring, cloud_logs_ingestion)"), while the fake, for the same
// request, named them datadog and azure_logs_ingestion. Both now use
// events.TranslateReason.
func TestValidateDialectReasons(t *testing.T) {
	t.Parallel()
	r := &events.DestinationCreate{Format: events.FormatJSON, Target: events.Target{Monitoring: &events.Monitoring{APIKey: "k"}, CloudLogsIngestion: &events.CloudLogsIngestion{}}}
	err := r.ValidateDialect(acctapi.DialectReal)
	if err == nil || !strings.Contains(err.Error(), "sets 2 kinds (datadog, azure_logs_ingestion)") || strings.Contains(err.Error(), "monitoring") {
		t.Errorf("ValidateDialect(real) = %v; want the kinds named datadog and azure_logs_ingestion", err)
	}
	if err := r.ValidateDialect(acctapi.DialectSpec); err == nil || !strings.Contains(err.Error(), "sets 2 kinds (monitoring, cloud_logs_ingestion)") {
		t.Errorf("ValidateDialect(spec) = %v; want the specification's names", err)
	}
	// A quoted name is what the client sent, and stays.
	if got := events.TranslateReason("target", `is "monitoring", not monitoring`, acctapi.DialectReal); got != `is "monitoring", not datadog` {
		t.Errorf("TranslateReason = %q", got)
	}
	if got := events.TranslateReason("description", "monitoring", acctapi.DialectReal); got != "monitoring" {
		t.Errorf("TranslateReason outside target = %q", got)
	}
}
