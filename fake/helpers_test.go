package fake_test

import (
	"bytes"
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/json"
	"encoding/pem"
	"errors"
	"io"
	"iter"
	"math/big"
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
	req := newRequest(t, srv, method, path, body)
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
	return roundTrip(t, srv, req)
}

// newRequest is a request to srv with body ("" for none) and no header.
func newRequest(t testing.TB, srv *fake.Server, method, path, body string) *http.Request {
	t.Helper()
	var rd io.Reader
	if body != "" {
		rd = strings.NewReader(body)
	}
	req, err := http.NewRequest(method, srv.URL+path, rd)
	if err != nil {
		t.Fatal(err)
	}
	return req
}

// roundTrip sends req through srv's client and reads the whole answer.
func roundTrip(t testing.TB, srv *fake.Server, req *http.Request) response {
	t.Helper()
	resp, err := srv.HTTPClient().Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", req.Method, req.URL.Path, err)
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

// must returns a function that returns v, failing t when err is not
// nil: must(f())(t).
func must[T any](v T, err error) func(t testing.TB) T {
	return func(t testing.TB) T {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
}

// clientFor returns a client of srv that authenticates with token, with
// retries off (as srv.Client) unless opts turn them on again.
func clientFor(t testing.TB, srv *fake.Server, token string, opts ...acctapi.Option) *acctapi.Client {
	t.Helper()
	base := []acctapi.Option{acctapi.WithBaseURL(srv.URL), acctapi.WithHTTPClient(srv.HTTPClient()), acctapi.WithoutRetry()}
	return must(acctapi.NewClient(token, append(base, opts...)...))(t)
}

// wantAPIError fails t unless err is an *acctapi.Error with status and code.
func wantAPIError(t testing.TB, err error, status int, code string) {
	t.Helper()
	var e *acctapi.Error
	if !errors.As(err, &e) {
		t.Fatalf("err = %v, want an API error %d %s", err, status, code)
	}
	if e.StatusCode != status || e.ErrorCode != code {
		t.Fatalf("err = %v, want status %d and code %s", err, status, code)
	}
}

// wantDetailsField checks that err, an API error, names field in its
// details.
func wantDetailsField(t testing.TB, err error, field string) {
	t.Helper()
	var e *acctapi.Error
	if !errors.As(err, &e) || e.Details["field"] != field {
		t.Errorf("err = %v (details %v), want details naming the field %q", err, e.Details, field)
	}
}

// collect drains a list iterator.
func collect[T any](t testing.TB, seq iter.Seq2[T, error]) []T {
	t.Helper()
	var out []T
	for v, err := range seq {
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, v)
	}
	return out
}

// idsOf maps items to their ids.
func idsOf[T any](items []T, id func(T) string) []string {
	out := make([]string, len(items))
	for i, v := range items {
		out[i] = id(v)
	}
	return out
}

// newCA returns a self-signed CA certificate in PEM, valid from nb to na.
func newCA(t testing.TB, cn string, nb, na time.Time) string {
	t.Helper()
	key := must(ecdsa.GenerateKey(elliptic.P256(), rand.Reader))(t)
	tmpl := &x509.Certificate{
		SerialNumber:          big.NewInt(7),
		Subject:               pkix.Name{CommonName: cn},
		NotBefore:             nb,
		NotAfter:              na,
		IsCA:                  true,
		BasicConstraintsValid: true,
		KeyUsage:              x509.KeyUsageDigitalSignature | x509.KeyUsageCertSign | x509.KeyUsageCRLSign,
		ExtKeyUsage:           []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth, x509.ExtKeyUsageClientAuth},
	}
	der := must(x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key))(t)
	return string(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}))
}

// newCSR returns a PEM certificate signing request for cn.
func newCSR(t testing.TB, cn string) string {
	t.Helper()
	key := must(ecdsa.GenerateKey(elliptic.P256(), rand.Reader))(t)
	der := must(x509.CreateCertificateRequest(rand.Reader, &x509.CertificateRequest{
		Subject: pkix.Name{CommonName: cn}, DNSNames: []string{cn + ".example"},
	}, key))(t)
	return string(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE REQUEST", Bytes: der}))
}

func ptr[T any](v T) *T { return &v }

// Secrets used by the security tests; each is unique, so finding one in
// a journal or message is never a coincidence.
const (
	secKinesis    = "kinesis-secret-Zq81vT"
	secClient     = "client-secret-Hh27pW"
	secMonitoring = "monitoring-key-Ux55mR"
)

// overBothTransports runs f against a fake over loopback TCP, where
// net/http's own transport might retry, and one in memory, each with a
// client of the default retry policy shortened to tiny delays.
func overBothTransports(t *testing.T, f func(t *testing.T, srv *fake.Server, c *acctapi.Client)) {
	t.Helper()
	for _, tcp := range []bool{true, false} {
		t.Run(map[bool]string{true: "tcp", false: "in memory"}[tcp], func(t *testing.T) {
			var srv *fake.Server
			if tcp {
				srv = fake.Start(t)
			} else {
				srv, _ = start(t)
			}
			f(t, srv, clientFor(t, srv, srv.APIKey(), acctapi.WithRetry(acctapi.RetryPolicy{MaxAttempts: 4, BaseDelay: 1, MaxDelay: 1})))
		})
	}
}

// wantDeleted deletes id with del and checks that get then answers 404.
func wantDeleted[T any](ctx context.Context, t *testing.T, id string, del func(context.Context, string) error, get func(context.Context, string) (*T, error)) {
	t.Helper()
	if err := del(ctx, id); err != nil {
		t.Fatal(err)
	}
	_, err := get(ctx, id)
	wantAPIError(t, err, http.StatusNotFound, acctapi.CodeNotFound)
}
