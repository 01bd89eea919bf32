package ratelimit

import (
	"crypto/x509"
	"fmt"
	"net/http"
	"net/netip"
)

// Some Traffic Policy variables need data from outside the request: GeoIP
// and IP intelligence databases, the server's region and endpoint, the
// certificate the server presented, secrets. A user supplies each through
// an option; an expression that uses such a variable without its option
// does not compile, and the error names the option.

// provider identifies one source of outside data.
type provider uint8

const (
	provNone provider = iota
	provIPIntel
	provServerRegion
	provEndpoint
	provSecrets
	provServerCert
	provTLSFingerprint
	provPod
	// provUserAgent is the User-Agent parser: never missing (a built-in
	// one stands in), but refused when given and never read (see unused).
	provUserAgent
	// provClientIP is WithClientIP's function: never missing (the
	// connection's remote address stands in), but refused when given and
	// never read. A variable marks it with varSpec.client, not need: the
	// intelligence variables need provIPIntel and read the client address.
	provClientIP
	lastProvider = provClientIP
	// provClock marks, in providers.used only, an expression that reads
	// the clock (time.now, req.ts.header_received), which WithClock
	// sets: never missing, and not one of the providers above.
	provClock = lastProvider + 1
)

// option returns the name of the option that supplies p.
func (p provider) option() string {
	return [...]string{"", "WithIPIntel", "WithServerRegion", "WithEndpoint", "WithSecrets",
		"WithServerCertificate", "WithTLSFingerprint", "WithPodIdentity", "WithUserAgentParser", "WithClientIP"}[p]
}

// providers holds the user's providers; a nil or absent one is missing.
type providers struct {
	ipIntel        func(netip.Addr) IPIntel
	region         *string
	endpoint       *Endpoint
	secrets        func(vault, name string) (string, error)
	serverCert     func(*http.Request) *x509.Certificate
	tlsFingerprint func(*http.Request) string
	userAgent      func(string) UserAgent
	pod            func(*http.Request) PodIdentity
	clientIP       func(*http.Request) string // WithClientIP's; nil: the remote address
	// used has bit p set once a compiled expression reads what provider
	// p supplies (see checkProviders), so that one given and never read
	// is found (see unused). It is shared by the copies of one
	// constructor's options (buildOptions makes it); nil marks nothing.
	used *uint32
	// left, when not nil, is how many more expressions the constructor
	// may compile (NewPolicy's MaxPolicyExpressions), shared as used is.
	left *int
	// nodesLeft, when not nil, is how many more syntax-tree nodes the
	// constructor's expressions may have (NewPolicy's MaxPolicyNodes),
	// shared as left is.
	nodesLeft *int
}

// unused returns an error for each provider that is configured but that
// no expression compiled with ps reads: the option would do nothing, and
// a test that relies on it would pass without it. where names what was
// compiled ("bucket key", "expression of the policy").
func (ps *providers) unused(where string) []error {
	var errs []error
	if ps.used == nil {
		return nil
	}
	for p := provIPIntel; p <= lastProvider; p++ {
		if ps.given(p) && *ps.used&(1<<p) == 0 {
			what := "what it provides"
			switch p {
			case provUserAgent:
				// The raw header, req.user_agent, does not use the parser.
				what = "a field it parses (req.user_agent.name, .version, .os, .is_bot, ...; not req.user_agent itself)"
			case provClientIP:
				// conn.client_port is the connection's, whatever fn says.
				what = "the client address it provides (conn.client_ip, conn.client_ip.*, conn.geo.*; not conn.client_port)"
			}
			errs = append(errs, fmt.Errorf("ratelimit: %s: no %s reads %s, so it would do nothing; drop it", p.option(), where, what))
		}
	}
	return errs
}

// given reports whether the user gave the provider p.
func (ps *providers) given(p provider) bool {
	switch p {
	case provUserAgent:
		return ps.userAgent != nil
	case provClientIP:
		return ps.clientIP != nil
	}
	return ps.has(p)
}

// has reports whether the provider p is configured (the User-Agent
// parser and the client address always are: the built-in parser and the
// connection's remote address stand in).
func (ps *providers) has(p provider) bool {
	switch p {
	case provIPIntel:
		return ps.ipIntel != nil
	case provServerRegion:
		return ps.region != nil
	case provEndpoint:
		return ps.endpoint != nil
	case provSecrets:
		return ps.secrets != nil
	case provServerCert:
		return ps.serverCert != nil
	case provTLSFingerprint:
		return ps.tlsFingerprint != nil
	case provPod:
		return ps.pod != nil
	}
	return true
}

// IPIntel is what an IP intelligence provider ([WithIPIntel]) knows about
// an address: the values of conn.client_ip.* and conn.server_ip.* (and,
// from Location, conn.geo.*). The zero value means nothing is known, and
// gives empty strings, false and 0.
type IPIntel struct {
	// Categories are the address's category names, such as
	// "proxy.anonymous.tor" or "com.cloudflare.ipv4". The package adds
	// every ancestor ("com.cloudflare", "com"), and derives is_tor_node
	// ("proxy.anonymous.tor") and is_on_blocklist (a category under
	// "blocklist.") from them.
	Categories []string
	// ASNumber and ASOrganization are as.number and as.organization.
	ASNumber       int64
	ASOrganization string // as.organization
	// Location is where the address is located: geo.location.* and
	// conn.geo.*.
	Location GeoLocation
	// Registered is where the address is registered:
	// geo.registered_location.* (which has no latitude, longitude, radius
	// or postal code).
	Registered GeoLocation
}

// GeoLocation is a GeoIP record, with the Traffic Policy's fields.
// Latitude, Longitude and Radius (in kilometres) are strings, as the
// variables are.
type GeoLocation struct {
	City, Continent, Country, CountryCode string // .city, .continent, .country, .country_code ("US")
	IsEU                                  bool   // .is_eu
	Latitude, Longitude, Radius           string // .latitude, .longitude, .radius (km)
	MetroCode, PostalCode                 string // .metro_code, .postal_code
	Subdivision, Timezone                 string // .subdivision, .timezone ("America/Chicago")
}

// WithIPIntel supplies GeoIP and IP intelligence: fn returns what is known
// about an address (for conn.client_ip.*, conn.server_ip.* and conn.geo.*).
// It is called at most once per address and request, only for
// expressions that use those variables; an address that does not parse
// gets the zero [IPIntel] without a call. fn must be safe for concurrent
// use.
func WithIPIntel(fn func(ip netip.Addr) IPIntel) LimitOption {
	return funcOption("WithIPIntel", fn, func(o *options, fn func(netip.Addr) IPIntel) { o.providers.ipIntel = fn })
}

// WithServerRegion sets conn.server_region, which names the region that
// served the connection (at the real service, a point of presence such as
// "eu").
func WithServerRegion(region string) LimitOption {
	return limitOpt(func(o *options) {
		if region == "" {
			o.invalid("WithServerRegion", "the region is empty") // every request would share one region
			return
		}
		o.providers.region = &region
	})
}

// Endpoint describes the endpoint a policy serves: the values of
// endpoint.*.
type Endpoint struct {
	ID       string // endpoint.id
	URL      string // endpoint.url, "https://api.example.com"
	Host     string // endpoint.host, "api.example.com"
	Port     int    // endpoint.port, 443
	Protocol string // endpoint.protocol: "http", "https", "tcp" or "tls"
	Addr     string // endpoint.addr, "api.example.com:443"
}

// WithEndpoint sets the endpoint.* variables.
func WithEndpoint(e Endpoint) LimitOption {
	return limitOpt(func(o *options) {
		if e == (Endpoint{}) {
			o.invalid("WithEndpoint", "the Endpoint is the zero value")
			return
		}
		o.providers.endpoint = &e
	})
}

// WithSecrets supplies secrets.get(vault, name): fn returns the secret, or
// an error, which makes the expression fail to evaluate. fn must be safe
// for concurrent use.
func WithSecrets(fn func(vault, name string) (string, error)) LimitOption {
	return funcOption("WithSecrets", fn, func(o *options, fn func(string, string) (string, error)) { o.providers.secrets = fn })
}

// WithServerCertificate supplies the certificate the server presented on
// the request's connection, for conn.tls.server.* (a
// [crypto/tls.ConnectionState] does not hold it). With one certificate,
// return its Leaf; with several, record the one GetCertificate chose. A
// nil certificate gives empty values.
func WithServerCertificate(fn func(r *http.Request) *x509.Certificate) LimitOption {
	return funcOption("WithServerCertificate", fn, func(o *options, fn func(*http.Request) *x509.Certificate) { o.providers.serverCert = fn })
}

// WithTLSFingerprint supplies conn.tls.ja4_fingerprint, the JA4
// fingerprint of the connection's ClientHello, which only the code that
// terminates TLS sees: compute it with [JA4] in
// tls.Config.GetConfigForClient, keep it with the connection, and return
// it from fn.
func WithTLSFingerprint(fn func(r *http.Request) string) LimitOption {
	return funcOption("WithTLSFingerprint", fn, func(o *options, fn func(*http.Request) string) { o.providers.tlsFingerprint = fn })
}

// UserAgent is a parsed User-Agent header: the values of
// req.user_agent.*.
type UserAgent struct {
	Name, Version  string // "Safari", "10.1.2"
	OS, OSVersion  string // "macOS", "10.12.6"
	Device         string // .device, such as "iPhone"
	URL            string // a URL in the header, as bots often send
	Mobile, Tablet bool   // .is_mobile, .is_tablet
	Desktop, Bot   bool   // .is_desktop, .is_bot
}

// WithUserAgentParser replaces the built-in parser behind
// req.user_agent.name, .version, .os, .os_version, .device, .url,
// .is_mobile, .is_tablet, .is_desktop and .is_bot, which knows the common
// browsers, systems, clients and crawlers by their usual tokens; use it
// for a full user-agent database. fn receives the User-Agent header and
// is called at most once per request. fn must be safe for concurrent use.
// NewLimit and NewPolicy refuse it when no expression reads one of those
// fields: it would do nothing.
func WithUserAgentParser(fn func(userAgent string) UserAgent) LimitOption {
	return funcOption("WithUserAgentParser", fn, func(o *options, fn func(string) UserAgent) { o.providers.userAgent = fn })
}

// PodIdentity is the Kubernetes pod a connection came from: the values of
// conn.k8s.pod.*.
type PodIdentity struct {
	ID, Name, Namespace     string            // .id, .name, .namespace
	Annotations             map[string]string // .annotations
	ErrorCode, ErrorMessage string            // .error_code, .error_message: why the identity is unknown
}

// WithPodIdentity supplies conn.k8s.pod.*, the Kubernetes pod the request
// came from (at the real service, its in-cluster pod identity). fn must be
// safe for concurrent use.
func WithPodIdentity(fn func(r *http.Request) PodIdentity) LimitOption {
	return funcOption("WithPodIdentity", fn, func(o *options, fn func(*http.Request) PodIdentity) { o.providers.pod = fn })
}
