package fake

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"fmt"
	"math/big"
	"sync"
	"time"
)

// certValidity is how long a certificate the fake signs is valid, when
// its CA's validity allows.
const certValidity = 365 * 24 * time.Hour

// The signing CA's validity: every time the fake's clock may show (the
// admin API takes years 0001 to 9999), all of which x509 can encode, so
// that signing works whatever the clock and every certificate it signs
// verifies against the CA at the time it was signed.
var (
	caNotBefore = time.Date(1, 1, 1, 0, 0, 0, 0, time.UTC)
	caNotAfter  = time.Date(9999, 12, 31, 23, 59, 59, 0, time.UTC)
)

// signer is the fake's own certificate authority, which signs the CSRs of
// Kubernetes operators. Its key and certificate are made on first use,
// independent of the clock; a failure to make them (the system's random
// source failing) is returned and tried again on the next use, never
// kept. It is safe for concurrent use.
type signer struct {
	mu   sync.Mutex
	key  *ecdsa.PrivateKey
	cert *x509.Certificate
}

// ca returns the CA's key and certificate, made on first use.
func (s *signer) ca() (*ecdsa.PrivateKey, *x509.Certificate, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.cert != nil {
		return s.key, s.cert, nil
	}
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, nil, err
	}
	tmpl := &x509.Certificate{
		SerialNumber:          big.NewInt(1),
		Subject:               pkix.Name{CommonName: "acctapi fake CA"},
		NotBefore:             caNotBefore,
		NotAfter:              caNotAfter,
		IsCA:                  true,
		BasicConstraintsValid: true,
		KeyUsage:              x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		return nil, nil, err
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		return nil, nil, err
	}
	s.key, s.cert = key, cert
	return key, cert, nil
}

// leafValidity is the validity of a certificate signed at now: from now,
// in whole seconds as x509 encodes it, for certValidity, cut to the CA's
// validity. It is an error for a now outside the CA's validity, which
// the admin API's clock never shows (a Clock of the caller's own might).
func leafValidity(now time.Time) (notBefore, notAfter time.Time, err error) {
	notBefore = now.UTC().Truncate(time.Second)
	if notBefore.Before(caNotBefore) || notBefore.After(caNotAfter) {
		return time.Time{}, time.Time{}, fmt.Errorf("fake: cannot sign a certificate at %s: the clock is outside years 0001 to 9999",
			now.UTC().Format(time.RFC3339))
	}
	notAfter = caNotAfter
	if notBefore.Before(caNotAfter.Add(-certValidity)) {
		notAfter = notBefore.Add(certValidity)
	}
	return notBefore, notAfter, nil
}

// sign issues a client certificate for csr, valid from now for a year (see
// leafValidity), and returns it as PEM with its validity.
func (s *signer) sign(csr *x509.CertificateRequest, now time.Time) (pemText string, notBefore, notAfter time.Time, err error) {
	notBefore, notAfter, err = leafValidity(now)
	if err != nil {
		return "", time.Time{}, time.Time{}, err
	}
	key, ca, err := s.ca()
	if err != nil {
		return "", time.Time{}, time.Time{}, err
	}
	serial, err := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 120))
	if err != nil {
		return "", time.Time{}, time.Time{}, err
	}
	tmpl := &x509.Certificate{
		SerialNumber: serial,
		Subject:      csr.Subject,
		DNSNames:     csr.DNSNames,
		NotBefore:    notBefore,
		NotAfter:     notAfter,
		KeyUsage:     x509.KeyUsageDigitalSignature,
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca, csr.PublicKey, key)
	if err != nil {
		return "", time.Time{}, time.Time{}, err
	}
	return string(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})), notBefore, notAfter, nil
}

// SigningCA returns the certificate of the fake's own certificate
// authority, which signs the CSRs of Kubernetes operators, so that a test
// can verify a binding certificate's chain. It is made on first use, and
// is the same whatever the clock: it is valid from 0001-01-01T00:00:00Z to
// 9999-12-31T23:59:59Z, so that every certificate the fake signs
// verifies against it at the clock's time when it was signed (its
// validity is a year from then, cut at the end of year 9999).
func (s *Server) SigningCA() (*x509.Certificate, error) {
	_, cert, err := s.env.signer.ca()
	return cert, err
}
