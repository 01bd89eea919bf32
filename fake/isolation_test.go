package fake_test

import (
	"net/http"
	"slices"
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
	dst := must(fake.Seed[events.Destination](srv, "ac_one", &events.DestinationCreate{
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
