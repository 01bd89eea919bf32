package fake_test

import (
	"context"
	"crypto/x509"
	"encoding/pem"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/acctapi/acctapi"
	"github.com/acctapi/acctapi/account"
	"github.com/acctapi/acctapi/fake"
	"github.com/acctapi/acctapi/k8sop"
	"github.com/google/go-cmp/cmp"
)

// TestOperatorsEndToEnd drives /kubernetes_operators through
// k8sop.Operators.
func TestOperatorsEndToEnd(t *testing.T) {
	t.Parallel()
	srv, clk := start(t, fake.WithIngressEndpoint("ingress.test:443"))
	ctx := t.Context()
	ops := k8sop.NewOperators(srv.Client())
	user := srv.Accounts()[0].UserID

	op := must(ops.Create(ctx, &k8sop.OperatorCreate{Description: "cluster",
		EnabledFeatures: []string{"Ingress", "BINDINGS", "ingress", "gateway", "Bindings"},
		Deployment:      k8sop.Deployment{Name: "op", Namespace: "ns", Version: "1.0", ClusterName: "c1"},
		Binding:         &k8sop.BindingCreate{EndpointSelectors: []string{`endpoint.name == "a"`}}}))(t)
	want := k8sop.Operator{ID: op.ID, URI: srv.URL + "/kubernetes_operators/" + op.ID, CreatedAt: t0, UpdatedAt: t0,
		Description: "cluster", Principal: acctapi.Ref{ID: user}, EnabledFeatures: []string{"ingress", "bindings", "gateway"},
		Region: k8sop.DefaultRegion, Deployment: k8sop.Deployment{Name: "op", Namespace: "ns", Version: "1.0", ClusterName: "c1"},
		Binding: &k8sop.Binding{EndpointSelectors: []string{`endpoint.name == "a"`}, IngressEndpoint: "ingress.test:443"}}
	if !strings.HasPrefix(op.ID, "k8sop_") {
		t.Errorf("id %q, want prefix k8sop_", op.ID)
	}
	if diff := cmp.Diff(want, *op); diff != "" {
		t.Errorf("create (-want +got):\n%s", diff)
	}
	// No certificate yet: cert "" and zero times, as the real service writes them.
	r := raw(t, srv, "GET", "/kubernetes_operators/"+op.ID, nil, "")
	const zeroCert = `"cert":{"cert":"","not_before":"0001-01-01T00:00:00Z","not_after":"0001-01-01T00:00:00Z"}`
	if !strings.Contains(string(r.body), zeroCert) {
		t.Errorf("body %s, want %s", r.body, zeroCert)
	}
	if diff := cmp.Diff(want, *must(ops.Get(ctx, op.ID))(t)); diff != "" {
		t.Errorf("get (-want +got):\n%s", diff)
	}

	// An update after the clock moves: updated_at follows, created_at stays;
	// a CSR is signed by the fake's CA from the clock's now.
	now := clk.Advance(90 * time.Minute)
	csr := newCSR(t, "op1")
	got := must(ops.Update(ctx, &k8sop.OperatorUpdate{ID: op.ID, Region: ptr(""), Description: ptr("cluster 2"),
		Binding:    &k8sop.BindingUpdate{CSR: &csr, IngressEndpoint: ptr("mine:443")},
		Deployment: &k8sop.DeploymentUpdate{Version: ptr("1.1")}}))(t)
	cert := parseCert(t, got.Binding.Cert.Cert)
	if !cert.NotBefore.Equal(now) || !got.Binding.Cert.NotBefore.Equal(now) || !got.Binding.Cert.NotAfter.Equal(cert.NotAfter) {
		t.Errorf("cert NotBefore %v (response %v, NotAfter %v vs %v), want %v", cert.NotBefore, got.Binding.Cert.NotBefore,
			got.Binding.Cert.NotAfter, cert.NotAfter, now)
	}
	if cert.Subject.CommonName != "op1" || cert.Issuer.CommonName == "op1" {
		t.Errorf("cert subject %q issued by %q, want op1 issued by the fake's CA", cert.Subject.CommonName, cert.Issuer.CommonName)
	}
	want.UpdatedAt, want.Description, want.Deployment.Version = now, "cluster 2", "1.1"
	want.Binding.IngressEndpoint, want.Binding.Cert = "mine:443", got.Binding.Cert
	if diff := cmp.Diff(want, *got); diff != "" {
		t.Errorf("update (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]k8sop.Operator{want}, collect(t, ops.List(ctx, nil))); diff != "" {
		t.Errorf("list (-want +got):\n%s", diff)
	}

	// With a CSR at create; without bindings no ingress endpoint is set.
	plain := must(ops.Create(ctx, &k8sop.OperatorCreate{EnabledFeatures: []string{"gateway"}, Region: "eu"}))(t)
	if plain.Binding == nil || plain.Binding.IngressEndpoint != "" || plain.Region != "eu" || !plain.Binding.Cert.NotBefore.IsZero() {
		t.Errorf("operator without bindings: %+v", plain)
	}
	signed := must(ops.Create(ctx, &k8sop.OperatorCreate{EnabledFeatures: []string{"bindings"},
		Binding: &k8sop.BindingCreate{CSR: newCSR(t, "op2")}}))(t)
	if c := parseCert(t, signed.Binding.Cert.Cert); !c.NotBefore.Equal(now) || signed.Binding.IngressEndpoint != "ingress.test:443" {
		t.Errorf("created with CSR: NotBefore %v, ingress %q", c.NotBefore, signed.Binding.IngressEndpoint)
	}

	lax := k8sop.NewOperators(srv.Client(acctapi.WithoutValidation()))
	for _, tt := range []struct {
		name string
		call func() error
	}{
		{"unknown feature", func() error {
			_, err := lax.Create(ctx, &k8sop.OperatorCreate{EnabledFeatures: []string{"bindings", "teleport"}})
			return err
		}},
		{"binding without bindings on create", func() error {
			_, err := lax.Create(ctx, &k8sop.OperatorCreate{EnabledFeatures: []string{"ingress"}, Binding: &k8sop.BindingCreate{}})
			return err
		}},
		{"binding without bindings on update", func() error {
			_, err := lax.Update(ctx, &k8sop.OperatorUpdate{ID: plain.ID, Binding: &k8sop.BindingUpdate{IngressEndpoint: ptr("x:1")}})
			return err
		}},
		{"binding while turning bindings off", func() error {
			_, err := lax.Update(ctx, &k8sop.OperatorUpdate{ID: op.ID, EnabledFeatures: &[]string{"ingress"}, Binding: &k8sop.BindingUpdate{}})
			return err
		}},
		{"invalid selector", func() error {
			_, err := lax.Create(ctx, &k8sop.OperatorCreate{EnabledFeatures: []string{"bindings"},
				Binding: &k8sop.BindingCreate{EndpointSelectors: []string{`endpoint.nope ==`}}})
			return err
		}},
		{"selector not boolean", func() error {
			_, err := lax.Update(ctx, &k8sop.OperatorUpdate{ID: op.ID, Binding: &k8sop.BindingUpdate{EndpointSelectors: &[]string{`endpoint.name`}}})
			return err
		}},
		{"invalid CSR", func() error {
			_, err := lax.Create(ctx, &k8sop.OperatorCreate{EnabledFeatures: []string{"bindings"}, Binding: &k8sop.BindingCreate{CSR: "nope"}})
			return err
		}},
	} {
		t.Run(tt.name, func(t *testing.T) { wantAPIError(t, tt.call(), http.StatusBadRequest, acctapi.CodeInvalidValue) })
	}
	// The refused updates changed nothing.
	if diff := cmp.Diff(want, *must(ops.Get(ctx, op.ID))(t)); diff != "" {
		t.Errorf("after refused updates (-want +got):\n%s", diff)
	}

	wantDeleted(ctx, t, op.ID, ops.Delete, ops.Get)
}

// TestOperatorPrincipal checks that an operator's principal is the owner
// of the key that created it: the account's user, or a service user.
func TestOperatorPrincipal(t *testing.T) {
	t.Parallel()
	srv, _ := start(t)
	ctx := t.Context()
	su := must(fake.Seed[account.ServiceUser](srv, "", &account.ServiceUserCreate{Name: "op-bot"}))(t)
	key := must(account.NewAPIKeys(srv.Client()).Create(ctx, &account.APIKeyCreate{OwnerID: su.ID}))(t)
	for _, tt := range []struct {
		name   string
		client *acctapi.Client
		want   acctapi.Ref
	}{
		{"account user", srv.Client(), acctapi.Ref{ID: srv.Accounts()[0].UserID}},
		{"service user", clientFor(t, srv, *key.Token), acctapi.Ref{ID: su.ID, URI: su.URI}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			op := must(k8sop.NewOperators(tt.client).Create(ctx, &k8sop.OperatorCreate{}))(t)
			if diff := cmp.Diff(tt.want, op.Principal); diff != "" {
				t.Errorf("principal (-want +got):\n%s", diff)
			}
		})
	}
	seeded := must(fake.Seed[k8sop.Operator](srv, "", &k8sop.OperatorCreate{}))(t)
	if seeded.Principal.ID != srv.Accounts()[0].UserID {
		t.Errorf("seeded operator's principal %v, want the account's user", seeded.Principal)
	}
}

// TestBoundEndpoints checks GET /kubernetes_operators/{id}/bound_endpoints:
// the seeded endpoints with the kubernetes binding that a selector
// matches, newest first, paged.
func TestBoundEndpoints(t *testing.T) {
	t.Parallel()
	srv, clk := start(t)
	ctx := t.Context()
	ops := k8sop.NewOperators(srv.Client())
	tn := must(fake.Seed[fake.Tunnel](srv, "", &fake.Tunnel{}))(t)
	seed := func(name string, bindings ...string) k8sop.Endpoint {
		t.Helper()
		clk.Advance(time.Second)
		return must(fake.Seed[k8sop.Endpoint](srv, "", &k8sop.Endpoint{Name: name, URL: "https://" + name + ".example",
			Proto: "https", Bindings: bindings, Tunnel: &acctapi.Ref{ID: tn.ID}}))(t)
	}
	var bound []k8sop.Endpoint // newest first
	for i := range 5 {
		bound = append([]k8sop.Endpoint{seed(fmt.Sprintf("app-%d", i), "public", "kubernetes")}, bound...)
		seed(fmt.Sprintf("app-pub-%d", i), "public")   // no kubernetes binding
		seed(fmt.Sprintf("other-%d", i), "kubernetes") // no selector matches
	}
	op := must(ops.Create(ctx, &k8sop.OperatorCreate{EnabledFeatures: []string{"bindings"},
		Binding: &k8sop.BindingCreate{EndpointSelectors: []string{`endpoint.name.startsWith("app-")`, `endpoint.url == "https://never"`}}}))(t)
	if bound[0].URI != srv.URL+"/endpoints/"+bound[0].ID || bound[0].CreatedAt.IsZero() {
		t.Errorf("seeded endpoint %+v, want uri and created_at filled", bound[0])
	}

	if diff := cmp.Diff(bound, collect(t, ops.BoundEndpoints(ctx, op.ID, &acctapi.ListOptions{Limit: 2}))); diff != "" {
		t.Errorf("bound endpoints, pages of 2 (-want +got):\n%s", diff)
	}
	first := must(ops.BoundEndpointsPage(ctx, op.ID, &acctapi.ListOptions{Limit: 2}))(t)
	uri := srv.URL + "/kubernetes_operators/" + op.ID + "/bound_endpoints"
	wantNext := uri + "?before_id=" + bound[1].ID + "&limit=2"
	if first.URI != uri || first.NextPageURI == nil || *first.NextPageURI != wantNext {
		t.Errorf("first page uri %q next %v, want %q and %q", first.URI, first.NextPageURI, uri, wantNext)
	}
	last := must(ops.BoundEndpointsPage(ctx, op.ID, &acctapi.ListOptions{BeforeID: bound[2].ID, Limit: 2}))(t)
	if diff := cmp.Diff(bound[3:], last.Endpoints); diff != "" || last.NextPageURI != nil {
		t.Errorf("last page (-want +got):\n%s\nnext %v, want null", diff, last.NextPageURI)
	}

	// Without selectors, or without the operator, nothing.
	none := must(ops.Create(ctx, &k8sop.OperatorCreate{}))(t)
	if got := collect(t, ops.BoundEndpoints(ctx, none.ID, nil)); len(got) != 0 {
		t.Errorf("operator without selectors binds %d endpoints", len(got))
	}
	_, err := ops.BoundEndpointsPage(ctx, "k8sop_missing", nil)
	wantAPIError(t, err, http.StatusNotFound, acctapi.CodeNotFound)
	if r := raw(t, srv, "GET", "/kubernetes_operators/"+op.ID+"/bound_endpoints?filter=true", nil, ""); r.status != 400 {
		t.Errorf("filter on bound endpoints: %d, want 400", r.status)
	}
}

func parseCert(t *testing.T, pemText string) *x509.Certificate {
	t.Helper()
	block, _ := pem.Decode([]byte(pemText))
	if block == nil || block.Type != "CERTIFICATE" {
		t.Fatalf("cert %q is not a PEM certificate", pemText)
	}
	return must(x509.ParseCertificate(block.Bytes))(t)
}

// TestOperatorUpdateDeploymentMembers checks that an update's deployment
// takes only name and version: another member is an unknown member of the
// body (contract §2: 400, ERR_NGROK_214) and changes nothing.
func TestOperatorUpdateDeploymentMembers(t *testing.T) {
	t.Parallel()
	srv, _ := start(t)
	ops := k8sop.NewOperators(srv.Client())
	dep := k8sop.Deployment{Name: "op", Namespace: "ns", Version: "1.0", ClusterName: "c1"}
	op := must(ops.Create(t.Context(), &k8sop.OperatorCreate{Deployment: dep}))(t)
	path := "/kubernetes_operators/" + op.ID
	for _, tt := range []struct{ name, body, member string }{
		{"namespace", `{"deployment":{"namespace":"x"}}`, "namespace"},
		{"cluster_name", `{"deployment":{"cluster_name":"x"}}`, "cluster_name"},
		{"namespace with name and version", `{"deployment":{"name":"y","version":"2","namespace":"x"}}`, "namespace"},
		{"namespace with the id", `{"id":"` + op.ID + `","deployment":{"namespace":"x"}}`, "namespace"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			r := raw(t, srv, "PATCH", path, nil, tt.body)
			if r.status != http.StatusBadRequest {
				t.Fatalf("status = %d, want 400; body %s", r.status, r.body)
			}
			if e := r.apiErr(t); e.ErrorCode != acctapi.CodeUnknownField || e.StatusCode != http.StatusBadRequest ||
				!strings.Contains(e.Details["field"], tt.member) {
				t.Errorf("error %+v, want %s naming %s", e, acctapi.CodeUnknownField, tt.member)
			}
		})
	}
	if got := must(ops.Get(t.Context(), op.ID))(t); got.Deployment != dep || !got.UpdatedAt.Equal(op.UpdatedAt) {
		t.Errorf("after refused updates: deployment %+v updated %v, want %+v unchanged", got.Deployment, got.UpdatedAt, dep)
	}

	// name and version alone are accepted, the other members kept.
	r := raw(t, srv, "PATCH", path, nil, `{"deployment":{"name":"op2","version":"2.0"}}`)
	if r.status != http.StatusOK {
		t.Fatalf("status = %d, want 200; body %s", r.status, r.body)
	}
	var got k8sop.Operator
	r.decode(t, &got)
	if want := (k8sop.Deployment{Name: "op2", Namespace: "ns", Version: "2.0", ClusterName: "c1"}); got.Deployment != want {
		t.Errorf("deployment %+v, want %+v", got.Deployment, want)
	}
}

func TestOperatorPrincipalURI(t *testing.T) {
	t.Parallel()
	srv, _ := start(t)
	ctx := context.Background()
	su, err := fake.Seed[account.ServiceUser](srv, "", &account.ServiceUserCreate{Name: "operator"})
	if err != nil {
		t.Fatal(err)
	}
	key, err := account.NewAPIKeys(srv.Client()).Create(ctx, &account.APIKeyCreate{OwnerID: su.ID})
	if err != nil {
		t.Fatal(err)
	}
	c, err := acctapi.NewClient(*key.Token, acctapi.WithBaseURL(srv.URL), acctapi.WithHTTPClient(srv.HTTPClient()))
	if err != nil {
		t.Fatal(err)
	}
	op, err := k8sop.NewOperators(c).Create(ctx, &k8sop.OperatorCreate{})
	if err != nil {
		t.Fatal(err)
	}
	want := acctapi.Ref{ID: su.ID, URI: srv.URL + "/service_users/" + su.ID}
	if op.Principal != want {
		t.Errorf("principal = %+v, want %+v", op.Principal, want)
	}
	// The account's user has no API path: its uri is "", as the real
	// service's samples show.
	op2, err := k8sop.NewOperators(srv.Client()).Create(ctx, &k8sop.OperatorCreate{})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(op2.Principal.ID, "usr_") || op2.Principal.URI != "" {
		t.Errorf("principal = %+v, want the account's user with no uri", op2.Principal)
	}
}

func TestBoundEndpointsWithoutSelectors(t *testing.T) {
	t.Parallel()
	srv, _ := start(t)
	ctx := context.Background()
	if _, err := fake.Seed[k8sop.Endpoint](srv, "", &k8sop.Endpoint{Bindings: []string{"kubernetes"}}); err != nil {
		t.Fatal(err)
	}
	op, err := k8sop.NewOperators(srv.Client()).Create(ctx, &k8sop.OperatorCreate{EnabledFeatures: []string{"ingress"}})
	if err != nil {
		t.Fatal(err)
	}
	p, err := k8sop.NewOperators(srv.Client()).BoundEndpointsPage(ctx, op.ID, nil)
	if err != nil || len(p.Endpoints) != 0 || p.NextPageURI != nil {
		t.Errorf("bound endpoints of an operator without selectors = %+v, %v; want an empty last page", p, err)
	}
}

// TestSigningCA checks that an operator's binding certificate chains to
// the fake's own CA.
func TestSigningCA(t *testing.T) {
	t.Parallel()
	srv, _ := start(t)
	op, err := k8sop.NewOperators(srv.Client()).Create(context.Background(), &k8sop.OperatorCreate{
		EnabledFeatures: []string{"bindings"},
		Binding:         &k8sop.BindingCreate{EndpointSelectors: []string{"true"}, CSR: newCSR(t, "op")},
	})
	if err != nil {
		t.Fatal(err)
	}
	block, _ := pem.Decode([]byte(op.Binding.Cert.Cert))
	if block == nil {
		t.Fatalf("no PEM certificate in %q", op.Binding.Cert.Cert)
	}
	cert, err := x509.ParseCertificate(block.Bytes)
	if err != nil {
		t.Fatal(err)
	}
	ca, err := srv.SigningCA()
	if err != nil {
		t.Fatal(err)
	}
	if err := cert.CheckSignatureFrom(ca); err != nil {
		t.Errorf("certificate does not chain to SigningCA: %v", err)
	}

}

// TestBoundEndpointsBudget checks that listing bound endpoints has a
// per-request budget (contract §6): selectors that are cheap enough one by
// one, over enough large endpoints, make the request a 400 ERR_NGROK_250
// naming the selectors rather than a long scan. Fewer endpoints stay
// within it.
func TestBoundEndpointsBudget(t *testing.T) {
	t.Parallel()
	srv, _ := start(t, fake.WithoutListener())
	ctx := t.Context()
	ops := k8sop.NewOperators(srv.Client())
	// Each selector costs about 500 units on an endpoint with 4,096 bytes
	// of metadata, 20 of them about 10,000: k8sop.MatchBudget (5,100,000
	// units) is about 510 endpoints.
	needle := strings.Repeat("z", 950)
	sels := make([]string, k8sop.MaxSelectors)
	for i := range sels {
		sels[i] = fmt.Sprintf(`endpoint.metadata.contains("%s%d")`, needle, i)
	}
	op := must(ops.Create(ctx, &k8sop.OperatorCreate{EnabledFeatures: []string{"bindings"},
		Binding: &k8sop.BindingCreate{EndpointSelectors: sels}}))(t)
	seed := func(n int) {
		t.Helper()
		for range n {
			must(fake.Seed[k8sop.Endpoint](srv, "", &k8sop.Endpoint{Metadata: strings.Repeat("a", acctapi.MaxMetadataBytes),
				Bindings: []string{"kubernetes"}}))(t)
		}
	}
	seed(20)
	if got := collect(t, ops.BoundEndpoints(ctx, op.ID, nil)); len(got) != 0 {
		t.Fatalf("%d endpoints bound, want none", len(got))
	}
	seed(580)
	_, err := ops.BoundEndpointsPage(ctx, op.ID, &acctapi.ListOptions{Limit: 1})
	var ae *acctapi.Error
	if !errors.As(err, &ae) || ae.StatusCode != http.StatusBadRequest || ae.ErrorCode != acctapi.CodeBadFilter || ae.Details["field"] != "binding.endpoint_selectors" {
		t.Fatalf("over budget: %v, want 400 %s", err, acctapi.CodeBadFilter)
	}
}

// TestOperatorRequestsThroughValidation: an operator's requests reach the
// store with what validation parsed (the fake decodes them into its own
// types, which keep it): a body id that differs from the path is refused,
// a CSR is signed and selectors bind, through the API and through Seed.
func TestOperatorRequestsThroughValidation(t *testing.T) {
	t.Parallel()
	srv, _ := start(t)
	ops := k8sop.NewOperators(srv.Client())
	op := must(fake.Seed[*k8sop.Operator](srv, "", &k8sop.OperatorCreate{EnabledFeatures: []string{"bindings"},
		Binding: &k8sop.BindingCreate{CSR: newCSR(t, "seeded"), EndpointSelectors: []string{`"kubernetes" in endpoint.bindings`}}}))(t)
	if op.Binding.Cert.Cert == "" {
		t.Errorf("seeded operator's CSR was not signed: %+v", op.Binding)
	}
	ep := must(fake.Seed[k8sop.Endpoint](srv, "", &k8sop.Endpoint{Bindings: []string{"kubernetes"}}))(t)
	if got := collect(t, ops.BoundEndpoints(t.Context(), op.ID, nil)); len(got) != 1 || got[0].ID != ep.ID {
		t.Errorf("bound endpoints of the seeded operator: %+v, want %s", got, ep.ID)
	}
	path := "/kubernetes_operators/" + op.ID
	r := raw(t, srv, "PATCH", path, nil, `{"id":"k8sop_other","description":"x"}`)
	if e := r.apiErr(t); r.status != http.StatusBadRequest || e.ErrorCode != acctapi.CodeInvalidValue || e.Details["field"] != "id" {
		t.Errorf("PATCH with another id: %d %s, want 400 on id", r.status, r.body)
	}
	up := must(ops.Update(t.Context(), &k8sop.OperatorUpdate{ID: op.ID, Binding: &k8sop.BindingUpdate{CSR: ptr(newCSR(t, "renewed")), EndpointSelectors: &[]string{}}}))(t)
	if up.Binding.Cert.Cert == "" || up.Binding.Cert.Cert == op.Binding.Cert.Cert {
		t.Errorf("updated CSR not signed anew: %+v", up.Binding.Cert)
	}
	if got := collect(t, ops.BoundEndpoints(t.Context(), op.ID, nil)); len(got) != 0 {
		t.Errorf("bound endpoints after the selectors were emptied: %+v", got)
	}
}

// TestSigningAtEveryClock checks that the fake signs a CSR at every time
// its clock may show (the admin API's clock takes years 0001 to 9999),
// that a failure at one time does not stay (it used to: the CA was made
// once, valid from its first use for ten years, and its first error was
// kept), and that each certificate verifies against SigningCA at the time
// it was signed, with a year's validity cut at the end of year 9999.
func TestSigningAtEveryClock(t *testing.T) {
	t.Parallel()
	srv, clk := start(t)
	end := time.Date(9999, 12, 31, 23, 59, 59, 0, time.UTC)
	var first *x509.Certificate
	for _, at := range []time.Time{
		time.Date(9999, 12, 31, 23, 0, 0, 0, time.UTC),
		time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC),
		time.Date(2045, 1, 1, 0, 0, 0, 0, time.UTC),
		time.Date(9999, 1, 1, 0, 0, 0, 0, time.UTC),
		time.Date(1, 1, 1, 0, 0, 1, 0, time.UTC),
		{}, // 0001-01-01T00:00:00Z
	} {
		clk.Set(at)
		r := raw(t, srv, "POST", "/kubernetes_operators", nil,
			mustJSON(t, map[string]any{"enabled_features": []string{"bindings"}, "binding": map[string]string{"csr": newCSR(t, "op")}}))
		if r.status != http.StatusCreated {
			t.Errorf("at %v: status %d %s, want 201", at, r.status, r.body)
			continue
		}
		var op k8sop.Operator
		r.decode(t, &op)
		cert := parseCert(t, op.Binding.Cert.Cert)
		wantAfter := at.AddDate(1, 0, 0)
		if at.Year() == 9999 {
			wantAfter = end
		}
		if !cert.NotBefore.Equal(at) || !cert.NotAfter.Equal(wantAfter) ||
			!op.Binding.Cert.NotBefore.Equal(at) || !op.Binding.Cert.NotAfter.Equal(wantAfter) {
			t.Errorf("at %v: certificate valid %v to %v (response %v to %v), want %v to %v", at, cert.NotBefore, cert.NotAfter,
				op.Binding.Cert.NotBefore, op.Binding.Cert.NotAfter, at, wantAfter)
		}
		ca := must(srv.SigningCA())(t)
		if first == nil {
			first = ca
		} else if !ca.Equal(first) {
			t.Errorf("at %v: SigningCA changed", at)
		}
		if err := cert.CheckSignatureFrom(ca); err != nil {
			t.Errorf("at %v: %v", at, err)
		}
		if at.IsZero() {
			continue // x509 verifies at the zero time as at the machine's time
		}
		roots := x509.NewCertPool()
		roots.AddCert(ca)
		if _, err := cert.Verify(x509.VerifyOptions{Roots: roots, CurrentTime: clk.Now(),
			KeyUsages: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}}); err != nil {
			t.Errorf("at %v: %v", at, err)
		}
	}
}

// TestBindingClearedWithBindings checks that switching bindings off
// clears the binding, as on an operator created without bindings
// (contract §6: a binding exists only while bindings is enabled): it used
// to keep its selectors, certificate and ingress endpoint, and bind
// endpoints, with no way to change or clear them.
func TestBindingClearedWithBindings(t *testing.T) {
	t.Parallel()
	srv, _ := start(t, fake.WithIngressEndpoint("ingress.test:443"))
	ctx := t.Context()
	ops := k8sop.NewOperators(srv.Client())
	must(fake.Seed[k8sop.Endpoint](srv, "", &k8sop.Endpoint{Name: "a", Bindings: []string{"kubernetes"}}))(t)
	op := must(ops.Create(ctx, &k8sop.OperatorCreate{EnabledFeatures: []string{"bindings", "ingress"},
		Binding: &k8sop.BindingCreate{EndpointSelectors: []string{"true"}, CSR: newCSR(t, "op"), IngressEndpoint: "mine:443"}}))(t)
	if got := collect(t, ops.BoundEndpoints(ctx, op.ID, nil)); len(got) != 1 {
		t.Fatalf("%d endpoints bound, want 1", len(got))
	}

	off := must(ops.Update(ctx, &k8sop.OperatorUpdate{ID: op.ID, EnabledFeatures: &[]string{"ingress"}}))(t)
	plain := must(ops.Create(ctx, &k8sop.OperatorCreate{EnabledFeatures: []string{"ingress"}}))(t)
	if diff := cmp.Diff(plain.Binding, off.Binding); diff != "" || !slices.Equal(off.EnabledFeatures, []string{"ingress"}) {
		t.Errorf("binding after bindings was switched off, against one created without (-want +got):\n%s\nfeatures %v", diff, off.EnabledFeatures)
	}
	if diff := cmp.Diff(off, must(ops.Get(ctx, op.ID))(t)); diff != "" {
		t.Errorf("get after the update (-update +get):\n%s", diff)
	}
	if got := collect(t, ops.BoundEndpoints(ctx, op.ID, nil)); len(got) != 0 {
		t.Errorf("%d endpoints bound with bindings off, want none", len(got))
	}

	// On again: the default ingress endpoint, no selectors until sent.
	on := must(ops.Update(ctx, &k8sop.OperatorUpdate{ID: op.ID, EnabledFeatures: &[]string{"ingress", "bindings"}}))(t)
	if want := (&k8sop.Binding{IngressEndpoint: "ingress.test:443"}); !cmp.Equal(want, on.Binding) {
		t.Errorf("binding with bindings on again: %+v, want %+v", on.Binding, want)
	}
	if got := collect(t, ops.BoundEndpoints(ctx, op.ID, nil)); len(got) != 0 {
		t.Errorf("%d endpoints bound before selectors were sent again, want none", len(got))
	}
	must(ops.Update(ctx, &k8sop.OperatorUpdate{ID: op.ID, Binding: &k8sop.BindingUpdate{EndpointSelectors: &[]string{"true"}}}))(t)
	if got := collect(t, ops.BoundEndpoints(ctx, op.ID, nil)); len(got) != 1 {
		t.Errorf("%d endpoints bound with new selectors, want 1", len(got))
	}
}

// TestSeededEndpointSizes checks that Seed refuses an endpoint larger
// than the selectors' cost model assumes, naming the member, so that no
// selector fails on a stored endpoint: such an endpoint used to be taken
// for "no match" and left out of the bound endpoints without a word.
func TestSeededEndpointSizes(t *testing.T) {
	t.Parallel()
	srv, _ := start(t)
	big := strings.Repeat("a", k8sop.MaxEndpointStringBytes)
	for _, tt := range []struct {
		name, member string
		ep           k8sop.Endpoint
	}{
		{"host", "host", k8sop.Endpoint{Host: strings.Repeat("a", 200_000) + "zzz.example.com"}},
		{"traffic policy", "traffic_policy", k8sop.Endpoint{TrafficPolicy: big + "x"}},
		{"reference", "tunnel.id", k8sop.Endpoint{Tunnel: &acctapi.Ref{ID: big + "x"}}},
		{"a binding", "bindings[1]", k8sop.Endpoint{Bindings: []string{"kubernetes", big + "x"}}},
		{"bindings", "bindings", k8sop.Endpoint{Bindings: make([]string, k8sop.MaxBindings+1)}},
		{"metadata", "metadata", k8sop.Endpoint{Metadata: strings.Repeat("a", acctapi.MaxMetadataBytes+1)}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			_, err := fake.Seed[k8sop.Endpoint](srv, "", &tt.ep)
			if err == nil || !strings.Contains(err.Error(), tt.member+": ") {
				t.Errorf("Seed: %v, want an error naming %s", err, tt.member)
			}
		})
	}
	if got := fake.List[k8sop.Endpoint](srv, ""); len(got) != 0 {
		t.Errorf("refused endpoints stored: %d", len(got))
	}

	// The review's case at the largest size: both endpoints bound.
	host := big[:k8sop.MaxEndpointStringBytes-len("zzz.example.com")] + "zzz.example.com"
	for _, h := range []string{host, "small.zzz.example.com"} {
		must(fake.Seed[k8sop.Endpoint](srv, "", &k8sop.Endpoint{Host: h, Bindings: []string{"kubernetes"}}))(t)
	}
	ops := k8sop.NewOperators(srv.Client())
	op := must(ops.Create(t.Context(), &k8sop.OperatorCreate{EnabledFeatures: []string{"bindings"},
		Binding: &k8sop.BindingCreate{EndpointSelectors: []string{`endpoint.host.contains("zzz")`}}}))(t)
	if got := collect(t, ops.BoundEndpoints(t.Context(), op.ID, nil)); len(got) != 2 {
		t.Errorf("%d endpoints bound, want 2", len(got))
	}
	// A seeded uri is the server's to set, as the id is: once stored as
	// given (200 KB) and read by selectors, past the cost model, and then
	// silently replaced; now refused, naming the member.
	_, err := fake.Seed[k8sop.Endpoint](srv, "", &k8sop.Endpoint{URI: strings.Repeat("a", 200_000) + "yyy.example", Bindings: []string{"kubernetes"}})
	if fes := acctapi.FieldErrors(err); len(fes) != 1 || fes[0].Field != "uri" {
		t.Errorf("Seed with a uri: %.200v, want a field error on uri", err)
	}
	op = must(ops.Create(t.Context(), &k8sop.OperatorCreate{EnabledFeatures: []string{"bindings"},
		Binding: &k8sop.BindingCreate{EndpointSelectors: []string{`endpoint.uri.startsWith("http") && !endpoint.uri.contains("yyy")`}}}))(t)
	if got := collect(t, ops.BoundEndpoints(t.Context(), op.ID, nil)); len(got) != 2 {
		t.Errorf("%d endpoints bound by their uri, want both", len(got))
	}
}

// TestSelectorsOverHTTP checks endpoint selectors against contract §3's
// constructs, as list filters take them, through the API: time.now (the
// fake's clock) with subtract, timestamp().add(), == null; substring
// functions on endpoint.id refused; each refusal naming its reason; and a
// selector that fails when evaluated failing the request (400
// ERR_NGROK_250 on the selector), never taken for "no match".
func TestSelectorsOverHTTP(t *testing.T) {
	t.Parallel()
	srv, clk := start(t)
	ctx := t.Context()
	ops := k8sop.NewOperators(srv.Client())
	must(fake.Seed[k8sop.Endpoint](srv, "", &k8sop.Endpoint{Name: "old", Bindings: []string{"kubernetes"}}))(t)
	clk.Advance(8 * 24 * time.Hour)
	must(fake.Seed[k8sop.Endpoint](srv, "", &k8sop.Endpoint{Name: "recent", Bindings: []string{"kubernetes"}}))(t)
	bound := func(sel ...string) []string {
		t.Helper()
		op := must(ops.Create(ctx, &k8sop.OperatorCreate{EnabledFeatures: []string{"bindings"},
			Binding: &k8sop.BindingCreate{EndpointSelectors: sel}}))(t)
		var names []string
		for _, e := range collect(t, ops.BoundEndpoints(ctx, op.ID, nil)) {
			names = append(names, e.Name)
		}
		return names
	}
	for _, tt := range []struct {
		sel  string
		want []string
	}{
		{`endpoint.created_at > time.now.subtract("7d")`, []string{"recent"}},
		{`endpoint.created_at < timestamp("` + t0.Format(time.RFC3339) + `").add("1d")`, []string{"old"}},
		{`endpoint.domain == null`, []string{"recent", "old"}},
		{`endpoint.domain != null`, nil},
	} {
		if got := bound(tt.sel); !slices.Equal(got, tt.want) {
			t.Errorf("%s: bound %v, want %v", tt.sel, got, tt.want)
		}
	}

	for _, tt := range []struct{ sel, reason string }{
		{`endpoint.id.startsWith("ep_")`, "startsWith is not supported on endpoint.id"},
		{`endpoint.host.matches("x")`, "matches is not supported"},
		{`endpoint.host == "` + strings.Repeat("a", 1010) + `"`, "is 1029 bytes; at most 1024"},
		{`endpoint.created_at > time.now.subtract("1w")`, `invalid duration "1w"`},
	} {
		r := raw(t, srv, "POST", "/kubernetes_operators", nil,
			mustJSON(t, map[string]any{"enabled_features": []string{"bindings"}, "binding": map[string]any{"endpoint_selectors": []string{"true", tt.sel}}}))
		e := r.apiErr(t)
		if r.status != http.StatusBadRequest || e.ErrorCode != acctapi.CodeInvalidValue || e.Details["field"] != "binding.endpoint_selectors[1]" ||
			!strings.Contains(e.Msg, tt.reason) {
			t.Errorf("%.40s: %d %s, want 400 on binding.endpoint_selectors[1] saying %q", tt.sel, r.status, r.body, tt.reason)
		}
	}

	// At year 2000, 999,999 days back is before year 1.
	clk.Set(time.Date(2000, 1, 1, 0, 0, 0, 0, time.UTC))
	op := must(ops.Create(ctx, &k8sop.OperatorCreate{EnabledFeatures: []string{"bindings"},
		Binding: &k8sop.BindingCreate{EndpointSelectors: []string{`endpoint.name == "none"`, `endpoint.created_at > time.now.subtract("999999d")`}}}))(t)
	r := raw(t, srv, "GET", "/kubernetes_operators/"+op.ID+"/bound_endpoints", nil, "")
	if e := r.apiErr(t); r.status != http.StatusBadRequest || e.ErrorCode != acctapi.CodeBadFilter ||
		e.Details["field"] != "binding.endpoint_selectors[1]" || !strings.Contains(e.Msg, "timestamp out of range") {
		t.Errorf("a selector failing on endpoints: %d %s, want 400 %s on binding.endpoint_selectors[1]", r.status, r.body, acctapi.CodeBadFilter)
	}
	// The same when no endpoint reaches the shift (a review saw 200 with no
	// endpoints): time.now is checked before any endpoint is read.
	op = must(ops.Create(ctx, &k8sop.OperatorCreate{EnabledFeatures: []string{"bindings"},
		Binding: &k8sop.BindingCreate{EndpointSelectors: []string{`endpoint.name == "none" && endpoint.created_at > time.now.subtract("999999d")`}}}))(t)
	r = raw(t, srv, "GET", "/kubernetes_operators/"+op.ID+"/bound_endpoints", nil, "")
	if e := r.apiErr(t); r.status != http.StatusBadRequest || e.ErrorCode != acctapi.CodeBadFilter ||
		e.Details["field"] != "binding.endpoint_selectors[0]" || !strings.Contains(e.Msg, "timestamp out of range") {
		t.Errorf("a selector whose shift no endpoint reaches: %d %s, want 400 %s on binding.endpoint_selectors[0]", r.status, r.body, acctapi.CodeBadFilter)
	}
}

// TestSelectorURIAsTheCallerSeesIt pins a review's finding: selectors read
// an endpoint's uri under the fake's seeding base, which for acctfake is a
// placeholder no client sees, while the listing showed the uri under the
// host the client reached; a selector written from what the API returned
// matched nothing. They now read it as the listing request's answer shows
// it.
func TestSelectorURIAsTheCallerSeesIt(t *testing.T) {
	t.Parallel()
	srv, _ := start(t)
	must(fake.Seed[k8sop.Endpoint](srv, "", &k8sop.Endpoint{Name: "e", Bindings: []string{"kubernetes"}}))(t)
	const host = "other.example:8080"
	op := must(k8sop.NewOperators(srv.Client()).Create(t.Context(), &k8sop.OperatorCreate{EnabledFeatures: []string{"bindings"},
		Binding: &k8sop.BindingCreate{EndpointSelectors: []string{`endpoint.uri.startsWith("http://` + host + `/endpoints/")`}}}))(t)
	req := newRequest(t, srv, "GET", "/kubernetes_operators/"+op.ID+"/bound_endpoints", "")
	req.Header.Set("Authorization", "Bearer "+srv.APIKey())
	req.Header.Set("Service-Version", "2")
	req.Host = host
	r := roundTrip(t, srv, req)
	var page struct {
		Endpoints []k8sop.Endpoint `json:"endpoints"`
	}
	r.decode(t, &page)
	if r.status != 200 || len(page.Endpoints) != 1 || !strings.HasPrefix(page.Endpoints[0].URI, "http://"+host+"/") {
		t.Errorf("listing through %s: %d %.300s; want the endpoint, its uri under that host", host, r.status, r.body)
	}
}
