package fake

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"sync"
	"time"
)

// certValidity is how long a certificate the fake signs is valid.
const certValidity = 365 * 24 * time.Hour

// signer is the fake's own certificate authority, which signs the CSRs of
// Kubernetes operators. Its key is made on first use.
type signer struct {
	once sync.Once
	key  *ecdsa.PrivateKey
	cert *x509.Certificate
	err  error
}

func (s *signer) init(now time.Time) error {
	s.once.Do(func() {
		s.key, s.err = ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
		if s.err != nil {
			return
		}
		tmpl := &x509.Certificate{
			SerialNumber:          big.NewInt(1),
			Subject:               pkix.Name{CommonName: "acctapi fake CA"},
			NotBefore:             now.Add(-time.Hour),
			NotAfter:              now.Add(10 * certValidity),
			IsCA:                  true,
			BasicConstraintsValid: true,
			KeyUsage:              x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature,
		}
		der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &s.key.PublicKey, s.key)
		if err != nil {
			s.err = err
			return
		}
		s.cert, s.err = x509.ParseCertificate(der)
	})
	return s.err
}

// sign issues a client certificate for csr, valid from now for a year, and
// returns it as PEM with its validity.
func (s *signer) sign(csr *x509.CertificateRequest, now time.Time) (pemText string, notBefore, notAfter time.Time, err error) {
	if err := s.init(now); err != nil {
		return "", time.Time{}, time.Time{}, err
	}
	serial, err := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 120))
	if err != nil {
		return "", time.Time{}, time.Time{}, err
	}
	notBefore, notAfter = now, now.Add(certValidity)
	tmpl := &x509.Certificate{
		SerialNumber: serial,
		Subject:      csr.Subject,
		DNSNames:     csr.DNSNames,
		NotBefore:    notBefore,
		NotAfter:     notAfter,
		KeyUsage:     x509.KeyUsageDigitalSignature,
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, s.cert, csr.PublicKey, s.key)
	if err != nil {
		return "", time.Time{}, time.Time{}, err
	}
	return string(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})), notBefore, notAfter, nil
}

// SigningCA returns the certificate of the fake's own certificate
// authority, which signs the CSRs of Kubernetes operators, so that a test
// can verify a binding certificate's chain. It is made on first use.
func (s *Server) SigningCA() (*x509.Certificate, error) {
	if err := s.env.signer.init(s.now()); err != nil {
		return nil, err
	}
	return s.env.signer.cert, nil
}
