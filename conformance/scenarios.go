package conformance

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"math/big"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/acctapi/acctapi"
	"github.com/acctapi/acctapi/account"
	"github.com/acctapi/acctapi/backends"
	"github.com/acctapi/acctapi/events"
	"github.com/acctapi/acctapi/internal/trunc"
	"github.com/acctapi/acctapi/k8sop"
)

func (s *suite) testAuthentication(t *testing.T) {
	for _, tt := range []struct {
		name, auth, code string
	}{
		{"no header", "", acctapi.CodeNoAuthorization},
		{"not bearer", "Basic dXNlcjpwYXNz", acctapi.CodeBadAuthorization},
		{"bearer without token", "Bearer", acctapi.CodeBadAuthorization},
		{"unknown token", "Bearer " + s.prefix + "no-such-token", acctapi.CodeInvalidToken},
	} {
		hdr := map[string]string{"Authorization": tt.auth}
		// Authentication comes first: a bad key learns nothing else, not
		// even whether the path exists or the version is right.
		for _, r := range []request{
			{method: http.MethodGet, path: "/api_keys", header: hdr},
			{method: http.MethodGet, path: "/no_such_path", header: hdr},
			{method: http.MethodPost, path: "/service_users", header: map[string]string{"Authorization": tt.auth, "Service-Version": ""}, body: []byte(`{`)},
		} {
			wantError(t, tt.name+": "+r.method+" "+r.path, s.do(t, r), http.StatusUnauthorized, tt.code)
		}
	}
}

func (s *suite) testVersion(t *testing.T) {
	wantError(t, "no version", s.do(t, request{method: http.MethodGet, path: "/api_keys", header: map[string]string{"Service-Version": ""}}),
		http.StatusBadRequest, acctapi.CodeNoVersion)
	wantError(t, "version 3", s.do(t, request{method: http.MethodGet, path: "/api_keys", header: map[string]string{"Service-Version": "3"}}),
		http.StatusBadRequest, acctapi.CodeBadVersion)
	wantError(t, "Ngrok-Version 1", s.do(t, request{method: http.MethodGet, path: "/api_keys", header: map[string]string{"Service-Version": "", "Ngrok-Version": "1"}}),
		http.StatusBadRequest, acctapi.CodeBadVersion)
	if r := s.do(t, request{method: http.MethodGet, path: "/api_keys?limit=1", header: map[string]string{"Service-Version": "", "Ngrok-Version": "2"}}); r.status != http.StatusOK {
		t.Errorf("Ngrok-Version: 2 alone: %v, want 200", r)
	}
	if r := s.do(t, request{method: http.MethodGet, path: "/api_keys?limit=1", header: map[string]string{"Ngrok-Version": "1"}}); r.status != http.StatusOK {
		t.Errorf("Service-Version 2 with Ngrok-Version 1: %v, want 200 (Service-Version wins)", r)
	}
}

func (s *suite) testRouting(t *testing.T) {
	wantError(t, "unknown path", s.do(t, request{method: http.MethodGet, path: "/no_such_path"}), http.StatusNotFound, "")
	wantError(t, "unknown item", s.do(t, request{method: http.MethodGet, path: "/service_users/service_" + strings.Repeat("0", 27)}), http.StatusNotFound, "")
	r := s.do(t, request{method: http.MethodPut, path: "/service_users"})
	wantError(t, "PUT on a collection", r, http.StatusMethodNotAllowed, "")
	allow := strings.Split(strings.ReplaceAll(r.header.Get("Allow"), " ", ""), ",")
	if !slices.Contains(allow, http.MethodGet) || !slices.Contains(allow, http.MethodPost) || slices.Contains(allow, http.MethodPut) {
		t.Errorf("405 Allow = %q, want GET and POST", r.header.Get("Allow"))
	}
	r = s.do(t, request{method: http.MethodPost, path: "/service_users/service_x", body: []byte(`{}`)})
	wantError(t, "POST on an item", r, http.StatusMethodNotAllowed, "")
	if a := r.header.Get("Allow"); !strings.Contains(a, http.MethodPatch) || !strings.Contains(a, http.MethodDelete) {
		t.Errorf("405 Allow on an item = %q, want PATCH and DELETE among them", a)
	}
}

func (s *suite) testBodies(t *testing.T) {
	post := func(hdr map[string]string, body []byte) response {
		return s.do(t, request{method: http.MethodPost, path: "/service_users", header: hdr, body: body})
	}
	name := s.name("bodies")
	wantError(t, "text/plain", post(map[string]string{"Content-Type": "text/plain"}, []byte(`{"name":"`+name+`"}`)),
		http.StatusUnsupportedMediaType, acctapi.CodeBadContentType)
	big := []byte(`{"name":"` + strings.Repeat("x", 1<<20) + `"}`)
	wantError(t, "body over 1 MiB", post(nil, big), http.StatusRequestEntityTooLarge, acctapi.CodeBodyTooLarge)
	wantError(t, "invalid JSON", post(nil, []byte(`{"name":`)), http.StatusBadRequest, acctapi.CodeInvalidJSON)
	wantError(t, "trailing data", post(nil, []byte(`{"name":"`+name+`"} {}`)), http.StatusBadRequest, acctapi.CodeInvalidJSON)
	r := post(nil, []byte(`{"name":"`+name+`","nickname":"x"}`))
	wantError(t, "unknown member", r, http.StatusBadRequest, acctapi.CodeUnknownField)
	wantError(t, "wrong type", post(nil, []byte(`{"name":5}`)), http.StatusBadRequest, acctapi.CodeInvalidValue)
	wantError(t, "not an object", post(nil, []byte(`[]`)), http.StatusBadRequest, "")
	wantError(t, "empty name", post(nil, []byte(`{"name":""}`)), http.StatusBadRequest, "")
	r = s.do(t, request{method: http.MethodPost, path: "/api_keys", body: []byte(`{"description":"` + strings.Repeat("d", 256) + `"}`)})
	wantError(t, "description over 255 bytes", r, http.StatusBadRequest, acctapi.CodeDescriptionTooLong)
	r = s.do(t, request{method: http.MethodPost, path: "/api_keys", body: []byte(`{"metadata":"` + strings.Repeat("m", 4097) + `"}`)})
	wantError(t, "metadata over 4096 bytes", r, http.StatusBadRequest, acctapi.CodeMetadataTooLong)
	// None of the rejected requests created anything.
	s.wantNoServiceUser(t, name)
}

// wantNoServiceUser fails t if a service user named name exists.
func (s *suite) wantNoServiceUser(t *testing.T, name string) {
	t.Helper()
	for u, err := range account.NewServiceUsers(s.client).List(context.Background(), nil) {
		must(t, "list service users", err)
		if u.Name == name {
			t.Errorf("service user %q exists after only rejected requests", name)
		}
	}
}

func (s *suite) testQueries(t *testing.T) {
	for _, tt := range []struct{ query, code string }{
		{"limit=0", acctapi.CodeBadLimit},
		{"limit=101", acctapi.CodeBadLimit},
		{"limit=ten", acctapi.CodeBadLimit},
		{"limit=%2B5", acctapi.CodeBadLimit}, // a sign is not part of the integer
		{"limit=+5", acctapi.CodeBadLimit},   // " 5" in a query string
		{"limit=5.0", acctapi.CodeBadLimit},
		{"limit=1&limit=2", acctapi.CodeRepeatedQueryParam},
		{"colour=red", acctapi.CodeUnknownQueryParam},
	} {
		wantError(t, "?"+tt.query, s.do(t, request{method: http.MethodGet, path: "/api_keys?" + tt.query}), http.StatusBadRequest, tt.code)
	}
	wantError(t, "filter on bot_users", s.do(t, request{method: http.MethodGet, path: "/bot_users?filter=" + url.QueryEscape(`obj.id == ""`)}),
		http.StatusBadRequest, acctapi.CodeUnknownQueryParam)
	wantError(t, "filter on kubernetes_operators", s.do(t, request{method: http.MethodGet, path: "/kubernetes_operators?filter=" + url.QueryEscape(`obj.id == ""`)}),
		http.StatusBadRequest, acctapi.CodeUnknownQueryParam)
}

func (s *suite) testServiceUsers(t *testing.T) {
	ctx := context.Background()
	su := account.NewServiceUsers(s.client)
	name := s.name("su")
	u, err := su.Create(ctx, &account.ServiceUserCreate{Name: name})
	must(t, "create", err)
	cleanup(t, u.ID, func(ctx context.Context) error { return su.Delete(ctx, u.ID) })
	if !strings.HasPrefix(u.ID, "service_") || u.Name != name || !u.Active || u.CreatedAt.IsZero() {
		t.Errorf("created %+v", u)
	}
	if want := s.target.BaseURL + "/service_users/" + u.ID; u.URI != want {
		t.Errorf("uri %q, want %q", u.URI, want)
	}
	got, err := su.Get(ctx, u.ID)
	must(t, "get", err)
	if *got != *u {
		t.Errorf("get = %+v, want %+v", got, u)
	}
	_, err = su.Create(ctx, &account.ServiceUserCreate{Name: name})
	wantAPIError(t, "duplicate name", err, http.StatusConflict, acctapi.CodeNameTaken)

	other, err := su.Create(ctx, &account.ServiceUserCreate{Name: s.name("su2"), Active: ptr(false)})
	must(t, "create second", err)
	cleanup(t, other.ID, func(ctx context.Context) error { return su.Delete(ctx, other.ID) })
	if other.Active {
		t.Errorf("created with active false: %+v", other)
	}
	_, err = su.Update(ctx, &account.ServiceUserUpdate{ID: other.ID, Name: ptr(name)})
	wantAPIError(t, "rename to a taken name", err, http.StatusConflict, acctapi.CodeNameTaken)
	upd, err := su.Update(ctx, &account.ServiceUserUpdate{ID: other.ID, Active: ptr(true)})
	must(t, "update", err)
	if !upd.Active || upd.Name != s.name("su2") {
		t.Errorf("update active=true: %+v", upd)
	}
	r := s.do(t, request{method: http.MethodPatch, path: "/service_users/" + other.ID, body: []byte(`{"id":"` + u.ID + `"}`)})
	wantError(t, "PATCH with another id in the body", r, http.StatusBadRequest, "")

	var seen []string
	for v, err := range su.List(ctx, nil) {
		must(t, "list", err)
		if strings.HasPrefix(v.Name, s.prefix+"su") {
			seen = append(seen, v.ID)
		}
	}
	if !slices.Equal(seen, []string{other.ID, u.ID}) {
		t.Errorf("listed %v, want newest first %v", seen, []string{other.ID, u.ID})
	}

	must(t, "delete", su.Delete(ctx, u.ID))
	_, err = su.Get(ctx, u.ID)
	wantAPIError(t, "get after delete", err, http.StatusNotFound, "")
	wantAPIError(t, "delete twice", su.Delete(ctx, u.ID), http.StatusNotFound, "")
	// The name is free again.
	again, err := su.Create(ctx, &account.ServiceUserCreate{Name: name})
	must(t, "re-create with a freed name", err)
	cleanup(t, again.ID, func(ctx context.Context) error { return su.Delete(ctx, again.ID) })
}

func (s *suite) testBotUsers(t *testing.T) {
	ctx := context.Background()
	//lint:ignore SA1019 the suite tests the deprecated alias on purpose
	bu := account.NewBotUsers(s.client)
	su := account.NewServiceUsers(s.client)
	//lint:ignore SA1019 the suite tests the deprecated alias on purpose
	b, err := bu.Create(ctx, &account.BotUserCreate{Name: s.name("bot")})
	must(t, "create bot user", err)
	cleanup(t, b.ID, func(ctx context.Context) error { return su.Delete(ctx, b.ID) })
	if !strings.HasPrefix(b.ID, "service_") {
		t.Errorf("bot user id %q, want a service_ id", b.ID)
	}
	got, err := su.Get(ctx, b.ID)
	must(t, "get the bot user as a service user", err)
	if got.Name != b.Name {
		t.Errorf("service user %+v, bot user %+v", got, b)
	}
	//lint:ignore SA1019 the suite tests the deprecated alias on purpose
	_, err = bu.Create(ctx, &account.BotUserCreate{Name: s.name("bot")})
	wantAPIError(t, "duplicate bot user name", err, http.StatusConflict, acctapi.CodeNameTaken)
	for _, p := range []string{"/bot_users", "/bot_users/" + b.ID} {
		r := s.do(t, request{method: http.MethodGet, path: p})
		if r.status != http.StatusOK {
			t.Errorf("GET %s: %v", p, r)
			continue
		}
		if r.header.Get("Deprecation") != "true" {
			t.Errorf("GET %s: Deprecation %q, want true", p, r.header.Get("Deprecation"))
		}
		if want := "<" + s.target.BaseURL + `/service_users>; rel="successor-version"`; r.header.Get("Link") != want {
			t.Errorf("GET %s: Link %q, want %q", p, r.header.Get("Link"), want)
		}
	}
	r := s.do(t, request{method: http.MethodGet, path: "/bot_users?limit=100"})
	var page map[string]json.RawMessage
	if json.Unmarshal(r.body, &page) != nil || page["bot_users"] == nil {
		t.Errorf("GET /bot_users: want a bot_users member, got %v", r)
	}
	if r := s.do(t, request{method: http.MethodGet, path: "/service_users/" + b.ID}); r.header.Get("Deprecation") != "" {
		t.Errorf("service user path answered with Deprecation %q", r.header.Get("Deprecation"))
	}
	must(t, "delete through the alias", bu.Delete(ctx, b.ID))
	_, err = su.Get(ctx, b.ID)
	wantAPIError(t, "service user after deleting the bot user", err, http.StatusNotFound, "")
}

func (s *suite) testAPIKeys(t *testing.T) {
	ctx := context.Background()
	keys := account.NewAPIKeys(s.client)
	k, err := keys.Create(ctx, &account.APIKeyCreate{Description: s.name("key"), Metadata: `{"suite":"conformance"}`})
	must(t, "create", err)
	cleanup(t, k.ID, func(ctx context.Context) error { return keys.Delete(ctx, k.ID) })
	if !strings.HasPrefix(k.ID, "ak_") || k.Token == nil || *k.Token == "" || k.OwnerID == "" {
		t.Fatalf("created %+v: want an ak_ id, a token and an owner", k)
	}
	got, err := keys.Get(ctx, k.ID)
	must(t, "get", err)
	if got.Token != nil {
		t.Errorf("get shows the token")
	}
	r := s.do(t, request{method: http.MethodGet, path: "/api_keys/" + k.ID})
	if strings.Contains(string(r.body), *k.Token) || !strings.Contains(string(r.body), `"token":null`) {
		t.Errorf("GET body %s: want token null", r.body)
	}
	page, err := keys.Page(ctx, &acctapi.FilterOptions{Filter: fmt.Sprintf("obj.id == %q", k.ID)})
	must(t, "list", err)
	if len(page.Keys) != 1 || page.Keys[0].Token != nil {
		t.Errorf("filtered list %+v: want the key without its token", page.Keys)
	}
	upd, err := keys.Update(ctx, &account.APIKeyUpdate{ID: k.ID, Description: ptr(s.name("key", "renamed"))})
	must(t, "update", err)
	if upd.Description != s.name("key", "renamed") || upd.Metadata != k.Metadata || upd.Token != nil {
		t.Errorf("updated %+v", upd)
	}

	// The new token authenticates, as the same owner.
	c2, err := s.newClient(*k.Token)
	must(t, "client for the new key", err)
	self, err := account.NewAPIKeys(c2).Get(ctx, k.ID)
	must(t, "get with the new key", err)
	if self.ID != k.ID {
		t.Errorf("got %+v", self)
	}

	// A service user's key.
	su := account.NewServiceUsers(s.client)
	u, err := su.Create(ctx, &account.ServiceUserCreate{Name: s.name("keyowner")})
	must(t, "create service user", err)
	cleanup(t, u.ID, func(ctx context.Context) error { return su.Delete(ctx, u.ID) })
	uk, err := keys.Create(ctx, &account.APIKeyCreate{Description: s.name("key", "su"), OwnerID: u.ID})
	must(t, "create a key for the service user", err)
	cleanup(t, uk.ID, func(ctx context.Context) error { return keys.Delete(ctx, uk.ID) })
	if uk.OwnerID != u.ID {
		t.Errorf("owner_id %q, want %q", uk.OwnerID, u.ID)
	}
	_, err = s.rawClientKeys(t).Create(ctx, &account.APIKeyCreate{OwnerID: "service_" + strings.Repeat("0", 27)})
	wantAPIError(t, "owner that does not exist", err, http.StatusBadRequest, "")

	// A deleted key stops authenticating at once.
	must(t, "delete", keys.Delete(ctx, k.ID))
	r = s.do(t, request{method: http.MethodGet, path: "/api_keys", header: map[string]string{"Authorization": "Bearer " + *k.Token}})
	wantError(t, "deleted key", r, http.StatusUnauthorized, acctapi.CodeInvalidToken)
	_, err = keys.Get(ctx, k.ID)
	wantAPIError(t, "get after delete", err, http.StatusNotFound, "")
}

func (s *suite) testCertificateAuthorities(t *testing.T) {
	ctx := context.Background()
	cas := account.NewCertificateAuthorities(s.client)
	cn := s.name("ca")
	notBefore := time.Now().Add(-time.Hour).Truncate(time.Second).UTC()
	notAfter := notBefore.AddDate(1, 0, 0)
	caPEM := newCA(t, cn, true, notBefore, notAfter)
	ca, err := cas.Create(ctx, &account.CertificateAuthorityCreate{Description: s.name("ca"), Metadata: `{"suite":"conformance"}`, CAPEM: caPEM})
	must(t, "create", err)
	cleanup(t, ca.ID, func(ctx context.Context) error { return cas.Delete(ctx, ca.ID) })
	if !strings.HasPrefix(ca.ID, "ca_") || ca.CAPEM != caPEM || ca.Description != s.name("ca") || ca.CreatedAt.IsZero() {
		t.Errorf("created %+v: want a ca_ id and the PEM and description sent", ca)
	}
	if want := s.target.BaseURL + "/certificate_authorities/" + ca.ID; ca.URI != want {
		t.Errorf("uri %q, want %q", ca.URI, want)
	}
	// The server reads the certificate.
	if ca.SubjectCommonName != cn || !ca.NotBefore.Equal(notBefore) || !ca.NotAfter.Equal(notAfter) {
		t.Errorf("created: subject_common_name %q, validity %v–%v; want %q, %v–%v", ca.SubjectCommonName, ca.NotBefore, ca.NotAfter, cn, notBefore, notAfter)
	}
	if want := []string{"digital_signature", "cert_sign", "crl_sign"}; !slices.Equal(ca.KeyUsages, want) {
		t.Errorf("key_usages %v, want %v", ca.KeyUsages, want)
	}
	if want := []string{"client_auth"}; !slices.Equal(ca.ExtendedKeyUsages, want) {
		t.Errorf("extended_key_usages %v, want %v", ca.ExtendedKeyUsages, want)
	}
	got, err := cas.Get(ctx, ca.ID)
	must(t, "get", err)
	if got.ID != ca.ID || got.CAPEM != ca.CAPEM || got.SubjectCommonName != cn || !got.NotBefore.Equal(ca.NotBefore) || !got.NotAfter.Equal(ca.NotAfter) ||
		!slices.Equal(got.KeyUsages, ca.KeyUsages) || !slices.Equal(got.ExtendedKeyUsages, ca.ExtendedKeyUsages) || got.Metadata != ca.Metadata {
		t.Errorf("get = %+v, want %+v", got, ca)
	}

	other, err := cas.Create(ctx, &account.CertificateAuthorityCreate{Description: s.name("ca", "other"),
		CAPEM: newCA(t, s.name("ca", "other"), true, notBefore, notAfter)})
	must(t, "create second", err)
	cleanup(t, other.ID, func(ctx context.Context) error { return cas.Delete(ctx, other.ID) })
	page, err := cas.Page(ctx, &acctapi.FilterOptions{Filter: fmt.Sprintf("obj.subject_common_name == %q", cn)})
	must(t, "list filtered on subject_common_name", err)
	if len(page.CertificateAuthorities) != 1 || page.CertificateAuthorities[0].ID != ca.ID {
		t.Errorf("filter on subject_common_name %q: %+v, want only %s", cn, page.CertificateAuthorities, ca.ID)
	}
	var seen []string
	for v, err := range cas.List(ctx, &acctapi.FilterOptions{Limit: 1, Filter: fmt.Sprintf("obj.subject_common_name.startsWith(%q) && obj.not_after > obj.not_before", cn)}) {
		must(t, "list", err)
		seen = append(seen, v.ID)
	}
	if !slices.Equal(seen, []string{other.ID, ca.ID}) {
		t.Errorf("listed %v, want newest first %v", seen, []string{other.ID, ca.ID})
	}

	upd, err := cas.Update(ctx, &account.CertificateAuthorityUpdate{ID: ca.ID, Description: ptr(s.name("ca", "renamed")), Metadata: ptr("updated")})
	must(t, "update", err)
	if upd.Description != s.name("ca", "renamed") || upd.Metadata != "updated" || upd.CAPEM != ca.CAPEM || upd.SubjectCommonName != cn ||
		!upd.NotAfter.Equal(ca.NotAfter) || !slices.Equal(upd.KeyUsages, ca.KeyUsages) {
		t.Errorf("updated %+v: want the new description and metadata, the certificate unchanged", upd)
	}
	upd, err = cas.Update(ctx, &account.CertificateAuthorityUpdate{ID: ca.ID, Metadata: ptr("")})
	must(t, "update metadata only", err)
	if upd.Description != s.name("ca", "renamed") || upd.Metadata != "" {
		t.Errorf("updated metadata only: %+v", upd)
	}

	// The server checks ca_pem itself: the raw client sends what the typed
	// client's validation would refuse.
	leaf := newCA(t, s.name("ca", "leaf"), false, notBefore, notAfter)
	csr, _ := newCSR(t, s.name("ca", "csr"))
	lax := account.NewCertificateAuthorities(s.rawClient(t))
	for _, tt := range []struct{ name, pem string }{
		{"no ca_pem", ""},
		{"garbage", "not a certificate"},
		{"not a CA", leaf},
		{"a CSR", csr},
		{"two certificates", caPEM + caPEM},
		{"text before the PEM block", "x\n" + caPEM},
		{"corrupt DER", strings.Replace(caPEM, "\n", "\nAAAA", 1)},
	} {
		_, err := lax.Create(ctx, &account.CertificateAuthorityCreate{Description: s.name("ca", "invalid"), CAPEM: tt.pem})
		wantAPIError(t, tt.name, err, http.StatusBadRequest, acctapi.CodeInvalidValue)
		if r := (&account.CertificateAuthorityCreate{CAPEM: tt.pem}).Validate(); r == nil {
			t.Errorf("%s: the typed client's validation accepts it", tt.name)
		}
	}
	page, err = cas.Page(ctx, &acctapi.FilterOptions{Filter: fmt.Sprintf("obj.description == %q", s.name("ca", "invalid"))})
	must(t, "list rejected", err)
	if len(page.CertificateAuthorities) != 0 {
		t.Errorf("rejected creates made %+v", page.CertificateAuthorities)
	}

	must(t, "delete", cas.Delete(ctx, ca.ID))
	_, err = cas.Get(ctx, ca.ID)
	wantAPIError(t, "get after delete", err, http.StatusNotFound, "")
	wantAPIError(t, "delete twice", cas.Delete(ctx, ca.ID), http.StatusNotFound, "")
	r := s.do(t, request{method: http.MethodDelete, path: "/certificate_authorities/" + other.ID})
	if r.status != http.StatusNoContent || len(r.body) != 0 {
		t.Errorf("DELETE %s: %v, want 204 and no body", other.ID, r)
	}
	wantError(t, "GET after DELETE", s.do(t, request{method: http.MethodGet, path: "/certificate_authorities/" + other.ID}), http.StatusNotFound, "")
}

func (s *suite) rawClientKeys(t *testing.T) *account.APIKeys {
	return account.NewAPIKeys(s.rawClient(t))
}

// listPage is the generic shape of a page, for following next_page_uri.
type listPage struct {
	items []string
	uri   string
	next  *string
}

// getPage fetches a page with raw HTTP and reads the ids of member.
func (s *suite) getPage(t *testing.T, path, member string) listPage {
	t.Helper()
	r := s.do(t, request{method: http.MethodGet, path: path})
	if r.status != http.StatusOK {
		t.Fatalf("GET %s: %v", path, r)
	}
	var raw map[string]json.RawMessage
	if err := json.Unmarshal(r.body, &raw); err != nil {
		t.Fatalf("GET %s: %v", path, err)
	}
	var items []struct {
		ID string `json:"id"`
	}
	var p listPage
	if _, ok := raw["next_page_uri"]; !ok {
		t.Errorf("GET %s: no next_page_uri member (it must be present, null on the last page)", path)
	}
	if err := json.Unmarshal(raw[member], &items); err != nil || items == nil {
		t.Fatalf("GET %s: member %s: %s (%v)", path, member, raw[member], err)
	}
	_ = json.Unmarshal(raw["uri"], &p.uri)
	_ = json.Unmarshal(raw["next_page_uri"], &p.next)
	for _, it := range items {
		p.items = append(p.items, it.ID)
	}
	return p
}

func (s *suite) testPagination(t *testing.T) {
	ctx := context.Background()
	keys := account.NewAPIKeys(s.client)
	desc := s.name("page")
	var ids []string
	for i := range 5 {
		k, err := keys.Create(ctx, &account.APIKeyCreate{Description: desc, Metadata: fmt.Sprint(i)})
		must(t, "create", err)
		cleanup(t, k.ID, func(ctx context.Context) error { return keys.Delete(ctx, k.ID) })
		ids = append(ids, k.ID)
	}
	slices.Reverse(ids) // newest first
	if !slices.IsSortedFunc(ids, func(a, b string) int { return strings.Compare(b, a) }) {
		t.Errorf("ids %v: newer ids must sort after older ones", ids)
	}
	filter := fmt.Sprintf("obj.description == %q", desc)
	path := "/api_keys?limit=2&filter=" + url.QueryEscape(filter)
	var got []string
	var pages int
	for next := &path; next != nil; pages++ {
		if pages > 5 {
			t.Fatalf("more than 5 pages")
		}
		p := s.getPage(t, *next, "keys")
		if p.uri != s.target.BaseURL+"/api_keys" {
			t.Errorf("uri %q, want %q", p.uri, s.target.BaseURL+"/api_keys")
		}
		got = append(got, p.items...)
		if p.next != nil {
			u, err := url.Parse(*p.next)
			if err != nil || !u.IsAbs() {
				t.Fatalf("next_page_uri %q is not an absolute URL", *p.next)
			}
			q := u.Query()
			if u.Path != "/api_keys" && !strings.HasSuffix(u.Path, "/api_keys") || q.Get("limit") != "2" || q.Get("filter") != filter || q.Get("before_id") != p.items[len(p.items)-1] {
				t.Errorf("next_page_uri %q: want the same path, limit and filter, and before_id the last id", *p.next)
			}
		}
		next = p.next
	}
	if !slices.Equal(got, ids) || pages != 3 {
		t.Errorf("followed %d pages to %v, want 3 pages of %v", pages, got, ids)
	}
	// next_page_uri is null exactly when no further item exists: a page
	// that ends at the last item has none.
	p := s.getPage(t, "/api_keys?limit=5&filter="+url.QueryEscape(filter), "keys")
	if p.next != nil || !slices.Equal(p.items, ids) {
		t.Errorf("limit=5 over 5 items: %v next %v, want all and null", p.items, deref(p.next))
	}
	p = s.getPage(t, "/api_keys?limit=4&filter="+url.QueryEscape(filter), "keys")
	if p.next == nil || !slices.Equal(p.items, ids[:4]) {
		t.Errorf("limit=4 over 5 items: %v next %v, want 4 and a next page", p.items, deref(p.next))
	}
	// before_id need not be an existing id.
	page, err := keys.Page(ctx, &acctapi.FilterOptions{BeforeID: ids[1], Filter: filter})
	must(t, "before_id", err)
	if got := idsOfKeys(page.Keys); !slices.Equal(got, ids[2:]) {
		t.Errorf("before_id %s: %v, want %v", ids[1], got, ids[2:])
	}
	page, err = keys.Page(ctx, &acctapi.FilterOptions{BeforeID: ids[0] + "0", Filter: filter, Limit: 1})
	must(t, "before_id not an item", err)
	if got := idsOfKeys(page.Keys); !slices.Equal(got, ids[:1]) || page.NextPageURI == nil {
		t.Errorf("before_id after the newest: %v, want %v and a next page", got, ids[:1])
	}
	page, err = keys.Page(ctx, &acctapi.FilterOptions{BeforeID: "ak_0", Filter: filter})
	must(t, "before_id before everything", err)
	if len(page.Keys) != 0 || page.NextPageURI != nil || page.Keys == nil {
		t.Errorf("before_id before every id: %+v, want an empty list and null", page)
	}
	// The typed client's iterator follows the pages.
	var all []string
	for k, err := range keys.List(ctx, &acctapi.FilterOptions{Limit: 2, Filter: filter}) {
		must(t, "list", err)
		all = append(all, k.ID)
	}
	if !slices.Equal(all, ids) {
		t.Errorf("List = %v, want %v", all, ids)
	}
	// Lists without a filter page the same way: the account's keys include
	// ours, newest first, each once.
	var everything []string
	for k, err := range keys.List(ctx, &acctapi.FilterOptions{Limit: 3}) {
		must(t, "unfiltered list", err)
		everything = append(everything, k.ID)
	}
	if !slices.IsSortedFunc(everything, func(a, b string) int { return strings.Compare(b, a) }) || len(slices.Compact(slices.Clone(everything))) != len(everything) {
		t.Errorf("unfiltered list is not newest first without repeats: %v", everything)
	}
	for _, id := range ids {
		if !slices.Contains(everything, id) {
			t.Errorf("unfiltered list misses %s", id)
		}
	}
}

func idsOfKeys(ks []account.APIKey) []string {
	out := make([]string, len(ks))
	for i, k := range ks {
		out[i] = k.ID
	}
	return out
}

func (s *suite) testFilters(t *testing.T) {
	ctx := context.Background()
	keys := account.NewAPIKeys(s.client)
	desc := s.name("filter")
	var ids []string
	for i, md := range []string{"red", "green", "blue"} {
		k, err := keys.Create(ctx, &account.APIKeyCreate{Description: fmt.Sprintf("%s-%d", desc, i), Metadata: md})
		must(t, "create", err)
		cleanup(t, k.ID, func(ctx context.Context) error { return keys.Delete(ctx, k.ID) })
		ids = append(ids, k.ID)
	}
	mine := fmt.Sprintf("obj.description.startsWith(%q)", desc)
	for _, tt := range []struct {
		filter string
		want   []string // oldest first
	}{
		{mine, ids},
		{mine + ` && obj.metadata == "green"`, ids[1:2]},
		{mine + ` && obj.metadata in ["red", "blue"]`, []string{ids[0], ids[2]}},
		{mine + ` && !(obj.metadata == "red")`, ids[1:]},
		{mine + ` && (obj.metadata == "red" || obj.id == "` + ids[2] + `")`, []string{ids[0], ids[2]}},
		{mine + ` && size(obj.metadata) == 4`, ids[2:]},
		{mine + ` && obj.metadata.endsWith("ue")`, ids[2:]},
		{mine + ` && obj.description.contains("filter-1")`, ids[1:2]}, // the random prefix may hold "-1" itself
		{mine + ` && obj.created_at > timestamp("2000-01-01T00:00:00Z")`, ids},
		{mine + ` && obj.created_at > time.now.subtract("3650d") && obj.created_at < time.now.add("1d")`, ids},
		{mine + ` && obj.created_at < timestamp("2000-01-01T00:00:00Z")`, nil},
		{mine + ` && obj.owner_id != ""`, ids},
		{mine + ` && obj.owner_id == null`, nil},
	} {
		page, err := keys.Page(ctx, &acctapi.FilterOptions{Filter: tt.filter})
		if err != nil {
			t.Errorf("filter %s: %v", tt.filter, err)
			continue
		}
		want := slices.Clone(tt.want)
		slices.Reverse(want)
		if got := idsOfKeys(page.Keys); !slices.Equal(got, want) && !(len(got) == 0 && len(want) == 0) {
			t.Errorf("filter %s: %v, want %v", tt.filter, got, want)
		}
	}
	for _, f := range []string{
		`obj.description ==`,        // syntax
		`obj.nope == "x"`,           // unknown field
		`obj.description`,           // not boolean
		`obj.id.startsWith("ak_")`,  // substring match on id
		`obj["description"] == "x"`, // indexing
		`obj == {}`,                 // obj itself
		strings.Repeat("(", 100) + "true" + strings.Repeat(")", 100),
		`obj.description == "` + strings.Repeat("x", 5000) + `"`, // too long (the typed client refuses it before sending)
	} {
		_, err := account.NewAPIKeys(s.rawClient(t)).Page(ctx, &acctapi.FilterOptions{Filter: f})
		wantAPIError(t, "filter "+trunc.String(f, 60), err, http.StatusBadRequest, acctapi.CodeBadFilter)
	}
	// Service users filter on id and created_at only.
	_, err := account.NewServiceUsers(s.client).Page(ctx, &acctapi.FilterOptions{Filter: `obj.name == "x"`})
	wantAPIError(t, "service user filter on name", err, http.StatusBadRequest, acctapi.CodeBadFilter)
	_, err = account.NewServiceUsers(s.client).Page(ctx, &acctapi.FilterOptions{Filter: `obj.created_at > timestamp("2000-01-01T00:00:00Z")`})
	if err != nil {
		t.Errorf("service user filter on created_at: %v", err)
	}
}

func (s *suite) testBackends(t *testing.T) {
	ctx := context.Background()
	hr := backends.NewHTTPResponses(s.client)
	fo := backends.NewFailovers(s.client)
	tg := backends.NewTunnelGroups(s.client)
	resp, err := hr.Create(ctx, &backends.HTTPResponseCreate{Description: s.name("hr"), Body: "hi", StatusCode: 418, Headers: map[string]string{"X-A": "b"}})
	must(t, "create http response", err)
	cleanup(t, resp.ID, func(ctx context.Context) error { return hr.Delete(ctx, resp.ID) })
	if !strings.HasPrefix(resp.ID, "bkdhr_") || resp.StatusCode != 418 || resp.Headers["X-A"] != "b" {
		t.Errorf("created %+v", resp)
	}
	_, err = backends.NewHTTPResponses(s.rawClient(t)).Create(ctx, &backends.HTTPResponseCreate{StatusCode: 600})
	wantAPIError(t, "status 600", err, http.StatusBadRequest, "")

	group, err := tg.Create(ctx, &backends.TunnelGroupCreate{Description: s.name("tg"), Labels: map[string]string{"conformance": s.prefix}})
	must(t, "create tunnel group", err)
	cleanup(t, group.ID, func(ctx context.Context) error { return tg.Delete(ctx, group.ID) })
	if !strings.HasPrefix(group.ID, "bkdtg_") || group.Tunnels == nil {
		t.Errorf("created %+v: want a bkdtg_ id and a tunnels list", group)
	}
	_, err = backends.NewTunnelGroups(s.rawClient(t)).Create(ctx, &backends.TunnelGroupCreate{})
	wantAPIError(t, "tunnel group without labels", err, http.StatusBadRequest, "")

	missing := "bkdhr_" + strings.Repeat("0", 27)
	_, err = fo.Create(ctx, &backends.FailoverCreate{Backends: []string{resp.ID, missing}})
	wantAPIError(t, "failover to a missing backend", err, http.StatusBadRequest, acctapi.CodeUnknownBackend)
	f, err := fo.Create(ctx, &backends.FailoverCreate{Description: s.name("fo"), Backends: []string{resp.ID, group.ID}})
	must(t, "create failover", err)
	cleanup(t, f.ID, func(ctx context.Context) error { return fo.Delete(ctx, f.ID) })
	if !slices.Equal(f.Backends, []string{resp.ID, group.ID}) {
		t.Errorf("failover backends %v", f.Backends)
	}
	_, err = backends.NewFailovers(s.rawClient(t)).Update(ctx, &backends.FailoverUpdate{ID: f.ID, Backends: &[]string{f.ID}})
	wantAPIError(t, "failover to itself", err, http.StatusBadRequest, "")
	_, err = backends.NewFailovers(s.rawClient(t)).Create(ctx, &backends.FailoverCreate{Backends: []string{resp.ID, resp.ID}})
	wantAPIError(t, "duplicate child", err, http.StatusBadRequest, "")

	// Referential integrity: a referenced backend cannot be deleted.
	wantAPIError(t, "delete a referenced backend", hr.Delete(ctx, resp.ID), http.StatusConflict, "")
	if _, err := hr.Get(ctx, resp.ID); err != nil {
		t.Errorf("referenced backend gone after a refused delete: %v", err)
	}
	f2, err := fo.Update(ctx, &backends.FailoverUpdate{ID: f.ID, Backends: &[]string{group.ID}})
	must(t, "update failover", err)
	if !slices.Equal(f2.Backends, []string{group.ID}) || f2.Description != f.Description {
		t.Errorf("updated failover %+v", f2)
	}
	must(t, "delete the no longer referenced backend", hr.Delete(ctx, resp.ID))
	wantAPIError(t, "delete the referenced tunnel group", tg.Delete(ctx, group.ID), http.StatusConflict, "")
	// A failover may reference another failover.
	outer, err := fo.Create(ctx, &backends.FailoverCreate{Description: s.name("fo", "outer"), Backends: []string{f.ID}})
	must(t, "failover of a failover", err)
	cleanup(t, outer.ID, func(ctx context.Context) error { return fo.Delete(ctx, outer.ID) })
	wantAPIError(t, "delete the inner failover", fo.Delete(ctx, f.ID), http.StatusConflict, "")
	must(t, "delete outer", fo.Delete(ctx, outer.ID))
	must(t, "delete inner", fo.Delete(ctx, f.ID))
	must(t, "delete group", tg.Delete(ctx, group.ID))
}

// destinationCreate is a valid destination with a kinesis target.
func (s *suite) destinationCreate(name string) *events.DestinationCreate {
	return &events.DestinationCreate{Description: s.name(name), Format: "json", Target: events.Target{
		Kinesis: &events.Kinesis{StreamARN: "arn:aws:kinesis:us-east-1:123456789012:stream/conformance",
			Auth: &events.CloudAuth{Role: &events.Role{RoleARN: "arn:aws:iam::123456789012:role/conformance"}}}}}
}

func (s *suite) testDestinations(t *testing.T) {
	ctx := context.Background()
	ds := events.NewDestinations(s.client)
	d, err := ds.Create(ctx, s.destinationCreate("ed"))
	must(t, "create", err)
	cleanup(t, d.ID, func(ctx context.Context) error { return ds.Delete(ctx, d.ID) })
	if !strings.HasPrefix(d.ID, "ed_") || d.Format != events.FormatJSON || d.Target.Kinesis == nil || d.Target.S3 != nil {
		t.Errorf("created %+v", d)
	}
	// Every target member is present, the unused ones null.
	r := s.do(t, request{method: http.MethodGet, path: "/event_destinations/" + d.ID})
	var raw struct {
		Target map[string]json.RawMessage `json:"target"`
	}
	_ = json.Unmarshal(r.body, &raw)
	for _, m := range []string{"firehose", "kinesis", "cloudwatch_logs", "s3", "monitoring", "cloud_logs_ingestion"} {
		v, ok := raw.Target[m]
		if !ok || (m != "kinesis") != (string(v) == "null") {
			t.Errorf("target member %s = %s (present %v)", m, v, ok)
		}
	}
	lax := events.NewDestinations(s.rawClient(t))
	for _, tt := range []struct {
		name string
		in   events.DestinationCreate
	}{
		{"no target", events.DestinationCreate{Format: "JSON"}},
		{"two targets", events.DestinationCreate{Format: "JSON", Target: events.Target{
			Monitoring: &events.Monitoring{APIKey: "k"},
			Kinesis:    s.destinationCreate("x").Target.Kinesis}}},
		{"format xml", events.DestinationCreate{Format: "XML", Target: events.Target{Monitoring: &events.Monitoring{APIKey: "k"}}}},
		{"role and creds", events.DestinationCreate{Format: "JSON", Target: events.Target{Kinesis: &events.Kinesis{StreamARN: "arn:x",
			Auth: &events.CloudAuth{Role: &events.Role{RoleARN: "arn:aws:iam::123456789012:role/r"}, Creds: &events.Creds{AccessKeyID: "a", SecretAccessKey: "b"}}}}}},
		{"cloud logs ingestion incomplete", events.DestinationCreate{Format: "JSON", Target: events.Target{CloudLogsIngestion: &events.CloudLogsIngestion{TenantID: "t"}}}},
	} {
		_, err := lax.Create(ctx, &tt.in)
		wantAPIError(t, tt.name, err, http.StatusBadRequest, "")
	}
	upd, err := ds.Update(ctx, &events.DestinationUpdate{ID: d.ID, Description: ptr(s.name("ed", "renamed")),
		Target: &events.Target{Monitoring: &events.Monitoring{APIKey: "conformance-monitoring-key", Site: "example.com"}}})
	must(t, "update", err)
	if upd.Target.Monitoring == nil || upd.Target.Kinesis != nil || upd.Description != s.name("ed", "renamed") {
		t.Errorf("updated %+v", upd)
	}
	page, err := ds.Page(ctx, &acctapi.FilterOptions{Filter: fmt.Sprintf("obj.id == %q", d.ID)})
	must(t, "filtered list", err)
	if len(page.Destinations) != 1 || page.Destinations[0].ID != d.ID {
		t.Errorf("filtered list %+v", page.Destinations)
	}
	must(t, "delete", ds.Delete(ctx, d.ID))
	_, err = ds.Get(ctx, d.ID)
	wantAPIError(t, "get after delete", err, http.StatusNotFound, "")
}

func (s *suite) testSubscriptions(t *testing.T) {
	ctx := context.Background()
	ds := events.NewDestinations(s.client)
	ss := events.NewSubscriptions(s.client)
	src := events.NewSources(s.client)
	d, err := ds.Create(ctx, s.destinationCreate("esb-ed"))
	must(t, "create destination", err)
	cleanup(t, d.ID, func(ctx context.Context) error { return ds.Delete(ctx, d.ID) })

	_, err = ss.Create(ctx, &events.SubscriptionCreate{DestinationIDs: []string{"ed_" + strings.Repeat("0", 27)}})
	wantAPIError(t, "unknown destination", err, http.StatusBadRequest, "")
	_, err = events.NewSubscriptions(s.rawClient(t)).Create(ctx, &events.SubscriptionCreate{Sources: []events.SubscriptionSource{{Type: "no_such_event.v0"}}})
	wantAPIError(t, "unknown event type", err, http.StatusBadRequest, "")

	sub, err := ss.Create(ctx, &events.SubscriptionCreate{Description: s.name("esb"),
		Sources: []events.SubscriptionSource{{Type: "api_key_created.v0"}}, DestinationIDs: []string{d.ID}})
	must(t, "create", err)
	cleanup(t, sub.ID, func(ctx context.Context) error { return ss.Delete(ctx, sub.ID) })
	if !strings.HasPrefix(sub.ID, "esb_") || len(sub.Sources) != 1 || len(sub.Destinations) != 1 || sub.Destinations[0].ID != d.ID {
		t.Fatalf("created %+v", sub)
	}
	if want := s.target.BaseURL + "/event_destinations/" + d.ID; sub.Destinations[0].URI != want {
		t.Errorf("destination uri %q, want %q", sub.Destinations[0].URI, want)
	}
	if want := s.target.BaseURL + "/event_subscriptions/" + sub.ID + "/sources/api_key_created.v0"; sub.Sources[0].URI != want {
		t.Errorf("source uri %q, want %q", sub.Sources[0].URI, want)
	}
	wantAPIError(t, "delete a destination in use", ds.Delete(ctx, d.ID), http.StatusConflict, "")

	// Sources.
	made, err := src.Create(ctx, sub.ID, &events.SourceCreate{Type: "api_key_deleted.v0"})
	must(t, "create source", err)
	if made.Type != "api_key_deleted.v0" || !strings.HasSuffix(made.URI, "/sources/api_key_deleted.v0") {
		t.Errorf("source %+v", made)
	}
	_, err = src.Create(ctx, sub.ID, &events.SourceCreate{Type: "api_key_deleted.v0"})
	wantAPIError(t, "duplicate source", err, http.StatusConflict, acctapi.CodeSourceTypeTaken)
	r := s.do(t, request{method: http.MethodPost, path: "/event_subscriptions/" + sub.ID + "/sources",
		body: []byte(`{"subscription_id":"esb_other","type":"api_key_updated.v0"}`)})
	wantError(t, "source with another subscription id", r, http.StatusBadRequest, "")
	list, err := src.List(ctx, sub.ID)
	must(t, "list sources", err)
	var types []string
	for _, x := range list.Sources {
		types = append(types, x.Type)
	}
	if !slices.Equal(types, []string{"api_key_created.v0", "api_key_deleted.v0"}) {
		t.Errorf("sources %v", types)
	}
	if _, err := src.Get(ctx, sub.ID, "api_key_deleted.v0"); err != nil {
		t.Errorf("get source: %v", err)
	}
	if _, err := src.Update(ctx, &events.SourceUpdate{SubscriptionID: sub.ID, Type: "api_key_deleted.v0"}); err != nil {
		t.Errorf("update source: %v", err)
	}
	must(t, "delete source", src.Delete(ctx, sub.ID, "api_key_deleted.v0"))
	_, err = src.Get(ctx, sub.ID, "api_key_deleted.v0")
	wantAPIError(t, "get deleted source", err, http.StatusNotFound, "")
	_, err = src.Get(ctx, "esb_"+strings.Repeat("0", 27), "api_key_created.v0")
	wantAPIError(t, "source of a missing subscription", err, http.StatusNotFound, "")

	upd, err := ss.Update(ctx, &events.SubscriptionUpdate{ID: sub.ID, DestinationIDs: &[]string{}})
	must(t, "update", err)
	if len(upd.Destinations) != 0 || len(upd.Sources) != 1 || upd.Description != sub.Description {
		t.Errorf("updated %+v", upd)
	}
	must(t, "delete the destination no longer in use", ds.Delete(ctx, d.ID))
	page, err := ss.Page(ctx, &acctapi.FilterOptions{Filter: fmt.Sprintf("obj.description == %q", s.name("esb"))})
	must(t, "filtered list", err)
	if len(page.Subscriptions) != 1 || page.Subscriptions[0].ID != sub.ID {
		t.Errorf("filtered list %+v", page.Subscriptions)
	}
	must(t, "delete", ss.Delete(ctx, sub.ID))
}

func (s *suite) testOperators(t *testing.T) {
	ctx := context.Background()
	ops := k8sop.NewOperators(s.client)
	op, err := ops.Create(ctx, &k8sop.OperatorCreate{Description: s.name("k8sop"), EnabledFeatures: []string{"INGRESS", "Ingress", "gateway"},
		Deployment: k8sop.Deployment{Name: "ngrok-operator", Namespace: "ngrok", Version: "0.1.0", ClusterName: "conformance"}})
	must(t, "create", err)
	cleanup(t, op.ID, func(ctx context.Context) error { return ops.Delete(ctx, op.ID) })
	if !strings.HasPrefix(op.ID, "k8sop_") || !slices.Equal(op.EnabledFeatures, []string{"ingress", "gateway"}) || op.Region != k8sop.DefaultRegion {
		t.Errorf("created %+v: want features lower-case without repeats and region %s", op, k8sop.DefaultRegion)
	}
	if op.Principal.ID == "" || op.Binding == nil || op.Binding.Cert.Cert != "" || !op.Binding.Cert.NotBefore.IsZero() || !op.Binding.Cert.NotAfter.IsZero() {
		t.Errorf("created %+v: want a principal and an empty binding", op)
	}
	r := s.do(t, request{method: http.MethodGet, path: "/kubernetes_operators/" + op.ID})
	if !strings.Contains(string(r.body), `"not_before":"0001-01-01T00:00:00Z"`) || !strings.Contains(string(r.body), `"not_after":"0001-01-01T00:00:00Z"`) {
		t.Errorf("GET %s: want zero-time cert validity, got %s", op.ID, r.body)
	}
	lax := k8sop.NewOperators(s.rawClient(t))
	_, err = lax.Create(ctx, &k8sop.OperatorCreate{EnabledFeatures: []string{"teleport"}})
	wantAPIError(t, "unknown feature", err, http.StatusBadRequest, "")
	_, err = lax.Create(ctx, &k8sop.OperatorCreate{EnabledFeatures: []string{"ingress"}, Binding: &k8sop.BindingCreate{EndpointSelectors: []string{"true"}}})
	wantAPIError(t, "binding without bindings", err, http.StatusBadRequest, "")
	_, err = lax.Create(ctx, &k8sop.OperatorCreate{EnabledFeatures: []string{"bindings"}, Binding: &k8sop.BindingCreate{EndpointSelectors: []string{"endpoint.nope =="}}})
	wantAPIError(t, "invalid selector", err, http.StatusBadRequest, "")
	_, err = lax.Create(ctx, &k8sop.OperatorCreate{EnabledFeatures: []string{"bindings"}, Binding: &k8sop.BindingCreate{CSR: "not a csr"}})
	wantAPIError(t, "invalid CSR", err, http.StatusBadRequest, "")

	csr, key := newCSR(t, "conformance.test")
	bound, err := ops.Create(ctx, &k8sop.OperatorCreate{Description: s.name("k8sop", "bindings"), EnabledFeatures: []string{"Bindings"},
		Binding: &k8sop.BindingCreate{EndpointSelectors: []string{`endpoint.name == "` + s.prefix + `"`}, CSR: csr}})
	must(t, "create with bindings", err)
	cleanup(t, bound.ID, func(ctx context.Context) error { return ops.Delete(ctx, bound.ID) })
	if bound.Binding == nil || bound.Binding.IngressEndpoint == "" {
		t.Fatalf("created %+v: want a binding with an ingress endpoint", bound)
	}
	cert := bound.Binding.Cert
	block, _ := pem.Decode([]byte(cert.Cert))
	if block == nil || block.Type != "CERTIFICATE" {
		t.Fatalf("binding cert %q is not a PEM certificate", trunc.String(cert.Cert, 80))
	}
	x, err := x509.ParseCertificate(block.Bytes)
	must(t, "parse the signed certificate", err)
	if !x.NotBefore.Equal(cert.NotBefore) || !x.NotAfter.Equal(cert.NotAfter) || !cert.NotAfter.After(cert.NotBefore) {
		t.Errorf("cert validity %v–%v, response says %v–%v", x.NotBefore, x.NotAfter, cert.NotBefore, cert.NotAfter)
	}
	if pub, ok := x.PublicKey.(*ecdsa.PublicKey); !ok || !pub.Equal(&key.PublicKey) {
		t.Errorf("the certificate does not certify the CSR's key")
	}
	var eps []string
	for e, err := range ops.BoundEndpoints(ctx, bound.ID, nil) {
		must(t, "bound endpoints", err)
		eps = append(eps, e.ID)
	}
	if len(eps) != 0 {
		t.Errorf("bound endpoints %v, want none (no endpoint is named %q)", eps, s.prefix)
	}

	upd, err := ops.Update(ctx, &k8sop.OperatorUpdate{ID: op.ID, Region: ptr(""), Description: ptr(s.name("k8sop", "renamed"))})
	must(t, "update", err)
	if upd.Region != k8sop.DefaultRegion || upd.Description != s.name("k8sop", "renamed") || !slices.Equal(upd.EnabledFeatures, op.EnabledFeatures) {
		t.Errorf("updated %+v", upd)
	}
	if !upd.UpdatedAt.After(op.CreatedAt) && !upd.UpdatedAt.Equal(op.CreatedAt) {
		t.Errorf("updated_at %v before created_at %v", upd.UpdatedAt, op.CreatedAt)
	}
	must(t, "delete", ops.Delete(ctx, op.ID))
	_, err = ops.Get(ctx, op.ID)
	wantAPIError(t, "get after delete", err, http.StatusNotFound, "")
}

// newCSR returns a PEM certificate signing request for cn and its key.
func newCSR(t *testing.T, cn string) (string, *ecdsa.PrivateKey) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	must(t, "key", err)
	der, err := x509.CreateCertificateRequest(rand.Reader, &x509.CertificateRequest{Subject: pkix.Name{CommonName: cn}}, key)
	must(t, "CSR", err)
	return string(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE REQUEST", Bytes: der})), key
}

// newCA returns a self-signed certificate for cn, PEM-encoded, valid from
// notBefore to notAfter: a CA (basic constraints CA true, key usages
// digital_signature, cert_sign and crl_sign, extended key usage
// client_auth) when isCA, else a leaf.
func newCA(t *testing.T, cn string, isCA bool, notBefore, notAfter time.Time) string {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	must(t, "key", err)
	serial, err := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 64))
	must(t, "serial", err)
	tmpl := &x509.Certificate{SerialNumber: serial, Subject: pkix.Name{CommonName: cn}, NotBefore: notBefore, NotAfter: notAfter,
		BasicConstraintsValid: true, IsCA: isCA, KeyUsage: x509.KeyUsageDigitalSignature,
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}}
	if isCA {
		tmpl.KeyUsage |= x509.KeyUsageCertSign | x509.KeyUsageCRLSign
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	must(t, "certificate", err)
	return string(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}))
}
