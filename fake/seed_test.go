package fake_test

import (
	"encoding/json"
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

// TestSeedValidates checks that Seed runs the API's validation and names
// the field at fault.
func TestSeedValidates(t *testing.T) {
	t.Parallel()
	srv, _ := start(t)
	must(fake.Seed[account.ServiceUser](srv, "", &account.ServiceUserCreate{Name: "taken"}))(t)
	tests := []struct {
		name string
		seed func() error
		want []string // substrings of the error
	}{
		{"missing name", func() error {
			_, err := fake.Seed[account.ServiceUser](srv, "", &account.ServiceUserCreate{})
			return err
		}, []string{"name", acctapi.CodeInvalidValue}},
		{"name taken", func() error {
			_, err := fake.Seed[account.ServiceUser](srv, "", &account.ServiceUserCreate{Name: "taken"})
			return err
		}, []string{"409", acctapi.CodeNameTaken}},
		{"status code", func() error {
			_, err := fake.Seed[backends.HTTPResponse](srv, "", &backends.HTTPResponseCreate{StatusCode: 99})
			return err
		}, []string{"status_code"}},
		{"missing backend", func() error {
			_, err := fake.Seed[backends.Failover](srv, "", &backends.FailoverCreate{Backends: []string{"bkdhr_x"}})
			return err
		}, []string{"bkdhr_x", acctapi.CodeUnknownBackend}},
		{"nested target field", func() error {
			_, err := fake.Seed[events.Destination](srv, "", &events.DestinationCreate{Target: events.Target{Kinesis: &events.Kinesis{StreamARN: "s",
				Auth: events.CloudAuth{Role: &events.Role{}}}}})
			return err
		}, []string{"target.kinesis.auth.role.role_arn"}},
		{"tunnel label", func() error {
			_, err := fake.Seed[fake.Tunnel](srv, "", &fake.Tunnel{Labels: map[string]string{"": "x"}})
			return err
		}, []string{"labels"}},
		{"endpoint description", func() error {
			_, err := fake.Seed[k8sop.Endpoint](srv, "", &k8sop.Endpoint{Description: strings.Repeat("d", 256)})
			return err
		}, []string{"description", acctapi.CodeDescriptionTooLong}},
		{"operator feature", func() error {
			_, err := fake.Seed[k8sop.Operator](srv, "", &k8sop.OperatorCreate{EnabledFeatures: []string{"x"}})
			return err
		}, []string{"enabled_features[0]"}},
		{"nil request", func() error {
			_, err := fake.Seed[account.ServiceUser](srv, "", (*account.ServiceUserCreate)(nil))
			return err
		}, []string{"nil"}},
		{"wrong pair: create type of another resource", func() error {
			_, err := fake.Seed[account.ServiceUser](srv, "", &account.APIKeyCreate{})
			return err
		}, []string{"APIKeyCreate", "ServiceUser"}},
		{"wrong pair: resource type as request", func() error {
			_, err := fake.Seed[account.ServiceUser](srv, "", &account.ServiceUser{Name: "x"})
			return err
		}, []string{"ServiceUser"}},
		{"wrong pair: not a resource", func() error {
			_, err := fake.Seed[string](srv, "", &account.ServiceUserCreate{Name: "x"})
			return err
		}, []string{"string"}},
		{"unknown account", func() error {
			_, err := fake.Seed[account.ServiceUser](srv, "ac_nope", &account.ServiceUserCreate{Name: "y"})
			return err
		}, []string{"ac_nope"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.seed()
			if err == nil {
				t.Fatal("Seed succeeded")
			}
			for _, w := range tt.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not name %q", err, w)
				}
			}
		})
	}
	// Nothing invalid was stored.
	if n := len(fake.List[account.ServiceUser](srv, "")); n != 1 {
		t.Errorf("%d service users, want 1", n)
	}
}

// TestSeedReturnsStored checks that Seed returns what a GET shows, uri
// included, with the API's defaults applied.
func TestSeedReturnsStored(t *testing.T) {
	t.Parallel()
	srv, _ := start(t)
	u := must(fake.Seed[account.ServiceUser](srv, "", &account.ServiceUserCreate{Name: "ci"}))(t)
	want := account.ServiceUser{ID: u.ID, URI: srv.URL + "/service_users/" + u.ID, Name: "ci", Active: true, CreatedAt: t0}
	if diff := cmp.Diff(want, u); diff != "" {
		t.Errorf("Seed (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(want, *must(account.NewServiceUsers(srv.Client()).Get(t.Context(), u.ID))(t)); diff != "" {
		t.Errorf("GET of a seeded service user (-want +got):\n%s", diff)
	}
	op := must(fake.Seed[k8sop.Operator](srv, "", &k8sop.OperatorCreate{EnabledFeatures: []string{"BINDINGS"}}))(t)
	if op.Region != k8sop.DefaultRegion || op.Binding.IngressEndpoint != fake.DefaultIngressEndpoint || op.EnabledFeatures[0] != "bindings" {
		t.Errorf("seeded operator without the API's defaults: %+v", op)
	}
	d := must(fake.Seed[events.Destination](srv, "", &events.DestinationCreate{Format: "json",
		Target: events.Target{Monitoring: &events.Monitoring{APIKey: "k"}}}))(t)
	if d.Format != events.FormatJSON {
		t.Errorf("seeded destination format %q", d.Format)
	}
	// Seeding does not keep the caller's value: changing it afterwards
	// changes nothing stored.
	in := &backends.HTTPResponseCreate{StatusCode: 200, Headers: map[string]string{"A": "1"}}
	hr := must(fake.Seed[backends.HTTPResponse](srv, "", in))(t)
	in.Headers["A"] = "changed"
	if got, _ := fake.Get[backends.HTTPResponse](srv, "", hr.ID); got.Headers["A"] != "1" {
		t.Errorf("changing the seeded request changed the store: %v", got.Headers)
	}
}

// TestInspectionReturnsCopies checks that the values Seed, Get and List
// return share nothing with the store: changing their maps, slices and
// pointers changes nothing the API or later calls see.
func TestInspectionReturnsCopies(t *testing.T) {
	t.Parallel()
	srv, _ := start(t)
	hr := must(fake.Seed[backends.HTTPResponse](srv, "", &backends.HTTPResponseCreate{StatusCode: 200, Headers: map[string]string{"A": "1"}}))(t)
	fo := must(fake.Seed[backends.Failover](srv, "", &backends.FailoverCreate{Backends: []string{hr.ID}}))(t)
	op := must(fake.Seed[k8sop.Operator](srv, "", &k8sop.OperatorCreate{EnabledFeatures: []string{"bindings"},
		Binding: &k8sop.BindingCreate{EndpointSelectors: []string{"true"}}}))(t)
	ep := must(fake.Seed[k8sop.Endpoint](srv, "", &k8sop.Endpoint{Bindings: []string{"kubernetes"}, Domain: &acctapi.Ref{ID: "rd_1"}}))(t)
	// The wants are decoded from JSON, so they share nothing with the store.
	wantHR := jsonCopy(t, hr)
	wantFO := jsonCopy(t, fo)
	wantOp := jsonCopy(t, op)
	wantEp := jsonCopy(t, ep)

	mutate := []struct {
		name string
		fn   func()
	}{
		{"Seed result", func() {
			hr.Headers["A"] = "x"
			fo.Backends[0] = "x"
			op.EnabledFeatures[0] = "x"
			op.Binding.IngressEndpoint = "x"
			op.Binding.EndpointSelectors[0] = "x"
			ep.Bindings[0] = "x"
			ep.Domain.ID = "x"
		}},
		{"Get result", func() {
			g, _ := fake.Get[backends.HTTPResponse](srv, "", hr.ID)
			g.Headers["A"] = "y"
			f, _ := fake.Get[backends.Failover](srv, "", fo.ID)
			f.Backends[0] = "y"
			o, _ := fake.Get[k8sop.Operator](srv, "", op.ID)
			o.Binding.IngressEndpoint = "y"
			o.EnabledFeatures[0] = "y"
			e, _ := fake.Get[k8sop.Endpoint](srv, "", ep.ID)
			e.Bindings[0] = "y"
			e.Domain.ID = "y"
		}},
		{"List result", func() {
			fake.List[backends.HTTPResponse](srv, "")[0].Headers["A"] = "z"
			fake.List[backends.Failover](srv, "")[0].Backends[0] = "z"
			fake.List[k8sop.Operator](srv, "")[0].Binding.EndpointSelectors[0] = "z"
			fake.List[k8sop.Endpoint](srv, "")[0].Bindings[0] = "z"
		}},
	}
	for _, m := range mutate {
		t.Run(m.name, func(t *testing.T) {
			m.fn()
			gotHR, _ := fake.Get[backends.HTTPResponse](srv, "", hr.ID)
			gotFO, _ := fake.Get[backends.Failover](srv, "", fo.ID)
			gotEp, _ := fake.Get[k8sop.Endpoint](srv, "", ep.ID)
			gotOp, _ := fake.Get[k8sop.Operator](srv, "", op.ID)
			if diff := cmp.Diff(wantOp, *must(k8sop.NewOperators(srv.Client()).Get(t.Context(), op.ID))(t)); diff != "" {
				t.Errorf("operator over HTTP (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(wantHR, *must(backends.NewHTTPResponses(srv.Client()).Get(t.Context(), hr.ID))(t)); diff != "" {
				t.Errorf("HTTP response over HTTP (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(wantHR, gotHR); diff != "" {
				t.Errorf("HTTP response (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(wantFO, gotFO); diff != "" {
				t.Errorf("failover (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(wantOp, gotOp); diff != "" {
				t.Errorf("operator (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(wantEp, gotEp); diff != "" {
				t.Errorf("endpoint (-want +got):\n%s", diff)
			}
		})
	}
}

// jsonCopy returns a deep copy of v made through JSON.
func jsonCopy[T any](t *testing.T, v T) T {
	t.Helper()
	var out T
	must(0, json.Unmarshal([]byte(mustJSON(t, v)), &out))(t)
	return out
}

// TestGetAndListTypes checks Get and List with types that are not
// resources, ids of another kind, and unknown accounts.
func TestGetAndListTypes(t *testing.T) {
	t.Parallel()
	srv, _ := start(t)
	u := must(fake.Seed[account.ServiceUser](srv, "", &account.ServiceUserCreate{Name: "a"}))(t)
	if _, ok := fake.Get[account.APIKey](srv, "", u.ID); ok {
		t.Error("Get[APIKey] found a service user")
	}
	if _, ok := fake.Get[account.ServiceUserCreate](srv, "", u.ID); ok {
		t.Error("Get with a request type found something")
	}
	if _, ok := fake.Get[account.ServiceUser](srv, "ac_nope", u.ID); ok {
		t.Error("Get in an unknown account found something")
	}
	if got := fake.List[string](srv, ""); got != nil {
		t.Errorf("List[string] = %v", got)
	}
	if got := fake.List[account.ServiceUser](srv, "ac_nope"); got != nil {
		t.Errorf("List in an unknown account = %v", got)
	}
	if got, ok := fake.Get[account.ServiceUser](srv, srv.Accounts()[0].ID, u.ID); !ok || got.Name != "a" {
		t.Errorf("Get by the account's id: %+v %v", got, ok)
	}
}

// TestLoadFixtures checks fixtures: strict decoding, the API's validation,
// order, and the error naming the fixture.
func TestLoadFixtures(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name     string
		fixtures string
		wantErr  []string // substrings; nil for success
		wantSU   []string // service user names after loading, newest first
	}{
		{"valid", `[
			{"path": "/service_users", "body": {"name": "ci"}},
			{"path": "service_users", "body": {"name": "cd", "active": false}},
			{"path": "/backends/http_response", "body": {"status_code": 418}},
			{"path": "/tunnels", "body": {"labels": {"app": "x"}}},
			{"path": "/endpoints", "body": {"name": "e", "bindings": ["kubernetes"]}}
		]`, nil, []string{"cd", "ci"}},
		{"empty body", `[{"path": "/kubernetes_operators"}]`, nil, nil},
		{"unknown path", `[{"path": "/service_users", "body": {"name": "a"}}, {"path": "/nope", "body": {}}]`,
			[]string{"fixture 1", "/nope"}, []string{"a"}},
		{"unknown member", `[{"path": "/service_users", "body": {"name": "a", "nick": "b"}}]`,
			[]string{"fixture 0", "nick"}, nil},
		{"invalid value", `[{"path": "/service_users", "body": {"name": ""}}]`, []string{"fixture 0", "name"}, nil},
		{"wrong type", `[{"path": "/service_users", "body": {"name": 1}}]`, []string{"fixture 0", "name"}, nil},
		{"unknown fixture member", `[{"path": "/service_users", "bdy": {}}]`, []string{"bdy"}, nil},
		{"not an array", `{}`, []string{"fixtures"}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			srv, _ := start(t)
			err := srv.LoadFixtures(strings.NewReader(tt.fixtures))
			switch {
			case tt.wantErr == nil && err != nil:
				t.Fatal(err)
			case tt.wantErr != nil && err == nil:
				t.Fatal("LoadFixtures succeeded")
			}
			for _, w := range tt.wantErr {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not name %q", err, w)
				}
			}
			names := idsOf(fake.List[account.ServiceUser](srv, ""), func(u account.ServiceUser) string { return u.Name })
			if diff := cmp.Diff(tt.wantSU, names, cmpEmpty); diff != "" {
				t.Errorf("service users (-want +got):\n%s", diff)
			}
		})
	}
	// Loaded tunnels and endpoints are what Seed would have made.
	srv, _ := start(t)
	must(0, srv.LoadFixtures(strings.NewReader(`[{"path": "/tunnels", "body": {"labels": {"app": "x"}}}, {"path": "/backends/tunnel_group", "body": {"labels": {"app": "x"}}}]`)))(t)
	if g := fake.List[backends.TunnelGroup](srv, ""); len(g) != 1 || len(g[0].Tunnels) != 1 {
		t.Errorf("tunnel groups after fixtures: %+v", g)
	}
}
