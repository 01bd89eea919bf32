package fake

import (
	"fmt"
	"github.com/google/cel-go/common/types/ref"
	"maps"
	"net/http"
	"slices"
	"time"

	memdb "github.com/hashicorp/go-memdb"

	"github.com/acctapi/acctapi"
	"github.com/acctapi/acctapi/backends"
)

const (
	kindFailover     = "backends/failover"
	kindHTTPResponse = "backends/http_response"
	kindTunnelGroup  = "backends/tunnel_group"
	kindTunnel       = "tunnels"
)

// backendKinds are the kinds a failover backend may reference.
var backendKinds = []string{kindFailover, kindHTTPResponse, kindTunnelGroup}

// Tunnel is a tunnel of an account. Tunnels have no API path; seed them
// with [Seed] (&Tunnel{...} as the request) so that tunnel group backends
// find them by their labels.
type Tunnel struct {
	// ID is the tunnel's tn_ id, set by the fake when seeded.
	ID string `json:"id"`
	// URI is the tunnel's absolute URL, set by the fake.
	URI string `json:"uri"`
	// Labels are the tunnel's labels, which tunnel group backends match;
	// keys and values non-empty.
	Labels map[string]string `json:"labels"`
	// CreatedAt is set by the fake from its clock.
	CreatedAt time.Time `json:"created_at"`
}

// Validate checks a seeded tunnel: it may have no labels, and otherwise
// follows [backends.CheckLabels] (keys and values not empty).
func (t *Tunnel) Validate() error {
	if len(t.Labels) == 0 {
		return nil
	}
	return backends.CheckLabels(t.Labels)
}

// checkBackendRefs checks that every id is a backend of the account.
func checkBackendRefs(c *call, ids []string) error {
	for i, id := range ids {
		found := false
		for _, k := range backendKinds {
			found = found || lookup(c.txn, c.account, k, id) != nil
		}
		if !found {
			return &apiError{status: http.StatusBadRequest, code: acctapi.CodeUnknownBackend, field: fmt.Sprintf("backends[%d]", i),
				msg: fmt.Sprintf("Cannot save backend reference %q because it does not exist.", truncate(id, 64))}
		}
	}
	return nil
}

// checkNoLoop refuses child backends that lead back to the failover id
// through other failovers: a failover may not contain itself, directly or
// not (and a loop could never be deleted, each part referencing the next).
func checkNoLoop(c *call, id string, children []string) error {
	seen := map[string]bool{}
	var reaches func(b string) bool
	reaches = func(b string) bool {
		if b == id {
			return true
		}
		if seen[b] {
			return false
		}
		seen[b] = true
		o := lookup(c.txn, c.account, kindFailover, b)
		return o != nil && slices.ContainsFunc(o.Value.(backends.Failover).Backends, reaches)
	}
	for i, b := range children {
		if reaches(b) {
			return &apiError{status: http.StatusBadRequest, code: acctapi.CodeInvalidValue, field: fmt.Sprintf("backends[%d]", i),
				msg: fmt.Sprintf("Backend %q leads back to failover %q; a failover may not contain itself.", truncate(b, 64), id)}
		}
	}
	return nil
}

func (s *Server) registerBackends() {
	register(s, &resource[backends.Failover, backends.FailoverCreate, backends.FailoverUpdate]{
		kind: kindFailover, prefix: "bkdfo", member: "backends",
		build: func(c *call, id string, in *backends.FailoverCreate) (backends.Failover, meta, error) {
			v := backends.Failover{ID: id, CreatedAt: c.now, Description: in.Description, Metadata: in.Metadata, Backends: orEmpty(in.Backends)}
			return v, meta{refs: v.Backends}, checkBackendRefs(c, v.Backends)
		},
		apply: func(c *call, v backends.Failover, in *backends.FailoverUpdate) (backends.Failover, meta, error) {
			patch(&v.Description, in.Description)
			patch(&v.Metadata, in.Metadata)
			if in.Backends != nil {
				v.Backends = orEmpty(*in.Backends)
			}
			if err := checkBackendRefs(c, v.Backends); err != nil {
				return v, meta{}, err
			}
			return v, meta{refs: v.Backends}, checkNoLoop(c, v.ID, v.Backends)
		},
		render: func(base string, v backends.Failover) backends.Failover {
			v.URI = itemURI(base, kindFailover, v.ID)
			return v
		},
	})
	register(s, &resource[backends.HTTPResponse, backends.HTTPResponseCreate, backends.HTTPResponseUpdate]{
		kind: kindHTTPResponse, prefix: "bkdhr", member: "backends",
		build: func(c *call, id string, in *backends.HTTPResponseCreate) (backends.HTTPResponse, meta, error) {
			return backends.HTTPResponse{ID: id, CreatedAt: c.now, Description: in.Description, Metadata: in.Metadata,
				Body: in.Body, Headers: orEmptyMap(in.Headers), StatusCode: in.StatusCode}, meta{}, nil
		},
		apply: func(c *call, v backends.HTTPResponse, in *backends.HTTPResponseUpdate) (backends.HTTPResponse, meta, error) {
			patch(&v.Description, in.Description)
			patch(&v.Metadata, in.Metadata)
			patch(&v.Body, in.Body)
			patch(&v.StatusCode, in.StatusCode)
			if in.Headers != nil {
				v.Headers = orEmptyMap(*in.Headers)
			}
			return v, meta{}, nil
		},
		render: func(base string, v backends.HTTPResponse) backends.HTTPResponse {
			v.URI = itemURI(base, kindHTTPResponse, v.ID)
			return v
		},
	})
	register(s, &resource[backends.TunnelGroup, backends.TunnelGroupCreate, backends.TunnelGroupUpdate]{
		kind: kindTunnelGroup, prefix: "bkdtg", member: "backends", filter: annotatedFields,
		field: func(v backends.TunnelGroup, name string) ref.Val {
			return annotated(name, v.ID, v.Description, v.Metadata, v.CreatedAt)
		},
		build: func(c *call, id string, in *backends.TunnelGroupCreate) (backends.TunnelGroup, meta, error) {
			v := backends.TunnelGroup{ID: id, CreatedAt: c.now, Description: in.Description, Metadata: in.Metadata, Labels: maps.Clone(in.Labels)}
			v.Tunnels = matchingTunnels(c.txn, c.account, v.Labels)
			return v, meta{}, nil
		},
		apply: func(c *call, v backends.TunnelGroup, in *backends.TunnelGroupUpdate) (backends.TunnelGroup, meta, error) {
			patch(&v.Description, in.Description)
			patch(&v.Metadata, in.Metadata)
			if in.Labels != nil {
				v.Labels = maps.Clone(*in.Labels)
				v.Tunnels = matchingTunnels(c.txn, c.account, v.Labels)
			}
			return v, meta{}, nil
		},
		render: func(base string, v backends.TunnelGroup) backends.TunnelGroup {
			v.URI = itemURI(base, kindTunnelGroup, v.ID)
			refs := make([]acctapi.Ref, len(v.Tunnels))
			for i, t := range v.Tunnels {
				refs[i] = acctapi.Ref{ID: t.ID, URI: itemURI(base, kindTunnel, t.ID)}
			}
			v.Tunnels = refs
			return v
		},
	})
	// Tunnels: seeded only. Seeding one adds it to the tunnel groups whose
	// labels it carries.
	s.registerSeedOnly(&resource[Tunnel, Tunnel, Tunnel]{
		kind: kindTunnel, prefix: "tn",
		build: func(c *call, id string, in *Tunnel) (Tunnel, meta, error) {
			t := Tunnel{ID: id, Labels: maps.Clone(in.Labels), CreatedAt: c.now}
			for _, o := range all(c.txn, c.account, kindTunnelGroup) {
				g := o.Value.(backends.TunnelGroup)
				if carries(t.Labels, g.Labels) {
					g.Tunnels = append(append([]acctapi.Ref(nil), g.Tunnels...), acctapi.Ref{ID: id})
					if err := c.s.store(c.txn, &object{Account: o.Account, Kind: o.Kind, ID: o.ID, Value: g}, meta{}, o); err != nil {
						return Tunnel{}, meta{}, err
					}
				}
			}
			return t, meta{}, nil
		},
		deleted: func(c *call, t Tunnel) error {
			for _, o := range all(c.txn, c.account, kindTunnelGroup) {
				g := o.Value.(backends.TunnelGroup)
				i := slices.IndexFunc(g.Tunnels, func(r acctapi.Ref) bool { return r.ID == t.ID })
				if i < 0 {
					continue
				}
				g.Tunnels = slices.Delete(slices.Clone(g.Tunnels), i, i+1)
				if err := c.s.store(c.txn, &object{Account: o.Account, Kind: o.Kind, ID: o.ID, Value: g}, meta{}, o); err != nil {
					return err
				}
			}
			return nil
		},
		render: func(base string, v Tunnel) Tunnel {
			v.URI = itemURI(base, kindTunnel, v.ID)
			return v
		},
	})
}

// matchingTunnels returns refs (ids only) of the account's tunnels that
// carry every label.
func matchingTunnels(txn *memdb.Txn, account string, labels map[string]string) []acctapi.Ref {
	refs := []acctapi.Ref{}
	for _, o := range all(txn, account, kindTunnel) {
		if carries(o.Value.(Tunnel).Labels, labels) {
			refs = append(refs, acctapi.Ref{ID: o.ID})
		}
	}
	return refs
}

// carries reports whether have includes every label of want.
func carries(have, want map[string]string) bool {
	for k, v := range want {
		if got, ok := have[k]; !ok || got != v {
			return false
		}
	}
	return true
}

// orEmpty returns a copy of s that is never nil, so that it encodes as []
// rather than null (append to a nil slice of nothing stays nil).
func orEmpty(s []string) []string {
	return append([]string{}, s...)
}

func orEmptyMap(m map[string]string) map[string]string {
	if m == nil {
		return map[string]string{}
	}
	return maps.Clone(m)
}
