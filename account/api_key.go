package account

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

// APIKey is a credential for this API. Its secret, Token, is shown only once:
// in the response to [APIKeys.Create].
type APIKey struct {
	// ID is set by the server: "ak_" and a suffix that sorts by creation time.
	ID string `json:"id"`
	// URI is the API key's absolute URL, set by the server.
	URI string `json:"uri"`
	// Description is a human-readable note, at most
	// [acctapi.MaxDescriptionBytes] bytes.
	Description string `json:"description"`
	// Metadata is free-form machine-readable data, at most
	// [acctapi.MaxMetadataBytes] bytes.
	Metadata string `json:"metadata"`
	// CreatedAt is when the server created the API key; RFC 3339 in JSON, UTC,
	// whole seconds.
	CreatedAt time.Time `json:"created_at"`
	// Token is the bearer token. It is nil (JSON null) except in the
	// response to a create request.
	Token *string `json:"token"`
	// OwnerID is the user (usr_...) or service user (service_...) the key
	// acts as.
	OwnerID string `json:"owner_id"`
}

// APIKeyList is one page of API keys.
type APIKeyList struct {
	// Keys are the page's API keys, newest first.
	Keys []APIKey `json:"keys"`
	// URI is the list's absolute URL, without the query.
	URI string `json:"uri"`
	// NextPageURI is the absolute URL of the next page, or nil (JSON null) on
	// the last page.
	NextPageURI *string `json:"next_page_uri"`
}

// PageItems returns the page's API keys.
func (l *APIKeyList) PageItems() []APIKey { return l.Keys }

// NextPage returns the next page's URL, or "" on the last page.
func (l *APIKeyList) NextPage() string { return rest.Str(l.NextPageURI) }

// APIKeyCreate is the body of a create request.
type APIKeyCreate struct {
	// Description is at most [acctapi.MaxDescriptionBytes] bytes.
	Description string `json:"description,omitempty"`
	// Metadata is at most [acctapi.MaxMetadataBytes] bytes.
	Metadata string `json:"metadata,omitempty"`
	// OwnerID is the key's owner; empty means the owner of the key making
	// the request.
	OwnerID string `json:"owner_id,omitempty"`
}

// Validate checks the request against the API's rules.
func (r *APIKeyCreate) Validate() error {
	if err := field.CheckUTF8(r); err != nil {
		return err
	}
	return errors.Join(
		field.CheckDescription("description", r.Description),
		field.CheckMetadata("metadata", r.Metadata),
	)
}

// APIKeyUpdate is the body of an update request. Nil members are left
// unchanged.
type APIKeyUpdate struct {
	// ID is the API key to update; it is sent in the path.
	ID string `json:"id"`
	// Description, when not nil, replaces the description; at most
	// [acctapi.MaxDescriptionBytes] bytes.
	Description *string `json:"description,omitempty"`
	// Metadata, when not nil, replaces the metadata; at most
	// [acctapi.MaxMetadataBytes] bytes.
	Metadata *string `json:"metadata,omitempty"`
}

// Validate checks the request against the API's rules.
func (r *APIKeyUpdate) Validate() error {
	if err := field.CheckUTF8(r); err != nil {
		return err
	}
	return errors.Join(
		field.CheckDescriptionPtr("description", r.Description),
		field.CheckMetadataPtr("metadata", r.Metadata),
	)
}

// APIKeys is the client for /api_keys. It is safe for concurrent use.
type APIKeys struct {
	c *acctapi.Client
}

// NewAPIKeys returns the API keys client built on c.
func NewAPIKeys(c *acctapi.Client) *APIKeys { return &APIKeys{c: c} }

// Create creates an API key. The returned key's Token is the only copy of
// the secret the API will ever return.
func (s *APIKeys) Create(ctx context.Context, r *APIKeyCreate) (*APIKey, error) {
	return rest.Create[APIKey](ctx, s.c, resources.APIKeys.Path(), r)
}

// Get returns the API key with the given id; its Token is nil.
func (s *APIKeys) Get(ctx context.Context, id string) (*APIKey, error) {
	return rest.Get[APIKey](ctx, s.c, resources.APIKeys.Item(id))
}

// Update changes the members of an API key that r sets.
func (s *APIKeys) Update(ctx context.Context, r *APIKeyUpdate) (*APIKey, error) {
	if err := field.CheckRequest(r); err != nil {
		return nil, err
	}
	return rest.Update[APIKey](ctx, s.c, resources.APIKeys.Item(r.ID), r)
}

// Delete deletes the API key with the given id; its token stops working at
// once.
func (s *APIKeys) Delete(ctx context.Context, id string) error {
	return rest.Delete(ctx, s.c, resources.APIKeys.Item(id))
}

// List returns every API key, newest first, following pages as needed.
// The filter may use id, description, metadata, owner_id and created_at.
// An error ends the sequence.
func (s *APIKeys) List(ctx context.Context, opts *acctapi.FilterOptions) iter.Seq2[APIKey, error] {
	return rest.All[APIKey, APIKeyList](ctx, s.c, resources.APIKeys.Path(), opts)
}

// Page returns one page of API keys.
func (s *APIKeys) Page(ctx context.Context, opts *acctapi.FilterOptions) (*APIKeyList, error) {
	return rest.GetPage[APIKeyList](ctx, s.c, resources.APIKeys.Path(), opts)
}
