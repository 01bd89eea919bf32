package rest_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/acctapi/acctapi"
	"github.com/acctapi/acctapi/internal/apitest"
	"github.com/acctapi/acctapi/internal/rest"
)

const testKey = "test-key"

// thing and thingList are a minimal resource and its list response.
type thing struct {
	ID string `json:"id"`
}

type thingList struct {
	Things      []thing `json:"things"`
	URI         string  `json:"uri"`
	NextPageURI *string `json:"next_page_uri"`
}

func (l *thingList) PageItems() []thing { return l.Things }

func (l *thingList) NextPage() string {
	if l.NextPageURI == nil {
		return ""
	}
	return *l.NextPageURI
}

// pager serves pages of things: pages[requestURI] is the list served for
// that exact request URI; anything else is a 404. It records the request
// URIs it saw, in order.
type pager struct {
	mu    sync.Mutex
	pages map[string]func() any
	seen  []string
}

func (p *pager) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	p.mu.Lock()
	p.seen = append(p.seen, r.RequestURI)
	page, ok := p.pages[r.RequestURI]
	p.mu.Unlock()
	w.Header().Set("Content-Type", "application/json")
	if !ok {
		w.WriteHeader(http.StatusNotFound)
		json.NewEncoder(w).Encode(map[string]any{"status_code": 404, "msg": "no such page " + r.RequestURI, "error_code": acctapi.CodeNoRoute})
		return
	}
	switch v := page().(type) {
	case int:
		w.WriteHeader(v)
		json.NewEncoder(w).Encode(map[string]any{"status_code": v, "msg": "broken", "error_code": acctapi.CodeInternal})
	default:
		json.NewEncoder(w).Encode(v)
	}
}

func (p *pager) requests() []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]string(nil), p.seen...)
}

// clientOf returns a client of srv with retries off.
func clientOf(t *testing.T, srv *httptest.Server) *acctapi.Client {
	t.Helper()
	c, err := acctapi.NewClient(testKey, acctapi.WithBaseURL(srv.URL), acctapi.WithHTTPClient(srv.Client()), acctapi.WithoutRetry())
	if err != nil {
		t.Fatalf("NewClient: %v", err)
	}
	return c
}

func newPager(t *testing.T) (*pager, *httptest.Server) {
	t.Helper()
	p := &pager{pages: map[string]func() any{}}
	srv := httptest.NewServer(p)
	t.Cleanup(srv.Close)
	return p, srv
}

func page(next *string, ids ...string) func() any {
	return func() any {
		l := thingList{Things: []thing{}, NextPageURI: next}
		for _, id := range ids {
			l.Things = append(l.Things, thing{ID: id})
		}
		return &l
	}
}

// threePages sets up a list of five things over three pages: the first
// answered by pager a, the second by pager b under another path of the same
// server (an absolute next_page_uri with an odd query that must be used
// verbatim), the third by a again.
func threePages(t *testing.T) (c *acctapi.Client, a, b *pager) {
	t.Helper()
	a = &pager{pages: map[string]func() any{}}
	b = &pager{pages: map[string]func() any{}}
	mux := http.NewServeMux()
	mux.Handle("/", a)
	mux.Handle("/elsewhere/", b)
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	next1 := srv.URL + "/elsewhere/things?before_id=t4&limit=2&token=a%2Fb"
	next2 := srv.URL + "/things?limit=2&before_id=t2"
	a.pages["/things?limit=2"] = page(&next1, "t5", "t4")
	b.pages["/elsewhere/things?before_id=t4&limit=2&token=a%2Fb"] = page(&next2, "t3", "t2")
	a.pages["/things?limit=2&before_id=t2"] = page(nil, "t1")
	return clientOf(t, srv), a, b
}

// TestAllKeepsTheKeyOnTheBaseOrigin checks that a next_page_uri on another
// scheme or host is requested with its path and query on the base URL's
// origin: the API key is never sent anywhere else, and a server that names
// itself by a public URL still pages.
func TestAllKeepsTheKeyOnTheBaseOrigin(t *testing.T) {
	t.Parallel()
	a, srvA := newPager(t)
	b, srvB := newPager(t)
	next := srvB.URL + "/things?before_id=t4&limit=2"
	a.pages["/things?limit=2"] = page(&next, "t5", "t4")
	a.pages["/things?before_id=t4&limit=2"] = page(nil, "t3")
	b.pages["/things?before_id=t4&limit=2"] = page(nil, "from-b")
	c, err := acctapi.NewClient(testKey, acctapi.WithBaseURL(srvA.URL), acctapi.WithHTTPClient(srvA.Client()), acctapi.WithoutRetry())
	if err != nil {
		t.Fatal(err)
	}
	got := collect(rest.All[thing, thingList](t.Context(), c, rest.Path("things"), &acctapi.ListOptions{Limit: 2}), 0)
	if diff := cmp.Diff([]string{"t5", "t4", "t3"}, got); diff != "" {
		t.Errorf("items (-want +got):\n%s", diff)
	}
	if n := len(b.requests()); n != 0 {
		t.Errorf("%d requests reached the other origin", n)
	}
}

// collect drains seq, recording each item's id or error message, and
// stopping after stopAfter items when it is positive.
func collect(seq func(func(thing, error) bool), stopAfter int) []string {
	var got []string
	for item, err := range seq {
		if err != nil {
			got = append(got, "error: "+err.Error())
			continue
		}
		got = append(got, item.ID)
		if stopAfter > 0 && len(got) == stopAfter {
			break
		}
	}
	return got
}

func TestAllFollowsNextPageURIVerbatim(t *testing.T) {
	t.Parallel()
	c, a, b := threePages(t)
	got := collect(rest.All[thing, thingList](t.Context(), c, rest.Path("things"), &acctapi.ListOptions{Limit: 2}), 0)
	if diff := cmp.Diff([]string{"t5", "t4", "t3", "t2", "t1"}, got); diff != "" {
		t.Errorf("items (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"/things?limit=2", "/things?limit=2&before_id=t2"}, a.requests()); diff != "" {
		t.Errorf("requests to the base server (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"/elsewhere/things?before_id=t4&limit=2&token=a%2Fb"}, b.requests()); diff != "" {
		t.Errorf("requests to the other path (-want +got):\n%s", diff)
	}
}

func TestAllStopsOnBreak(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name      string
		stopAfter int
		want      []string
		wantA     int
		wantB     int
	}{
		{name: "after the first item", stopAfter: 1, want: []string{"t5"}, wantA: 1, wantB: 0},
		{name: "at the end of the first page", stopAfter: 2, want: []string{"t5", "t4"}, wantA: 1, wantB: 0},
		{name: "inside the second page", stopAfter: 3, want: []string{"t5", "t4", "t3"}, wantA: 1, wantB: 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			c, a, b := threePages(t)
			got := collect(rest.All[thing, thingList](t.Context(), c, rest.Path("things"), &acctapi.ListOptions{Limit: 2}), tt.stopAfter)
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("items (-want +got):\n%s", diff)
			}
			if n, m := len(a.requests()), len(b.requests()); n != tt.wantA || m != tt.wantB {
				t.Errorf("requests = %d and %d, want %d and %d", n, m, tt.wantA, tt.wantB)
			}
		})
	}
}

func TestAllErrorMidway(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name   string
		status int
		want   []string
	}{
		{name: "server error", status: http.StatusInternalServerError,
			want: []string{"t3", "t2", "error: acctapi: HTTP 500: broken [ERR_ACCTAPI_INTERNAL]"}},
		{name: "not found", status: http.StatusNotFound,
			want: []string{"t3", "t2", "error: acctapi: HTTP 404: broken [ERR_ACCTAPI_INTERNAL]"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			p, srv := newPager(t)
			next := srv.URL + "/things?before_id=t2"
			p.pages["/things"] = page(&next, "t3", "t2")
			p.pages["/things?before_id=t2"] = func() any { return tt.status }
			p.pages["/things?before_id=t1"] = page(nil, "t0") // never reached
			c := clientOf(t, srv)
			got := collect(rest.All[thing, thingList](t.Context(), c, rest.Path("things"), nil), 0)
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("sequence (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff([]string{"/things", "/things?before_id=t2"}, p.requests()); diff != "" {
				t.Errorf("requests (-want +got):\n%s", diff)
			}
		})
	}
}

func TestAllErrorIsYieldedOnce(t *testing.T) {
	t.Parallel()
	p, srv := newPager(t)
	p.pages["/things"] = func() any { return http.StatusBadGateway }
	c := clientOf(t, srv)
	var errs []error
	for item, err := range rest.All[thing, thingList](t.Context(), c, rest.Path("things"), nil) {
		if err == nil {
			t.Errorf("got item %+v, want only an error", item)
			continue
		}
		errs = append(errs, err)
	}
	if len(errs) != 1 {
		t.Fatalf("got %d errors, want 1", len(errs))
	}
	var apiErr *acctapi.Error
	if !errors.As(errs[0], &apiErr) || apiErr.StatusCode != http.StatusBadGateway {
		t.Errorf("error = %v, want an *acctapi.Error with status 502", errs[0])
	}
}

func TestAllStops(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name  string
		setup func(p *pager, base string)
		want  []string
		reqs  []string
	}{
		{
			name:  "single page with null next_page_uri",
			setup: func(p *pager, base string) { p.pages["/things"] = page(nil, "t1", "t0") },
			want:  []string{"t1", "t0"},
			reqs:  []string{"/things"},
		},
		{
			name:  "empty list",
			setup: func(p *pager, base string) { p.pages["/things"] = page(nil) },
			reqs:  []string{"/things"},
		},
		{
			// The contract's next_page_uri means a further item exists:
			// the items past an empty page are not lost.
			name: "empty pages with a next_page_uri",
			setup: func(p *pager, base string) {
				next, next2 := base+"/things?before_id=y", base+"/things?before_id=x"
				p.pages["/things"] = page(&next)
				p.pages["/things?before_id=y"] = page(&next2)
				p.pages["/things?before_id=x"] = page(nil, "t1")
			},
			want: []string{"t1"},
			reqs: []string{"/things", "/things?before_id=y", "/things?before_id=x"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			p, srv := newPager(t)
			tt.setup(p, srv.URL)
			c := clientOf(t, srv)
			got := collect(rest.All[thing, thingList](t.Context(), c, rest.Path("things"), nil), 0)
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("items (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tt.reqs, p.requests()); diff != "" {
				t.Errorf("requests (-want +got):\n%s", diff)
			}
		})
	}
}

func TestAllBadOptions(t *testing.T) {
	t.Parallel()
	p, srv := newPager(t)
	c := clientOf(t, srv)
	var errs []error
	for _, err := range rest.All[thing, thingList](t.Context(), c, rest.Path("things"), &acctapi.FilterOptions{Limit: 101}) {
		errs = append(errs, err)
	}
	if len(errs) != 1 || !acctapi.HasCode(errs[0], acctapi.CodeBadLimit) {
		t.Errorf("rest.All with limit 101 yielded %v, want one error with %s", errs, acctapi.CodeBadLimit)
	}
	if n := len(p.requests()); n != 0 {
		t.Errorf("server saw %d requests, want 0", n)
	}
}

func TestGetPage(t *testing.T) {
	t.Parallel()
	p, srv := newPager(t)
	next := srv.URL + "/things?before_id=t1&filter=x&limit=1"
	p.pages["/v2/things?before_id=t9&filter=obj.id+%21%3D+%22t5%22&limit=1"] = page(&next, "t8")
	c, err := acctapi.NewClient(testKey, acctapi.WithBaseURL(srv.URL+"/v2"), acctapi.WithHTTPClient(srv.Client()), acctapi.WithoutRetry())
	if err != nil {
		t.Fatalf("acctapi.NewClient: %v", err)
	}
	got, err := rest.GetPage[thingList](t.Context(), c, rest.Path("things"),
		&acctapi.FilterOptions{Limit: 1, BeforeID: "t9", Filter: `obj.id != "t5"`})
	if err != nil {
		t.Fatalf("rest.GetPage: %v", err)
	}
	want := &thingList{Things: []thing{{ID: "t8"}}, NextPageURI: &next}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("page (-want +got):\n%s", diff)
	}

	if _, err := rest.GetPage[thingList](t.Context(), c, rest.Path("things"), &acctapi.ListOptions{Limit: -1}); !acctapi.HasCode(err, acctapi.CodeBadLimit) {
		t.Errorf("rest.GetPage with limit -1 = %v, want %s", err, acctapi.CodeBadLimit)
	}
	if _, err := rest.GetPage[thingList](t.Context(), c, rest.Path("missing"), nil); !acctapi.HasCode(err, acctapi.CodeNoRoute) {
		t.Errorf("rest.GetPage of a missing list = %v, want %s", err, acctapi.CodeNoRoute)
	}
	if n := len(p.requests()); n != 2 {
		t.Errorf("server saw %d requests, want 2", n)
	}
	// acctapi.WithoutValidation sends the limit as it is, for the server to refuse.
	raw, err := acctapi.NewClient(testKey, acctapi.WithBaseURL(srv.URL+"/v2"), acctapi.WithHTTPClient(srv.Client()), acctapi.WithoutRetry(), acctapi.WithoutValidation())
	if err != nil {
		t.Fatal(err)
	}
	if _, err := rest.GetPage[thingList](t.Context(), raw, rest.Path("things"), &acctapi.ListOptions{Limit: 101}); !acctapi.HasCode(err, acctapi.CodeNoRoute) {
		t.Errorf("rest.GetPage with limit 101 without validation = %v, want the server's answer", err)
	}
	if reqs := p.requests(); len(reqs) != 3 || !strings.Contains(reqs[2], "limit=101") {
		t.Errorf("requests %q, want a third with limit=101", reqs)
	}
}

// TestAllCursorMustGoDown: a next_page_uri whose before_id is not below
// the last one asked for ends the listing with ErrPageLoop (a review's
// server answered each page with one item and a cursor one higher, and
// the listing went on without end).
func TestAllCursorMustGoDown(t *testing.T) {
	t.Parallel()
	// Also with a query that does not all parse (a review's ";"), which
	// must not hide the cursor.
	for _, junk := range []string{"", "&x=;"} {
		p, srv := newPager(t)
		for i := range 5 {
			key := "/things"
			if i > 0 {
				key = fmt.Sprintf("/things?before_id=t_%d%s", i, junk)
			}
			next := fmt.Sprintf("%s/things?before_id=t_%d%s", srv.URL, i+1, junk)
			p.pages[key] = page(&next, fmt.Sprintf("t_%d", i))
		}
		got := collect(rest.All[thing, thingList](t.Context(), clientOf(t, srv), rest.Path("things"), nil), 0)
		// The first page names t_1, the second t_2: higher, so it stops there.
		if len(got) != 3 || got[0] != "t_0" || got[1] != "t_1" || !strings.Contains(got[2], "not below the last cursor") {
			t.Errorf("junk %q: items %q; want t_0, t_1 and the error", junk, got)
		}
		if n := len(p.requests()); n != 2 {
			t.Errorf("junk %q: %d requests, want 2", junk, n)
		}
	}
	// Ids of other lengths are not compared: "10" then "9" go down.
	p, srv := newPager(t)
	n10, n9 := srv.URL+"/things?before_id=x_10", srv.URL+"/things?before_id=x_9"
	p.pages["/things"] = page(&n10, "x_11")
	p.pages["/things?before_id=x_10"] = page(&n9, "x_10")
	p.pages["/things?before_id=x_9"] = page(nil, "x_9")
	if got := collect(rest.All[thing, thingList](t.Context(), clientOf(t, srv), rest.Path("things"), nil), 0); len(got) != 3 || got[2] != "x_9" {
		t.Errorf("ids of two lengths: %q; want x_11, x_10, x_9", got)
	}
}

// TestGetPageTooLong: a page of more items than its limit is refused
// before it is decoded (a review's server answered 349,000 items of "{}",
// 1 MiB, which an operator's bound endpoints decoded into 140 MiB held).
func TestGetPageTooLong(t *testing.T) {
	items := func(n int) string {
		return `{"things":[` + strings.TrimSuffix(strings.Repeat(`{"id":"t"},`, n), ",") + `],"uri":"u","next_page_uri":null}`
	}
	for _, tt := range []struct {
		name  string
		body  string
		limit int
		ok    bool
	}{
		{"100 items", items(100), 0, true},
		{"101 items", items(101), 0, false},
		{"5 items at limit 5", items(5), 5, true},
		{"6 items at limit 5", items(6), 5, false},
		{"an array member beside the items", `{"things":[],"extra":[` + strings.Repeat(`1,`, 100) + `1]}`, 0, false},
		{"349,000 empty items", `{"things":[{}` + strings.Repeat(`,{}`, 349_000) + `]}`, 0, false},
		{"nested arrays within an item are the item's", `{"things":[{"id":"t","tags":[` + strings.Repeat(`1,`, 200) + `1]}]}`, 0, true},
	} {
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "application/json")
			_, _ = io.WriteString(w, tt.body)
		}))
		t.Cleanup(srv.Close)
		c, err := acctapi.NewClient(testKey, acctapi.WithBaseURL(srv.URL), acctapi.WithoutRetry())
		if err != nil {
			t.Fatal(err)
		}
		var page *thingList
		alloc := apitest.Allocated(func() {
			page, err = rest.GetPage[thingList](t.Context(), c, "/things", &acctapi.ListOptions{Limit: tt.limit})
		})
		switch {
		case tt.ok && err != nil:
			t.Errorf("%s: %v", tt.name, err)
		case !tt.ok && (!errors.Is(err, acctapi.ErrPageTooLong) || page != nil):
			t.Errorf("%s: %v, want ErrPageTooLong", tt.name, err)
		case !tt.ok && alloc.Bytes > 8*uint64(len(tt.body))+1<<20:
			// The body read and its tokens scanned: a few times its size,
			// not the hundred of a decoded page.
			t.Errorf("%s: %d bytes allocated for a body of %d", tt.name, alloc.Bytes, len(tt.body))
		}
	}
}

// TestLimitOfLaterPages: a listing's later pages are held to the limit
// their next_page_uri asks for (a review found only the first page
// checked, against 100 after it), and a limit over MaxLimit sent without
// validation is the limit.
func TestLimitOfLaterPages(t *testing.T) {
	t.Parallel()
	p, srv := newPager(t)
	first, second := srv.URL+"/things?before_id=t9&limit=2", srv.URL+"/things?before_id=t4&limit=2"
	p.pages["/things?limit=2"] = page(&first, "t10", "t9")
	p.pages["/things?before_id=t9&limit=2"] = page(&second, "t8", "t7", "t6", "t5", "t4")
	got := collect(rest.All[thing, thingList](t.Context(), clientOf(t, srv), rest.Path("things"), &acctapi.ListOptions{Limit: 2}), 0)
	if len(got) != 3 || got[1] != "t9" || !strings.Contains(got[2], "things holds more than 2") {
		t.Errorf("items %q; want t10, t9 and ErrPageTooLong", got)
	}

	items := make([]string, 101)
	for i := range items {
		items[i] = fmt.Sprintf("t%03d", 200-i)
	}
	p.pages["/things?limit=101"] = page(nil, items...)
	raw, err := acctapi.NewClient(testKey, acctapi.WithBaseURL(srv.URL), acctapi.WithHTTPClient(srv.Client()), acctapi.WithoutRetry(), acctapi.WithoutValidation())
	if err != nil {
		t.Fatal(err)
	}
	if l, err := rest.GetPage[thingList](t.Context(), raw, rest.Path("things"), &acctapi.ListOptions{Limit: 101}); err != nil || len(l.Things) != 101 {
		t.Errorf("a page of 101 at limit 101 without validation: %v", err)
	}
}

// BenchmarkGetPage reads a page of 100 things of about 1 KB each from a
// local server: the read, the checks and the decoding of a page.
func BenchmarkGetPage(b *testing.B) {
	body := []byte(`{"things":[` + strings.TrimSuffix(strings.Repeat(`{"id":"`+strings.Repeat("x", 1000)+`"},`, 100), ",") + `],"uri":"u","next_page_uri":null}`)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.Write(body)
	}))
	b.Cleanup(srv.Close)
	c, err := acctapi.NewClient(testKey, acctapi.WithBaseURL(srv.URL), acctapi.WithHTTPClient(srv.Client()), acctapi.WithoutRetry())
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	b.SetBytes(int64(len(body)))
	for b.Loop() {
		l, err := rest.GetPage[thingList](context.Background(), c, rest.Path("things"), nil)
		if err != nil || len(l.Things) != 100 {
			b.Fatal(err)
		}
	}
}
