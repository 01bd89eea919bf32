package events

import (
	"context"
	"errors"

	"github.com/acctapi/acctapi"
	"github.com/acctapi/acctapi/internal/field"
	"github.com/acctapi/acctapi/internal/resources"
	"github.com/acctapi/acctapi/internal/rest"
)

// Source is an event type a subscription triggers on. It is addressed by
// its subscription's id and its Type.
type Source struct {
	// Type is one of [Types].
	Type string `json:"type"`
	// URI is the source's absolute URL, under its subscription's, set by the
	// server.
	URI string `json:"uri"`
}

// SourceList is every source of one subscription; it is not paged.
type SourceList struct {
	// Sources are every source of the subscription.
	Sources []Source `json:"sources"`
	// URI is the absolute URL of the subscription's sources.
	URI string `json:"uri"`
}

// SourceCreate is the body of a create request.
type SourceCreate struct {
	// SubscriptionID is optional; when set it must be the subscription
	// named in the path.
	SubscriptionID string `json:"subscription_id,omitempty"`
	// Type is required, one of [Types], and not yet on the subscription.
	Type string `json:"type"`
}

// Validate checks the request against the API's rules.
func (r *SourceCreate) Validate() error {
	if err := field.CheckUTF8(r); err != nil {
		return err
	}
	return checkEventType("type", r.Type)
}

// SourceUpdate is the body of an update request. Both members name the
// source and are sent in the path as well as the body; a source has no
// other writable member.
type SourceUpdate struct {
	// SubscriptionID is the id of the subscription the source belongs to;
	// required.
	SubscriptionID string `json:"subscription_id"`
	// Type is the source's event type, one of [Types]; required.
	Type string `json:"type"`
}

// Validate checks the request against the API's rules.
func (r *SourceUpdate) Validate() error {
	if err := field.CheckUTF8(r); err != nil {
		return err
	}
	return errors.Join(required("subscription_id", r.SubscriptionID), checkEventType("type", r.Type))
}

// Sources is the client for the sources of event subscriptions,
// /event_subscriptions/{id}/sources. It is safe for concurrent use.
type Sources struct {
	c *acctapi.Client
}

// NewSources returns the event sources client built on c.
func NewSources(c *acctapi.Client) *Sources { return &Sources{c: c} }

// sourcesPath returns the path of the subscription's sources, or of its
// source of type typ[0]. An argument that cannot be a path segment (empty,
// "." or "..") is a field error on its name, subscription_id or type, and
// is reported whether or not the client validates, as the client reports
// an empty id.
func sourcesPath(subscriptionID string, typ ...string) (string, error) {
	errs := []error{field.CheckSegment("subscription_id", subscriptionID)}
	for _, t := range typ {
		errs = append(errs, field.CheckSegment("type", t))
	}
	if err := errors.Join(errs...); err != nil {
		return "", err
	}
	return resources.SubPath(resources.EventSources, subscriptionID, typ...), nil
}

// Create adds a source to the subscription. r.SubscriptionID, when set,
// must equal subscriptionID.
func (s *Sources) Create(ctx context.Context, subscriptionID string, r *SourceCreate) (*Source, error) {
	if err := field.CheckRequest(r); err != nil {
		return nil, err
	}
	path, err := sourcesPath(subscriptionID)
	if err != nil {
		return nil, err
	}
	if err := rest.Validate(s.c, samePath{"subscription_id", r.SubscriptionID, subscriptionID}); err != nil {
		return nil, err
	}
	return rest.Create[Source](ctx, s.c, path, r)
}

// Get returns the subscription's source of the given type. A type that
// is no event type ([IsEventType]) is refused before any request, as by
// Create: the server's answer would be "not found", which code that reads
// "not found" as "already gone" would take for success.
func (s *Sources) Get(ctx context.Context, subscriptionID, typ string) (*Source, error) {
	path, err := sourcePath(s.c, subscriptionID, typ)
	if err != nil {
		return nil, err
	}
	return rest.Get[Source](ctx, s.c, path)
}

// List returns every source of the subscription.
func (s *Sources) List(ctx context.Context, subscriptionID string) (*SourceList, error) {
	path, err := sourcesPath(subscriptionID)
	if err != nil {
		return nil, err
	}
	return rest.Get[SourceList](ctx, s.c, path)
}

// Update updates the source that r names.
func (s *Sources) Update(ctx context.Context, r *SourceUpdate) (*Source, error) {
	if err := field.CheckRequest(r); err != nil {
		return nil, err
	}
	path, err := sourcesPath(r.SubscriptionID, r.Type)
	if err != nil {
		return nil, err
	}
	return rest.Update[Source](ctx, s.c, path, r)
}

// Delete removes the subscription's source of the given type. A type
// that is no event type is refused before any request, as by Get.
func (s *Sources) Delete(ctx context.Context, subscriptionID, typ string) error {
	path, err := sourcePath(s.c, subscriptionID, typ)
	if err != nil {
		return err
	}
	return rest.Delete(ctx, s.c, path)
}

// sourcePath is sourcesPath for one source, its type checked as a
// request's members are (unless the client skips validation).
func sourcePath(c *acctapi.Client, subscriptionID, typ string) (string, error) {
	path, err := sourcesPath(subscriptionID, typ)
	if err != nil {
		return "", err
	}
	if err := rest.Validate(c, eventTypeParam(typ)); err != nil {
		return "", err
	}
	return path, nil
}

// eventTypeParam is a source's type in a path, checked as a request's
// member.
type eventTypeParam string

func (t eventTypeParam) Validate() error { return checkEventType("type", string(t)) }

// samePath is a body member checked against the path by
// [field.CheckPathID], run like any request's Validate.
type samePath struct{ field, body, path string }

func (v samePath) Validate() error { return field.CheckPathID(v.field, v.body, v.path) }
