package apitest

import (
	"context"
	"io"
	"iter"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"

	"github.com/acctapi/acctapi"
	"github.com/google/go-cmp/cmp"
)

// Request is an HTTP request that a Recorder saw, or that a Call must
// send.
type Request = struct {
	Method string // GET, POST, PATCH or DELETE
	Path   string // escaped
	Query  string // raw, as url.Values encodes it: keys sorted
	Body   string // JSON text; "" for none
}

// Recorder is a test server that records every request it is sent and
// answers as the API does: 204 and no body to DELETE, else its reply, with
// status 201 to POST and 200 to the rest.
type Recorder struct {
	mu   sync.Mutex
	reqs []Request
}

// NewRecorder starts a Recorder that replies reply, closed when the test
// ends, and returns a client for it that does not retry.
func NewRecorder(t testing.TB, reply string) (*acctapi.Client, *Recorder) {
	t.Helper()
	rec := new(Recorder)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		rec.mu.Lock()
		rec.reqs = append(rec.reqs, Request{r.Method, r.URL.EscapedPath(), r.URL.RawQuery, string(body)})
		rec.mu.Unlock()
		switch r.Method {
		case http.MethodDelete:
			w.WriteHeader(http.StatusNoContent)
			return
		case http.MethodPost:
			w.WriteHeader(http.StatusCreated)
		}
		_, _ = io.WriteString(w, reply)
	}))
	t.Cleanup(srv.Close)
	// The server's own client: Close of another test's server closes the
	// idle connections of http.DefaultTransport, which parallel tests share.
	c, err := acctapi.NewClient("test-key", acctapi.WithBaseURL(srv.URL), acctapi.WithHTTPClient(srv.Client()), acctapi.WithoutRetry())
	if err != nil {
		t.Fatal(err)
	}
	return c, rec
}

// Requests returns the requests r has seen, in order.
func (r *Recorder) Requests() []Request {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]Request(nil), r.reqs...)
}

// Call is one client operation and the request it must send.
type Call = struct {
	// Name names the subtest.
	Name string
	// Do performs the operation with the client given.
	Do func(context.Context, *acctapi.Client) error
	// Want is the one request Do must send.
	Want Request
}

// RunCalls runs each call in a parallel subtest, against a Recorder that
// replies reply, and checks that it succeeds having sent exactly its
// request: method, path and query to the letter, the body as a JSON
// document.
func RunCalls(t *testing.T, reply string, calls []Call) {
	t.Helper()
	for _, tc := range calls {
		t.Run(tc.Name, func(t *testing.T) {
			t.Parallel()
			c, rec := NewRecorder(t, reply)
			if err := tc.Do(t.Context(), c); err != nil {
				t.Fatal(err)
			}
			reqs := rec.Requests()
			if len(reqs) != 1 {
				t.Fatalf("sent %d requests %+v, want 1", len(reqs), reqs)
			}
			got, want := reqs[0], tc.Want
			if got.Method != want.Method || got.Path != want.Path {
				t.Errorf("request = %s %s, want %s %s", got.Method, got.Path, want.Method, want.Path)
			}
			if got.Query != want.Query {
				t.Errorf("query = %q, want %q", got.Query, want.Query)
			}
			switch {
			case want.Body == "" && got.Body != "":
				t.Errorf("body = %s, want none", got.Body)
			case want.Body != "":
				if diff := cmp.Diff(JSONValue(t, []byte(want.Body)), JSONValue(t, []byte(got.Body))); diff != "" {
					t.Errorf("body (-want +got):\n%s", diff)
				}
			}
		})
	}
}

// Drain runs a list to its end and returns its first error.
func Drain[T any](seq iter.Seq2[T, error]) error {
	for _, err := range seq {
		if err != nil {
			return err
		}
	}
	return nil
}

// Resource is the operations of every resource client: T is the resource,
// L a page of them, C and U the create and update requests, O the list
// options.
type Resource[T, L, C, U, O any] interface {
	// Create creates a resource from the request.
	Create(context.Context, C) (*T, error)
	// Get returns the resource with the given id.
	Get(context.Context, string) (*T, error)
	// Update changes the members of a resource that the request sets.
	Update(context.Context, U) (*T, error)
	// Delete deletes the resource with the given id.
	Delete(context.Context, string) error
	// List returns every resource, newest first, following pages.
	List(context.Context, O) iter.Seq2[T, error]
	// Page returns one page of resources.
	Page(context.Context, O) (*L, error)
}

// ID needs escaping: it must stay one path segment. EscapedID is how it
// appears in a path.
const ID, EscapedID = "a/b c", "a%2Fb%20c"

// Filter returns new list options with every member set, which send
// FilterQuery. Each call makes new options, so no test shares them.
func Filter() *acctapi.FilterOptions {
	return &acctapi.FilterOptions{Limit: 5, BeforeID: "x_1", Filter: `obj.id == "x"`}
}

// Paging returns new list options with every member set, which send
// PagingQuery.
func Paging() *acctapi.ListOptions { return &acctapi.ListOptions{Limit: 5, BeforeID: "x_1"} }

// FilterQuery and PagingQuery are the queries that Filter and Paging make.
const (
	FilterQuery = `before_id=x_1&filter=obj.id+%3D%3D+%22x%22&limit=5`
	PagingQuery = `before_id=x_1&limit=5`
)

// CRUDCalls returns a Call for each operation of the client newS makes,
// whose collection is at path (from internal/resources, the one
// description of every resource): Create sends create (as createBody), Get and
// Delete the id ID, Update sends update (whose ID must be ID, as
// updateBody), List and Page send opts (as query).
func CRUDCalls[S Resource[T, L, C, U, O], T, L, C, U, O any](newS func(*acctapi.Client) S, path string,
	create C, createBody string, update U, updateBody string, opts O, query string) []Call {
	item := path + "/" + EscapedID
	return []Call{
		{"create", func(ctx context.Context, c *acctapi.Client) error {
			_, err := newS(c).Create(ctx, create)
			return err
		}, Request{http.MethodPost, path, "", createBody}},
		{"get", func(ctx context.Context, c *acctapi.Client) error {
			_, err := newS(c).Get(ctx, ID)
			return err
		}, Request{http.MethodGet, item, "", ""}},
		{"update", func(ctx context.Context, c *acctapi.Client) error {
			_, err := newS(c).Update(ctx, update)
			return err
		}, Request{http.MethodPatch, item, "", updateBody}},
		{"delete", func(ctx context.Context, c *acctapi.Client) error {
			return newS(c).Delete(ctx, ID)
		}, Request{http.MethodDelete, item, "", ""}},
		{"list", func(ctx context.Context, c *acctapi.Client) error {
			return Drain(newS(c).List(ctx, opts))
		}, Request{http.MethodGet, path, query, ""}},
		{"page", func(ctx context.Context, c *acctapi.Client) error {
			_, err := newS(c).Page(ctx, opts)
			return err
		}, Request{http.MethodGet, path, query, ""}},
	}
}

// ExampleClient returns a client of a test server that answers every
// request with body (status 201 to a POST), except a DELETE, answered as
// the API does with 204 and no body, and a func that stops the server. It
// is for Examples, which have no *testing.T.
func ExampleClient(body string) (*acctapi.Client, func()) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodDelete {
			w.WriteHeader(http.StatusNoContent)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		if r.Method == http.MethodPost {
			w.WriteHeader(http.StatusCreated)
		}
		_, _ = io.WriteString(w, body)
	}))
	c, err := acctapi.NewClient("example-key", acctapi.WithBaseURL(srv.URL))
	if err != nil {
		srv.Close()
		panic(err)
	}
	return c, srv.Close
}
