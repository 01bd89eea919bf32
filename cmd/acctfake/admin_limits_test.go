package main

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"

	"github.com/acctapi/acctapi"
	"github.com/acctapi/acctapi/fake"
	"github.com/acctapi/acctapi/internal/apitest"
)

// inProcess is an admin API over an in-memory fake, called without a
// listener, so that a test can count what one request allocates.
type inProcess struct {
	srv *fake.Server
	a   *admin
}

func newInProcess(t testing.TB) inProcess {
	t.Helper()
	srv, err := fake.New(fake.WithoutListener(), fake.WithIDSeed(1))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(srv.Close)
	return inProcess{srv: srv, a: newAdmin(srv, "admin-token", nil)}
}

// adm serves one admin request and returns the recorder.
func (p inProcess) adm(method, path, body string) *httptest.ResponseRecorder {
	r := httptest.NewRequest(method, adminPrefix+path, strings.NewReader(body))
	r.Header.Set("Authorization", "Bearer admin-token")
	if body != "" {
		r.Header.Set("Content-Type", "application/json")
	}
	w := httptest.NewRecorder()
	p.a.ServeHTTP(w, r)
	return w
}

// api sends n GETs of path to the fake with its first account's key.
func (p inProcess) api(t testing.TB, n int, path string) {
	t.Helper()
	key := p.srv.Accounts()[0].APIKeys[0]
	for range n {
		req, _ := http.NewRequest("GET", p.srv.URL+path, nil)
		req.Header.Set("Authorization", "Bearer "+key)
		req.Header.Set("Service-Version", acctapi.APIVersion)
		resp, err := p.srv.HTTPClient().Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
	}
}

// mallocs is the number of heap allocations fn makes.
func mallocs(fn func()) uint64 { return apitest.Allocated(fn).Count }

// TestAdminJournalPageCost pins that a page of the journal costs what it
// holds and what its filter passes over, not the journal's length,
// counted in allocations: before, every page copied the journal and
// redacted each entry it walked past, a filter that matched nothing
// redacting every one (2,000 entries: over 2,000 allocations a page), and
// before_id walked from the newest entry to it.
func TestAdminJournalPageCost(t *testing.T) {
	p := newInProcess(t)
	const n = 2000
	p.api(t, n, "/service_users/service_nope") // 404, each with a body
	page := func(query string) journalPage {
		w := p.adm("GET", "journal?"+query, "")
		if w.Code != 200 {
			t.Fatalf("GET journal?%s: %d %s", query, w.Code, w.Body)
		}
		var pg journalPage
		if err := json.Unmarshal(w.Body.Bytes(), &pg); err != nil {
			t.Fatal(err)
		}
		return pg
	}
	all := page("limit=100")
	oldest := all.Entries[len(all.Entries)-1].ID
	for range n/100 - 1 {
		next := page("limit=100&before_id=" + all.Entries[len(all.Entries)-1].ID)
		if len(next.Entries) == 0 {
			break
		}
		all, oldest = next, next.Entries[len(next.Entries)-1].ID
	}
	for _, query := range []string{"method=DELETE", "status=500", "path=/api_keys/*", "limit=5&before_id=" + oldest} {
		if got := mallocs(func() { page(query) }); got > n/4 {
			t.Errorf("GET journal?%s over %d entries: %d allocations; want at most %d", query, n, got, n/4)
		}
	}
	if got := page("limit=5&before_id=" + oldest); len(got.Entries) != 0 || got.NextPageURI != nil {
		t.Errorf("before the oldest entry: %d entries, next %v", len(got.Entries), got.NextPageURI)
	}
}

// TestAdminSizesBounded pins what a journal filter and a fault may hold:
// a path pattern longer than fake.MaxPatternBytes, an error_code over 64
// bytes and a msg over 1 KiB are refused with 400 naming the member.
// Before, a 20,000-byte pattern was taken and matched against each
// journaled path, or each request, for seconds; and a fault's msg of up to
// the 1 MiB body, a thousand times over, made a list of a gigabyte.
func TestAdminSizesBounded(t *testing.T) {
	t.Parallel()
	p := newInProcess(t)
	long := "/service_users/*" + strings.Repeat("a", 20000) + "b"
	tests := []struct {
		name  string
		w     *httptest.ResponseRecorder
		field string
		msg   string
	}{
		{"journal path", p.adm("GET", "journal?path="+long, ""), "path", "a pattern is at most 256"},
		{"fault path", p.adm("POST", "faults", fmt.Sprintf(`{"path":%q,"status":503}`, long)), "path", "a pattern is at most 256"},
		{"fault error_code", p.adm("POST", "faults", fmt.Sprintf(`{"path":"/**","status":503,"error_code":%q}`, strings.Repeat("E", 65))), "error_code", "at most 64"},
		{"fault msg", p.adm("POST", "faults", fmt.Sprintf(`{"path":"/**","status":503,"msg":%q}`, strings.Repeat("m", 1025))), "msg", "at most 1024"},
	}
	for _, tt := range tests {
		if body := tt.w.Body.String(); tt.w.Code != 400 || !strings.Contains(body, `"field":"`+tt.field+`"`) || !strings.Contains(body, tt.msg) {
			t.Errorf("%s: %d %.300s; want 400 on %s", tt.name, tt.w.Code, body, tt.field)
		}
	}
	if w := p.adm("POST", "faults", fmt.Sprintf(`{"path":"/**","status":503,"error_code":%q,"msg":%q}`, strings.Repeat("E", 64), strings.Repeat("m", 1024))); w.Code != 201 {
		t.Errorf("a fault at the bounds: %d %s", w.Code, w.Body)
	}
}

// TestAdminFaultsBounded pins the bound on faults, fake.MaxReactors: one
// more is refused with 400, and removing them all at once allocates a
// fixed amount (before, each removal copied the server's list of
// reactors: 20,000 faults took seconds), after which requests are served.
func TestAdminFaultsBounded(t *testing.T) {
	p := newInProcess(t)
	for i := range fake.MaxReactors {
		if w := p.adm("POST", "faults", `{"path":"/api_keys","status":503}`); w.Code != 201 {
			t.Fatalf("fault %d: %d %s", i, w.Code, w.Body)
		}
	}
	w := p.adm("POST", "faults", `{"path":"/api_keys","status":503}`)
	if w.Code != 400 || !strings.Contains(w.Body.String(), "already has 1000 faults") {
		t.Errorf("fault 1001: %d %s; want 400", w.Code, w.Body)
	}
	if got := mallocs(func() {
		if w := p.adm("DELETE", "faults", ""); w.Code != 204 {
			t.Errorf("DELETE faults: %d %s", w.Code, w.Body)
		}
	}); got > 200 {
		t.Errorf("removing %d faults: %d allocations; want at most 200", fake.MaxReactors, got)
	}
	if w := p.adm("GET", "faults", ""); w.Body.String() != `{"faults":[]}` {
		t.Errorf("after DELETE: %s", w.Body)
	}
	p.api(t, 1, "/api_keys")
	for e := range p.srv.JournalBackward() {
		if e.Status != 200 {
			t.Errorf("GET /api_keys after removing every fault: %d", e.Status)
		}
		break
	}
}

// TestAdminSnapshotsAndAccountsBounded pins the bounds on what the admin
// API adds: at most maxSnapshots snapshots and fake.MaxAccounts accounts (the
// first included), 400 beyond; deleting a snapshot makes room for one.
// Before, each POST added one more without end.
func TestAdminSnapshotsAndAccountsBounded(t *testing.T) {
	t.Parallel()
	p := newInProcess(t)
	var first string
	for i := range maxSnapshots {
		w := p.adm("POST", "snapshots", "")
		if w.Code != 201 {
			t.Fatalf("snapshot %d: %d %s", i, w.Code, w.Body)
		}
		if i == 0 {
			var s struct{ ID string }
			_ = json.Unmarshal(w.Body.Bytes(), &s)
			first = s.ID
		}
	}
	if w := p.adm("POST", "snapshots", ""); w.Code != 400 || !strings.Contains(w.Body.String(), "already keeps 100 snapshots") {
		t.Errorf("snapshot %d: %d %s; want 400", maxSnapshots+1, w.Code, w.Body)
	}
	p.adm("DELETE", "snapshots/"+first, "")
	if w := p.adm("POST", "snapshots", ""); w.Code != 201 {
		t.Errorf("a snapshot after deleting one: %d %s", w.Code, w.Body)
	}

	for i := 1; i < fake.MaxAccounts; i++ {
		if w := p.adm("POST", "accounts", "{}"); w.Code != 201 {
			t.Fatalf("account %d: %d %s", i+1, w.Code, w.Body)
		}
	}
	if w := p.adm("POST", "accounts", "{}"); w.Code != 400 || !strings.Contains(w.Body.String(), "already holds 100 accounts") {
		t.Errorf("account %d: %d %s; want 400", fake.MaxAccounts+1, w.Code, w.Body)
	}
	if n := len(p.srv.Accounts()); n != fake.MaxAccounts {
		t.Errorf("%d accounts; want %d", n, fake.MaxAccounts)
	}
}

// TestAdminJournalPageBytes pins a review's finding: 100 requests whose
// bodies were 70,000 bytes of "<" (journaled as 64 KiB each) made one
// journal page of 39 MB, "<" being six bytes in JSON, and 8 such pages at
// once took the process to 627 MB. A page now ends where its entries'
// JSON would pass fake.MaxPageBytes, and its next_page_uri continues:
// every entry is read once.
func TestAdminJournalPageBytes(t *testing.T) {
	p := newInProcess(t)
	key := p.srv.Accounts()[0].APIKeys[0]
	body := `{"name":"` + strings.Repeat("<", 70_000) + `"}`
	const n = 100
	for range n {
		req, _ := http.NewRequest("POST", p.srv.URL+"/service_users", strings.NewReader(body))
		req.Header.Set("Authorization", "Bearer "+key)
		req.Header.Set("Service-Version", acctapi.APIVersion)
		req.Header.Set("Content-Type", "application/json")
		resp, err := p.srv.HTTPClient().Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
	}
	seen := map[string]bool{}
	pages := 0
	for query := "limit=100"; query != ""; pages++ {
		w := p.adm("GET", "journal?"+query, "")
		if w.Code != 200 {
			t.Fatalf("GET journal?%s: %d %.300s", query, w.Code, w.Body)
		}
		if w.Body.Len() > fake.MaxPageBytes+4096 {
			t.Errorf("a journal page of %d bytes; want at most fake.MaxPageBytes (%d) and the page's own members", w.Body.Len(), fake.MaxPageBytes)
		}
		var pg journalPage
		if err := json.Unmarshal(w.Body.Bytes(), &pg); err != nil {
			t.Fatal(err)
		}
		for _, e := range pg.Entries {
			if seen[e.ID] {
				t.Errorf("entry %s on two pages", e.ID)
			}
			seen[e.ID] = true
		}
		query = ""
		if pg.NextPageURI != nil {
			u, err := url.Parse(*pg.NextPageURI)
			if err != nil {
				t.Fatal(err)
			}
			query = u.RawQuery
		}
	}
	if len(seen) != n || pages < 2 {
		t.Errorf("%d entries over %d pages; want all %d, over several pages", len(seen), pages, n)
	}
}

// TestAdminMessages pins a review's findings on the admin API's messages:
// GET /_acctfake named the path "/_acctfake//_acctfake"; a journal query's
// unknown method offered "" for any, which the journal refuses; and a
// well-formed before_id on a fresh journal said it "sorts after every
// entry that left the journal" when none had.
func TestAdminMessages(t *testing.T) {
	t.Parallel()
	p := newInProcess(t)
	r := httptest.NewRequest("GET", "/_acctfake", nil)
	r.Header.Set("Authorization", "Bearer admin-token")
	w := httptest.NewRecorder()
	p.a.ServeHTTP(w, r)
	if w.Code != 404 || !strings.Contains(w.Body.String(), `"No admin API path /_acctfake."`) {
		t.Errorf("GET /_acctfake: %d %s", w.Code, w.Body)
	}
	for _, tt := range []struct{ query, want, not string }{
		{"journal?method=get", `or \"*\" for any (or leave method out)`, `or \"\" or`},
		{"journal?before_id=op_000000000000000000000000001", "no entry in the journal has it", "sorts after"},
	} {
		w := p.adm("GET", tt.query, "")
		if w.Code != 400 || !strings.Contains(w.Body.String(), tt.want) || strings.Contains(w.Body.String(), tt.not) {
			t.Errorf("GET %s: %d %s; want a 400 saying %s", tt.query, w.Code, w.Body, tt.want)
		}
	}
}
