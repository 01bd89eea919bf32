package fake_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/acctapi/acctapi"
	"github.com/acctapi/acctapi/account"
	"github.com/acctapi/acctapi/backends"
	"github.com/acctapi/acctapi/events"
	"github.com/acctapi/acctapi/fake"
	"github.com/acctapi/acctapi/k8sop"
	"github.com/google/go-cmp/cmp"
)

// state is what the snapshot tests compare: every service user, API key
// and failover of the first account.
type state struct {
	Users     []account.ServiceUser
	Keys      []account.APIKey
	Failovers []backends.Failover
}

func stateOf(srv *fake.Server) state {
	return state{fake.List[account.ServiceUser](srv, ""), fake.List[account.APIKey](srv, ""), fake.List[backends.Failover](srv, "")}
}

// TestSnapshotRestore checks that Restore brings back exactly the state
// Snapshot saved, any number of times, tokens included.
func TestSnapshotRestore(t *testing.T) {
	t.Parallel()
	srv, _ := start(t)
	ctx := t.Context()
	users := account.NewServiceUsers(srv.Client())
	a := must(users.Create(ctx, &account.ServiceUserCreate{Name: "a"}))(t)
	key := must(account.NewAPIKeys(srv.Client()).Create(ctx, &account.APIKeyCreate{OwnerID: a.ID}))(t)
	hr := must(fake.Seed[backends.HTTPResponse](srv, "", &backends.HTTPResponseCreate{StatusCode: 200}))(t)
	must(fake.Seed[backends.Failover](srv, "", &backends.FailoverCreate{Backends: []string{hr.ID}}))(t)

	snap := srv.Snapshot()
	saved := stateOf(srv)

	for round := range 2 {
		// Change everything: delete a (and its key), rename, create more.
		must(users.Create(ctx, &account.ServiceUserCreate{Name: "b"}))(t)
		must(0, users.Delete(ctx, a.ID))(t)
		must(account.NewAPIKeys(srv.Client()).Create(ctx, &account.APIKeyCreate{}))(t)
		other := must(srv.AddAccount(fake.Account{}))(t)
		if cmp.Equal(saved, stateOf(srv)) {
			t.Fatalf("round %d: the changes did not change the state", round)
		}
		_, err := account.NewServiceUsers(clientFor(t, srv, *key.Token)).Page(ctx, nil)
		wantAPIError(t, err, http.StatusUnauthorized, acctapi.CodeInvalidToken)

		srv.Restore(snap)
		if diff := cmp.Diff(saved, stateOf(srv)); diff != "" {
			t.Errorf("round %d: state after Restore (-snapshot +restored):\n%s", round, diff)
		}
		// The accounts too (a mutation review found only TestReset
		// pinned them): the one added since is gone, and its token with it.
		if n := len(srv.Accounts()); n != 1 {
			t.Errorf("round %d: %d accounts after Restore, want the 1 of the snapshot", round, n)
		}
		_, err = account.NewServiceUsers(clientFor(t, srv, other.APIKeys[0])).Page(ctx, nil)
		wantAPIError(t, err, http.StatusUnauthorized, acctapi.CodeInvalidToken)
		// The API sees the restored state too: the name "a" is taken again
		// (and "b" free, or the next round could not create it), the
		// deleted key's token works again, the referenced backend is
		// referenced again.
		_, err = users.Create(ctx, &account.ServiceUserCreate{Name: "a"})
		wantAPIError(t, err, http.StatusConflict, acctapi.CodeNameTaken)
		if _, err := account.NewServiceUsers(clientFor(t, srv, *key.Token)).Get(ctx, a.ID); err != nil {
			t.Errorf("round %d: restored key: %v", round, err)
		}
		err = backends.NewHTTPResponses(srv.Client()).Delete(ctx, hr.ID)
		wantAPIError(t, err, http.StatusConflict, acctapi.CodeStillReferenced)
	}
	// A snapshot is not changed by what happens after it.
	must(users.Create(ctx, &account.ServiceUserCreate{Name: "c"}))(t)
	srv.Restore(snap)
	if diff := cmp.Diff(saved, stateOf(srv)); diff != "" {
		t.Errorf("third restore (-snapshot +restored):\n%s", diff)
	}
}

// TestRestoreMisuse checks that Restore panics, saying what is wrong, on
// a nil or zero snapshot and on a snapshot of another server, and leaves
// the server as it was: another server's snapshot would replace its
// accounts, and its clients would get 401s.
func TestRestoreMisuse(t *testing.T) {
	t.Parallel()
	a, _ := start(t)
	b, _ := start(t)
	must(fake.Seed[account.ServiceUser](b, "", &account.ServiceUserCreate{Name: "on-b"}))(t)
	before := stateOf(b)
	for _, tt := range []struct {
		name string
		snap *fake.Snapshot
		want string
	}{
		{"nil", nil, "fake: Restore: nil *Snapshot"},
		{"zero", new(fake.Snapshot), "fake: Restore: a zero Snapshot"},
		{"another server's", a.Snapshot(), "fake: Restore: the snapshot is of another server"},
	} {
		func() {
			defer func() {
				if msg := fmt.Sprint(recover()); !strings.Contains(msg, tt.want) {
					t.Errorf("Restore(%s snapshot): panic %q, want one with %q", tt.name, msg, tt.want)
				}
			}()
			b.Restore(tt.snap)
		}()
	}
	if diff := cmp.Diff(before, stateOf(b)); diff != "" {
		t.Errorf("state after the refused restores (-before +after):\n%s", diff)
	}
	if _, err := account.NewServiceUsers(b.Client()).Page(t.Context(), nil); err != nil {
		t.Errorf("b's client after the refused restores: %v", err)
	}
}

// TestReset checks that Reset keeps the accounts New made and their
// initial keys, and forgets everything else, journal and faults included.
func TestReset(t *testing.T) {
	t.Parallel()
	srv, _ := start(t,
		fake.WithAccount(fake.Account{ID: "ac_a", APIKeys: []string{"key-a1", "key-a2"}}),
		fake.WithAccount(fake.Account{ID: "ac_b", APIKeys: []string{"key-b"}}))
	ctx := t.Context()
	accounts := srv.Accounts()
	initialKeys := fake.List[account.APIKey](srv, "ac_a")

	must(fake.Seed[account.ServiceUser](srv, "ac_b", &account.ServiceUserCreate{Name: "x"}))(t)
	must(account.NewAPIKeys(clientFor(t, srv, "key-a1")).Create(ctx, &account.APIKeyCreate{}))(t)
	must(0, account.NewAPIKeys(clientFor(t, srv, "key-a1")).Delete(ctx, initialKeys[0].ID))(t)
	srv.FailNext("*", "/**", 100, http.StatusInternalServerError)
	must(srv.AddAccount(fake.Account{ID: "ac_late", APIKeys: []string{"key-late"}}))(t)

	srv.Reset()

	if diff := cmp.Diff(accounts, srv.Accounts()); diff != "" {
		t.Errorf("accounts after Reset (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(initialKeys, fake.List[account.APIKey](srv, "ac_a")); diff != "" {
		t.Errorf("keys after Reset (-want +got):\n%s", diff)
	}
	if n := len(fake.List[account.ServiceUser](srv, "ac_b")); n != 0 {
		t.Errorf("%d service users after Reset", n)
	}
	if _, err := fake.Seed[account.ServiceUser](srv, "ac_b", &account.ServiceUserCreate{Name: "x"}); err != nil {
		t.Errorf("the name of a service user Reset removed is still taken: %v", err)
	}
	if n := len(srv.Journal()); n != 0 {
		t.Errorf("%d journal entries after Reset", n)
	}
	for _, key := range []string{"key-a1", "key-a2", "key-b"} {
		if _, err := account.NewAPIKeys(clientFor(t, srv, key)).Page(ctx, nil); err != nil {
			t.Errorf("initial key %s after Reset: %v", key, err)
		}
	}
	_, err := account.NewAPIKeys(clientFor(t, srv, "key-late")).Page(ctx, nil)
	wantAPIError(t, err, http.StatusUnauthorized, acctapi.CodeInvalidToken)
}

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

func TestDelete(t *testing.T) {
	t.Parallel()
	srv, _ := start(t)
	ep, err := fake.Seed[k8sop.Endpoint](srv, "", &k8sop.Endpoint{URL: "https://a.example", Bindings: []string{"kubernetes"}})
	if err != nil {
		t.Fatal(err)
	}
	if err := fake.Delete[k8sop.Endpoint](srv, "", ep.ID); err != nil {
		t.Fatalf("Delete endpoint: %v", err)
	}
	if _, ok := fake.Get[k8sop.Endpoint](srv, "", ep.ID); ok {
		t.Error("endpoint still there after Delete")
	}
	if err := fake.Delete[k8sop.Endpoint](srv, "", ep.ID); err == nil || !strings.Contains(err.Error(), "404") {
		t.Errorf("second Delete = %v, want a 404 error", err)
	}

	// A deleted tunnel leaves the tunnel groups it was in.
	tn, err := fake.Seed[fake.Tunnel](srv, "", &fake.Tunnel{Labels: map[string]string{"app": "web"}})
	if err != nil {
		t.Fatal(err)
	}
	tg, err := fake.Seed[backends.TunnelGroup](srv, "", &backends.TunnelGroupCreate{Labels: map[string]string{"app": "web"}})
	if err != nil || len(tg.Tunnels) != 1 {
		t.Fatalf("tunnel group %+v, %v: want one tunnel", tg, err)
	}
	if err := fake.Delete[fake.Tunnel](srv, "", tn.ID); err != nil {
		t.Fatal(err)
	}
	if got, _ := fake.Get[backends.TunnelGroup](srv, "", tg.ID); len(got.Tunnels) != 0 {
		t.Errorf("tunnel group still lists %v", got.Tunnels)
	}

	// The API's rules hold: a referenced backend stays.
	hr, _ := fake.Seed[backends.HTTPResponse](srv, "", &backends.HTTPResponseCreate{StatusCode: 200})
	if _, err := fake.Seed[backends.Failover](srv, "", &backends.FailoverCreate{Backends: []string{hr.ID}}); err != nil {
		t.Fatal(err)
	}
	if err := fake.Delete[backends.HTTPResponse](srv, "", hr.ID); err == nil || !strings.Contains(err.Error(), acctapi.CodeStillReferenced) {
		t.Errorf("Delete of a referenced backend = %v, want %s", err, acctapi.CodeStillReferenced)
	}
	if err := fake.Delete[int](srv, "", "x"); err == nil {
		t.Error("Delete[int]: no error")
	}
}

// TestSeedValidates checks that Seed runs the API's validation and names
// the field at fault.
// TestSeedServerSetAndRefs checks that Seed refuses, naming the member, a
// tunnel or endpoint that sets what the server sets (once silently
// replaced), and an endpoint whose tunnel or principal is not the
// account's (once stored dangling); that an endpoint's principal is the
// account's user when it names none, or one of its service users; and that
// a tunnel an endpoint refers to stays while it does.
func TestSeedServerSetAndRefs(t *testing.T) {
	t.Parallel()
	srv, _ := start(t, fake.WithAccount(fake.Account{ID: "ac_one", APIKeys: []string{"one-key"}}),
		fake.WithAccount(fake.Account{ID: "ac_two", APIKeys: []string{"two-key"}}))
	tn := must(fake.Seed[fake.Tunnel](srv, "", &fake.Tunnel{}))(t)
	other := must(fake.Seed[fake.Tunnel](srv, "ac_two", &fake.Tunnel{}))(t)
	ci := must(fake.Seed[account.ServiceUser](srv, "", &account.ServiceUserCreate{Name: "ci"}))(t)
	otherUser := must(fake.Seed[account.ServiceUser](srv, "ac_two", &account.ServiceUserCreate{Name: "ci"}))(t)
	at := time.Date(2020, 1, 1, 0, 0, 0, 0, time.UTC)
	for _, tt := range []struct {
		name  string
		seed  func() error
		field string
	}{
		{"tunnel id", func() error { _, err := fake.Seed[fake.Tunnel](srv, "", &fake.Tunnel{ID: "tn_web"}); return err }, "id"},
		{"tunnel uri", func() error { _, err := fake.Seed[fake.Tunnel](srv, "", &fake.Tunnel{URI: "x"}); return err }, "uri"},
		{"tunnel created_at", func() error { _, err := fake.Seed[*fake.Tunnel](srv, "", &fake.Tunnel{CreatedAt: at}); return err }, "created_at"},
		{"endpoint id", func() error { _, err := fake.Seed[k8sop.Endpoint](srv, "", &k8sop.Endpoint{ID: "ep_web"}); return err }, "id"},
		{"endpoint created_at", func() error { _, err := fake.Seed[k8sop.Endpoint](srv, "", &k8sop.Endpoint{CreatedAt: at}); return err }, "created_at"},
		{"endpoint updated_at", func() error { _, err := fake.Seed[k8sop.Endpoint](srv, "", &k8sop.Endpoint{UpdatedAt: at}); return err }, "updated_at"},
		{"unknown tunnel", func() error {
			_, err := fake.Seed[k8sop.Endpoint](srv, "", &k8sop.Endpoint{Tunnel: &acctapi.Ref{ID: "tn_web"}})
			return err
		}, "tunnel.id"},
		{"another account's tunnel", func() error {
			_, err := fake.Seed[k8sop.Endpoint](srv, "", &k8sop.Endpoint{Tunnel: &acctapi.Ref{ID: other.ID}})
			return err
		}, "tunnel.id"},
		{"unknown principal", func() error {
			_, err := fake.Seed[k8sop.Endpoint](srv, "", &k8sop.Endpoint{Principal: acctapi.Ref{ID: "usr_nobody"}})
			return err
		}, "principal.id"},
		{"another account's service user", func() error {
			_, err := fake.Seed[k8sop.Endpoint](srv, "", &k8sop.Endpoint{Principal: acctapi.Ref{ID: otherUser.ID}})
			return err
		}, "principal.id"},
		{"another account's user", func() error {
			_, err := fake.Seed[k8sop.Endpoint](srv, "", &k8sop.Endpoint{Principal: acctapi.Ref{ID: srv.Accounts()[1].UserID}})
			return err
		}, "principal.id"},
	} {
		err := tt.seed()
		if fes := acctapi.FieldErrors(err); len(fes) != 1 || fes[0].Field != tt.field || !errors.Is(err, acctapi.ErrInvalid) {
			t.Errorf("%s: %v, want an invalid-value error on %s", tt.name, err, tt.field)
		}
	}
	if n := len(fake.List[k8sop.Endpoint](srv, "")); n != 0 {
		t.Errorf("%d endpoints stored after refused seeds", n)
	}
	byUser := must(fake.Seed[k8sop.Endpoint](srv, "", &k8sop.Endpoint{Tunnel: &acctapi.Ref{ID: tn.ID}}))(t)
	byCI := must(fake.Seed[k8sop.Endpoint](srv, "", &k8sop.Endpoint{Principal: acctapi.Ref{ID: ci.ID}}))(t)
	if user := srv.Accounts()[0].UserID; byUser.Principal.ID != user || byCI.Principal.ID != ci.ID {
		t.Errorf("principals %q and %q, want the account's user %q and the service user %q", byUser.Principal.ID, byCI.Principal.ID, user, ci.ID)
	}
	// The references carry their uris as everywhere else: the tunnel's
	// (as in a tunnel group), a service user's; a user's is empty (the
	// real service's operators). A review found the tunnel's empty.
	if !strings.HasSuffix(byUser.Tunnel.URI, "/tunnels/"+tn.ID) || byUser.Principal.URI != "" ||
		!strings.HasSuffix(byCI.Principal.URI, "/service_users/"+ci.ID) {
		t.Errorf("uris: tunnel %q, user %q, service user %q", byUser.Tunnel.URI, byUser.Principal.URI, byCI.Principal.URI)
	}
	if err := fake.Delete[fake.Tunnel](srv, "", tn.ID); err == nil || !strings.Contains(err.Error(), acctapi.CodeStillReferenced) {
		t.Errorf("Delete of a tunnel an endpoint refers to: %v, want %s", err, acctapi.CodeStillReferenced)
	}
	must(0, fake.Delete[k8sop.Endpoint](srv, "", byUser.ID))(t)
	must(0, fake.Delete[fake.Tunnel](srv, "", tn.ID))(t)
}

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
		}, []string{"name", acctapi.CodeNameRequired}},
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
			_, err := fake.Seed[events.Destination](srv, "", &events.DestinationCreate{Format: events.FormatJSON, Target: events.Target{Kinesis: &events.Kinesis{StreamARN: "s",
				Auth: &events.CloudAuth{Role: &events.Role{}}}}})
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
		{"text that is not UTF-8", func() error {
			// JSON would turn the byte into U+FFFD: once stored changed.
			_, err := fake.Seed[backends.HTTPResponse](srv, "", &backends.HTTPResponseCreate{StatusCode: 200, Body: "a\xffb"})
			return err
		}, []string{"body", "UTF-8"}},
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
	// Seed's errors are matched as the client's are (an SDK review found
	// them flattened into text).
	_, err := fake.Seed[account.ServiceUser](srv, "", &account.ServiceUserCreate{})
	if fes := acctapi.FieldErrors(err); !acctapi.HasCode(err, acctapi.CodeNameRequired) || !errors.Is(err, acctapi.ErrInvalid) ||
		len(fes) != 1 || fes[0].Field != "name" {
		t.Errorf("missing name: %v; want a field error naming name, with its code, matching ErrInvalid", err)
	}
	_, err = fake.Seed[account.ServiceUser](srv, "", &account.ServiceUserCreate{Name: "taken"})
	var ae *acctapi.Error
	if !errors.As(err, &ae) || ae.StatusCode != 409 || !acctapi.HasCode(err, acctapi.CodeNameTaken) || ae.Details["field"] != "name" {
		t.Errorf("name taken: %v; want the API's 409 as an *acctapi.Error", err)
	}
	_, err = fake.Seed[backends.HTTPResponse](srv, "", &backends.HTTPResponseCreate{StatusCode: 200, Headers: map[string]string{"X": "v\xfe"}})
	if fes := acctapi.FieldErrors(err); len(fes) != 1 || fes[0].Field != "headers.X" {
		t.Errorf("header not UTF-8: %v; want a field error naming headers.X", err)
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

// TestGetAndListTypes checks Get and List with ids of another kind, and
// that both take the resource's type and a pointer to it, as every typed
// client returns it.
func TestGetAndListTypes(t *testing.T) {
	t.Parallel()
	srv, _ := start(t)
	u := must(fake.Seed[account.ServiceUser](srv, "", &account.ServiceUserCreate{Name: "a"}))(t)
	if _, ok := fake.Get[account.APIKey](srv, "", "ak_nope"); ok {
		t.Error("Get[APIKey] found a key that does not exist")
	}
	// An unknown account, and another type's id, panic: TestUnknownResourceType.
	if got, ok := fake.Get[account.ServiceUser](srv, srv.Accounts()[0].ID, u.ID); !ok || got.Name != "a" {
		t.Errorf("Get by the account's id: %+v %v", got, ok)
	}
	p, ok := fake.Get[*account.ServiceUser](srv, "", u.ID)
	if !ok || p == nil || *p != u {
		t.Errorf("Get[*ServiceUser] = %+v, %v; want %+v", p, ok, u)
	}
	if ps := fake.List[*account.ServiceUser](srv, ""); len(ps) != 1 || *ps[0] != u {
		t.Errorf("List[*ServiceUser] = %v; want [%+v]", ps, u)
	}
	// The pointer is a copy: changing it changes nothing stored.
	p.Name = "changed"
	if again, _ := fake.Get[account.ServiceUser](srv, "", u.ID); again.Name != "a" {
		t.Errorf("after changing Get's pointer, the stored name is %q", again.Name)
	}
	sp := must(fake.Seed[*account.ServiceUser](srv, "", &account.ServiceUserCreate{Name: "b"}))(t)
	if got, ok := fake.Get[account.ServiceUser](srv, "", sp.ID); !ok || got.Name != "b" {
		t.Errorf("Seed[*ServiceUser] stored %+v, %v", got, ok)
	}
	if err := fake.Delete[*account.ServiceUser](srv, "", sp.ID); err != nil {
		t.Errorf("Delete[*ServiceUser]: %v", err)
	}
	if _, ok := fake.Get[*account.ServiceUser](srv, "", sp.ID); ok {
		t.Error("Delete[*ServiceUser] left the user")
	}
}

// TestUnknownResourceType: Get and List panic, naming the type and the
// known ones, on a type that is not a resource; Seed and Delete return
// an error that does the same. None answers as if nothing were stored.
func TestUnknownResourceType(t *testing.T) {
	t.Parallel()
	srv, _ := start(t)
	u := must(fake.Seed[account.ServiceUser](srv, "", &account.ServiceUserCreate{Name: "a"}))(t)
	wantPanic := func(name, typ string, f func()) {
		t.Helper()
		defer func() {
			t.Helper()
			msg := fmt.Sprint(recover())
			if !strings.Contains(msg, typ+" is not a resource type") || !strings.Contains(msg, "account.ServiceUser") {
				t.Errorf("%s: panic %q, want one naming %s and the known types", name, msg, typ)
			}
		}()
		f()
	}
	wantPanic("Get[ServiceUserCreate]", "account.ServiceUserCreate", func() { fake.Get[account.ServiceUserCreate](srv, "", u.ID) })
	wantPanic("Get[**ServiceUser]", "**account.ServiceUser", func() { fake.Get[**account.ServiceUser](srv, "", u.ID) })
	wantPanic("List[int]", "int", func() { fake.List[int](srv, "") })
	wantPanic("List[string]", "string", func() { fake.List[string](srv, "") })
	if _, err := fake.Seed[int](srv, "", &account.ServiceUserCreate{Name: "b"}); err == nil || !strings.Contains(err.Error(), "account.ServiceUser") {
		t.Errorf("Seed[int]: %v, want an error naming the known types", err)
	}
	if err := fake.Delete[int](srv, "", u.ID); err == nil || !strings.Contains(err.Error(), "int is not a resource type") {
		t.Errorf("Delete[int]: %v", err)
	}
	// A mistyped account is as much a mistake as a wrong type: an answer of
	// "nothing there" would let "the key is gone" pass whatever happened.
	wantAccountPanic := func(name string, f func()) {
		t.Helper()
		defer func() {
			t.Helper()
			if msg := fmt.Sprint(recover()); !strings.Contains(msg, `no account "acct_typo"`) {
				t.Errorf("%s: panic %q, want one naming the unknown account", name, msg)
			}
		}()
		f()
	}
	wantAccountPanic("Get", func() { fake.Get[account.ServiceUser](srv, "acct_typo", u.ID) })
	wantAccountPanic("List", func() { fake.List[*account.ServiceUser](srv, "acct_typo") })

	// So is another type's id: "the user is gone" must not pass because
	// the key's id was given.
	key := must(fake.Seed[account.APIKey](srv, "", &account.APIKeyCreate{}))(t)
	func() {
		defer func() {
			if msg := fmt.Sprint(recover()); !strings.Contains(msg, `Get: id "`+key.ID+`" is not one of service_users, whose ids start service_`) {
				t.Errorf("Get[ServiceUser] of an API key's id: panic %q", msg)
			}
		}()
		fake.Get[account.ServiceUser](srv, "", key.ID)
	}()
	if err := fake.Delete[account.ServiceUser](srv, "", key.ID); err == nil || !strings.Contains(err.Error(), "is not one of service_users") {
		t.Errorf("Delete[ServiceUser] of an API key's id: %v", err)
	}
	// So is an id without the type's prefix, or none at all: the fake
	// stores no such id, and "not found" would pass for a test that passed
	// the wrong variable. The bot-user alias shares the service users' ids.
	for _, id := range []string{"", "nope", "service", "Service_x"} {
		func() {
			defer func() {
				if msg := fmt.Sprint(recover()); !strings.Contains(msg, fmt.Sprintf(`Get: id %q is not one of service_users, whose ids start service_`, id)) {
					t.Errorf("Get[ServiceUser](%q): panic %q", id, msg)
				}
			}()
			fake.Get[account.ServiceUser](srv, "", id)
		}()
		if err := fake.Delete[account.ServiceUser](srv, "", id); err == nil || !strings.Contains(err.Error(), "is not one of service_users") {
			t.Errorf("Delete[ServiceUser](%q): %v", id, err)
		}
	}
	if _, ok := fake.Get[account.ServiceUser](srv, "", "service_nope"); ok {
		t.Error("Get of an unknown id found something")
	}
	//lint:ignore SA1019 the deprecated alias shares the service users' ids on purpose
	if _, ok := fake.Get[account.BotUser](srv, "", u.ID); !ok {
		t.Error("Get[BotUser] of a service user's id: not found")
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

// TestIsolation checks that two accounts never see each other's
// resources: another account's id is 404 for get, update and delete, lists
// never show it, and references to it are refused.
func TestIsolation(t *testing.T) {
	t.Parallel()
	srv, _ := start(t,
		fake.WithAccount(fake.Account{ID: "ac_one", APIKeys: []string{"key-one"}}),
		fake.WithAccount(fake.Account{ID: "ac_two", APIKeys: []string{"key-two"}}))
	ctx := t.Context()
	one := clientFor(t, srv, "key-one")
	two := must(acctapi.NewClient("key-two", acctapi.WithBaseURL(srv.URL), acctapi.WithHTTPClient(srv.HTTPClient())))(t)

	// Resources of account one, made over HTTP and by seeding.
	su := must(account.NewServiceUsers(one).Create(ctx, &account.ServiceUserCreate{Name: "shared-name"}))(t)
	key := must(account.NewAPIKeys(one).Create(ctx, &account.APIKeyCreate{Description: "one"}))(t)
	hr := must(backends.NewHTTPResponses(one).Create(ctx, &backends.HTTPResponseCreate{StatusCode: 200}))(t)
	fo := must(backends.NewFailovers(one).Create(ctx, &backends.FailoverCreate{Backends: []string{hr.ID}}))(t)
	must(fake.Seed[fake.Tunnel](srv, "ac_one", &fake.Tunnel{Labels: map[string]string{"app": "x"}}))(t)
	tg := must(fake.Seed[backends.TunnelGroup](srv, "ac_one", &backends.TunnelGroupCreate{Labels: map[string]string{"app": "x"}}))(t)
	dst := must(fake.Seed[events.Destination](srv, "ac_one", &events.DestinationCreate{Format: events.FormatJSON,
		Target: events.Target{Monitoring: &events.Monitoring{APIKey: "k"}}}))(t)
	sub := must(fake.Seed[events.Subscription](srv, "ac_one", &events.SubscriptionCreate{
		Sources: []events.SubscriptionSource{{Type: "vault_created.v0"}}}))(t)
	op := must(fake.Seed[k8sop.Operator](srv, "ac_one", &k8sop.OperatorCreate{}))(t)
	ca := must(fake.Seed[account.CertificateAuthority](srv, "ac_one", &account.CertificateAuthorityCreate{CAPEM: newCA(t, "one", t0, t0.AddDate(1, 0, 0))}))(t)

	// Names are unique per account only.
	must(account.NewServiceUsers(two).Create(ctx, &account.ServiceUserCreate{Name: "shared-name"}))(t)
	// A tunnel of account one never joins account two's group.
	tg2 := must(backends.NewTunnelGroups(two).Create(ctx, &backends.TunnelGroupCreate{Labels: map[string]string{"app": "x"}}))(t)
	if len(tg2.Tunnels) != 0 || len(tg.Tunnels) != 1 {
		t.Errorf("tunnels: account two's group %v, account one's %v", tg2.Tunnels, tg.Tunnels)
	}

	items := []struct {
		path, id, patch string
	}{
		{"/service_users", su.ID, `{"name":"stolen"}`},
		{"/bot_users", su.ID, `{"name":"stolen"}`},
		{"/api_keys", key.ID, `{"description":"stolen"}`},
		{"/backends/http_response", hr.ID, `{"status_code":500}`},
		{"/backends/failover", fo.ID, `{"backends":[]}`},
		{"/backends/tunnel_group", tg.ID, `{"labels":{"a":"b"}}`},
		{"/event_destinations", dst.ID, `{"description":"stolen"}`},
		{"/event_subscriptions", sub.ID, `{"description":"stolen"}`},
		{"/kubernetes_operators", op.ID, `{"description":"stolen"}`},
		{"/certificate_authorities", ca.ID, `{"description":"stolen"}`},
	}
	for _, it := range items {
		t.Run(it.path, func(t *testing.T) {
			for _, m := range []struct{ method, body string }{{"GET", ""}, {"PATCH", it.patch}, {"DELETE", ""}} {
				r := raw(t, srv, m.method, it.path+"/"+it.id, map[string]string{"Authorization": "Bearer key-two"}, m.body)
				if r.status != http.StatusNotFound || r.apiErr(t).ErrorCode != acctapi.CodeNotFound {
					t.Errorf("%s as account two: %d %s, want 404 %s", m.method, r.status, r.body, acctapi.CodeNotFound)
				}
			}
			// Account two's list never shows it; account one's does.
			var page map[string]any
			r := raw(t, srv, "GET", it.path, map[string]string{"Authorization": "Bearer key-two"}, "")
			r.decode(t, &page)
			if slices.Contains(listIDs(page), it.id) {
				t.Errorf("account two lists %s", it.id)
			}
			raw(t, srv, "GET", it.path, map[string]string{"Authorization": "Bearer key-one"}, "").decode(t, &page)
			if !slices.Contains(listIDs(page), it.id) {
				t.Errorf("account one does not list %s: %v", it.id, page)
			}
		})
	}
	// Nested paths of another account's resources are 404 too.
	for _, path := range []string{
		"/event_subscriptions/" + sub.ID + "/sources",
		"/event_subscriptions/" + sub.ID + "/sources/vault_created.v0",
		"/kubernetes_operators/" + op.ID + "/bound_endpoints",
	} {
		if r := raw(t, srv, "GET", path, map[string]string{"Authorization": "Bearer key-two"}, ""); r.status != 404 {
			t.Errorf("GET %s as account two: %d, want 404", path, r.status)
		}
	}

	// References across accounts are refused as if the id did not exist.
	_, err := backends.NewFailovers(two).Create(ctx, &backends.FailoverCreate{Backends: []string{hr.ID}})
	wantAPIError(t, err, http.StatusBadRequest, acctapi.CodeUnknownBackend)
	_, err = events.NewSubscriptions(two).Create(ctx, &events.SubscriptionCreate{DestinationIDs: []string{dst.ID}})
	wantAPIError(t, err, http.StatusBadRequest, acctapi.CodeUnknownDestination)
	_, err = account.NewAPIKeys(two).Create(ctx, &account.APIKeyCreate{OwnerID: su.ID})
	wantAPIError(t, err, http.StatusBadRequest, acctapi.CodeInvalidValue)

	// Nothing of account one changed.
	if got, ok := fake.Get[account.ServiceUser](srv, "ac_one", su.ID); !ok || got.Name != "shared-name" {
		t.Errorf("account one's service user: %+v %v", got, ok)
	}
	if _, ok := fake.Get[account.ServiceUser](srv, "ac_two", su.ID); ok {
		t.Error("fake.Get finds account one's service user in account two")
	}
	// The inspection API sees per account as well.
	if diff := cmp.Diff([]string{"shared-name"}, idsOf(fake.List[account.ServiceUser](srv, "ac_two"), func(u account.ServiceUser) string { return u.Name })); diff != "" {
		t.Errorf("account two's service users (-want +got):\n%s", diff)
	}
	if _, err := fake.Seed[account.ServiceUser](srv, "ac_three", &account.ServiceUserCreate{Name: "x"}); err == nil {
		t.Error("Seed into an unknown account succeeded")
	}
}

// listIDs returns the ids of a decoded list page, whatever its member.
func listIDs(page map[string]any) []string {
	var ids []string
	for k, v := range page {
		if k == "uri" || k == "next_page_uri" {
			continue
		}
		items, _ := v.([]any)
		for _, it := range items {
			if m, ok := it.(map[string]any); ok {
				id, _ := m["id"].(string)
				ids = append(ids, id)
			}
		}
	}
	return ids
}

// TestAccountKeysUnique checks that an API key token names one key of one
// account: a token given twice is refused, and the first holder keeps it.
func TestAccountKeysUnique(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		name     string
		accounts []fake.Account
	}{
		{"two accounts", []fake.Account{{ID: "ac_a", APIKeys: []string{"k"}}, {ID: "ac_b", APIKeys: []string{"k"}}}},
		{"one account", []fake.Account{{ID: "ac_a", APIKeys: []string{"k", "k"}}}},
		{"same account id", []fake.Account{{ID: "ac_a", APIKeys: []string{"k1"}}, {ID: "ac_a", APIKeys: []string{"k2"}}}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			var opts []fake.Option
			for _, a := range tt.accounts {
				opts = append(opts, fake.WithAccount(a))
			}
			if srv, err := fake.New(append(opts, fake.WithoutListener())...); err == nil {
				srv.Close()
				t.Fatalf("New(%+v) succeeded", tt.accounts)
			}
		})
	}

	srv, _ := start(t, fake.WithAccount(fake.Account{ID: "ac_a", APIKeys: []string{"k"}}))
	su := must(fake.Seed[account.ServiceUser](srv, "ac_a", &account.ServiceUserCreate{Name: "mine"}))(t)
	if _, err := srv.AddAccount(fake.Account{ID: "ac_b", APIKeys: []string{"fresh", "k"}}); err == nil {
		t.Fatal("AddAccount with a token in use succeeded")
	}
	if n := len(srv.Accounts()); n != 1 {
		t.Errorf("%d accounts after a refused AddAccount", n)
	}
	// "k" still reaches account a, and the refused account's keys none.
	must(account.NewServiceUsers(clientFor(t, srv, "k")).Get(t.Context(), su.ID))(t)
	_, err := account.NewServiceUsers(clientFor(t, srv, "fresh")).Page(t.Context(), nil)
	wantAPIError(t, err, http.StatusUnauthorized, acctapi.CodeInvalidToken)
	added := must(srv.AddAccount(fake.Account{APIKeys: []string{"other"}}))(t)
	if !strings.HasPrefix(added.ID, "ac_") || !strings.HasPrefix(added.UserID, "usr_") {
		t.Errorf("added account %+v, want ids made up", added)
	}
}

// TestAccountChecked: an account's id, user id and tokens are checked
// where accounts are made (WithAccount, AddAccount, fixtures), with an
// acctapi.FieldError naming the member and never quoting a token.
func TestAccountChecked(t *testing.T) {
	t.Parallel()
	srv, _ := start(t)
	for _, tt := range []struct {
		a     fake.Account
		field string
	}{
		{fake.Account{ID: "ac_a b"}, "id"},
		{fake.Account{ID: "acct_1"}, "id"},
		{fake.Account{ID: "ac_" + strings.Repeat("x", 65)}, "id"},
		{fake.Account{UserID: "u1"}, "user_id"},
		{fake.Account{UserID: "usr_"}, "user_id"},
		{fake.Account{APIKeys: []string{"fine", ""}}, "api_keys[1]"},
		{fake.Account{APIKeys: []string{"tab\tsecret"}}, "api_keys[0]"},
		{fake.Account{APIKeys: []string{"ünïcode-secret"}}, "api_keys[0]"},
		{fake.Account{APIKeys: []string{strings.Repeat("s", fake.MaxTokenBytes+1)}}, "api_keys[0]"},
		{fake.Account{APIKeys: []string{srv.APIKey()}}, "api_keys[0]"}, // in use
		{fake.Account{ID: srv.Accounts()[0].ID}, "id"},                 // in use
	} {
		_, err := srv.AddAccount(tt.a)
		var fe *acctapi.FieldError
		if !errors.As(err, &fe) || fe.Field != tt.field || strings.Contains(err.Error(), "secret") {
			t.Errorf("AddAccount(%.80v): %v, want a FieldError for %s", tt.a, err, tt.field)
		}
		if tt.field == "id" && strings.HasPrefix(tt.a.ID, "ac_") && tt.a.ID == srv.Accounts()[0].ID {
			continue // in use: only AddAccount can know
		}
		if tt.a.APIKeys != nil && tt.a.APIKeys[0] == srv.APIKey() {
			continue
		}
		if _, err := fake.New(fake.WithoutListener(), fake.WithAccount(tt.a)); !errors.As(err, &fe) || fe.Field != tt.field {
			t.Errorf("WithAccount(%.80v): %v, want a FieldError for %s", tt.a, err, tt.field)
		}
	}
	if n := len(srv.Accounts()); n != 1 {
		t.Errorf("%d accounts after refused ones", n)
	}
	if _, err := srv.AddAccount(fake.Account{ID: "ac_ok-1_B", UserID: "usr_ok", APIKeys: []string{strings.Repeat("s", fake.MaxTokenBytes)}}); err != nil {
		t.Errorf("a valid account: %v", err)
	}
}
