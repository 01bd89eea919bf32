package account_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"iter"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/acctapi/acctapi"
	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
)

// This file is the same, but for the package clause, in account and
// backends: request-type-agnostic test helpers that a shared internal test
// package could hold.

// validator is every request type.
type validator interface{ Validate() error }

// check is one Validate case: the field errors req must yield, as "field code".
type check struct {
	name string
	req  validator
	want []string
}

// testValidate runs each check.
func testValidate(t *testing.T, checks []check) {
	t.Helper()
	for _, tt := range checks {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			if diff := cmp.Diff(tt.want, fieldCodes(tt.req.Validate())); diff != "" {
				t.Errorf("field errors (-want +got):\n%s", diff)
			}
		})
	}
}

// annotated makes a request of one type with the given description and
// metadata, valid otherwise.
type annotated struct {
	name  string
	build func(desc, meta string) validator
}

// testAnnotations checks the description and metadata limits, at and just
// past each, on every type.
func testAnnotations(t *testing.T, types []annotated) {
	t.Helper()
	descTooLong := "description " + acctapi.CodeDescriptionTooLong
	metaTooLong := "metadata " + acctapi.CodeMetadataTooLong
	tests := []struct {
		name       string
		desc, meta string
		want       []string
	}{
		{"empty", "", "", nil},
		{"description 255 bytes", text(255), "", nil},
		{"description 256 bytes", text(256), "", []string{descTooLong}},
		{"metadata 4096 bytes", "", text(4096), nil},
		{"metadata 4097 bytes", "", text(4097), []string{metaTooLong}},
		{"both too long", text(256), text(4097), []string{descTooLong, metaTooLong}},
	}
	var checks []check
	for _, typ := range types {
		for _, tt := range tests {
			checks = append(checks, check{typ.name + "/" + tt.name, typ.build(tt.desc, tt.meta), tt.want})
		}
	}
	testValidate(t, checks)
}

// fuzzRequests decodes arbitrary JSON into one of the request types that
// requests make: Validate never panics, and a request that validates
// survives an encode and decode unchanged (an empty slice or map may come
// back nil) and still validates.
func fuzzRequests(f *testing.F, requests []func() validator, seeds ...string) {
	for i, seed := range seeds {
		f.Add(uint8(i), []byte(seed))
	}
	f.Fuzz(func(t *testing.T, kind uint8, data []byte) {
		newReq := requests[int(kind)%len(requests)]
		req := newReq()
		if json.Unmarshal(data, req) != nil || req.Validate() != nil {
			return
		}
		b, err := json.Marshal(req)
		if err != nil {
			t.Fatalf("encode %#v: %v", req, err)
		}
		again := newReq()
		if err := json.Unmarshal(b, again); err != nil {
			t.Fatalf("decode %s: %v", b, err)
		}
		if diff := cmp.Diff(req, again, cmpopts.EquateEmpty()); diff != "" {
			t.Errorf("encode and decode changed the request (-before +after):\n%s", diff)
		}
		if err := again.Validate(); err != nil {
			t.Errorf("re-decoded request no longer validates: %v", err)
		}
	})
}

// quote returns s as a JSON string.
func quote(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

// text returns exactly n bytes of mostly two-byte characters, so byte limits
// are seen to count bytes: text(256) is only 128 characters.
func text(n int) string { return strings.Repeat("é", n/2) + strings.Repeat("a", n%2) }

// ptr returns a pointer to v.
func ptr[T any](v T) *T { return &v }

// fieldCodes lists err's field errors as "field code".
func fieldCodes(err error) []string {
	var out []string
	for _, fe := range acctapi.FieldErrors(err) {
		out = append(out, fe.Field+" "+fe.Code)
	}
	return out
}

// jsonValue decodes b into a generic value, for comparing JSON documents.
func jsonValue(t *testing.T, b []byte) any {
	t.Helper()
	var v any
	if err := json.Unmarshal(b, &v); err != nil {
		t.Fatalf("decode %s: %v", b, err)
	}
	return v
}

// golden is a golden file and a new value of the type it holds.
type golden struct {
	file string
	v    any
}

// testGolden round-trips each golden file.
func testGolden(t *testing.T, files []golden) {
	t.Helper()
	for _, g := range files {
		t.Run(g.file, func(t *testing.T) {
			t.Parallel()
			roundTrip(t, g.file, g.v)
		})
	}
}

// roundTrip decodes testdata/file into v, knowing every member, and checks
// that v encodes back to the same document and that a member added by a
// later API version is ignored.
func roundTrip(t *testing.T, file string, v any) {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join("testdata", file))
	if err != nil {
		t.Fatal(err)
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		t.Fatalf("decode %s: %v", file, err)
	}
	out, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(jsonValue(t, raw), jsonValue(t, out)); diff != "" {
		t.Errorf("%s: re-encoded document differs (-golden +got):\n%s", file, diff)
	}
	doc := jsonValue(t, raw).(map[string]any)
	doc["added_later"] = map[string]any{"x": []any{1.0}}
	future, _ := json.Marshal(doc)
	if err := json.Unmarshal(future, v); err != nil {
		t.Errorf("%s with an unknown member: %v", file, err)
	}
}

// call is one client operation and the request it must send.
type call struct {
	name   string
	do     func(context.Context, *acctapi.Client) error
	method string
	path   string // escaped
	query  string
	body   string // JSON; "" for none
}

// drain runs a list to its end and returns its first error.
func drain[T any](seq iter.Seq2[T, error]) error {
	for _, err := range seq {
		if err != nil {
			return err
		}
	}
	return nil
}

// resource is the operations of every resource client.
type resource[T, L, C, U, O any] interface {
	Create(context.Context, C) (*T, error)
	Get(context.Context, string) (*T, error)
	Update(context.Context, U) (*T, error)
	Delete(context.Context, string) error
	List(context.Context, O) iter.Seq2[T, error]
	Page(context.Context, O) (*L, error)
}

// id needs escaping: it must stay one path segment; escapedID is how it
// appears in a path.
const id, escapedID = "a/b c", "a%2Fb%20c"

var (
	filter = &acctapi.FilterOptions{Limit: 5, BeforeID: "x_1", Filter: `obj.id == "x"`}
	paging = &acctapi.ListOptions{Limit: 5, BeforeID: "x_1"}
)

const (
	filterQuery = `limit=5&before_id=x_1&filter=obj.id+%3D%3D+%22x%22`
	pagingQuery = `limit=5&before_id=x_1`
)

// crudCalls returns a call for each operation of the client newS makes,
// whose collection is at path: Create sends create (as createBody), Get and
// Delete the id [id], Update sends update (whose ID must be [id], as
// updateBody), List and Page send opts (as query).
func crudCalls[S resource[T, L, C, U, O], T, L, C, U, O any](newS func(*acctapi.Client) S, path string,
	create C, createBody string, update U, updateBody string, opts O, query string) []call {
	item := path + "/" + escapedID
	return []call{
		{"create", func(ctx context.Context, c *acctapi.Client) error {
			_, err := newS(c).Create(ctx, create)
			return err
		}, http.MethodPost, path, "", createBody},
		{"get", func(ctx context.Context, c *acctapi.Client) error {
			_, err := newS(c).Get(ctx, id)
			return err
		}, http.MethodGet, item, "", ""},
		{"update", func(ctx context.Context, c *acctapi.Client) error {
			_, err := newS(c).Update(ctx, update)
			return err
		}, http.MethodPatch, item, "", updateBody},
		{"delete", func(ctx context.Context, c *acctapi.Client) error {
			return newS(c).Delete(ctx, id)
		}, http.MethodDelete, item, "", ""},
		{"list", func(ctx context.Context, c *acctapi.Client) error {
			return drain(newS(c).List(ctx, opts))
		}, http.MethodGet, path, query, ""},
		{"page", func(ctx context.Context, c *acctapi.Client) error {
			_, err := newS(c).Page(ctx, opts)
			return err
		}, http.MethodGet, path, query, ""},
	}
}

// testCalls runs each call against a server that records the request and
// answers as the API does (201 to POST, 204 to DELETE, 200 with {} else).
func testCalls(t *testing.T, calls []call) {
	t.Helper()
	for _, tc := range calls {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			reqs := make(chan call, 1)
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				body, _ := io.ReadAll(r.Body)
				reqs <- call{method: r.Method, path: r.URL.EscapedPath(), query: r.URL.RawQuery, body: string(body)}
				switch r.Method {
				case http.MethodDelete:
					w.WriteHeader(http.StatusNoContent)
					return
				case http.MethodPost:
					w.WriteHeader(http.StatusCreated)
				}
				io.WriteString(w, "{}")
			}))
			t.Cleanup(srv.Close)
			c, err := acctapi.NewClient("test-key", acctapi.WithBaseURL(srv.URL), acctapi.WithoutRetry())
			if err != nil {
				t.Fatal(err)
			}
			if err := tc.do(t.Context(), c); err != nil {
				t.Fatal(err)
			}
			got := <-reqs
			if got.method != tc.method || got.path != tc.path {
				t.Errorf("request = %s %s, want %s %s", got.method, got.path, tc.method, tc.path)
			}
			gotQ, _ := url.ParseQuery(got.query)
			wantQ, _ := url.ParseQuery(tc.query)
			if diff := cmp.Diff(wantQ, gotQ); diff != "" {
				t.Errorf("query (-want +got):\n%s", diff)
			}
			switch {
			case tc.body == "" && got.body != "":
				t.Errorf("body = %s, want none", got.body)
			case tc.body != "":
				if diff := cmp.Diff(jsonValue(t, []byte(tc.body)), jsonValue(t, []byte(got.body))); diff != "" {
					t.Errorf("body (-want +got):\n%s", diff)
				}
			}
		})
	}
}

// exampleClient returns a client of a test server that answers every
// request with body (status 201 to a POST), and a func that stops the server.
func exampleClient(body string) (*acctapi.Client, func()) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		if r.Method == http.MethodPost {
			w.WriteHeader(http.StatusCreated)
		}
		io.WriteString(w, body)
	}))
	c, err := acctapi.NewClient("example-key", acctapi.WithBaseURL(srv.URL))
	if err != nil {
		panic(err)
	}
	return c, srv.Close
}
