package acctapi

import (
	"errors"
	"net/url"
	"strconv"

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
// "limit" with [CodeBadLimit] (zero, the default, is allowed), and a
// Filter over 4,096 bytes or not valid UTF-8 as one on "filter" with
// [CodeBadFilter] (the server checks the rest: the fields it names, the
// constructs it uses).
func (o *FilterOptions) Validate() error {
	if o == nil {
		return nil
	}
	var errs []error
	if o.Limit != 0 {
		errs = append(errs, field.CheckLimit(o.Limit))
	}
	errs = append(errs, field.CheckFilter(o.Filter))
	return errors.Join(errs...)
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
