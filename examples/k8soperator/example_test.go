package k8soperator_test

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"encoding/pem"
	"errors"
	"fmt"
	"time"

	"github.com/acctapi/acctapi"
	"github.com/acctapi/acctapi/examples/k8soperator"
	"github.com/acctapi/acctapi/fake"
	"github.com/acctapi/acctapi/k8sop"
)

// The operator's flow from registration to two rounds of polling.
func Example() {
	ctx := context.Background()
	clock := fake.NewManualClock(time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC))
	srv, err := fake.New(fake.WithoutListener(), fake.WithClock(clock), fake.WithIDSeed(1))
	if err != nil {
		fmt.Println(err)
		return
	}
	defer srv.Close()
	ops := k8sop.NewOperators(srv.Client())

	// 1. Register, with bindings, a selector and a CSR for our own key.
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		fmt.Println(err)
		return
	}
	csr, err := k8soperator.NewCSR(key, "ngrok-operator.cluster-1")
	if err != nil {
		fmt.Println(err)
		return
	}
	op, err := ops.Create(ctx, &k8sop.OperatorCreate{
		Description:     "cluster-1",
		EnabledFeatures: []string{"Bindings"},
		Deployment:      k8sop.Deployment{Name: "ngrok-operator", Namespace: "ngrok-operator", Version: "0.13.0", ClusterName: "cluster-1"},
		Binding: &k8sop.BindingCreate{
			EndpointSelectors: []string{`endpoint.url.endsWith(".internal")`},
			CSR:               csr,
		},
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println("registered:", op.EnabledFeatures, op.Region, op.Binding.IngressEndpoint)

	// 2. Read back the certificate the service signed, and check it: for
	// our key, our name, a client certificate, valid from now.
	op, err = ops.Get(ctx, op.ID)
	if err != nil {
		fmt.Println(err)
		return
	}
	block, _ := pem.Decode([]byte(op.Binding.Cert.Cert))
	if block == nil {
		fmt.Println("no certificate")
		return
	}
	cert, err := x509.ParseCertificate(block.Bytes)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println("cert for:", cert.Subject.CommonName, "issued by:", cert.Issuer.CommonName)
	fmt.Println("cert is for our key:", key.PublicKey.Equal(cert.PublicKey))
	fmt.Println("client auth:", len(cert.ExtKeyUsage) == 1 && cert.ExtKeyUsage[0] == x509.ExtKeyUsageClientAuth)
	fmt.Println("valid from:", cert.NotBefore.Equal(clock.Now()), cert.NotBefore.Equal(op.Binding.Cert.NotBefore),
		"for", cert.NotAfter.Sub(cert.NotBefore).Hours()/24, "days")

	// 3. Agents create endpoints; in the fake, seed them. Only those with
	// the kubernetes binding that the selector matches are bound.
	seed := func(name, url string, bindings ...string) {
		clock.Advance(time.Second)
		if _, err := fake.Seed[k8sop.Endpoint](srv, "", &k8sop.Endpoint{Name: name, URL: url, Proto: "https", Bindings: bindings}); err != nil {
			fmt.Println(err)
		}
	}
	seed("api", "https://api.cluster-1.internal", "kubernetes")
	seed("auth", "https://auth.cluster-1.internal", "kubernetes")
	seed("billing", "https://billing.cluster-1.internal", "kubernetes")
	seed("public-site", "https://www.example.com", "public")             // not kubernetes
	seed("other-cluster", "https://api.cluster-2.example", "kubernetes") // selector does not match
	seed("private", "https://db.cluster-1.internal", "internal")         // not kubernetes

	// 4. Poll. Each poll pages through every bound endpoint (pages of 2
	// here) and reconciles the difference with the previous poll.
	var known map[string]k8sop.Endpoint
	poll := func() {
		bound, err := k8soperator.BoundEndpoints(ctx, ops, op.ID)
		var apiErr *acctapi.Error
		if errors.As(err, &apiErr) {
			fmt.Println("poll failed with", apiErr.StatusCode, "- keeping what we have")
			return
		} else if err != nil {
			fmt.Println(err)
			return
		}
		added, removed := k8soperator.Diff(known, bound)
		fmt.Println("poll:", len(bound), "bound; add", names(bound, added), "remove", names(known, removed))
		known = bound
	}
	poll()

	// An endpoint comes: the next poll adds it.
	before := srv.Snapshot()
	seed("search", "https://search.cluster-1.internal", "kubernetes")
	poll()

	// A poll fails (the client here does not retry): nothing is removed.
	srv.FailNext("GET", "/kubernetes_operators/*/bound_endpoints", 1, 503)
	poll()

	// The endpoint goes away again. Endpoints have no API path to delete
	// them; restoring the snapshot taken before it was seeded does that.
	srv.Restore(before)
	poll()
	// Output:
	// registered: [bindings] global connect.ngrok-endpoints.com:443
	// cert for: ngrok-operator.cluster-1 issued by: acctapi fake CA
	// cert is for our key: true
	// client auth: true
	// valid from: true true for 365 days
	// poll: 3 bound; add [api auth billing] remove []
	// poll: 4 bound; add [search] remove []
	// poll failed with 503 - keeping what we have
	// poll: 3 bound; add [] remove [search]
}

// names returns the names of the endpoints with the given ids.
func names(eps map[string]k8sop.Endpoint, ids []string) []string {
	out := []string{}
	for _, id := range ids {
		out = append(out, eps[id].Name)
	}
	return out
}
