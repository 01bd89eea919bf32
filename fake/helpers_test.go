package fake_test

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/acctapi/acctapi"
	"github.com/acctapi/acctapi/fake"
)

// t0 is the start of every manual clock in these tests.
var t0 = time.Date(2026, 11, 1, 12, 0, 0, 0, time.UTC)

// start returns an in-memory fake with a manual clock and fixed seed.
func start(t testing.TB, opts ...fake.Option) (*fake.Server, *fake.ManualClock) {
	t.Helper()
	clk := fake.NewManualClock(t0)
	srv := fake.Start(t, append([]fake.Option{fake.WithoutListener(), fake.WithClock(clk), fake.WithIDSeed(1)}, opts...)...)
	return srv, clk
}

// response is a raw answer of the fake.
type response struct {
	status int
	header http.Header
	body   []byte
}

// apiErr decodes the body as the contract's error body.
func (r response) apiErr(t testing.TB) acctapi.Error {
	t.Helper()
	var e acctapi.Error
	if err := json.Unmarshal(r.body, &e); err != nil {
		t.Fatalf("error body %q: %v", r.body, err)
	}
	return e
}

// decode decodes the body into v.
func (r response) decode(t testing.TB, v any) {
	t.Helper()
	if err := json.Unmarshal(r.body, v); err != nil {
		t.Fatalf("body %q: %v", r.body, err)
	}
}

// raw sends a request with the default headers (a valid key, version 2,
// JSON content type when there is a body) changed by hdr: a header set to
// "" is removed.
func raw(t testing.TB, srv *fake.Server, method, path string, hdr map[string]string, body string) response {
	t.Helper()
	var rd io.Reader
	if body != "" {
		rd = strings.NewReader(body)
	}
	req, err := http.NewRequest(method, srv.URL+path, rd)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+srv.APIKey())
	req.Header.Set("Service-Version", "2")
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	for k, v := range hdr {
		if v == "" {
			req.Header.Del(k)
		} else {
			req.Header.Set(k, v)
		}
	}
	resp, err := srv.HTTPClient().Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, path, err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return response{status: resp.StatusCode, header: resp.Header, body: b}
}

// mustJSON encodes v.
func mustJSON(t testing.TB, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

var _ = bytes.NewReader
