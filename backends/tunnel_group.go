package backends

import (
	"context"
	"errors"
	"fmt"
	"iter"
	"maps"
	"slices"
	"time"

	"github.com/acctapi/acctapi"
	"github.com/acctapi/acctapi/internal/field"
	"github.com/acctapi/acctapi/internal/resources"
	"github.com/acctapi/acctapi/internal/rest"
)

// TunnelGroup is a backend that balances traffic over the account's tunnels
// whose labels include all of its labels.
type TunnelGroup struct {
	// ID is set by the server: "bkdtg_" and a suffix that sorts by creation
	// time.
	ID string `json:"id"`
	// URI is the tunnel group backend's absolute URL, set by the server.
	URI string `json:"uri"`
	// CreatedAt is when the server created the tunnel group backend; RFC 3339
	// in JSON, UTC, whole seconds.
	CreatedAt time.Time `json:"created_at"`
	// Description is a human-readable note, at most
	// [acctapi.MaxDescriptionBytes] bytes.
	Description string `json:"description"`
	// Metadata is free-form machine-readable data, at most
	// [acctapi.MaxMetadataBytes] bytes.
	Metadata string `json:"metadata"`
	// Labels are the labels a tunnel must carry to join, such as app=foo.
	Labels map[string]string `json:"labels"`
	// Tunnels are the tunnels that carry every label now.
	Tunnels []acctapi.Ref `json:"tunnels"`
}

// TunnelGroupList is one page of tunnel group backends.
type TunnelGroupList struct {
	// Backends are the page's tunnel group backends, newest first.
	Backends []TunnelGroup `json:"backends"`
	// URI is the list's absolute URL, without the query.
	URI string `json:"uri"`
	// NextPageURI is the absolute URL of the next page, or nil (JSON null) on
	// the last page.
	NextPageURI *string `json:"next_page_uri"`
}

// PageItems returns the page's tunnel group backends.
func (l *TunnelGroupList) PageItems() []TunnelGroup { return l.Backends }

// NextPage returns the next page's URL, or "" on the last page.
func (l *TunnelGroupList) NextPage() string { return rest.Str(l.NextPageURI) }

// TunnelGroupCreate is the body of a create request.
type TunnelGroupCreate struct {
	// Description is at most [acctapi.MaxDescriptionBytes] bytes.
	Description string `json:"description,omitempty"`
	// Metadata is at most [acctapi.MaxMetadataBytes] bytes.
	Metadata string `json:"metadata,omitempty"`
	// Labels is required: at least one label and at most [MaxLabels],
	// with non-empty keys and values.
	Labels map[string]string `json:"labels"`
}

// Validate checks the request against the API's rules.
func (r *TunnelGroupCreate) Validate() error {
	if err := field.CheckUTF8(r); err != nil {
		return err
	}
	return errors.Join(
		field.CheckDescription("description", r.Description),
		field.CheckMetadata("metadata", r.Metadata),
		CheckLabels(r.Labels),
	)
}

// TunnelGroupUpdate is the body of an update request. Nil members are left
// unchanged.
type TunnelGroupUpdate struct {
	// ID is the tunnel group backend to update; it is sent in the path.
	ID string `json:"id"`
	// Description, when not nil, replaces the description; at most
	// [acctapi.MaxDescriptionBytes] bytes.
	Description *string `json:"description,omitempty"`
	// Metadata, when not nil, replaces the metadata; at most
	// [acctapi.MaxMetadataBytes] bytes.
	Metadata *string `json:"metadata,omitempty"`
	// Labels, when not nil, replaces every label, with the rules of
	// [TunnelGroupCreate.Labels].
	Labels *map[string]string `json:"labels,omitempty"`
}

// Validate checks the request against the API's rules.
func (r *TunnelGroupUpdate) Validate() error {
	if err := field.CheckUTF8(r); err != nil {
		return err
	}
	err := errors.Join(
		field.CheckDescriptionPtr("description", r.Description),
		field.CheckMetadataPtr("metadata", r.Metadata),
	)
	// A pointer to a nil map is sent as {}, as a pointer to an empty one
	// (see acctapi.Client.Do), and is refused alike.
	if r.Labels != nil {
		err = errors.Join(err, CheckLabels(*r.Labels))
	}
	return err
}

// MaxLabels is the most labels a tunnel group backend may match on (and a
// tunnel the fake seeds may carry). The real service has a label count
// limit (ERR_NGROK_6508, [acctapi.CodeLabelCountLimit]) but publishes no
// number; labels select tunnels by role (app, dc, env, ...), so a few are
// typical, and 100 leaves room for any real use.
const MaxLabels = 100

// CheckLabels requires at least one label and at most [MaxLabels] (a field
// error on "labels" with [acctapi.CodeLabelCountLimit]; the labels are not
// looked at then), and reports, in key order, empty keys and values, as
// field errors on "labels" and "labels.<key>". Tunnel group backends use
// it, and so does the fake for the tunnels it seeds.
func CheckLabels(labels map[string]string) error {
	if len(labels) == 0 {
		return field.Invalid("labels", "needs at least one label")
	}
	if len(labels) > MaxLabels {
		return &field.Error{Field: "labels", Code: acctapi.CodeLabelCountLimit,
			Reason: fmt.Sprintf("has %d labels; at most %d are allowed", len(labels), MaxLabels)}
	}
	var errs []error
	for _, k := range slices.Sorted(maps.Keys(labels)) {
		switch {
		case k == "":
			errs = append(errs, field.Invalid("labels", "has an empty key"))
		case labels[k] == "":
			errs = append(errs, field.Invalid("labels."+k, "is empty"))
		}
	}
	return errors.Join(errs...)
}

// TunnelGroups is the client for /backends/tunnel_group. It is safe for
// concurrent use.
type TunnelGroups struct {
	c *acctapi.Client
}

// NewTunnelGroups returns the tunnel group backends client built on c.
func NewTunnelGroups(c *acctapi.Client) *TunnelGroups { return &TunnelGroups{c: c} }

// Create creates a tunnel group backend.
func (s *TunnelGroups) Create(ctx context.Context, r *TunnelGroupCreate) (*TunnelGroup, error) {
	return rest.Create[TunnelGroup](ctx, s.c, resources.TunnelGroups.Path(), r)
}

// Get returns the tunnel group backend with the given id.
func (s *TunnelGroups) Get(ctx context.Context, id string) (*TunnelGroup, error) {
	return rest.Get[TunnelGroup](ctx, s.c, resources.TunnelGroups.Item(id))
}

// Update changes the members of a tunnel group backend that r sets.
func (s *TunnelGroups) Update(ctx context.Context, r *TunnelGroupUpdate) (*TunnelGroup, error) {
	if err := field.CheckRequest(r); err != nil {
		return nil, err
	}
	return rest.Update[TunnelGroup](ctx, s.c, resources.TunnelGroups.Item(r.ID), r)
}

// Delete deletes the tunnel group backend with the given id.
func (s *TunnelGroups) Delete(ctx context.Context, id string) error {
	return rest.Delete(ctx, s.c, resources.TunnelGroups.Item(id))
}

// List returns every tunnel group backend, newest first, following pages
// as needed. The filter may use id, description, metadata and created_at.
// An error ends the sequence.
func (s *TunnelGroups) List(ctx context.Context, opts *acctapi.FilterOptions) iter.Seq2[TunnelGroup, error] {
	return rest.All[TunnelGroup, TunnelGroupList](ctx, s.c, resources.TunnelGroups.Path(), opts)
}

// Page returns one page of tunnel group backends.
func (s *TunnelGroups) Page(ctx context.Context, opts *acctapi.FilterOptions) (*TunnelGroupList, error) {
	return rest.GetPage[TunnelGroupList](ctx, s.c, resources.TunnelGroups.Path(), opts)
}
