package fake_test

import (
	"context"
	"crypto/x509"
	"encoding/pem"
	"strings"
	"testing"

	"github.com/acctapi/acctapi"
	"github.com/acctapi/acctapi/backends"
	"github.com/acctapi/acctapi/fake"
	"github.com/acctapi/acctapi/k8sop"
)

func TestDelete(t *testing.T) {
	t.Parallel()
	srv, _ := start(t)
	ep, err := fake.Seed[k8sop.Endpoint](srv, "", &k8sop.Endpoint{URL: "https://a.example", Bindings: []string{"kubernetes"}})
	if err != nil {
		t.Fatal(err)
	}
	if err := fake.Delete[k8sop.Endpoint](srv, "", ep.ID); err != nil {
		t.Fatalf("Delete endpoint: %v", err)
	}
	if _, ok := fake.Get[k8sop.Endpoint](srv, "", ep.ID); ok {
		t.Error("endpoint still there after Delete")
	}
	if err := fake.Delete[k8sop.Endpoint](srv, "", ep.ID); err == nil || !strings.Contains(err.Error(), "404") {
		t.Errorf("second Delete = %v, want a 404 error", err)
	}

	// A deleted tunnel leaves the tunnel groups it was in.
	tn, err := fake.Seed[fake.Tunnel](srv, "", &fake.Tunnel{Labels: map[string]string{"app": "web"}})
	if err != nil {
		t.Fatal(err)
	}
	tg, err := fake.Seed[backends.TunnelGroup](srv, "", &backends.TunnelGroupCreate{Labels: map[string]string{"app": "web"}})
	if err != nil || len(tg.Tunnels) != 1 {
		t.Fatalf("tunnel group %+v, %v: want one tunnel", tg, err)
	}
	if err := fake.Delete[fake.Tunnel](srv, "", tn.ID); err != nil {
		t.Fatal(err)
	}
	if got, _ := fake.Get[backends.TunnelGroup](srv, "", tg.ID); len(got.Tunnels) != 0 {
		t.Errorf("tunnel group still lists %v", got.Tunnels)
	}

	// The API's rules hold: a referenced backend stays.
	hr, _ := fake.Seed[backends.HTTPResponse](srv, "", &backends.HTTPResponseCreate{StatusCode: 200})
	if _, err := fake.Seed[backends.Failover](srv, "", &backends.FailoverCreate{Backends: []string{hr.ID}}); err != nil {
		t.Fatal(err)
	}
	if err := fake.Delete[backends.HTTPResponse](srv, "", hr.ID); err == nil || !strings.Contains(err.Error(), acctapi.CodeStillReferenced) {
		t.Errorf("Delete of a referenced backend = %v, want %s", err, acctapi.CodeStillReferenced)
	}
	if err := fake.Delete[int](srv, "", "x"); err == nil {
		t.Error("Delete[int]: no error")
	}
}

// TestSigningCA checks that an operator's binding certificate chains to
// the fake's own CA.
func TestSigningCA(t *testing.T) {
	t.Parallel()
	srv, _ := start(t)
	op, err := k8sop.NewOperators(srv.Client()).Create(context.Background(), &k8sop.OperatorCreate{
		EnabledFeatures: []string{"bindings"},
		Binding:         &k8sop.BindingCreate{EndpointSelectors: []string{"true"}, CSR: newCSR(t, "op")},
	})
	if err != nil {
		t.Fatal(err)
	}
	block, _ := pem.Decode([]byte(op.Binding.Cert.Cert))
	if block == nil {
		t.Fatalf("no PEM certificate in %q", op.Binding.Cert.Cert)
	}
	cert, err := x509.ParseCertificate(block.Bytes)
	if err != nil {
		t.Fatal(err)
	}
	ca, err := srv.SigningCA()
	if err != nil {
		t.Fatal(err)
	}
	if err := cert.CheckSignatureFrom(ca); err != nil {
		t.Errorf("certificate does not chain to SigningCA: %v", err)
	}

}
