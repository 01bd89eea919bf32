package fake_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/acctapi/acctapi"
	"github.com/acctapi/acctapi/account"
	"github.com/acctapi/acctapi/events"
	"github.com/acctapi/acctapi/fake"
)

// TestJournal checks one entry per answered request, with its method,
// path, query, status, operation id (as the Operation-Id header and the
// error body give it) and the clock's time.
func TestJournal(t *testing.T) {
	t.Parallel()
	srv, clk := start(t)
	steps := []struct {
		method, path, body string
		advance            time.Duration
		status             int
	}{
		{"POST", "/service_users", `{"name":"a"}`, 0, 201},
		{"GET", "/service_users?limit=2&before_id=service_z", "", time.Minute, 200},
		{"GET", "/service_users/service_nope", "", time.Second, 404},
		{"PUT", "/service_users", `{}`, 0, 405},
		{"GET", "/api_keys?filter=" + "obj.id%20%3D%3D", "", time.Hour, 400},
	}
	var want []fake.Entry
	for _, st := range steps {
		now := clk.Advance(st.advance)
		r := raw(t, srv, st.method, st.path, nil, st.body)
		if r.status != st.status {
			t.Fatalf("%s %s: %d, want %d", st.method, st.path, r.status, st.status)
		}
		opID := r.header.Get("Operation-Id")
		if !strings.HasPrefix(opID, "op_") {
			t.Fatalf("Operation-Id %q", opID)
		}
		if r.status >= 400 {
			if e := r.apiErr(t); e.OperationID() != opID {
				t.Errorf("error body's operation id %q, header %q", e.OperationID(), opID)
			}
		}
		path, query, _ := strings.Cut(st.path, "?")
		want = append(want, fake.Entry{Time: now, Method: st.method, Path: path, Query: query, Status: st.status,
			OperationID: opID, RequestBody: st.body, ResponseBody: string(r.body)})
	}
	if diff := cmp.Diff(want, srv.Journal()); diff != "" {
		t.Errorf("journal (-want +got):\n%s", diff)
	}

	// Journal returns a copy.
	j := srv.Journal()
	j[0].Method = "CHANGED"
	if srv.Journal()[0].Method != "POST" {
		t.Error("changing Journal's result changed the journal")
	}
	srv.ClearJournal()
	if n := len(srv.Journal()); n != 0 {
		t.Errorf("after ClearJournal: %d entries", n)
	}
	// The typed client's requests are journaled too; failed authentication
	// as well.
	must(account.NewServiceUsers(srv.Client()).Get(t.Context(), must(fake.Seed[account.ServiceUser](srv, "", &account.ServiceUserCreate{Name: "b"}))(t).ID))(t)
	_, err := account.NewServiceUsers(clientFor(t, srv, "wrong")).Page(t.Context(), nil)
	wantAPIError(t, err, http.StatusUnauthorized, acctapi.CodeInvalidToken)
	got := srv.Journal()
	if len(got) != 2 || got[0].Status != 200 || got[1].Status != 401 {
		t.Errorf("journal after client calls: %+v", got)
	}
}

// TestJournalRedaction checks that the journal never holds the
// Authorization header or a secret: API key tokens, cloud secret access
// keys, client secrets and monitoring API keys read "REDACTED" in request
// and response bodies.
func TestJournalRedaction(t *testing.T) {
	t.Parallel()
	srv, _ := start(t)
	ctx := t.Context()
	key := must(account.NewAPIKeys(srv.Client()).Create(ctx, &account.APIKeyCreate{Description: "k"}))(t)
	secrets := []string{srv.APIKey(), *key.Token, "AWS-SECRET-1", "CLIENT-SECRET-2", "MONITORING-KEY-3"}
	dests := events.NewDestinations(clientFor(t, srv, *key.Token))
	targets := []events.Target{
		{Kinesis: &events.Kinesis{StreamARN: "arn:s", Auth: &events.CloudAuth{Creds: &events.Creds{AccessKeyID: "AKIA", SecretAccessKey: "AWS-SECRET-1"}}}},
		{CloudLogsIngestion: &events.CloudLogsIngestion{TenantID: "t", ClientID: "c", ClientSecret: "CLIENT-SECRET-2",
			LogsIngestionURI: "https://logs.example", DataCollectionRuleID: "d", DataCollectionStreamName: "s"}},
		{Monitoring: &events.Monitoring{APIKey: "MONITORING-KEY-3", Site: "example.com"}},
	}
	for _, tg := range targets {
		d := must(dests.Create(ctx, &events.DestinationCreate{Format: events.FormatJSON, Target: tg}))(t)
		must(dests.Update(ctx, &events.DestinationUpdate{ID: d.ID, Target: &tg}))(t)
		must(dests.Get(ctx, d.ID))(t)
	}
	collect(t, dests.List(ctx, nil))
	raw(t, srv, "GET", "/api_keys", nil, "")
	// A body that is not JSON but holds a secret member is withheld.
	raw(t, srv, "POST", "/event_destinations", nil, `{"target":{"monitoring":{"api_key":"MONITORING-KEY-3"`)

	journal := srv.Journal()
	if len(journal) < 12 {
		t.Fatalf("journal has %d entries, want at least 12", len(journal))
	}
	for _, e := range journal {
		b, _ := json.Marshal(e)
		for _, s := range secrets {
			if strings.Contains(string(b), s) {
				t.Errorf("journal entry %s %s holds secret %q: %s", e.Method, e.Path, s, b)
			}
		}
	}
	// The members are there, redacted, where they were sent and answered.
	create := journal[0]
	if create.Path != "/api_keys" || !strings.Contains(create.ResponseBody, `"token":"REDACTED"`) {
		t.Errorf("API key create response in the journal: %s", create.ResponseBody)
	}
	var createResp account.APIKey
	must(0, json.Unmarshal([]byte(create.ResponseBody), &createResp))(t)
	if diff := cmp.Diff(*key, createResp, cmpopts.IgnoreFields(account.APIKey{}, "Token")); diff != "" {
		t.Errorf("journaled create response differs beyond the token (-sent +journaled):\n%s", diff)
	}
	for i, member := range []string{"cloud_secret_access_key", "client_secret", "api_key"} {
		e := journal[1+3*i] // create, update, get per target
		for _, body := range []string{e.RequestBody, e.ResponseBody, journal[2+3*i].RequestBody, journal[3+3*i].ResponseBody} {
			if !strings.Contains(body, `"`+member+`":"REDACTED"`) {
				t.Errorf("%s not redacted in %s", member, body)
			}
		}
	}
	// A null token (gets and lists) stays null.
	for _, e := range journal {
		if e.Method == "GET" && e.Path == "/api_keys" && strings.Contains(e.ResponseBody, "REDACTED") {
			t.Errorf("a null token was turned into REDACTED: %s", e.ResponseBody)
		}
	}
}

// TestJournalRedactionSpellings checks redaction of secret members however
// the request spells them: JSON escapes spell the same name differently
// (accepted), and other letter cases are unknown members (refused with
// ERR_NGROK_214, their bodies still journaled redacted).
func TestJournalRedactionSpellings(t *testing.T) {
	t.Parallel()
	srv, _ := start(t)
	const secret = "S3CR3T-VALUE"
	tests := []struct {
		name, path, body string
		status           int
	}{
		{"upper case", "/event_destinations", `{"format":"JSON","target":{"monitoring":{"API_KEY":"` + secret + `"}}}`, 400},
		{"mixed case", "/event_destinations", `{"format":"JSON","target":{"kinesis":{"stream_arn":"s","auth":{"creds":{"cloud_access_key_id":"a","Cloud_Secret_Access_Key":"` + secret + `"}}}}}`, 400},
		{"escaped", "/event_destinations", `{"format":"JSON","target":{"monitoring":{"api\u005fkey":"` + secret + `"}}}`, 201},
		{"Kelvin sign", "/event_destinations", `{"format":"JSON","target":{"monitoring":{"api_` + "\u212a" + `ey":"` + secret + `"}}}`, 400},
		{"long s", "/event_destinations", `{"format":"JSON","target":{"kinesis":{"stream_arn":"s","auth":{"creds":{"cloud_access_key_id":"a","cloud_` + "\u017f" + `ecret_access_key":"` + secret + `"}}}}}`, 400},
		{"client secret upper case", "/event_destinations", `{"format":"JSON","target":{"cloud_logs_ingestion":{"tenant_id":"t","client_id":"c","CLIENT_SECRET":"` + secret + `","logs_ingestion_uri":"u","data_collection_rule_id":"d","data_collection_stream_name":"s"}}}`, 400},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv.ClearJournal()
			r := raw(t, srv, "POST", tt.path, nil, tt.body)
			if r.status != tt.status {
				t.Fatalf("status %d, want %d: %s", r.status, tt.status, r.body)
			}
			if tt.status == 400 && !strings.Contains(string(r.body), acctapi.CodeUnknownField) {
				t.Errorf("body %s, want %s", r.body, acctapi.CodeUnknownField)
			}
			if tt.status == 400 && strings.Contains(string(r.body), secret) {
				t.Errorf("the answer holds the secret: %s", r.body)
			}
			for _, e := range srv.Journal() {
				if strings.Contains(e.RequestBody, secret) || strings.Contains(e.ResponseBody, secret) {
					t.Errorf("journal holds the secret: request %s response %s", e.RequestBody, e.ResponseBody)
				}
			}
		})
	}
}

// TestJournalBudget checks Server.SetJournalBudget through requests: the
// journal keeps the most recent entries that fit, and the smallest budget
// keeps the newest alone.
func TestJournalBudget(t *testing.T) {
	t.Parallel()
	srv, _ := start(t)
	const budget = 1 << 20
	srv.SetJournalBudget(budget)
	big := `{"name":"` + strings.Repeat("n", 60<<10) + `"}` // refused: too long a name, journaled whole
	for range 40 {
		raw(t, srv, "POST", "/service_users", nil, big)
	}
	raw(t, srv, "GET", "/service_users?limit=1", nil, "")
	got := srv.Journal()
	var held int
	for _, e := range got {
		held += len(e.RequestBody) + len(e.ResponseBody)
	}
	if held > budget || len(got) < 5 || len(got) > 17 {
		t.Errorf("%d entries holding %d bytes of bodies under a budget of %d", len(got), held, budget)
	}
	if last := got[len(got)-1]; last.Method != "GET" || last.Query != "limit=1" {
		t.Errorf("the last entry is %s %s?%s, want the most recent request", last.Method, last.Path, last.Query)
	}
	// JournalBackward is Journal, newest first, and may stop early.
	var back []fake.Entry
	for e := range srv.JournalBackward() {
		back = append(back, e)
	}
	slices.Reverse(back)
	if diff := cmp.Diff(got, back); diff != "" {
		t.Errorf("JournalBackward reversed differs from Journal (-Journal +JournalBackward):\n%s", diff)
	}
	for e := range srv.JournalBackward() {
		if e.Method != "GET" {
			t.Errorf("newest entry %s, want the GET", e.Method)
		}
		break
	}
	// The smallest budget keeps the newest request, and only it.
	srv.SetJournalBudget(fake.MinJournalBudget)
	raw(t, srv, "GET", "/service_users", nil, "")
	if j := srv.Journal(); len(j) != 1 || j[0].Method != "GET" || j[0].Path != "/service_users" {
		t.Errorf("budget MinJournalBudget: %+v, want the newest request alone", j)
	}
}

// The journal holds at most a byte budget of requests, the oldest dropped
// first; 64 MiB unless set.
func ExampleServer_SetJournalBudget() {
	srv, err := fake.New(fake.WithoutListener())
	if err != nil {
		fmt.Println(err)
		return
	}
	defer srv.Close()
	srv.SetJournalBudget(256 << 10) // 256 KiB

	body := `{"description":"` + strings.Repeat("d", 100) + `","metadata":"` + strings.Repeat("m", 4000) + `"}`
	for range 100 {
		req, _ := http.NewRequest("POST", srv.URL+"/api_keys", strings.NewReader(body))
		req.Header = http.Header{"Authorization": {"Bearer " + srv.APIKey()}, "Service-Version": {"2"}, "Content-Type": {"application/json"}}
		resp, err := srv.HTTPClient().Do(req)
		if err != nil {
			fmt.Println(err)
			return
		}
		resp.Body.Close()
	}
	j := srv.Journal()
	fmt.Println("requests kept:", len(j) < 100, "the newest kept:", j[len(j)-1].Status)
	// Output: requests kept: true the newest kept: 201
}

// JournalBackward reads the journal newest first, and may stop early.
func ExampleServer_JournalBackward() {
	srv, err := fake.New(fake.WithoutListener())
	if err != nil {
		fmt.Println(err)
		return
	}
	defer srv.Close()
	for _, path := range []string{"/api_keys", "/service_users", "/service_users/service_nope"} {
		req, _ := http.NewRequest("GET", srv.URL+path, nil)
		req.Header = http.Header{"Authorization": {"Bearer " + srv.APIKey()}, "Service-Version": {"2"}}
		resp, err := srv.HTTPClient().Do(req)
		if err != nil {
			fmt.Println(err)
			return
		}
		resp.Body.Close()
	}
	for e := range srv.JournalBackward() {
		fmt.Println(e.Method, e.Path, e.Status)
		if e.Status == http.StatusOK {
			break // the most recent success
		}
	}
	// Output:
	// GET /service_users/service_nope 404
	// GET /service_users 200
}

// TestJournalRedactionRealDialect checks that the real service's names of
// secret members (aws_secret_access_key) are redacted too, in what a
// client of that dialect sent and was answered.
func TestJournalRedactionRealDialect(t *testing.T) {
	t.Parallel()
	srv, _ := start(t)
	const secret = "AWS-SECRET-REAL-7"
	body := `{"format":"json","target":{"kinesis":{"auth":{"creds":{"aws_access_key_id":"AKIA","aws_secret_access_key":"` + secret + `"}},"stream_arn":"arn:s"}}}`
	r := raw(t, srv, "POST", "/event_destinations", map[string]string{"Service-Version": "", "Ngrok-Version": "2"}, body)
	if r.status != http.StatusCreated || !strings.Contains(string(r.body), `"aws_secret_access_key":"`+secret+`"`) {
		t.Fatalf("create in the real dialect: %d %s", r.status, r.body)
	}
	e := srv.Journal()[0]
	for _, b := range []string{e.RequestBody, e.ResponseBody} {
		if strings.Contains(b, secret) || !strings.Contains(b, `"aws_secret_access_key":"REDACTED"`) {
			t.Errorf("journal body not redacted: %s", b)
		}
	}
}

// TestJournalUnauthenticatedWithoutBody checks that a request that fails
// authentication is journaled without its body, which the server never
// reads.
func TestJournalUnauthenticatedWithoutBody(t *testing.T) {
	t.Parallel()
	srv, _ := start(t)
	body := `{"name":"` + strings.Repeat("x", 60<<10) + `"}`
	for _, hdr := range []map[string]string{
		{"Authorization": ""},
		{"Authorization": "Basic x"},
		{"Authorization": "Bearer wrong"},
	} {
		if r := raw(t, srv, "POST", "/service_users", hdr, body); r.status != http.StatusUnauthorized {
			t.Fatalf("%v: %d %s", hdr, r.status, r.body)
		}
	}
	raw(t, srv, "POST", "/service_users", nil, `{"name":"ok"}`)
	j := srv.Journal()
	for _, e := range j[:3] {
		if e.Status != http.StatusUnauthorized || e.RequestBody != "" || e.ResponseBody == "" {
			t.Errorf("unauthenticated entry: status %d, request body %d bytes, response %q", e.Status, len(e.RequestBody), e.ResponseBody)
		}
	}
	if e := j[3]; e.RequestBody != `{"name":"ok"}` {
		t.Errorf("authenticated entry's body %q", e.RequestBody)
	}
}

// TestWithJournalBudget checks that the option sets the journal's budget
// from the start and that SetJournalBudget still changes it.
func TestWithJournalBudget(t *testing.T) {
	t.Parallel()
	srv, _ := start(t, fake.WithJournalBudget(fake.MinJournalBudget))
	raw(t, srv, "GET", "/api_keys", nil, "")
	raw(t, srv, "GET", "/service_users", nil, "")
	if j := srv.Journal(); len(j) != 1 || j[0].Path != "/service_users" {
		t.Errorf("WithJournalBudget(MinJournalBudget): %+v, want the newest entry alone", j)
	}
	srv.SetJournalBudget(1 << 20)
	raw(t, srv, "GET", "/api_keys", nil, "")
	if n := len(srv.Journal()); n != 2 {
		t.Errorf("after SetJournalBudget: %d entries kept, want 2", n)
	}

	small, _ := start(t, fake.WithJournalBudget(8<<10))
	big := `{"name":"` + strings.Repeat("n", 3<<10) + `"}`
	for range 10 {
		raw(t, small, "POST", "/service_users", nil, big)
	}
	if n := len(small.Journal()); n == 0 || n > 2 {
		t.Errorf("WithJournalBudget(8 KiB) with 3 KiB bodies: %d entries kept", n)
	}
}

// A server's journal can be given a byte budget from the start; the
// smallest, MinJournalBudget, keeps the newest request alone.
func ExampleWithJournalBudget() {
	srv, err := fake.New(fake.WithoutListener(), fake.WithJournalBudget(fake.MinJournalBudget))
	if err != nil {
		fmt.Println(err)
		return
	}
	defer srv.Close()
	keys := account.NewAPIKeys(srv.Client())
	_, _ = keys.Get(context.Background(), "ak_first")
	_, err = keys.Get(context.Background(), "ak_missing")
	fmt.Println(acctapi.HasCode(err, acctapi.CodeNotFound))
	for _, e := range srv.Journal() {
		fmt.Println(e.Method, e.Path, e.Status)
	}
	// Output:
	// true
	// GET /api_keys/ak_missing 404
}

// TestOperationIDFromFront: a handler in front of the server mints ids in
// the server's sequence (the same under the same seed, "op_" and 27
// base-62 characters, sorting by creation) and hands one to the server for
// a request: its header, error body and journal entry carry it. Anything
// else than such an id panics.
func TestOperationIDFromFront(t *testing.T) {
	t.Parallel()
	a, _ := start(t)
	b, _ := start(t)
	id := a.NewOperationID()
	if same := b.NewOperationID(); same != id || !regexp.MustCompile(`^op_[0-9A-Za-z]{27}$`).MatchString(id) {
		t.Fatalf("ids %q and %q under one seed", id, same)
	}
	if next := a.NewOperationID(); next <= id {
		t.Errorf("next id %q does not sort after %q", next, id)
	}
	req := httptest.NewRequest("GET", "/service_users/service_nope", nil)
	req.Header.Set("Authorization", "Bearer "+a.APIKey())
	req.Header.Set("Service-Version", "2")
	w := httptest.NewRecorder()
	a.ServeHTTP(w, req.WithContext(fake.WithOperationID(req.Context(), id)))
	var e acctapi.Error
	if err := json.Unmarshal(w.Body.Bytes(), &e); err != nil || w.Code != 404 {
		t.Fatalf("%d %s", w.Code, w.Body)
	}
	j := a.Journal()
	if got := w.Header().Get("Operation-Id"); got != id || e.OperationID() != id || len(j) != 1 || j[0].OperationID != id {
		t.Errorf("header %q, body %q, journal %+v; want %q everywhere", got, e.OperationID(), j, id)
	}
	// The id is the first request's: a second request with the same
	// context (a retry) gets its own.
	req2 := httptest.NewRequest("GET", "/service_users/service_nope", nil)
	req2.Header = req.Header.Clone()
	claimed := b.NewOperationID()
	ctx := fake.WithOperationID(t.Context(), claimed)
	w1, w2 := httptest.NewRecorder(), httptest.NewRecorder()
	b.ServeHTTP(w1, req2.WithContext(ctx))
	b.ServeHTTP(w2, req2.WithContext(ctx))
	if id1, id2 := w1.Header().Get("Operation-Id"), w2.Header().Get("Operation-Id"); id1 != claimed || id2 == claimed || !regexp.MustCompile(`^op_[0-9A-Za-z]{27}$`).MatchString(id2) {
		t.Errorf("two requests with one context: ids %q and %q, want the first the context's and the second its own", id1, id2)
	}
	for _, bad := range []string{"", "op_1", "ak_" + id[3:], id + "0", "op_" + strings.Repeat("-", 27)} {
		func() {
			defer func() {
				if r := recover(); r == nil || !strings.Contains(fmt.Sprint(r), "is not an operation id") {
					t.Errorf("WithOperationID(%q): recovered %v", bad, r)
				}
			}()
			fake.WithOperationID(t.Context(), bad)
		}()
	}
}

// TestOperationIDNotIssued checks that a request whose context carries an
// operation id this server did not issue, or one a request used already,
// panics naming the id, instead of journaling a second entry under an id
// another has (which made JournalLeft and lookups by id wrong).
func TestOperationIDNotIssued(t *testing.T) {
	t.Parallel()
	a, _ := start(t)
	b, _ := start(t, fake.WithIDSeed(99))
	serve := func(ctx context.Context) (msg string) {
		defer func() {
			if r := recover(); r != nil {
				msg = fmt.Sprint(r)
			}
		}()
		req := httptest.NewRequest("GET", "/service_users", nil)
		req.Header.Set("Authorization", "Bearer "+a.APIKey())
		req.Header.Set("Service-Version", "2")
		a.ServeHTTP(httptest.NewRecorder(), req.WithContext(ctx))
		return ""
	}
	used := a.NewOperationID()
	if msg := serve(fake.WithOperationID(t.Context(), used)); msg != "" {
		t.Fatalf("an issued id: panic %s", msg)
	}
	for name, id := range map[string]string{
		"used already":         used,
		"another server's":     b.NewOperationID(),
		"made up":              "op_" + strings.Repeat("a", 27),
		"a journal entry's id": a.Journal()[0].OperationID,
	} {
		want := "fake: WithOperationID: " + id + " is no id this server's NewOperationID issued, or a request used it already"
		if msg := serve(fake.WithOperationID(t.Context(), id)); !strings.Contains(msg, want) {
			t.Errorf("%s id: panic %q, want %q", name, msg, want)
		}
	}
	if j := a.Journal(); len(j) != 1 || j[0].OperationID != used {
		t.Errorf("journal %+v, want the one request with %s", j, used)
	}
}

// TestJournalLongBody checks that a body longer than 64 KiB is kept
// redacted and cut, not withheld: a list of API keys (whose every item
// has "token":null) stays readable in the journal.
func TestJournalLongBody(t *testing.T) {
	t.Parallel()
	srv, _ := start(t)
	meta := strings.Repeat("m", 4000)
	for range 18 {
		must(fake.Seed[account.APIKey](srv, "", &account.APIKeyCreate{Metadata: meta}))(t)
	}
	r := raw(t, srv, "GET", "/api_keys", map[string]string{}, "")
	if len(r.body) <= 64<<10 {
		t.Fatalf("list of %d bytes, want over 64 KiB", len(r.body))
	}
	got := srv.Journal()
	e := got[len(got)-1]
	note := fmt.Sprintf(" …[cut: %d bytes in all]", len(r.body))
	if !strings.HasPrefix(e.ResponseBody, `{"keys":[{"id":"ak_`) || !strings.HasSuffix(e.ResponseBody, note) || len(e.ResponseBody) > 64<<10 {
		t.Errorf("response body of %d bytes, starting %.40q and ending %q: want the list's first 64 KiB ending %q",
			len(e.ResponseBody), e.ResponseBody, e.ResponseBody[max(0, len(e.ResponseBody)-40):], note)
	}
}

// TestJournalKeepsNewestRequest checks that a request larger than the
// journal's whole budget is still its newest entry, its bodies cut to fit,
// and older entries are dropped first: an assertion on the last request
// never reads an older one.
func TestJournalKeepsNewestRequest(t *testing.T) {
	t.Parallel()
	srv, _ := start(t, fake.WithJournalBudget(3000))
	for i := range 6 {
		raw(t, srv, "POST", "/service_users", nil, fmt.Sprintf(`{"name":"n%d"}`, i+1))
	}
	big := `{"name":"n7"` + strings.Repeat(" ", 4000) + `}`
	if r := raw(t, srv, "POST", "/service_users", nil, big); r.status != http.StatusCreated {
		t.Fatalf("status %d: %s", r.status, r.body)
	}
	got := srv.Journal()
	last := got[len(got)-1]
	if !strings.Contains(last.ResponseBody, `"name":"n7"`) || !strings.HasPrefix(last.RequestBody, `{"name":"n7"`) ||
		!strings.HasSuffix(last.RequestBody, fmt.Sprintf(" …[cut: %d bytes in all]", len(big))) {
		t.Errorf("newest entry: request %q, response %q: want n7's, its request cut", last.RequestBody, last.ResponseBody)
	}
}
