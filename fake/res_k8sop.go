package fake

import (
	"crypto/x509"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strings"

	"github.com/acctapi/acctapi"
	"github.com/acctapi/acctapi/fake/internal/store"
	"github.com/acctapi/acctapi/internal/field"
	"github.com/acctapi/acctapi/internal/resources"
	"github.com/acctapi/acctapi/k8sop"
)

// operatorExtra is what prepare makes of an operator request before the
// write transaction: the certificate signed for its CSR and its compiled
// endpoint selectors. The store keeps the selectors beside the operator,
// for bound-endpoints requests; the certificate goes into the operator.
type operatorExtra struct {
	sel  *k8sop.Selectors // nil or empty: no selectors (nil, from an update's prepare: none given)
	cert *k8sop.Cert      // nil: no CSR
}

// signCSR signs a binding's parsed CSR with the fake's CA; nil signs
// nothing (nil).
func signCSR(o *op, req *x509.CertificateRequest) (*k8sop.Cert, error) {
	if req == nil {
		return nil, nil
	}
	pemText, nb, na, err := o.env.signer.sign(req, o.now)
	if err != nil {
		return nil, err
	}
	return &k8sop.Cert{Cert: pemText, NotBefore: nb, NotAfter: na}, nil
}

// opCreate and opUpdate are an operator's requests as the fake decodes
// them: their Validate is the domain package's ValidateParsed, and keeps
// the selectors it compiled and the CSR it parsed for prepareOperator, so
// each is read once.
type (
	opCreate struct {
		k8sop.OperatorCreate
		parsed k8sop.ParsedBinding // set by a successful Validate
	}
	opUpdate struct {
		k8sop.OperatorUpdate
		parsed k8sop.ParsedBinding // set by a successful Validate
	}
)

// Validate validates the request and keeps what it parsed of the binding.
func (r *opCreate) Validate() (err error) {
	r.parsed, err = r.OperatorCreate.ValidateParsed()
	return err
}

// Validate validates the request and keeps what it parsed of the binding.
func (r *opUpdate) Validate() (err error) {
	r.parsed, err = r.OperatorUpdate.ValidateParsed()
	return err
}

// prepareOperator signs a create's or an update's CSR before the write
// transaction, so that signing does not hold up other writes; build and
// apply take the certificate and the selectors validation compiled from
// what it returns.
func prepareOperator(o *op, in *opCreate, up *opUpdate) (*operatorExtra, error) {
	var p k8sop.ParsedBinding
	if in != nil {
		p = in.parsed
	} else {
		p = up.parsed
	}
	cert, err := signCSR(o, p.CSR)
	return &operatorExtra{sel: p.Selectors, cert: cert}, err
}

// defaultIngress gives an operator with bindings the configured ingress
// endpoint when it has none.
func defaultIngress(o *op, v *k8sop.Operator) {
	if slices.Contains(v.EnabledFeatures, k8sop.FeatureBindings) && v.Binding.IngressEndpoint == "" {
		v.Binding.IngressEndpoint = o.env.ingress
	}
}

// principalURI is the uri of an operator's principal: a service user's,
// or "" for the account's user, which has no API path (as the real
// service's samples show).
func principalURI(base, id string) string {
	if strings.HasPrefix(id, "service_") {
		return itemURI(base, resources.ServiceUsers.Name, id)
	}
	return ""
}

func (s *Server) registerOperators() {
	operators := &resource[k8sop.Operator, *operatorExtra, opCreate, opUpdate]{
		Desc:    resources.Operators,
		prepare: prepareOperator,
		build: func(o *op, id string, in *opCreate, x *operatorExtra) (k8sop.Operator, *operatorExtra, error) {
			v := k8sop.Operator{ID: id, CreatedAt: o.now, UpdatedAt: o.now, Description: in.Description, Metadata: in.Metadata,
				Principal: acctapi.Ref{ID: o.owner}, EnabledFeatures: in.EnabledFeatures, Region: in.Region, Deployment: in.Deployment,
				Binding: &k8sop.Binding{}}
			if b := in.Binding; b != nil {
				v.Binding.EndpointSelectors = slices.Clone(b.EndpointSelectors)
				v.Binding.IngressEndpoint = b.IngressEndpoint
				if x.cert != nil {
					v.Binding.Cert = *x.cert
				}
			}
			defaultIngress(o, &v)
			return v, &operatorExtra{sel: x.sel}, nil
		},
		apply: func(o *op, cur store.Row[k8sop.Operator, *operatorExtra], in *opUpdate, x *operatorExtra) (k8sop.Operator, *operatorExtra, error) {
			v := cur.Value
			if err := in.CheckBinding(v.EnabledFeatures); err != nil {
				return v, nil, fromValidation(err)
			}
			patch(&v.Description, in.Description)
			patch(&v.Metadata, in.Metadata)
			patch(&v.Region, in.Region)
			patch(&v.EnabledFeatures, in.EnabledFeatures)
			sel := cur.Extra.sel
			if !slices.Contains(v.EnabledFeatures, k8sop.FeatureBindings) {
				// Bindings switched off: the binding goes with it (contract
				// §6: a binding exists only while bindings is enabled), as
				// on an operator created without bindings.
				v.Binding, sel = &k8sop.Binding{}, nil
			}
			if d := in.Deployment; d != nil {
				patch(&v.Deployment.Name, d.Name)
				patch(&v.Deployment.Version, d.Version)
			}
			b := *v.Binding
			if u := in.Binding; u != nil {
				if u.EndpointSelectors != nil {
					b.EndpointSelectors, sel = *u.EndpointSelectors, x.sel
				}
				patch(&b.IngressEndpoint, u.IngressEndpoint)
				if x.cert != nil {
					b.Cert = *x.cert
				}
			}
			v.Binding = &b
			defaultIngress(o, &v)
			v.UpdatedAt = o.now
			return v, &operatorExtra{sel: sel}, nil
		},
		render: func(base string, v k8sop.Operator) k8sop.Operator {
			v.URI = itemURI(base, resources.Operators.Name, v.ID)
			v.Principal.URI = principalURI(base, v.Principal.ID)
			return v
		},
	}
	register(s, operators)
	seedAs[k8sop.OperatorCreate, opCreate](s)
	// Endpoints: seeded only; bound endpoints lists them. The engine runs
	// k8sop.Endpoint's Validate on a seeded one, which keeps it within the
	// sizes the selectors' cost model assumes, so no selector fails on it
	// for its cost.
	endpoints := &resource[k8sop.Endpoint, none, k8sop.Endpoint, k8sop.Endpoint]{
		Desc: resources.Endpoints,
		// The server sets these (Seed and fixtures refuse them): a seeded
		// uri (not checked for size, since it is not kept) was once stored
		// and read by selectors, past the cost model's sizes.
		serverSet: []string{"id", "uri", "created_at", "updated_at"},
		// A tunnel an endpoint refers to stays while it does.
		constraints: store.Constraints[k8sop.Endpoint, none]{Refs: func(v k8sop.Endpoint) []string {
			if v.Tunnel == nil {
				return nil
			}
			return []string{v.Tunnel.ID}
		}},
		build: func(o *op, id string, in *k8sop.Endpoint, _ none) (k8sop.Endpoint, none, error) {
			v := *in
			if err := s.checkEndpointRefs(o, &v); err != nil {
				return v, none{}, err
			}
			v.ID, v.URI, v.CreatedAt, v.UpdatedAt = id, "", o.now, o.now
			v.Bindings = slices.Clone(in.Bindings)
			return v, none{}, nil
		},
		render: renderEndpoint,
	}
	register(s, endpoints)
	// Bound endpoints: the account's endpoints with the kubernetes binding
	// that one of the operator's selectors matches, paged like every list.
	// The selectors were compiled when the operator was stored.
	registerSub(s, &subresource[k8sop.Operator, *operatorExtra, k8sop.Endpoint, none, none]{
		coll: resources.BoundEndpoints, parent: &operators.table,
		listQuery: []string{"limit", "before_id"},
		list: func(o *op, tx *store.Txn, op store.Row[k8sop.Operator, *operatorExtra], p listParams) ([]k8sop.Endpoint, []string, bool, error) {
			sel := op.Extra.sel
			if sel.Len() == 0 { // no selectors: nothing is bound, and nothing need be read
				return []k8sop.Endpoint{}, nil, false, nil
			}
			// The request's evaluations share one budget (contract §6), so
			// its cost is bounded whatever the selectors and the endpoints;
			// time.now is the request's time.
			if err := sel.CheckAt(o.now); err != nil {
				return nil, nil, false, selectorFailure(err)
			}
			m := sel.MatcherAt(o.now, k8sop.MatchBudget)
			// Selectors see an endpoint's uri as this caller's GET shows
			// it (acctfake's seeding base is a placeholder no client sees).
			base := o.base
			return endpoints.table.Page(tx, o.account, p.beforeID, p.limit, func(e *k8sop.Endpoint) (bool, error) {
				if !slices.Contains(e.Bindings, "kubernetes") {
					return false, nil
				}
				// Selectors see the endpoint as a GET shows it, uri included.
				r := renderEndpoint(base, *e)
				ok, err := m.Match(&r)
				if err != nil {
					return false, selectorFailure(err)
				}
				return ok, nil
			})
		},
		listBody: func(c *call, p listParams, items []k8sop.Endpoint, ids []string, more bool, render func(k8sop.Endpoint) k8sop.Endpoint) (any, error) {
			return pageBody(c, "endpoints", p, items, ids, more, render)
		},
		render: func(base, _ string, v k8sop.Endpoint) k8sop.Endpoint { return renderEndpoint(base, v) },
	})
}

// checkEndpointRefs checks a seeded endpoint's references to what the
// fake stores, as the API refuses a reference to nothing (a failover's
// unknown backend): its tunnel must be a tunnel of the account, and its
// principal the account's user or one of its service users; an empty
// principal becomes the account's user, who seeds it. Its domain,
// tcp_addr, edge and tunnel_session refer to what the fake does not store,
// and are kept as given.
func (s *Server) checkEndpointRefs(o *op, v *k8sop.Endpoint) error {
	if t := v.Tunnel; t != nil {
		if _, ok := s.resByKind[resources.Tunnels.Name].get(o.tx, "", o.account, t.ID); !ok {
			return fromValidation(field.Invalid("tunnel.id", "%q is no tunnel of the account: seed the tunnel first, and refer to the id Seed returned (in fixtures, its \"${ref}\")", truncate(t.ID, 64)))
		}
	}
	user := s.userOf(o.account)
	switch p := &v.Principal; {
	case p.ID == "" && p.URI == "":
		p.ID = user
	case p.ID != user && !s.users.Has(o.tx, o.account, p.ID):
		return fromValidation(field.Invalid("principal.id", "%q is neither the account's user (%s) nor one of its service users", truncate(p.ID, 64), user))
	}
	return nil
}

// selectorFailure is the answer to a bound-endpoints request whose
// selectors failed: over the request's budget, or on an endpoint (such as
// time.now.subtract() before year 1), which is never taken for "no
// match". Either is the selectors' fault, so a 400 ERR_NGROK_250, as a
// failing list filter is.
func selectorFailure(err error) *apiError {
	e := &apiError{status: http.StatusBadRequest, code: acctapi.CodeBadFilter, field: "binding.endpoint_selectors"}
	if errors.Is(err, k8sop.ErrMatchBudget) {
		e.msg = fmt.Sprintf("The operator's endpoint selectors cost more than %d units over this request's endpoints; make them cheaper.", uint64(k8sop.MatchBudget))
		return e
	}
	e.msg = "The operator's endpoint selectors failed: " + truncate(err.Error(), 300)
	if fes := acctapi.FieldErrors(err); len(fes) > 0 {
		e.field = "binding." + fes[0].Field
		e.msg = fmt.Sprintf("The operator's endpoint selectors failed: %s: %s", e.field, truncate(fes[0].Reason, 300))
	}
	return e
}

// renderEndpoint fills an endpoint's uri.
func renderEndpoint(base string, v k8sop.Endpoint) k8sop.Endpoint {
	v.URI = itemURI(base, resources.Endpoints.Name, v.ID)
	// The references the fake stores get their uris as everywhere else (a
	// tunnel group's tunnels, an operator's principal); the stored record
	// is shared, so a reference is copied before its uri is set.
	if v.Tunnel != nil {
		t := *v.Tunnel
		t.URI = itemURI(base, resources.Tunnels.Name, t.ID)
		v.Tunnel = &t
	}
	v.Principal.URI = principalURI(base, v.Principal.ID)
	return v
}
