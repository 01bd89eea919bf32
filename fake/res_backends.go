package fake

import (
	"fmt"
	"maps"
	"net/http"
	"slices"
	"time"

	"github.com/acctapi/acctapi"
	"github.com/acctapi/acctapi/backends"
	"github.com/acctapi/acctapi/fake/internal/store"
	"github.com/acctapi/acctapi/internal/resources"
	"github.com/google/cel-go/common/types/ref"
)

// Tunnel is a tunnel of an account. Tunnels have no API path; seed them
// with [Seed] (&Tunnel{...} as the request) so that tunnel group backends
// find them by their labels. The server sets ID, URI and CreatedAt: Seed
// refuses a request that sets them, and a fixture one that gives them (it
// names the tunnel for later fixtures with its "ref").
type Tunnel struct {
	// ID is the tunnel's tn_ id, set by the fake when seeded.
	ID string `json:"id"`
	// URI is the tunnel's absolute URL, set by the fake.
	URI string `json:"uri"`
	// Labels are the tunnel's labels, which tunnel group backends match;
	// keys and values non-empty, at most [backends.MaxLabels].
	Labels map[string]string `json:"labels"`
	// CreatedAt is set by the fake from its clock.
	CreatedAt time.Time `json:"created_at"`
}

// Validate checks a seeded tunnel: it may have no labels, and otherwise
// follows [backends.CheckLabels] (keys and values not empty, at most
// [backends.MaxLabels]).
func (t *Tunnel) Validate() error {
	if len(t.Labels) == 0 {
		return nil
	}
	return backends.CheckLabels(t.Labels)
}

// backendTables are the tables a failover's backends may name.
type backendTables struct {
	failovers *store.Table[backends.Failover, none]
	responses *store.Table[backends.HTTPResponse, none]
	groups    *store.Table[backends.TunnelGroup, none]
	tunnels   *store.Table[Tunnel, none]
}

// checkRefs checks that every id is a backend of the account.
func (b *backendTables) checkRefs(o *op, ids []string) error {
	for i, id := range ids {
		if !b.failovers.Has(o.tx, o.account, id) && !b.responses.Has(o.tx, o.account, id) && !b.groups.Has(o.tx, o.account, id) {
			return &apiError{status: http.StatusBadRequest, code: acctapi.CodeUnknownBackend, field: fmt.Sprintf("backends[%d]", i),
				msg: fmt.Sprintf("Cannot save backend reference %q because it does not exist.", truncate(id, 64))}
		}
	}
	return nil
}

// checkNoLoop refuses child backends that lead back to the failover id
// through other failovers: a failover may not contain itself, directly or
// not (and a loop could never be deleted, each part referencing the next).
func (b *backendTables) checkNoLoop(o *op, id string, children []string) error {
	seen := map[string]bool{}
	var reaches func(c string) bool
	reaches = func(c string) bool {
		if c == id {
			return true
		}
		if seen[c] {
			return false
		}
		seen[c] = true
		row, ok := b.failovers.Get(o.tx, o.account, c)
		return ok && slices.ContainsFunc(row.Value.Backends, reaches)
	}
	for i, c := range children {
		if reaches(c) {
			return &apiError{status: http.StatusBadRequest, code: acctapi.CodeInvalidValue, field: fmt.Sprintf("backends[%d]", i),
				msg: fmt.Sprintf("Backend %q leads back to failover %q; a failover may not contain itself.", truncate(c, 64), id)}
		}
	}
	return nil
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

// matchingTunnels returns refs (ids only) of the account's tunnels that
// carry every label.
func (b *backendTables) matchingTunnels(o *op, labels map[string]string) []acctapi.Ref {
	refs := []acctapi.Ref{}
	for _, row := range b.tunnels.All(o.tx, o.account) {
		if carries(row.Value.Labels, labels) {
			refs = append(refs, acctapi.Ref{ID: row.ID})
		}
	}
	return refs
}

// changeGroups stores what change makes of each of the account's tunnel
// groups for which it reports a change, and counts the references to
// tunnels it adds or removes against the account's bound
// (WithMaxResources).
func (s *Server) changeGroups(o *op, b *backendTables, change func(g *backends.TunnelGroup) bool) error {
	delta := 0
	for _, row := range b.groups.All(o.tx, o.account) {
		g := row.Value
		if !change(&g) {
			continue
		}
		delta += len(g.Tunnels) - len(row.Value.Tunnels)
		if err := b.groups.Replace(o.tx, row, g, none{}); err != nil {
			return err
		}
	}
	return s.countResources(o.tx, o.account, delta)
}

func (s *Server) registerBackends() {
	var b backendTables
	failovers := &resource[backends.Failover, none, backends.FailoverCreate, backends.FailoverUpdate]{
		Desc:        resources.Failovers,
		constraints: store.Constraints[backends.Failover, none]{Refs: func(v backends.Failover) []string { return v.Backends }},
		build: func(o *op, id string, in *backends.FailoverCreate, _ none) (backends.Failover, none, error) {
			v := backends.Failover{ID: id, CreatedAt: o.now, Description: in.Description, Metadata: in.Metadata, Backends: orEmpty(in.Backends)}
			return v, none{}, b.checkRefs(o, v.Backends)
		},
		apply: func(o *op, cur store.Row[backends.Failover, none], in *backends.FailoverUpdate, _ none) (backends.Failover, none, error) {
			v := cur.Value
			patch(&v.Description, in.Description)
			patch(&v.Metadata, in.Metadata)
			if in.Backends != nil {
				v.Backends = orEmpty(*in.Backends)
			}
			if err := b.checkRefs(o, v.Backends); err != nil {
				return v, none{}, err
			}
			return v, none{}, b.checkNoLoop(o, v.ID, v.Backends)
		},
	}
	failovers.render = renderAt(failovers.Name, func(v *backends.Failover) (*string, string) { return &v.URI, v.ID })
	register(s, failovers)

	responses := &resource[backends.HTTPResponse, none, backends.HTTPResponseCreate, backends.HTTPResponseUpdate]{
		Desc: resources.HTTPResponses,
		build: func(o *op, id string, in *backends.HTTPResponseCreate, _ none) (backends.HTTPResponse, none, error) {
			return backends.HTTPResponse{ID: id, CreatedAt: o.now, Description: in.Description, Metadata: in.Metadata,
				Body: in.Body, Headers: orEmptyMap(in.Headers), StatusCode: in.StatusCode}, none{}, nil
		},
		apply: func(o *op, cur store.Row[backends.HTTPResponse, none], in *backends.HTTPResponseUpdate, _ none) (backends.HTTPResponse, none, error) {
			v := cur.Value
			patch(&v.Description, in.Description)
			patch(&v.Metadata, in.Metadata)
			patch(&v.Body, in.Body)
			patch(&v.StatusCode, in.StatusCode)
			if in.Headers != nil {
				v.Headers = orEmptyMap(*in.Headers)
			}
			return v, none{}, nil
		},
	}
	responses.render = renderAt(responses.Name, func(v *backends.HTTPResponse) (*string, string) { return &v.URI, v.ID })
	register(s, responses)

	groups := &resource[backends.TunnelGroup, none, backends.TunnelGroupCreate, backends.TunnelGroupUpdate]{
		Desc: resources.TunnelGroups,
		// A group's tunnels are references too, kept in the group rather
		// than indexed: a tunnel leaves the groups when it goes.
		refs: func(v backends.TunnelGroup) int { return len(v.Tunnels) },
		field: func(v backends.TunnelGroup, name string) ref.Val {
			return annotated(name, v.ID, v.Description, v.Metadata, v.CreatedAt)
		},
		build: func(o *op, id string, in *backends.TunnelGroupCreate, _ none) (backends.TunnelGroup, none, error) {
			v := backends.TunnelGroup{ID: id, CreatedAt: o.now, Description: in.Description, Metadata: in.Metadata, Labels: maps.Clone(in.Labels)}
			v.Tunnels = b.matchingTunnels(o, v.Labels)
			return v, none{}, nil
		},
		apply: func(o *op, cur store.Row[backends.TunnelGroup, none], in *backends.TunnelGroupUpdate, _ none) (backends.TunnelGroup, none, error) {
			v := cur.Value
			patch(&v.Description, in.Description)
			patch(&v.Metadata, in.Metadata)
			if in.Labels != nil {
				v.Labels = maps.Clone(*in.Labels)
				v.Tunnels = b.matchingTunnels(o, v.Labels)
			}
			return v, none{}, nil
		},
		render: func(base string, v backends.TunnelGroup) backends.TunnelGroup {
			v.URI = itemURI(base, resources.TunnelGroups.Name, v.ID)
			refs := make([]acctapi.Ref, len(v.Tunnels))
			for i, t := range v.Tunnels {
				refs[i] = acctapi.Ref{ID: t.ID, URI: itemURI(base, resources.Tunnels.Name, t.ID)}
			}
			v.Tunnels = refs
			return v
		},
	}
	register(s, groups)

	// Tunnels: seeded only. Seeding one adds it to the tunnel groups whose
	// labels it carries.
	tunnels := &resource[Tunnel, none, Tunnel, Tunnel]{
		Desc:      resources.Tunnels,
		serverSet: []string{"id", "uri", "created_at"},
		build: func(o *op, id string, in *Tunnel, _ none) (Tunnel, none, error) {
			// Counted in the write transaction, so the bound holds
			// exactly whatever seeds run at once.
			if b.tunnels.Count(o.tx, o.account, MaxTunnels) >= MaxTunnels {
				return Tunnel{}, none{}, errorf(http.StatusConflict, acctapi.CodeResourceLimit,
					"The account holds %d tunnels, the most the fake keeps (MaxTunnels is %d); delete some before seeding more.", MaxTunnels, MaxTunnels)
			}
			t := Tunnel{ID: id, Labels: maps.Clone(in.Labels), CreatedAt: o.now}
			// Room for the tunnel and its place in each group it joins,
			// so that a refusal says what the seed needs.
			joins := 0
			for _, row := range b.groups.All(o.tx, o.account) {
				if carries(t.Labels, row.Value.Labels) {
					joins++
				}
			}
			if err := s.checkRoom(o.tx, o.account, 1+joins, false); err != nil {
				return Tunnel{}, none{}, err
			}
			err := s.changeGroups(o, &b, func(g *backends.TunnelGroup) bool {
				if !carries(t.Labels, g.Labels) {
					return false
				}
				g.Tunnels = append(append([]acctapi.Ref(nil), g.Tunnels...), acctapi.Ref{ID: id})
				return true
			})
			return t, none{}, err
		},
		deleted: func(o *op, t Tunnel) error {
			return s.changeGroups(o, &b, func(g *backends.TunnelGroup) bool {
				i := slices.IndexFunc(g.Tunnels, func(r acctapi.Ref) bool { return r.ID == t.ID })
				if i < 0 {
					return false
				}
				g.Tunnels = slices.Delete(slices.Clone(g.Tunnels), i, i+1)
				return true
			})
		},
	}
	tunnels.render = renderAt(tunnels.Name, func(v *Tunnel) (*string, string) { return &v.URI, v.ID })
	register(s, tunnels)
	b = backendTables{failovers: failovers.table, responses: responses.table, groups: groups.table, tunnels: tunnels.table}
}
