package k8sop

import (
	"crypto/x509"
	"encoding/pem"
	"errors"
	"fmt"
	"strings"
)

// ParseCSR parses s as exactly one PEM block of type "CERTIFICATE REQUEST"
// holding a certificate signing request whose signature checks. Text around
// the block other than white space is an error.
func ParseCSR(s string) (*x509.CertificateRequest, error) {
	block, rest := pem.Decode([]byte(s))
	switch {
	case block == nil || !strings.HasPrefix(strings.TrimSpace(s), "-----BEGIN"):
		return nil, errors.New("k8sop: csr: no PEM block")
	case block.Type != "CERTIFICATE REQUEST":
		return nil, fmt.Errorf("k8sop: csr: PEM block is %q, want \"CERTIFICATE REQUEST\"", block.Type)
	case strings.TrimSpace(string(rest)) != "":
		return nil, errors.New("k8sop: csr: data after the PEM block")
	}
	csr, err := x509.ParseCertificateRequest(block.Bytes)
	if err != nil {
		return nil, fmt.Errorf("k8sop: csr: %w", err)
	}
	if err := csr.CheckSignature(); err != nil {
		return nil, fmt.Errorf("k8sop: csr: %w", err)
	}
	return csr, nil
}
