package fake_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"runtime"
	"slices"
	"strings"
	"testing"

	"github.com/acctapi/acctapi"
	"github.com/acctapi/acctapi/account"
	"github.com/acctapi/acctapi/backends"
	"github.com/acctapi/acctapi/fake"
)

// tokens returns n distinct tokens starting with prefix.
func tokens(prefix string, n int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = fmt.Sprintf("%s-%06d", prefix, i)
	}
	return out
}

// wantField fails t unless err is, or wraps, a field error on name.
func wantField(t *testing.T, err error, name string) {
	t.Helper()
	var fe *acctapi.FieldError
	if !errors.As(err, &fe) || fe.Field != name {
		t.Fatalf("error %v, want a field error on %q", err, name)
	}
}

// TestAddAccountKeyBound checks that an account gives at most
// MaxAccountKeys initial keys, that so many are taken, and that the
// checks on its tokens (repeated, or another account's even once deleted
// or restored away) still hold.
func TestAddAccountKeyBound(t *testing.T) {
	srv, _ := start(t)
	if _, err := srv.AddAccount(fake.Account{APIKeys: tokens("over", fake.MaxAccountKeys+1)}); err == nil {
		t.Fatalf("AddAccount with %d keys succeeded", fake.MaxAccountKeys+1)
	} else {
		wantField(t, err, "api_keys")
	}
	if _, err := fake.New(fake.WithAccount(fake.Account{APIKeys: tokens("over", fake.MaxAccountKeys+1)})); err == nil {
		t.Errorf("WithAccount with %d keys succeeded", fake.MaxAccountKeys+1)
	}
	if n := len(srv.Accounts()); n != 1 {
		t.Fatalf("%d accounts after refusals, want 1", n)
	}
	full := must(srv.AddAccount(fake.Account{APIKeys: tokens("full", fake.MaxAccountKeys)}))(t)
	if got := srv.Accounts()[1]; got.ID != full.ID || len(got.APIKeys) != fake.MaxAccountKeys {
		t.Fatalf("account with %d keys listed with %d", fake.MaxAccountKeys, len(got.APIKeys))
	}

	_, err := srv.AddAccount(fake.Account{APIKeys: []string{"a-secret", "b-secret", "a-secret"}})
	wantField(t, err, "api_keys[2]")
	if !strings.Contains(err.Error(), "repeats api_keys[0]") {
		t.Errorf("repeated token: %v, want it to name api_keys[0]", err)
	}
	_, err = srv.AddAccount(fake.Account{APIKeys: []string{"fresh-secret", "full-000999"}})
	wantField(t, err, "api_keys[1]")

	// A deleted initial key's token still names its account.
	other := must(srv.AddAccount(fake.Account{APIKeys: []string{"other-secret"}}))(t)
	keys := account.NewAPIKeys(clientFor(t, srv, "other-secret"))
	ctx := context.Background()
	for k, err := range keys.List(ctx, nil) {
		if err != nil {
			t.Fatal(err)
		}
		if err := keys.Delete(ctx, k.ID); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := srv.AddAccount(fake.Account{APIKeys: []string{"other-secret"}}); err == nil {
		t.Errorf("the deleted initial key of %s was given to a new account", other.ID)
	}

	// An account restored away frees its tokens.
	snap := srv.Snapshot()
	must(srv.AddAccount(fake.Account{APIKeys: []string{"later-secret"}}))(t)
	srv.Restore(snap)
	if _, err := srv.AddAccount(fake.Account{APIKeys: []string{"later-secret"}}); err != nil {
		t.Errorf("the token of an account restored away: %v", err)
	}
}

// TestBackendCollectionBounds checks that the fake refuses a failover with
// more than MaxFailoverBackends backends, an HTTP response backend with
// more than MaxHeaders headers and a tunnel group (or a seeded tunnel) with
// more than MaxLabels labels, with 400 naming the member and stores
// nothing, on create and on update.
func TestBackendCollectionBounds(t *testing.T) {
	srv, _ := start(t)
	ids := make([]string, backends.MaxFailoverBackends+1)
	headers := map[string]string{}
	labels := map[string]string{}
	for i := range ids {
		ids[i] = fmt.Sprintf("bkdhr_%d", i)
		headers[fmt.Sprintf("X-H%d", i)] = "v"
		labels[fmt.Sprintf("l%d", i)] = "v"
	}
	hr := must(fake.Seed[backends.HTTPResponse](srv, "", &backends.HTTPResponseCreate{StatusCode: 204}))(t)
	tg := must(fake.Seed[backends.TunnelGroup](srv, "", &backends.TunnelGroupCreate{Labels: map[string]string{"app": "x"}}))(t)
	fo := must(fake.Seed[backends.Failover](srv, "", &backends.FailoverCreate{}))(t)
	for _, tt := range []struct {
		method, path, body string
		code, field        string
	}{
		{"POST", "/backends/failover", mustJSON(t, map[string]any{"backends": ids}), acctapi.CodeInvalidValue, "backends"},
		{"PATCH", "/backends/failover/" + fo.ID, mustJSON(t, map[string]any{"backends": ids}), acctapi.CodeInvalidValue, "backends"},
		{"POST", "/backends/http_response", mustJSON(t, map[string]any{"status_code": 200, "headers": headers}), acctapi.CodeInvalidValue, "headers"},
		{"PATCH", "/backends/http_response/" + hr.ID, mustJSON(t, map[string]any{"headers": headers}), acctapi.CodeInvalidValue, "headers"},
		{"POST", "/backends/tunnel_group", mustJSON(t, map[string]any{"labels": labels}), acctapi.CodeLabelCountLimit, "labels"},
		{"PATCH", "/backends/tunnel_group/" + tg.ID, mustJSON(t, map[string]any{"labels": labels}), acctapi.CodeLabelCountLimit, "labels"},
	} {
		r := raw(t, srv, tt.method, tt.path, nil, tt.body)
		e := r.apiErr(t)
		if r.status != http.StatusBadRequest || e.ErrorCode != tt.code || e.Details["field"] != tt.field {
			t.Errorf("%s %s: %d %s field %q, want 400 %s field %q", tt.method, tt.path, r.status, e.ErrorCode, e.Details["field"], tt.code, tt.field)
		}
	}
	// One under each bound is taken (the failover's ids are then looked
	// up, and do not exist).
	if r := raw(t, srv, "POST", "/backends/failover", nil, mustJSON(t, map[string]any{"backends": ids[:backends.MaxFailoverBackends]})); r.status != http.StatusBadRequest || r.apiErr(t).ErrorCode != acctapi.CodeUnknownBackend {
		t.Errorf("a failover of %d unknown backends: %d %s, want 400 %s", backends.MaxFailoverBackends, r.status, r.body, acctapi.CodeUnknownBackend)
	}
	delete(headers, "X-H0")
	delete(labels, "l0")
	must(fake.Seed[backends.HTTPResponse](srv, "", &backends.HTTPResponseCreate{StatusCode: 200, Headers: headers}))(t)
	must(fake.Seed[backends.TunnelGroup](srv, "", &backends.TunnelGroupCreate{Labels: labels}))(t)

	// Seeded tunnels follow the labels' bound.
	labels["l0"] = "v"
	if _, err := fake.Seed[fake.Tunnel](srv, "", &fake.Tunnel{Labels: labels}); !acctapi.HasCode(err, acctapi.CodeLabelCountLimit) {
		t.Errorf("a tunnel with %d labels: %v, want %s", len(labels), err, acctapi.CodeLabelCountLimit)
	}
	// Nothing more was stored: a failover, two HTTP responses, two groups.
	if n := len(fake.List[backends.HTTPResponse](srv, "")) + len(fake.List[backends.TunnelGroup](srv, "")) + len(fake.List[backends.Failover](srv, "")) + len(fake.List[fake.Tunnel](srv, "")); n != 5 {
		t.Errorf("%d backends and tunnels stored, want 5", n)
	}
}

// TestClientRefusesOverBounds checks that the SDK refuses, before sending,
// what the fake would refuse for a collection's bound: the same Validate.
func TestClientRefusesOverBounds(t *testing.T) {
	srv, _ := start(t)
	labels := map[string]string{}
	for i := range backends.MaxLabels + 1 {
		labels[fmt.Sprintf("l%d", i)] = "v"
	}
	_, err := backends.NewTunnelGroups(srv.Client()).Create(context.Background(), &backends.TunnelGroupCreate{Labels: labels})
	if !acctapi.HasCode(err, acctapi.CodeLabelCountLimit) {
		t.Fatalf("Create with %d labels: %v, want %s", len(labels), err, acctapi.CodeLabelCountLimit)
	}
	if n := len(srv.Journal()); n != 0 {
		t.Errorf("%d requests reached the fake, want none", n)
	}
}

// TestMaxResources checks WithMaxResources: a create beyond the bound is
// 409 ERR_ACCTAPI_RESOURCE_LIMIT through the API and an error from Seed;
// a delete, its cascades (a service user's keys) and Restore give room
// back; each account has its own count; initial keys count.
func TestMaxResources(t *testing.T) {
	if _, err := fake.New(fake.WithMaxResources(0)); err == nil {
		t.Error("WithMaxResources(0) accepted")
	}
	// An account given with WithAccount over the bound names WithAccount,
	// which the caller called, not AddAccount (a review).
	_, err := fake.New(fake.WithMaxResources(1), fake.WithAccount(fake.Account{APIKeys: []string{"a", "b"}}))
	if err == nil || !strings.Contains(err.Error(), "WithAccount (account 1)") || strings.Contains(err.Error(), "AddAccount") {
		t.Errorf("New with an account over the bound: %v; want an error naming WithAccount", err)
	} else {
		wantField(t, err, "api_keys")
	}
	srv, _ := start(t, fake.WithMaxResources(4)) // its initial key is 1
	ctx := context.Background()
	users := account.NewServiceUsers(srv.Client())
	su := must(users.Create(ctx, &account.ServiceUserCreate{Name: "bot"}))(t)                         // 2
	must(account.NewAPIKeys(srv.Client()).Create(ctx, &account.APIKeyCreate{OwnerID: su.ID}))(t)      // 3
	must(fake.Seed[backends.HTTPResponse](srv, "", &backends.HTTPResponseCreate{StatusCode: 204}))(t) // 4
	wantFull := func(when string) {
		t.Helper()
		r := raw(t, srv, "POST", "/backends/http_response", nil, `{"status_code":200}`)
		if e := r.apiErr(t); r.status != http.StatusConflict || e.ErrorCode != acctapi.CodeResourceLimit || !strings.Contains(e.Msg, "4 resources") {
			t.Errorf("%s: create answered %d %s, want 409 %s", when, r.status, r.body, acctapi.CodeResourceLimit)
		}
		if _, err := fake.Seed[account.ServiceUser](srv, "", &account.ServiceUserCreate{Name: "more"}); !acctapi.HasCode(err, acctapi.CodeResourceLimit) {
			t.Errorf("%s: Seed: %v, want %s", when, err, acctapi.CodeResourceLimit)
		}
	}
	wantFull("at the bound")
	snap := srv.Snapshot()

	// Deleting the service user deletes its key too: two places free.
	if err := users.Delete(ctx, su.ID); err != nil {
		t.Fatal(err)
	}
	for i := range 2 {
		must(fake.Seed[account.ServiceUser](srv, "", &account.ServiceUserCreate{Name: fmt.Sprintf("u%d", i)}))(t)
	}
	wantFull("after the delete and two creates")

	// Another account counts its own.
	other := must(srv.AddAccount(fake.Account{APIKeys: []string{"other-secret"}}))(t)
	must(fake.Seed[account.ServiceUser](srv, other.ID, &account.ServiceUserCreate{Name: "bot"}))(t)
	if _, err := srv.AddAccount(fake.Account{APIKeys: tokens("many", 5)}); err == nil {
		t.Error("an account of 5 initial keys added to a server of 4 resources per account")
	} else {
		wantField(t, err, "api_keys")
	}

	// Restore brings the count back with the resources.
	srv.Restore(snap)
	wantFull("after Restore")
	if err := users.Delete(ctx, su.ID); err != nil {
		t.Fatalf("the service user restored: %v", err)
	}
	must(fake.Seed[account.ServiceUser](srv, "", &account.ServiceUserCreate{Name: "again"}))(t)
}

// TestMaxResourcesCountsReferences: each reference one resource holds to
// another counts against WithMaxResources, on create, update and delete.
// A review found a failover of 100 backends taking 62.5 KB (600 bytes a
// reference, in the index of references), so that an account within the
// bound of resources could hold 12.5 GB.
func TestMaxResourcesCountsReferences(t *testing.T) {
	srv, _ := start(t, fake.WithMaxResources(10)) // its initial key is 1
	ctx := context.Background()
	hrs := backends.NewHTTPResponses(srv.Client())
	fos := backends.NewFailovers(srv.Client())
	var ids []string
	newHR := func() {
		t.Helper()
		ids = append(ids, must(hrs.Create(ctx, &backends.HTTPResponseCreate{StatusCode: 200}))(t).ID)
	}
	full := func(what string, err error) {
		t.Helper()
		if !acctapi.HasCode(err, acctapi.CodeResourceLimit) {
			t.Errorf("%s: %v, want %s", what, err, acctapi.CodeResourceLimit)
		}
	}
	newHR()
	newHR()
	newHR()                                                                               // 4
	fo := must(fos.Create(ctx, &backends.FailoverCreate{Backends: slices.Clone(ids)}))(t) // 4 + 1 + 3 = 8
	_, err := fos.Create(ctx, &backends.FailoverCreate{Backends: ids[:2]})
	full("a failover of 2 backends at 8 of 10", err)
	if msg := err.Error(); !strings.Contains(msg, "stores 8 resources") || !strings.Contains(msg, "of the 10 this server allows") ||
		!strings.Contains(msg, "needs 3 more") {
		t.Errorf("the 409 says %q; want it to say 8 stored of 10, 3 needed", msg)
	}
	newHR()                                                                               // 9
	must(fos.Update(ctx, &backends.FailoverUpdate{ID: fo.ID, Backends: ptr(ids[:1])}))(t) // 7
	newHR()                                                                               // 8
	newHR()                                                                               // 9
	_, err = fos.Update(ctx, &backends.FailoverUpdate{ID: fo.ID, Backends: ptr(ids[:4])}) // 12
	full("an update to 4 backends at 9 of 10", err)
	if got := must(fos.Get(ctx, fo.ID))(t); !slices.Equal(got.Backends, ids[:1]) {
		t.Errorf("the refused update changed the failover: %v", got.Backends)
	}
	must(fos.Update(ctx, &backends.FailoverUpdate{ID: fo.ID, Backends: ptr(ids[:2])}))(t) // 10
	newHRErr := func() error {
		_, err := hrs.Create(ctx, &backends.HTTPResponseCreate{StatusCode: 200})
		return err
	}
	err = newHRErr()
	full("a create at 10 of 10", err)
	if err == nil || !strings.Contains(err.Error(), "needs at least 1 more") {
		t.Errorf("a create at the bound: %v; want it to need at least 1 more (its references are not known yet)", err)
	}
	if err := fos.Delete(ctx, fo.ID); err != nil { // 10 - 1 - 2 = 7
		t.Fatal(err)
	}
	for i := range 3 {
		if err := newHRErr(); err != nil {
			t.Fatalf("create %d after the delete: %v", i+1, err)
		}
	}
	full("a create at 10 of 10 again", newHRErr())
}

// TestMaxResourcesCountsTunnelGroups: a tunnel group's tunnels count
// against WithMaxResources, as it is created or changed and as tunnels
// are seeded and deleted (a review found a group of 1,000 tunnels taking
// 35.5 KB, counted as one).
func TestMaxResourcesCountsTunnelGroups(t *testing.T) {
	srv, _ := start(t, fake.WithMaxResources(9)) // its initial key is 1
	ctx := context.Background()
	x := map[string]string{"app": "x"}
	seed := func() (string, error) {
		tn, err := fake.Seed[fake.Tunnel](srv, "", &fake.Tunnel{Labels: x})
		if err != nil {
			return "", err
		}
		return tn.ID, nil
	}
	tn1 := must(seed())(t)
	must(seed())(t) // 3
	groups := backends.NewTunnelGroups(srv.Client())
	g := must(groups.Create(ctx, &backends.TunnelGroupCreate{Labels: x}))(t) // 3 + 1 + 2 = 6
	must(seed())(t)                                                          // 6 + 1 + 1 = 8
	if _, err := seed(); !acctapi.HasCode(err, acctapi.CodeResourceLimit) || !strings.Contains(err.Error(), "needs 2 more") {
		t.Errorf("a fourth tunnel in the group at 8 of 9: %v, want %s, needing 2 more", err, acctapi.CodeResourceLimit)
	}
	if got := must(groups.Get(ctx, g.ID))(t); len(got.Tunnels) != 3 {
		t.Errorf("the refused seed changed the group: %d tunnels, want 3", len(got.Tunnels))
	}
	// Restore brings the count back with the group and its tunnels.
	snap := srv.Snapshot()
	if err := fake.Delete[fake.Tunnel](srv, "", tn1); err != nil { // 8 - 1 - 1 = 6
		t.Fatal(err)
	}
	srv.Restore(snap) // 8
	if _, err := seed(); !acctapi.HasCode(err, acctapi.CodeResourceLimit) {
		t.Errorf("a fourth tunnel in the group after Restore: %v, want %s", err, acctapi.CodeResourceLimit)
	}
	if err := fake.Delete[fake.Tunnel](srv, "", tn1); err != nil { // 8 - 1 - 1 = 6
		t.Fatal(err)
	}
	must(groups.Update(ctx, &backends.TunnelGroupUpdate{ID: g.ID, Labels: &map[string]string{"app": "y"}}))(t) // 6 - 2 = 4
	for i := range 5 {
		if _, err := seed(); err != nil { // 5 to 9
			t.Fatalf("tunnel %d after the group let go of its tunnels: %v", i+1, err)
		}
	}
	if _, err := seed(); !acctapi.HasCode(err, acctapi.CodeResourceLimit) {
		t.Errorf("a tunnel at 9 of 9: %v, want %s", err, acctapi.CodeResourceLimit)
	}
	if err := groups.Delete(ctx, g.ID); err != nil { // 9 - 1 = 8
		t.Fatal(err)
	}
	must(seed())(t)
}

// TestNoRouteNamesEscapedPath checks that a 404 and a 405 name the path as
// it was sent, its escapes in their normal form: "/service_users%2Fx" is
// one segment, which no route has, not the path /service_users/x its
// unescaped form spells.
func TestNoRouteNamesEscapedPath(t *testing.T) {
	srv, _ := start(t)
	for _, tt := range []struct{ method, path, msg string }{
		{"GET", "/service_users%2Fx", "No API path /service_users%2Fx."},
		{"GET", "/service_users%2fx", "No API path /service_users%2Fx."},
		{"GET", "/%2e%2e/api_keys", "No API path /%2E%2E/api_keys."},
		{"PUT", "/service_users/a%2Fb", "Method PUT is not allowed on /service_users/a%2Fb."},
	} {
		if got := raw(t, srv, tt.method, tt.path, nil, "").apiErr(t).Msg; got != tt.msg {
			t.Errorf("%s %s: %q, want %q", tt.method, tt.path, got, tt.msg)
		}
	}
}

// TestEscapedPathIsCanonical: a path that escapes an unreserved character
// ("/service%5Fusers") is the path it spells in the uris of the answer (a
// review found the list served, with its uri and next_page_uri repeating
// the escape); the journal keeps the path as sent (see
// TestEscapedPathAsRouted, also for faults).
func TestEscapedPathIsCanonical(t *testing.T) {
	srv, _ := start(t)
	ctx := context.Background()
	for _, n := range []string{"a", "b"} {
		must(account.NewServiceUsers(srv.Client()).Create(ctx, &account.ServiceUserCreate{Name: n}))(t)
	}
	srv.ClearJournal()
	r := raw(t, srv, "GET", "/service%5Fusers?limit=1", nil, "")
	var page struct {
		URI         string `json:"uri"`
		NextPageURI string `json:"next_page_uri"`
	}
	if err := json.Unmarshal(r.body, &page); r.status != http.StatusOK || err != nil {
		t.Fatalf("GET /service%%5Fusers: %d %s", r.status, r.body)
	}
	if want := srv.URL + "/service_users"; page.URI != want || !strings.HasPrefix(page.NextPageURI, want+"?") {
		t.Errorf("uri %q, next_page_uri %q; want both at %s", page.URI, page.NextPageURI, want)
	}
	if j := srv.Journal(); len(j) != 1 || j[0].Path != "/service%5Fusers" {
		t.Errorf("journal %+v; want one entry, at the path as sent", j)
	}
}

// BenchmarkAddAccount adds accounts of 1,000 initial keys to a server that
// holds 50 such accounts: its cost must not grow with what the server
// holds, nor with the square of the keys given.
func BenchmarkAddAccount(b *testing.B) {
	srv, _ := start(b)
	for i := range 50 {
		if _, err := srv.AddAccount(fake.Account{APIKeys: tokens(fmt.Sprintf("held%d", i), 1000)}); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		i++
		if _, err := srv.AddAccount(fake.Account{APIKeys: tokens(fmt.Sprintf("new%d", i), 1000)}); err != nil {
			b.Fatal(err)
		}
	}
}

// fullFailovers seeds n HTTP response backends and n failovers, each of
// them holding all n backends, and returns the server.
func fullFailovers(tb testing.TB, n int) *fake.Server {
	tb.Helper()
	srv, _ := start(tb)
	ids := make([]string, n)
	for i := range ids {
		ids[i] = must(fake.Seed[backends.HTTPResponse](srv, "", &backends.HTTPResponseCreate{StatusCode: 204}))(tb).ID
	}
	for range n {
		must(fake.Seed[backends.Failover](srv, "", &backends.FailoverCreate{Backends: ids}))(tb)
	}
	return srv
}

// TestPageOfLargestItems checks that a page of failovers, each of them as
// large as the bounds allow, is at most limit times one of them (and the
// page's own few members): the bound on a failover's backends bounds a
// page.
func TestPageOfLargestItems(t *testing.T) {
	srv := fullFailovers(t, backends.MaxFailoverBackends)
	one := raw(t, srv, "GET", "/backends/failover?limit=1", nil, "")
	page := raw(t, srv, "GET", "/backends/failover?limit=100", nil, "")
	if one.status != 200 || page.status != 200 {
		t.Fatalf("pages answered %d, %d", one.status, page.status)
	}
	var p backends.FailoverList
	page.decode(t, &p)
	if len(p.Backends) != 100 || len(p.Backends[0].Backends) != backends.MaxFailoverBackends {
		t.Fatalf("page of %d failovers of %d backends, want 100 of %d", len(p.Backends), len(p.Backends[0].Backends), backends.MaxFailoverBackends)
	}
	t.Logf("a page of 100 full failovers: %d bytes; of one: %d bytes", len(page.body), len(one.body))
	if len(page.body) > 100*len(one.body) {
		t.Errorf("a page of 100 is %d bytes, over 100 times a page of one (%d bytes)", len(page.body), len(one.body))
	}
}

// BenchmarkHeapPerFullFailover reports the heap a failover of
// MaxFailoverBackends backends holds (bytes/failover), its references'
// index included.
func BenchmarkHeapPerFullFailover(b *testing.B) {
	for b.Loop() {
		var before, after runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&before)
		srv := fullFailovers(b, backends.MaxFailoverBackends)
		runtime.GC()
		runtime.ReadMemStats(&after)
		b.ReportMetric(float64(after.HeapAlloc-before.HeapAlloc)/float64(backends.MaxFailoverBackends), "bytes/failover")
		runtime.KeepAlive(srv)
	}
}
