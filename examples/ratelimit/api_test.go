package limitedapi_test

import (
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	limitedapi "github.com/acctapi/acctapi/examples/ratelimit"
	"github.com/acctapi/acctapi/ratelimit"
)

// clock is a time source the test moves by hand. The handler reads it on
// the server's goroutines, so it is locked.
type clock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *clock) Set(t time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = t
}

var t0 = time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)

// serve starts the API on a real loopback server (every request comes from
// 127.0.0.1) with a clock the test controls, closed when the test ends.
func serve(t *testing.T) (*httptest.Server, *clock) {
	t.Helper()
	clk := &clock{now: t0}
	h, err := limitedapi.NewHandler(ratelimit.WithClock(clk.Now))
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	return srv, clk
}

// response is what a step checks of an answer.
type response struct {
	status      int
	retryAfter  string
	contentType string
	body        string
}

func get(t *testing.T, srv *httptest.Server, path, apiKey string) response {
	t.Helper()
	req, err := http.NewRequestWithContext(t.Context(), http.MethodGet, srv.URL+path, nil)
	if err != nil {
		t.Fatal(err)
	}
	if apiKey != "" {
		req.Header.Set("X-Api-Key", apiKey)
	}
	resp, err := srv.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return response{resp.StatusCode, resp.Header.Get("Retry-After"), resp.Header.Get("Content-Type"), strings.TrimSpace(string(body))}
}

// step is one or more identical requests at a time after t0, and what the
// last of them must get.
type step struct {
	at     time.Duration
	times  int // requests sent; 0 means 1
	path   string
	apiKey string
	want   response
}

func run(t *testing.T, steps []step) {
	t.Helper()
	srv, clk := serve(t)
	for i, st := range steps {
		clk.Set(t0.Add(st.at))
		var got response
		for range max(st.times, 1) {
			got = get(t, srv, st.path, st.apiKey)
		}
		if st.want.contentType == "" {
			got.contentType = "" // not checked
		}
		if got != st.want {
			t.Errorf("step %d (t=%v, %d× GET %s key %q): got %+v, want %+v", i, st.at, max(st.times, 1), st.path, st.apiKey, got, st.want)
		}
	}
}

// tooMany is the middleware's own answer to a request over an enforced
// limit.
func tooMany(retryAfter string) response {
	return response{status: 429, retryAfter: retryAfter, body: "Too Many Requests"}
}

var (
	ok            = response{status: 200, body: "hello"}
	searchResults = response{status: 200, body: `results for "go"`}
	searchLimited = response{status: 429, contentType: "application/json", body: `{"error": "at most 5 searches a minute; try again shortly"}`}
)

// TestPerClientIP: 30 requests a minute per client IP; the 31st is
// rejected with a retry-after that counts down as time passes, and the
// request after that wait is served. A rejected request is not counted.
func TestPerClientIP(t *testing.T) {
	t.Parallel()
	run(t, []step{
		{at: 0, times: 30, path: "/hello", want: ok},
		{at: 0, path: "/hello", want: tooMany("60")},
		{at: 30 * time.Second, path: "/hello", want: tooMany("30")},
		{at: 59 * time.Second, path: "/hello", want: tooMany("1")},
		{at: 60 * time.Second, path: "/hello", want: ok},
	})
}

// TestPerAPIKey: 10 requests a minute per X-Api-Key, whatever the IP's
// budget; another key, or no key, is not affected.
func TestPerAPIKey(t *testing.T) {
	t.Parallel()
	run(t, []step{
		{at: 0, times: 10, path: "/hello", apiKey: "key-a", want: ok},
		{at: 10 * time.Second, path: "/hello", apiKey: "key-a", want: tooMany("50")},
		{at: 10 * time.Second, path: "/hello", apiKey: "key-b", want: ok},
		{at: 10 * time.Second, path: "/hello", want: ok},
		{at: 60 * time.Second, path: "/hello", apiKey: "key-a", want: ok},
	})
}

// TestSearchSoftLimit: the search limit is not enforced, so its sixth
// search is answered by the custom-response rule — a JSON 429 of our own,
// without retry-after — and other paths are served as usual.
func TestSearchSoftLimit(t *testing.T) {
	t.Parallel()
	run(t, []step{
		{at: 0, times: 5, path: "/search?q=go", want: searchResults},
		{at: 1 * time.Second, path: "/search?q=go", want: searchLimited},
		{at: 1 * time.Second, path: "/hello", want: ok},
		{at: 61 * time.Second, path: "/search?q=go", want: searchResults},
	})
}
