//lint:file-ignore SA1019 these tests exercise the deprecated bot-user alias on purpose.

package fake_test

import (
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"context"

	"github.com/acctapi/acctapi"
	"github.com/acctapi/acctapi/account"
	"github.com/acctapi/acctapi/fake"
)

// TestAPIKeysEndToEnd drives /api_keys through account.APIKeys: the token
// is shown once, gets and lists show null, updates change only what they
// name, and a deleted key's token stops authenticating at once.
func TestAPIKeysEndToEnd(t *testing.T) {
	t.Parallel()
	srv, _ := start(t)
	ctx := t.Context()
	keys := account.NewAPIKeys(srv.Client())
	user := srv.Accounts()[0].UserID

	created := must(keys.Create(ctx, &account.APIKeyCreate{Description: "ci", Metadata: `{"team":"a"}`}))(t)
	if created.Token == nil || *created.Token == "" {
		t.Fatalf("create: token = %v, want the new key's token", created.Token)
	}
	token := *created.Token
	want := account.APIKey{ID: created.ID, URI: srv.URL + "/api_keys/" + created.ID, Description: "ci",
		Metadata: `{"team":"a"}`, CreatedAt: t0, OwnerID: user}
	if !strings.HasPrefix(created.ID, "ak_") {
		t.Errorf("id = %q, want prefix ak_", created.ID)
	}
	createdNoToken := *created
	createdNoToken.Token = nil
	if diff := cmp.Diff(want, createdNoToken); diff != "" {
		t.Errorf("create (-want +got):\n%s", diff)
	}

	if diff := cmp.Diff(want, *must(keys.Get(ctx, created.ID))(t)); diff != "" {
		t.Errorf("get (-want +got):\n%s", diff)
	}
	// token is null, not absent, in gets and lists.
	for _, path := range []string{"/api_keys/" + created.ID, "/api_keys"} {
		r := raw(t, srv, "GET", path, nil, "")
		if !strings.Contains(string(r.body), `"token":null`) || strings.Contains(string(r.body), token) {
			t.Errorf("GET %s: body %s, want token null and never the token", path, r.body)
		}
	}
	listed := collect(t, keys.List(ctx, nil))
	if i := slices.IndexFunc(listed, func(k account.APIKey) bool { return k.ID == created.ID }); i < 0 {
		t.Fatalf("list %v lacks %s", idsOf(listed, func(k account.APIKey) string { return k.ID }), created.ID)
	} else if diff := cmp.Diff(want, listed[i]); diff != "" {
		t.Errorf("listed (-want +got):\n%s", diff)
	}

	// The new token authenticates, as the same owner.
	own := account.NewAPIKeys(clientFor(t, srv, token))
	if _, err := own.Get(ctx, created.ID); err != nil {
		t.Fatalf("new token: %v", err)
	}

	// Update changes only the members sent.
	want.Description = "ci v2"
	updated := must(keys.Update(ctx, &account.APIKeyUpdate{ID: created.ID, Description: ptr("ci v2")}))(t)
	if diff := cmp.Diff(want, *updated); diff != "" {
		t.Errorf("update (-want +got):\n%s", diff)
	}

	// Delete: the token stops authenticating at once.
	if err := keys.Delete(ctx, created.ID); err != nil {
		t.Fatal(err)
	}
	_, err := own.Get(ctx, created.ID)
	wantAPIError(t, err, http.StatusUnauthorized, acctapi.CodeInvalidToken)
	_, err = keys.Get(ctx, created.ID)
	wantAPIError(t, err, http.StatusNotFound, acctapi.CodeNotFound)
}

// TestServiceUserKeys checks a service user's keys: they act as the
// service user, are rejected with 403 while it is inactive, work again when
// it is reactivated, and are deleted with it.
func TestServiceUserKeys(t *testing.T) {
	t.Parallel()
	srv, _ := start(t)
	ctx := t.Context()
	users := account.NewServiceUsers(srv.Client())
	keys := account.NewAPIKeys(srv.Client())

	su := must(users.Create(ctx, &account.ServiceUserCreate{Name: "deployer"}))(t)
	k := must(keys.Create(ctx, &account.APIKeyCreate{OwnerID: su.ID}))(t)
	if k.OwnerID != su.ID {
		t.Fatalf("owner_id = %q, want %q", k.OwnerID, su.ID)
	}
	asSU := clientFor(t, srv, *k.Token)
	// A key the service user creates belongs to it by default.
	k2 := must(account.NewAPIKeys(asSU).Create(ctx, &account.APIKeyCreate{Description: "own"}))(t)
	if k2.OwnerID != su.ID {
		t.Errorf("default owner_id = %q, want the caller's owner %q", k2.OwnerID, su.ID)
	}

	steps := []struct {
		name   string
		active bool
		status int // of a request with the service user's key; 0 for success
	}{
		{"inactive", false, http.StatusForbidden},
		{"active again", true, 0},
	}
	for _, st := range steps {
		must(users.Update(ctx, &account.ServiceUserUpdate{ID: su.ID, Active: &st.active}))(t)
		_, err := account.NewServiceUsers(asSU).Get(ctx, su.ID)
		if st.status == 0 {
			if err != nil {
				t.Errorf("%s: %v", st.name, err)
			}
			continue
		}
		wantAPIError(t, err, st.status, acctapi.CodeInactivePrincipal)
	}

	// Deleting the service user deletes its keys, and their tokens stop
	// working.
	if err := users.Delete(ctx, su.ID); err != nil {
		t.Fatal(err)
	}
	for _, id := range []string{k.ID, k2.ID} {
		_, err := keys.Get(ctx, id)
		wantAPIError(t, err, http.StatusNotFound, acctapi.CodeNotFound)
	}
	for _, key := range collect(t, keys.List(ctx, nil)) {
		if key.OwnerID == su.ID {
			t.Errorf("key %s of the deleted service user is still listed", key.ID)
		}
	}
	_, err := account.NewAPIKeys(asSU).Page(ctx, nil)
	wantAPIError(t, err, http.StatusUnauthorized, acctapi.CodeInvalidToken)

	// owner_id must be the account's user or one of its service users.
	_, err = keys.Create(ctx, &account.APIKeyCreate{OwnerID: su.ID})
	wantAPIError(t, err, http.StatusBadRequest, acctapi.CodeInvalidValue)
}

// TestServiceUsersEndToEnd drives /service_users through
// account.ServiceUsers.
func TestServiceUsersEndToEnd(t *testing.T) {
	t.Parallel()
	srv, clk := start(t)
	ctx := t.Context()
	users := account.NewServiceUsers(srv.Client())

	a := must(users.Create(ctx, &account.ServiceUserCreate{Name: "a"}))(t)
	clk.Advance(time.Minute)
	off := false
	b := must(users.Create(ctx, &account.ServiceUserCreate{Name: "b", Active: &off}))(t)
	wantA := account.ServiceUser{ID: a.ID, URI: srv.URL + "/service_users/" + a.ID, Name: "a", Active: true, CreatedAt: t0}
	wantB := account.ServiceUser{ID: b.ID, URI: srv.URL + "/service_users/" + b.ID, Name: "b", Active: false, CreatedAt: t0.Add(time.Minute)}
	if !strings.HasPrefix(a.ID, "service_") {
		t.Errorf("id %q, want prefix service_", a.ID)
	}
	if diff := cmp.Diff(wantA, *must(users.Get(ctx, a.ID))(t)); diff != "" {
		t.Errorf("get (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]account.ServiceUser{wantB, wantA}, collect(t, users.List(ctx, nil))); diff != "" {
		t.Errorf("list (-want +got):\n%s", diff)
	}

	_, err := users.Create(ctx, &account.ServiceUserCreate{Name: "a"})
	wantAPIError(t, err, http.StatusConflict, acctapi.CodeNameTaken)
	wantDetailsField(t, err, "name") // as a 400's details do
	_, err = users.Update(ctx, &account.ServiceUserUpdate{ID: b.ID, Name: ptr("a")})
	wantAPIError(t, err, http.StatusConflict, acctapi.CodeNameTaken)
	wantDetailsField(t, err, "name")

	// Renaming frees the old name; keeping one's own name is no conflict.
	wantA.Name = "a2"
	if diff := cmp.Diff(wantA, *must(users.Update(ctx, &account.ServiceUserUpdate{ID: a.ID, Name: ptr("a2")}))(t)); diff != "" {
		t.Errorf("rename (-want +got):\n%s", diff)
	}
	must(users.Update(ctx, &account.ServiceUserUpdate{ID: a.ID, Name: ptr("a2")}))(t)
	must(users.Create(ctx, &account.ServiceUserCreate{Name: "a"}))(t)

	wantDeleted(ctx, t, b.ID, users.Delete, users.Get)
	err = users.Delete(ctx, b.ID)
	wantAPIError(t, err, http.StatusNotFound, acctapi.CodeNotFound)
	// The name of a deleted service user is free again.
	must(users.Create(ctx, &account.ServiceUserCreate{Name: "b"}))(t)
}

// TestBotUserAlias checks that /bot_users serves the service users' records
// with the deprecation headers, the list member bot_users, no filter, and
// uris under /bot_users (under /service_users on the service-user paths).
func TestBotUserAlias(t *testing.T) {
	t.Parallel()
	srv, _ := start(t)
	ctx := t.Context()
	bots := account.NewBotUsers(srv.Client())
	users := account.NewServiceUsers(srv.Client())

	bot := must(bots.Create(ctx, &account.BotUserCreate{Name: "legacy"}))(t)
	if !strings.HasPrefix(bot.ID, "service_") {
		t.Errorf("bot user id %q, want prefix service_", bot.ID)
	}
	su := must(users.Get(ctx, bot.ID))(t)
	botURI, userURI := srv.URL+"/bot_users/"+bot.ID, srv.URL+"/service_users/"+bot.ID
	if bot.URI != botURI || su.URI != userURI {
		t.Errorf("uris: created on /bot_users %q, want %q; read on /service_users %q, want %q", bot.URI, botURI, su.URI, userURI)
	}
	asUser := *bot
	asUser.URI = su.URI
	if diff := cmp.Diff(asUser, *su); diff != "" {
		t.Errorf("bot user vs service user but the uri (-bot +service):\n%s", diff)
	}
	if got := must(bots.Get(ctx, bot.ID))(t).URI; got != botURI {
		t.Errorf("GET /bot_users/{id} uri %q, want %q", got, botURI)
	}
	other := must(users.Create(ctx, &account.ServiceUserCreate{Name: "modern"}))(t)
	if other.URI != srv.URL+"/service_users/"+other.ID {
		t.Errorf("created on /service_users: uri %q", other.URI)
	}
	botList := collect(t, bots.List(ctx, nil))
	if diff := cmp.Diff([]string{srv.URL + "/bot_users/" + other.ID, botURI}, idsOf(botList, func(u account.BotUser) string { return u.URI })); diff != "" {
		t.Errorf("bot list uris (-want +got):\n%s", diff)
	}
	userList := collect(t, users.List(ctx, nil))
	if diff := cmp.Diff([]string{other.URI, userURI}, idsOf(userList, func(u account.ServiceUser) string { return u.URI })); diff != "" {
		t.Errorf("service user list uris (-want +got):\n%s", diff)
	}
	if got := must(bots.Update(ctx, &account.BotUserUpdate{ID: bot.ID, Name: ptr("legacy")}))(t).URI; got != botURI {
		t.Errorf("PATCH /bot_users/{id} uri %q, want %q", got, botURI)
	}
	// Same rules: names are unique across both paths.
	_, err := bots.Create(ctx, &account.BotUserCreate{Name: "modern"})
	wantAPIError(t, err, http.StatusConflict, acctapi.CodeNameTaken)

	link := `<` + srv.URL + `/service_users>; rel="successor-version"`
	for _, tt := range []struct {
		name, method, path, body string
		status                   int
		deprecated               bool
	}{
		{"list", "GET", "/bot_users", "", 200, true},
		{"get", "GET", "/bot_users/" + bot.ID, "", 200, true},
		{"update", "PATCH", "/bot_users/" + bot.ID, `{"active":false}`, 200, true},
		{"not found", "GET", "/bot_users/service_nope", "", 404, true},
		{"no filter", "GET", "/bot_users?filter=true", "", 400, true},
		{"method not allowed", "PUT", "/bot_users/" + bot.ID, "", 405, true},
		{"trailing slash", "GET", "/bot_users/", "", 404, false},
		{"successor has no headers", "GET", "/service_users/" + bot.ID, "", 200, false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			r := raw(t, srv, tt.method, tt.path, nil, tt.body)
			if r.status != tt.status {
				t.Fatalf("status %d, want %d: %s", r.status, tt.status, r.body)
			}
			got := []string{r.header.Get("Deprecation"), r.header.Get("Link")}
			want := []string{"", ""}
			if tt.deprecated {
				want = []string{"true", link}
			}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("Deprecation, Link (-want +got):\n%s", diff)
			}
		})
	}
	r := raw(t, srv, "GET", "/bot_users", nil, "")
	var page map[string]any
	r.decode(t, &page)
	if _, ok := page["bot_users"]; !ok {
		t.Errorf("bot list members %v, want bot_users", page)
	}
	if _, ok := page["service_users"]; ok {
		t.Errorf("bot list has service_users: %s", r.body)
	}
	if got := page["uri"]; got != srv.URL+"/bot_users" {
		t.Errorf("bot list uri = %v", got)
	}

	wantDeleted(ctx, t, bot.ID, bots.Delete, users.Get)
}

// TestCertificateAuthoritiesEndToEnd uploads a CA made in the test and
// checks what the server reads from it.
func TestCertificateAuthoritiesEndToEnd(t *testing.T) {
	t.Parallel()
	srv, _ := start(t)
	ctx := t.Context()
	cas := account.NewCertificateAuthorities(srv.Client())
	nb, na := t0.Add(-time.Hour), t0.Add(365*24*time.Hour)
	pemText := newCA(t, "test root", nb, na)

	ca := must(cas.Create(ctx, &account.CertificateAuthorityCreate{Description: "mtls", CAPEM: pemText}))(t)
	want := account.CertificateAuthority{ID: ca.ID, URI: srv.URL + "/certificate_authorities/" + ca.ID, CreatedAt: t0,
		Description: "mtls", CAPEM: pemText, CAInfo: account.CAInfo{
			SubjectCommonName: "test root", NotBefore: nb, NotAfter: na,
			KeyUsages:         []string{"digital_signature", "cert_sign", "crl_sign"},
			ExtendedKeyUsages: []string{"server_auth", "client_auth"},
		}}
	if !strings.HasPrefix(ca.ID, "ca_") {
		t.Errorf("id %q, want prefix ca_", ca.ID)
	}
	if diff := cmp.Diff(want, *ca); diff != "" {
		t.Errorf("create (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(want, *must(cas.Get(ctx, ca.ID))(t)); diff != "" {
		t.Errorf("get (-want +got):\n%s", diff)
	}
	want.Metadata = "m"
	if diff := cmp.Diff(want, *must(cas.Update(ctx, &account.CertificateAuthorityUpdate{ID: ca.ID, Metadata: ptr("m")}))(t)); diff != "" {
		t.Errorf("update (-want +got):\n%s", diff)
	}
	must(cas.Create(ctx, &account.CertificateAuthorityCreate{CAPEM: newCA(t, "other", nb, na)}))(t)
	for _, tt := range []struct{ name, filter string }{
		{"subject", `obj.subject_common_name == "test root"`},
		{"not_after", `obj.not_after > timestamp("2027-06-01T00:00:00Z") && obj.subject_common_name != "other"`},
		{"metadata", `obj.metadata == "m"`},
	} {
		t.Run(tt.name, func(t *testing.T) {
			got := collect(t, cas.List(ctx, &acctapi.FilterOptions{Filter: tt.filter}))
			if diff := cmp.Diff([]account.CertificateAuthority{want}, got); diff != "" {
				t.Errorf("filtered list (-want +got):\n%s", diff)
			}
		})
	}

	// The server parses ca_pem itself: a leaf certificate is refused even
	// when the client does not check.
	lax := account.NewCertificateAuthorities(srv.Client(acctapi.WithoutValidation()))
	for _, bad := range []string{"", "not pem", pemText + pemText} {
		_, err := lax.Create(ctx, &account.CertificateAuthorityCreate{CAPEM: bad})
		wantAPIError(t, err, http.StatusBadRequest, acctapi.CodeInvalidValue)
	}

	wantDeleted(ctx, t, ca.ID, cas.Delete, cas.Get)
	if _, ok := fake.Get[account.CertificateAuthority](srv, "", ca.ID); ok {
		t.Error("fake.Get finds the deleted CA")
	}
}

// TestSecretsNeverEchoed sends secrets in valid and invalid requests, and
// an API key's token in every wrong place, and checks that no error
// message and no part of the journal holds any of them.
func TestSecretsNeverEchoed(t *testing.T) {
	srv, _ := start(t)
	keys := account.NewAPIKeys(srv.Client())
	k := must(keys.Create(context.Background(), &account.APIKeyCreate{Description: "to be leaked"}))(t)
	token := *k.Token
	secrets := []string{secKinesis, secClient, secMonitoring, token, srv.APIKey()}

	kinesis := `{"kinesis":{"auth":{"creds":{"cloud_access_key_id":"AKIA","cloud_secret_access_key":"` + secKinesis + `"}},"stream_arn":"arn:s"}}`
	cli := `{"cloud_logs_ingestion":{"tenant_id":"t","client_id":"c","client_secret":"` + secClient + `","logs_ingestion_uri":"https://x","data_collection_rule_id":"d","data_collection_stream_name":"s"}}`
	mon := `{"monitoring":{"api_key":"` + secMonitoring + `"}}`
	type req struct {
		method, path string
		hdr          map[string]string
		body         string
	}
	var reqs []req
	for _, target := range []string{kinesis, cli, mon} {
		reqs = append(reqs,
			req{"POST", "/event_destinations", nil, `{"format":"JSON","target":` + target + `}`},                             // valid
			req{"POST", "/event_destinations", nil, `{"format":"XML","target":` + target + `}`},                              // invalid value
			req{"POST", "/event_destinations", nil, `{"format":"JSON","target":` + target + `,"extra":1}`},                   // unknown member
			req{"POST", "/event_destinations", nil, `{"format":7,"target":` + target + `}`},                                  // wrong type
			req{"POST", "/event_destinations", nil, `{"format":"JSON","target":` + target + `} {}`},                          // trailing data
			req{"POST", "/event_destinations", nil, `{"format":"JSON","target":` + target},                                   // not JSON
			req{"POST", "/event_destinations", map[string]string{"Content-Type": "text/plain"}, `{"target":` + target + `}`}, // 415
			req{"POST", "/service_users", nil, `{"name":"x","target":` + target + `}`},                                       // wrong resource
			req{"PATCH", "/event_destinations/ed_missing", nil, `{"target":` + target + `}`},                                 // 404
			req{"GET", "/event_destinations", map[string]string{"Authorization": ""}, `{"target":` + target + `}`},           // 401
		)
	}
	// Secrets with a member missing beside them.
	reqs = append(reqs,
		req{"POST", "/event_destinations", nil, `{"target":{"kinesis":{"auth":{"creds":{"cloud_secret_access_key":"` + secKinesis + `"}},"stream_arn":"arn:s"}}}`},
		req{"POST", "/event_destinations", nil, `{"target":{"cloud_logs_ingestion":{"client_secret":"` + secClient + `"}}}`},
		req{"POST", "/event_destinations", nil, `{"target":{"monitoring":{"api_key":"` + secMonitoring + `","site":7}}}`},
		req{"POST", "/event_destinations", nil, `{"target":{"monitoring":{"API_KEY":"` + secMonitoring + `","bogus":true}}}`},
		req{"POST", "/event_destinations", nil, `{"target":{"monitoring":{"api_key":["` + secMonitoring + `"]}}}`},
	)
	// The token everywhere but where it belongs.
	for _, auth := range []string{"Basic " + token, "Bearer " + token + " extra", "Token " + token, "Bearer  " + token, token} {
		reqs = append(reqs, req{"GET", "/api_keys", map[string]string{"Authorization": auth}, ""})
	}
	reqs = append(reqs,
		req{"POST", "/api_keys", nil, `{"token":"` + token + `"}`},
		req{"PATCH", "/api_keys/" + k.ID, nil, `{"token":"` + token + `"}`},
		req{"POST", "/api_keys", nil, `{"token":"` + token + `",}`},
		req{"POST", "/api_keys", nil, `{"t\u006fken":"` + token + `"}`},
	)
	for _, r := range reqs {
		got := raw(t, srv, r.method, r.path, r.hdr, r.body)
		if got.status >= 500 {
			t.Errorf("%s %s %s: %d", r.method, r.path, r.body, got.status)
		}
		if got.status >= 400 {
			for _, s := range secrets {
				if strings.Contains(string(got.body), s) {
					t.Errorf("%s %s %.80s: error %s echoes a secret", r.method, r.path, r.body, got.body)
				}
			}
		}
	}
	// The deleted key's token, once more.
	must(0, keys.Delete(context.Background(), k.ID))(t)
	if got := raw(t, srv, "GET", "/api_keys", map[string]string{"Authorization": "Bearer " + token}, ""); got.status != 401 || strings.Contains(string(got.body), token) {
		t.Errorf("deleted token: %d %s", got.status, got.body)
	}
	for _, e := range srv.Journal() {
		all := strings.Join([]string{e.Method, e.Path, e.Query, e.RequestBody, e.ResponseBody}, "\n")
		for _, s := range secrets {
			if strings.Contains(all, s) {
				t.Errorf("journal entry %s %s holds a secret: %s", e.Method, e.Path, all)
			}
		}
	}
}
