package account

import (
	"context"
	"iter"
	"time"

	"github.com/acctapi/acctapi"
	"github.com/acctapi/acctapi/internal/field"
	"github.com/acctapi/acctapi/internal/resources"
	"github.com/acctapi/acctapi/internal/rest"
)

// MaxNameBytes is the longest service user name, in bytes.
const MaxNameBytes = 255

// ServiceUser is a non-human principal of the account that API keys can
// belong to.
type ServiceUser struct {
	// ID is set by the server: "service_" and a suffix that sorts by creation
	// time.
	ID string `json:"id"`
	// URI is the service user's absolute URL, set by the server.
	URI string `json:"uri"`
	// Name is 1 to [MaxNameBytes] bytes, unique within the account.
	Name string `json:"name"`
	// Active is false for a deactivated service user, whose API keys are then
	// refused with 403 Forbidden.
	Active bool `json:"active"`
	// CreatedAt is when the server created the service user; RFC 3339 in JSON,
	// UTC, whole seconds.
	CreatedAt time.Time `json:"created_at"`
}

// ServiceUserList is one page of service users.
type ServiceUserList struct {
	// ServiceUsers are the page's service users, newest first.
	ServiceUsers []ServiceUser `json:"service_users"`
	// URI is the list's absolute URL, without the query.
	URI string `json:"uri"`
	// NextPageURI is the absolute URL of the next page, or nil (JSON null) on
	// the last page.
	NextPageURI *string `json:"next_page_uri"`
}

// PageItems returns the page's service users.
func (l *ServiceUserList) PageItems() []ServiceUser { return l.ServiceUsers }

// NextPage returns the next page's URL, or "" on the last page.
func (l *ServiceUserList) NextPage() string { return rest.Str(l.NextPageURI) }

// ServiceUserCreate is the body of a create request.
type ServiceUserCreate struct {
	// Name is required, 1 to [MaxNameBytes] bytes, unique in the account.
	Name string `json:"name"`
	// Active defaults to true when nil.
	Active *bool `json:"active,omitempty"`
}

// Validate checks the request against the API's rules.
func (r *ServiceUserCreate) Validate() error {
	if err := field.CheckUTF8(r); err != nil {
		return err
	}
	return checkName("name", r.Name)
}

// ServiceUserUpdate is the body of an update request. Nil members are left
// unchanged.
type ServiceUserUpdate struct {
	// ID is the service user to update; it is sent in the path.
	ID string `json:"id"`
	// Name, when not nil, renames the service user, with the rules of
	// [ServiceUserCreate.Name].
	Name *string `json:"name,omitempty"`
	// Active, when not nil, activates (true) or deactivates (false) the
	// service user.
	Active *bool `json:"active,omitempty"`
}

// Validate checks the request against the API's rules.
func (r *ServiceUserUpdate) Validate() error {
	if err := field.CheckUTF8(r); err != nil {
		return err
	}
	if r.Name == nil {
		return nil
	}
	if *r.Name == "" {
		// Optional here: "is required" would mislead.
		return field.InvalidCode(acctapi.CodeNameRequired, "name", "is empty; a name is 1 to %d bytes (leave name out to keep it)", MaxNameBytes)
	}
	return checkName("name", *r.Name)
}

func checkName(path, name string) error {
	switch {
	case name == "":
		return field.InvalidCode(acctapi.CodeNameRequired, path, "is required")
	case len(name) > MaxNameBytes:
		return field.InvalidCode(acctapi.CodeNameTooLong, path, "is %d bytes; at most %d allowed", len(name), MaxNameBytes)
	}
	return nil
}

// ServiceUsers is the client for /service_users. It is safe for concurrent
// use.
type ServiceUsers struct {
	c *acctapi.Client
}

// NewServiceUsers returns the service users client built on c.
func NewServiceUsers(c *acctapi.Client) *ServiceUsers { return &ServiceUsers{c: c} }

// Create creates a service user.
func (s *ServiceUsers) Create(ctx context.Context, r *ServiceUserCreate) (*ServiceUser, error) {
	return rest.Create[ServiceUser](ctx, s.c, resources.ServiceUsers.Path(), r)
}

// Get returns the service user with the given id.
func (s *ServiceUsers) Get(ctx context.Context, id string) (*ServiceUser, error) {
	return rest.Get[ServiceUser](ctx, s.c, resources.ServiceUsers.Item(id))
}

// Update changes the members of a service user that r sets.
func (s *ServiceUsers) Update(ctx context.Context, r *ServiceUserUpdate) (*ServiceUser, error) {
	if err := field.CheckRequest(r); err != nil {
		return nil, err
	}
	return rest.Update[ServiceUser](ctx, s.c, resources.ServiceUsers.Item(r.ID), r)
}

// Delete deletes the service user with the given id.
func (s *ServiceUsers) Delete(ctx context.Context, id string) error {
	return rest.Delete(ctx, s.c, resources.ServiceUsers.Item(id))
}

// List returns every service user, newest first, following pages as needed.
// The filter may use id and created_at only (not name). An error ends the
// sequence.
func (s *ServiceUsers) List(ctx context.Context, opts *acctapi.FilterOptions) iter.Seq2[ServiceUser, error] {
	return rest.All[ServiceUser, ServiceUserList](ctx, s.c, resources.ServiceUsers.Path(), opts)
}

// Page returns one page of service users.
func (s *ServiceUsers) Page(ctx context.Context, opts *acctapi.FilterOptions) (*ServiceUserList, error) {
	return rest.GetPage[ServiceUserList](ctx, s.c, resources.ServiceUsers.Path(), opts)
}
