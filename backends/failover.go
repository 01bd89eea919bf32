package backends

import (
	"context"
	"errors"
	"fmt"
	"iter"
	"time"

	"github.com/acctapi/acctapi"
	"github.com/acctapi/acctapi/internal/field"
	"github.com/acctapi/acctapi/internal/resources"
	"github.com/acctapi/acctapi/internal/rest"
)

// Failover is a backend that sends traffic to the first of its child
// backends, in order, that accepts a connection.
type Failover struct {
	// ID is set by the server: "bkdfo_" and a suffix that sorts by creation
	// time.
	ID string `json:"id"`
	// URI is the failover backend's absolute URL, set by the server.
	URI string `json:"uri"`
	// CreatedAt is when the server created the failover backend; RFC 3339 in
	// JSON, UTC, whole seconds.
	CreatedAt time.Time `json:"created_at"`
	// Description is a human-readable note, at most
	// [acctapi.MaxDescriptionBytes] bytes.
	Description string `json:"description"`
	// Metadata is free-form machine-readable data, at most
	// [acctapi.MaxMetadataBytes] bytes.
	Metadata string `json:"metadata"`
	// Backends are the ids of the child backends, of any kind, in order.
	Backends []string `json:"backends"`
}

// FailoverList is one page of failover backends.
type FailoverList struct {
	// Backends are the page's failover backends, newest first.
	Backends []Failover `json:"backends"`
	// URI is the list's absolute URL, without the query.
	URI string `json:"uri"`
	// NextPageURI is the absolute URL of the next page, or nil (JSON null) on
	// the last page.
	NextPageURI *string `json:"next_page_uri"`
}

// PageItems returns the page's failover backends.
func (l *FailoverList) PageItems() []Failover { return l.Backends }

// NextPage returns the next page's URL, or "" on the last page.
func (l *FailoverList) NextPage() string { return rest.Str(l.NextPageURI) }

// FailoverCreate is the body of a create request.
type FailoverCreate struct {
	// Description is at most [acctapi.MaxDescriptionBytes] bytes.
	Description string `json:"description,omitempty"`
	// Metadata is at most [acctapi.MaxMetadataBytes] bytes.
	Metadata string `json:"metadata,omitempty"`
	// Backends are the ids of existing backends of the account, in order,
	// none empty and none twice, at most [MaxFailoverBackends]. It may be
	// empty.
	Backends []string `json:"backends,omitempty"`
}

// MaxFailoverBackends is the most child backends a failover backend may
// have. The real service publishes no bound; a failover tries its children
// in order, so one with more than a few is already unusual, and 100 leaves
// room for any real use while keeping a failover (and its references,
// which the server indexes) small.
const MaxFailoverBackends = 100

// Validate checks the request against the API's rules. That each id names
// an existing backend is checked by the server.
func (r *FailoverCreate) Validate() error {
	if err := field.CheckUTF8(r); err != nil {
		return err
	}
	return errors.Join(
		field.CheckDescription("description", r.Description),
		field.CheckMetadata("metadata", r.Metadata),
		checkBackendIDs(r.Backends, ""),
	)
}

// FailoverUpdate is the body of an update request. Nil members are left
// unchanged.
type FailoverUpdate struct {
	// ID is the failover backend to update; it is sent in the path.
	ID string `json:"id"`
	// Description, when not nil, replaces the description; at most
	// [acctapi.MaxDescriptionBytes] bytes.
	Description *string `json:"description,omitempty"`
	// Metadata, when not nil, replaces the metadata; at most
	// [acctapi.MaxMetadataBytes] bytes.
	Metadata *string `json:"metadata,omitempty"`
	// Backends, when not nil, replaces the child backends, with the rules
	// of [FailoverCreate.Backends]; it must not hold ID itself. A pointer
	// to an empty (or nil) slice removes every child.
	Backends *[]string `json:"backends,omitempty"`
}

// Validate checks the request against the API's rules.
func (r *FailoverUpdate) Validate() error {
	if err := field.CheckUTF8(r); err != nil {
		return err
	}
	err := errors.Join(
		field.CheckDescriptionPtr("description", r.Description),
		field.CheckMetadataPtr("metadata", r.Metadata),
	)
	if r.Backends != nil {
		err = errors.Join(err, checkBackendIDs(*r.Backends, r.ID))
	}
	return err
}

// checkBackendIDs reports more than MaxFailoverBackends ids (alone: the
// ids are not looked at then), else empty and repeated ids, and self when
// it is not empty.
func checkBackendIDs(ids []string, self string) error {
	if len(ids) > MaxFailoverBackends {
		return field.Invalid("backends", "has %d backends; at most %d are allowed", len(ids), MaxFailoverBackends)
	}
	var errs []error
	first := make(map[string]int, len(ids))
	for i, id := range ids {
		name := fmt.Sprintf("backends[%d]", i)
		if j, seen := first[id]; seen {
			errs = append(errs, field.Invalid(name, "repeats backends[%d]", j))
			continue
		}
		first[id] = i
		switch {
		case id == "":
			errs = append(errs, field.Invalid(name, "is empty"))
		case id == self:
			errs = append(errs, field.Invalid(name, "is the failover backend itself"))
		}
	}
	return errors.Join(errs...)
}

// Failovers is the client for /backends/failover. It is safe for
// concurrent use.
type Failovers struct {
	c *acctapi.Client
}

// NewFailovers returns the failover backends client built on c.
func NewFailovers(c *acctapi.Client) *Failovers { return &Failovers{c: c} }

// Create creates a failover backend.
func (s *Failovers) Create(ctx context.Context, r *FailoverCreate) (*Failover, error) {
	return rest.Create[Failover](ctx, s.c, resources.Failovers.Path(), r)
}

// Get returns the failover backend with the given id.
func (s *Failovers) Get(ctx context.Context, id string) (*Failover, error) {
	return rest.Get[Failover](ctx, s.c, resources.Failovers.Item(id))
}

// Update changes the members of a failover backend that r sets.
func (s *Failovers) Update(ctx context.Context, r *FailoverUpdate) (*Failover, error) {
	if err := field.CheckRequest(r); err != nil {
		return nil, err
	}
	return rest.Update[Failover](ctx, s.c, resources.Failovers.Item(r.ID), r)
}

// Delete deletes the failover backend with the given id.
func (s *Failovers) Delete(ctx context.Context, id string) error {
	return rest.Delete(ctx, s.c, resources.Failovers.Item(id))
}

// List returns every failover backend, newest first, following pages as
// needed. An error ends the sequence.
func (s *Failovers) List(ctx context.Context, opts *acctapi.ListOptions) iter.Seq2[Failover, error] {
	return rest.All[Failover, FailoverList](ctx, s.c, resources.Failovers.Path(), opts)
}

// Page returns one page of failover backends.
func (s *Failovers) Page(ctx context.Context, opts *acctapi.ListOptions) (*FailoverList, error) {
	return rest.GetPage[FailoverList](ctx, s.c, resources.Failovers.Path(), opts)
}
