package main

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/acctapi/acctapi"
)

// adm sends a request to the admin API with the program's admin token.
func (p program) adm(t *testing.T, method, path, body string) response {
	t.Helper()
	return do(t, method, p.base+"/_acctfake/"+path, p.admin, body)
}

// admWith is adm with header's values in place of those it sets.
func (p program) admWith(t *testing.T, method, path, body string, header http.Header) response {
	t.Helper()
	return doWith(t, method, p.base+"/_acctfake/"+path, p.admin, body, header)
}

// api sends a request to the account API with the program's key.
func (p program) api(t *testing.T, method, path, body string) response {
	t.Helper()
	return do(t, method, p.base+path, p.key, body)
}

// want fails t unless r has status; for an error, also code.
func (r response) want(t *testing.T, status int, code string) response {
	t.Helper()
	if r.status != status {
		t.Fatalf("status %d %s, want %d", r.status, r.body, status)
	}
	if code != "" {
		if got, _ := r.errorBody(t); got != code {
			t.Fatalf("error_code %s (%s), want %s", got, r.body, code)
		}
	}
	return r
}

// decode decodes r's JSON body into a value of type T.
func decode[T any](t *testing.T, r response) T {
	t.Helper()
	var v T
	if err := json.Unmarshal([]byte(r.body), &v); err != nil {
		t.Fatalf("body %q: %v", r.body, err)
	}
	return v
}

// firstAccount returns the id of the program's first account.
func (p program) firstAccount(t *testing.T) string {
	t.Helper()
	return decode[struct {
		Accounts []struct {
			ID string `json:"id"`
		} `json:"accounts"`
	}](t, p.adm(t, "GET", "accounts", "").want(t, 200, "")).Accounts[0].ID
}

// names lists the service users' names, sorted.
func (p program) names(t *testing.T) []string {
	t.Helper()
	list := decode[struct {
		Users []struct {
			Name string `json:"name"`
		} `json:"service_users"`
	}](t, p.api(t, "GET", "/service_users", "").want(t, 200, ""))
	var out []string
	for _, u := range list.Users {
		out = append(out, u.Name)
	}
	slices.Sort(out)
	return out
}

// TestAdminAuth checks the admin token: health needs none; everything
// else refuses a missing, malformed or wrong token (an API key included)
// in the contract's error body, before routing.
func TestAdminAuth(t *testing.T) {
	t.Parallel()
	p := startProgram(t, "-admin-token", "the-admin-token")
	if p.admin != "the-admin-token" {
		t.Errorf("admin token %q, want the one given", p.admin)
	}
	if r := do(t, "GET", p.base+"/_acctfake/health", "", "").want(t, 200, ""); !strings.Contains(r.body, `"status":"ok"`) {
		t.Errorf("health: %s", r.body)
	}
	const none = "\x00" // no Authorization header at all
	for _, tt := range []struct{ name, path, auth, code string }{
		{"no token", "faults", none, "ERR_NGROK_200"},
		{"not bearer", "faults", "Basic dXNlcg==", "ERR_NGROK_201"},
		// As the API answers them (iox.BearerToken): an empty header is
		// one that could not be parsed, and a token has no spaces (a
		// review found the admin API answering 200 and 203).
		{"empty header", "faults", "", "ERR_NGROK_201"},
		{"token with a space", "faults", "Bearer the-admin-token x", "ERR_NGROK_201"},
		{"wrong token", "faults", "Bearer nope", "ERR_NGROK_203"},
		{"the API key", "faults", "Bearer " + p.key, "ERR_NGROK_203"},
		{"unknown path", "no/such/path", none, "ERR_NGROK_200"},
	} {
		req, _ := http.NewRequest("GET", p.base+"/_acctfake/"+tt.path, nil)
		if tt.auth != none {
			req.Header["Authorization"] = []string{tt.auth}
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		var e struct {
			ErrorCode string `json:"error_code"`
		}
		_ = json.NewDecoder(resp.Body).Decode(&e)
		resp.Body.Close()
		if resp.StatusCode != 401 || e.ErrorCode != tt.code {
			t.Errorf("%s: %d %s, want 401 %s", tt.name, resp.StatusCode, e.ErrorCode, tt.code)
		}
	}
	p.adm(t, "GET", "no/such/path", "").want(t, 404, "ERR_ACCTAPI_NO_ROUTE")
	if r := p.adm(t, "PUT", "journal", "").want(t, 405, "ERR_ACCTAPI_METHOD"); r.header.Get("Allow") != "DELETE, GET" {
		t.Errorf("405's Allow %q", r.header.Get("Allow"))
	}
	// The account API does not take the admin token.
	do(t, "GET", p.base+"/service_users", p.admin, "").want(t, 401, "ERR_NGROK_203")
}

type journalResp struct {
	Entries []struct {
		ID       string `json:"id"`
		Method   string `json:"method"`
		Path     string `json:"path"`
		Query    string `json:"query"`
		Status   int    `json:"status"`
		Dropped  bool   `json:"dropped"`
		Request  string `json:"request_body"`
		Response string `json:"response_body"`
	} `json:"entries"`
	URI         string  `json:"uri"`
	NextPageURI *string `json:"next_page_uri"`
}

// TestAdminJournal checks GET /_acctfake/journal: newest first, filtered
// by method, path pattern and status, paged with limit and before_id
// through next_page_uri, and DELETE clears it.
func TestAdminJournal(t *testing.T) {
	t.Parallel()
	p := startProgram(t)
	p.api(t, "POST", "/service_users", `{"name":"a"}`).want(t, 201, "")
	p.api(t, "POST", "/service_users", `{"name":"b"}`).want(t, 201, "")
	p.api(t, "GET", "/service_users?limit=1", "").want(t, 200, "")
	p.api(t, "GET", "/service_users/service_nope", "").want(t, 404, "")
	p.api(t, "DELETE", "/api_keys/ak_nope", "").want(t, 404, "")
	p.adm(t, "POST", "faults", `{"method":"GET","path":"/api_keys","times":1,"drop":"before"}`).want(t, 201, "")
	// A fresh connection: net/http retries a GET dropped on a reused one.
	fresh := &http.Client{Transport: &http.Transport{DisableKeepAlives: true}}
	if resp, err := fresh.Get(p.base + "/api_keys"); err == nil {
		resp.Body.Close()
		t.Fatalf("a dropped request was answered %d", resp.StatusCode)
	}

	type row struct {
		method, path string
		status       int
	}
	rows := func(j journalResp) []row {
		var out []row
		for _, e := range j.Entries {
			out = append(out, row{e.Method, e.Path, e.Status})
		}
		return out
	}
	all := decode[journalResp](t, p.adm(t, "GET", "journal", "").want(t, 200, ""))
	want := []row{{"GET", "/api_keys", 0}, {"DELETE", "/api_keys/ak_nope", 404}, {"GET", "/service_users/service_nope", 404}, {"GET", "/service_users", 200},
		{"POST", "/service_users", 201}, {"POST", "/service_users", 201}}
	if !slices.Equal(rows(all), want) || all.NextPageURI != nil || all.URI != p.base+"/_acctfake/journal" {
		t.Fatalf("journal: %+v, uri %s, next %v; want %+v", rows(all), all.URI, all.NextPageURI, want)
	}
	if e := all.Entries[5]; e.Request != `{"name":"a"}` || !strings.Contains(e.Response, `"name":"a"`) || !strings.HasPrefix(e.ID, "op_") {
		t.Errorf("first entry: %+v", e)
	}
	if all.Entries[3].Query != "limit=1" || !all.Entries[0].Dropped {
		t.Errorf("entries: %+v", all.Entries)
	}
	// Paging follows next_page_uri, with the filter.
	var paged []row
	next := p.base + "/_acctfake/journal?limit=2&path=/service_users*"
	for next != "" {
		j := decode[journalResp](t, do(t, "GET", next, p.admin, "").want(t, 200, ""))
		if len(j.Entries) > 2 {
			t.Fatalf("page of %d entries, limit 2", len(j.Entries))
		}
		paged = append(paged, rows(j)...)
		next = ""
		if j.NextPageURI != nil {
			next = *j.NextPageURI
		}
	}
	if want := want[3:]; !slices.Equal(paged, want) {
		t.Errorf("paged with path=/service_users*: %+v, want %+v", paged, want)
	}
	for _, tt := range []struct {
		query string
		want  []row
	}{
		{"method=POST", want[4:]},
		{"status=404", want[1:3]},
		{"status=0", want[:1]},
		{"path=/service_users/*&status=404", want[2:3]},
		{"path=/api_keys/**", want[:2]},
		{"path=/**&method=DELETE", want[1:2]},
		{"method=*&status=404", want[1:3]},
		{"method=GET&path=/service_users", want[3:4]},
		{"before_id=" + all.Entries[2].ID, want[3:]},
	} {
		got := rows(decode[journalResp](t, p.adm(t, "GET", "journal?"+tt.query, "").want(t, 200, "")))
		if !slices.Equal(got, tt.want) {
			t.Errorf("journal?%s: %+v, want %+v", tt.query, got, tt.want)
		}
	}
	// A filter that could match nothing is a mistake, refused like a
	// fault's target: "no DELETE happened" must not pass on a typo.
	for _, tt := range []struct{ query, code, field string }{
		{"limit=0", "ERR_NGROK_233", "limit"},
		// Digits only, as the API's lists read limit (field.ParseQueryInt):
		// a sign is not part of an integer here. (An unescaped "+" is a
		// space.)
		{"limit=%2B5", "ERR_NGROK_233", "limit"},
		{"limit=+5", "ERR_NGROK_233", "limit"},
		{"limit=-0", "ERR_NGROK_233", "limit"},
		{"status=%2B404", "ERR_NGROK_215", "status"},
		{"status=-0", "ERR_NGROK_215", "status"},
		{"status=%2B0", "ERR_NGROK_215", "status"},
		// A segment where a path has an id must be able to be one of
		// that collection's ids.
		{"path=/api_keys/service_*", "ERR_NGROK_215", "path"},
		{"path=/bot_users/usr_*", "ERR_NGROK_215", "path"},
		{"limit=101", "ERR_NGROK_233", "limit"},
		{"status=abc", "ERR_NGROK_215", "status"},
		{"status=42", "ERR_NGROK_215", "status"},
		{"status=600", "ERR_NGROK_215", "status"},
		{"method=get", "ERR_NGROK_215", "method"},
		{"method=FOO", "ERR_NGROK_215", "method"},
		{"path=service_users", "ERR_NGROK_215", "path"},
		{"path=/[", "ERR_NGROK_215", "path"},
		{"path=/service_user/*", "ERR_NGROK_215", "path"},
		{"path=/service_users/*/*", "ERR_NGROK_215", "path"},
		{"method=PUT&path=/**", "ERR_NGROK_215", "method"},
		{"method=POST&path=/api_keys/*", "ERR_NGROK_215", "path"},
		{"before_id=op_0", "ERR_NGROK_215", "before_id"},
		{"before_id=service_1", "ERR_NGROK_215", "before_id"},
		// Well formed, but no entry's, kept or gone (nothing has left the
		// journal): a typo (a review saw an empty page).
		{"before_id=op_" + strings.Repeat("0", 27), "ERR_NGROK_215", "before_id"},
		{"before_id=op_" + strings.Repeat("z", 27), "ERR_NGROK_215", "before_id"},
		{"nope=1", "ERR_NGROK_231", ""},
		{"method=GET&method=POST", "ERR_NGROK_232", ""},
		// Given empty, a filter is refused, as a fault's "path": "" is,
		// not read as "any" (an unset variable in a test).
		{"path=", "ERR_NGROK_215", "path"},
		{"method=", "ERR_NGROK_215", "method"},
		{"status=", "ERR_NGROK_215", "status"},
		{"before_id=", "ERR_NGROK_215", "before_id"},
		{"limit=", "ERR_NGROK_233", "limit"},
		{"method=GET&path=", "ERR_NGROK_215", "path"},
	} {
		r := p.adm(t, "GET", "journal?"+tt.query, "").want(t, 400, tt.code)
		if d := decode[struct {
			Details map[string]string `json:"details"`
		}](t, r); tt.field != "" && d.Details["field"] != tt.field {
			t.Errorf("journal?%s: field %q, want %q", tt.query, d.Details["field"], tt.field)
		}
	}
	p.adm(t, "DELETE", "journal", "").want(t, 204, "")
	if j := decode[journalResp](t, p.adm(t, "GET", "journal", "").want(t, 200, "")); len(j.Entries) != 0 {
		t.Errorf("after DELETE: %d entries", len(j.Entries))
	}
	// A cursor whose entry has left the journal: nothing older is kept.
	if j := decode[journalResp](t, p.adm(t, "GET", "journal?before_id="+all.Entries[0].ID, "").want(t, 200, "")); len(j.Entries) != 0 {
		t.Errorf("before an entry that left: %d entries, want none", len(j.Entries))
	}
}

type faultResp struct {
	ID        string `json:"id"`
	Method    string `json:"method"`
	Path      string `json:"path"`
	Times     int    `json:"times"`
	Remaining *int   `json:"remaining"`
	Hits      int    `json:"hits"`
}

// TestAdminFaults checks adding, listing and removing faults: a status with
// an error body, 429 with Retry-After, latency, drop before and after the
// request takes effect, a fault used up after its times, and refusals.
func TestAdminFaults(t *testing.T) {
	t.Parallel()
	p := startProgram(t)
	list := func() []faultResp {
		t.Helper()
		return decode[struct {
			Faults []faultResp `json:"faults"`
		}](t, p.adm(t, "GET", "faults", "").want(t, 200, "")).Faults
	}

	// A status with an error body, once.
	f := decode[faultResp](t, p.adm(t, "POST", "faults", `{"method":"GET","path":"/service_users","times":1,"status":502,"error_code":"ERR_X","msg":"bad gateway"}`).want(t, 201, ""))
	if f.ID == "" || f.Remaining == nil || *f.Remaining != 1 || f.Times != 1 {
		t.Fatalf("added fault: %+v", f)
	}
	if code, msg := p.api(t, "GET", "/service_users", "").want(t, 502, "").errorBody(t); code != "ERR_X" || msg != "bad gateway" {
		t.Errorf("fault's answer: %s %q", code, msg)
	}
	p.api(t, "GET", "/service_users", "").want(t, 200, "")
	if l := list(); len(l) != 0 {
		t.Errorf("a fault used up is still listed: %+v", l)
	}

	// 429 with Retry-After, twice.
	p.adm(t, "POST", "faults", `{"path":"/api_keys","times":2,"status":429,"retry_after":7}`).want(t, 201, "")
	for range 2 {
		if r := p.api(t, "GET", "/api_keys", "").want(t, 429, "ERR_NGROK_226"); r.header.Get("Retry-After") != "7" {
			t.Errorf("Retry-After %q, want 7", r.header.Get("Retry-After"))
		}
	}
	p.api(t, "GET", "/api_keys", "").want(t, 200, "")

	// Drop before: nothing happens; drop after: the write happens.
	p.adm(t, "POST", "faults", `{"method":"POST","path":"/service_users","times":1,"drop":"before"}`).want(t, 201, "")
	p.adm(t, "POST", "faults", `{"method":"POST","path":"/service_users","times":1,"drop":"after"}`).want(t, 201, "")
	for _, name := range []string{"dropped-before", "dropped-after"} {
		req, _ := http.NewRequest("POST", p.base+"/service_users", strings.NewReader(`{"name":"`+name+`"}`))
		req.Header = http.Header{"Authorization": {"Bearer " + p.key}, "Service-Version": {"2"}, "Content-Type": {"application/json"}}
		if resp, err := http.DefaultClient.Do(req); err == nil {
			resp.Body.Close()
			t.Errorf("%s: answered %d, want the connection closed", name, resp.StatusCode)
		}
	}
	if got := p.names(t); !slices.Equal(got, []string{"dropped-after"}) {
		t.Errorf("service users after the drops: %v, want [dropped-after]", got)
	}

	// Latency, until removed; listed with its hits.
	lat := decode[faultResp](t, p.adm(t, "POST", "faults", `{"method":"*","path":"/backends/**","latency":"1ms"}`).want(t, 201, ""))
	p.api(t, "GET", "/backends/http_response", "").want(t, 200, "")
	if l := list(); len(l) != 1 || l[0].ID != lat.ID || l[0].Remaining != nil || l[0].Hits != 1 || l[0].Path != "/backends/**" {
		t.Errorf("faults: %+v, want the latency with one hit", l)
	}
	p.adm(t, "DELETE", "faults/"+lat.ID, "").want(t, 204, "")
	p.adm(t, "DELETE", "faults/"+lat.ID, "").want(t, 404, "ERR_ACCTAPI_NOT_FOUND")

	// DELETE /faults removes every one.
	p.adm(t, "POST", "faults", `{"path":"/**","status":503}`).want(t, 201, "")
	p.adm(t, "POST", "faults", `{"path":"/**","status":500}`).want(t, 201, "")
	p.api(t, "GET", "/api_keys", "").want(t, 503, "ERR_ACCTAPI_UNAVAILABLE")
	p.adm(t, "DELETE", "faults", "").want(t, 204, "")
	p.api(t, "GET", "/api_keys", "").want(t, 200, "")
	if l := list(); len(l) != 0 {
		t.Errorf("after DELETE /faults: %+v", l)
	}

	for _, tt := range []struct{ body, code, field string }{
		{`{"method":"get","path":"/x","status":503}`, "ERR_NGROK_215", "method"},
		{`{"path":"service_users","status":503}`, "ERR_NGROK_215", "path"},
		{`{"path":"/[","status":503}`, "ERR_NGROK_215", "path"},
		{`{"path":"/x","status":42}`, "ERR_NGROK_215", "status"},
		{`{"path":"/x"}`, "ERR_NGROK_215", "status"},
		{`{"path":"/x","msg":"m"}`, "ERR_NGROK_215", "status"},
		{`{"path":"/x","status":503,"drop":"before"}`, "ERR_NGROK_215", "drop"},
		{`{"path":"/x","drop":"sideways"}`, "ERR_NGROK_215", "drop"},
		{`{"path":"/x","latency":"soon"}`, "ERR_NGROK_215", "latency"},
		{`{"path":"/x","latency":"-1s"}`, "ERR_NGROK_215", "latency"},
		{`{"path":"/x","status":503,"times":-1}`, "ERR_NGROK_215", "times"},
		{`{"path":"/x","status":503,"times":0}`, "ERR_NGROK_215", "times"},
		{`{"path":"/x","status":200}`, "ERR_NGROK_215", "status"},
		{`{"path":"/x","status":302}`, "ERR_NGROK_215", "status"},
		{`{"path":"/x","latency":"1s","error_code":"ERR_X"}`, "ERR_NGROK_215", "status"},
		{`{"path":"/x","latency":"1s","retry_after":3}`, "ERR_NGROK_215", "status"},
		{`{"path":"/x","status":"503"}`, "ERR_NGROK_215", "status"},
		{`{"path":"/x","status":503,"extra":1}`, "ERR_NGROK_214", "extra"},
		{`{"path":`, "ERR_NGROK_213", ""},
	} {
		r := p.adm(t, "POST", "faults", tt.body).want(t, 400, tt.code)
		if d := decode[struct {
			Details map[string]string `json:"details"`
		}](t, r); d.Details["field"] != tt.field {
			t.Errorf("%s: field %q, want %q", tt.body, d.Details["field"], tt.field)
		}
	}
	if r := p.adm(t, "POST", "faults", `{"path":"/x","latency":"-1s"}`).want(t, 400, "ERR_NGROK_215"); !strings.Contains(r.body, "is negative") {
		t.Errorf("a negative latency: %s, want it called negative, not no duration", r.body)
	}
}

type clockResp struct {
	Now    string `json:"now"`
	Manual bool   `json:"manual"`
}

// TestAdminClock checks reading, advancing and setting the manual clock,
// and that the real clock refuses to move.
func TestAdminClock(t *testing.T) {
	t.Parallel()
	p := startProgram(t, "-clock", "manual", "-clock-start", "2030-01-01T00:00:00Z")
	if c := decode[clockResp](t, p.adm(t, "GET", "clock", "").want(t, 200, "")); c.Now != "2030-01-01T00:00:00Z" || !c.Manual {
		t.Errorf("clock: %+v", c)
	}
	if c := decode[clockResp](t, p.adm(t, "POST", "clock/advance", `{"by":"36h30m"}`).want(t, 200, "")); c.Now != "2030-01-02T12:30:00Z" {
		t.Errorf("after advancing 36h30m: %+v", c)
	}
	if u := p.api(t, "POST", "/service_users", `{"name":"x"}`).want(t, 201, ""); !strings.Contains(u.body, `"created_at":"2030-01-02T12:30:00Z"`) {
		t.Errorf("created at the wrong time: %s", u.body)
	}
	if c := decode[clockResp](t, p.adm(t, "PUT", "clock", `{"now":"2031-06-01T10:00:00Z"}`).want(t, 200, "")); c.Now != "2031-06-01T10:00:00Z" {
		t.Errorf("after setting: %+v", c)
	}
	p.adm(t, "POST", "clock/advance", `{"by":"tomorrow"}`).want(t, 400, "ERR_NGROK_215")
	if r := p.adm(t, "POST", "clock/advance", `{"by":"999999999h"}`).want(t, 400, "ERR_NGROK_215"); !strings.Contains(r.body, "out of range") {
		t.Errorf("advancing by a duration too long for Go: %s, want it called out of range, not no duration", r.body)
	}
	for _, by := range []string{"h", "-.ms", "1.5"} {
		if r := p.adm(t, "POST", "clock/advance", `{"by":"`+by+`"}`).want(t, 400, "ERR_NGROK_215"); !strings.Contains(r.body, "is not a duration") {
			t.Errorf("advancing by %q: %s, want it called no duration", by, r.body)
		}
	}
	p.adm(t, "PUT", "clock", `{"now":"yesterday"}`).want(t, 400, "ERR_NGROK_215")
	p.adm(t, "PUT", "clock", `{}`).want(t, 400, "ERR_NGROK_215")
	// Times RFC 3339 cannot hold are refused, and the clock stays where it was.
	p.adm(t, "PUT", "clock", `{"now":"9999-12-31T23:59:59Z"}`).want(t, 200, "")
	p.adm(t, "POST", "clock/advance", `{"by":"48h"}`).want(t, 400, "ERR_NGROK_215")
	p.adm(t, "PUT", "clock", `{"now":"0000-12-31T00:00:00Z"}`).want(t, 400, "ERR_NGROK_215")
	if c := decode[clockResp](t, p.adm(t, "GET", "clock", "").want(t, 200, "")); c.Now != "9999-12-31T23:59:59Z" {
		t.Errorf("after refused moves: %+v", c)
	}
	p.api(t, "GET", "/service_users", "").want(t, 200, "")
	p.adm(t, "PUT", "clock", `{"now":"2031-06-01T10:00:00Z"}`+"]").want(t, 400, "ERR_NGROK_213")

	real := startProgram(t)
	if c := decode[clockResp](t, real.adm(t, "GET", "clock", "").want(t, 200, "")); c.Manual || c.Now == "" {
		t.Errorf("real clock: %+v", c)
	}
	real.adm(t, "POST", "clock/advance", `{"by":"1h"}`).want(t, 400, "ERR_NGROK_215")
	real.adm(t, "PUT", "clock", `{"now":"2031-06-01T10:00:00Z"}`).want(t, 400, "ERR_NGROK_215")
}

// TestAdminSnapshotsAndReset checks taking, listing, restoring and
// deleting snapshots, and reset back to the state at start (fixtures
// loaded) with the journal and faults cleared.
func TestAdminSnapshotsAndReset(t *testing.T) {
	t.Parallel()
	p := startProgram(t, "-fixtures", writeFile(t, `[{"path":"/service_users","body":{"name":"fixture"}}]`))
	p.api(t, "POST", "/service_users", `{"name":"a"}`).want(t, 201, "")
	snap := decode[struct {
		ID      string `json:"id"`
		TakenAt string `json:"taken_at"`
	}](t, p.adm(t, "POST", "snapshots", "").want(t, 201, ""))
	if snap.ID == "" || snap.TakenAt == "" {
		t.Fatalf("snapshot: %+v", snap)
	}
	p.api(t, "POST", "/service_users", `{"name":"b"}`).want(t, 201, "")
	p.adm(t, "POST", "snapshots/"+snap.ID+"/restore", "").want(t, 200, "")
	if got := p.names(t); !slices.Equal(got, []string{"a", "fixture"}) {
		t.Errorf("after restore: %v", got)
	}
	if l := p.adm(t, "GET", "snapshots", "").want(t, 200, ""); !strings.Contains(l.body, `"id":"`+snap.ID+`"`) {
		t.Errorf("snapshots: %s", l.body)
	}
	p.adm(t, "DELETE", "snapshots/"+snap.ID, "").want(t, 204, "")
	p.adm(t, "POST", "snapshots/"+snap.ID+"/restore", "").want(t, 404, "ERR_ACCTAPI_NOT_FOUND")
	p.adm(t, "DELETE", "snapshots/"+snap.ID, "").want(t, 404, "ERR_ACCTAPI_NOT_FOUND")

	p.adm(t, "POST", "faults", `{"method":"DELETE","path":"/**","status":503}`).want(t, 201, "")
	p.adm(t, "POST", "accounts", `{"api_keys":["gone-after-reset"]}`).want(t, 201, "")
	p.adm(t, "POST", "reset", "").want(t, 204, "")
	if got := p.names(t); !slices.Equal(got, []string{"fixture"}) {
		t.Errorf("after reset: %v, want the fixtures only", got)
	}
	if l := p.adm(t, "GET", "faults", "").want(t, 200, ""); l.body != `{"faults":[]}` {
		t.Errorf("faults after reset: %s", l.body)
	}
	if j := decode[journalResp](t, p.adm(t, "GET", "journal", "").want(t, 200, "")); len(j.Entries) != 1 {
		t.Errorf("journal after reset: %d entries, want the one GET since", len(j.Entries))
	}
	do(t, "GET", p.base+"/service_users", "gone-after-reset", "").want(t, 401, "ERR_NGROK_203")
}

// TestAdminAccounts checks listing and adding accounts, and adding an API
// key to one through the API.
func TestAdminAccounts(t *testing.T) {
	t.Parallel()
	p := startProgram(t, "-api-key", "first-key")
	type account struct {
		ID      string   `json:"id"`
		UserID  string   `json:"user_id"`
		APIKeys []string `json:"api_keys"`
	}
	accts := decode[struct {
		Accounts []account `json:"accounts"`
	}](t, p.adm(t, "GET", "accounts", "").want(t, 200, "")).Accounts
	if len(accts) != 1 || !slices.Equal(accts[0].APIKeys, []string{"first-key"}) || !strings.HasPrefix(accts[0].ID, "ac_") {
		t.Fatalf("accounts: %+v", accts)
	}
	second := decode[account](t, p.adm(t, "POST", "accounts", `{"id":"ac_second","api_keys":["second-key"]}`).want(t, 201, ""))
	if second.ID != "ac_second" || !strings.HasPrefix(second.UserID, "usr_") {
		t.Errorf("added account: %+v", second)
	}
	made := decode[account](t, p.adm(t, "POST", "accounts", "").want(t, 201, ""))
	if len(made.APIKeys) != 1 || len(made.APIKeys[0]) < 20 {
		t.Errorf("account with a made-up key: %+v", made)
	}
	// The accounts are isolated.
	p.api(t, "POST", "/service_users", `{"name":"in-first"}`).want(t, 201, "")
	if r := do(t, "GET", p.base+"/service_users", "second-key", "").want(t, 200, ""); strings.Contains(r.body, "in-first") {
		t.Errorf("the second account sees the first's service user: %s", r.body)
	}
	for _, tt := range []struct{ body, field, msg string }{
		{`{"id":"ac_second"}`, "id", `id is taken: account "ac_second" exists.`},
		{`{"id":"ac_with space"}`, "id", ""},
		{`{"user_id":` + strconv.Quote(second.UserID) + `}`, "user_id", `user_id is taken: it is account "ac_second"'s user.`},
		{`{"user_id":"u1"}`, "user_id", ""},
		{`{"api_keys":["first-key"]}`, "api_keys[0]", "api_keys[0] is already in use."},
		{`{"api_keys":["k5","k5"]}`, "api_keys[1]", "api_keys[1] repeats api_keys[0]."},
		{`{"api_keys":["fine","has space"]}`, "api_keys[1]", ""},
		{`{"api_keys":[` + strconv.Quote(p.admin) + `]}`, "api_keys[0]", ""},
	} {
		r := p.adm(t, "POST", "accounts", tt.body).want(t, 400, "ERR_NGROK_215")
		if d := decode[struct {
			Msg     string            `json:"msg"`
			Details map[string]string `json:"details"`
		}](t, r); d.Details["field"] != tt.field || strings.Contains(d.Msg, "APIKeys") || tt.msg != "" && d.Msg != tt.msg {
			t.Errorf("POST accounts %s: field %q (%s), want %q (%s)", tt.body, d.Details["field"], d.Msg, tt.field, tt.msg)
		}
	}

	// A key for the second account, made through the API.
	key := decode[struct {
		Token       string `json:"token"`
		Description string `json:"description"`
		OwnerID     string `json:"owner_id"`
	}](t, p.adm(t, "POST", "accounts/ac_second/api_keys", `{"description":"extra"}`).want(t, 201, ""))
	if key.Token == "" || key.Description != "extra" || key.OwnerID != second.UserID {
		t.Errorf("added key: %+v", key)
	}
	do(t, "GET", p.base+"/service_users", key.Token, "").want(t, 200, "")
	// Its POST /api_keys is journaled under an operation id of the fake's,
	// which the answer carries (the admin request's own id, which the fake
	// did not issue, once reached the fake and was journaled).
	added := p.adm(t, "POST", "accounts/ac_second/api_keys", `{}`).want(t, 201, "")
	j := decode[journalResp](t, p.adm(t, "GET", "journal?limit=1", "").want(t, 200, ""))
	if id := added.header.Get("Operation-Id"); len(j.Entries) != 1 || j.Entries[0].ID != id || j.Entries[0].Path != "/api_keys" || strings.HasPrefix(id, "op_0000000000") {
		t.Errorf("added key's Operation-Id %q, newest journal entry %+v; want the entry's id, of the fake's sequence", id, j.Entries)
	}
	p.adm(t, "POST", "accounts/ac_second/api_keys", `{"description":7}`).want(t, 400, "ERR_NGROK_215")
	p.adm(t, "POST", "accounts/ac_nope/api_keys", `{}`).want(t, 404, "ERR_ACCTAPI_NOT_FOUND")
	if l := p.adm(t, "GET", "accounts", "").want(t, 200, ""); strings.Count(l.body, `"id":`) != 3 {
		t.Errorf("accounts: %s", l.body)
	}
}

// TestJournalBudgetFlag checks -journal-budget: the journal keeps only
// the newest entries that fit in the budget, and by default all of a few
// dozen requests.
func TestJournalBudgetFlag(t *testing.T) {
	t.Parallel()
	const requests = 40
	kept := func(args ...string) []string {
		p := startProgram(t, args...)
		for i := range requests {
			p.api(t, "GET", fmt.Sprintf("/service_users?limit=%d", i%100+1), "").want(t, 200, "")
		}
		var queries []string
		for _, e := range decode[journalResp](t, p.adm(t, "GET", "journal", "").want(t, 200, "")).Entries {
			queries = append(queries, e.Query)
		}
		return queries
	}
	if all := kept(); len(all) != requests {
		t.Fatalf("default budget kept %d of %d entries", len(all), requests)
	}
	few := kept("-journal-budget", "3000")
	if len(few) == 0 || len(few) >= requests/2 || few[0] != fmt.Sprintf("limit=%d", requests) {
		t.Errorf("-journal-budget 3000 kept %d of %d entries, newest first %v; want the newest few", len(few), requests, few)
	}
}

// TestAdminTakesOnlyWhatItUses: a query parameter or a body an operation
// does not take is refused before it runs, so a mistake is a 400 and not
// another operation (DELETE /faults?id=... would otherwise remove every
// fault, DELETE /journal?method=POST clear the whole journal).
func TestAdminTakesOnlyWhatItUses(t *testing.T) {
	t.Parallel()
	p := startProgram(t, "-clock", "manual")
	p.adm(t, "POST", "faults", `{"path":"/api_keys","status":503}`).want(t, 201, "")
	p.adm(t, "POST", "faults", `{"path":"/service_users","status":503}`).want(t, 201, "")
	p.api(t, "GET", "/api_keys", "").want(t, 503, "")
	for _, tt := range []struct{ method, path, body, code string }{
		{"DELETE", "faults?id=flt_1", "", "ERR_NGROK_231"},
		{"DELETE", "journal?method=POST", "", "ERR_NGROK_231"},
		{"PUT", "clock?now=2040-01-01T00:00:00Z", `{"now":"2030-01-01T00:00:00Z"}`, "ERR_NGROK_231"},
		{"GET", "faults?limit=1", "", "ERR_NGROK_231"},
		{"POST", "snapshots", `{"name":"x"}`, "ERR_NGROK_214"},
		{"POST", "reset", `{"keep":true}`, "ERR_NGROK_214"},
		{"DELETE", "faults", `{"id":"flt_1"}`, "ERR_NGROK_214"},
	} {
		p.adm(t, tt.method, tt.path, tt.body).want(t, 400, tt.code)
	}
	// Nothing happened: both faults and the journal are still there.
	if n := strings.Count(p.adm(t, "GET", "faults", "").want(t, 200, "").body, `"id":"flt_`); n != 2 {
		t.Errorf("%d faults after refused requests, want 2", n)
	}
	if j := decode[journalResp](t, p.adm(t, "GET", "journal", "").want(t, 200, "")); len(j.Entries) != 1 {
		t.Errorf("%d journal entries after refused requests, want 1", len(j.Entries))
	}
	// A body must be JSON where one is taken.
	p.admWith(t, "POST", "faults", `{"path":"/**","status":503}`, http.Header{"Content-Type": {"text/plain"}}).want(t, 415, "")
}

// TestAdminMalformedHost pins a review's finding: the admin API built the
// request that adds an API key from the Host header, so that a Host such
// as "%zz" made it a 500, and put the Host into the journal's uri. A
// malformed Host is now a 400 ERR_ACCTAPI_MALFORMED_REQUEST, on the admin
// API as on the account API.
func TestAdminMalformedHost(t *testing.T) {
	t.Parallel()
	p := startProgram(t)
	id := p.firstAccount(t)
	for _, tt := range []struct{ path, token, body string }{
		{"/_acctfake/accounts/" + id + "/api_keys", p.admin, "{}"},
		{"/_acctfake/journal", p.admin, ""},
		{"/service_users", p.key, ""},
	} {
		for _, host := range []string{"%zz", "[x]:y", "a%", strings.Repeat("h", 1000)} {
			method := "GET"
			var body io.Reader
			if tt.body != "" {
				method, body = "POST", strings.NewReader(tt.body)
			}
			req, err := http.NewRequest(method, p.base+tt.path, body)
			if err != nil {
				t.Fatal(err)
			}
			req.Host = host
			req.Header.Set("Authorization", "Bearer "+tt.token)
			req.Header.Set("Service-Version", "2")
			if tt.body != "" {
				req.Header.Set("Content-Type", "application/json")
			}
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatalf("%s with Host %.20q: %v", tt.path, host, err)
			}
			b, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			r := response{resp.StatusCode, resp.Header, string(b)}
			if code, _ := r.errorBody(t); r.status != http.StatusBadRequest || code != acctapi.CodeMalformedRequest {
				t.Errorf("%s with Host %.20q: %d %.200s; want 400 %s", tt.path, host, r.status, r.body, acctapi.CodeMalformedRequest)
			}
		}
	}
}

// TestAdminAddAPIKeyDropped: a fault that drops the fake's POST /api_keys
// drops the admin request that made it too (its connection closed without
// an answer, as the fault meant), instead of answering 500; after "drop":
// "after" the key exists, after "before" it does not.
func TestAdminAddAPIKeyDropped(t *testing.T) {
	t.Parallel()
	p := startProgram(t)
	id := p.firstAccount(t)
	keys := func() int {
		return strings.Count(p.api(t, "GET", "/api_keys", "").want(t, 200, "").body, `"id":"ak_`)
	}
	before := keys()
	fresh := &http.Client{Transport: &http.Transport{DisableKeepAlives: true}}
	for i, drop := range []string{"before", "after"} {
		p.adm(t, "POST", "faults", `{"method":"POST","path":"/api_keys","times":1,"drop":"`+drop+`"}`).want(t, 201, "")
		req, err := http.NewRequest("POST", p.base+"/_acctfake/accounts/"+id+"/api_keys", strings.NewReader(`{}`))
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("Authorization", "Bearer "+p.admin)
		req.Header.Set("Content-Type", "application/json")
		if resp, err := fresh.Do(req); err == nil {
			body, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			t.Errorf("drop %s: answered %d %s, want the connection closed unanswered", drop, resp.StatusCode, body)
		}
		if got, want := keys(), before+i; got != want {
			t.Errorf("drop %s: %d API keys, want %d", drop, got, want)
		}
	}
}
