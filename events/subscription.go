package events

import (
	"context"
	"errors"
	"iter"
	"time"

	"github.com/acctapi/acctapi"
	"github.com/acctapi/acctapi/internal/field"
	"github.com/acctapi/acctapi/internal/resources"
	"github.com/acctapi/acctapi/internal/rest"
)

// Subscription sends events of its sources' types to its destinations.
type Subscription struct {
	// ID is set by the server: "esb_" and a suffix that sorts by creation
	// time.
	ID string `json:"id"`
	// URI is the subscription's absolute URL, set by the server.
	URI string `json:"uri"`
	// CreatedAt is when the server created the subscription; RFC 3339 in JSON,
	// UTC, whole seconds.
	CreatedAt time.Time `json:"created_at"`
	// Description is a human-readable note, at most
	// [acctapi.MaxDescriptionBytes] bytes.
	Description string `json:"description"`
	// Metadata is free-form machine-readable data, at most
	// [acctapi.MaxMetadataBytes] bytes.
	Metadata string `json:"metadata"`
	// Sources are the event types the subscription triggers on.
	Sources []Source `json:"sources"`
	// Destinations refer to the destinations the events are sent to.
	Destinations []acctapi.Ref `json:"destinations"`
}

// SubscriptionList is one page of event subscriptions.
type SubscriptionList struct {
	// Subscriptions are the page's subscriptions, newest first (JSON
	// event_subscriptions).
	Subscriptions []Subscription `json:"event_subscriptions"`
	// URI is the list's absolute URL, without the query.
	URI string `json:"uri"`
	// NextPageURI is the absolute URL of the next page, or nil (JSON null) on
	// the last page.
	NextPageURI *string `json:"next_page_uri"`
}

// PageItems returns the page's subscriptions.
func (l *SubscriptionList) PageItems() []Subscription { return l.Subscriptions }

// NextPage returns the next page's URL, or "" on the last page.
func (l *SubscriptionList) NextPage() string { return rest.Str(l.NextPageURI) }

// SubscriptionSource names an event type in a subscription's create or
// update request.
type SubscriptionSource struct {
	// Type is one of [Types].
	Type string `json:"type"`
}

// SubscriptionCreate is the body of a create request.
type SubscriptionCreate struct {
	// Description is at most [acctapi.MaxDescriptionBytes] bytes.
	Description string `json:"description"`
	// Metadata is at most [acctapi.MaxMetadataBytes] bytes.
	Metadata string `json:"metadata"`
	// Sources may be empty; no type may appear twice.
	Sources []SubscriptionSource `json:"sources"`
	// DestinationIDs are ids of the account's destinations, non-empty and
	// without duplicates, at most [MaxDestinationIDs]; the list may be
	// empty.
	DestinationIDs []string `json:"destination_ids"`
}

// Validate checks the request against the API's rules.
func (r *SubscriptionCreate) Validate() error {
	if err := field.CheckUTF8(r); err != nil {
		return err
	}
	return errors.Join(
		field.CheckDescription("description", r.Description),
		field.CheckMetadata("metadata", r.Metadata),
		checkSources(r.Sources),
		checkDestinationIDs(r.DestinationIDs),
	)
}

// SubscriptionUpdate is the body of an update request. Nil members are left
// unchanged; a non-nil empty list clears it.
type SubscriptionUpdate struct {
	// ID is the subscription to update; it is sent in the path.
	ID string `json:"id"`
	// Description, when not nil, replaces the description; at most
	// [acctapi.MaxDescriptionBytes] bytes.
	Description *string `json:"description,omitempty"`
	// Metadata, when not nil, replaces the metadata; at most
	// [acctapi.MaxMetadataBytes] bytes.
	Metadata *string `json:"metadata,omitempty"`
	// Sources, when not nil, replaces every source, with the rules of
	// [SubscriptionCreate.Sources].
	Sources *[]SubscriptionSource `json:"sources,omitempty"`
	// DestinationIDs, when not nil, replaces the destinations, with the rules
	// of [SubscriptionCreate.DestinationIDs].
	DestinationIDs *[]string `json:"destination_ids,omitempty"`
}

// Validate checks the request against the API's rules.
func (r *SubscriptionUpdate) Validate() error {
	if err := field.CheckUTF8(r); err != nil {
		return err
	}
	errs := []error{
		field.CheckDescriptionPtr("description", r.Description),
		field.CheckMetadataPtr("metadata", r.Metadata),
	}
	if r.Sources != nil {
		errs = append(errs, checkSources(*r.Sources))
	}
	if r.DestinationIDs != nil {
		errs = append(errs, checkDestinationIDs(*r.DestinationIDs))
	}
	return errors.Join(errs...)
}

func checkSources(list []SubscriptionSource) error {
	return checkEach("sources", list, func(s SubscriptionSource) string { return s.Type },
		func(f string, s SubscriptionSource) error { return checkEventType(f+".type", s.Type) })
}

func checkDestinationIDs(ids []string) error {
	if len(ids) > MaxDestinationIDs {
		return field.Invalid("destination_ids", "has %d destinations; at most %d are allowed", len(ids), MaxDestinationIDs)
	}
	return checkEach("destination_ids", ids, func(id string) string { return id }, required)
}

// MaxDestinationIDs is the most destinations one event subscription may
// send to. The real service publishes no bound; 100 leaves room for any
// real use while keeping a subscription (and its references, which a
// server indexes) small, as [backends.MaxFailoverBackends] does a
// failover's.
const MaxDestinationIDs = 100

// Subscriptions is the client for /event_subscriptions. It is safe for
// concurrent use.
type Subscriptions struct {
	c *acctapi.Client
}

// NewSubscriptions returns the event subscriptions client built on c.
func NewSubscriptions(c *acctapi.Client) *Subscriptions { return &Subscriptions{c: c} }

// Create creates an event subscription.
func (s *Subscriptions) Create(ctx context.Context, r *SubscriptionCreate) (*Subscription, error) {
	return rest.Create[Subscription](ctx, s.c, resources.EventSubscriptions.Path(), r)
}

// Get returns the event subscription with the given id.
func (s *Subscriptions) Get(ctx context.Context, id string) (*Subscription, error) {
	return rest.Get[Subscription](ctx, s.c, resources.EventSubscriptions.Item(id))
}

// Update changes the members of an event subscription that r sets.
func (s *Subscriptions) Update(ctx context.Context, r *SubscriptionUpdate) (*Subscription, error) {
	if err := field.CheckRequest(r); err != nil {
		return nil, err
	}
	return rest.Update[Subscription](ctx, s.c, resources.EventSubscriptions.Item(r.ID), r)
}

// Delete deletes the event subscription with the given id.
func (s *Subscriptions) Delete(ctx context.Context, id string) error {
	return rest.Delete(ctx, s.c, resources.EventSubscriptions.Item(id))
}

// List returns every event subscription, newest first, following pages as
// needed. The filter may use id, description, metadata and created_at. An
// error ends the sequence.
func (s *Subscriptions) List(ctx context.Context, opts *acctapi.FilterOptions) iter.Seq2[Subscription, error] {
	return rest.All[Subscription, SubscriptionList](ctx, s.c, resources.EventSubscriptions.Path(), opts)
}

// Page returns one page of event subscriptions.
func (s *Subscriptions) Page(ctx context.Context, opts *acctapi.FilterOptions) (*SubscriptionList, error) {
	return rest.GetPage[SubscriptionList](ctx, s.c, resources.EventSubscriptions.Path(), opts)
}
