package fake

import (
	"net/http"
	"slices"
	"strings"

	"github.com/acctapi/acctapi"
	"github.com/acctapi/acctapi/internal/field"
	"github.com/acctapi/acctapi/k8sop"
)

const (
	kindOperator = "kubernetes_operators"
	kindEndpoint = "endpoints"
)

// badRequest is a 400 on one field with the generic invalid-value code.
func badRequest(field, msg string) *apiError {
	return &apiError{status: http.StatusBadRequest, code: acctapi.CodeInvalidValue, field: field, msg: msg}
}

// signCSR signs a binding's CSR with the fake's CA; "" signs nothing (nil).
func signCSR(c *call, csr string) (*k8sop.Cert, error) {
	if csr == "" {
		return nil, nil
	}
	req, err := k8sop.ParseCSR(csr)
	if err != nil {
		return nil, badRequest("binding.csr", err.Error())
	}
	pemText, nb, na, err := c.s.signer.sign(req, c.now)
	if err != nil {
		return nil, err
	}
	return &k8sop.Cert{Cert: pemText, NotBefore: nb, NotAfter: na}, nil
}

// prepareOperator signs a create's or an update's CSR before the write
// transaction, so that signing does not hold up other writes; build and
// apply take the certificate from c.cert.
func prepareOperator(c *call, in *k8sop.OperatorCreate, up *k8sop.OperatorUpdate) error {
	var csr string
	switch {
	case in != nil && in.Binding != nil:
		csr = in.Binding.CSR
	case up != nil && up.Binding != nil && up.Binding.CSR != nil:
		csr = *up.Binding.CSR
	}
	cert, err := signCSR(c, csr)
	c.cert = cert
	return err
}

// defaultIngress gives an operator with bindings the configured ingress
// endpoint when it has none.
func defaultIngress(c *call, v *k8sop.Operator) {
	if slices.Contains(v.EnabledFeatures, k8sop.FeatureBindings) && v.Binding.IngressEndpoint == "" {
		v.Binding.IngressEndpoint = c.s.cfg.ingress
	}
}

// principalURI is the uri of an operator's principal: a service user's,
// or "" for the account's user, which has no API path (as the real
// service's samples show).
func principalURI(base, id string) string {
	if strings.HasPrefix(id, "service_") {
		return itemURI(base, kindSvcUser, id)
	}
	return ""
}

func (s *Server) registerOperators() {
	register(s, &resource[k8sop.Operator, k8sop.OperatorCreate, k8sop.OperatorUpdate]{
		kind: kindOperator, prefix: "k8sop", member: "operators",
		prepare: prepareOperator,
		build: func(c *call, id string, in *k8sop.OperatorCreate) (k8sop.Operator, meta, error) {
			v := k8sop.Operator{ID: id, CreatedAt: c.now, UpdatedAt: c.now, Description: in.Description, Metadata: in.Metadata,
				Principal: acctapi.Ref{ID: c.owner}, EnabledFeatures: in.EnabledFeatures, Region: in.Region, Deployment: in.Deployment,
				Binding: &k8sop.Binding{}}
			if b := in.Binding; b != nil {
				v.Binding.EndpointSelectors = slices.Clone(b.EndpointSelectors)
				v.Binding.IngressEndpoint = b.IngressEndpoint
				if c.cert != nil {
					v.Binding.Cert = *c.cert
				}
			}
			defaultIngress(c, &v)
			m, err := selectorsMeta(v)
			return v, m, err
		},
		apply: func(c *call, v k8sop.Operator, in *k8sop.OperatorUpdate) (k8sop.Operator, meta, error) {
			if err := in.CheckBinding(v.EnabledFeatures); err != nil {
				return v, meta{}, fromValidation(err)
			}
			patch(&v.Description, in.Description)
			patch(&v.Metadata, in.Metadata)
			patch(&v.Region, in.Region)
			patch(&v.EnabledFeatures, in.EnabledFeatures)
			if d := in.Deployment; d != nil {
				patch(&v.Deployment.Name, d.Name)
				patch(&v.Deployment.Version, d.Version)
			}
			b := *v.Binding
			if u := in.Binding; u != nil {
				patch(&b.EndpointSelectors, u.EndpointSelectors)
				patch(&b.IngressEndpoint, u.IngressEndpoint)
				if c.cert != nil {
					b.Cert = *c.cert
				}
			}
			v.Binding = &b
			defaultIngress(c, &v)
			v.UpdatedAt = c.now
			m, err := selectorsMeta(v)
			return v, m, err
		},
		render: func(base string, v k8sop.Operator) k8sop.Operator {
			v.URI = itemURI(base, kindOperator, v.ID)
			v.Principal.URI = principalURI(base, v.Principal.ID)
			return v
		},
	})
	s.routes.handle(http.MethodGet, "/kubernetes_operators/{id}/bound_endpoints", []string{"limit", "before_id"}, s.boundEndpoints)
	// Endpoints: seeded only; bound endpoints lists them.
	s.registerSeedOnly(&resource[k8sop.Endpoint, k8sop.Endpoint, k8sop.Endpoint]{
		kind: kindEndpoint, prefix: "ep",
		build: func(c *call, id string, in *k8sop.Endpoint) (k8sop.Endpoint, meta, error) {
			if err := checkSeededEndpoint(in); err != nil {
				return k8sop.Endpoint{}, meta{}, err
			}
			v := *in
			v.ID, v.CreatedAt, v.UpdatedAt = id, c.now, c.now
			v.Bindings = slices.Clone(in.Bindings)
			return v, meta{}, nil
		},
		render: renderEndpoint,
	})
}

// selectorsMeta compiles an operator's endpoint selectors once, when it is
// stored, for bound-endpoints requests to use.
func selectorsMeta(v k8sop.Operator) (meta, error) {
	if v.Binding == nil || len(v.Binding.EndpointSelectors) == 0 {
		return meta{}, nil
	}
	sel, err := k8sop.CompileSelectors(v.Binding.EndpointSelectors)
	if err != nil {
		return meta{}, fromValidation(field.Prefix("binding", err))
	}
	return meta{aux: sel}, nil
}

// checkSeededEndpoint applies the rules every resource shares to a seeded
// endpoint.
func checkSeededEndpoint(e *k8sop.Endpoint) error {
	if err := field.CheckDescription("description", e.Description); err != nil {
		return fromValidation(err)
	}
	if err := field.CheckMetadata("metadata", e.Metadata); err != nil {
		return fromValidation(err)
	}
	return nil
}

// boundEndpoints serves GET /kubernetes_operators/{id}/bound_endpoints: the
// account's endpoints with the kubernetes binding that one of the
// operator's selectors matches, paged like every list. The selectors were
// compiled when the operator was stored.
func (s *Server) boundEndpoints(c *call) (int, any, error) {
	p, err := parseList(c.r.URL.RawQuery)
	if err != nil {
		return 0, nil, err
	}
	txn := c.read()
	o := lookup(txn, c.account, kindOperator, c.params.get("id"))
	if o == nil {
		return 0, nil, notFound(c.params.get("id"))
	}
	uri := c.base + c.r.URL.EscapedPath()
	sel, _ := o.Aux.(*k8sop.Selectors)
	if sel == nil { // no selectors: nothing is bound, and nothing need be read
		return http.StatusOK, listPage("endpoints", []k8sop.Endpoint{}, uri, nil), nil
	}
	objs, more, err := page(txn, c.account, kindEndpoint, p.beforeID, p.limit, func(o *object) (bool, error) {
		e := o.Value.(k8sop.Endpoint)
		if !slices.Contains(e.Bindings, "kubernetes") {
			return false, nil
		}
		ok, _ := sel.Match(&e)
		return ok, nil
	})
	if err != nil {
		return 0, nil, err
	}
	return pageResponse(c, "endpoints", p, objs, more, renderEndpoint)
}

// renderEndpoint fills an endpoint's uri.
func renderEndpoint(base string, v k8sop.Endpoint) k8sop.Endpoint {
	v.URI = itemURI(base, kindEndpoint, v.ID)
	return v
}
