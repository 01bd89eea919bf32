package account

import (
	"context"
	"iter"

	"github.com/acctapi/acctapi"
	"github.com/acctapi/acctapi/internal/field"
	"github.com/acctapi/acctapi/internal/resources"
	"github.com/acctapi/acctapi/internal/rest"
)

// BotUser is the record the deprecated /bot_users paths serve: the same
// record, with the same ids, as [ServiceUser].
//
// Deprecated: Bot users were renamed service users; use [ServiceUser].
type BotUser = ServiceUser

// BotUserCreate is the body of a bot user create request, with the rules of
// [ServiceUserCreate].
//
// Deprecated: Use [ServiceUserCreate].
type BotUserCreate = ServiceUserCreate

// BotUserUpdate is the body of a bot user update request, with the rules of
// [ServiceUserUpdate].
//
// Deprecated: Use [ServiceUserUpdate].
type BotUserUpdate = ServiceUserUpdate

// BotUserList is one page of bot users; only its collection member's name,
// bot_users, differs from [ServiceUserList].
//
// Deprecated: Use [ServiceUserList].
type BotUserList struct {
	// BotUsers are the page's bot users, newest first.
	BotUsers []BotUser `json:"bot_users"`
	// URI is the list's absolute URL, without the query.
	URI string `json:"uri"`
	// NextPageURI is the absolute URL of the next page, or nil (JSON null) on
	// the last page.
	NextPageURI *string `json:"next_page_uri"`
}

// PageItems returns the page's bot users.
func (l *BotUserList) PageItems() []BotUser { return l.BotUsers }

// NextPage returns the next page's URL, or "" on the last page.
func (l *BotUserList) NextPage() string { return rest.Str(l.NextPageURI) }

// BotUsers is the client for /bot_users, the deprecated alias of
// /service_users. Its list takes no filter. It is safe for concurrent use.
//
// Deprecated: Bot users were renamed service users, and the API will retire
// these paths; use [ServiceUsers], which serves the same records.
type BotUsers struct {
	c *acctapi.Client
}

// NewBotUsers returns the bot users client built on c.
//
// Deprecated: Use [NewServiceUsers].
func NewBotUsers(c *acctapi.Client) *BotUsers { return &BotUsers{c: c} }

// Create creates a bot user.
func (s *BotUsers) Create(ctx context.Context, r *BotUserCreate) (*BotUser, error) {
	return rest.Create[BotUser](ctx, s.c, resources.ServiceUsers.AliasPath(), r)
}

// Get returns the bot user with the given id.
func (s *BotUsers) Get(ctx context.Context, id string) (*BotUser, error) {
	return rest.Get[BotUser](ctx, s.c, resources.ServiceUsers.AliasItem(id))
}

// Update changes the members of a bot user that r sets.
func (s *BotUsers) Update(ctx context.Context, r *BotUserUpdate) (*BotUser, error) {
	if err := field.CheckRequest(r); err != nil {
		return nil, err
	}
	return rest.Update[BotUser](ctx, s.c, resources.ServiceUsers.AliasItem(r.ID), r)
}

// Delete deletes the bot user with the given id.
func (s *BotUsers) Delete(ctx context.Context, id string) error {
	return rest.Delete(ctx, s.c, resources.ServiceUsers.AliasItem(id))
}

// List returns every bot user, newest first, following pages as needed.
// An error ends the sequence.
func (s *BotUsers) List(ctx context.Context, opts *acctapi.ListOptions) iter.Seq2[BotUser, error] {
	return rest.All[BotUser, BotUserList](ctx, s.c, resources.ServiceUsers.AliasPath(), opts)
}

// Page returns one page of bot users.
func (s *BotUsers) Page(ctx context.Context, opts *acctapi.ListOptions) (*BotUserList, error) {
	return rest.GetPage[BotUserList](ctx, s.c, resources.ServiceUsers.AliasPath(), opts)
}
