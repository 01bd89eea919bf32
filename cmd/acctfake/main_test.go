package main

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/acctapi/acctapi/fake"
)

// TestMain runs the program itself when a test starts this test binary
// as a subprocess (see startProcess), so that those tests drive the real
// main: its signal handling and its exit status.
func TestMain(m *testing.M) {
	if os.Getenv("ACCTFAKE_RUN_MAIN") == "1" {
		os.Args = append(os.Args[:1], strings.Fields(os.Getenv("ACCTFAKE_ARGS"))...)
		main()
		return
	}
	os.Exit(m.Run())
}

// program is a running acctfake: its base URL, API key and admin token.
type program struct {
	base, key, admin string
	fixtureKeys      map[string]string // by ref (or id), from "fixture api key" lines
}

// readStart reads the start lines from out and returns what they say.
func readStart(t *testing.T, out io.Reader) program {
	t.Helper()
	var p program
	sc := bufio.NewScanner(out)
	for sc.Scan() {
		line := sc.Text()
		if v, ok := strings.CutPrefix(line, "listening on "); ok {
			p.base = v
		}
		if v, ok := strings.CutPrefix(line, "api key: "); ok {
			p.key = v
		}
		if v, ok := strings.CutPrefix(line, "fixture api key "); ok {
			name, _, _ := strings.Cut(v, " ")
			_, token, _ := strings.Cut(v, "): ")
			if p.fixtureKeys == nil {
				p.fixtureKeys = map[string]string{}
			}
			p.fixtureKeys[name] = token
		}
		if v, ok := strings.CutPrefix(line, "admin token: "); ok {
			p.admin = v
			break
		}
	}
	go io.Copy(io.Discard, out)
	if p.base == "" || p.key == "" || p.admin == "" {
		t.Fatalf("the program did not print its address, key and admin token: %+v", p)
	}
	return p
}

// startProgram runs the program (its run function) on a free port; it
// stops when the test ends, and must then exit 0.
func startProgram(t *testing.T, args ...string) program {
	t.Helper()
	args = append(slices.Clone(testTimeouts), args...)
	ctx, cancel := context.WithCancel(context.Background())
	pr, pw := io.Pipe()
	done := make(chan int, 1)
	go func() {
		code := run(ctx, append([]string{"-addr", "127.0.0.1:0"}, args...), pw, io.Discard)
		pw.Close()
		done <- code
	}()
	t.Cleanup(func() {
		cancel()
		if code := <-done; code != 0 {
			t.Errorf("exit status %d, want 0", code)
		}
	})
	return readStart(t, pr)
}

// testTimeouts are the server's timeouts in tests, an hour each unless a
// test's own arguments (which come after, and win) say otherwise: a test
// that is not about a timeout must not meet one on a slow or stalled
// machine (the defaults give a client 5 s to send its headers).
var testTimeouts = []string{"-read-header-timeout", "1h", "-read-timeout", "1h", "-write-timeout", "2h", "-request-timeout", "1h", "-idle-timeout", "1h"}

// response is an answer as a test sees it.
type response struct {
	status int
	header http.Header
	body   string
}

// errorBody decodes the contract's error body, failing t if it is not one.
func (r response) errorBody(t *testing.T) (code, msg string) {
	t.Helper()
	var e struct {
		StatusCode int               `json:"status_code"`
		Msg        string            `json:"msg"`
		ErrorCode  string            `json:"error_code"`
		Details    map[string]string `json:"details"`
	}
	if err := json.Unmarshal([]byte(r.body), &e); err != nil || e.StatusCode != r.status || e.ErrorCode == "" ||
		!opIDForm.MatchString(e.Details["operation_id"]) || r.header.Get("Operation-Id") != e.Details["operation_id"] ||
		r.header.Get("Ngrok-Operation-Id") != e.Details["operation_id"] || r.header.Get("Content-Type") != "application/json" {
		t.Fatalf("answer %d %q (Content-Type %q, Operation-Id %q) is not the contract's error body", r.status, r.body,
			r.header.Get("Content-Type"), r.header.Get("Operation-Id"))
	}
	return e.ErrorCode, e.Msg
}

// do sends one request with token as the bearer token (none if empty) and
// a JSON body (none if empty).
func do(t *testing.T, method, url, token, body string) response {
	t.Helper()
	return doWith(t, method, url, token, body, nil)
}

// doWith is do with header's values in place of those do sets.
func doWith(t *testing.T, method, url, token, body string, header http.Header) response {
	t.Helper()
	var rd io.Reader
	if body != "" {
		rd = strings.NewReader(body)
	}
	req, err := http.NewRequest(method, url, rd)
	if err != nil {
		t.Fatal(err)
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	req.Header.Set("Service-Version", "2")
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	for k, v := range header {
		req.Header[k] = v
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, url, err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return response{resp.StatusCode, resp.Header, string(b)}
}

func get(t *testing.T, url, key string) (int, string) {
	t.Helper()
	r := do(t, "GET", url, key, "")
	return r.status, r.body
}

func TestServesWithGivenKeyAndFixtures(t *testing.T) {
	t.Parallel()
	fixtures := writeFile(t, `[{"path": "/service_users", "body": {"name": "from-fixture"}}]`)
	p := startProgram(t, "-api-key", "secret-key-1", "-fixtures", fixtures)
	if p.key != "secret-key-1" {
		t.Errorf("key = %q", p.key)
	}
	status, body := get(t, p.base+"/service_users", p.key)
	if status != 200 || !strings.Contains(body, `"name":"from-fixture"`) || !strings.Contains(body, `"uri":"`+p.base+`/service_users"`) {
		t.Errorf("GET /service_users = %d %s", status, body)
	}
	if status, _ := get(t, p.base+"/service_users", "wrong"); status != 401 {
		t.Errorf("wrong key: status %d, want 401", status)
	}
}

// TestFixtureKeysPrinted: a key a fixture creates is printed at start
// with its token, which authenticates as its owner (a review found such
// keys unusable: their tokens were shown nowhere).
func TestFixtureKeysPrinted(t *testing.T) {
	t.Parallel()
	fixtures := writeFile(t, `[{"path": "/service_users", "ref": "ci-user", "body": {"name": "ci"}},
		{"path": "/api_keys", "ref": "ci-key", "body": {"owner_id": "${ci-user}"}}]`)
	p := startProgram(t, "-fixtures", fixtures)
	token := p.fixtureKeys["ci-key"]
	if token == "" {
		t.Fatalf("no fixture api key line for ci-key: %+v", p)
	}
	if status, body := get(t, p.base+"/service_users", token); status != 200 || !strings.Contains(body, `"name":"ci"`) {
		t.Errorf("GET /service_users with the fixture key = %d %s", status, body)
	}
}

func TestRandomKeyAndTokenByDefault(t *testing.T) {
	t.Parallel()
	p := startProgram(t)
	if len(p.key) < 20 || len(p.admin) < 20 || p.key == p.admin {
		t.Errorf("key %q and admin token %q: want two long, different secrets", p.key, p.admin)
	}
	if status, body := get(t, p.base+"/api_keys", p.key); status != 200 {
		t.Errorf("GET /api_keys = %d %s", status, body)
	}
}

// TestIDSeedAndManualClock checks -id-seed (two runs with one seed make
// the same ids and key) and -clock manual with -clock-start (timestamps
// read the clock's time).
func TestIDSeedAndManualClock(t *testing.T) {
	t.Parallel()
	args := []string{"-id-seed", "42", "-clock", "manual", "-clock-start", "2030-01-02T03:04:05Z"}
	var ids []string
	for run := range 2 {
		p := startProgram(t, args...)
		// Admin requests (a script polling health until the server is up)
		// take nothing from the ids -id-seed replays.
		for range run * 3 {
			do(t, "GET", p.base+"/_acctfake/health", "", "").want(t, 200, "")
			do(t, "GET", p.base+"/_acctfake/nope", p.admin, "").want(t, 404, "")
		}
		r := do(t, "POST", p.base+"/service_users", p.key, `{"name":"seeded"}`)
		var u struct {
			ID        string `json:"id"`
			CreatedAt string `json:"created_at"`
		}
		if err := json.Unmarshal([]byte(r.body), &u); err != nil || r.status != 201 {
			t.Fatalf("POST /service_users = %d %s", r.status, r.body)
		}
		if u.CreatedAt != "2030-01-02T03:04:05Z" {
			t.Errorf("created_at %q, want the manual clock's 2030-01-02T03:04:05Z", u.CreatedAt)
		}
		ids = append(ids, p.key+" "+u.ID)
		// The operation ids of errors the fake and the front end (a 431)
		// answer follow the seed too; the admin API numbers its own.
		for _, r := range []response{
			do(t, "GET", p.base+"/service_users/service_nope", p.key, ""),
			send(t, "GET", p.base+"/api_keys", p.key, http.Header{"X-Big": {strings.Repeat("h", 2*maxHeaderBytes)}}, nil),
		} {
			r.errorBody(t)
			ids[len(ids)-1] += " " + r.header.Get("Operation-Id")
		}
		r = do(t, "GET", p.base+"/_acctfake/nope", p.admin, "")
		if r.errorBody(t); r.header.Get("Operation-Id") != fmt.Sprintf("op_%027d", 1+run*6) {
			t.Errorf("run %d: the admin API's id %q, want its %d-th", run, r.header.Get("Operation-Id"), 1+run*6)
		}
	}
	if ids[0] != ids[1] {
		t.Errorf("two runs with -id-seed 42 made %q and %q, want the same", ids[0], ids[1])
	}
}

func TestBadArguments(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		name string
		args []string
		want int
	}{
		{"unknown flag", []string{"-nope"}, 2},
		{"extra argument", []string{"x"}, 2},
		{"bad id seed", []string{"-id-seed", "-1"}, 2},
		{"bad clock", []string{"-clock", "fast"}, 2},
		{"clock start without manual clock", []string{"-clock-start", "2030-01-01T00:00:00Z"}, 2},
		{"bad clock start", []string{"-clock", "manual", "-clock-start", "tomorrow"}, 2},
		{"admin token with a space", []string{"-admin-token", "a b"}, 2},
		{"admin token is the API key", []string{"-admin-token", "same", "-api-key", "same"}, 2},
		{"API key of non-ASCII", []string{"-addr", "127.0.0.1:0", "-api-key", "ключ"}, 1},
		{"negative journal budget", []string{"-journal-budget", "-1"}, 2},
		{"zero journal budget", []string{"-journal-budget", "0"}, 2},
		{"journal budget too small for an entry", []string{"-journal-budget", strconv.FormatInt(fake.MinJournalBudget-1, 10)}, 2},
		{"zero grace", []string{"-grace", "0s"}, 2},
		{"clock start in year 0", []string{"-clock", "manual", "-clock-start", "0000-06-01T00:00:00Z"}, 2},
		{"request timeout over write timeout", []string{"-request-timeout", "1m", "-write-timeout", "30s"}, 2},
		{"tiny header limit", []string{"-max-header-bytes", "10"}, 2},
		{"missing fixtures file", []string{"-addr", "127.0.0.1:0", "-fixtures", "/no/such/file"}, 1},
		{"bad fixture", []string{"-addr", "127.0.0.1:0", "-fixtures", writeFile(t, `[{"path": "/service_users", "body": {"name": ""}}]`)}, 1},
		{"bad address", []string{"-addr", "256.0.0.1:99999"}, 1},
		{"fixture account's key is the admin token", []string{"-addr", "127.0.0.1:0", "-admin-token", "admintok",
			"-fixtures", writeFile(t, `{"accounts": [{"id": "ac_other"}, {"api_keys": ["k1", "admintok"]}]}`)}, 1},
	} {
		t.Run(tt.name, func(t *testing.T) {
			// A context already done: were the arguments taken, the
			// program would start and stop at once with exit 0, not serve.
			ctx, cancel := context.WithCancel(t.Context())
			cancel()
			var stderr strings.Builder
			if got := run(ctx, tt.args, io.Discard, &stderr); got != tt.want {
				t.Errorf("exit %d, want %d (stderr %q)", got, tt.want, stderr.String())
			}
			if stderr.Len() == 0 {
				t.Error("nothing on stderr")
			}
		})
	}
}

func writeFile(t *testing.T, content string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "f.json")
	if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

// TestTimeoutFlagsReachTheServer pins that each timeout flag sets the
// server's timeout: the tests that run the program see only that a slow
// client is cut off, which the defaults do too (a review's mutation that
// ignored -read-header-timeout and -read-timeout survived them).
func TestTimeoutFlagsReachTheServer(t *testing.T) {
	cfg, code := parseFlags([]string{"-read-header-timeout", "7s", "-read-timeout", "8s", "-request-timeout", "5s", "-write-timeout", "9s", "-idle-timeout", "11s"}, io.Discard)
	if code != -1 { // -1: go on
		t.Fatalf("parseFlags: exit %d", code)
	}
	hs := httpServer(cfg, http.NotFoundHandler(), context.Background())
	got := []time.Duration{hs.ReadHeaderTimeout, hs.ReadTimeout, hs.WriteTimeout, hs.IdleTimeout}
	if want := []time.Duration{7 * time.Second, 8 * time.Second, 9 * time.Second, 11 * time.Second}; !slices.Equal(got, want) {
		t.Errorf("server timeouts %v, want %v", got, want)
	}
}

// TestPublicURL: -public-url is the base of every uri the API and the
// admin API's journal write (a review found acctfake behind a TLS proxy
// answering http:// uris, with no flag to say otherwise).
func TestPublicURL(t *testing.T) {
	t.Parallel()
	p := startProgram(t, "-public-url", "https://fake.example/base/")
	status, body := get(t, p.base+"/service_users", p.key)
	if status != 200 || !strings.Contains(body, `"uri":"https://fake.example/base/service_users"`) {
		t.Errorf("GET /service_users = %d %s; want its uri under the public URL", status, body)
	}
	if r := p.adm(t, "GET", "journal?limit=1", ""); r.status != 200 || !strings.Contains(r.body, `"uri":"https://fake.example/base/_acctfake/journal"`) {
		t.Errorf("GET journal = %d %.300s; want its uri under the public URL", r.status, r.body)
	}
	if code := run(t.Context(), []string{"-addr", "127.0.0.1:0", "-public-url", "ftp://x"}, io.Discard, io.Discard); code != 1 {
		t.Errorf("-public-url ftp://x: exit %d; want 1", code)
	}
}

// TestJournalBudgetFlagRefused: a -journal-budget that no entry fits (0
// once turned the journal off, which made "no such request" assertions
// pass with nothing to check) is refused at start, naming the least.
func TestJournalBudgetFlagRefused(t *testing.T) {
	t.Parallel()
	for _, v := range []string{"-1", "0", "1", strconv.FormatInt(fake.MinJournalBudget-1, 10)} {
		var stderr strings.Builder
		_, code := parseFlags([]string{"-journal-budget", v}, &stderr)
		want := fmt.Sprintf("acctfake: -journal-budget %s: want at least %d bytes", v, fake.MinJournalBudget)
		if code != 2 || !strings.Contains(stderr.String(), want) {
			t.Errorf("-journal-budget %s: exit %d, stderr %q; want 2 and %q", v, code, stderr.String(), want)
		}
	}
	if cfg, code := parseFlags([]string{"-journal-budget", strconv.FormatInt(fake.MinJournalBudget, 10)}, io.Discard); code != -1 || cfg.journalBudget != fake.MinJournalBudget {
		t.Errorf("-journal-budget MinJournalBudget: exit %d, budget %d", code, cfg.journalBudget)
	}
}
