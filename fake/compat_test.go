package fake_test

import (
	"encoding/json"
	"net/url"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/acctapi/acctapi"
	"github.com/acctapi/acctapi/fake"
)

// The real service's own clients, as they decode what they are answered:
// these types mirror ngrok-api-go v8's datatypes (EventTarget and its
// members, AWSAuth, Paging), pointer members and all, so that a member the
// fake names otherwise decodes as nil here as it would there.
type (
	realDestination struct {
		ID     string     `json:"id"`
		URI    string     `json:"uri"`
		Format string     `json:"format"`
		Target realTarget `json:"target"`
	}
	realTarget struct {
		Firehose           *realFirehose `json:"firehose"`
		Kinesis            *realKinesis  `json:"kinesis"`
		CloudwatchLogs     *realCWLogs   `json:"cloudwatch_logs"`
		Datadog            *realDatadog  `json:"datadog"`
		AzureLogsIngestion *realAzure    `json:"azure_logs_ingestion"`
	}
	realAWSAuth struct {
		Role  *struct{ RoleARN string } `json:"role"`
		Creds *realAWSCreds             `json:"creds"`
	}
	realAWSCreds struct {
		AWSAccessKeyID     *string `json:"aws_access_key_id"`
		AWSSecretAccessKey *string `json:"aws_secret_access_key"`
	}
	realFirehose struct {
		Auth              realAWSAuth `json:"auth"`
		DeliveryStreamARN string      `json:"delivery_stream_arn"`
	}
	realKinesis struct {
		Auth      realAWSAuth `json:"auth"`
		StreamARN string      `json:"stream_arn"`
	}
	realCWLogs struct {
		Auth        realAWSAuth `json:"auth"`
		LogGroupARN string      `json:"log_group_arn"`
	}
	realDatadog struct {
		APIKey  *string `json:"api_key"`
		DDTags  *string `json:"ddtags"`
		Service *string `json:"service"`
		DDSite  *string `json:"ddsite"`
	}
	realAzure struct {
		TenantID                 string `json:"tenant_id"`
		ClientID                 string `json:"client_id"`
		ClientSecret             string `json:"client_secret"`
		LogsIngestionURI         string `json:"logs_ingestion_uri"`
		DataCollectionRuleID     string `json:"data_collection_rule_id"`
		DataCollectionStreamName string `json:"data_collection_stream_name"`
	}
	realUser struct {
		ID     string `json:"id"`
		URI    string `json:"uri"`
		Name   string `json:"name"`
		Active bool   `json:"active"`
	}
	realUserList struct {
		BotUsers    []realUser `json:"bot_users"`
		URI         string     `json:"uri"`
		NextPageURI *string    `json:"next_page_uri"`
	}
)

// realClientRequest sends a request shaped as the real service's clients
// send it: the version only as lower-case "ngrok-version" (the header
// name is written as is, not canonicalized), lower-case header names
// throughout, and a JSON body.
func realClientRequest(t *testing.T, srv *fake.Server, method, path, body string) response {
	t.Helper()
	return realClientVersion(t, srv, method, path, body, "2")
}

// realClientVersion is realClientRequest with ngrok-version set to version.
func realClientVersion(t *testing.T, srv *fake.Server, method, path, body, version string) response {
	t.Helper()
	req := newRequest(t, srv, method, path, body)
	req.Header["authorization"] = []string{"Bearer " + srv.APIKey()}
	req.Header["ngrok-version"] = []string{version}
	if body != "" {
		req.Header["content-type"] = []string{"application/json"}
	}
	return roundTrip(t, srv, req)
}

// TestRealClientCompatibility drives the fake with requests shaped exactly
// as the real service's published clients send them (ngrok-api-go and the
// TypeScript client: lower-case ngrok-version alone, the real target names,
// "format":"json", camel-case paging, PATCH bodies of {} for sources) and
// checks what those clients decode from the answers; over TCP and in
// memory.
func TestRealClientCompatibility(t *testing.T) {
	t.Parallel()
	for _, tcp := range []bool{true, false} {
		t.Run(map[bool]string{true: "tcp", false: "in memory"}[tcp], func(t *testing.T) {
			t.Parallel()
			var srv *fake.Server
			if tcp {
				srv = fake.Start(t)
			} else {
				srv, _ = start(t)
			}
			realClientChecks(t, srv)
		})
	}
}

func realClientChecks(t *testing.T, srv *fake.Server) {
	send := func(t *testing.T, method, path, body string, status int) response {
		t.Helper()
		r := realClientRequest(t, srv, method, path, body)
		if r.status != status {
			t.Fatalf("%s %s: %d %s, want %d", method, path, r.status, r.body, status)
		}
		return r
	}
	str := func(s string) *string { return &s }

	t.Run("datadog", func(t *testing.T) {
		r := send(t, "POST", "/event_destinations",
			`{"description":"dd","format":"json","target":{"datadog":{"api_key":"k1","ddtags":"env:a","service":"svc","ddsite":"datadoghq.eu"}}}`, 201)
		var d realDestination
		r.decode(t, &d)
		want := &realDatadog{APIKey: str("k1"), DDTags: str("env:a"), Service: str("svc"), DDSite: str("datadoghq.eu")}
		if diff := cmp.Diff(want, d.Target.Datadog); diff != "" {
			t.Errorf("create: datadog (-want +got):\n%s", diff)
		}
		checkRealTargetMembers(t, r.body, "datadog")
		r = send(t, "GET", "/event_destinations/"+d.ID, "", 200)
		var got realDestination
		r.decode(t, &got)
		if diff := cmp.Diff(want, got.Target.Datadog); diff != "" {
			t.Errorf("get: datadog (-want +got):\n%s", diff)
		}
		// ngrok-api-go's update sends the id and only what changes.
		r = send(t, "PATCH", "/event_destinations/"+d.ID, `{"id":"`+d.ID+`","target":{"datadog":{"api_key":"k2","ddtags":"env:b"}}}`, 200)
		got = realDestination{}
		r.decode(t, &got)
		if diff := cmp.Diff(&realDatadog{APIKey: str("k2"), DDTags: str("env:b"), Service: str(""), DDSite: str("")}, got.Target.Datadog); diff != "" {
			t.Errorf("update: datadog (-want +got):\n%s", diff)
		}
	})

	t.Run("aws credentials", func(t *testing.T) {
		r := send(t, "POST", "/event_destinations",
			`{"format":"json","target":{"kinesis":{"auth":{"creds":{"aws_access_key_id":"AKIA1","aws_secret_access_key":"s3cret"}},"stream_arn":"arn:aws:kinesis:us-east-1:1:stream/s"}}}`, 201)
		var d realDestination
		r.decode(t, &d)
		if d.Target.Kinesis == nil || d.Target.Kinesis.Auth.Creds == nil {
			t.Fatalf("kinesis creds decode as nil: %s", r.body)
		}
		if diff := cmp.Diff(&realAWSCreds{AWSAccessKeyID: str("AKIA1"), AWSSecretAccessKey: str("s3cret")}, d.Target.Kinesis.Auth.Creds); diff != "" {
			t.Errorf("creds (-want +got):\n%s", diff)
		}
		checkRealTargetMembers(t, r.body, "kinesis")
		if d.Format != "JSON" {
			t.Errorf("format %q, want JSON", d.Format)
		}
	})

	t.Run("azure logs ingestion", func(t *testing.T) {
		r := send(t, "POST", "/event_destinations",
			`{"format":"json","target":{"azure_logs_ingestion":{"tenant_id":"t","client_id":"c","client_secret":"cs","logs_ingestion_uri":"https://dce.example","data_collection_rule_id":"dcr","data_collection_stream_name":"Custom-S"}}}`, 201)
		var d realDestination
		r.decode(t, &d)
		want := &realAzure{TenantID: "t", ClientID: "c", ClientSecret: "cs", LogsIngestionURI: "https://dce.example", DataCollectionRuleID: "dcr", DataCollectionStreamName: "Custom-S"}
		if diff := cmp.Diff(want, d.Target.AzureLogsIngestion); diff != "" {
			t.Errorf("azure_logs_ingestion (-want +got):\n%s", diff)
		}
		checkRealTargetMembers(t, r.body, "azure_logs_ingestion")
	})

	t.Run("errors name the real members", func(t *testing.T) {
		r := send(t, "POST", "/event_destinations",
			`{"format":"json","target":{"firehose":{"auth":{"creds":{"aws_access_key_id":"AKIA1"}},"delivery_stream_arn":"arn:x"}}}`, 400)
		e := r.apiErr(t)
		if f := e.Details["field"]; f != "target.firehose.auth.creds.aws_secret_access_key" || e.ErrorCode != acctapi.CodeInvalidValue ||
			strings.Contains(e.Msg, "cloud_") || !strings.Contains(e.Msg, "aws_secret_access_key") {
			t.Errorf("missing secret: field %q, code %s, msg %q", f, e.ErrorCode, e.Msg)
		}
		r = send(t, "POST", "/event_destinations", `{"format":"json","target":{"datadog":{"api_key":"k"},"kinesis":{"stream_arn":"s","auth":{"role":{"role_arn":"arn:aws:iam::123456789012:role/r"}}}}}`, 400)
		if e := r.apiErr(t); strings.Contains(e.Msg, "monitoring") || !strings.Contains(e.Msg, "datadog") {
			t.Errorf("two targets: msg %q names the specification's kinds", e.Msg)
		}
		r = send(t, "POST", "/event_destinations", `{"format":"json","target":{"datadog":{"api_key":"k","nope":1}}}`, 400)
		if e := r.apiErr(t); e.ErrorCode != acctapi.CodeUnknownField || e.Details["field"] != "target.datadog.nope" || !strings.Contains(e.Msg, "target.datadog.nope") {
			t.Errorf("unknown member: %s %q %q", e.ErrorCode, e.Details["field"], e.Msg)
		}
		// One member in both spellings.
		r = send(t, "POST", "/event_destinations", `{"format":"json","target":{"datadog":{"api_key":"k"},"monitoring":{"api_key":"k"}}}`, 400)
		if e := r.apiErr(t); e.ErrorCode != acctapi.CodeInvalidValue || e.Details["field"] != "target.datadog" {
			t.Errorf("both spellings: %s %q %q", e.ErrorCode, e.Details["field"], e.Msg)
		}
	})

	t.Run("camel-case paging", func(t *testing.T) {
		var ids []string
		for _, name := range []string{"a", "b", "c"} {
			var u realUser
			send(t, "POST", "/bot_users", `{"name":"`+name+`"}`, 201).decode(t, &u)
			ids = append(ids, u.ID)
		}
		var page realUserList
		send(t, "GET", "/bot_users?limit=2", "", 200).decode(t, &page)
		if len(page.BotUsers) != 2 || page.NextPageURI == nil {
			t.Fatalf("first page: %+v", page)
		}
		next, err := url.Parse(*page.NextPageURI)
		if err != nil || next.Query().Get("before_id") != ids[1] || next.Query().Has("beforeId") {
			t.Errorf("next_page_uri %q, want before_id=%s", *page.NextPageURI, ids[1])
		}
		// The TypeScript client sends its Paging as it is: beforeId.
		page = realUserList{}
		send(t, "GET", "/bot_users?limit=2&beforeId="+ids[1], "", 200).decode(t, &page)
		if len(page.BotUsers) != 1 || page.BotUsers[0].ID != ids[0] || page.NextPageURI != nil {
			t.Errorf("second page by beforeId: %+v, want only %s", page, ids[0])
		}
		r := send(t, "GET", "/service_users?beforeId="+ids[1]+"&before_id="+ids[2], "", 400)
		if e := r.apiErr(t); e.ErrorCode != acctapi.CodeRepeatedQueryParam {
			t.Errorf("before_id and beforeId: %s %q", e.ErrorCode, e.Msg)
		}
		// An empty cursor is none, by either name: ngrok-api-go sends
		// before_id= for a Paging.BeforeID that points to "".
		for _, q := range []string{"before_id=", "beforeId=", "before_id"} {
			page = realUserList{}
			send(t, "GET", "/bot_users?limit=2&"+q, "", 200).decode(t, &page)
			if len(page.BotUsers) != 2 || page.BotUsers[0].ID != ids[2] {
				t.Errorf("%s: %+v, want the first page", q, page)
			}
		}
	})

	t.Run("sources", func(t *testing.T) {
		var d realDestination
		send(t, "POST", "/event_destinations", `{"format":"json","target":{"datadog":{"api_key":"k"}}}`, 201).decode(t, &d)
		var sub struct {
			ID string `json:"id"`
		}
		send(t, "POST", "/event_subscriptions", `{"description":"","metadata":"","sources":[{"type":"api_key_created.v0"}],"destination_ids":["`+d.ID+`"]}`, 201).decode(t, &sub)
		send(t, "POST", "/event_subscriptions/"+sub.ID+"/sources", `{"subscription_id":"`+sub.ID+`","type":"api_key_deleted.v0"}`, 201)
		var src struct{ Type, URI string }
		send(t, "PATCH", "/event_subscriptions/"+sub.ID+"/sources/api_key_deleted.v0", `{}`, 200).decode(t, &src)
		if src.Type != "api_key_deleted.v0" || !strings.HasSuffix(src.URI, "/event_subscriptions/"+sub.ID+"/sources/api_key_deleted.v0") {
			t.Errorf("PATCH {}: %+v", src)
		}
		var list struct {
			Sources []struct{ Type string } `json:"sources"`
		}
		send(t, "GET", "/event_subscriptions/"+sub.ID+"/sources", "", 200).decode(t, &list)
		if len(list.Sources) != 2 {
			t.Errorf("sources: %+v", list)
		}
	})

	t.Run("version", func(t *testing.T) {
		for _, tt := range []struct {
			name, version string
			status        int
			code          string
		}{{"2", "2", 200, ""}, {"wrong", "3", 400, acctapi.CodeBadVersion}, {"empty", " ", 400, acctapi.CodeNoVersion}} {
			r := realClientVersion(t, srv, "GET", "/api_keys", "", tt.version)
			if r.status != tt.status || (tt.code != "" && r.apiErr(t).ErrorCode != tt.code) {
				t.Errorf("ngrok-version %q: %d %s, want %d %s", tt.version, r.status, r.body, tt.status, tt.code)
			}
		}
	})
}

// checkRealTargetMembers checks that a destination body's target lists
// every member the real service lists, with only kind set, and none of the
// specification's names.
func checkRealTargetMembers(t *testing.T, body []byte, kind string) {
	t.Helper()
	var d struct {
		Target map[string]json.RawMessage `json:"target"`
	}
	if err := json.Unmarshal(body, &d); err != nil {
		t.Fatal(err)
	}
	for _, m := range []string{"firehose", "kinesis", "cloudwatch_logs", "s3", "datadog", "azure_logs_ingestion"} {
		v, ok := d.Target[m]
		switch {
		case !ok:
			t.Errorf("target member %s missing: %s", m, body)
		case (m == kind) == (string(v) == "null"):
			t.Errorf("target.%s = %s (set: %s): %s", m, v, kind, body)
		}
	}
	if len(d.Target) != 6 {
		t.Errorf("target has %d members, want 6: %s", len(d.Target), body)
	}
}

// TestBothSpellings: an event-target member given in both spellings. In
// the real service's dialect it is a 400 ERR_NGROK_215 on the member whose
// message quotes both names as the client sent them (the renaming of the
// specification's names in messages leaves quoted names alone: it made
// them `as "datadog" and as "datadog"`). In the specification's dialect a
// real name is an unknown member, 400 ERR_NGROK_214 naming it, as it is
// alone (it was a 215 without a field, "The request body has an invalid
// value: acctapi: ...", from the event target's decoder).
func TestBothSpellings(t *testing.T) {
	t.Parallel()
	srv, _ := start(t)
	kinesis := func(creds string) string {
		return `{"format":"JSON","target":{"kinesis":{"stream_arn":"s","auth":{"creds":{` + creds + `}}}}}`
	}
	for _, tt := range []struct {
		name, body string
		real       []string // the real dialect: field, then what the message quotes
		spec       string   // the specification's dialect: the unknown member
	}{
		{"target kinds", `{"format":"JSON","target":{"datadog":{"api_key":"k"},"monitoring":{"api_key":"k"}}}`,
			[]string{"target.datadog", `"datadog"`, `"monitoring"`}, "target.datadog"},
		{"target kinds, the other order", `{"format":"JSON","target":{"cloud_logs_ingestion":{},"azure_logs_ingestion":{}}}`,
			[]string{"target.azure_logs_ingestion", `"cloud_logs_ingestion"`, `"azure_logs_ingestion"`}, "target.azure_logs_ingestion"},
		{"credentials", kinesis(`"aws_access_key_id":"a","cloud_access_key_id":"b","cloud_secret_access_key":"s"`),
			[]string{"target.kinesis.auth.creds.aws_access_key_id", `"aws_access_key_id"`, `"cloud_access_key_id"`}, "target.kinesis.auth.creds.aws_access_key_id"},
		{"datadog members", `{"format":"JSON","target":{"monitoring":{"tags":"a","ddtags":"b"}}}`,
			[]string{"target.datadog.ddtags", `"tags"`, `"ddtags"`}, "target.monitoring.ddtags"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			r := realClientRequest(t, srv, "POST", "/event_destinations", tt.body)
			e := r.apiErr(t)
			if r.status != 400 || e.ErrorCode != acctapi.CodeInvalidValue || e.Details["field"] != tt.real[0] {
				t.Errorf("real dialect: %d %s field %q, want 400 %s field %q", r.status, e.ErrorCode, e.Details["field"], acctapi.CodeInvalidValue, tt.real[0])
			}
			for _, q := range tt.real[1:] {
				if !strings.Contains(e.Msg, q) {
					t.Errorf("real dialect: message %q does not quote %s", e.Msg, q)
				}
			}
			r = raw(t, srv, "POST", "/event_destinations", nil, tt.body)
			e = r.apiErr(t)
			if r.status != 400 || e.ErrorCode != acctapi.CodeUnknownField || e.Details["field"] != tt.spec {
				t.Errorf("specification's dialect: %d %s field %q %q, want 400 %s field %q", r.status, e.ErrorCode, e.Details["field"], e.Msg, acctapi.CodeUnknownField, tt.spec)
			}
		})
	}
}

// TestRealDialectMessages checks that an error answered in the real
// service's dialect names what that dialect names, in the message as in
// field: a reason about the target among several broken rules used the
// specification's kind names, and renaming after the path was rewritten
// turned part of a member the client sent ("monitoring_x") into another.
func TestRealDialectMessages(t *testing.T) {
	t.Parallel()
	srv, _ := start(t)
	for _, tt := range []struct {
		name, body, field string
		has, hasNot       []string
	}{
		{"target reason beside another rule", `{"description":"` + strings.Repeat("x", 300) + `","target":{}}`, "description",
			[]string{"datadog", "azure_logs_ingestion"}, []string{"monitoring", "cloud_logs_ingestion"}},
		{"unknown member whose name holds a kind's", `{"format":"JSON","target":{"datadog":{"monitoring_x":"a"}}}`, "target.datadog.monitoring_x",
			[]string{"target.datadog.monitoring_x"}, []string{"datadog_x"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			r := realClientRequest(t, srv, "POST", "/event_destinations", tt.body)
			e := r.apiErr(t)
			if r.status != 400 || e.Details["field"] != tt.field {
				t.Errorf("%d field %q, want 400 field %q (%s)", r.status, e.Details["field"], tt.field, e.Msg)
			}
			for _, s := range tt.has {
				if !strings.Contains(e.Msg, s) {
					t.Errorf("message %q does not name %s", e.Msg, s)
				}
			}
			for _, s := range tt.hasNot {
				if strings.Contains(e.Msg, s) {
					t.Errorf("message %q names %s", e.Msg, s)
				}
			}
		})
	}
}
