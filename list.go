package acctapi

import (
	"context"
	"iter"
	"net/http"
	"net/url"
	"strconv"
	"strings"

	"github.com/acctapi/acctapi/internal/field"
)

// MaxLimit is the largest page size the API serves, and its default.
const MaxLimit = field.MaxLimit

// ListOptions selects a page of a list that takes no filter. The zero value
// asks for the first page at the server's default size.
type ListOptions struct {
	// Limit is the page size, 1 to [MaxLimit]; zero leaves it to the server.
	Limit int
	// BeforeID asks for items whose id sorts before it (older items).
	BeforeID string
}

// FilterOptions selects a page of a list that accepts a CEL filter. The
// zero value asks for the first page, unfiltered.
type FilterOptions struct {
	// Limit is the page size, 1 to [MaxLimit]; zero leaves it to the server.
	Limit int
	// BeforeID asks for items whose id sorts before it (older items).
	BeforeID string
	// Filter is a CEL expression over one item, bound to obj, such as
	// `obj.description.startsWith("ci-")`.
	Filter string
}

// Query returns the options as URL query values, as they are: a Limit out
// of range is sent, for a server to refuse. A nil receiver yields no values.
func (o *ListOptions) Query() url.Values {
	if o == nil {
		return nil
	}
	return pageQuery(o.Limit, o.BeforeID, "")
}

// Validate reports a Limit outside 1 to [MaxLimit] as a [FieldError] on
// "limit" with [CodeBadLimit] (zero, the default, is allowed).
func (o *ListOptions) Validate() error {
	if o == nil || o.Limit == 0 {
		return nil
	}
	return field.CheckLimit(o.Limit)
}

// Query returns the options as URL query values, as they are: a Limit out
// of range is sent, for a server to refuse. A nil receiver yields no values.
func (o *FilterOptions) Query() url.Values {
	if o == nil {
		return nil
	}
	return pageQuery(o.Limit, o.BeforeID, o.Filter)
}

// Validate reports a Limit outside 1 to [MaxLimit] as a [FieldError] on
// "limit" with [CodeBadLimit] (zero, the default, is allowed).
func (o *FilterOptions) Validate() error {
	if o == nil || o.Limit == 0 {
		return nil
	}
	return field.CheckLimit(o.Limit)
}

func pageQuery(limit int, beforeID, filter string) url.Values {
	q := url.Values{}
	if limit != 0 {
		q.Set("limit", strconv.Itoa(limit))
	}
	if beforeID != "" {
		q.Set("before_id", beforeID)
	}
	if filter != "" {
		q.Set("filter", filter)
	}
	return q
}

// Querier is implemented by [*ListOptions] and [*FilterOptions].
type Querier interface {
	// Query returns the page's query parameters.
	Query() url.Values
	// Validate checks the options; the client runs it before sending
	// unless built [WithoutValidation].
	Validate() error
}

// Page is one page of a list response, as resource list types expose it.
type Page[T any] interface {
	// PageItems returns the page's items.
	PageItems() []T
	// NextPage returns the next page's absolute URL, or "" on the last page.
	NextPage() string
}

// GetPage fetches one page of the list at path into a new L.
func GetPage[L any](ctx context.Context, c *Client, path string, opts Querier) (*L, error) {
	var q url.Values
	if opts != nil {
		if err := c.Validate(opts); err != nil {
			return nil, err
		}
		q = opts.Query()
	}
	out := new(L)
	if err := c.Do(ctx, http.MethodGet, path, q, nil, out); err != nil {
		return nil, err
	}
	return out, nil
}

// All returns every item of the list at path, newest first, fetching pages as
// the loop asks for them. It starts with opts and then follows each page's
// next_page_uri exactly as the server gave it, until one is null (or, as a
// guard against a server that loops, a page is empty). The API key is never
// sent anywhere but the base URL's origin: when next_page_uri names another
// origin (a server's configured public URL, say, or a proxy's name for it),
// All requests path with next_page_uri's query on the base URL instead, the
// next page being the same path by the API's contract. An error ends the
// sequence after it is yielded.
//
// L is the list response type (such as account.ServiceUserList); *L must
// implement [Page].
func All[T any, L any, PL interface {
	*L
	Page[T]
}](ctx context.Context, c *Client, path string, opts Querier) iter.Seq2[T, error] {
	return func(yield func(T, error) bool) {
		var zero T
		page, err := GetPage[L](ctx, c, path, opts)
		for {
			if err != nil {
				yield(zero, err)
				return
			}
			items := PL(page).PageItems()
			for _, item := range items {
				if !yield(item, nil) {
					return
				}
			}
			next := PL(page).NextPage()
			if next == "" || len(items) == 0 {
				return
			}
			page, err = GetPage[L](ctx, c, c.onBase(path, next), nil)
		}
	}
}

// onBase returns next, a next_page_uri, when it is relative or on the base
// URL's origin, and otherwise path with next's query, to be requested on the
// base URL.
func (c *Client) onBase(path, next string) string {
	if !strings.HasPrefix(next, "http://") && !strings.HasPrefix(next, "https://") {
		return next
	}
	u, err := url.Parse(next)
	if err != nil || (u.Scheme == c.base.Scheme && strings.EqualFold(u.Host, c.base.Host) && u.User == nil) {
		return next // resolve reports a URL that does not parse
	}
	if u.RawQuery == "" {
		return path
	}
	return path + "?" + u.RawQuery
}
