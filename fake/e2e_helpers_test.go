package fake_test

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"errors"
	"iter"
	"math/big"
	"testing"
	"time"

	"github.com/acctapi/acctapi"
	"github.com/acctapi/acctapi/fake"
)

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
