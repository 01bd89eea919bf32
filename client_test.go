package acctapi

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"net/http"
	"net/http/httptest"
	"net/url"
	"runtime/debug"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/acctapi/acctapi/internal/field"
)

const testKey = "test-key"

// newTestServer starts an httptest server with h and a Client pointed at
// it with retries off (opts can override that). Both are cleaned up when the
// test ends.
func newTestServer(t *testing.T, h http.HandlerFunc, opts ...Option) (*Client, *httptest.Server) {
	t.Helper()
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	all := append([]Option{WithBaseURL(srv.URL), WithHTTPClient(srv.Client()), WithoutRetry()}, opts...)
	c, err := NewClient(testKey, all...)
	if err != nil {
		t.Fatalf("NewClient: %v", err)
	}
	return c, srv
}

// recorded is what a handler saw of one request.
type recorded struct {
	Method     string
	RequestURI string
	Path       string
	RawPath    string
	Header     http.Header
	Body       string
}

// recorder records every request it serves and answers with status and
// body; by default, as the API does, 204 to a DELETE and 200 with {} to the
// rest.
type recorder struct {
	mu     sync.Mutex
	reqs   []recorded
	status int
	body   string
}

func (rec *recorder) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	b, _ := io.ReadAll(r.Body)
	rec.mu.Lock()
	rec.reqs = append(rec.reqs, recorded{
		Method:     r.Method,
		RequestURI: r.RequestURI,
		Path:       r.URL.Path,
		RawPath:    r.URL.EscapedPath(),
		Header:     r.Header.Clone(),
		Body:       string(b),
	})
	status, body := rec.status, rec.body
	rec.mu.Unlock()
	if status == 0 && r.Method == http.MethodDelete {
		w.WriteHeader(http.StatusNoContent) // as the API answers a DELETE
		return
	}
	if status == 0 {
		status = http.StatusOK
	}
	if body == "" {
		body = "{}"
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	io.WriteString(w, body)
}

func (rec *recorder) requests() []recorded {
	rec.mu.Lock()
	defer rec.mu.Unlock()
	return append([]recorded(nil), rec.reqs...)
}

// only returns the single request the recorder saw, failing otherwise.
func (rec *recorder) only(t *testing.T) recorded {
	t.Helper()
	reqs := rec.requests()
	if len(reqs) != 1 {
		t.Fatalf("server saw %d requests, want 1", len(reqs))
	}
	return reqs[0]
}

func TestHeaders(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name   string
		method string
		in     any
		opts   []Option
		// wantContentType is the Content-Type header wanted, "" for none.
		wantContentType string
		wantUAPrefix    string
	}{
		{name: "GET without body", method: http.MethodGet, wantUAPrefix: "acctapi-go/"},
		{name: "DELETE without body", method: http.MethodDelete, wantUAPrefix: "acctapi-go/"},
		{name: "POST with body", method: http.MethodPost, in: map[string]string{"name": "x"},
			wantContentType: "application/json", wantUAPrefix: "acctapi-go/"},
		{name: "PATCH with body", method: http.MethodPatch, in: map[string]string{"name": "x"},
			wantContentType: "application/json", wantUAPrefix: "acctapi-go/"},
		{name: "user agent prefix", method: http.MethodGet, opts: []Option{WithUserAgent("myapp/1.2")},
			wantUAPrefix: "myapp/1.2 acctapi-go/"},
		// Given twice, the later one (a review found both kept).
		{name: "user agent given twice", method: http.MethodGet, opts: []Option{WithUserAgent("a/1"), WithUserAgent("b/2")},
			wantUAPrefix: "b/2 acctapi-go/"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			rec := &recorder{}
			c, _ := newTestServer(t, rec.ServeHTTP, tt.opts...)
			if err := c.Do(t.Context(), tt.method, "/things", nil, tt.in, nil); err != nil {
				t.Fatalf("Do: %v", err)
			}
			h := rec.only(t).Header
			got := map[string]string{
				"Authorization":   h.Get("Authorization"),
				"Service-Version": h.Get("Service-Version"),
				"Ngrok-Version":   h.Get("Ngrok-Version"),
				"Content-Type":    h.Get("Content-Type"),
				"Accept":          h.Get("Accept"),
			}
			want := map[string]string{
				"Authorization":   "Bearer " + testKey,
				"Service-Version": "2",
				"Ngrok-Version":   "2",
				"Content-Type":    tt.wantContentType,
				"Accept":          "application/json",
			}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("headers (-want +got):\n%s", diff)
			}
			if _, ok := h["Content-Type"]; ok != (tt.in != nil) {
				t.Errorf("Content-Type present = %v, want %v", ok, tt.in != nil)
			}
			ua := h.Get("User-Agent")
			if !strings.HasPrefix(ua, tt.wantUAPrefix+Version()+" ") {
				t.Errorf("User-Agent = %q, want prefix %q", ua, tt.wantUAPrefix+Version()+" ")
			}
			if strings.Contains(strings.ToLower(ua), "unknown") {
				t.Errorf("User-Agent = %q, says unknown", ua)
			}
		})
	}
}

func TestVersion(t *testing.T) {
	t.Parallel()
	v := Version()
	if v == "" || v == "unknown" || v == "(devel)" || !strings.HasPrefix(v, "v") {
		t.Errorf("Version() = %q, want a module version starting with v", v)
	}
}

func TestModuleVersion(t *testing.T) {
	t.Parallel()
	other := &debug.Module{Path: "example.com/app", Version: "(devel)"}
	tests := []struct {
		name string
		bi   debug.BuildInfo
		want string
	}{
		{
			name: "dependency with a version",
			bi: debug.BuildInfo{Main: *other, Deps: []*debug.Module{
				{Path: "golang.org/x/time", Version: "v0.16.0"},
				{Path: modulePath, Version: "v1.2.3"},
			}},
			want: "v1.2.3",
		},
		{
			name: "dependency with a pseudo-version",
			bi: debug.BuildInfo{Main: *other, Deps: []*debug.Module{
				{Path: modulePath, Version: "v0.0.0-20260101120000-abcdefabcdef"},
			}},
			want: "v0.0.0-20260101120000-abcdefabcdef",
		},
		{
			name: "dependency replaced by another version",
			bi: debug.BuildInfo{Main: *other, Deps: []*debug.Module{
				{Path: modulePath, Version: "v1.2.3", Replace: &debug.Module{Path: "example.com/fork", Version: "v1.2.4-fork"}},
			}},
			want: "v1.2.4-fork",
		},
		{
			name: "dependency replaced by a directory",
			bi: debug.BuildInfo{Main: *other, Deps: []*debug.Module{
				{Path: modulePath, Version: "v1.2.3", Replace: &debug.Module{Path: "../acctapi"}},
			}},
			want: develVersion,
		},
		{
			name: "main module (devel)",
			bi:   debug.BuildInfo{Main: debug.Module{Path: modulePath, Version: "(devel)"}},
			want: develVersion,
		},
		{
			name: "main module stamped from VCS",
			bi:   debug.BuildInfo{Main: debug.Module{Path: modulePath, Version: "v0.3.1-0.20260101120000-abcdefabcdef+dirty"}},
			want: "v0.3.1-0.20260101120000-abcdefabcdef+dirty",
		},
		{
			name: "main module without version",
			bi:   debug.BuildInfo{Main: debug.Module{Path: modulePath}},
			want: develVersion,
		},
		{
			name: "module absent",
			bi:   debug.BuildInfo{Main: *other, Deps: []*debug.Module{{Path: "golang.org/x/time", Version: "v0.16.0"}}},
			want: develVersion,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			if got := moduleVersion(&tt.bi); got != tt.want {
				t.Errorf("moduleVersion() = %q, want %q", got, tt.want)
			}
		})
	}
}

// request is a body with nested reference types, to check that Do leaves
// the caller's value alone.
type request struct {
	ID       string            `json:"id"`
	Name     *string           `json:"name,omitempty"`
	Tags     []string          `json:"tags"`
	Metadata map[string]string `json:"metadata"`
}

func TestDoEncodesBodyWithoutMutating(t *testing.T) {
	t.Parallel()
	rec := &recorder{body: `{"id":"thing_1","name":"new","unknown_member":true}`}
	c, _ := newTestServer(t, rec.ServeHTTP)

	name := "new"
	in := &request{ID: "thing_1", Name: &name, Tags: []string{"b", "a"}, Metadata: map[string]string{"k": "v"}}
	before := &request{ID: "thing_1", Name: new("new"), Tags: []string{"b", "a"}, Metadata: map[string]string{"k": "v"}}

	var out request
	if err := c.Do(t.Context(), http.MethodPatch, "/things/"+in.ID, nil, in, &out); err != nil {
		t.Fatalf("Do: %v", err)
	}
	if diff := cmp.Diff(before, in); diff != "" {
		t.Errorf("Do changed its input (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(request{ID: "thing_1", Name: new("new")}, out); diff != "" {
		t.Errorf("decoded response (-want +got):\n%s", diff)
	}

	got := rec.only(t)
	var sent map[string]any
	if err := json.Unmarshal([]byte(got.Body), &sent); err != nil {
		t.Fatalf("body %q is not JSON: %v", got.Body, err)
	}
	wantSent := map[string]any{"id": "thing_1", "name": "new", "tags": []any{"b", "a"}, "metadata": map[string]any{"k": "v"}}
	if diff := cmp.Diff(wantSent, sent); diff != "" {
		t.Errorf("body sent (-want +got):\n%s", diff)
	}
	if got.Method != http.MethodPatch || got.Path != "/things/thing_1" {
		t.Errorf("request = %s %s, want PATCH /things/thing_1", got.Method, got.Path)
	}
}

func TestDoEncodeError(t *testing.T) {
	t.Parallel()
	rec := &recorder{}
	c, _ := newTestServer(t, rec.ServeHTTP)
	err := c.Do(t.Context(), http.MethodPost, "/things", nil, map[string]any{"bad": make(chan int)}, nil)
	var ute *json.UnsupportedTypeError
	if !errors.As(err, &ute) {
		t.Errorf("Do with an unencodable body = %v, want a *json.UnsupportedTypeError in the chain", err)
	}
	if n := len(rec.requests()); n != 0 {
		t.Errorf("server saw %d requests, want 0", n)
	}
}

func TestDoPathOnTheWire(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name      string
		basePath  string
		path      string // as resource clients build it, each segment escaped
		query     map[string][]string
		wantPath  string
		wantRaw   string
		wantQuery string
	}{
		{
			name:     "id stays one segment",
			path:     "/things/a%2Fb%20c%3Fd",
			wantPath: "/things/a/b c?d", wantRaw: "/things/a%2Fb%20c%3Fd",
		},
		{
			name:     "base URL with a path prefix",
			basePath: "/api/v2",
			path:     "/things/thing_1",
			wantPath: "/api/v2/things/thing_1", wantRaw: "/api/v2/things/thing_1",
		},
		{
			name:     "base URL with a path prefix and a trailing slash",
			basePath: "/api/v2/",
			path:     "/things/a%2Fb%20c%3Fd",
			wantPath: "/api/v2/things/a/b c?d", wantRaw: "/api/v2/things/a%2Fb%20c%3Fd",
		},
		{
			name:     "base URL with an escaped slash in its prefix",
			basePath: "/tenant%2F1/",
			path:     "/things/a%2Fb",
			wantPath: "/tenant/1/things/a/b", wantRaw: "/tenant%2F1/things/a%2Fb",
		},
		{
			name:     "base URL with an escaped slash in its prefix, plain segments",
			basePath: "/tenant%2F1/",
			path:     "/things/thing_1",
			wantPath: "/tenant/1/things/thing_1", wantRaw: "/tenant%2F1/things/thing_1",
		},
		{
			name:     "base URL with a path prefix, segments with reserved characters",
			basePath: "/api",
			path:     "/things/a:b@c$&+=",
			wantPath: "/api/things/a:b@c$&+=", wantRaw: "/api/things/a:b@c$&+=",
		},
		{
			name:     "query added",
			path:     "/things",
			query:    map[string][]string{"limit": {"5"}, "filter": {`obj.id == "a&b"`}},
			wantPath: "/things", wantRaw: "/things",
			wantQuery: "filter=obj.id+%3D%3D+%22a%26b%22&limit=5",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			rec := &recorder{}
			srv := httptest.NewServer(rec)
			t.Cleanup(srv.Close)
			c, err := NewClient(testKey, WithBaseURL(srv.URL+tt.basePath), WithHTTPClient(srv.Client()), WithoutRetry())
			if err != nil {
				t.Fatalf("NewClient: %v", err)
			}
			if err := c.Do(t.Context(), http.MethodGet, tt.path, tt.query, nil, nil); err != nil {
				t.Fatalf("Do: %v", err)
			}
			got := rec.only(t)
			wantURI := tt.wantRaw
			if tt.wantQuery != "" {
				wantURI += "?" + tt.wantQuery
			}
			if diff := cmp.Diff([]string{tt.wantPath, tt.wantRaw, wantURI}, []string{got.Path, got.RawPath, got.RequestURI}); diff != "" {
				t.Errorf("path, escaped path, request URI (-want +got):\n%s", diff)
			}
		})
	}
}

func TestDoRejectsBadSegments(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		path string
	}{
		{name: "empty id at end", path: "/things/"},
		{name: "empty id in the middle", path: "/things//keys"},
		{name: "empty first segment", path: "//things"},
		{name: "dot id", path: "/things/."},
		{name: "dot-dot id", path: "/things/.."},
		// Another resource's id answered 404, which a caller's "not found:
		// already gone" check takes for success (a review's
		// ServiceUsers.Delete(ctx, key.ID)).
		{name: "an API key's id for a service user", path: "/service_users/ak_2x"},
		{name: "a user's id for an API key", path: "/api_keys/usr_1"},
		{name: "another backend's id", path: "/backends/failover/bkdhr_1"},
		{name: "a key's id for a bot user", path: "/bot_users/ak_1"},
		{name: "another id for a subscription's sources", path: "/event_subscriptions/ed_1/sources/api_key_created.v0"},
		{name: "another id for an operator's endpoints", path: "/kubernetes_operators/ep_1/bound_endpoints?limit=5"},
		{name: "an operation's id", path: "/service_users/op_1"},
		{name: "an API key's id with an escaped underscore", path: "/service_users/ak%5F1"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			rec := &recorder{}
			c, _ := newTestServer(t, rec.ServeHTTP)
			err := c.Do(t.Context(), http.MethodGet, tt.path, nil, nil, nil)
			var fe *FieldError
			if !errors.As(err, &fe) || fe.Field != "id" || fe.Code != CodeInvalidValue {
				t.Errorf("Do(%q) = %v, want a FieldError on id with %s", tt.path, err, CodeInvalidValue)
			}
			if !errors.Is(err, ErrInvalid) {
				t.Errorf("Do(%q) = %v, want ErrInvalid in the chain", tt.path, err)
			}
			if n := len(rec.requests()); n != 0 {
				t.Errorf("server saw %d requests, want 0", n)
			}
		})
	}
}

// TestDoAbsoluteURLs: an absolute URL on the base URL's origin is checked
// for another resource's id as a path is (a review's
// Do(ctx, "DELETE", base+"/service_users/ak_1") was sent, and its 404 passed
// an "already gone" check), and its scheme may be written in capitals.
func TestDoAbsoluteURLs(t *testing.T) {
	t.Parallel()
	rec := &recorder{}
	c, srv := newTestServer(t, rec.ServeHTTP)
	for _, p := range []string{"/service_users/ak_1", "/service_users/ak%5f1", "//service_users/x", "/service_users/../api_keys/ak_1"} {
		err := c.Do(t.Context(), http.MethodDelete, srv.URL+p, nil, nil, nil)
		if fe := (*FieldError)(nil); !errors.As(err, &fe) || fe.Field != "id" {
			t.Errorf("Do(DELETE, <base>%s) = %v, want a FieldError on id", p, err)
		}
	}
	if n := len(rec.requests()); n != 0 {
		t.Errorf("server saw %d requests, want 0", n)
	}
	if err := c.Do(t.Context(), http.MethodGet, "HTTP://"+strings.TrimPrefix(srv.URL, "http://")+"/service_users", nil, nil, nil); err != nil {
		t.Errorf("Do(GET, HTTP://...) = %v, want it sent", err)
	}
	if n := len(rec.requests()); n != 1 {
		t.Errorf("server saw %d requests, want 1", n)
	}
}

func TestDoAcceptsOddButValidPaths(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		path    string
		wantURI string
	}{
		{name: "root", path: "/", wantURI: "/"},
		{name: "double slash inside the query", path: "/things?next=a//b/", wantURI: "/things?next=a%2F%2Fb%2F"},
		{name: "dots inside an id", path: "/things/a..b", wantURI: "/things/a..b"},
		// A made-up id of no known prefix answers 404; so does an
		// old-style bot id.
		{name: "a made-up id", path: "/service_users/ci-bot", wantURI: "/service_users/ci-bot"},
		{name: "a bot user's service id", path: "/bot_users/service_1", wantURI: "/bot_users/service_1"},
		{name: "a prefix only in a later segment", path: "/event_subscriptions/esb_1/sources/ak_x", wantURI: "/event_subscriptions/esb_1/sources/ak_x"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			rec := &recorder{}
			c, _ := newTestServer(t, rec.ServeHTTP)
			if err := c.Do(t.Context(), http.MethodGet, tt.path, map[string][]string{"x": {"1"}}, nil, nil); err != nil {
				t.Fatalf("Do(%q): %v", tt.path, err)
			}
			got := rec.only(t).RequestURI
			want := tt.wantURI + sep(tt.wantURI) + "x=1"
			if got != want {
				t.Errorf("request URI = %q, want %q", got, want)
			}
		})
	}
}

func sep(uri string) string {
	if strings.Contains(uri, "?") {
		return "&"
	}
	return "?"
}

func TestDoRejectsRelativePath(t *testing.T) {
	t.Parallel()
	c, _ := newTestServer(t, (&recorder{}).ServeHTTP)
	if err := c.Do(t.Context(), http.MethodGet, "things", nil, nil, nil); err == nil {
		t.Error(`Do("things") succeeded, want an error for a path without a leading /`)
	}
}

func TestNewClientOptions(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		key     string
		opts    []Option
		wantErr bool
		wantURL string
	}{
		{name: "defaults", key: "k", wantURL: DefaultBaseURL},
		{name: "base URL", key: "k", opts: []Option{WithBaseURL("http://127.0.0.1:8080")}, wantURL: "http://127.0.0.1:8080"},
		{name: "base URL trailing slash dropped", key: "k", opts: []Option{WithBaseURL("https://example.com/api/")}, wantURL: "https://example.com/api"},
		{name: "base URL with an escaped slash", key: "k", opts: []Option{WithBaseURL("https://example.com/a%2Fb/")}, wantURL: "https://example.com/a%2Fb"},
		{name: "relative base URL", key: "k", opts: []Option{WithBaseURL("/api")}, wantErr: true},
		{name: "host without scheme", key: "k", opts: []Option{WithBaseURL("example.com")}, wantErr: true},
		{name: "ftp base URL", key: "k", opts: []Option{WithBaseURL("ftp://example.com")}, wantErr: true},
		{name: "base URL without host", key: "k", opts: []Option{WithBaseURL("http://")}, wantErr: true},
		{name: "base URL with query", key: "k", opts: []Option{WithBaseURL("https://example.com/?a=1")}, wantErr: true},
		{name: "base URL with user information", key: "k", opts: []Option{WithBaseURL("https://user:secret@example.com")}, wantErr: true},
		{name: "base URL with empty user information", key: "k", opts: []Option{WithBaseURL("http://@0")}, wantErr: true},
		{name: "base URL with fragment", key: "k", opts: []Option{WithBaseURL("https://example.com/#x")}, wantErr: true},
		{name: "unparsable base URL", key: "k", opts: []Option{WithBaseURL("http://[::1")}, wantErr: true},
		{name: "nil HTTP client", key: "k", opts: []Option{WithHTTPClient(nil)}, wantErr: true},
		{name: "empty key", key: "", wantErr: true},
		{name: "blank key", key: "   ", wantErr: true},
		{name: "key with a space", key: "a b", wantErr: true},
		{name: "key with a tab", key: "a\tb", wantErr: true},
		{name: "key with a newline", key: "ab\n", wantErr: true},
		{name: "key with DEL", key: "k\x7f", wantErr: true},
		{name: "key with NUL", key: "k\x00", wantErr: true},
		{name: "key with ESC", key: "k\x1b", wantErr: true},
		{name: "user agent with a line break", key: "k", opts: []Option{WithUserAgent("a\r\nX-Evil: 1")}, wantErr: true},
		{name: "user agent with a carriage return", key: "k", opts: []Option{WithUserAgent("a\rb")}, wantErr: true},
		{name: "user agent with a line feed", key: "k", opts: []Option{WithUserAgent("a\nb")}, wantErr: true},
		{name: "empty user agent", key: "k", opts: []Option{WithUserAgent("")}, wantErr: true},
		{name: "negative MaxAttempts", key: "k", opts: []Option{WithRetry(RetryPolicy{MaxAttempts: -1})}, wantErr: true},
		{name: "negative MaxWait", key: "k", opts: []Option{WithRetry(RetryPolicy{MaxWait: -time.Second})}, wantErr: true},
		{name: "negative BaseDelay", key: "k", opts: []Option{WithRetry(RetryPolicy{BaseDelay: -time.Second})}, wantErr: true},
		{name: "negative MaxDelay", key: "k", opts: []Option{WithRetry(RetryPolicy{MaxDelay: -time.Second})}, wantErr: true},
		{name: "retries without a BaseDelay", key: "k", opts: []Option{WithRetry(RetryPolicy{MaxAttempts: 3})}, wantErr: true},
		// A policy left unset, or one whose delays do nothing, is refused
		// (a review found both quietly sent every request once).
		{name: "zero retry policy", key: "k", opts: []Option{WithRetry(RetryPolicy{})}, wantErr: true},
		{name: "delays without retries", key: "k", opts: []Option{WithRetry(RetryPolicy{BaseDelay: time.Millisecond, MaxDelay: 5 * time.Millisecond, MaxWait: time.Second})}, wantErr: true},
		{name: "one attempt with a wait", key: "k", opts: []Option{WithRetry(RetryPolicy{MaxAttempts: 1, MaxWait: time.Second})}, wantErr: true},
		{name: "one attempt with a delay cap", key: "k", opts: []Option{WithRetry(RetryPolicy{MaxAttempts: 1, MaxDelay: time.Second})}, wantErr: true},
		{name: "MaxWait of exactly half a BaseDelay", key: "k", opts: []Option{WithRetry(RetryPolicy{MaxAttempts: 2, BaseDelay: time.Second, MaxWait: 500 * time.Millisecond})}, wantURL: DefaultBaseURL},
		{name: "one attempt", key: "k", opts: []Option{WithRetry(RetryPolicy{MaxAttempts: 1})}, wantURL: DefaultBaseURL},
		// Policies that would never retry, or whose BaseDelay does nothing
		// (a review's MaxAttempts 5 tried a 503 once).
		{name: "MaxWait shorter than any wait", key: "k", opts: []Option{WithRetry(RetryPolicy{MaxAttempts: 5, BaseDelay: 4 * time.Second, MaxWait: 100 * time.Millisecond})}, wantErr: true},
		{name: "MaxDelay below BaseDelay", key: "k", opts: []Option{WithRetry(RetryPolicy{MaxAttempts: 5, BaseDelay: time.Second, MaxDelay: 100 * time.Millisecond})}, wantErr: true},
		{name: "MaxWait that fits half a BaseDelay", key: "k", opts: []Option{WithRetry(RetryPolicy{MaxAttempts: 5, BaseDelay: 4 * time.Second, MaxWait: 2 * time.Second})}, wantURL: DefaultBaseURL},
		{name: "MaxWait that fits a Retry-After", key: "k", opts: []Option{WithRetry(RetryPolicy{MaxAttempts: 5, BaseDelay: 4 * time.Second, MaxWait: time.Second})}, wantURL: DefaultBaseURL},
		{name: "error stops at the first bad option", key: "k",
			opts: []Option{WithHTTPClient(nil), WithBaseURL("https://example.com")}, wantErr: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			c, err := NewClient(tt.key, tt.opts...)
			if tt.wantErr {
				if err == nil {
					t.Fatal("NewClient succeeded, want an error")
				}
				if c != nil {
					t.Errorf("NewClient returned a client with its error %v", err)
				}
				if !strings.HasPrefix(err.Error(), "acctapi: ") {
					t.Errorf("error %q is not prefixed with the package name", err)
				}
				return
			}
			if err != nil {
				t.Fatalf("NewClient: %v", err)
			}
			if got := c.BaseURL(); got != tt.wantURL {
				t.Errorf("BaseURL() = %q, want %q", got, tt.wantURL)
			}
		})
	}
}

// TestNewClientNilOption checks that a nil option is an error naming its
// position, not a nil-pointer crash.
func TestNewClientNilOption(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		opts []Option
		want string
	}{
		{[]Option{nil}, "acctapi: NewClient: option 1 of 1 is nil"},
		{[]Option{WithBaseURL("https://example.com"), nil, WithoutValidation()}, "acctapi: NewClient: option 2 of 3 is nil"},
	} {
		c, err := NewClient("k", tt.opts...)
		if err == nil || err.Error() != tt.want || c != nil {
			t.Errorf("NewClient with %d options: %v, %v; want no client and %q", len(tt.opts), c, err, tt.want)
		}
	}
}

func TestNewClientDefaults(t *testing.T) {
	t.Parallel()
	c, err := NewClient("k")
	if err != nil {
		t.Fatalf("NewClient: %v", err)
	}
	if diff := cmp.Diff(DefaultRetryPolicy(), c.retry); diff != "" {
		t.Errorf("default retry policy (-want +got):\n%s", diff)
	}
	c, err = NewClient("k", WithoutRetry())
	if err != nil {
		t.Fatalf("NewClient: %v", err)
	}
	if c.retry.MaxAttempts != 1 {
		t.Errorf("WithoutRetry: MaxAttempts = %d, want 1", c.retry.MaxAttempts)
	}
}

// validatable counts its Validate calls.
type validatable struct {
	calls int
	err   error
}

func (v *validatable) Validate() error { v.calls++; return v.err }

// TestDoValidatesBody checks that Do runs a body's Validate method and
// sends nothing when it fails, unless the client was built
// WithoutValidation: the one switch the resource clients rely on.
func TestDoValidatesBody(t *testing.T) {
	t.Parallel()
	bad := field.Invalid("name", "is required")
	tests := []struct {
		name      string
		opts      []Option
		wantErr   error
		wantCalls int
		wantSent  int
	}{
		{name: "validates by default", wantErr: bad, wantCalls: 1, wantSent: 0},
		{name: "WithoutValidation skips it", opts: []Option{WithoutValidation()}, wantCalls: 0, wantSent: 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			rec := &recorder{}
			c, _ := newTestServer(t, rec.ServeHTTP, tt.opts...)
			v := &validatable{err: bad}
			if err := c.Do(t.Context(), http.MethodPost, "/things", nil, v, nil); err != tt.wantErr {
				t.Errorf("Do() = %v, want %v", err, tt.wantErr)
			}
			if v.calls != tt.wantCalls {
				t.Errorf("Validate called %d times, want %d", v.calls, tt.wantCalls)
			}
			if n := len(rec.requests()); n != tt.wantSent {
				t.Errorf("server saw %d requests, want %d", n, tt.wantSent)
			}
		})
	}
}

// named is a request whose Validate has a pointer receiver.
type named struct {
	Name string `json:"name"`
}

func (n *named) Validate() error {
	if n.Name == "" {
		return field.Invalid("name", "is required")
	}
	return nil
}

// TestDoMisuseCaughtBeforeSending checks that a request passed by value is
// validated as through a pointer, and that an out that is not a non-nil
// pointer is an error before anything is sent: a review saw a create
// take effect and then fail to decode, and the caller's retry answered 409.
func TestDoMisuseCaughtBeforeSending(t *testing.T) {
	t.Parallel()
	rec := &recorder{body: `{"id":"x"}`}
	c, _ := newTestServer(t, rec.ServeHTTP)
	var fe *FieldError
	if err := c.Do(t.Context(), http.MethodPost, "/things", nil, named{}, nil); !errors.As(err, &fe) || fe.Field != "name" {
		t.Errorf("Do(named{}) = %v, want the field error on name", err)
	}
	for _, out := range []any{request{}, (*request)(nil), "x"} {
		if err := c.Do(t.Context(), http.MethodPost, "/things", nil, named{Name: "a"}, out); err == nil || !strings.Contains(err.Error(), "non-nil pointer") {
			t.Errorf("Do(out %T) = %v, want an error asking for a non-nil pointer", out, err)
		}
	}
	// A query parameter in both the path and query (a review: query's
	// silently replaced the path's).
	if err := c.Do(t.Context(), http.MethodGet, "/things?limit=1", url.Values{"limit": {"2"}}, nil, nil); err == nil || !strings.Contains(err.Error(), `"limit" is both in the path and in query`) {
		t.Errorf("Do with limit twice = %v, want an error naming limit", err)
	}
	if n := len(rec.requests()); n != 0 {
		t.Errorf("server saw %d requests, want 0", n)
	}
	if err := c.Do(t.Context(), http.MethodGet, "/things?limit=1", url.Values{"before_id": {"x"}}, nil, nil); err != nil {
		t.Errorf("Do with limit in the path and before_id in query = %v", err)
	} else if q := rec.requests()[0].RequestURI; q != "/things?before_id=x&limit=1" {
		t.Errorf("request URI %q, want both parameters", q)
	}
	var out request
	if err := c.Do(t.Context(), http.MethodPost, "/things", nil, named{Name: "a"}, &out); err != nil || out.ID != "x" {
		t.Errorf("Do(named{Name: a}, &out) = %+v, %v", out, err)
	}
}

// TestDoNilBody checks that a nil request pointer is an error naming its
// type, sent nowhere and never passed to its Validate, whether or not the
// client validates.
func TestDoNilBody(t *testing.T) {
	t.Parallel()
	for _, opts := range [][]Option{nil, {WithoutValidation()}} {
		rec := &recorder{}
		c, _ := newTestServer(t, rec.ServeHTTP, opts...)
		err := c.Do(t.Context(), http.MethodPost, "/things", nil, (*validatable)(nil), nil)
		var fe *FieldError
		if !errors.As(err, &fe) || fe.Field != "" || !strings.Contains(fe.Reason, "nil *acctapi.validatable") {
			t.Errorf("Do(nil request) = %v, want a FieldError on the request naming its type", err)
		}
		if n := len(rec.requests()); n != 0 {
			t.Errorf("server saw %d requests, want 0", n)
		}
	}
}

// TestDeleteSucceedsOnlyWith204 checks that a DELETE answered with anything
// below 400 but the API's 204 No Content (contract §1) is an error wrapping
// ErrNoResource: the answer of a server that is not the API.
func TestDeleteSucceedsOnlyWith204(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name        string
		status      int
		contentType string
		body        string
		wantErr     bool
	}{
		{name: "204", status: http.StatusNoContent},
		{name: "200 with {}", status: http.StatusOK, contentType: "application/json", body: "{}", wantErr: true},
		{name: "a proxy's login page", status: http.StatusOK, contentType: "text/html", body: "<html>login</html>", wantErr: true},
		{name: "200 empty", status: http.StatusOK, wantErr: true},
		{name: "202", status: http.StatusAccepted, wantErr: true},
		{name: "302 without Location", status: http.StatusFound, wantErr: true},
		// net/http follows it with a GET, whose 204 says nothing of the
		// delete (a second review).
		{name: "302 to a page answering 204", status: http.StatusFound, wantErr: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			c, _ := newTestServer(t, func(w http.ResponseWriter, r *http.Request) {
				if tt.name == "302 to a page answering 204" {
					if r.Method == http.MethodDelete {
						http.Redirect(w, r, "/login", http.StatusFound)
					} else {
						w.WriteHeader(http.StatusNoContent)
					}
					return
				}
				if tt.contentType != "" {
					w.Header().Set("Content-Type", tt.contentType)
				}
				w.WriteHeader(tt.status)
				io.WriteString(w, tt.body)
			})
			err := c.Do(t.Context(), http.MethodDelete, "/things/x", nil, nil, nil)
			if tt.wantErr != errors.Is(err, ErrNoResource) || tt.wantErr != (err != nil) {
				t.Errorf("Do(DELETE) = %v, want an error wrapping ErrNoResource: %v", err, tt.wantErr)
			}
			if err != nil && strings.Contains(err.Error(), "holds no resource") {
				t.Errorf("Do(DELETE) = %v; a DELETE's error should not speak of a missing resource", err)
			}
		})
	}
}

func TestDoNoContent(t *testing.T) {
	t.Parallel()
	c, _ := newTestServer(t, func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusNoContent)
	})
	out := request{ID: "kept"}
	if err := c.Do(t.Context(), http.MethodDelete, "/things/x", nil, nil, &out); err != nil {
		t.Fatalf("Do: %v", err)
	}
	if out.ID != "kept" {
		t.Errorf("out changed on 204: %+v", out)
	}
}

func TestDoContextDone(t *testing.T) {
	t.Parallel()
	rec := &recorder{}
	c, _ := newTestServer(t, rec.ServeHTTP)
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	err := c.Do(ctx, http.MethodGet, "/things", nil, nil, nil)
	if !errors.Is(err, context.Canceled) {
		t.Errorf("Do with a cancelled context = %v, want context.Canceled in the chain", err)
	}
}

// TestResponseContentLengthIsAClaim checks that a response whose
// Content-Length is wrong, however large, is read as the bytes that came.
func TestResponseContentLengthIsAClaim(t *testing.T) {
	t.Parallel()
	for _, size := range []int64{math.MaxInt64, 50 << 30, 1, -1} {
		rt := roundTripFunc(func(r *http.Request) (*http.Response, error) {
			return &http.Response{StatusCode: 200, Header: http.Header{"Content-Type": {"application/json"}},
				Body: io.NopCloser(strings.NewReader(`{"id":"x"}`)), ContentLength: size, Request: r}, nil
		})
		var out struct{ ID string }
		if err := newFakeClient(t, rt).Do(t.Context(), http.MethodGet, "/things", nil, nil, &out); err != nil || out.ID != "x" {
			t.Errorf("Content-Length %d: got %+v, %v", size, out, err)
		}
	}
}

// TestBaseURLErrorsHidePasswords checks that no error from WithBaseURL
// repeats a password the URL carries.
func TestBaseURLErrorsHidePasswords(t *testing.T) {
	t.Parallel()
	for _, raw := range []string{"https://u:secret@h/?x", "https://u:secret@h/%zz", "ftp://u:secret@h", "https://u:secret@h"} {
		_, err := NewClient(testKey, WithBaseURL(raw))
		if err == nil || strings.Contains(err.Error(), "secret") {
			t.Errorf("WithBaseURL(%q): %v, want an error without the password", raw, err)
		}
	}
}

// TestRedirectedRequests checks that a request net/http resent with
// another method after a 301, 302 or 303 (a PATCH, POST or DELETE resent
// as a GET) is an error wrapping ErrNoResource, whatever the GET answered
// (a review found an update reported done with the unchanged resource),
// and that a 307 or 308, which keeps the method, is followed as sent.
func TestRedirectedRequests(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		method  string
		status  int
		wantErr bool
	}{
		{http.MethodPatch, http.StatusMovedPermanently, true},
		{http.MethodPost, http.StatusFound, true},
		{http.MethodDelete, http.StatusSeeOther, true},
		{http.MethodPatch, http.StatusPermanentRedirect, false},
		{http.MethodDelete, http.StatusTemporaryRedirect, false},
	} {
		t.Run(fmt.Sprintf("%s %d", tt.method, tt.status), func(t *testing.T) {
			t.Parallel()
			var newPaths atomic.Int32
			c, _ := newTestServer(t, func(w http.ResponseWriter, r *http.Request) {
				if strings.HasPrefix(r.URL.Path, "/old/") {
					http.Redirect(w, r, "/new/"+strings.TrimPrefix(r.URL.Path, "/old/"), tt.status)
					return
				}
				newPaths.Add(1)
				if r.Method == http.MethodDelete {
					w.WriteHeader(http.StatusNoContent)
					return
				}
				w.Header().Set("Content-Type", "application/json")
				io.WriteString(w, `{"id":"x","uri":"u","description":"old"}`)
			})
			var out request
			var in any = &request{ID: "x"}
			if tt.method == http.MethodDelete {
				in = nil
			}
			err := c.Do(t.Context(), tt.method, "/old/things/x", nil, in, &out)
			if tt.wantErr != (err != nil) || tt.wantErr && !errors.Is(err, ErrNoResource) {
				t.Errorf("Do = %v, want an error wrapping ErrNoResource: %v", err, tt.wantErr)
			}
			if got := newPaths.Load(); tt.wantErr != (got == 0) {
				t.Errorf("requests to the redirect's target = %d; want it followed: %v", got, !tt.wantErr)
			}
		})
	}
}

// TestRedirectsStayOnTheOrigin checks that a redirect to another origin
// (another port, or plain HTTP from HTTPS) is not followed, so the API key
// is not sent there, and is an error wrapping ErrNoResource; and that the
// user's own CheckRedirect still governs the redirects that are followed,
// on a copy of their client.
func TestRedirectsStayOnTheOrigin(t *testing.T) {
	t.Parallel()
	var elsewhere atomic.Int32
	other := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		elsewhere.Add(1)
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, `{"id":"other"}`)
	}))
	t.Cleanup(other.Close)
	redirectTo := func(target string) http.HandlerFunc {
		return func(w http.ResponseWriter, r *http.Request) {
			http.Redirect(w, r, target+r.URL.Path, http.StatusTemporaryRedirect)
		}
	}
	// Another port, and plain HTTP from HTTPS on the same host.
	api := httptest.NewServer(redirectTo(other.URL))
	t.Cleanup(api.Close)
	tlsAPI := httptest.NewTLSServer(redirectTo(other.URL))
	t.Cleanup(tlsAPI.Close)
	for _, srv := range []*httptest.Server{api, tlsAPI} {
		c, err := NewClient(testKey, WithBaseURL(srv.URL), WithHTTPClient(srv.Client()), WithoutRetry())
		if err != nil {
			t.Fatal(err)
		}
		for _, method := range []string{http.MethodGet, http.MethodPatch} {
			var out request
			err := c.Do(t.Context(), method, "/things/x", nil, nil, &out)
			if !errors.Is(err, ErrNoResource) || !strings.Contains(err.Error(), "another origin") {
				t.Errorf("%s %s, redirected to %s: %v, want an error wrapping ErrNoResource naming another origin", method, srv.URL, other.URL, err)
			}
		}
	}
	if n := elsewhere.Load(); n != 0 {
		t.Errorf("the other origin got %d requests, want none", n)
	}

	// A same-origin redirect is followed as the user's CheckRedirect says.
	var hops atomic.Int32
	same := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/old" {
			http.Redirect(w, r, "/new", http.StatusTemporaryRedirect)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, `{"id":"new"}`)
	}))
	t.Cleanup(same.Close)
	mine := same.Client()
	mine.CheckRedirect = func(*http.Request, []*http.Request) error {
		hops.Add(1)
		return http.ErrUseLastResponse
	}
	c, err := NewClient(testKey, WithBaseURL(same.URL), WithHTTPClient(mine), WithoutRetry())
	if err != nil {
		t.Fatal(err)
	}
	var out request
	if err := c.Do(t.Context(), http.MethodGet, "/old", nil, nil, &out); !errors.Is(err, ErrNoResource) || hops.Load() != 1 {
		t.Errorf("with a CheckRedirect that stops: %v after %d calls of it, want an error wrapping ErrNoResource after 1", err, hops.Load())
	}
	mine.CheckRedirect = nil // the Client holds a copy; this changes nothing there
	if err := c.Do(t.Context(), http.MethodGet, "/old", nil, nil, &out); !errors.Is(err, ErrNoResource) || hops.Load() != 2 {
		t.Errorf("after the caller's client changed: %v after %d calls, want the Client's copy unchanged", err, hops.Load())
	}
	c, _ = NewClient(testKey, WithBaseURL(same.URL), WithHTTPClient(mine), WithoutRetry())
	if err := c.Do(t.Context(), http.MethodGet, "/old", nil, nil, &out); err != nil || out.ID != "new" {
		t.Errorf("a same-origin 307 without a CheckRedirect of the caller's: %+v, %v; want it followed", out, err)
	}
}

// TestSameOrigin checks the origin the API key is kept to: a default port
// written out is the same origin (a review saw a redirect to
// http://h:80/new from http://h refused as another origin).
func TestSameOrigin(t *testing.T) {
	t.Parallel()
	c, err := NewClient(testKey, WithBaseURL("https://api.example.test"))
	if err != nil {
		t.Fatal(err)
	}
	for raw, want := range map[string]bool{
		"https://api.example.test/x":      true,
		"https://api.example.test:443/x":  true,
		"https://API.example.test/x":      true,
		"http://api.example.test/x":       false,
		"http://api.example.test:443/x":   false,
		"https://api.example.test:8443/x": false,
		"https://example.test/x":          false,
	} {
		u, _ := url.Parse(raw)
		if got := c.sameOrigin(u); got != want {
			t.Errorf("sameOrigin(%s) = %v, want %v", raw, got, want)
		}
	}
	if _, err := c.resolve("https://api.example.test:443/service_users?before_id=x", nil); err != nil {
		t.Errorf("a next_page_uri with the default port written out: %v", err)
	}
}

// TestRedirectStoppedByCallerSaysSo checks that a GET's redirect stopped
// by the caller's CheckRedirect is said to be, not blamed on a change of
// method that did not happen.
func TestRedirectStoppedByCallerSaysSo(t *testing.T) {
	t.Parallel()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, "/new", http.StatusFound)
	}))
	t.Cleanup(srv.Close)
	mine := srv.Client()
	mine.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
	c, err := NewClient(testKey, WithBaseURL(srv.URL), WithHTTPClient(mine), WithoutRetry())
	if err != nil {
		t.Fatal(err)
	}
	err = c.Do(t.Context(), http.MethodGet, "/old", nil, nil, nil)
	if !errors.Is(err, ErrNoResource) || !strings.Contains(err.Error(), "CheckRedirect") {
		t.Errorf("Do = %v, want an error wrapping ErrNoResource naming the caller's CheckRedirect", err)
	}
}

// TestNotTheAPIAnswers checks that a success answer that is not JSON (a
// proxy's login page, an empty body) is an error wrapping ErrNoResource,
// where it was a bare decoding error, and that a JSON answer of the wrong
// shape is a decoding error that does not; and that a call on a nil
// *Client is an error, not a panic.
func TestNotTheAPIAnswers(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		name, ctype, body string
		noResource        bool
	}{
		{"login page", "text/html", "<html>login</html>", true},
		{"empty body", "application/json", "", true},
		{"not JSON, said to be", "application/json", "not json", true},
		{"JSON of another shape", "application/json", `{"id": 5}`, false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			c, _ := newTestServer(t, func(w http.ResponseWriter, r *http.Request) {
				w.Header().Set("Content-Type", tt.ctype)
				io.WriteString(w, tt.body)
			})
			var out request
			err := c.Do(t.Context(), http.MethodGet, "/things/x", nil, nil, &out)
			if err == nil || errors.Is(err, ErrNoResource) != tt.noResource ||
				!tt.noResource && !strings.HasPrefix(err.Error(), "acctapi: decode GET /things/x response: ") {
				t.Errorf("Do = %v; want an error, wrapping ErrNoResource: %v", err, tt.noResource)
			}
		})
	}
	var nilClient *Client
	if err := nilClient.Do(t.Context(), http.MethodGet, "/things/x", nil, nil, nil); err == nil || !strings.Contains(err.Error(), "the *Client is nil") {
		t.Errorf("Do on a nil *Client = %v", err)
	}
}

// TestRedirectLoopStops checks that a same-origin redirect loop ends, as
// net/http's default does, after 10 requests: the redirect to an 11th is
// refused. A retrying client does not retry it, as the server would
// answer the same way again (a review's loop took 40 requests: 4 attempts
// of 10).
func TestRedirectLoopStops(t *testing.T) {
	t.Parallel()
	for _, retry := range []Option{WithoutRetry(), WithRetry(RetryPolicy{MaxAttempts: 4, BaseDelay: time.Nanosecond, MaxDelay: time.Nanosecond})} {
		var n atomic.Int32
		c, _ := newTestServer(t, func(w http.ResponseWriter, r *http.Request) {
			n.Add(1)
			http.Redirect(w, r, r.URL.Path, http.StatusTemporaryRedirect)
		}, retry)
		err := c.Do(t.Context(), http.MethodGet, "/things/1", nil, nil, nil)
		if err == nil || !strings.Contains(err.Error(), "stopped after 10 redirects") {
			t.Errorf("a redirect loop: %v; want it stopped after 10 redirects", err)
		}
		if got := n.Load(); got != 10 {
			t.Errorf("%d requests, want 10: one attempt", got)
		}
	}
}
