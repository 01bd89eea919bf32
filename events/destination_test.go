package events

import (
	"encoding/json"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/acctapi/acctapi"
	"github.com/acctapi/acctapi/internal/apitest"
)

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

const (
	invalid     = " " + acctapi.CodeInvalidValue
	badFormat   = " " + acctapi.CodeBadFormat
	noTarget    = " " + acctapi.CodeNoTarget
	manyTargets = " " + acctapi.CodeManyTargets
	noAuthField = " " + acctapi.CodeNoAuthField
	noAuth      = " " + acctapi.CodeNoAuth
	manyAuths   = " " + acctapi.CodeManyAuths
	badARN      = " " + acctapi.CodeBadRoleARN
	noAPIKey    = " " + acctapi.CodeNoAPIKey
	badType     = " " + acctapi.CodeBadEventType
)

var (
	role     = &CloudAuth{Role: &Role{RoleARN: "arn:aws:iam::123456789012:role/r"}}
	creds    = &CloudAuth{Creds: &Creds{"id", "secret"}}
	kinesis  = Target{Kinesis: &Kinesis{Auth: role, StreamARN: "arn:stream"}}
	logs     = CloudLogsIngestion{"t", "c", "s", "https://l", "r", "n"}
	withAuth = func(a *CloudAuth) Target { return Target{Firehose: &Firehose{Auth: a, DeliveryStreamARN: "arn:fh"}} }
	// every sets all six target kinds, each valid on its own.
	every = Target{
		Firehose:           withAuth(role).Firehose,
		Kinesis:            kinesis.Kinesis,
		CloudWatchLogs:     &CloudWatchLogs{Auth: role, LogGroupARN: "arn:lg"},
		S3:                 &S3{Auth: creds, BucketARN: "arn:b"},
		Monitoring:         &Monitoring{APIKey: "k"},
		CloudLogsIngestion: &logs,
	}
)

func create(t Target) *DestinationCreate { return &DestinationCreate{Format: FormatJSON, Target: t} }

// withoutEachLogsMember returns a row for each cloud_logs_ingestion member
// left empty, the others set.
func withoutEachLogsMember() []apitest.ValidateCase {
	members := []struct {
		name  string
		clear func(*CloudLogsIngestion)
	}{
		{"tenant_id", func(c *CloudLogsIngestion) { c.TenantID = "" }},
		{"client_id", func(c *CloudLogsIngestion) { c.ClientID = "" }},
		{"client_secret", func(c *CloudLogsIngestion) { c.ClientSecret = "" }},
		{"logs_ingestion_uri", func(c *CloudLogsIngestion) { c.LogsIngestionURI = "" }},
		{"data_collection_rule_id", func(c *CloudLogsIngestion) { c.DataCollectionRuleID = "" }},
		{"data_collection_stream_name", func(c *CloudLogsIngestion) { c.DataCollectionStreamName = "" }},
	}
	var out []apitest.ValidateCase
	for _, m := range members {
		c := logs
		m.clear(&c)
		out = append(out, apitest.ValidateCase{"cloud logs ingestion without " + m.name,
			create(Target{CloudLogsIngestion: &c}), []string{"target.cloud_logs_ingestion." + m.name + invalid}})
	}
	return out
}

func TestDestinationCreateValidate(t *testing.T) {
	apitest.RunValidate(t, append([]apitest.ValidateCase{
		{"minimal", create(kinesis), nil},
		{"format missing", &DestinationCreate{Format: "", Target: kinesis}, []string{"format" + badFormat}},
		{"format JSON", &DestinationCreate{Format: "JSON", Target: kinesis}, nil},
		{"format json", &DestinationCreate{Format: "json", Target: kinesis}, nil},
		{"format mixed case", &DestinationCreate{Format: "jSoN", Target: kinesis}, nil},
		{"format xml", &DestinationCreate{Format: "xml", Target: kinesis}, []string{"format" + badFormat}},
		{"format JSONL", &DestinationCreate{Format: "JSONL", Target: kinesis}, []string{"format" + badFormat}},
		{"format with a look-alike long s", &DestinationCreate{Format: "j\u017fon", Target: kinesis}, []string{"format" + badFormat}},
		{"format padded", &DestinationCreate{Format: " JSON", Target: kinesis}, []string{"format" + badFormat}},
		{"no target kind", create(Target{}), []string{"target" + noTarget}},
		{"two target kinds", create(Target{Kinesis: kinesis.Kinesis, Monitoring: &Monitoring{APIKey: "k"}}), []string{"target" + manyTargets}},
		{"every target kind", create(every), []string{"target" + manyTargets}},
		{"firehose", create(withAuth(role)), nil},
		{"firehose without arn", create(Target{Firehose: &Firehose{Auth: role}}), []string{"target.firehose.delivery_stream_arn" + invalid}},
		{"kinesis without arn", create(Target{Kinesis: &Kinesis{Auth: role}}), []string{"target.kinesis.stream_arn" + invalid}},
		{"kinesis without auth", create(Target{Kinesis: &Kinesis{StreamARN: "s"}}), []string{"target.kinesis.auth" + noAuthField}},
		{"cloudwatch logs", create(Target{CloudWatchLogs: &CloudWatchLogs{Auth: role, LogGroupARN: "arn:lg"}}), nil},
		{"cloudwatch logs without arn", create(Target{CloudWatchLogs: &CloudWatchLogs{Auth: role}}), []string{"target.cloudwatch_logs.log_group_arn" + invalid}},
		{"cloudwatch logs without auth", create(Target{CloudWatchLogs: &CloudWatchLogs{LogGroupARN: "arn:lg"}}), []string{"target.cloudwatch_logs.auth" + noAuthField}},
		{"s3", create(Target{S3: &S3{Auth: role, BucketARN: "arn:b", MaxFileSize: 1 << 20}}), nil},
		{"s3 without bucket", create(Target{S3: &S3{Auth: role}}), []string{"target.s3.bucket_arn" + invalid}},
		{"s3 with negative sizes", create(Target{S3: &S3{Auth: role, BucketARN: "b", MaxFileSize: -1, MaxFileAge: -60}}),
			[]string{"target.s3.max_file_size" + invalid, "target.s3.max_file_age" + invalid}},
		{"s3 with both auths", create(Target{S3: &S3{Auth: &CloudAuth{Role: role.Role, Creds: creds.Creds}, BucketARN: "arn:b"}}), []string{"target.s3.auth" + manyAuths}},
		{"monitoring", create(Target{Monitoring: &Monitoring{APIKey: "k"}}), nil},
		{"monitoring without api key", create(Target{Monitoring: &Monitoring{Site: "eu"}}), []string{"target.monitoring.api_key" + noAPIKey}},
		{"cloud logs ingestion", create(Target{CloudLogsIngestion: &logs}), nil},
		{"cloud logs ingestion empty", create(Target{CloudLogsIngestion: &CloudLogsIngestion{}}), []string{
			"target.cloud_logs_ingestion.tenant_id" + invalid,
			"target.cloud_logs_ingestion.client_id" + invalid,
			"target.cloud_logs_ingestion.client_secret" + invalid,
			"target.cloud_logs_ingestion.logs_ingestion_uri" + invalid,
			"target.cloud_logs_ingestion.data_collection_rule_id" + invalid,
			"target.cloud_logs_ingestion.data_collection_stream_name" + invalid,
		}},
		{"role", create(withAuth(role)), nil},
		{"creds", create(withAuth(creds)), nil},
		{"role with an arn of another partition and a path", create(withAuth(&CloudAuth{Role: &Role{RoleARN: "arn:aws-cn:iam::123456789012:role/ops/events"}})), nil},
		{"role with a stream's arn", create(withAuth(&CloudAuth{Role: &Role{RoleARN: "arn:aws:kinesis:us-east-1:123456789012:stream/s"}})), []string{"target.firehose.auth.role.role_arn" + badARN}},
		{"role with a short account", create(withAuth(&CloudAuth{Role: &Role{RoleARN: "arn:aws:iam::1:role/r"}})), []string{"target.firehose.auth.role.role_arn" + badARN}},
		{"role with a user's arn", create(withAuth(&CloudAuth{Role: &Role{RoleARN: "arn:aws:iam::123456789012:user/u"}})), []string{"target.firehose.auth.role.role_arn" + badARN}},
		{"role with no role name", create(withAuth(&CloudAuth{Role: &Role{RoleARN: "arn:aws:iam::123456789012:role/"}})), []string{"target.firehose.auth.role.role_arn" + badARN}},
		{"role without arn", create(Target{Kinesis: &Kinesis{Auth: &CloudAuth{Role: &Role{}}, StreamARN: "s"}}), []string{"target.kinesis.auth.role.role_arn" + badARN}},
		{"creds without key id", create(withAuth(&CloudAuth{Creds: &Creds{SecretAccessKey: "secret"}})), []string{"target.firehose.auth.creds.cloud_access_key_id" + invalid}},
		{"creds without secret", create(withAuth(&CloudAuth{Creds: &Creds{AccessKeyID: "id"}})), []string{"target.firehose.auth.creds.cloud_secret_access_key" + invalid}},
		{"creds empty", create(withAuth(&CloudAuth{Creds: &Creds{}})), []string{"target.firehose.auth.creds.cloud_access_key_id" + invalid, "target.firehose.auth.creds.cloud_secret_access_key" + invalid}},
		{"no auth", create(withAuth(&CloudAuth{})), []string{"target.firehose.auth" + noAuth}},
		{"role and creds", create(withAuth(&CloudAuth{Role: role.Role, Creds: creds.Creds})), []string{"target.firehose.auth" + manyAuths}},
		{"role and empty creds", create(withAuth(&CloudAuth{Role: role.Role, Creds: &Creds{}})), []string{"target.firehose.auth" + manyAuths}},
	}, withoutEachLogsMember()...))
}

func TestDestinationUpdateValidate(t *testing.T) {
	apitest.RunValidate(t, []apitest.ValidateCase{
		{"empty", &DestinationUpdate{ID: "ed_1"}, nil},
		{"format JSON", &DestinationUpdate{Format: apitest.Ptr("JSON")}, nil},
		{"format Json", &DestinationUpdate{Format: apitest.Ptr("Json")}, nil},
		{"format empty", &DestinationUpdate{Format: apitest.Ptr("")}, []string{"format" + badFormat}},
		{"format xml", &DestinationUpdate{Format: apitest.Ptr("xml")}, []string{"format" + badFormat}},
		{"target", &DestinationUpdate{Target: &kinesis}, nil},
		{"target with creds", &DestinationUpdate{Target: apitest.Ptr(withAuth(creds))}, nil},
		{"target no kind", &DestinationUpdate{Target: &Target{}}, []string{"target" + noTarget}},
		{"target two kinds", &DestinationUpdate{Target: &Target{S3: every.S3, Monitoring: every.Monitoring}}, []string{"target" + manyTargets}},
		{"target member missing", &DestinationUpdate{Target: &Target{Monitoring: &Monitoring{}}}, []string{"target.monitoring.api_key" + noAPIKey}},
		{"target without auth", &DestinationUpdate{Target: &Target{S3: &S3{BucketARN: "arn:b"}}}, []string{"target.s3.auth" + noAuthField}},
		{"target cloud logs ingestion without secret", &DestinationUpdate{Target: &Target{CloudLogsIngestion: &CloudLogsIngestion{"t", "c", "", "u", "r", "n"}}},
			[]string{"target.cloud_logs_ingestion.client_secret" + invalid}},
	})
}

func TestDestinationNormalize(t *testing.T) {
	for _, in := range []string{"json", "JsOn", "JSON"} {
		c := DestinationCreate{Format: in}
		c.Normalize()
		u := DestinationUpdate{Format: apitest.Ptr(in)}
		u.Normalize()
		if c.Format != FormatJSON || *u.Format != FormatJSON {
			t.Errorf("Normalize(%q) = %q, %q; want JSON", in, c.Format, *u.Format)
		}
	}
	var u DestinationUpdate
	u.Normalize()
	if diff := cmp.Diff(DestinationUpdate{}, u); diff != "" {
		t.Errorf("Normalize of an empty update (-want +got):\n%s", diff)
	}
}
