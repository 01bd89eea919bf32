package fake_test

import (
	"context"
	"errors"
	"net/url"
	"strings"
	"sync"
	"testing"

	"github.com/acctapi/acctapi"
	"github.com/acctapi/acctapi/account"
	"github.com/acctapi/acctapi/backends"
	"github.com/acctapi/acctapi/fake"
	"github.com/acctapi/acctapi/k8sop"
)

// TestWritesWithSnapshots runs key creation, which reads the account's
// user inside its write, alongside Snapshot, Restore and AddAccount, which
// take the server's lock: it must not deadlock (go test's timeout would
// catch it) and must stay race-free.
func TestWritesWithSnapshots(t *testing.T) {
	t.Parallel()
	srv, _ := start(t)
	keys := account.NewAPIKeys(srv.Client())
	snap := srv.Snapshot()
	var wg sync.WaitGroup
	for range 4 {
		wg.Go(func() {
			for range 50 {
				if _, err := keys.Create(context.Background(), &account.APIKeyCreate{}); err != nil {
					t.Error(err)
					return
				}
			}
		})
	}
	wg.Go(func() {
		for i := range 50 {
			srv.Snapshot()
			if i%10 == 0 {
				srv.Restore(snap)
				if _, err := srv.AddAccount(fake.Account{}); err != nil {
					t.Error(err)
				}
			}
		}
	})
	wg.Wait()
}

func TestFailoverLoopRefused(t *testing.T) {
	t.Parallel()
	srv, _ := start(t)
	ctx := context.Background()
	fo := backends.NewFailovers(srv.Client(acctapi.WithoutValidation()))
	hr, err := fake.Seed[backends.HTTPResponse](srv, "", &backends.HTTPResponseCreate{StatusCode: 200})
	if err != nil {
		t.Fatal(err)
	}
	a, err := fo.Create(ctx, &backends.FailoverCreate{Backends: []string{hr.ID}})
	if err != nil {
		t.Fatal(err)
	}
	b, err := fo.Create(ctx, &backends.FailoverCreate{Backends: []string{a.ID}})
	if err != nil {
		t.Fatal(err)
	}
	_, err = fo.Update(ctx, &backends.FailoverUpdate{ID: a.ID, Backends: &[]string{hr.ID, b.ID}})
	var e *acctapi.Error
	if !errors.As(err, &e) || e.ErrorCode != acctapi.CodeInvalidValue || e.Details["field"] != "backends[1]" {
		t.Fatalf("update making a loop: %v, want 400 on backends[1]", err)
	}
	// Both can still be deleted, newest first.
	if err := fo.Delete(ctx, b.ID); err != nil {
		t.Fatal(err)
	}
	if err := fo.Delete(ctx, a.ID); err != nil {
		t.Fatal(err)
	}
}

func TestBodyIDAnySpelling(t *testing.T) {
	t.Parallel()
	srv, _ := start(t)
	u, err := fake.Seed[account.ServiceUser](srv, "", &account.ServiceUserCreate{Name: "a"})
	if err != nil {
		t.Fatal(err)
	}
	for _, member := range []string{"id", "Id", "ID"} {
		r := raw(t, srv, "PATCH", "/service_users/"+u.ID, nil, `{"`+member+`":"service_other","name":"b"}`)
		if r.status != 400 {
			t.Errorf("%s naming another id: status %d, want 400", member, r.status)
		}
	}
	if got, _ := fake.Get[account.ServiceUser](srv, "", u.ID); got.Name != "a" {
		t.Errorf("name changed to %q", got.Name)
	}
}

func TestFilterIDSubstringAnywhere(t *testing.T) {
	t.Parallel()
	srv, _ := start(t)
	for _, f := range []string{`obj.id.startsWith("service_")`, `string(obj.id).startsWith("service_")`, `(obj.id + "").contains("x")`} {
		r := raw(t, srv, "GET", "/service_users?filter="+url.QueryEscape(f), nil, "")
		if r.status != 400 || r.apiErr(t).ErrorCode != acctapi.CodeBadFilter {
			t.Errorf("filter %s: status %d %s, want 400 %s", f, r.status, r.body, acctapi.CodeBadFilter)
		}
	}
}

func TestQueryErrorsDeterministic(t *testing.T) {
	t.Parallel()
	srv, _ := start(t)
	for range 20 {
		r := raw(t, srv, "GET", "/service_users?foo=1&limit=1&limit=2", nil, "")
		if got := r.apiErr(t).ErrorCode; got != acctapi.CodeUnknownQueryParam {
			t.Fatalf("error code %s, want %s every time", got, acctapi.CodeUnknownQueryParam)
		}
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

func TestAccountErrorsNameNoKey(t *testing.T) {
	t.Parallel()
	for _, opts := range [][]fake.Option{
		{fake.WithAccount(fake.Account{APIKeys: []string{"has space-secret"}})},
		{fake.WithAccount(fake.Account{APIKeys: []string{"dup-secret"}}), fake.WithAccount(fake.Account{APIKeys: []string{"dup-secret"}})},
	} {
		_, err := fake.New(append(opts, fake.WithoutListener())...)
		if err == nil || strings.Contains(err.Error(), "secret") {
			t.Errorf("error %v: want an error that does not quote the key", err)
		}
	}
}
