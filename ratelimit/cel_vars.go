package ratelimit

import (
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"fmt"
	"mime"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/google/cel-go/cel"
	"github.com/google/cel-go/common/types"
	"github.com/google/cel-go/common/types/ref"
	"github.com/google/cel-go/interpreter"

	"github.com/acctapi/acctapi/internal/trunc"
)

// varSpec is one Traffic Policy variable: its name, its CEL type, the
// provider it needs (if any), and how to read it from a request. Exactly
// one of str and val is set; str is for string variables, which bucket
// keys read without CEL.
type varSpec struct {
	name string
	typ  *cel.Type
	need provider
	str  func(*activation) string
	val  func(*activation) ref.Val
	// fail, if set, reports why str's value for a is not one (see
	// conn.client_ip).
	fail func(*activation) error
	// client reports that the variable reads the client address
	// (conn.client_ip, or what is looked up for it), which WithClientIP
	// provides; see checkProviders.
	client bool
}

// value returns the variable's CEL value for a.
func (v *varSpec) value(a *activation) ref.Val {
	if v.str != nil {
		s, err := v.read(a)
		if err != nil {
			return types.WrapErr(err)
		}
		return types.String(s)
	}
	return v.val(a)
}

// read returns the value of a string variable for a, or why it has none.
func (v *varSpec) read(a *activation) (string, error) {
	s := v.str(a)
	if v.fail != nil {
		if err := v.fail(a); err != nil {
			return "", err
		}
	}
	return s, nil
}

var (
	strT     = cel.StringType
	intT     = cel.IntType
	boolT    = cel.BoolType
	tsT      = cel.TimestampType
	strList  = cel.ListType(cel.StringType)
	strMap   = cel.MapType(cel.StringType, cel.StringType)
	listMap  = cel.MapType(cel.StringType, strList)
	cookieT  = cel.MapType(cel.StringType, cel.DynType) // see cookieValue
	cookiesT = cel.MapType(cel.StringType, cel.ListType(cookieT))
	extsT    = cel.ListType(cel.MapType(cel.StringType, cel.DynType))
)

// Names of the rate-limit action's result variables.
const (
	varBucketKey    = "actions.ngrok.rate_limit.bucket_key"
	varLimited      = "actions.ngrok.rate_limit.limited"
	varErrorCode    = "actions.ngrok.rate_limit.error.code"
	varErrorMessage = "actions.ngrok.rate_limit.error.message"
)

func strVar(name string, need provider, fn func(*activation) string) varSpec {
	return varSpec{name: name, typ: strT, need: need, str: fn}
}

func valVar(name string, typ *cel.Type, need provider, fn func(*activation) ref.Val) varSpec {
	return varSpec{name: name, typ: typ, need: need, val: fn}
}

func intVar(name string, need provider, fn func(*activation) int64) varSpec {
	return valVar(name, intT, need, func(a *activation) ref.Val { return types.Int(fn(a)) })
}

func boolVar(name string, need provider, fn func(*activation) bool) varSpec {
	return valVar(name, boolT, need, func(a *activation) ref.Val { return types.Bool(fn(a)) })
}

func listVar(name string, need provider, fn func(*activation) []string) varSpec {
	return valVar(name, strList, need, func(a *activation) ref.Val { return stringList(fn(a)) })
}

func stringList(s []string) ref.Val {
	if s == nil {
		s = []string{}
	}
	return types.NewStringList(types.DefaultTypeAdapter, s)
}

// absent is the value of a variable the request does not have: an error
// when evaluated, false for has().
func absent(name, why string) ref.Val {
	return types.NewErr("%s is absent: %s", name, why)
}

// catalogue is every Traffic Policy variable an on_http_request expression
// can use, in the documentation's order. vars indexes it by name.
var catalogue = buildCatalogue()

var varIndex = func() map[string]*varSpec {
	m := make(map[string]*varSpec, len(catalogue))
	for i := range catalogue {
		m[catalogue[i].name] = &catalogue[i]
	}
	return m
}()

func buildCatalogue() []varSpec {
	c := []varSpec{
		// conn.*
		valVar("conn.bytes_in", intT, provNone, func(a *activation) ref.Val { return a.connBytes("conn.bytes_in", true) }),
		valVar("conn.bytes_out", intT, provNone, func(a *activation) ref.Val { return a.connBytes("conn.bytes_out", false) }),
		{name: "conn.client_ip", typ: strT, need: provNone, str: (*activation).clientIPValue, fail: func(a *activation) error { return a.ipErr }, client: true},
		intVar("conn.client_port", provNone, func(a *activation) int64 {
			a.clientIPValue()
			p, _ := strconv.Atoi(a.port)
			return int64(p)
		}),
		strVar("conn.server_ip", provNone, func(a *activation) string { h, _ := a.serverAddr(); return h }),
		intVar("conn.server_port", provNone, func(a *activation) int64 {
			_, port := a.serverAddr()
			p, _ := strconv.Atoi(port)
			return int64(p)
		}),
		strVar("conn.server_region", provServerRegion, func(a *activation) string { return *a.prov.region }),
		valVar("conn.ts.start", tsT, provNone, func(a *activation) ref.Val {
			if info := a.conn(); info != nil {
				return types.Timestamp{Time: info.start}
			}
			return absent("conn.ts.start", "serve with ratelimit.ConnContext to record connection times")
		}),
		// conn.geo.*: the client address's location.
		geoVar("conn.geo.city", func(g *GeoLocation) string { return g.City }),
		geoVar("conn.geo.country", func(g *GeoLocation) string { return g.Country }),
		geoVar("conn.geo.country_code", func(g *GeoLocation) string { return g.CountryCode }),
		geoVar("conn.geo.latitude", func(g *GeoLocation) string { return g.Latitude }),
		geoVar("conn.geo.longitude", func(g *GeoLocation) string { return g.Longitude }),
		geoVar("conn.geo.radius", func(g *GeoLocation) string { return g.Radius }),
		geoVar("conn.geo.subdivision", func(g *GeoLocation) string { return g.Subdivision }),
		// conn.tls.*: zero values on a connection without TLS.
		tlsVar("conn.tls.cipher_suite", func(cs *tls.ConnectionState) string {
			if name, ok := cipherSuites[cs.CipherSuite]; ok {
				return name
			}
			return tls.CipherSuiteName(cs.CipherSuite)
		}),
		strVar("conn.tls.ja4_fingerprint", provTLSFingerprint, func(a *activation) string { return a.prov.tlsFingerprint(a.r) }),
		tlsVar("conn.tls.negotiated_alpn", func(cs *tls.ConnectionState) string { return cs.NegotiatedProtocol }),
		boolVar("conn.tls.session_resumed", provNone, func(a *activation) bool { return a.r.TLS != nil && a.r.TLS.DidResume }),
		tlsVar("conn.tls.sni", func(cs *tls.ConnectionState) string { return cs.ServerName }),
		tlsVar("conn.tls.version", func(cs *tls.ConnectionState) string { return tlsVersion(cs.Version) }),
	}
	c = append(c, certVars("conn.tls.client", provNone, true, func(a *activation) *x509.Certificate {
		if cs := a.r.TLS; cs != nil && len(cs.PeerCertificates) > 0 {
			return cs.PeerCertificates[0]
		}
		return nil
	})...)
	c = append(c, certVars("conn.tls.server", provServerCert, false, func(a *activation) *x509.Certificate {
		return a.prov.serverCert(a.r)
	})...)
	pod := func(a *activation) *PodIdentity {
		m := a.more()
		if !m.podDone {
			m.podDone = true
			m.pod = a.prov.pod(a.r)
		}
		return &m.pod
	}
	c = append(c,
		strVar("conn.k8s.pod.id", provPod, func(a *activation) string { return pod(a).ID }),
		strVar("conn.k8s.pod.metadata.name", provPod, func(a *activation) string { return pod(a).Name }),
		strVar("conn.k8s.pod.metadata.namespace", provPod, func(a *activation) string { return pod(a).Namespace }),
		valVar("conn.k8s.pod.metadata.annotations", strMap, provPod, func(a *activation) ref.Val {
			m := pod(a).Annotations
			if m == nil {
				m = map[string]string{}
			}
			return celValue(m)
		}),
		strVar("conn.k8s.pod.metadata.error_code", provPod, func(a *activation) string { return pod(a).ErrorCode }),
		strVar("conn.k8s.pod.metadata.error_message", provPod, func(a *activation) string { return pod(a).ErrorMessage }),
	)
	c = append(c, clientVars(intelVars("conn.client_ip", func(a *activation) *IPIntel {
		return a.intel(&a.more().clientIntel, a.clientIPValue())
	}))...)
	c = append(c, intelVars("conn.server_ip", func(a *activation) *IPIntel {
		h, _ := a.serverAddr()
		return a.intel(&a.more().serverIntel, h)
	})...)
	c = append(c, reqVars()...)
	ep := func(name string, fn func(*Endpoint) string) varSpec {
		return strVar(name, provEndpoint, func(a *activation) string { return fn(a.prov.endpoint) })
	}
	c = append(c,
		ep("endpoint.addr", func(e *Endpoint) string { return e.Addr }),
		ep("endpoint.host", func(e *Endpoint) string { return e.Host }),
		ep("endpoint.id", func(e *Endpoint) string { return e.ID }),
		intVar("endpoint.port", provEndpoint, func(a *activation) int64 { return int64(a.prov.endpoint.Port) }),
		ep("endpoint.protocol", func(e *Endpoint) string { return e.Protocol }),
		ep("endpoint.url", func(e *Endpoint) string { return e.URL }),
		strVar("time.now", provNone, func(a *activation) string { return a.now.UTC().Format(time.RFC3339) }),
		strVar(varBucketKey, provNone, func(a *activation) string { return a.vars.bucketKey }),
		boolVar(varLimited, provNone, func(a *activation) bool { return a.vars.limited }),
		strVar(varErrorCode, provNone, func(a *activation) string { return a.vars.errCode }),
		strVar(varErrorMessage, provNone, func(a *activation) string { return a.vars.errMessage }),
	)
	return c
}

// tlsVar is a string variable of the connection's TLS state, empty
// without TLS.
func tlsVar(name string, fn func(*tls.ConnectionState) string) varSpec {
	return strVar(name, provNone, func(a *activation) string {
		if cs := a.r.TLS; cs != nil {
			return fn(cs)
		}
		return ""
	})
}

func geoVar(name string, fn func(*GeoLocation) string) varSpec {
	v := strVar(name, provIPIntel, func(a *activation) string {
		return fn(&a.intel(&a.more().clientIntel, a.clientIPValue()).Location)
	})
	v.client = true
	return v
}

// clientVars marks vs as reading the client address (see varSpec.client).
func clientVars(vs []varSpec) []varSpec {
	for i := range vs {
		vs[i].client = true
	}
	return vs
}

// cipherSuites names the suites crypto/tls knows, so that reading
// conn.tls.cipher_suite does not allocate (tls.CipherSuiteName does).
var cipherSuites = func() map[uint16]string {
	m := map[uint16]string{}
	for _, s := range append(tls.CipherSuites(), tls.InsecureCipherSuites()...) {
		m[s.ID] = s.Name
	}
	return m
}()

func tlsVersion(v uint16) string {
	switch v {
	case tls.VersionTLS10:
		return "1.0"
	case tls.VersionTLS11:
		return "1.1"
	case tls.VersionTLS12:
		return "1.2"
	case tls.VersionTLS13:
		return "1.3"
	}
	return ""
}

// certVars returns the variables of one certificate under prefix. A
// missing certificate gives empty strings and lists, and validity
// timestamps that are absent.
func certVars(prefix string, need provider, withPEM bool, cert func(*activation) *x509.Certificate) []varSpec {
	s := func(name string, fn func(*x509.Certificate) string) varSpec {
		return strVar(prefix+"."+name, need, func(a *activation) string {
			if c := cert(a); c != nil {
				return fn(c)
			}
			return ""
		})
	}
	l := func(name string, fn func(*x509.Certificate) []string) varSpec {
		return listVar(prefix+"."+name, need, func(a *activation) []string {
			if c := cert(a); c != nil {
				return fn(c)
			}
			return nil
		})
	}
	ts := func(name string, fn func(*x509.Certificate) time.Time) varSpec {
		return valVar(prefix+"."+name, tsT, need, func(a *activation) ref.Val {
			if c := cert(a); c != nil {
				return types.Timestamp{Time: fn(c)}
			}
			return absent(prefix+"."+name, "the connection has no such certificate")
		})
	}
	dn := func(part string, name func(*x509.Certificate) *pkix.Name) []varSpec {
		return []varSpec{
			s(part, func(c *x509.Certificate) string { return name(c).String() }),
			s(part+".common_name", func(c *x509.Certificate) string { return name(c).CommonName }),
			l(part+".country", func(c *x509.Certificate) []string { return name(c).Country }),
			l(part+".locality", func(c *x509.Certificate) []string { return name(c).Locality }),
			l(part+".organization", func(c *x509.Certificate) []string { return name(c).Organization }),
			l(part+".organizational_unit", func(c *x509.Certificate) []string { return name(c).OrganizationalUnit }),
			l(part+".postal_code", func(c *x509.Certificate) []string { return name(c).PostalCode }),
			l(part+".province", func(c *x509.Certificate) []string { return name(c).Province }),
			l(part+".street_address", func(c *x509.Certificate) []string { return name(c).StreetAddress }),
		}
	}
	out := []varSpec{
		valVar(prefix+".extensions", extsT, need, func(a *activation) ref.Val {
			var exts []map[string]any
			if c := cert(a); c != nil {
				for _, e := range c.Extensions {
					exts = append(exts, map[string]any{"id": e.Id.String(), "critical": e.Critical, "value": e.Value})
				}
			}
			if exts == nil {
				exts = []map[string]any{}
			}
			return celValue(exts)
		}),
	}
	out = append(out, dn("issuer", func(c *x509.Certificate) *pkix.Name { return &c.Issuer })...)
	if withPEM {
		out = append(out, s("pem", func(c *x509.Certificate) string {
			return string(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: c.Raw}))
		}))
	}
	out = append(out,
		s("san", sanString),
		l("san.dns_names", func(c *x509.Certificate) []string { return c.DNSNames }),
		l("san.email_addresses", func(c *x509.Certificate) []string { return c.EmailAddresses }),
		l("san.ip_addresses", func(c *x509.Certificate) []string { return mapStrings(c.IPAddresses, net.IP.String) }),
		l("san.uris", func(c *x509.Certificate) []string { return mapStrings(c.URIs, (*url.URL).String) }),
		s("serial_number", func(c *x509.Certificate) string { return c.SerialNumber.Text(16) }),
		s("signature_algorithm", func(c *x509.Certificate) string { return c.SignatureAlgorithm.String() }),
	)
	out = append(out, dn("subject", func(c *x509.Certificate) *pkix.Name { return &c.Subject })...)
	return append(out,
		ts("validity.not_after", func(c *x509.Certificate) time.Time { return c.NotAfter }),
		ts("validity.not_before", func(c *x509.Certificate) time.Time { return c.NotBefore }),
	)
}

func mapStrings[T any](in []T, fn func(T) string) []string {
	out := make([]string, len(in))
	for i, v := range in {
		out[i] = fn(v)
	}
	return out
}

// sanString writes the subject alternative names as OpenSSL does
// ("DNS:a.example, IP Address:192.0.2.1"): DNS names, then IP addresses,
// email addresses and URIs, each in certificate order.
func sanString(c *x509.Certificate) string {
	var parts []string
	for _, d := range c.DNSNames {
		parts = append(parts, "DNS:"+d)
	}
	for _, ip := range c.IPAddresses {
		parts = append(parts, "IP Address:"+ip.String())
	}
	for _, e := range c.EmailAddresses {
		parts = append(parts, "email:"+e)
	}
	for _, u := range c.URIs {
		parts = append(parts, "URI:"+u.String())
	}
	return strings.Join(parts, ", ")
}

// intelVars returns the IP intelligence variables under prefix.
func intelVars(prefix string, intel func(*activation) *IPIntel) []varSpec {
	s := func(name string, fn func(*IPIntel) string) varSpec {
		return strVar(prefix+"."+name, provIPIntel, func(a *activation) string { return fn(intel(a)) })
	}
	b := func(name string, fn func(*IPIntel) bool) varSpec {
		return boolVar(prefix+"."+name, provIPIntel, func(a *activation) bool { return fn(intel(a)) })
	}
	out := []varSpec{
		listVar(prefix+".categories", provIPIntel, func(a *activation) []string { return withAncestors(intel(a).Categories) }),
		b("is_on_blocklist", func(in *IPIntel) bool {
			return slices.ContainsFunc(in.Categories, func(c string) bool { return c == "blocklist" || strings.HasPrefix(c, "blocklist.") })
		}),
		b("is_tor_node", func(in *IPIntel) bool { return slices.Contains(in.Categories, "proxy.anonymous.tor") }),
		intVar(prefix+".as.number", provIPIntel, func(a *activation) int64 { return intel(a).ASNumber }),
		s("as.organization", func(in *IPIntel) string { return in.ASOrganization }),
	}
	loc := func(kind string, reg bool, get func(*IPIntel) *GeoLocation) {
		p := "geo." + kind + "."
		out = append(out,
			s(p+"city", func(in *IPIntel) string { return get(in).City }),
			s(p+"continent", func(in *IPIntel) string { return get(in).Continent }),
			s(p+"country", func(in *IPIntel) string { return get(in).Country }),
			s(p+"country_code", func(in *IPIntel) string { return get(in).CountryCode }),
			b(p+"is_eu", func(in *IPIntel) bool { return get(in).IsEU }),
			s(p+"metro_code", func(in *IPIntel) string { return get(in).MetroCode }),
			s(p+"subdivision", func(in *IPIntel) string { return get(in).Subdivision }),
			s(p+"timezone", func(in *IPIntel) string { return get(in).Timezone }),
		)
		if !reg {
			out = append(out,
				s(p+"latitude", func(in *IPIntel) string { return get(in).Latitude }),
				s(p+"longitude", func(in *IPIntel) string { return get(in).Longitude }),
				s(p+"postal_code", func(in *IPIntel) string { return get(in).PostalCode }),
				s(p+"radius", func(in *IPIntel) string { return get(in).Radius }),
			)
		}
	}
	loc("location", false, func(in *IPIntel) *GeoLocation { return &in.Location })
	loc("registered_location", true, func(in *IPIntel) *GeoLocation { return &in.Registered })
	return out
}

// withAncestors returns cats with every ancestor of each added once:
// "com.cloudflare.ipv4" brings "com.cloudflare" and "com".
func withAncestors(cats []string) []string {
	var out []string
	for _, c := range cats {
		for {
			if !slices.Contains(out, c) {
				out = append(out, c)
			}
			i := strings.LastIndexByte(c, '.')
			if i < 0 {
				break
			}
			c = c[:i]
		}
	}
	return out
}

func reqVars() []varSpec {
	ua := func(name string, fn func(*UserAgent) string) varSpec {
		return strVar("req.user_agent."+name, provUserAgent, func(a *activation) string { return fn(a.userAgent()) })
	}
	uab := func(name string, fn func(*UserAgent) bool) varSpec {
		return boolVar("req.user_agent."+name, provUserAgent, func(a *activation) bool { return fn(a.userAgent()) })
	}
	return []varSpec{
		listVar("req.content_encoding", provNone, func(a *activation) []string {
			var out []string
			for _, v := range a.r.Header.Values("Content-Encoding") {
				for p := range strings.SplitSeq(v, ",") {
					if p = strings.TrimSpace(p); p != "" {
						out = append(out, p)
					}
				}
			}
			return out
		}),
		valVar("req.content_length", intT, provNone, func(a *activation) ref.Val {
			// net/http gives a request without a body and without a
			// Content-Length (a GET) a length of 0, and one whose length
			// is unknown (chunked) -1; only a declared length, or a known
			// one above 0, is present.
			if n := a.r.ContentLength; n > 0 || n == 0 && a.r.Header["Content-Length"] != nil {
				return types.Int(n)
			}
			return absent("req.content_length", "the request does not declare its length")
		}),
		strVar("req.content_type", provNone, func(a *activation) string { t, _ := a.contentType(); return t }),
		valVar("req.content_type.parameters", strMap, provNone, func(a *activation) ref.Val {
			_, p := a.contentType()
			return celValue(p)
		}),
		strVar("req.content_type.raw", provNone, func(a *activation) string { return a.r.Header.Get("Content-Type") }),
		valVar("req.cookies", cookiesT, provNone, func(a *activation) ref.Val {
			m := map[string][]map[string]any{}
			for _, c := range a.cookies() {
				m[c.Name] = append(m[c.Name], cookieValue(c))
			}
			return celValue(m)
		}),
		valVar("req.headers", listMap, provNone, func(a *activation) ref.Val { return a.headerMap() }),
		strVar("req.host", provNone, func(a *activation) string { return a.r.Host }),
		strVar("req.location", provNone, func(a *activation) string { return a.r.Header.Get("Location") }),
		strVar("req.method", provNone, func(a *activation) string { return a.r.Method }),
		valVar("req.trailers", listMap, provNone, func(a *activation) ref.Val { return lowerMap(a.r.Trailer, "") }),
		valVar("req.ts.body_received", tsT, provNone, func(*activation) ref.Val {
			return absent("req.ts.body_received", "the body has not been read when on_http_request runs")
		}),
		valVar("req.ts.header_received", tsT, provNone, func(a *activation) ref.Val { return types.Timestamp{Time: a.now} }),
		strVar("req.url", provNone, (*activation).fullURL),
		strVar("req.url.authority", provNone, func(a *activation) string {
			if u := a.r.URL.User; u != nil {
				return u.String() + "@" + a.host()
			}
			return a.host()
		}),
		strVar("req.url.host", provNone, func(a *activation) string { h, _ := splitHostPort(a.host()); return trimBrackets(h) }),
		strVar("req.url.path", provNone, func(a *activation) string { return a.r.URL.Path }),
		valVar("req.url.port", intT, provNone, func(a *activation) ref.Val {
			_, p := splitHostPort(a.host())
			if n, err := strconv.Atoi(p); err == nil {
				return types.Int(n)
			}
			return absent("req.url.port", "the URL has no port")
		}),
		strVar("req.url.query", provNone, func(a *activation) string { return a.r.URL.RawQuery }),
		valVar("req.url.query_params", listMap, provNone, func(a *activation) ref.Val {
			return celValue(map[string][]string(a.queryValues()))
		}),
		strVar("req.url.raw", provNone, func(a *activation) string {
			uri := a.r.RequestURI
			if u, err := url.Parse(uri); err == nil && u.IsAbs() && u.Host != "" {
				return uri // the request line had an absolute URL
			}
			if uri == "" {
				uri = a.r.URL.RequestURI()
			}
			return a.scheme() + "://" + a.host() + uri
		}),
		strVar("req.url.raw_path", provNone, func(a *activation) string { return a.r.URL.EscapedPath() }),
		strVar("req.url.scheme", provNone, (*activation).scheme),
		strVar("req.url.uri", provNone, func(a *activation) string { return a.r.URL.RequestURI() }),
		strVar("req.url.user_password", provNone, func(a *activation) string {
			if u := a.r.URL.User; u != nil {
				return u.String()
			}
			return ""
		}),
		strVar("req.user_agent", provNone, func(a *activation) string { return a.r.UserAgent() }),
		ua("name", func(u *UserAgent) string { return u.Name }),
		ua("version", func(u *UserAgent) string { return u.Version }),
		ua("os", func(u *UserAgent) string { return u.OS }),
		ua("os_version", func(u *UserAgent) string { return u.OSVersion }),
		ua("device", func(u *UserAgent) string { return u.Device }),
		uab("is_mobile", func(u *UserAgent) bool { return u.Mobile }),
		uab("is_tablet", func(u *UserAgent) bool { return u.Tablet }),
		uab("is_desktop", func(u *UserAgent) bool { return u.Desktop }),
		uab("is_bot", func(u *UserAgent) bool { return u.Bot }),
		ua("url", func(u *UserAgent) string { return u.URL }),
		strVar("req.version", provNone, func(a *activation) string { return a.r.Proto }),
	}
}

func trimBrackets(h string) string {
	return strings.TrimSuffix(strings.TrimPrefix(h, "["), "]")
}

// actionVars are the rate-limit action's result variables.
type actionVars struct {
	bucketKey, errCode, errMessage string
	limited                        bool
}

// activation resolves the Traffic Policy variables for one request. It is
// reused through a pool, so evaluating needs no map per request; values
// that cost something to compute are computed on first use.
type activation struct {
	r        *http.Request
	now      time.Time
	clientIP func(*http.Request) string
	prov     *providers
	vars     actionVars

	ip, port  string
	ipErr     error // WithClientIP's answer is not an address
	ipDone    bool
	query     url.Values
	queryDone bool
	// the longest query parameter's name length, and the longest header
	// name's plus one (0 while not yet computed, see longestHeader, so
	// that reset's literal needs no field for it: a non-zero one there
	// made BenchmarkEvaluate/req.host about 7 ns slower)
	queryLongest, headerLongest1 int
	headers                      ref.Val
	local                        net.Addr
	localDone                    bool
	self                         requestHandle
	// lz holds what few expressions read; it survives reset, so a pooled
	// activation allocates it once, and is cleared only when used, so
	// that reset stays cheap.
	lz     *lazy
	lzUsed bool
}

// lazy caches the values that only some expressions need.
type lazy struct {
	ctype       string
	cparams     map[string]string
	ctypeDone   bool
	cookieList  []*http.Cookie
	cookiesDone bool
	ua          UserAgent
	uaDone      bool
	pod         PodIdentity
	podDone     bool
	clientIntel intelCache
	serverIntel intelCache
	connDone    bool
	connInfo    *connInfo
}

// more returns a's lazy cache, cleared for this request.
func (a *activation) more() *lazy {
	if !a.lzUsed {
		a.lzUsed = true
		if a.lz == nil {
			a.lz = new(lazy)
		}
	}
	return a.lz
}

type intelCache struct {
	done bool
	v    IPIntel
}

var _ interpreter.Activation = (*activation)(nil)

var noProviders providers

// reset prepares a for r at now; prov may be nil.
func (a *activation) reset(r *http.Request, now time.Time, clientIP func(*http.Request) string, prov *providers) {
	if prov == nil {
		prov = &noProviders
	}
	lz := a.lz
	if a.lzUsed {
		*lz = lazy{}
	}
	*a = activation{r: r, now: now, clientIP: clientIP, prov: prov, lz: lz}
	a.self = requestHandle{a}
}

// ResolveName implements interpreter.Activation.
func (a *activation) ResolveName(name string) (any, bool) {
	if name == varRequest {
		return a.self, true
	}
	if v, ok := varIndex[name]; ok {
		return v.value(a), true
	}
	return nil, false
}

// Parent implements interpreter.Activation.
func (a *activation) Parent() interpreter.Activation { return nil }

// host is the request's host, from the URL when the request line had an
// absolute URL, else from the Host header.
func (a *activation) host() string {
	if a.r.URL.Host != "" {
		return a.r.URL.Host
	}
	return a.r.Host
}

func (a *activation) scheme() string {
	if s := a.r.URL.Scheme; s != "" {
		return strings.ToLower(s)
	}
	if a.r.TLS != nil {
		return "https"
	}
	return "http"
}

// fullURL is req.url: scheme, host and request URI, without user
// information.
func (a *activation) fullURL() string {
	u := *a.r.URL
	u.User = nil
	u.Host = a.host()
	u.Scheme = a.scheme()
	return u.String()
}

func (a *activation) clientIPValue() string {
	if !a.ipDone {
		a.ipDone = true
		a.ip, a.port = splitHostPort(a.r.RemoteAddr)
		if a.clientIP != nil {
			a.ip = a.clientIP(a.r)
			if _, err := netip.ParseAddr(a.ip); err != nil {
				a.ipErr = &budgetError{fmt.Sprintf("WithClientIP's function returned %q, which is not an IP address (conn.client_ip is one, without a port: r.RemoteAddr is host:port)", trunc.String(a.ip, 64))}
			}
		}
	}
	return a.ip
}

func (a *activation) serverAddr() (string, string) {
	if !a.localDone {
		a.localDone = true
		a.local, _ = a.r.Context().Value(http.LocalAddrContextKey).(net.Addr)
	}
	if a.local == nil {
		return "", ""
	}
	return splitHostPort(a.local.String())
}

func splitHostPort(addr string) (string, string) {
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return addr, ""
	}
	return host, port
}

func (a *activation) queryValues() url.Values {
	if !a.queryDone {
		a.queryDone = true
		a.query, _ = url.ParseQuery(a.r.URL.RawQuery)
		for k := range a.query {
			a.queryLongest = max(a.queryLongest, len(k))
		}
	}
	return a.query
}

func (a *activation) contentType() (string, map[string]string) {
	m := a.more()
	if !m.ctypeDone {
		m.ctypeDone = true
		raw := a.r.Header.Get("Content-Type")
		t, params, err := mime.ParseMediaType(raw)
		if err != nil {
			t, _, _ = strings.Cut(raw, ";")
			t = strings.ToLower(strings.TrimSpace(t))
		}
		if params == nil {
			params = map[string]string{}
		}
		m.ctype, m.cparams = t, params
	}
	return m.ctype, m.cparams
}

func (a *activation) cookies() []*http.Cookie {
	m := a.more()
	if !m.cookiesDone {
		m.cookiesDone = true
		m.cookieList = a.r.Cookies()
	}
	return m.cookieList
}

func (a *activation) userAgent() *UserAgent {
	m := a.more()
	if !m.uaDone {
		m.uaDone = true
		if parse := a.prov.userAgent; parse != nil {
			m.ua = parse(a.r.UserAgent())
		} else {
			m.ua = parseUserAgent(a.r.UserAgent())
		}
	}
	return &m.ua
}

// intel returns what the IP intelligence provider knows about addr,
// asking it once per request.
func (a *activation) intel(c *intelCache, addr string) *IPIntel {
	if !c.done {
		c.done = true
		if ip, err := netip.ParseAddr(addr); err == nil {
			c.v = a.prov.ipIntel(ip)
		}
	}
	return &c.v
}

func (a *activation) conn() *connInfo {
	m := a.more()
	if !m.connDone {
		m.connDone = true
		m.connInfo, _ = a.r.Context().Value(connKey{}).(*connInfo)
	}
	return m.connInfo
}

func (a *activation) connBytes(name string, in bool) ref.Val {
	info := a.conn()
	if info == nil || info.count == nil {
		return absent(name, "serve with ratelimit.Listener and ratelimit.ConnContext to count bytes")
	}
	if in {
		return types.Int(info.count.in.Load())
	}
	return types.Int(info.count.out.Load())
}

// headerMap returns req.headers: lower-case names to lists of values,
// with host from the request's Host.
func (a *activation) headerMap() ref.Val {
	if a.headers == nil {
		a.headers = lowerMap(a.r.Header, a.r.Host)
	}
	return a.headers
}

// lowerMap returns h with lower-case names as a CEL map whose lookups
// ignore case, so that req.headers['User-Agent'] and
// 'Authorization' in req.headers work as the documentation's examples
// expect. host, when not empty, is added as "host".
func lowerMap(h http.Header, host string) ref.Val {
	m := make(map[string][]string, len(h)+1)
	for k, v := range h {
		m[strings.ToLower(k)] = v
	}
	if host != "" {
		m["host"] = []string{host}
	}
	return foldMap{celValue(m).(orderedMap)}
}

// foldMap is an orderedMap with lower-case string keys whose lookups
// lower-case the key, except a key longer than any of the map's, which is
// absent without being lowered (see orderedMap.absent): lowering copies
// it, and a lookup is charged one unit, so a 1 MiB header used as a key a
// thousand times allocated a gigabyte.
type foldMap struct{ orderedMap }

// fold returns k lower-cased, or as it is when it is not a string or is
// absent.
func (m foldMap) fold(k ref.Val) ref.Val {
	if s, ok := k.(types.String); ok && !m.absent(k) {
		return types.String(strings.ToLower(string(s)))
	}
	return k
}

func (m foldMap) Contains(k ref.Val) ref.Val     { return m.orderedMap.Contains(m.fold(k)) }
func (m foldMap) Get(k ref.Val) ref.Val          { return m.orderedMap.Get(m.fold(k)) }
func (m foldMap) Find(k ref.Val) (ref.Val, bool) { return m.orderedMap.Find(m.fold(k)) }
