//lint:file-ignore SA1019 the round trip covers the deprecated bot-user alias on purpose.
package fake_test

import (
	"context"
	"iter"
	"net/http"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/acctapi/acctapi"
	"github.com/acctapi/acctapi/account"
	"github.com/acctapi/acctapi/backends"
	"github.com/acctapi/acctapi/events"
	"github.com/acctapi/acctapi/fake"
	"github.com/acctapi/acctapi/k8sop"
)

// crud is one resource's round trip through its typed client: create,
// get, update, list and delete, each answer compared with what the
// previous step returned.
type crud[T any] struct {
	create func(ctx context.Context) (*T, error)
	id     func(T) string
	get    func(ctx context.Context, id string) (*T, error)
	// update changes the resource with id; nil when it has no update.
	update func(ctx context.Context, id string) (*T, error)
	list   func(ctx context.Context) iter.Seq2[T, error]
	del    func(ctx context.Context, id string) error
	// read, when set, turns what create returned into what a read shows
	// (an API key's token is shown once).
	read func(T) T
}

func (r crud[T]) run(t *testing.T) {
	t.Helper()
	ctx := t.Context()
	want := *must(r.create(ctx))(t)
	if r.read != nil {
		want = r.read(want)
	}
	id := r.id(want)
	if diff := cmp.Diff(want, *must(r.get(ctx, id))(t)); diff != "" {
		t.Errorf("get after create (-want +got):\n%s", diff)
	}
	if r.update != nil {
		want = *must(r.update(ctx, id))(t)
		if diff := cmp.Diff(want, *must(r.get(ctx, id))(t)); diff != "" {
			t.Errorf("get after update (-want +got):\n%s", diff)
		}
	}
	var listed []T
	for _, v := range collect(t, r.list(ctx)) {
		if r.id(v) == id {
			listed = append(listed, v)
		}
	}
	if diff := cmp.Diff([]T{want}, listed); diff != "" {
		t.Errorf("list (-want +got):\n%s", diff)
	}
	wantDeleted(ctx, t, id, r.del, r.get)
}

// allTargets are event targets of every kind, each auth of the cloud
// kinds included, with every member set.
func allTargets() map[string]events.Target {
	role := &events.CloudAuth{Role: &events.Role{RoleARN: "arn:aws:iam::123456789012:role/r"}}
	creds := &events.CloudAuth{Creds: &events.Creds{AccessKeyID: "AKIAEXAMPLE", SecretAccessKey: "secret-Qx81"}}
	return map[string]events.Target{
		"firehose role":   {Firehose: &events.Firehose{Auth: role, DeliveryStreamARN: "arn:aws:firehose:us-east-1:1:deliverystream/d"}},
		"firehose creds":  {Firehose: &events.Firehose{Auth: creds, DeliveryStreamARN: "arn:aws:firehose:us-east-1:1:deliverystream/d"}},
		"kinesis role":    {Kinesis: &events.Kinesis{Auth: role, StreamARN: "arn:aws:kinesis:us-east-1:1:stream/s"}},
		"kinesis creds":   {Kinesis: &events.Kinesis{Auth: creds, StreamARN: "arn:aws:kinesis:us-east-1:1:stream/s"}},
		"cloudwatch_logs": {CloudWatchLogs: &events.CloudWatchLogs{Auth: creds, LogGroupARN: "arn:aws:logs:us-east-1:1:log-group:g"}},
		"s3":              {S3: &events.S3{Auth: creds, BucketARN: "arn:aws:s3:::b", ObjectPrefix: "ev/", Compression: true, MaxFileSize: 1 << 20, MaxFileAge: 60}},
		"monitoring":      {Monitoring: &events.Monitoring{APIKey: "dd-key-Pw52", Tags: "env:test,team:a", Service: "svc", Site: "datadoghq.eu"}},
		"cloud_logs_ingestion": {CloudLogsIngestion: &events.CloudLogsIngestion{TenantID: "tenant", ClientID: "client",
			ClientSecret: "client-secret-Zr19", LogsIngestionURI: "https://dce.example", DataCollectionRuleID: "dcr-1", DataCollectionStreamName: "Custom-Stream"}},
	}
}

// dialects are the two wire dialects, by name.
var dialects = []acctapi.Dialect{acctapi.DialectSpec, acctapi.DialectReal}

// TestSDKRoundTripBothDialects drives every resource of the API through
// the SDK's typed clients in both wire dialects (acctapi.WithDialect), event
// targets of every kind included, and checks from the journal that each
// dialect's names went over the wire both ways: the fake answers a client
// in the dialect it speaks.
func TestSDKRoundTripBothDialects(t *testing.T) {
	t.Parallel()
	for _, d := range dialects {
		t.Run(d.String(), func(t *testing.T) {
			t.Parallel()
			srv, clk := start(t)
			c := srv.Client(acctapi.WithDialect(d))
			roundTripAll(t, srv, clk, c)
			checkWireDialect(t, srv, d)
		})
	}
}

// roundTripAll runs crud over every resource with client c of srv.
func roundTripAll(t *testing.T, srv *fake.Server, clk *fake.ManualClock, c *acctapi.Client) {
	keys, users, bots := account.NewAPIKeys(c), account.NewServiceUsers(c), account.NewBotUsers(c)
	cas := account.NewCertificateAuthorities(c)
	failovers, responses, groups := backends.NewFailovers(c), backends.NewHTTPResponses(c), backends.NewTunnelGroups(c)
	dests, subs, sources := events.NewDestinations(c), events.NewSubscriptions(c), events.NewSources(c)
	ops := k8sop.NewOperators(c)
	t.Run("api keys", crud[account.APIKey]{
		create: func(ctx context.Context) (*account.APIKey, error) {
			return keys.Create(ctx, &account.APIKeyCreate{Description: "k", Metadata: `{"a":1}`})
		},
		id:  func(v account.APIKey) string { return v.ID },
		get: keys.Get,
		update: func(ctx context.Context, id string) (*account.APIKey, error) {
			return keys.Update(ctx, &account.APIKeyUpdate{ID: id, Description: ptr("k2")})
		},
		list: func(ctx context.Context) iter.Seq2[account.APIKey, error] { return keys.List(ctx, nil) },
		del:  keys.Delete,
		read: func(v account.APIKey) account.APIKey { v.Token = nil; return v },
	}.run)
	userCRUD := func(create func(context.Context, *account.ServiceUserCreate) (*account.ServiceUser, error),
		get func(context.Context, string) (*account.ServiceUser, error),
		update func(context.Context, *account.ServiceUserUpdate) (*account.ServiceUser, error),
		list func(context.Context) iter.Seq2[account.ServiceUser, error], del func(context.Context, string) error, name string) func(*testing.T) {
		return crud[account.ServiceUser]{
			create: func(ctx context.Context) (*account.ServiceUser, error) {
				return create(ctx, &account.ServiceUserCreate{Name: name})
			},
			id:  func(v account.ServiceUser) string { return v.ID },
			get: get,
			update: func(ctx context.Context, id string) (*account.ServiceUser, error) {
				return update(ctx, &account.ServiceUserUpdate{ID: id, Name: ptr(name + "2"), Active: ptr(false)})
			},
			list: list, del: del,
		}.run
	}
	t.Run("service users", userCRUD(users.Create, users.Get, users.Update,
		func(ctx context.Context) iter.Seq2[account.ServiceUser, error] { return users.List(ctx, nil) }, users.Delete, "svc"))
	t.Run("bot users", userCRUD(bots.Create, bots.Get, bots.Update,
		func(ctx context.Context) iter.Seq2[account.BotUser, error] { return bots.List(ctx, nil) }, bots.Delete, "bot"))
	t.Run("certificate authorities", crud[account.CertificateAuthority]{
		create: func(ctx context.Context) (*account.CertificateAuthority, error) {
			return cas.Create(ctx, &account.CertificateAuthorityCreate{Description: "ca", CAPEM: newCA(t, "root", t0, t0.AddDate(1, 0, 0))})
		},
		id:  func(v account.CertificateAuthority) string { return v.ID },
		get: cas.Get,
		update: func(ctx context.Context, id string) (*account.CertificateAuthority, error) {
			return cas.Update(ctx, &account.CertificateAuthorityUpdate{ID: id, Metadata: ptr("m")})
		},
		list: func(ctx context.Context) iter.Seq2[account.CertificateAuthority, error] { return cas.List(ctx, nil) },
		del:  cas.Delete,
	}.run)
	t.Run("http response backends", crud[backends.HTTPResponse]{
		create: func(ctx context.Context) (*backends.HTTPResponse, error) {
			return responses.Create(ctx, &backends.HTTPResponseCreate{Body: "teapot", Headers: map[string]string{"content-type": "text/plain"}, StatusCode: 418})
		},
		id:  func(v backends.HTTPResponse) string { return v.ID },
		get: responses.Get,
		update: func(ctx context.Context, id string) (*backends.HTTPResponse, error) {
			return responses.Update(ctx, &backends.HTTPResponseUpdate{ID: id, StatusCode: ptr(200)})
		},
		list: func(ctx context.Context) iter.Seq2[backends.HTTPResponse, error] { return responses.List(ctx, nil) },
		del:  responses.Delete,
	}.run)
	t.Run("tunnel group backends", crud[backends.TunnelGroup]{
		create: func(ctx context.Context) (*backends.TunnelGroup, error) {
			return groups.Create(ctx, &backends.TunnelGroupCreate{Labels: map[string]string{"app": "a"}})
		},
		id:  func(v backends.TunnelGroup) string { return v.ID },
		get: groups.Get,
		update: func(ctx context.Context, id string) (*backends.TunnelGroup, error) {
			return groups.Update(ctx, &backends.TunnelGroupUpdate{ID: id, Labels: &map[string]string{"app": "b"}})
		},
		list: func(ctx context.Context) iter.Seq2[backends.TunnelGroup, error] { return groups.List(ctx, nil) },
		del:  groups.Delete,
	}.run)
	t.Run("failover backends", func(t *testing.T) {
		child := must(responses.Create(t.Context(), &backends.HTTPResponseCreate{StatusCode: 503}))(t)
		crud[backends.Failover]{
			create: func(ctx context.Context) (*backends.Failover, error) {
				return failovers.Create(ctx, &backends.FailoverCreate{Backends: []string{child.ID}})
			},
			id:  func(v backends.Failover) string { return v.ID },
			get: failovers.Get,
			update: func(ctx context.Context, id string) (*backends.Failover, error) {
				return failovers.Update(ctx, &backends.FailoverUpdate{ID: id, Backends: &[]string{}})
			},
			list: func(ctx context.Context) iter.Seq2[backends.Failover, error] { return failovers.List(ctx, nil) },
			del:  failovers.Delete,
		}.run(t)
	})
	targets := allTargets()
	for name, target := range targets {
		t.Run("event destinations/"+name, func(t *testing.T) {
			next := targets["monitoring"]
			if target.Monitoring != nil {
				next = targets["kinesis creds"]
			}
			crud[events.Destination]{
				create: func(ctx context.Context) (*events.Destination, error) {
					d, err := dests.Create(ctx, &events.DestinationCreate{Description: "dest", Format: "json", Target: target})
					if err == nil && !cmp.Equal(target, d.Target) {
						t.Errorf("created target (-sent +answered):\n%s", cmp.Diff(target, d.Target))
					}
					return d, err
				},
				id:  func(v events.Destination) string { return v.ID },
				get: dests.Get,
				update: func(ctx context.Context, id string) (*events.Destination, error) {
					d, err := dests.Update(ctx, &events.DestinationUpdate{ID: id, Target: &next})
					if err == nil && !cmp.Equal(next, d.Target) {
						t.Errorf("updated target (-sent +answered):\n%s", cmp.Diff(next, d.Target))
					}
					return d, err
				},
				list: func(ctx context.Context) iter.Seq2[events.Destination, error] { return dests.List(ctx, nil) },
				del:  dests.Delete,
			}.run(t)
		})
	}
	t.Run("event subscriptions and sources", func(t *testing.T) {
		ctx := t.Context()
		dest := must(dests.Create(ctx, &events.DestinationCreate{Format: events.FormatJSON, Target: targets["monitoring"]}))(t)
		crud[events.Subscription]{
			create: func(ctx context.Context) (*events.Subscription, error) {
				return subs.Create(ctx, &events.SubscriptionCreate{Description: "s",
					Sources: []events.SubscriptionSource{{Type: "api_key_created.v0"}}, DestinationIDs: []string{dest.ID}})
			},
			id:  func(v events.Subscription) string { return v.ID },
			get: subs.Get,
			update: func(ctx context.Context, id string) (*events.Subscription, error) {
				return subs.Update(ctx, &events.SubscriptionUpdate{ID: id, DestinationIDs: &[]string{}})
			},
			list: func(ctx context.Context) iter.Seq2[events.Subscription, error] { return subs.List(ctx, nil) },
			del:  subs.Delete,
		}.run(t)

		sub := must(subs.Create(ctx, &events.SubscriptionCreate{DestinationIDs: []string{dest.ID}}))(t)
		src := must(sources.Create(ctx, sub.ID, &events.SourceCreate{Type: "api_key_deleted.v0"}))(t)
		if diff := cmp.Diff(*src, *must(sources.Get(ctx, sub.ID, src.Type))(t)); diff != "" {
			t.Errorf("source get (-want +got):\n%s", diff)
		}
		if diff := cmp.Diff(*src, *must(sources.Update(ctx, &events.SourceUpdate{SubscriptionID: sub.ID, Type: src.Type}))(t)); diff != "" {
			t.Errorf("source update (-want +got):\n%s", diff)
		}
		if diff := cmp.Diff([]events.Source{*src}, must(sources.List(ctx, sub.ID))(t).Sources); diff != "" {
			t.Errorf("source list (-want +got):\n%s", diff)
		}
		if err := sources.Delete(ctx, sub.ID, src.Type); err != nil {
			t.Fatal(err)
		}
		_, err := sources.Get(ctx, sub.ID, src.Type)
		wantAPIError(t, err, http.StatusNotFound, acctapi.CodeNotFound)
	})
	t.Run("kubernetes operators and bound endpoints", func(t *testing.T) {
		crud[k8sop.Operator]{
			create: func(ctx context.Context) (*k8sop.Operator, error) {
				return ops.Create(ctx, &k8sop.OperatorCreate{Description: "cluster", EnabledFeatures: []string{"bindings"},
					Deployment: k8sop.Deployment{Name: "op", Namespace: "ns", Version: "1", ClusterName: "c"},
					Binding:    &k8sop.BindingCreate{EndpointSelectors: []string{`endpoint.name == "app"`}, CSR: newCSR(t, "op")}})
			},
			id:  func(v k8sop.Operator) string { return v.ID },
			get: ops.Get,
			update: func(ctx context.Context, id string) (*k8sop.Operator, error) {
				clk.Advance(1)
				return ops.Update(ctx, &k8sop.OperatorUpdate{ID: id, Description: ptr("cluster 2")})
			},
			list: func(ctx context.Context) iter.Seq2[k8sop.Operator, error] { return ops.List(ctx, nil) },
			del:  ops.Delete,
		}.run(t)

		ctx := t.Context()
		op := must(ops.Create(ctx, &k8sop.OperatorCreate{EnabledFeatures: []string{"bindings"},
			Binding: &k8sop.BindingCreate{EndpointSelectors: []string{`endpoint.name == "app"`}}}))(t)
		ep := must(fake.Seed[k8sop.Endpoint](srv, "", &k8sop.Endpoint{Name: "app", URL: "https://app.example", Bindings: []string{"kubernetes"}}))(t)
		must(fake.Seed[k8sop.Endpoint](srv, "", &k8sop.Endpoint{Name: "other", URL: "https://other.example", Bindings: []string{"kubernetes"}}))(t)
		got := collect(t, ops.BoundEndpoints(ctx, op.ID, nil))
		if diff := cmp.Diff([]k8sop.Endpoint{ep}, got); diff != "" {
			t.Errorf("bound endpoints (-want +got):\n%s", diff)
		}
	})
}

// checkWireDialect checks that the event destination requests in srv's
// journal were sent, and answered, with the names of dialect d only.
func checkWireDialect(t *testing.T, srv *fake.Server, d acctapi.Dialect) {
	t.Helper()
	names := map[acctapi.Dialect][]string{
		acctapi.DialectSpec: {`"monitoring"`, `"cloud_logs_ingestion"`, `"cloud_access_key_id"`, `"tags"`},
		acctapi.DialectReal: {`"datadog"`, `"azure_logs_ingestion"`, `"aws_access_key_id"`, `"ddtags"`},
	}
	seen := map[string]bool{}
	n := 0
	for _, e := range srv.Journal() {
		if !strings.HasPrefix(e.Path, "/event_destinations") || e.Status >= 300 {
			continue
		}
		n++
		for _, body := range []string{e.RequestBody, e.ResponseBody} {
			for _, name := range names[d] {
				seen[name] = seen[name] || strings.Contains(body, name)
			}
			for _, name := range names[1-d] {
				if strings.Contains(body, name) {
					t.Errorf("%s %s in the %v dialect carries %s: %s", e.Method, e.Path, d, name, body)
				}
			}
		}
	}
	for _, name := range names[d] {
		if !seen[name] {
			t.Errorf("no event destination request or answer of the %v dialect (%d looked at) carries %s", d, n, name)
		}
	}
}

// BenchmarkDialectDestination gets an event destination with a client of
// each dialect: what translating the request and the answer costs the
// real service's dialect.
func BenchmarkDialectDestination(b *testing.B) {
	for _, d := range dialects {
		b.Run(d.String(), func(b *testing.B) {
			srv, _ := start(b)
			dests := events.NewDestinations(srv.Client(acctapi.WithDialect(d)))
			ctx := context.Background()
			dest := must(dests.Create(ctx, &events.DestinationCreate{Format: events.FormatJSON, Target: allTargets()["monitoring"]}))(b)
			b.ReportAllocs()
			for b.Loop() {
				if _, err := dests.Get(ctx, dest.ID); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
