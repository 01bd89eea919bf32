package ratelimit

import (
	"bufio"
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/asn1"
	"errors"
	"maps"
	"math/big"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/google/cel-go/cel"
	"github.com/google/cel-go/common/types"
	"github.com/google/cel-go/common/types/ref"
	"github.com/google/go-cmp/cmp"
	"pgregory.net/rapid"
)

// testCert returns a self-signed certificate with every field the
// conn.tls.{client,server}.* variables read.
func testCert(t testing.TB, cn string) *x509.Certificate {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	name := pkix.Name{
		CommonName: cn, Country: []string{"US"}, Locality: []string{"Springfield"},
		Organization: []string{"Acme"}, OrganizationalUnit: []string{"Ops"}, PostalCode: []string{"12345"},
		Province: []string{"IL"}, StreetAddress: []string{"1 Main St"},
	}
	u, _ := url.Parse("spiffe://acme/" + cn)
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(0xb53017e7), Subject: name,
		NotBefore: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC), NotAfter: time.Date(2027, 1, 1, 0, 0, 0, 0, time.UTC),
		DNSNames: []string{cn + ".example.com"}, EmailAddresses: []string{"ops@example.com"},
		IPAddresses: []net.IP{net.ParseIP("192.0.2.9")}, URIs: []*url.URL{u},
		ExtraExtensions: []pkix.Extension{{Id: asn1.ObjectIdentifier{1, 2, 3, 4}, Critical: false, Value: []byte{5, 0}}},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	c, err := x509.ParseCertificate(der)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

var (
	connStart = time.Date(2026, 1, 1, 11, 59, 0, 0, time.UTC)
	testIntel = IPIntel{
		Categories: []string{"com.cloudflare.ipv4", "proxy.anonymous.tor"}, ASNumber: 7922, ASOrganization: "COMCAST-7922",
		Location: GeoLocation{City: "Chicago", Continent: "North America", Country: "United States", CountryCode: "US",
			Latitude: "41.88", Longitude: "-87.63", Radius: "5", MetroCode: "602", PostalCode: "60601",
			Subdivision: "Illinois", Timezone: "America/Chicago"},
		Registered: GeoLocation{City: "Philadelphia", Continent: "North America", Country: "United States", CountryCode: "US",
			IsEU: false, MetroCode: "504", Subdivision: "Pennsylvania", Timezone: "America/New_York"},
	}
)

// fullRequest returns a request with a value for every variable, and the
// options with every provider.
func fullRequest(t testing.TB) (*http.Request, []LimitOption) {
	t.Helper()
	r := httptest.NewRequest("POST", "https://user:pw@api.example.com:8443/v1/things%2Fx?b=2&a=1&a=3", strings.NewReader("hello"))
	r.RemoteAddr = "203.0.113.7:51234"
	r.Header.Set("Content-Type", "application/json; charset=utf-8")
	r.Header.Set("Content-Encoding", "gzip, br")
	r.Header.Set("Cookie", "session=abc; theme=dark; session=def")
	r.Header.Set("User-Agent", "Mozilla/5.0 (Macintosh) Safari/10.1.2")
	r.Header.Set("Location", "/next")
	r.Header.Add("X-Api-Key", "k1")
	r.Header.Add("X-Api-Key", "k2")
	r.Trailer = http.Header{"X-Checksum": {"abc"}}
	client, server := testCert(t, "client"), testCert(t, "server")
	r.TLS = &tls.ConnectionState{
		Version: tls.VersionTLS13, CipherSuite: tls.TLS_AES_128_GCM_SHA256, NegotiatedProtocol: "h2",
		ServerName: "api.example.com", HandshakeComplete: true, PeerCertificates: []*x509.Certificate{client},
	}
	cc := &countingConn{}
	cc.in.Store(100)
	cc.out.Store(200)
	ctx := context.WithValue(r.Context(), http.LocalAddrContextKey, &net.TCPAddr{IP: net.ParseIP("192.0.2.1"), Port: 8443})
	ctx = context.WithValue(ctx, connKey{}, &connInfo{start: connStart, count: cc})
	r = r.WithContext(ctx)
	opts := []LimitOption{
		WithIPIntel(func(ip netip.Addr) IPIntel {
			in := testIntel
			if ip.String() == "192.0.2.1" {
				in.ASOrganization = "SERVER-AS"
			}
			return in
		}),
		WithServerRegion("eu"),
		WithEndpoint(Endpoint{ID: "ep_1", URL: "https://api.example.com", Host: "api.example.com", Port: 443, Protocol: "https", Addr: "api.example.com:443"}),
		WithSecrets(func(vault, name string) (string, error) {
			if vault == "v" && name == "n" {
				return "s3cret", nil
			}
			return "", errors.New("no such secret")
		}),
		WithServerCertificate(func(*http.Request) *x509.Certificate { return server }),
		WithTLSFingerprint(func(*http.Request) string { return "t13d1717h2_5b57614c22b0_f0fc7018f8e8" }),
		WithUserAgentParser(func(ua string) UserAgent {
			return UserAgent{Name: "Safari", Version: "10.1.2", OS: "macOS", OSVersion: "10.12.6", Device: "Mac",
				URL: "https://example.com/bot", Desktop: true}
		}),
		WithPodIdentity(func(*http.Request) PodIdentity {
			return PodIdentity{ID: "pod-uid", Name: "web-0", Namespace: "prod", Annotations: map[string]string{"k8s.ngrok.com/team": "a"}}
		}),
	}
	return r, opts
}

// evalExpr compiles expr with opts and evaluates it for r at base.
func evalExpr(t testing.TB, expr string, r *http.Request, opts ...LimitOption) ref.Val {
	t.Helper()
	o, err := buildOptions(opts)
	if err != nil {
		t.Fatal(err)
	}
	c, err := compile(expr, cel.DynType, &o.providers)
	if err != nil {
		t.Fatalf("%s: %v", expr, err)
	}
	var a activation
	a.reset(r, base, o.providers.clientIP, &o.providers)
	v, _, err := c.prog.Eval(&a)
	if err != nil {
		return types.WrapErr(err)
	}
	return v
}

// TestVariables evaluates every variable of the catalogue for a request
// that has them all; TestVariablesComplete checks that no variable is
// missing from this table.
func TestVariables(t *testing.T) {
	t.Parallel()
	r, opts := fullRequest(t)
	client := r.TLS.PeerCertificates[0]
	cert := func(prefix string, c *x509.Certificate) map[string]any {
		var exts []map[string]any
		for _, e := range c.Extensions { // the SAN, then the extra 1.2.3.4
			exts = append(exts, map[string]any{"id": e.Id.String(), "critical": e.Critical, "value": e.Value})
		}
		if len(exts) != 2 || exts[1]["id"] != "1.2.3.4" {
			t.Fatalf("test certificate extensions %v", exts)
		}
		m := map[string]any{
			".extensions":                  exts,
			".issuer":                      c.Issuer.String(),
			".issuer.common_name":          c.Subject.CommonName,
			".issuer.country":              []string{"US"},
			".issuer.locality":             []string{"Springfield"},
			".issuer.organization":         []string{"Acme"},
			".issuer.organizational_unit":  []string{"Ops"},
			".issuer.postal_code":          []string{"12345"},
			".issuer.province":             []string{"IL"},
			".issuer.street_address":       []string{"1 Main St"},
			".san":                         "DNS:" + c.Subject.CommonName + ".example.com, IP Address:192.0.2.9, email:ops@example.com, URI:spiffe://acme/" + c.Subject.CommonName,
			".san.dns_names":               []string{c.Subject.CommonName + ".example.com"},
			".san.email_addresses":         []string{"ops@example.com"},
			".san.ip_addresses":            []string{"192.0.2.9"},
			".san.uris":                    []string{"spiffe://acme/" + c.Subject.CommonName},
			".serial_number":               "b53017e7",
			".signature_algorithm":         "ECDSA-SHA256",
			".subject":                     "CN=" + c.Subject.CommonName + ",OU=Ops,O=Acme,POSTALCODE=12345,STREET=1 Main St,L=Springfield,ST=IL,C=US",
			".subject.common_name":         c.Subject.CommonName,
			".subject.country":             []string{"US"},
			".subject.locality":            []string{"Springfield"},
			".subject.organization":        []string{"Acme"},
			".subject.organizational_unit": []string{"Ops"},
			".subject.postal_code":         []string{"12345"},
			".subject.province":            []string{"IL"},
			".subject.street_address":      []string{"1 Main St"},
			".validity.not_after":          time.Date(2027, 1, 1, 0, 0, 0, 0, time.UTC),
			".validity.not_before":         time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC),
		}
		out := map[string]any{}
		for k, v := range m {
			out[prefix+k] = v
		}
		return out
	}
	intel := func(prefix, org string) map[string]any {
		loc := map[string]any{"city": "Chicago", "continent": "North America", "country": "United States",
			"country_code": "US", "is_eu": false, "latitude": "41.88", "longitude": "-87.63", "metro_code": "602",
			"postal_code": "60601", "radius": "5", "subdivision": "Illinois", "timezone": "America/Chicago"}
		reg := map[string]any{"city": "Philadelphia", "continent": "North America", "country": "United States",
			"country_code": "US", "is_eu": false, "metro_code": "504", "subdivision": "Pennsylvania", "timezone": "America/New_York"}
		out := map[string]any{
			prefix + ".categories":      []string{"com.cloudflare.ipv4", "com.cloudflare", "com", "proxy.anonymous.tor", "proxy.anonymous", "proxy"},
			prefix + ".is_on_blocklist": false,
			prefix + ".is_tor_node":     true,
			prefix + ".as.number":       int64(7922),
			prefix + ".as.organization": org,
		}
		for k, v := range loc {
			out[prefix+".geo.location."+k] = v
		}
		for k, v := range reg {
			out[prefix+".geo.registered_location."+k] = v
		}
		return out
	}
	want := map[string]any{
		"conn.bytes_in":                       int64(100),
		"conn.bytes_out":                      int64(200),
		"conn.client_ip":                      "203.0.113.7",
		"conn.client_port":                    int64(51234),
		"conn.server_ip":                      "192.0.2.1",
		"conn.server_port":                    int64(8443),
		"conn.server_region":                  "eu",
		"conn.ts.start":                       connStart,
		"conn.geo.city":                       "Chicago",
		"conn.geo.country":                    "United States",
		"conn.geo.country_code":               "US",
		"conn.geo.latitude":                   "41.88",
		"conn.geo.longitude":                  "-87.63",
		"conn.geo.radius":                     "5",
		"conn.geo.subdivision":                "Illinois",
		"conn.tls.cipher_suite":               "TLS_AES_128_GCM_SHA256",
		"conn.tls.ja4_fingerprint":            "t13d1717h2_5b57614c22b0_f0fc7018f8e8",
		"conn.tls.negotiated_alpn":            "h2",
		"conn.tls.session_resumed":            false,
		"conn.tls.sni":                        "api.example.com",
		"conn.tls.version":                    "1.3",
		"conn.tls.client.pem":                 "-----BEGIN CERTIFICATE-----\n",
		"conn.k8s.pod.id":                     "pod-uid",
		"conn.k8s.pod.metadata.name":          "web-0",
		"conn.k8s.pod.metadata.namespace":     "prod",
		"conn.k8s.pod.metadata.annotations":   map[string]string{"k8s.ngrok.com/team": "a"},
		"conn.k8s.pod.metadata.error_code":    "",
		"conn.k8s.pod.metadata.error_message": "",
		"req.content_encoding":                []string{"gzip", "br"},
		"req.content_length":                  int64(5),
		"req.content_type":                    "application/json",
		"req.content_type.parameters":         map[string]string{"charset": "utf-8"},
		"req.content_type.raw":                "application/json; charset=utf-8",
		"req.cookies": map[string][]map[string]any{
			"session": {testCookie("session", "abc"), testCookie("session", "def")},
			"theme":   {testCookie("theme", "dark")},
		},
		"req.headers": map[string][]string{
			"content-type": {"application/json; charset=utf-8"}, "content-encoding": {"gzip, br"},
			"cookie": {"session=abc; theme=dark; session=def"}, "user-agent": {"Mozilla/5.0 (Macintosh) Safari/10.1.2"},
			"location": {"/next"}, "x-api-key": {"k1", "k2"}, "host": {"api.example.com:8443"},
		},
		"req.host":                  "api.example.com:8443",
		"req.location":              "/next",
		"req.method":                "POST",
		"req.trailers":              map[string][]string{"x-checksum": {"abc"}},
		"req.ts.body_received":      failsWith("the body has not been read"),
		"req.ts.header_received":    base,
		"req.url":                   "https://api.example.com:8443/v1/things%2Fx?b=2&a=1&a=3",
		"req.url.authority":         "user:pw@api.example.com:8443",
		"req.url.host":              "api.example.com",
		"req.url.path":              "/v1/things/x",
		"req.url.port":              int64(8443),
		"req.url.query":             "b=2&a=1&a=3",
		"req.url.query_params":      map[string][]string{"a": {"1", "3"}, "b": {"2"}},
		"req.url.raw":               "https://user:pw@api.example.com:8443/v1/things%2Fx?b=2&a=1&a=3",
		"req.url.raw_path":          "/v1/things%2Fx",
		"req.url.scheme":            "https",
		"req.url.uri":               "/v1/things%2Fx?b=2&a=1&a=3",
		"req.url.user_password":     "user:pw",
		"req.user_agent":            "Mozilla/5.0 (Macintosh) Safari/10.1.2",
		"req.user_agent.name":       "Safari",
		"req.user_agent.version":    "10.1.2",
		"req.user_agent.os":         "macOS",
		"req.user_agent.os_version": "10.12.6",
		"req.user_agent.device":     "Mac",
		"req.user_agent.is_mobile":  false,
		"req.user_agent.is_tablet":  false,
		"req.user_agent.is_desktop": true,
		"req.user_agent.is_bot":     false,
		"req.user_agent.url":        "https://example.com/bot",
		"req.version":               "HTTP/1.1",
		"endpoint.addr":             "api.example.com:443",
		"endpoint.host":             "api.example.com",
		"endpoint.id":               "ep_1",
		"endpoint.port":             int64(443),
		"endpoint.protocol":         "https",
		"endpoint.url":              "https://api.example.com",
		"time.now":                  "2026-01-01T00:00:00Z",
		varBucketKey:                "",
		varLimited:                  false,
		varErrorCode:                "",
		varErrorMessage:             "",
	}
	for _, m := range []map[string]any{cert("conn.tls.client", client), cert("conn.tls.server", testCertFrom(t, opts)),
		intel("conn.client_ip", "COMCAST-7922"), intel("conn.server_ip", "SERVER-AS")} {
		for k, v := range m {
			want[k] = v
		}
	}
	for i := range catalogue {
		name := catalogue[i].name
		t.Run(name, func(t *testing.T) {
			w, ok := want[name]
			if !ok {
				t.Fatalf("no wanted value for %s", name)
			}
			got := evalExpr(t, name, r, opts...)
			switch w := w.(type) {
			case failsWith:
				if !types.IsError(got) || !strings.Contains(got.(*types.Err).Error(), string(w)) {
					t.Errorf("got %v; want an error containing %q", got, w)
				}
				if has := evalExpr(t, "has("+name+")", r, opts...); has != types.False {
					t.Errorf("has(%s) = %v; want false", name, has)
				}
				return
			case string:
				if name == "conn.tls.client.pem" {
					if s, _ := got.Value().(string); !strings.HasPrefix(s, w) {
						t.Errorf("got %v; want a PEM block", got)
					}
					return
				}
			}
			if types.IsError(got) {
				t.Fatalf("error: %v", got)
			}
			if diff := cmp.Diff(w, got.Value()); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
			if has := evalExpr(t, "has("+name+")", r, opts...); has != types.True {
				t.Errorf("has(%s) = %v; want true", name, has)
			}
		})
	}
}

// testCertFrom returns the server certificate the options provide.
func testCertFrom(t testing.TB, opts []LimitOption) *x509.Certificate {
	o, err := buildOptions(opts)
	if err != nil {
		t.Fatal(err)
	}
	return o.providers.serverCert(nil)
}

// TestVariablesComplete pins the catalogue against the research note's
// counts: every name visible in on_http_request except the results of
// actions this package does not run.
func TestVariablesComplete(t *testing.T) {
	t.Parallel()
	count := map[string]int{}
	for _, v := range catalogue {
		ns := v.name
		for _, p := range []string{"conn.tls.client", "conn.tls.server", "conn.client_ip", "conn.server_ip",
			"conn.k8s", "conn.geo", "conn.tls", "actions.ngrok.rate_limit", "conn", "req", "endpoint", "time"} {
			if strings.HasPrefix(v.name, p+".") {
				ns = p
				break
			}
		}
		count[ns]++
	}
	// The note counts extensions[i].id, .critical and .value as three more
	// names per certificate; they are fields of the extensions list here.
	want := map[string]int{"conn": 8, "conn.geo": 7, "conn.tls": 6, "conn.tls.client": 32 - 3, "conn.tls.server": 31 - 3,
		"conn.k8s": 6, "conn.client_ip": 25, "conn.server_ip": 25, "req": 39 - 2, "endpoint": 6, "time": 1,
		"actions.ngrok.rate_limit": 4}
	// req: the note counts req.cookies[k][i].name and .value, which are
	// fields of req.cookies here.
	if diff := cmp.Diff(want, count); diff != "" {
		t.Errorf("variables per namespace (-want +got):\n%s", diff)
	}
}

// TestStringVariablesDirect checks that a bare string variable as a bucket
// key, read without CEL, gives the same key as through CEL.
func TestStringVariablesDirect(t *testing.T) {
	t.Parallel()
	r, opts := fullRequest(t)
	for _, v := range catalogue {
		if v.str == nil {
			continue
		}
		l := actionLimit(t, keyConfig(v.name), opts...)
		viaCEL := actionLimit(t, keyConfig("["+v.name+"][0]"), opts...)
		direct, cel := l.EvaluateAt(r, base), viaCEL.EvaluateAt(r, base)
		if direct.ErrorCode != "" || direct.BucketKey != cel.BucketKey {
			t.Errorf("%s: direct %+v, through CEL %+v", v.name, direct, cel)
		}
	}
}

// TestVariablesWithoutTLS checks the zero values of the TLS variables on a
// plain-HTTP connection, and what a request without the optional parts
// gives.
func TestVariablesWithoutTLS(t *testing.T) {
	t.Parallel()
	r := newRequest("GET", "http://example.com/")
	r.ContentLength = -1
	tests := []struct {
		expr string
		want any
	}{
		{"conn.tls.version", ""},
		{"conn.tls.sni", ""},
		{"conn.tls.cipher_suite", ""},
		{"conn.tls.negotiated_alpn", ""},
		{"conn.tls.session_resumed", false},
		{"conn.tls.client.subject", ""},
		{"conn.tls.client.san.dns_names", []string{}},
		{"conn.tls.client.extensions", []map[string]any{}},
		{"has(conn.tls.client.validity.not_after)", false},
		{"has(req.content_length)", false},
		{"has(req.url.port)", false},
		{"has(conn.bytes_in)", false},
		{"has(conn.ts.start)", false},
		{"req.url.scheme", "http"},
		{"req.url.authority", "example.com"},
		{"req.url.user_password", ""},
		{"req.content_type", ""},
		{"req.content_type.parameters", map[string]string{}},
		{"req.cookies", map[string][]map[string]any{}},
		{"req.content_encoding", []string{}},
		{"conn.server_ip", ""},
		{"conn.server_port", int64(0)},
	}
	for _, tt := range tests {
		got := evalExpr(t, tt.expr, r)
		if types.IsError(got) {
			t.Errorf("%s: %v", tt.expr, got)
			continue
		}
		if diff := cmp.Diff(tt.want, got.Value()); diff != "" {
			t.Errorf("%s (-want +got):\n%s", tt.expr, diff)
		}
	}
}

// TestProviderRequired checks that every provider-backed variable and
// function fails to compile without its option, naming the option, while
// Validate accepts it (the specification allows every variable).
func TestProviderRequired(t *testing.T) {
	t.Parallel()
	exprs := map[string]string{"secrets.get('v', 'n')": "WithSecrets"}
	for _, v := range catalogue {
		// The User-Agent parser is never missing: a built-in one stands in.
		if v.need != provNone && v.need != provUserAgent {
			exprs[v.name] = v.need.option()
		}
	}
	if len(exprs) < 100 {
		t.Fatalf("only %d provider-backed names", len(exprs))
	}
	for name, option := range maps.Clone(exprs) {
		if !strings.Contains(name, "(") {
			// has() reads the variable too (it once skipped the check
			// and then dereferenced the missing provider).
			exprs["has("+name+")"] = option
		}
	}
	for expr, option := range exprs {
		cfg := keyConfig("[" + expr + "]")
		if err := cfg.Validate(); err != nil {
			t.Errorf("%s: Validate: %v", expr, err)
		}
		_, err := NewLimit(cfg)
		if err == nil || !strings.Contains(err.Error(), "ratelimit."+option) {
			t.Errorf("%s: NewLimit error %v; want one naming ratelimit.%s", expr, err, option)
		}
	}
}

// TestRawURLOriginForm checks req.url.raw for a request line in origin
// form whose query holds "://" (once taken for an absolute URL), and in
// absolute form.
func TestRawURLOriginForm(t *testing.T) {
	t.Parallel()
	for uri, want := range map[string]string{
		"/login?next=https://evil.example/x": "http://example.com/login?next=https://evil.example/x",
		"/a://b":                             "http://example.com/a://b",
		"http://api.example.com/v1?x=1":      "http://api.example.com/v1?x=1",
	} {
		r := httptest.NewRequest("GET", uri, nil)
		r.RequestURI = uri
		if got := evalExpr(t, "req.url.raw", r); got != types.String(want) {
			t.Errorf("%s: req.url.raw = %v; want %s", uri, got, want)
		}
	}
}

func TestConnContext(t *testing.T) {
	t.Parallel()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	got := make(chan Result, 1)
	l := mustLimit(t, keyConfig("string(conn.bytes_in) + ':' + string(conn.ts.start > timestamp('2000-01-01T00:00:00Z'))"))
	srv := &http.Server{
		Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			got <- l.EvaluateAt(r, base)
		}),
		ConnContext: ConnContext,
	}
	go func() { _ = srv.Serve(Listener(ln)) }()
	t.Cleanup(func() { _ = srv.Close() })
	resp, err := http.Get("http://" + ln.Addr().String() + "/x")
	if err != nil {
		t.Fatal(err)
	}
	_ = resp.Body.Close()
	res := <-got
	n, ok := strings.CutSuffix(res.BucketKey, ":true")
	if res.ErrorCode != "" || !ok || n == "0" || n == "" {
		t.Errorf("result %+v; want the bytes read so far and a start time", res)
	}
}

// TestTLSConnection serves a real TLS connection through Listener and
// ConnContext: the TLS variables come from the handshake, and the byte
// counts from under the TLS layer.
func TestTLSConnection(t *testing.T) {
	t.Parallel()
	got := make(chan Result, 1)
	l := mustLimit(t, keyConfig("conn.tls.version + ' ' + conn.tls.negotiated_alpn + ' ' + req.url.scheme + ' ' + string(size(conn.tls.cipher_suite) > 0) + ' ' + string(conn.bytes_in > 0)"))
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got <- l.EvaluateAt(r, base)
	}))
	srv.Listener = Listener(srv.Listener)
	srv.Config.ConnContext = ConnContext
	srv.EnableHTTP2 = true
	srv.StartTLS()
	t.Cleanup(srv.Close)
	resp, err := srv.Client().Get(srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	_ = resp.Body.Close()
	if res := <-got; res.ErrorCode != "" || res.BucketKey != "1.3 h2 https true true" {
		t.Errorf("result %+v", res)
	}
}

// TestDirectPathProperty checks, over random requests, that every string
// variable read directly (as a bare bucket key is) equals its value
// through CEL.
func TestDirectPathProperty(t *testing.T) {
	t.Parallel()
	var direct, viaCEL []*Limit
	for _, v := range catalogue {
		if v.str == nil || v.need != provNone {
			continue
		}
		direct = append(direct, actionLimit(t, keyConfig(v.name)))
		viaCEL = append(viaCEL, actionLimit(t, keyConfig("["+v.name+"][0]")))
	}
	rapid.Check(t, func(t *rapid.T) {
		host := rapid.StringMatching(`[a-z0-9.-]{0,12}(:[0-9]{1,5})?`).Draw(t, "host")
		path := rapid.StringMatching(`(/([a-zA-Z0-9._~-]|%[0-9A-F]{2}){0,6}){0,3}`).Draw(t, "path")
		query := rapid.StringMatching(`([a-z]{1,3}=([a-z0-9+]|%[0-9A-F]{2}){0,4}&?){0,3}`).Draw(t, "query")
		r := httptest.NewRequest(rapid.SampledFrom([]string{"GET", "POST", "DELETE"}).Draw(t, "method"), "http://x"+path+"?"+query, nil)
		r.Host = host
		r.RemoteAddr = rapid.SampledFrom([]string{"203.0.113.7:1", "[2001:db8::1]:443", "bogus"}).Draw(t, "remote")
		for _, h := range []string{"User-Agent", "Content-Type", "Location"} {
			if v := rapid.StringMatching(`[ -~]{0,10}`).Draw(t, h); v != "" {
				r.Header.Set(h, v)
			}
		}
		for i := range direct {
			d, c := direct[i].EvaluateAt(r, base), viaCEL[i].EvaluateAt(r, base)
			if d.ErrorCode != "" || d.BucketKey != c.BucketKey {
				t.Fatalf("%s: direct %q, through CEL %q (%s)", direct[i].Config().BucketKey[0], d.BucketKey, c.BucketKey, c.ErrorMessage)
			}
		}
	})
}

// TestContentLengthDeclared pins a review's finding: req.content_length was
// present, 0, on a GET that declares no length, because net/http gives
// such a request a ContentLength of 0. Requests as net/http's server reads
// them (http.ReadRequest): only a declared length, 0 included, is present.
func TestContentLengthDeclared(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		raw  string
		want any // nil: absent
	}{
		{"GET / HTTP/1.1\r\nHost: x\r\n\r\n", nil},
		{"POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 0\r\n\r\n", int64(0)},
		{"POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\n\r\nhello", int64(5)},
		{"POST / HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n0\r\n\r\n", nil},
		{"GET / HTTP/1.0\r\n\r\n", nil},
	} {
		r, err := http.ReadRequest(bufio.NewReader(strings.NewReader(tt.raw)))
		if err != nil {
			t.Fatal(err)
		}
		has := evalExpr(t, "has(req.content_length)", r)
		got := evalExpr(t, "req.content_length", r)
		if tt.want == nil {
			if has != types.False || !types.IsError(got) {
				t.Errorf("%q: has %v, value %v; want absent", tt.raw, has, got)
			}
			continue
		}
		if has != types.True || types.IsError(got) || got.Value() != tt.want {
			t.Errorf("%q: has %v, value %v; want %v", tt.raw, has, got, tt.want)
		}
	}
}
