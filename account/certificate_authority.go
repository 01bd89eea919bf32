package account

import (
	"context"
	"crypto/x509"
	"encoding/asn1"
	"encoding/pem"
	"errors"
	"fmt"
	"iter"
	"strings"
	"time"

	"github.com/acctapi/acctapi"
	"github.com/acctapi/acctapi/internal/field"
	"github.com/acctapi/acctapi/internal/resources"
	"github.com/acctapi/acctapi/internal/rest"
)

// CertificateAuthority is a CA certificate uploaded to the account, used to
// verify client certificates (mutual TLS). The members of the embedded
// [CAInfo] are read from CAPEM by the server.
type CertificateAuthority struct {
	// ID is set by the server: "ca_" and a suffix that sorts by creation time.
	ID string `json:"id"`
	// URI is the certificate authority's absolute URL, set by the server.
	URI string `json:"uri"`
	// CreatedAt is when the server created the certificate authority; RFC 3339
	// in JSON, UTC, whole seconds.
	CreatedAt time.Time `json:"created_at"`
	// Description is a human-readable note, at most
	// [acctapi.MaxDescriptionBytes] bytes.
	Description string `json:"description"`
	// Metadata is free-form machine-readable data, at most
	// [acctapi.MaxMetadataBytes] bytes.
	Metadata string `json:"metadata"`
	// CAPEM is the CA certificate, PEM-encoded, as uploaded.
	CAPEM string `json:"ca_pem"`
	CAInfo
}

// CAInfo is what the server reads from a certificate authority's PEM
// certificate; [ParseCA] computes it. Its members are part of
// [CertificateAuthority]'s JSON object.
type CAInfo struct {
	// SubjectCommonName is the certificate's subject CN.
	SubjectCommonName string `json:"subject_common_name"`
	// NotBefore is when the certificate becomes valid, in UTC.
	NotBefore time.Time `json:"not_before"`
	// NotAfter is when the certificate expires, in UTC.
	NotAfter time.Time `json:"not_after"`
	// KeyUsages names the key usage bits set, in bit order, in lower-case
	// snake case: digital_signature, content_commitment, key_encipherment,
	// data_encipherment, key_agreement, cert_sign, crl_sign, encipher_only,
	// decipher_only. It is empty, not nil, when none is set.
	KeyUsages []string `json:"key_usages"`
	// ExtendedKeyUsages names the extended key usages, in certificate order:
	// any, server_auth, client_auth, code_signing, email_protection,
	// ipsec_end_system, ipsec_tunnel, ipsec_user, time_stamping,
	// ocsp_signing, microsoft_server_gated_crypto,
	// netscape_server_gated_crypto, microsoft_commercial_code_signing,
	// microsoft_kernel_code_signing, and the dotted OID of any other. It is
	// empty, not nil, when none is set.
	ExtendedKeyUsages []string `json:"extended_key_usages"`
}

// ParseCA parses pemText, which must hold exactly one PEM block of type
// CERTIFICATE (with nothing but white space around it) whose certificate is
// a CA (basic constraints with CA true), and returns what the server shows
// of it. [CertificateAuthorityCreate.Validate] and the fake both use it.
func ParseCA(pemText string) (*CAInfo, error) {
	block, rest := pem.Decode([]byte(pemText))
	switch {
	case block == nil:
		return nil, errors.New("account: ca_pem: no PEM block")
	case !strings.HasPrefix(strings.TrimSpace(pemText), "-----BEGIN"):
		return nil, errors.New("account: ca_pem: text before the PEM block")
	case strings.TrimSpace(string(rest)) != "":
		return nil, errors.New("account: ca_pem: more than one PEM block, or text after it")
	case block.Type != "CERTIFICATE":
		return nil, fmt.Errorf("account: ca_pem: PEM block is %q, want CERTIFICATE", block.Type)
	}
	cert, err := x509.ParseCertificate(block.Bytes)
	if err != nil {
		return nil, fmt.Errorf("account: ca_pem: %w", err)
	}
	if !cert.IsCA {
		return nil, errors.New("account: ca_pem: not a CA certificate (basic constraints CA is not true)")
	}
	info := &CAInfo{
		SubjectCommonName: cert.Subject.CommonName,
		NotBefore:         cert.NotBefore.UTC(),
		NotAfter:          cert.NotAfter.UTC(),
		KeyUsages:         []string{},
		ExtendedKeyUsages: []string{},
	}
	for i, name := range keyUsageNames {
		if cert.KeyUsage&(1<<i) != 0 {
			info.KeyUsages = append(info.KeyUsages, name)
		}
	}
	info.ExtendedKeyUsages = extKeyUsagesInOrder(cert)
	return info, nil
}

// extKeyUsagesInOrder names cert's extended key usages in the order of
// its extension. crypto/x509 parses them into two lists, the usages it
// knows (ExtKeyUsage) and the others (UnknownExtKeyUsage), each in
// certificate order; the extension's own list of OIDs says how they
// interleave.
func extKeyUsagesInOrder(cert *x509.Certificate) []string {
	names := []string{}
	known, unknown := cert.ExtKeyUsage, cert.UnknownExtKeyUsage
	var oids []asn1.ObjectIdentifier
	for _, ext := range cert.Extensions {
		if ext.Id.Equal(oidExtKeyUsage) {
			_, _ = asn1.Unmarshal(ext.Value, &oids) // parsed once already, by x509
		}
	}
	for _, oid := range oids {
		if len(unknown) > 0 && unknown[0].Equal(oid) {
			names, unknown = append(names, oid.String()), unknown[1:]
		} else if len(known) > 0 {
			names, known = append(names, extKeyUsageName(known[0])), known[1:]
		}
	}
	// What the OIDs did not account for (none, for a certificate x509
	// parsed), after them.
	for _, u := range known {
		names = append(names, extKeyUsageName(u))
	}
	for _, oid := range unknown {
		names = append(names, oid.String())
	}
	return names
}

// oidExtKeyUsage is the extended key usage extension's OID.
var oidExtKeyUsage = asn1.ObjectIdentifier{2, 5, 29, 37}

// extKeyUsageName names an extended key usage crypto/x509 knows.
func extKeyUsageName(u x509.ExtKeyUsage) string {
	if name, ok := extKeyUsageNames[u]; ok {
		return name
	}
	return fmt.Sprintf("unknown_%d", u)
}

// keyUsageNames names the bits of x509.KeyUsage, lowest first.
var keyUsageNames = [...]string{
	"digital_signature", "content_commitment", "key_encipherment", "data_encipherment",
	"key_agreement", "cert_sign", "crl_sign", "encipher_only", "decipher_only",
}

// extKeyUsageNames names the extended key usages crypto/x509 knows.
var extKeyUsageNames = map[x509.ExtKeyUsage]string{
	x509.ExtKeyUsageAny:                            "any",
	x509.ExtKeyUsageServerAuth:                     "server_auth",
	x509.ExtKeyUsageClientAuth:                     "client_auth",
	x509.ExtKeyUsageCodeSigning:                    "code_signing",
	x509.ExtKeyUsageEmailProtection:                "email_protection",
	x509.ExtKeyUsageIPSECEndSystem:                 "ipsec_end_system",
	x509.ExtKeyUsageIPSECTunnel:                    "ipsec_tunnel",
	x509.ExtKeyUsageIPSECUser:                      "ipsec_user",
	x509.ExtKeyUsageTimeStamping:                   "time_stamping",
	x509.ExtKeyUsageOCSPSigning:                    "ocsp_signing",
	x509.ExtKeyUsageMicrosoftServerGatedCrypto:     "microsoft_server_gated_crypto",
	x509.ExtKeyUsageNetscapeServerGatedCrypto:      "netscape_server_gated_crypto",
	x509.ExtKeyUsageMicrosoftCommercialCodeSigning: "microsoft_commercial_code_signing",
	x509.ExtKeyUsageMicrosoftKernelCodeSigning:     "microsoft_kernel_code_signing",
}

// CertificateAuthorityList is one page of certificate authorities.
type CertificateAuthorityList struct {
	// CertificateAuthorities are the page's certificate authorities, newest
	// first.
	CertificateAuthorities []CertificateAuthority `json:"certificate_authorities"`
	// URI is the list's absolute URL, without the query.
	URI string `json:"uri"`
	// NextPageURI is the absolute URL of the next page, or nil (JSON null) on
	// the last page.
	NextPageURI *string `json:"next_page_uri"`
}

// PageItems returns the page's certificate authorities.
func (l *CertificateAuthorityList) PageItems() []CertificateAuthority {
	return l.CertificateAuthorities
}

// NextPage returns the next page's URL, or "" on the last page.
func (l *CertificateAuthorityList) NextPage() string { return rest.Str(l.NextPageURI) }

// CertificateAuthorityCreate is the body of a create request.
type CertificateAuthorityCreate struct {
	// Description is at most [acctapi.MaxDescriptionBytes] bytes.
	Description string `json:"description,omitempty"`
	// Metadata is at most [acctapi.MaxMetadataBytes] bytes.
	Metadata string `json:"metadata,omitempty"`
	// CAPEM is required: exactly one PEM-encoded CA certificate, as
	// [ParseCA] accepts.
	CAPEM string `json:"ca_pem"`
}

// Validate checks the request against the API's rules.
func (r *CertificateAuthorityCreate) Validate() error {
	_, err := r.ValidateParsed()
	return err
}

// ValidateParsed is [CertificateAuthorityCreate.Validate] that also returns
// what it read from CAPEM ([ParseCA]'s result), or nil with the error when
// the request is not valid. A server (the fake) calls it instead of
// Validate, so that it reads the certificate once.
func (r *CertificateAuthorityCreate) ValidateParsed() (*CAInfo, error) {
	if err := field.CheckUTF8(r); err != nil {
		return nil, err
	}
	info, caErr := checkCAPEM(r.CAPEM)
	if err := errors.Join(
		field.CheckDescription("description", r.Description),
		field.CheckMetadata("metadata", r.Metadata),
		caErr,
	); err != nil {
		return nil, err
	}
	return info, nil
}

func checkCAPEM(s string) (*CAInfo, error) {
	if s == "" {
		return nil, field.Invalid("ca_pem", "is required")
	}
	info, err := ParseCA(s)
	if err != nil {
		return nil, &acctapi.FieldError{Field: "ca_pem", Code: acctapi.CodeInvalidValue,
			Reason: "must be exactly one PEM-encoded CA certificate", Err: err}
	}
	return info, nil
}

// CertificateAuthorityUpdate is the body of an update request. Nil members
// are left unchanged; the certificate itself cannot be changed.
type CertificateAuthorityUpdate struct {
	// ID is the certificate authority to update; it is sent in the path.
	ID string `json:"id"`
	// Description, when not nil, replaces the description; at most
	// [acctapi.MaxDescriptionBytes] bytes.
	Description *string `json:"description,omitempty"`
	// Metadata, when not nil, replaces the metadata; at most
	// [acctapi.MaxMetadataBytes] bytes.
	Metadata *string `json:"metadata,omitempty"`
}

// Validate checks the request against the API's rules.
func (r *CertificateAuthorityUpdate) Validate() error {
	if err := field.CheckUTF8(r); err != nil {
		return err
	}
	return errors.Join(
		field.CheckDescriptionPtr("description", r.Description),
		field.CheckMetadataPtr("metadata", r.Metadata),
	)
}

// CertificateAuthorities is the client for /certificate_authorities. It is
// safe for concurrent use.
type CertificateAuthorities struct {
	c *acctapi.Client
}

// NewCertificateAuthorities returns the certificate authorities client built
// on c.
func NewCertificateAuthorities(c *acctapi.Client) *CertificateAuthorities {
	return &CertificateAuthorities{c: c}
}

// Create uploads a CA certificate.
func (s *CertificateAuthorities) Create(ctx context.Context, r *CertificateAuthorityCreate) (*CertificateAuthority, error) {
	return rest.Create[CertificateAuthority](ctx, s.c, resources.CertificateAuthorities.Path(), r)
}

// Get returns the certificate authority with the given id.
func (s *CertificateAuthorities) Get(ctx context.Context, id string) (*CertificateAuthority, error) {
	return rest.Get[CertificateAuthority](ctx, s.c, resources.CertificateAuthorities.Item(id))
}

// Update changes the members of a certificate authority that r sets.
func (s *CertificateAuthorities) Update(ctx context.Context, r *CertificateAuthorityUpdate) (*CertificateAuthority, error) {
	if err := field.CheckRequest(r); err != nil {
		return nil, err
	}
	return rest.Update[CertificateAuthority](ctx, s.c, resources.CertificateAuthorities.Item(r.ID), r)
}

// Delete deletes the certificate authority with the given id.
func (s *CertificateAuthorities) Delete(ctx context.Context, id string) error {
	return rest.Delete(ctx, s.c, resources.CertificateAuthorities.Item(id))
}

// List returns every certificate authority, newest first, following pages
// as needed. The filter may use id, description, metadata,
// subject_common_name, created_at, not_before and not_after. An error ends
// the sequence.
func (s *CertificateAuthorities) List(ctx context.Context, opts *acctapi.FilterOptions) iter.Seq2[CertificateAuthority, error] {
	return rest.All[CertificateAuthority, CertificateAuthorityList](ctx, s.c, resources.CertificateAuthorities.Path(), opts)
}

// Page returns one page of certificate authorities.
func (s *CertificateAuthorities) Page(ctx context.Context, opts *acctapi.FilterOptions) (*CertificateAuthorityList, error) {
	return rest.GetPage[CertificateAuthorityList](ctx, s.c, resources.CertificateAuthorities.Path(), opts)
}
