package k8sop

import (
	"context"
	"crypto/x509"
	"errors"
	"fmt"
	"iter"
	"slices"
	"strings"
	"time"

	"github.com/acctapi/acctapi"
	"github.com/acctapi/acctapi/internal/field"
	"github.com/acctapi/acctapi/internal/resources"
	"github.com/acctapi/acctapi/internal/rest"
)

// The features an operator may enable.
const (
	FeatureBindings = "bindings"
	FeatureIngress  = "ingress"
	FeatureGateway  = "gateway"
)

// DefaultRegion is the region of an operator created without one.
const DefaultRegion = "global"

// Operator is a Kubernetes operator registered with the account.
type Operator struct {
	// ID is set by the server: "k8sop_" and a suffix that sorts by creation
	// time.
	ID string `json:"id"`
	// URI is the operator's absolute URL, set by the server.
	URI string `json:"uri"`
	// CreatedAt is when the server created the operator; RFC 3339 in JSON,
	// UTC, whole seconds.
	CreatedAt time.Time `json:"created_at"`
	// UpdatedAt is when the operator last changed, set by the server.
	UpdatedAt time.Time `json:"updated_at"`
	// Description is a human-readable note, at most
	// [acctapi.MaxDescriptionBytes] bytes.
	Description string `json:"description"`
	// Metadata is free-form machine-readable data, at most
	// [acctapi.MaxMetadataBytes] bytes.
	Metadata string `json:"metadata"`
	// Principal is the owner of the API key that created the operator.
	Principal acctapi.Ref `json:"principal"`
	// EnabledFeatures are lower-case, without duplicates.
	EnabledFeatures []string `json:"enabled_features"`
	// Region is where the operator's ingress is served; [DefaultRegion] unless
	// chosen.
	Region string `json:"region"`
	// Deployment describes where the operator runs.
	Deployment Deployment `json:"deployment"`
	// Binding is present in every response, bindings enabled or not.
	Binding *Binding `json:"binding"`
}

// Deployment describes where the operator runs.
type Deployment struct {
	// Name is the operator's Kubernetes deployment name.
	Name string `json:"name"`
	// Namespace is the Kubernetes namespace the operator is deployed to.
	Namespace string `json:"namespace"`
	// Version is the version of the operator software that runs.
	Version string `json:"version"`
	// ClusterName is the user-given name of the cluster.
	ClusterName string `json:"cluster_name"`
}

// Binding is the state of the operator's Bindings feature.
type Binding struct {
	// EndpointSelectors are CEL expressions choosing the bound endpoints;
	// see [CompileSelectors]. It may be nil.
	EndpointSelectors []string `json:"endpoint_selectors"`
	// Cert is the client certificate issued for the binding's CSR.
	Cert Cert `json:"cert"`
	// IngressEndpoint is the operator's public ingress endpoint; the server
	// fills in its default when bindings is enabled and none was given.
	IngressEndpoint string `json:"ingress_endpoint,omitempty"`
}

// Cert is the binding's client certificate. Before one exists, Cert is ""
// and both times are the zero time, encoded "0001-01-01T00:00:00Z".
type Cert struct {
	// Cert is the PEM certificate issued for the binding's CSR.
	Cert string `json:"cert"`
	// NotBefore is when the certificate becomes valid; the zero time before
	// one exists.
	NotBefore time.Time `json:"not_before"`
	// NotAfter is when the certificate expires; the zero time before one
	// exists.
	NotAfter time.Time `json:"not_after"`
}

// OperatorList is one page of operators.
type OperatorList struct {
	// Operators are the page's operators, newest first.
	Operators []Operator `json:"operators"`
	// URI is the list's absolute URL, without the query.
	URI string `json:"uri"`
	// NextPageURI is the absolute URL of the next page, or nil (JSON null) on
	// the last page.
	NextPageURI *string `json:"next_page_uri"`
}

// PageItems returns the page's operators.
func (l *OperatorList) PageItems() []Operator { return l.Operators }

// NextPage returns the next page's URL, or "" on the last page.
func (l *OperatorList) NextPage() string { return rest.Str(l.NextPageURI) }

// OperatorCreate is the body of a create request.
type OperatorCreate struct {
	// Description is at most [acctapi.MaxDescriptionBytes] bytes.
	Description string `json:"description"`
	// Metadata is at most [acctapi.MaxMetadataBytes] bytes.
	Metadata string `json:"metadata"`
	// EnabledFeatures are [FeatureBindings], [FeatureIngress] and
	// [FeatureGateway], in any letter case, repeats allowed.
	EnabledFeatures []string `json:"enabled_features"`
	// Region defaults to [DefaultRegion] when empty.
	Region string `json:"region"`
	// Deployment describes where the operator runs; later updates may change
	// only its Name and Version.
	Deployment Deployment `json:"deployment"`
	// Binding may be set only when EnabledFeatures includes bindings.
	Binding *BindingCreate `json:"binding,omitempty"`
}

// BindingCreate configures the Bindings feature.
type BindingCreate struct {
	// EndpointSelectors must each compile with [CompileSelectors].
	EndpointSelectors []string `json:"endpoint_selectors"`
	// CSR, when set, is a PEM certificate request; see [ParseCSR].
	CSR string `json:"csr,omitempty"`
	// IngressEndpoint defaults to the service's when empty.
	IngressEndpoint string `json:"ingress_endpoint,omitempty"`
}

// Validate checks the request against the API's rules.
func (r *OperatorCreate) Validate() error {
	_, err := r.ValidateParsed()
	return err
}

// ParsedBinding is what validating an operator request reads from its
// binding: the endpoint selectors, compiled (nil when the request gives
// none), and the CSR, parsed (nil when there is none). Its zero value is
// a request without a binding.
type ParsedBinding struct {
	// Selectors are the binding's endpoint selectors, compiled, when the
	// request gives endpoint_selectors (an empty list compiles to
	// selectors that match nothing); nil when it does not (or, in an
	// update, does not change them). Matching with nil is an error.
	Selectors *Selectors
	// CSR is the binding's certificate request, parsed and its signature
	// checked ([ParseCSR]); nil when the request has none.
	CSR *x509.CertificateRequest
}

// ValidateParsed is [OperatorCreate.Validate] that also returns what it
// parsed of the binding, or the zero ParsedBinding with the error when the
// request is not valid. A server (the fake) calls it instead of Validate,
// so that it compiles the selectors and parses the CSR once.
func (r *OperatorCreate) ValidateParsed() (ParsedBinding, error) {
	if err := field.CheckUTF8(r); err != nil {
		return ParsedBinding{}, err
	}
	errs := []error{
		field.CheckDescription("description", r.Description),
		field.CheckMetadata("metadata", r.Metadata),
		checkFeatures(r.EnabledFeatures),
	}
	var p ParsedBinding
	if r.Binding != nil {
		var err error
		p, err = checkBinding(r.Binding.EndpointSelectors, r.Binding.CSR)
		errs = append(errs, checkBindingAllowed(r.EnabledFeatures), field.Prefix("binding", err))
	}
	if err := errors.Join(errs...); err != nil {
		return ParsedBinding{}, err
	}
	return p, nil
}

// Normalize turns a valid request into its stored form: EnabledFeatures
// become lower-case without duplicates (first occurrence kept) and an empty
// Region becomes [DefaultRegion].
func (r *OperatorCreate) Normalize() {
	r.EnabledFeatures = normalizeFeatures(r.EnabledFeatures)
	if r.Region == "" {
		r.Region = DefaultRegion
	}
}

// OperatorUpdate is the body of an update request. Nil members are left
// unchanged.
type OperatorUpdate struct {
	// ID is the operator to update; it is sent in the path.
	ID string `json:"id"`
	// Description, when not nil, replaces the description; at most
	// [acctapi.MaxDescriptionBytes] bytes.
	Description *string `json:"description,omitempty"`
	// Metadata, when not nil, replaces the metadata; at most
	// [acctapi.MaxMetadataBytes] bytes.
	Metadata *string `json:"metadata,omitempty"`
	// EnabledFeatures, when set, replaces the features; as on create.
	// Features without bindings clear the operator's binding (selectors,
	// certificate and ingress endpoint), which exists only while bindings
	// is enabled; enabling it again starts from an empty binding.
	EnabledFeatures *[]string `json:"enabled_features,omitempty"`
	// Region, when set and empty, becomes [DefaultRegion].
	Region *string `json:"region,omitempty"`
	// Binding may be set only when bindings is enabled; see
	// [OperatorUpdate.CheckBinding].
	Binding *BindingUpdate `json:"binding,omitempty"`
	// Deployment, when not nil, changes the deployment's name or version.
	Deployment *DeploymentUpdate `json:"deployment,omitempty"`
}

// BindingUpdate changes the Bindings feature. Nil members are left
// unchanged.
type BindingUpdate struct {
	// EndpointSelectors, when not nil, replaces the selectors; each must
	// compile with [CompileSelectors].
	EndpointSelectors *[]string `json:"endpoint_selectors,omitempty"`
	// CSR, when neither nil nor empty, is a PEM certificate request (see
	// [ParseCSR]) for which the server issues a new certificate.
	CSR *string `json:"csr,omitempty"`
	// IngressEndpoint, when not nil, replaces the ingress endpoint.
	IngressEndpoint *string `json:"ingress_endpoint,omitempty"`
}

// DeploymentUpdate changes a deployment's name and version, the only
// members an update may change. Nil members are left unchanged.
type DeploymentUpdate struct {
	// Name, when not nil, replaces the deployment name.
	Name *string `json:"name,omitempty"`
	// Version, when not nil, replaces the operator version.
	Version *string `json:"version,omitempty"`
}

// Validate checks the request against the API's rules. Whether Binding is
// allowed is judged here only when the request sets EnabledFeatures;
// otherwise it depends on the operator's stored features, which the server
// checks with [OperatorUpdate.CheckBinding].
func (r *OperatorUpdate) Validate() error {
	_, err := r.ValidateParsed()
	return err
}

// ValidateParsed is [OperatorUpdate.Validate] that also returns what it
// parsed of the binding (see [OperatorCreate.ValidateParsed]).
func (r *OperatorUpdate) ValidateParsed() (ParsedBinding, error) {
	if err := field.CheckUTF8(r); err != nil {
		return ParsedBinding{}, err
	}
	errs := []error{
		field.CheckDescriptionPtr("description", r.Description),
		field.CheckMetadataPtr("metadata", r.Metadata),
	}
	if r.EnabledFeatures != nil {
		errs = append(errs, checkFeatures(*r.EnabledFeatures), r.CheckBinding(nil))
	}
	var p ParsedBinding
	if b := r.Binding; b != nil {
		var selectors []string
		if b.EndpointSelectors != nil {
			selectors = *b.EndpointSelectors
		}
		var err error
		p, err = checkBinding(selectors, rest.Str(b.CSR))
		errs = append(errs, field.Prefix("binding", err))
	}
	if err := errors.Join(errs...); err != nil {
		return ParsedBinding{}, err
	}
	return p, nil
}

// CheckBinding reports a Binding sent while bindings is not enabled: the
// features are r.EnabledFeatures when set, else stored, the operator's
// current features.
func (r *OperatorUpdate) CheckBinding(stored []string) error {
	if r.Binding == nil {
		return nil
	}
	if r.EnabledFeatures != nil {
		stored = *r.EnabledFeatures
	}
	return checkBindingAllowed(stored)
}

// Normalize turns a valid request into its stored form, as
// [OperatorCreate.Normalize] does for the members it sets.
func (r *OperatorUpdate) Normalize() {
	if r.EnabledFeatures != nil {
		f := normalizeFeatures(*r.EnabledFeatures)
		r.EnabledFeatures = &f
	}
	if r.Region != nil && *r.Region == "" {
		region := DefaultRegion
		r.Region = &region
	}
}

var features = []string{FeatureBindings, FeatureIngress, FeatureGateway}

func checkFeatures(list []string) error {
	var errs []error
	for i, f := range list {
		if !slices.Contains(features, lowerASCII(f)) {
			errs = append(errs, field.Invalid(fmt.Sprintf("enabled_features[%d]", i),
				"is %q; want one of bindings, ingress, gateway", f))
		}
	}
	return errors.Join(errs...)
}

func normalizeFeatures(list []string) []string {
	out := make([]string, 0, len(list))
	for _, f := range list {
		if f = lowerASCII(f); !slices.Contains(out, f) {
			out = append(out, f)
		}
	}
	return out
}

// lowerASCII lowers s's ASCII letters only: a feature's name is ASCII in
// any letter case ("BINDINGS"), and Unicode's lowering would also take
// "BİNDİNGS", whose İ lowers to i.
func lowerASCII(s string) string {
	return strings.Map(func(r rune) rune {
		if 'A' <= r && r <= 'Z' {
			return r + 'a' - 'A'
		}
		return r
	}, s)
}

func checkBindingAllowed(features []string) error {
	if !slices.ContainsFunc(features, func(f string) bool { return strings.EqualFold(f, FeatureBindings) }) {
		return field.Invalid("binding", "may be set only when enabled_features includes bindings")
	}
	return nil
}

// checkBinding checks a binding's selectors and, when not empty, its CSR,
// and returns what it compiled and parsed of them (nil for none).
func checkBinding(selectors []string, csr string) (ParsedBinding, error) {
	var p ParsedBinding
	sel, err := CompileSelectors(selectors)
	if selectors != nil {
		p.Selectors = sel
	}
	if csr != "" {
		req, cerr := ParseCSR(csr)
		if cerr != nil {
			err = errors.Join(err, &acctapi.FieldError{Field: "csr", Code: acctapi.CodeInvalidValue,
				Reason: "is not a valid PEM certificate request", Err: cerr})
		}
		p.CSR = req
	}
	if err != nil {
		return ParsedBinding{}, err
	}
	return p, nil
}

// Operators is the client for /kubernetes_operators. It is safe for
// concurrent use.
type Operators struct {
	c *acctapi.Client
}

// NewOperators returns the Kubernetes operators client built on c.
func NewOperators(c *acctapi.Client) *Operators { return &Operators{c: c} }

// Create registers an operator.
func (s *Operators) Create(ctx context.Context, r *OperatorCreate) (*Operator, error) {
	return rest.Create[Operator](ctx, s.c, resources.Operators.Path(), r)
}

// Get returns the operator with the given id.
func (s *Operators) Get(ctx context.Context, id string) (*Operator, error) {
	return rest.Get[Operator](ctx, s.c, resources.Operators.Item(id))
}

// Update changes the members of an operator that r sets.
func (s *Operators) Update(ctx context.Context, r *OperatorUpdate) (*Operator, error) {
	if err := field.CheckRequest(r); err != nil {
		return nil, err
	}
	return rest.Update[Operator](ctx, s.c, resources.Operators.Item(r.ID), r)
}

// Delete deletes the operator with the given id.
func (s *Operators) Delete(ctx context.Context, id string) error {
	return rest.Delete(ctx, s.c, resources.Operators.Item(id))
}

// List returns every operator, newest first, following pages as needed.
// An error ends the sequence.
func (s *Operators) List(ctx context.Context, opts *acctapi.ListOptions) iter.Seq2[Operator, error] {
	return rest.All[Operator, OperatorList](ctx, s.c, resources.Operators.Path(), opts)
}

// Page returns one page of operators.
func (s *Operators) Page(ctx context.Context, opts *acctapi.ListOptions) (*OperatorList, error) {
	return rest.GetPage[OperatorList](ctx, s.c, resources.Operators.Path(), opts)
}

// BoundEndpoints returns every endpoint bound to the operator with the
// given id, following pages as needed. An error ends the sequence.
func (s *Operators) BoundEndpoints(ctx context.Context, id string, opts *acctapi.ListOptions) iter.Seq2[Endpoint, error] {
	return rest.All[Endpoint, EndpointList](ctx, s.c, resources.SubPath(resources.BoundEndpoints, id), opts)
}

// BoundEndpointsPage returns one page of the endpoints bound to the
// operator with the given id.
func (s *Operators) BoundEndpointsPage(ctx context.Context, id string, opts *acctapi.ListOptions) (*EndpointList, error) {
	return rest.GetPage[EndpointList](ctx, s.c, resources.SubPath(resources.BoundEndpoints, id), opts)
}
