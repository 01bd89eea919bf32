// Package conformance is a test suite that holds any server of the Account
// Management API to the contract: authentication and versioning errors,
// routing, body checks, every resource's CRUD, uniqueness, referential
// integrity, pagination and filters, as specified by the API's specification
// and the project's contract, the decisions where the specification is
// silent. Which resources it covers comes from internal/resources, the one
// description of the API's resources (TestCoverage).
//
// The same scenarios run against the in-process fake (package fake), the
// standalone program cmd/acctfake over TCP, and any other implementation:
//
//	func TestConformance(t *testing.T) {
//		conformance.Run(t, conformance.Target{BaseURL: url, APIKey: key})
//	}
//
// The suite drives the server through the typed clients (packages account,
// backends, events and k8sop) and through raw HTTP where a client would
// refuse to send the request. It does not assume an empty account: every
// resource it creates carries a name or description with a prefix unique to
// the run, lists are filtered or searched for those resources, and
// everything it creates is deleted when its scenario ends.
package conformance

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/acctapi/acctapi"
	"github.com/acctapi/acctapi/internal/trunc"
)

// Target is the server the suite runs against. The zero value is not
// usable: BaseURL and APIKey are required.
type Target struct {
	// BaseURL is the API's base URL, such as "http://127.0.0.1:8080".
	BaseURL string
	// APIKey is a token of an API key of the account the suite may use.
	// The suite creates and deletes resources in that account, but never
	// touches resources it did not create.
	APIKey string
	// HTTPClient sends the requests; nil means [http.DefaultClient].
	HTTPClient *http.Client
}

// suite is one run of the scenarios against a target.
type suite struct {
	target Target
	hc     *http.Client
	client *acctapi.Client
	prefix string // unique to the run: "conformance-<hex>-"
}

// Run runs every scenario against target, each as a subtest of t. It
// creates resources in the target's account and deletes them before it
// returns.
func Run(t *testing.T, target Target) {
	t.Helper()
	if target.BaseURL == "" || target.APIKey == "" {
		t.Fatal("conformance: Target needs a BaseURL and an APIKey")
	}
	s := &suite{target: target, hc: target.HTTPClient}
	if s.hc == nil {
		s.hc = http.DefaultClient
	}
	s.target.BaseURL = strings.TrimSuffix(target.BaseURL, "/")
	c, err := s.newClient(target.APIKey)
	if err != nil {
		t.Fatalf("conformance: %v", err)
	}
	s.client = c
	var b [6]byte
	_, _ = rand.Read(b[:])
	s.prefix = "conformance-" + hex.EncodeToString(b[:]) + "-"

	for _, sc := range []struct {
		name string
		fn   func(t *testing.T)
	}{
		{"Authentication", s.testAuthentication},
		{"Version", s.testVersion},
		{"Routing", s.testRouting},
		{"Bodies", s.testBodies},
		{"Queries", s.testQueries},
		{"Collections", s.testCollections},
		{"ServiceUsers", s.testServiceUsers},
		{"BotUserAlias", s.testBotUsers},
		{"APIKeys", s.testAPIKeys},
		{"CertificateAuthorities", s.testCertificateAuthorities},
		{"Pagination", s.testPagination},
		{"Filters", s.testFilters},
		{"Backends", s.testBackends},
		{"EventDestinations", s.testDestinations},
		{"EventSubscriptions", s.testSubscriptions},
		{"KubernetesOperators", s.testOperators},
	} {
		t.Run(sc.name, sc.fn)
	}
}

// newClient returns a typed-client transport for token, with retries off
// so that the suite sees the server's answers as they are.
func (s *suite) newClient(token string, opts ...acctapi.Option) (*acctapi.Client, error) {
	base := []acctapi.Option{acctapi.WithBaseURL(s.target.BaseURL), acctapi.WithHTTPClient(s.hc), acctapi.WithoutRetry()}
	return acctapi.NewClient(token, append(base, opts...)...)
}

// rawClient is newClient that skips client-side validation, for sending
// invalid requests on purpose.
func (s *suite) rawClient(t *testing.T) *acctapi.Client {
	t.Helper()
	c, err := s.newClient(s.target.APIKey, acctapi.WithoutValidation())
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// name returns a name unique to the run.
func (s *suite) name(parts ...string) string { return s.prefix + strings.Join(parts, "-") }

// response is a raw answer.
type response struct {
	status int
	header http.Header
	body   []byte
}

func (r response) String() string {
	return fmt.Sprintf("%d %s", r.status, trunc.String(string(r.body), 300))
}

// request is a raw request: the default headers (the target's key, version
// 2, JSON content type when there is a body) changed by header, where a
// header set to "" is removed.
type request struct {
	method string
	path   string // a path below BaseURL, or an absolute URL
	header map[string]string
	body   []byte
}

// do sends a raw request.
func (s *suite) do(t *testing.T, r request) response {
	t.Helper()
	u := r.path
	if !strings.HasPrefix(u, "http://") && !strings.HasPrefix(u, "https://") {
		u = s.target.BaseURL + u
	}
	var rd io.Reader
	if r.body != nil {
		rd = bytes.NewReader(r.body)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, r.method, u, rd)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+s.target.APIKey)
	req.Header.Set("Service-Version", acctapi.APIVersion)
	if r.body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	for k, v := range r.header {
		if v == "" {
			req.Header.Del(k)
		} else {
			req.Header.Set(k, v)
		}
	}
	resp, err := s.hc.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", r.method, r.path, err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatalf("%s %s: reading body: %v", r.method, r.path, err)
	}
	return response{status: resp.StatusCode, header: resp.Header, body: b}
}

// wantError fails t unless r is an error response with status and, when
// code is not "", error_code code, and a well-formed body.
func wantError(t *testing.T, what string, r response, status int, code string) {
	t.Helper()
	if r.status != status {
		t.Errorf("%s: got %v, want status %d %s", what, r, status, code)
		return
	}
	e, err := CheckErrorBody(r.status, r.header, r.body)
	if err != nil {
		t.Errorf("%s: %v", what, err)
		return
	}
	if code != "" && e.ErrorCode != code {
		t.Errorf("%s: error_code %q, want %q (msg %q)", what, e.ErrorCode, code, e.Msg)
	}
}

// CheckErrorBody checks that an error response (status 400 or more) has
// the contract's error body, and returns it decoded: JSON with the
// application/json content type, status_code equal to the HTTP status, a
// non-empty error_code and msg, and details.operation_id starting "op_".
// A 405 must also carry an Allow header.
func CheckErrorBody(status int, header http.Header, body []byte) (*acctapi.Error, error) {
	if status < 400 {
		return nil, fmt.Errorf("status %d is not an error", status)
	}
	if ct := header.Get("Content-Type"); !strings.HasPrefix(ct, "application/json") {
		return nil, fmt.Errorf("status %d: Content-Type %q, want application/json", status, ct)
	}
	var e struct {
		StatusCode *int               `json:"status_code"`
		Msg        *string            `json:"msg"`
		ErrorCode  *string            `json:"error_code"`
		Details    *map[string]string `json:"details"`
	}
	if err := json.Unmarshal(body, &e); err != nil {
		return nil, fmt.Errorf("status %d: error body %q is not the contract's JSON: %v", status, trunc.String(string(body), 200), err)
	}
	var errs []error
	if e.StatusCode == nil || *e.StatusCode != status {
		errs = append(errs, fmt.Errorf("status_code %v, want %d", deref(e.StatusCode), status))
	}
	if e.ErrorCode == nil || *e.ErrorCode == "" {
		errs = append(errs, errors.New("empty error_code"))
	}
	if e.Msg == nil || *e.Msg == "" {
		errs = append(errs, errors.New("empty msg"))
	}
	if e.Details == nil || !strings.HasPrefix((*e.Details)["operation_id"], "op_") {
		errs = append(errs, errors.New(`details.operation_id does not start with "op_"`))
	}
	if status == http.StatusMethodNotAllowed && header.Get("Allow") == "" {
		errs = append(errs, errors.New("405 without an Allow header"))
	}
	if err := errors.Join(errs...); err != nil {
		return nil, fmt.Errorf("status %d, body %s: %w", status, trunc.String(string(body), 200), err)
	}
	return &acctapi.Error{StatusCode: status, Msg: *e.Msg, ErrorCode: *e.ErrorCode, Details: *e.Details}, nil
}

func deref[T any](p *T) any {
	if p == nil {
		return nil
	}
	return *p
}

// wantAPIError fails t unless err is an *acctapi.Error with status and,
// when code is not "", that code.
func wantAPIError(t *testing.T, what string, err error, status int, code string) {
	t.Helper()
	var e *acctapi.Error
	if !errors.As(err, &e) {
		t.Errorf("%s: err = %v, want an API error %d %s", what, err, status, code)
		return
	}
	if e.StatusCode != status || (code != "" && e.ErrorCode != code) {
		t.Errorf("%s: err = %v, want status %d code %s", what, err, status, code)
	}
	if !strings.HasPrefix(e.OperationID(), "op_") {
		t.Errorf("%s: operation id %q", what, e.OperationID())
	}
}

// cleanup deletes a resource when t ends, unless it is already gone.
func cleanup(t *testing.T, what string, del func(ctx context.Context) error) {
	t.Helper()
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		if err := del(ctx); err != nil && !acctapi.IsNotFound(err) {
			t.Errorf("cleanup: deleting %s: %v", what, err)
		}
	})
}

// must fails t when err is not nil.
func must(t *testing.T, what string, err error) {
	t.Helper()
	if err != nil {
		t.Fatalf("%s: %v", what, err)
	}
}

// truncate shortens s for a failure report; see trunc.String.

func ptr[T any](v T) *T { return &v }
