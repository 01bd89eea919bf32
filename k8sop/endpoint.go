package k8sop

import (
	"errors"
	"fmt"
	"time"

	"github.com/acctapi/acctapi"
	"github.com/acctapi/acctapi/internal/field"
	"github.com/acctapi/acctapi/internal/rest"
)

// Endpoint is an endpoint of the account, as the bound-endpoints list
// returns it. Selectors see it as the CEL variable `endpoint`, with the
// members named as in JSON (endpoint.url, endpoint.bindings, ...); a nil
// reference reads as a reference with empty members.
type Endpoint struct {
	// ID is set by the server: "ep_" and a suffix that sorts by creation time.
	ID string `json:"id"`
	// URI is the endpoint's absolute URL, set by the server.
	URI string `json:"uri"`
	// Region is the region the endpoint is served from.
	Region string `json:"region"`
	// CreatedAt is when the server created the endpoint; RFC 3339 in JSON,
	// UTC, whole seconds.
	CreatedAt time.Time `json:"created_at"`
	// UpdatedAt is when the endpoint last changed, set by the server.
	UpdatedAt time.Time `json:"updated_at"`
	// PublicURL is deprecated by the API in favour of URL.
	PublicURL string `json:"public_url"`
	// Proto is http, https, tcp or tls.
	Proto string `json:"proto"`
	// Scheme is the scheme of URL, such as https.
	Scheme string `json:"scheme"`
	// HostPort is Host and Port as "host:port" (JSON hostport).
	HostPort string `json:"hostport"`
	// Host is the host name of URL.
	Host string `json:"host"`
	// Port is the port of URL.
	Port int64 `json:"port"`
	// Type is such as ephemeral, edge, cloud or agent.
	Type string `json:"type"`
	// Metadata is free-form machine-readable data, at most
	// [acctapi.MaxMetadataBytes] bytes.
	Metadata string `json:"metadata"`
	// Description is a human-readable note, at most
	// [acctapi.MaxDescriptionBytes] bytes.
	Description string `json:"description"`
	// Domain refers to the reserved domain the endpoint is served on, or is
	// nil.
	Domain *acctapi.Ref `json:"domain"`
	// TCPAddr refers to the reserved TCP address the endpoint is served on, or
	// is nil.
	TCPAddr *acctapi.Ref `json:"tcp_addr"`
	// Tunnel refers to the tunnel that serves the endpoint, or is nil. A
	// server that stores endpoints (the fake's seeding) requires it to be
	// a tunnel of the endpoint's account.
	Tunnel *acctapi.Ref `json:"tunnel"`
	// Edge refers to the edge the endpoint belongs to, or is nil.
	Edge *acctapi.Ref `json:"edge"`
	// UpstreamURL is where the endpoint's traffic is forwarded to.
	UpstreamURL string `json:"upstream_url"`
	// UpstreamProto is the protocol spoken to the upstream (JSON
	// upstream_protocol).
	UpstreamProto string `json:"upstream_protocol"`
	// URL is the endpoint's URL, such as https://app.example.com.
	URL string `json:"url"`
	// Principal refers to the user or service user that created the
	// endpoint. A server that stores endpoints requires it to be the
	// account's user or one of its service users (the fake sets the
	// account's user when it is empty).
	Principal acctapi.Ref `json:"principal"`
	// TrafficPolicy is the endpoint's traffic policy document, as text.
	TrafficPolicy string `json:"traffic_policy"`
	// Bindings are such as public, internal or kubernetes.
	Bindings []string `json:"bindings"`
	// TunnelSession refers to the agent session that serves the endpoint, or
	// is nil.
	TunnelSession *acctapi.Ref `json:"tunnel_session"`
	// Name is the endpoint's user-given name.
	Name string `json:"name"`
	// PoolingEnabled reports whether several agents may serve URL, sharing its
	// traffic.
	PoolingEnabled bool `json:"pooling_enabled"`
}

// Validate checks an endpoint that a server is to store (the fake's
// seeded endpoints): that its text is valid UTF-8 (JSON would replace
// each bad byte, and serve other text than the seed's), its description
// and metadata as every resource's,
// and the sizes that [MaxSelectorCost] assumes, so that no selector that
// [CompileSelectors] accepts can fail on it for its cost: each other
// string, a reference's id and uri included, at most
// [MaxEndpointStringBytes] bytes, and at most [MaxBindings] bindings. ID
// and URI, which the server sets, are not checked. The error joins one
// [*acctapi.FieldError] per broken rule, naming the member by its JSON
// path (tunnel.id, bindings[2]).
func (e *Endpoint) Validate() error {
	if err := field.CheckUTF8(e); err != nil {
		return err
	}
	errs := []error{
		field.CheckDescription("description", e.Description),
		field.CheckMetadata("metadata", e.Metadata),
	}
	str := func(name, v string) {
		if len(v) > MaxEndpointStringBytes {
			errs = append(errs, field.Invalid(name, "is %d bytes; at most %d", len(v), MaxEndpointStringBytes))
		}
	}
	for _, m := range []struct{ name, v string }{
		{"region", e.Region}, {"public_url", e.PublicURL}, {"proto", e.Proto}, {"scheme", e.Scheme},
		{"hostport", e.HostPort}, {"host", e.Host}, {"type", e.Type}, {"upstream_url", e.UpstreamURL},
		{"upstream_protocol", e.UpstreamProto}, {"url", e.URL}, {"traffic_policy", e.TrafficPolicy}, {"name", e.Name},
	} {
		str(m.name, m.v)
	}
	for _, r := range []struct {
		name string
		ref  *acctapi.Ref
	}{
		{"domain", e.Domain}, {"tcp_addr", e.TCPAddr}, {"tunnel", e.Tunnel}, {"edge", e.Edge},
		{"principal", &e.Principal}, {"tunnel_session", e.TunnelSession},
	} {
		if r.ref != nil {
			str(r.name+".id", r.ref.ID)
			str(r.name+".uri", r.ref.URI)
		}
	}
	if len(e.Bindings) > MaxBindings {
		errs = append(errs, field.Invalid("bindings", "has %d bindings; at most %d", len(e.Bindings), MaxBindings))
	}
	for i, b := range e.Bindings {
		str(fmt.Sprintf("bindings[%d]", i), b)
	}
	return errors.Join(errs...)
}

// EndpointList is one page of the endpoints bound to an operator.
type EndpointList struct {
	// Endpoints are the page's bound endpoints, newest first.
	Endpoints []Endpoint `json:"endpoints"`
	// URI is the list's absolute URL, without the query.
	URI string `json:"uri"`
	// NextPageURI is the absolute URL of the next page, or nil (JSON null) on
	// the last page.
	NextPageURI *string `json:"next_page_uri"`
}

// PageItems returns the page's endpoints.
func (l *EndpointList) PageItems() []Endpoint { return l.Endpoints }

// NextPage returns the next page's URL, or "" on the last page.
func (l *EndpointList) NextPage() string { return rest.Str(l.NextPageURI) }
