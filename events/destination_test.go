package events

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/acctapi/acctapi"
	"github.com/acctapi/acctapi/internal/apitest"
)

func TestDestinationJSON(t *testing.T) {
	d := apitest.ReadGolden[Destination](t, "destination.json")
	if d.Target.Kinesis == nil || d.Target.Kinesis.Auth.Role == nil {
		t.Errorf("target = %+v; want kinesis with a role", d.Target)
	}
}

func TestEmptyTargetListsEveryMember(t *testing.T) {
	b, err := json.Marshal(Target{})
	if err != nil {
		t.Fatal(err)
	}
	const want = `{"firehose":null,"kinesis":null,"cloudwatch_logs":null,"s3":null,"monitoring":null,"cloud_logs_ingestion":null}`
	if string(b) != want {
		t.Errorf("Target{} = %s; want %s", b, want)
	}
}

const invalid = " " + acctapi.CodeInvalidValue

var (
	role     = CloudAuth{Role: &Role{RoleARN: "arn:role"}}
	kinesis  = Target{Kinesis: &Kinesis{Auth: role, StreamARN: "arn:stream"}}
	logs     = CloudLogsIngestion{"t", "c", "s", "https://l", "r", "n"}
	withAuth = func(a CloudAuth) Target { return Target{Firehose: &Firehose{Auth: a, DeliveryStreamARN: "arn:fh"}} }
)

func create(t Target) *DestinationCreate { return &DestinationCreate{Target: t} }

func TestDestinationCreateValidate(t *testing.T) {
	apitest.RunValidate(t, []apitest.ValidateCase{
		{"minimal", create(kinesis), nil},
		{"description at limit", &DestinationCreate{Description: strings.Repeat("é", 127) + "x", Target: kinesis}, nil},
		{"description past limit", &DestinationCreate{Description: strings.Repeat("é", 128), Target: kinesis}, []string{"description " + acctapi.CodeDescriptionTooLong}},
		{"metadata at limit", &DestinationCreate{Metadata: strings.Repeat("m", 4096), Target: kinesis}, nil},
		{"metadata past limit", &DestinationCreate{Metadata: strings.Repeat("m", 4097), Target: kinesis}, []string{"metadata " + acctapi.CodeMetadataTooLong}},
		{"format json any case", &DestinationCreate{Format: "json", Target: kinesis}, nil},
		{"format other", &DestinationCreate{Format: "JSONL", Target: kinesis}, []string{"format" + invalid}},
		{"no target", create(Target{}), []string{"target" + invalid}},
		{"two targets", create(Target{Kinesis: kinesis.Kinesis, Monitoring: &Monitoring{APIKey: "k"}}), []string{"target" + invalid}},
		{"firehose", create(withAuth(role)), nil},
		{"firehose without arn", create(Target{Firehose: &Firehose{Auth: role}}), []string{"target.firehose.delivery_stream_arn" + invalid}},
		{"kinesis without arn", create(Target{Kinesis: &Kinesis{Auth: role}}), []string{"target.kinesis.stream_arn" + invalid}},
		{"cloudwatch logs", create(Target{CloudWatchLogs: &CloudWatchLogs{Auth: role, LogGroupARN: "arn:lg"}}), nil},
		{"cloudwatch logs without arn", create(Target{CloudWatchLogs: &CloudWatchLogs{Auth: role}}), []string{"target.cloudwatch_logs.log_group_arn" + invalid}},
		{"s3", create(Target{S3: &S3{Auth: role, BucketARN: "arn:b", MaxFileSize: 1 << 20}}), nil},
		{"s3 without bucket", create(Target{S3: &S3{Auth: role}}), []string{"target.s3.bucket_arn" + invalid}},
		{"monitoring", create(Target{Monitoring: &Monitoring{APIKey: "k"}}), nil},
		{"monitoring without api key", create(Target{Monitoring: &Monitoring{Site: "eu"}}), []string{"target.monitoring.api_key" + invalid}},
		{"cloud logs ingestion", create(Target{CloudLogsIngestion: &logs}), nil},
		{"cloud logs ingestion empty", create(Target{CloudLogsIngestion: &CloudLogsIngestion{}}), []string{
			"target.cloud_logs_ingestion.tenant_id" + invalid,
			"target.cloud_logs_ingestion.client_id" + invalid,
			"target.cloud_logs_ingestion.client_secret" + invalid,
			"target.cloud_logs_ingestion.logs_ingestion_uri" + invalid,
			"target.cloud_logs_ingestion.data_collection_rule_id" + invalid,
			"target.cloud_logs_ingestion.data_collection_stream_name" + invalid,
		}},
		{"cloud logs ingestion one missing", create(Target{CloudLogsIngestion: &CloudLogsIngestion{"t", "c", "s", "u", "r", ""}}), []string{"target.cloud_logs_ingestion.data_collection_stream_name" + invalid}},
		{"creds", create(withAuth(CloudAuth{Creds: &Creds{"id", "secret"}})), nil},
		{"creds without secret", create(withAuth(CloudAuth{Creds: &Creds{AccessKeyID: "id"}})), []string{"target.firehose.auth.creds.cloud_secret_access_key" + invalid}},
		{"creds empty", create(withAuth(CloudAuth{Creds: &Creds{}})), []string{"target.firehose.auth.creds.cloud_access_key_id" + invalid, "target.firehose.auth.creds.cloud_secret_access_key" + invalid}},
		{"role without arn", create(Target{Kinesis: &Kinesis{Auth: CloudAuth{Role: &Role{}}, StreamARN: "s"}}), []string{"target.kinesis.auth.role.role_arn" + invalid}},
		{"no auth", create(withAuth(CloudAuth{})), []string{"target.firehose.auth" + invalid}},
		{"role and creds", create(withAuth(CloudAuth{Role: role.Role, Creds: &Creds{"id", "secret"}})), []string{"target.firehose.auth" + invalid}},
	})
}

func TestDestinationUpdateValidate(t *testing.T) {
	apitest.RunValidate(t, []apitest.ValidateCase{
		{"empty", &DestinationUpdate{ID: "ed_1"}, nil},
		{"description at limit", &DestinationUpdate{Description: apitest.Ptr(strings.Repeat("d", 255))}, nil},
		{"description past limit", &DestinationUpdate{Description: apitest.Ptr(strings.Repeat("d", 256))}, []string{"description " + acctapi.CodeDescriptionTooLong}},
		{"metadata past limit", &DestinationUpdate{Metadata: apitest.Ptr(strings.Repeat("m", 4097))}, []string{"metadata " + acctapi.CodeMetadataTooLong}},
		{"format Json", &DestinationUpdate{Format: apitest.Ptr("Json")}, nil},
		{"format empty", &DestinationUpdate{Format: apitest.Ptr("")}, []string{"format" + invalid}},
		{"target", &DestinationUpdate{Target: &kinesis}, nil},
		{"target empty", &DestinationUpdate{Target: &Target{}}, []string{"target" + invalid}},
	})
}

func TestDestinationNormalize(t *testing.T) {
	for _, in := range []string{"", "json", "JsOn", "JSON"} {
		c := DestinationCreate{Format: in}
		c.Normalize()
		u := DestinationUpdate{Format: apitest.Ptr(in)}
		u.Normalize()
		if c.Format != FormatJSON || (in != "" && *u.Format != FormatJSON) {
			t.Errorf("Normalize(%q) = %q, %q; want JSON", in, c.Format, *u.Format)
		}
	}
	var u DestinationUpdate
	u.Normalize()
	if diff := cmp.Diff(DestinationUpdate{}, u); diff != "" {
		t.Errorf("Normalize of an empty update (-want +got):\n%s", diff)
	}
}
