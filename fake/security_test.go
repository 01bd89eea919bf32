package fake_test

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/acctapi/acctapi"
	"github.com/acctapi/acctapi/account"
	"github.com/acctapi/acctapi/events"
	"github.com/acctapi/acctapi/fake"
)

// Secrets used by the security tests; each is unique, so finding one in
// a journal or message is never a coincidence.
const (
	secKinesis    = "kinesis-secret-Zq81vT"
	secClient     = "client-secret-Hh27pW"
	secMonitoring = "monitoring-key-Ux55mR"
)

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
		Auth: events.CloudAuth{Creds: &events.Creds{AccessKeyID: "AKIA", SecretAccessKey: secKinesis}}}}}))(t)
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

// TestFilterLimits: a filter's length, nesting and cost are bounded, per
// item and per request, and every refusal is 400 ERR_NGROK_250.
func TestFilterLimits(t *testing.T) {
	srv, _ := start(t)
	for i := range 50 {
		must(fake.Seed[account.APIKey](srv, "", &account.APIKeyCreate{Description: fmt.Sprintf("key-%d", i)}))(t)
	}
	list := func(n int) string { return "[" + strings.TrimSuffix(strings.Repeat("1,", n), ",") + "]" }
	l20, l60 := list(20), list(60)
	for _, tt := range []struct {
		name, filter string
		status       int
	}{
		{"4096 bytes", `obj.description == "` + strings.Repeat("x", 4096-len(`obj.description == ""`)) + `"`, 200},
		{"4097 bytes", `obj.description == "` + strings.Repeat("x", 4097-len(`obj.description == ""`)) + `"`, 400},
		{"nesting", strings.Repeat("(", 64) + "true" + strings.Repeat(")", 64), 400},
		{"over the per-item cost", fmt.Sprintf("%s.all(x, %s.all(y, %s.all(z, x+y+z > 0)))", l60, l60, l60), 400},
		// Under the per-item limit (about 80,000), but not over 50 items.
		{"over the per-request cost", fmt.Sprintf("%s.all(x, %s.all(y, %s.all(z, x+y+z > 0)))", l20, l20, l20), 400},
		{"cheap, over every item", `obj.description.endsWith("-49") && obj.created_at > timestamp("2000-01-01T00:00:00Z")`, 200},
	} {
		t.Run(tt.name, func(t *testing.T) {
			got := raw(t, srv, "GET", "/api_keys?filter="+url.QueryEscape(tt.filter), nil, "")
			if got.status != tt.status {
				t.Fatalf("status %d %s, want %d", got.status, got.body, tt.status)
			}
			if got.status == 400 {
				if e := got.apiErr(t); e.ErrorCode != acctapi.CodeBadFilter {
					t.Errorf("error %+v, want %s", e, acctapi.CodeBadFilter)
				}
			}
		})
	}
}

// TestNoRetryAfterDrop: with the default retry policy, a POST or PATCH
// whose connection drops is sent once and never again (it might have taken
// effect); a GET or DELETE is retried. Over loopback TCP, where
// net/http's own transport might retry too, and in memory.
func TestNoRetryAfterDrop(t *testing.T) {
	overBothTransports(t, func(t *testing.T, srv *fake.Server, c *acctapi.Client) {
		su := account.NewServiceUsers(c)
		ctx := context.Background()
		attempts := func(method, pattern string) *atomic.Int64 {
			var n atomic.Int64
			srv.React(method, pattern, func(*http.Request) *fake.Fault { n.Add(1); return nil })
			srv.DropNext(method, pattern, 1)
			return &n
		}

		n := attempts("POST", "/service_users")
		if _, err := su.Create(ctx, &account.ServiceUserCreate{Name: "once"}); err == nil {
			t.Errorf("create through a dropped connection succeeded")
		}
		if n.Load() != 1 || len(fake.List[account.ServiceUser](srv, "")) != 0 {
			t.Errorf("POST: %d attempts, %d service users; want 1 and 0", n.Load(), len(fake.List[account.ServiceUser](srv, "")))
		}

		u := must(su.Create(ctx, &account.ServiceUserCreate{Name: "kept"}))(t)
		n = attempts("PATCH", "/service_users/*")
		if _, err := su.Update(ctx, &account.ServiceUserUpdate{ID: u.ID, Name: ptr("renamed")}); err == nil {
			t.Errorf("update through a dropped connection succeeded")
		}
		if got, _ := fake.Get[account.ServiceUser](srv, "", u.ID); n.Load() != 1 || got.Name != "kept" {
			t.Errorf("PATCH: %d attempts, name %q; want 1 and unchanged", n.Load(), got.Name)
		}

		n = attempts("GET", "/service_users/*")
		if _, err := su.Get(ctx, u.ID); err != nil || n.Load() != 2 {
			t.Errorf("GET: %v after %d attempts; want success after 2", err, n.Load())
		}
		n = attempts("DELETE", "/service_users/*")
		if err := su.Delete(ctx, u.ID); err != nil || n.Load() != 2 {
			t.Errorf("DELETE: %v after %d attempts; want success after 2", err, n.Load())
		}
	})
}

// TestNoRetryAfterDropAfter is TestNoRetryAfterDrop in the dangerous case:
// the request reaches the store and commits, and only then does the
// connection drop (Fault.DropAfter). A POST or PATCH is still sent once,
// so the create or update is applied once, not duplicated; a GET is
// retried and succeeds. Over loopback TCP and in memory.
func TestNoRetryAfterDropAfter(t *testing.T) {
	overBothTransports(t, func(t *testing.T, srv *fake.Server, c *acctapi.Client) {
		su := account.NewServiceUsers(c)
		ctx := context.Background()
		// journaled returns the journal's entries for method since the
		// last call, as "status path".
		journaled := func(method string) []string {
			var out []string
			for _, e := range srv.Journal() {
				if e.Method == method {
					out = append(out, fmt.Sprint(e.Status, " ", e.Path))
				}
			}
			srv.ClearJournal()
			return out
		}

		srv.DropAfterNext("POST", "/service_users", 1)
		if _, err := su.Create(ctx, &account.ServiceUserCreate{Name: "once"}); err == nil {
			t.Errorf("create whose answer was dropped succeeded")
		}
		users := fake.List[account.ServiceUser](srv, "")
		if len(users) != 1 || users[0].Name != "once" {
			t.Fatalf("service users %+v, want exactly one, named once", users)
		}
		if got := journaled("POST"); !slices.Equal(got, []string{"201 /service_users"}) {
			t.Errorf("POSTs journaled: %q, want one, answered 201", got)
		}

		// API keys have no unique member: a repeated create would make
		// a second key.
		srv.DropAfterNext("POST", "/api_keys", 1)
		if _, err := account.NewAPIKeys(c).Create(ctx, &account.APIKeyCreate{Description: "once"}); err == nil {
			t.Errorf("create whose answer was dropped succeeded")
		}
		var once int
		for _, k := range fake.List[account.APIKey](srv, "") {
			if k.Description == "once" {
				once++
			}
		}
		if got := journaled("POST"); once != 1 || !slices.Equal(got, []string{"201 /api_keys"}) {
			t.Errorf("%d API keys made, POSTs journaled: %q; want one, answered 201", once, got)
		}

		id := users[0].ID
		srv.DropAfterNext("PATCH", "/service_users/*", 1)
		if _, err := su.Update(ctx, &account.ServiceUserUpdate{ID: id, Name: ptr("renamed")}); err == nil {
			t.Errorf("update whose answer was dropped succeeded")
		}
		if got, _ := fake.Get[account.ServiceUser](srv, "", id); got.Name != "renamed" {
			t.Errorf("name %q, want renamed: the update was applied", got.Name)
		}
		if got := journaled("PATCH"); !slices.Equal(got, []string{"200 /service_users/" + id}) {
			t.Errorf("PATCHes journaled: %q, want one, answered 200", got)
		}

		srv.DropAfterNext("GET", "/service_users/*", 1)
		if u, err := su.Get(ctx, id); err != nil || u.Name != "renamed" {
			t.Errorf("GET whose first answer was dropped: %+v, %v; want the retry's answer", u, err)
		}
		if got := journaled("GET"); len(got) != 2 {
			t.Errorf("GETs journaled: %q, want two (the dropped answer and the retry)", got)
		}
		if n := len(fake.List[account.ServiceUser](srv, "")); n != 1 {
			t.Errorf("%d service users at the end, want 1", n)
		}
	})
}

// overBothTransports runs f against a fake over loopback TCP, where
// net/http's own transport might retry, and one in memory, each with a
// client of the default retry policy shortened to tiny delays.
func overBothTransports(t *testing.T, f func(t *testing.T, srv *fake.Server, c *acctapi.Client)) {
	t.Helper()
	for _, tcp := range []bool{true, false} {
		t.Run(map[bool]string{true: "tcp", false: "in memory"}[tcp], func(t *testing.T) {
			var srv *fake.Server
			if tcp {
				srv = fake.Start(t)
			} else {
				srv, _ = start(t)
			}
			f(t, srv, clientFor(t, srv, srv.APIKey(), acctapi.WithRetry(acctapi.RetryPolicy{MaxAttempts: 4, BaseDelay: 1, MaxDelay: 1})))
		})
	}
}
