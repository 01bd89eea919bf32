package fake_test

// More of the reference model of model_ref_test.go: certificate
// authorities, event sources, Kubernetes operators and their bound
// endpoints. As there, every rule is written again from the contract
// (§3, §5, §6), with maps and slices, and
// nothing of package fake is called.

import (
	"slices"
	"strings"
	"time"

	"github.com/acctapi/acctapi"
	"github.com/acctapi/acctapi/account"
	"github.com/acctapi/acctapi/events"
	"github.com/acctapi/acctapi/k8sop"
)

// ---- certificate authorities -------------------------------------------------------

// refCAPEM is a PEM text the test sends as ca_pem, with what the server
// must read from it (nil when it is not exactly one CA certificate). The
// test builds the certificates itself, so it knows their contents without
// parsing them back.
type refCAPEM struct {
	name string
	pem  string
	info *account.CAInfo
}

func (m *refModel) createCA(a *refAccount, in account.CertificateAuthorityCreate, info *account.CAInfo, now time.Time) (account.CertificateAuthority, *refFail) {
	if f := annotated(in.Description, in.Metadata); f != nil {
		return account.CertificateAuthority{}, f
	}
	if info == nil { // missing, or not exactly one CA certificate
		return account.CertificateAuthority{}, failBroken
	}
	ci := *info
	ci.KeyUsages, ci.ExtendedKeyUsages = slices.Clone(info.KeyUsages), slices.Clone(info.ExtendedKeyUsages)
	return account.CertificateAuthority{CreatedAt: stamp(now), Description: in.Description, Metadata: in.Metadata,
		CAPEM: in.CAPEM, CAInfo: ci}, nil
}

func (m *refModel) insertCA(a *refAccount, v account.CertificateAuthority, id string) account.CertificateAuthority {
	v.ID, v.URI = id, m.uri("certificate_authorities", id)
	a.cas.put(v)
	return v
}

func (m *refModel) updateCA(a *refAccount, in account.CertificateAuthorityUpdate) (account.CertificateAuthority, *refFail) {
	if f := localPathFail(in.ID); f != nil {
		return account.CertificateAuthority{}, f
	}
	if f := annotatedPtr(in.Description, in.Metadata); f != nil {
		return account.CertificateAuthority{}, f
	}
	v, ok := a.cas.get(in.ID)
	if !ok {
		return v, failNotFound
	}
	if in.Description != nil {
		v.Description = *in.Description
	}
	if in.Metadata != nil {
		v.Metadata = *in.Metadata
	}
	a.cas.put(v)
	return v, nil
}

// ---- event sources ----------------------------------------------------------------

func (m *refModel) sourceOf(subID, typ string) events.Source {
	return events.Source{Type: typ, URI: m.uri("event_subscriptions", subID, "sources", typ)}
}

func hasSource(v events.Subscription, typ string) bool {
	return slices.ContainsFunc(v.Sources, func(s events.Source) bool { return s.Type == typ })
}

// createSource adds a source of type typ to subscription subID; bodySub
// is the subscription_id member of the body ("" when not sent).
func (m *refModel) createSource(a *refAccount, subID, bodySub, typ string) (events.Source, *refFail) {
	if bodySub != "" && bodySub != subID {
		return events.Source{}, failBroken // a body naming another subscription than the path
	}
	if !slices.Contains(contractEventTypes, typ) {
		return events.Source{}, failBroken
	}
	if f := localPathFail(subID); f != nil {
		return events.Source{}, f
	}
	v, ok := a.subs.get(subID)
	if !ok {
		return events.Source{}, failNotFound
	}
	if hasSource(v, typ) {
		return events.Source{}, &refFail{status: 409, code: acctapi.CodeSourceTypeTaken}
	}
	v.Sources = append(slices.Clone(v.Sources), m.sourceOf(subID, typ))
	a.subs.put(v)
	return m.sourceOf(subID, typ), nil
}

// getSource is the answer to GET and, when check is set, to PATCH (whose
// body only names the source again, so it changes nothing).
func (m *refModel) getSource(a *refAccount, subID, typ string, check bool) (events.Source, *refFail) {
	if check && (subID == "" || !slices.Contains(contractEventTypes, typ)) {
		return events.Source{}, failBroken
	}
	if f := first(localPathFail(subID), localPathFail(typ)); f != nil {
		return events.Source{}, f
	}
	v, ok := a.subs.get(subID)
	if !ok || !hasSource(v, typ) {
		return events.Source{}, failNotFound
	}
	return m.sourceOf(subID, typ), nil
}

func (m *refModel) listSources(a *refAccount, subID string) (events.SourceList, *refFail) {
	if f := localPathFail(subID); f != nil {
		return events.SourceList{}, f
	}
	v, ok := a.subs.get(subID)
	if !ok {
		return events.SourceList{}, failNotFound
	}
	return events.SourceList{Sources: append([]events.Source{}, v.Sources...), URI: m.uri("event_subscriptions", subID, "sources")}, nil
}

func (m *refModel) deleteSource(a *refAccount, subID, typ string) *refFail {
	if f := first(localPathFail(subID), localPathFail(typ)); f != nil {
		return f
	}
	v, ok := a.subs.get(subID)
	if !ok || !hasSource(v, typ) {
		return failNotFound
	}
	v.Sources = slices.DeleteFunc(slices.Clone(v.Sources), func(s events.Source) bool { return s.Type == typ })
	a.subs.put(v)
	return nil
}

// ---- Kubernetes operators and endpoints --------------------------------------------

// modelIngress is the ingress endpoint the test configures the fake with.
const modelIngress = "ingress.model.test:443"

// refSelector is an endpoint selector the test sends, as the model reads
// it: nil when it is not a valid selector, else whether it matches an
// endpoint.
var refSelectors = map[string]func(e k8sop.Endpoint) bool{
	`true`:                 func(k8sop.Endpoint) bool { return true },
	`false`:                func(k8sop.Endpoint) bool { return false },
	`endpoint.name == "a"`: func(e k8sop.Endpoint) bool { return e.Name == "a" },
	`endpoint.name == "b"`: func(e k8sop.Endpoint) bool { return e.Name == "b" },
	`endpoint.nope == "x"`: nil, // no such member
	`endpoint.name`:        nil, // not boolean
	`endpoint.name ==`:     nil, // syntax
}

func checkSelectors(list []string) *refFail {
	for _, s := range list {
		if refSelectors[s] == nil {
			return failBroken
		}
	}
	return nil
}

// checkFeatures: bindings, ingress and gateway in any letter case.
func checkFeatures(list []string) *refFail {
	for _, f := range list {
		if !slices.Contains([]string{"bindings", "ingress", "gateway"}, strings.ToLower(f)) {
			return failBroken
		}
	}
	return nil
}

// normalFeatures lower-cases features and drops repeats, keeping the first.
func normalFeatures(list []string) []string {
	out := []string{}
	for _, f := range list {
		if f = strings.ToLower(f); !slices.Contains(out, f) {
			out = append(out, f)
		}
	}
	return out
}

func hasBindings(list []string) bool {
	return slices.ContainsFunc(list, func(f string) bool { return strings.ToLower(f) == "bindings" })
}

func cloneKeepNil(list []string) []string {
	if list == nil {
		return nil
	}
	return append([]string{}, list...)
}

func (m *refModel) createOp(a *refAccount, in k8sop.OperatorCreate, now time.Time) (k8sop.Operator, *refFail) {
	f := first(annotated(in.Description, in.Metadata), checkFeatures(in.EnabledFeatures))
	if in.Binding != nil && f == nil {
		if !hasBindings(in.EnabledFeatures) {
			f = failBroken
		}
		f = first(f, checkSelectors(in.Binding.EndpointSelectors))
	}
	if f != nil {
		return k8sop.Operator{}, f
	}
	v := k8sop.Operator{CreatedAt: stamp(now), UpdatedAt: stamp(now), Description: in.Description, Metadata: in.Metadata,
		Principal: acctapi.Ref{ID: a.user}, EnabledFeatures: normalFeatures(in.EnabledFeatures), Region: in.Region,
		Deployment: in.Deployment, Binding: &k8sop.Binding{}}
	if v.Region == "" {
		v.Region = "global"
	}
	if b := in.Binding; b != nil {
		v.Binding.EndpointSelectors = cloneKeepNil(b.EndpointSelectors)
		v.Binding.IngressEndpoint = b.IngressEndpoint
	}
	defaultIngress(&v)
	return v, nil
}

// defaultIngress: an operator with bindings has an ingress endpoint.
func defaultIngress(v *k8sop.Operator) {
	if hasBindings(v.EnabledFeatures) && v.Binding.IngressEndpoint == "" {
		v.Binding.IngressEndpoint = modelIngress
	}
}

func (m *refModel) insertOp(a *refAccount, v k8sop.Operator, id string) k8sop.Operator {
	v.ID, v.URI = id, m.uri("kubernetes_operators", id)
	a.ops.put(v)
	return v
}

func (m *refModel) updateOp(a *refAccount, in k8sop.OperatorUpdate, now time.Time) (k8sop.Operator, *refFail) {
	if f := localPathFail(in.ID); f != nil {
		return k8sop.Operator{}, f
	}
	f := annotatedPtr(in.Description, in.Metadata)
	if in.EnabledFeatures != nil {
		f = first(f, checkFeatures(*in.EnabledFeatures))
		if in.Binding != nil && f == nil && !hasBindings(*in.EnabledFeatures) {
			f = failBroken
		}
	}
	if in.Binding != nil && in.Binding.EndpointSelectors != nil {
		f = first(f, checkSelectors(*in.Binding.EndpointSelectors))
	}
	if f != nil {
		return k8sop.Operator{}, f
	}
	v, ok := a.ops.get(in.ID)
	if !ok {
		return v, failNotFound
	}
	// Whether a binding may be sent, when the request does not set the
	// features, depends on the stored ones: only the server can tell.
	if in.Binding != nil && in.EnabledFeatures == nil && !hasBindings(v.EnabledFeatures) {
		return k8sop.Operator{}, failInvalid
	}
	if in.Description != nil {
		v.Description = *in.Description
	}
	if in.Metadata != nil {
		v.Metadata = *in.Metadata
	}
	if in.Region != nil {
		v.Region = *in.Region
		if v.Region == "" {
			v.Region = "global"
		}
	}
	if in.EnabledFeatures != nil {
		v.EnabledFeatures = normalFeatures(*in.EnabledFeatures)
	}
	if d := in.Deployment; d != nil {
		if d.Name != nil {
			v.Deployment.Name = *d.Name
		}
		if d.Version != nil {
			v.Deployment.Version = *d.Version
		}
	}
	b := *v.Binding
	if u := in.Binding; u != nil {
		if u.EndpointSelectors != nil {
			b.EndpointSelectors = cloneKeepNil(*u.EndpointSelectors)
		}
		if u.IngressEndpoint != nil {
			b.IngressEndpoint = *u.IngressEndpoint
		}
	}
	v.Binding = &b
	defaultIngress(&v)
	v.UpdatedAt = stamp(now)
	a.ops.put(v)
	return v, nil
}

// seedEndpoint adds a seeded endpoint (endpoints have no API path).
func (m *refModel) seedEndpoint(a *refAccount, in k8sop.Endpoint, id string, now time.Time) k8sop.Endpoint {
	in.ID, in.URI = id, m.uri("endpoints", id)
	in.CreatedAt, in.UpdatedAt = stamp(now), stamp(now)
	in.Bindings = cloneKeepNil(in.Bindings)
	a.eps.put(in)
	return in
}

// boundEndpoints are the endpoints of the account, newest first, that
// carry the kubernetes binding and that one of the operator's selectors
// matches.
func (m *refModel) boundEndpoints(a *refAccount, opID string) ([]k8sop.Endpoint, *refFail) {
	if f := localPathFail(opID); f != nil {
		return nil, f
	}
	op, ok := a.ops.get(opID)
	if !ok {
		return nil, failNotFound
	}
	out := []k8sop.Endpoint{}
	for _, e := range a.eps.newestFirst() {
		if !slices.Contains(e.Bindings, "kubernetes") {
			continue
		}
		if slices.ContainsFunc(op.Binding.EndpointSelectors, func(s string) bool { return refSelectors[s](e) }) {
			out = append(out, e)
		}
	}
	return out, nil
}
