// Package k8soperator walks through what a Kubernetes operator does with
// the API: it registers itself with the bindings feature, an endpoint
// selector and a certificate signing request; reads back the client
// certificate the service signed; and then polls the endpoints bound to it,
// page by page, reconciling what changed since the last poll.
//
// The helpers here (NewCSR, BoundEndpoints, Diff) are the operator's own
// code; example_test.go runs them against the fake, where endpoints —
// which agents create, and which have no API path — are seeded with
// fake.Seed[k8sop.Endpoint]. An endpoint is bound when it has the
// "kubernetes" binding and one of the operator's selectors matches it.
// Run it with
//
//	go test -v ./examples/k8soperator
package k8soperator

import (
	"context"
	"crypto"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"fmt"
	"slices"

	"github.com/acctapi/acctapi"
	"github.com/acctapi/acctapi/k8sop"
)

// NewCSR returns a PEM certificate signing request for key with the given
// common name, as the operator sends it in k8sop.BindingCreate.CSR. The key
// stays with the operator; only its public half is in the request.
func NewCSR(key crypto.Signer, commonName string) (string, error) {
	der, err := x509.CreateCertificateRequest(rand.Reader, &x509.CertificateRequest{
		Subject: pkix.Name{CommonName: commonName},
	}, key)
	if err != nil {
		return "", fmt.Errorf("k8soperator: csr: %w", err)
	}
	return string(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE REQUEST", Bytes: der})), nil
}

// PageSize is the page size BoundEndpoints asks for. It is small here so
// that the example pages; an operator would use acctapi.MaxLimit.
const PageSize = 2

// BoundEndpoints returns every endpoint bound to the operator id, by id,
// following the pages of the list. An error from any page is returned and
// no partial result: an operator must not remove what it merely failed to
// see.
func BoundEndpoints(ctx context.Context, ops *k8sop.Operators, id string) (map[string]k8sop.Endpoint, error) {
	out := map[string]k8sop.Endpoint{}
	for ep, err := range ops.BoundEndpoints(ctx, id, &acctapi.ListOptions{Limit: PageSize}) {
		if err != nil {
			return nil, fmt.Errorf("k8soperator: bound endpoints of %s: %w", id, err)
		}
		out[ep.ID] = ep
	}
	return out, nil
}

// Diff returns the ids in next but not in prev (to create in the cluster)
// and in prev but not in next (to remove), each sorted.
func Diff(prev, next map[string]k8sop.Endpoint) (added, removed []string) {
	for id := range next {
		if _, ok := prev[id]; !ok {
			added = append(added, id)
		}
	}
	for id := range prev {
		if _, ok := next[id]; !ok {
			removed = append(removed, id)
		}
	}
	slices.Sort(added)
	slices.Sort(removed)
	return added, removed
}
