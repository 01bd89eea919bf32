package account_test

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/asn1"
	"encoding/pem"
	"errors"
	"fmt"
	"math/big"
	"os"
	"testing"
	"time"

	"github.com/acctapi/acctapi"
	"github.com/acctapi/acctapi/account"
	"github.com/google/go-cmp/cmp"
)

// selfSigned returns tmpl, completed with a serial number, subject and
// validity, self-signed and PEM-encoded.
func selfSigned(tmpl x509.Certificate) string {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		panic(err)
	}
	tmpl.SerialNumber = big.NewInt(7)
	tmpl.Subject = pkix.Name{CommonName: "test"}
	tmpl.NotBefore = time.Date(2025, 1, 2, 3, 4, 5, 0, time.UTC)
	tmpl.NotAfter = tmpl.NotBefore.AddDate(1, 0, 0)
	der, err := x509.CreateCertificate(rand.Reader, &tmpl, &tmpl, &key.PublicKey, key)
	if err != nil {
		panic(err)
	}
	return string(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}))
}

// fixtureInfo is what testdata/ca.pem holds.
var fixtureInfo = account.CAInfo{
	SubjectCommonName: "Example Root CA",
	NotBefore:         time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC),
	NotAfter:          time.Date(2034, 1, 1, 0, 0, 0, 0, time.UTC),
	KeyUsages:         []string{"digital_signature", "cert_sign", "crl_sign"},
	ExtendedKeyUsages: []string{"server_auth", "client_auth"},
}

var leafPEM = selfSigned(x509.Certificate{KeyUsage: x509.KeyUsageDigitalSignature})

func TestParseCA(t *testing.T) {
	validity := func(info account.CAInfo) account.CAInfo {
		info.SubjectCommonName = "test"
		info.NotBefore = time.Date(2025, 1, 2, 3, 4, 5, 0, time.UTC)
		info.NotAfter = time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
		return info
	}
	tests := []struct {
		name string
		pem  string
		want account.CAInfo
	}{
		{"fixture", caPEM, fixtureInfo},
		{"no usages: empty lists", selfSigned(x509.Certificate{BasicConstraintsValid: true, IsCA: true}),
			validity(account.CAInfo{KeyUsages: []string{}, ExtendedKeyUsages: []string{}})},
		{"every usage", selfSigned(x509.Certificate{BasicConstraintsValid: true, IsCA: true,
			KeyUsage:           1<<9 - 1,
			ExtKeyUsage:        []x509.ExtKeyUsage{x509.ExtKeyUsageAny, x509.ExtKeyUsageOCSPSigning},
			UnknownExtKeyUsage: []asn1.ObjectIdentifier{{1, 2, 3, 4}},
		}), validity(account.CAInfo{
			KeyUsages: []string{"digital_signature", "content_commitment", "key_encipherment", "data_encipherment",
				"key_agreement", "cert_sign", "crl_sign", "encipher_only", "decipher_only"},
			ExtendedKeyUsages: []string{"any", "ocsp_signing", "1.2.3.4"},
		})},
		{"white space around", "\n \n" + caPEM + "\n\t\n", fixtureInfo},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := account.ParseCA(tt.pem)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, *got); diff != "" {
				t.Errorf("ParseCA (-want +got):\n%s", diff)
			}
		})
	}
}

func TestParseCARejects(t *testing.T) {
	der, _ := pem.Decode([]byte(caPEM))
	tests := []struct{ name, pem string }{
		{"empty", ""},
		{"no PEM block", "not a certificate"},
		{"text before", "hello\n" + caPEM},
		{"text after", caPEM + "bye\n"},
		{"two certificates", caPEM + caPEM},
		{"wrong block type", string(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE REQUEST", Bytes: der.Bytes}))},
		{"not DER", string(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: []byte("junk")}))},
		{"not a CA", leafPEM},
		{"CA false", selfSigned(x509.Certificate{BasicConstraintsValid: true})},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if info, err := account.ParseCA(tt.pem); err == nil {
				t.Errorf("ParseCA = %+v, want an error", info)
			}
			err := (&account.CertificateAuthorityCreate{CAPEM: tt.pem}).Validate()
			if !errors.Is(err, acctapi.ErrInvalid) {
				t.Errorf("Validate = %v, want a field error", err)
			}
		})
	}
}

// TestValidateParsed: ValidateParsed answers as Validate does, and returns
// ParseCA's result for a valid request (nil with the error otherwise).
func TestValidateParsed(t *testing.T) {
	t.Parallel()
	ca := selfSigned(x509.Certificate{IsCA: true, BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign})
	want, err := account.ParseCA(ca)
	if err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		name string
		in   account.CertificateAuthorityCreate
		ok   bool
	}{
		{"valid", account.CertificateAuthorityCreate{CAPEM: ca, Description: "d"}, true},
		{"not a CA", account.CertificateAuthorityCreate{CAPEM: leafPEM}, false},
		{"CA, but the description is too long", account.CertificateAuthorityCreate{CAPEM: ca, Description: string(make([]byte, acctapi.MaxDescriptionBytes+1))}, false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			info, err := tt.in.ValidateParsed()
			if verr := tt.in.Validate(); fmt.Sprint(verr) != fmt.Sprint(err) {
				t.Errorf("ValidateParsed's error %v, Validate's %v", err, verr)
			}
			switch {
			case tt.ok && err != nil:
				t.Fatalf("ValidateParsed: %v", err)
			case tt.ok:
				if diff := cmp.Diff(want, info); diff != "" {
					t.Errorf("ValidateParsed's info (-ParseCA +got):\n%s", diff)
				}
			case err == nil || info != nil:
				t.Errorf("ValidateParsed = %+v, %v; want nil and an error", info, err)
			}
		})
	}
}

// A server validates a certificate authority once and keeps what
// validation read of the certificate (the fake does so).
func ExampleCertificateAuthorityCreate_ValidateParsed() {
	pemText, err := os.ReadFile("testdata/ca.pem")
	if err != nil {
		fmt.Println(err)
		return
	}
	info, err := (&account.CertificateAuthorityCreate{CAPEM: string(pemText)}).ValidateParsed()
	fmt.Println(info.SubjectCommonName, info.NotAfter.Year(), err)
	_, err = (&account.CertificateAuthorityCreate{}).ValidateParsed()
	fmt.Println(err)
	// Output:
	// Example Root CA 2034 <nil>
	// acctapi: ca_pem: is required
}

// TestParseCAExtKeyUsageOrder pins a review's finding: ExtendedKeyUsages
// promised certificate order, but listed the usages crypto/x509 knows
// before the others whatever their order in the certificate.
func TestParseCAExtKeyUsageOrder(t *testing.T) {
	t.Parallel()
	oids := []asn1.ObjectIdentifier{{1, 2, 3, 4}, {1, 3, 6, 1, 5, 5, 7, 3, 1}, {1, 2, 3, 5}, {1, 3, 6, 1, 5, 5, 7, 3, 2}}
	value, err := asn1.Marshal(oids)
	if err != nil {
		t.Fatal(err)
	}
	ca := selfSigned(x509.Certificate{BasicConstraintsValid: true, IsCA: true,
		ExtraExtensions: []pkix.Extension{{Id: asn1.ObjectIdentifier{2, 5, 29, 37}, Value: value}}})
	info, err := account.ParseCA(ca)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"1.2.3.4", "server_auth", "1.2.3.5", "client_auth"}, info.ExtendedKeyUsages); diff != "" {
		t.Errorf("extended key usages (-want +got):\n%s", diff)
	}
}
