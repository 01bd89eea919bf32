package fake_test

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/acctapi/acctapi"
	"github.com/acctapi/acctapi/account"
	"github.com/acctapi/acctapi/events"
	"github.com/acctapi/acctapi/fake"
	"github.com/google/go-cmp/cmp"
)

var targetMembers = []string{"firehose", "kinesis", "cloudwatch_logs", "s3", "monitoring", "cloud_logs_ingestion"}

// TestDestinationsEndToEnd drives /event_destinations through
// events.Destinations: the format is normalized, and every target member is
// in the JSON, the unused ones null.
func TestDestinationsEndToEnd(t *testing.T) {
	t.Parallel()
	srv, _ := start(t)
	ctx := t.Context()
	dests := events.NewDestinations(srv.Client())
	kinesis := events.Target{Kinesis: &events.Kinesis{StreamARN: "arn:aws:kinesis:us-east-1:1:stream/s",
		Auth: &events.CloudAuth{Role: &events.Role{RoleARN: "arn:aws:iam::123456789012:role/r"}}}}

	for _, tt := range []struct{ name, format string }{{"lower case", "json"}, {"mixed case", "Json"}, {"upper case", "JSON"}} {
		t.Run(tt.name, func(t *testing.T) {
			d := must(dests.Create(ctx, &events.DestinationCreate{Format: tt.format, Target: kinesis}))(t)
			if d.Format != events.FormatJSON {
				t.Errorf("format %q, want %q", d.Format, events.FormatJSON)
			}
		})
	}

	d := must(dests.Create(ctx, &events.DestinationCreate{Description: "stream", Format: "json", Target: kinesis}))(t)
	want := events.Destination{ID: d.ID, URI: srv.URL + "/event_destinations/" + d.ID, CreatedAt: t0, Description: "stream",
		Format: events.FormatJSON, Target: kinesis}
	if !strings.HasPrefix(d.ID, "ed_") {
		t.Errorf("id %q, want prefix ed_", d.ID)
	}
	if diff := cmp.Diff(want, *must(dests.Get(ctx, d.ID))(t)); diff != "" {
		t.Errorf("get (-want +got):\n%s", diff)
	}
	r := raw(t, srv, "GET", "/event_destinations/"+d.ID, nil, "")
	var body struct {
		Target map[string]json.RawMessage `json:"target"`
	}
	r.decode(t, &body)
	for _, m := range targetMembers {
		v, ok := body.Target[m]
		switch {
		case !ok:
			t.Errorf("target member %s missing: %s", m, r.body)
		case m == "kinesis" && string(v) == "null":
			t.Errorf("target.kinesis is null")
		case m != "kinesis" && string(v) != "null":
			t.Errorf("target.%s = %s, want null", m, v)
		}
	}

	// Update replaces the target and normalizes the format.
	s3 := events.Target{S3: &events.S3{BucketARN: "arn:aws:s3:::b", ObjectPrefix: "ev/", Compression: true, MaxFileSize: 1 << 20, MaxFileAge: 60,
		Auth: &events.CloudAuth{Creds: &events.Creds{AccessKeyID: "AKIA", SecretAccessKey: "s3cr3t"}}}}
	want.Target = s3
	got := must(dests.Update(ctx, &events.DestinationUpdate{ID: d.ID, Format: ptr("JSON"), Target: &s3}))(t)
	if diff := cmp.Diff(want, *got); diff != "" {
		t.Errorf("update (-want +got):\n%s", diff)
	}
	got2 := collect(t, dests.List(ctx, &acctapi.FilterOptions{Filter: `obj.description == "stream"`}))
	if diff := cmp.Diff([]events.Destination{want}, got2); diff != "" {
		t.Errorf("filtered list (-want +got):\n%s", diff)
	}

	lax := events.NewDestinations(srv.Client(acctapi.WithoutValidation()))
	// The real service's codes where its catalogue has one
	// (research/real-service.md §1.9).
	for _, tt := range []struct {
		name string
		in   events.DestinationCreate
		code string
	}{
		{"format XML", events.DestinationCreate{Format: "XML", Target: kinesis}, acctapi.CodeBadFormat},
		{"no target", events.DestinationCreate{Format: events.FormatJSON}, acctapi.CodeNoTarget},
		{"two targets", events.DestinationCreate{Format: events.FormatJSON, Target: events.Target{Kinesis: kinesis.Kinesis, S3: s3.S3}}, acctapi.CodeManyTargets},
		{"auth with role and creds", events.DestinationCreate{Format: events.FormatJSON, Target: events.Target{Kinesis: &events.Kinesis{StreamARN: "x",
			Auth: &events.CloudAuth{Role: &events.Role{RoleARN: "arn:aws:iam::123456789012:role/r"}, Creds: &events.Creds{AccessKeyID: "a", SecretAccessKey: "s"}}}}},
			acctapi.CodeManyAuths},
		{"auth missing", events.DestinationCreate{Format: events.FormatJSON, Target: events.Target{Kinesis: &events.Kinesis{StreamARN: "x"}}}, acctapi.CodeNoAuthField},
		{"auth with neither", events.DestinationCreate{Format: events.FormatJSON, Target: events.Target{Kinesis: &events.Kinesis{StreamARN: "x", Auth: &events.CloudAuth{}}}}, acctapi.CodeNoAuth},
		{"format missing", events.DestinationCreate{Target: events.Target{Monitoring: &events.Monitoring{APIKey: "k"}}}, acctapi.CodeBadFormat},
		{"role ARN not a role's", events.DestinationCreate{Format: events.FormatJSON, Target: events.Target{Kinesis: &events.Kinesis{StreamARN: "x",
			Auth: &events.CloudAuth{Role: &events.Role{RoleARN: "not-an-arn"}}}}}, acctapi.CodeBadRoleARN},
		{"monitoring without api key", events.DestinationCreate{Format: events.FormatJSON, Target: events.Target{Monitoring: &events.Monitoring{}}}, acctapi.CodeNoAPIKey},
		{"cloud logs ingestion incomplete", events.DestinationCreate{Format: events.FormatJSON, Target: events.Target{CloudLogsIngestion: &events.CloudLogsIngestion{TenantID: "t"}}},
			acctapi.CodeInvalidValue},
	} {
		t.Run(tt.name, func(t *testing.T) {
			_, err := lax.Create(ctx, &tt.in)
			wantAPIError(t, err, http.StatusBadRequest, tt.code)
		})
	}

	wantDeleted(ctx, t, d.ID, dests.Delete, dests.Get)
}

// TestSubscriptionsEndToEnd drives /event_subscriptions through
// events.Subscriptions, with its destinations' referential integrity.
func TestSubscriptionsEndToEnd(t *testing.T) {
	t.Parallel()
	srv, _ := start(t)
	ctx := t.Context()
	subs := events.NewSubscriptions(srv.Client())
	target := events.Target{Monitoring: &events.Monitoring{APIKey: "dd-key", Site: "example.com"}}
	d1 := must(fake.Seed[events.Destination](srv, "", &events.DestinationCreate{Format: events.FormatJSON, Target: target}))(t)
	d2 := must(fake.Seed[events.Destination](srv, "", &events.DestinationCreate{Format: events.FormatJSON, Target: target}))(t)
	srcURI := func(sub, typ string) string { return srv.URL + "/event_subscriptions/" + sub + "/sources/" + typ }
	dstRef := func(id string) acctapi.Ref { return acctapi.Ref{ID: id, URI: srv.URL + "/event_destinations/" + id} }

	s := must(subs.Create(ctx, &events.SubscriptionCreate{Description: "keys",
		Sources:        []events.SubscriptionSource{{Type: "api_key_created.v0"}, {Type: "api_key_deleted.v0"}},
		DestinationIDs: []string{d1.ID, d2.ID}}))(t)
	want := events.Subscription{ID: s.ID, URI: srv.URL + "/event_subscriptions/" + s.ID, CreatedAt: t0, Description: "keys",
		Sources: []events.Source{
			{Type: "api_key_created.v0", URI: srcURI(s.ID, "api_key_created.v0")},
			{Type: "api_key_deleted.v0", URI: srcURI(s.ID, "api_key_deleted.v0")},
		},
		Destinations: []acctapi.Ref{dstRef(d1.ID), dstRef(d2.ID)}}
	if !strings.HasPrefix(s.ID, "esb_") {
		t.Errorf("id %q, want prefix esb_", s.ID)
	}
	if diff := cmp.Diff(want, *s); diff != "" {
		t.Errorf("create (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(want, *must(subs.Get(ctx, s.ID))(t)); diff != "" {
		t.Errorf("get (-want +got):\n%s", diff)
	}

	dests := events.NewDestinations(srv.Client())
	_, err := subs.Create(ctx, &events.SubscriptionCreate{DestinationIDs: []string{d1.ID, "ed_missing"}})
	wantAPIError(t, err, http.StatusBadRequest, acctapi.CodeUnknownDestination)
	_, err = subs.Update(ctx, &events.SubscriptionUpdate{ID: s.ID, DestinationIDs: &[]string{"ed_missing"}})
	wantAPIError(t, err, http.StatusBadRequest, acctapi.CodeUnknownDestination)
	_, err = events.NewSubscriptions(srv.Client(acctapi.WithoutValidation())).Create(ctx, &events.SubscriptionCreate{
		Sources: []events.SubscriptionSource{{Type: "no_such_event.v0"}}})
	wantAPIError(t, err, http.StatusBadRequest, acctapi.CodeBadEventType)
	err = dests.Delete(ctx, d2.ID)
	wantAPIError(t, err, http.StatusConflict, acctapi.CodeStillReferenced)

	// Dropping d2 from the subscription frees it.
	want.Destinations = []acctapi.Ref{dstRef(d1.ID)}
	want.Sources = []events.Source{{Type: "tcp_connection_closed.v0", URI: srcURI(s.ID, "tcp_connection_closed.v0")}}
	got := must(subs.Update(ctx, &events.SubscriptionUpdate{ID: s.ID, DestinationIDs: &[]string{d1.ID},
		Sources: &[]events.SubscriptionSource{{Type: "tcp_connection_closed.v0"}}}))(t)
	if diff := cmp.Diff(want, *got); diff != "" {
		t.Errorf("update (-want +got):\n%s", diff)
	}
	if err := dests.Delete(ctx, d2.ID); err != nil {
		t.Errorf("delete the unreferenced destination: %v", err)
	}
	if diff := cmp.Diff([]events.Subscription{want}, collect(t, subs.List(ctx, &acctapi.FilterOptions{Filter: `obj.description == "keys"`}))); diff != "" {
		t.Errorf("filtered list (-want +got):\n%s", diff)
	}
	// Deleting the subscription frees its destinations.
	if err := subs.Delete(ctx, s.ID); err != nil {
		t.Fatal(err)
	}
	if err := dests.Delete(ctx, d1.ID); err != nil {
		t.Errorf("delete the destination after its subscription: %v", err)
	}
}

// TestSourcesEndToEnd drives /event_subscriptions/{id}/sources through
// events.Sources.
func TestSourcesEndToEnd(t *testing.T) {
	t.Parallel()
	srv, _ := start(t)
	ctx := t.Context()
	sources := events.NewSources(srv.Client())
	sub := must(fake.Seed[events.Subscription](srv, "", &events.SubscriptionCreate{
		Sources: []events.SubscriptionSource{{Type: "api_key_created.v0"}}}))(t)
	src := func(typ string) events.Source {
		return events.Source{Type: typ, URI: srv.URL + "/event_subscriptions/" + sub.ID + "/sources/" + typ}
	}

	created := must(sources.Create(ctx, sub.ID, &events.SourceCreate{Type: "vault_created.v0"}))(t)
	if diff := cmp.Diff(src("vault_created.v0"), *created); diff != "" {
		t.Errorf("create (-want +got):\n%s", diff)
	}
	withID := must(sources.Create(ctx, sub.ID, &events.SourceCreate{SubscriptionID: sub.ID, Type: "secret_updated.v0"}))(t)
	if diff := cmp.Diff(src("secret_updated.v0"), *withID); diff != "" {
		t.Errorf("create with subscription_id (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(src("vault_created.v0"), *must(sources.Get(ctx, sub.ID, "vault_created.v0"))(t)); diff != "" {
		t.Errorf("get (-want +got):\n%s", diff)
	}
	wantList := events.SourceList{URI: srv.URL + "/event_subscriptions/" + sub.ID + "/sources",
		Sources: []events.Source{src("api_key_created.v0"), src("vault_created.v0"), src("secret_updated.v0")}}
	if diff := cmp.Diff(wantList, *must(sources.List(ctx, sub.ID))(t)); diff != "" {
		t.Errorf("list (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(src("vault_created.v0"), *must(sources.Update(ctx, &events.SourceUpdate{SubscriptionID: sub.ID, Type: "vault_created.v0"}))(t)); diff != "" {
		t.Errorf("update (-want +got):\n%s", diff)
	}
	// The subscription shows the sources added through their own path.
	if diff := cmp.Diff(wantList.Sources, must(events.NewSubscriptions(srv.Client()).Get(ctx, sub.ID))(t).Sources); diff != "" {
		t.Errorf("subscription's sources (-want +got):\n%s", diff)
	}

	for _, tt := range []struct {
		name   string
		call   func() error
		status int
		code   string
	}{
		{"duplicate type", func() error {
			_, err := sources.Create(ctx, sub.ID, &events.SourceCreate{Type: "api_key_created.v0"})
			wantDetailsField(t, err, "type")
			return err
		}, 409, acctapi.CodeSourceTypeTaken},
		{"get a type not on the subscription", func() error {
			_, err := sources.Get(ctx, sub.ID, "vault_deleted.v0")
			return err
		}, 404, acctapi.CodeNotFound},
		{"update a type not on the subscription", func() error {
			_, err := sources.Update(ctx, &events.SourceUpdate{SubscriptionID: sub.ID, Type: "vault_deleted.v0"})
			return err
		}, 404, acctapi.CodeNotFound},
		{"delete a type not on the subscription", func() error { return sources.Delete(ctx, sub.ID, "vault_deleted.v0") }, 404, acctapi.CodeNotFound},
		{"missing subscription", func() error {
			_, err := sources.Create(ctx, "esb_missing", &events.SourceCreate{Type: "vault_deleted.v0"})
			return err
		}, 404, acctapi.CodeNotFound},
		{"list of a missing subscription", func() error {
			_, err := sources.List(ctx, "esb_missing")
			return err
		}, 404, acctapi.CodeNotFound},
		{"unknown event type", func() error {
			_, err := events.NewSources(srv.Client(acctapi.WithoutValidation())).Create(ctx, sub.ID, &events.SourceCreate{Type: "nope.v0"})
			return err
		}, 400, acctapi.CodeBadEventType},
	} {
		t.Run(tt.name, func(t *testing.T) { wantAPIError(t, tt.call(), tt.status, tt.code) })
	}
	// subscription_id in a body must match the path.
	r := raw(t, srv, "POST", "/event_subscriptions/"+sub.ID+"/sources", nil, `{"subscription_id":"esb_other","type":"vault_deleted.v0"}`)
	if r.status != http.StatusBadRequest {
		t.Errorf("mismatched subscription_id: %d %s", r.status, r.body)
	}

	if err := sources.Delete(ctx, sub.ID, "vault_created.v0"); err != nil {
		t.Fatal(err)
	}
	_, err := sources.Get(ctx, sub.ID, "vault_created.v0")
	wantAPIError(t, err, http.StatusNotFound, acctapi.CodeNotFound)
	wantList.Sources = []events.Source{src("api_key_created.v0"), src("secret_updated.v0")}
	if diff := cmp.Diff(wantList, *must(sources.List(ctx, sub.ID))(t)); diff != "" {
		t.Errorf("list after delete (-want +got):\n%s", diff)
	}
	// A deleted source's type can be added again.
	must(sources.Create(ctx, sub.ID, &events.SourceCreate{Type: "vault_created.v0"}))(t)
}

// TestDestinationSecretsReturnedAsStored documents how the fake returns
// secrets on reads: an event destination's secrets (cloud_secret_access_key,
// client_secret, a monitoring api_key) come back from create, get, list and
// update exactly as they were stored — fake/res_events.go keeps the target
// as it was sent and rendering only fills uris. Only the journal redacts
// them. An API key's token is different, as the real service does it: shown
// once, in the create response, and null on every read.
func TestDestinationSecretsReturnedAsStored(t *testing.T) {
	srv, _ := start(t)
	ctx := context.Background()
	ds := events.NewDestinations(srv.Client())
	d := must(ds.Create(ctx, &events.DestinationCreate{Format: "JSON", Target: events.Target{Kinesis: &events.Kinesis{StreamARN: "arn:s",
		Auth: &events.CloudAuth{Creds: &events.Creds{AccessKeyID: "AKIA", SecretAccessKey: secKinesis}}}}}))(t)
	got := must(ds.Get(ctx, d.ID))(t)
	if got.Target.Kinesis.Auth.Creds.SecretAccessKey != secKinesis {
		t.Errorf("get: secret %q, want it as stored", got.Target.Kinesis.Auth.Creds.SecretAccessKey)
	}
	for v, err := range ds.List(ctx, nil) {
		if err != nil || v.Target.Kinesis.Auth.Creds.SecretAccessKey != secKinesis {
			t.Errorf("list: %+v %v", v.Target.Kinesis, err)
		}
	}
	upd := must(ds.Update(ctx, &events.DestinationUpdate{ID: d.ID, Target: &events.Target{Monitoring: &events.Monitoring{APIKey: secMonitoring}}}))(t)
	if upd.Target.Monitoring.APIKey != secMonitoring {
		t.Errorf("update: api_key %q, want it as stored", upd.Target.Monitoring.APIKey)
	}
	for _, e := range srv.Journal() {
		if strings.Contains(e.ResponseBody, secKinesis) || strings.Contains(e.ResponseBody, secMonitoring) {
			t.Errorf("journal %s %s: %s", e.Method, e.Path, e.ResponseBody)
		}
	}
	keys := account.NewAPIKeys(srv.Client())
	k := must(keys.Create(ctx, &account.APIKeyCreate{}))(t)
	if k.Token == nil {
		t.Fatal("create did not show the token")
	}
	if again := must(keys.Get(ctx, k.ID))(t); again.Token != nil {
		t.Errorf("get shows the token")
	}
}
