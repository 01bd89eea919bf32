package k8sop

import (
	"time"

	"github.com/acctapi/acctapi"
	"github.com/acctapi/acctapi/internal/rest"
)

// Endpoint is an endpoint of the account, as the bound-endpoints list
// returns it. Selectors see it as the CEL variable `endpoint`, with the
// members named as in JSON (endpoint.url, endpoint.bindings, ...); a nil
// reference reads as a reference with empty members.
type Endpoint struct {
	ID        string    `json:"id"`
	URI       string    `json:"uri"`
	Region    string    `json:"region"`
	CreatedAt time.Time `json:"created_at"`
	UpdatedAt time.Time `json:"updated_at"`
	// PublicURL is deprecated by the API in favour of URL.
	PublicURL string `json:"public_url"`
	// Proto is http, https, tcp or tls.
	Proto    string `json:"proto"`
	Scheme   string `json:"scheme"`
	HostPort string `json:"hostport"`
	Host     string `json:"host"`
	Port     int64  `json:"port"`
	// Type is such as ephemeral, edge, cloud or agent.
	Type          string       `json:"type"`
	Metadata      string       `json:"metadata"`
	Description   string       `json:"description"`
	Domain        *acctapi.Ref `json:"domain"`
	TCPAddr       *acctapi.Ref `json:"tcp_addr"`
	Tunnel        *acctapi.Ref `json:"tunnel"`
	Edge          *acctapi.Ref `json:"edge"`
	UpstreamURL   string       `json:"upstream_url"`
	UpstreamProto string       `json:"upstream_protocol"`
	URL           string       `json:"url"`
	Principal     acctapi.Ref  `json:"principal"`
	TrafficPolicy string       `json:"traffic_policy"`
	// Bindings are such as public, internal or kubernetes.
	Bindings       []string     `json:"bindings"`
	TunnelSession  *acctapi.Ref `json:"tunnel_session"`
	Name           string       `json:"name"`
	PoolingEnabled bool         `json:"pooling_enabled"`
}

// EndpointList is one page of the endpoints bound to an operator.
type EndpointList struct {
	Endpoints   []Endpoint `json:"endpoints"`
	URI         string     `json:"uri"`
	NextPageURI *string    `json:"next_page_uri"`
}

// PageItems returns the page's endpoints.
func (l *EndpointList) PageItems() []Endpoint { return l.Endpoints }

// NextPage returns the next page's URL, or "" on the last page.
func (l *EndpointList) NextPage() string { return rest.Str(l.NextPageURI) }
