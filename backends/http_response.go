package backends

import (
	"context"
	"errors"
	"iter"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/acctapi/acctapi"
	"github.com/acctapi/acctapi/internal/field"
	"github.com/acctapi/acctapi/internal/resources"
	"github.com/acctapi/acctapi/internal/rest"
)

// HTTPResponse is a backend that answers every request itself with a fixed
// status, headers and body.
type HTTPResponse struct {
	// ID is set by the server: "bkdhr_" and a suffix that sorts by creation
	// time.
	ID string `json:"id"`
	// URI is the HTTP response backend's absolute URL, set by the server.
	URI string `json:"uri"`
	// CreatedAt is when the server created the HTTP response backend; RFC 3339
	// in JSON, UTC, whole seconds.
	CreatedAt time.Time `json:"created_at"`
	// Description is a human-readable note, at most
	// [acctapi.MaxDescriptionBytes] bytes.
	Description string `json:"description"`
	// Metadata is free-form machine-readable data, at most
	// [acctapi.MaxMetadataBytes] bytes.
	Metadata string `json:"metadata"`
	// Body is the response body.
	Body string `json:"body"`
	// Headers are the response headers, by name.
	Headers map[string]string `json:"headers"`
	// StatusCode is the response status, 100 to 599.
	StatusCode int `json:"status_code"`
}

// HTTPResponseList is one page of HTTP response backends.
type HTTPResponseList struct {
	// Backends are the page's HTTP response backends, newest first.
	Backends []HTTPResponse `json:"backends"`
	// URI is the list's absolute URL, without the query.
	URI string `json:"uri"`
	// NextPageURI is the absolute URL of the next page, or nil (JSON null) on
	// the last page.
	NextPageURI *string `json:"next_page_uri"`
}

// PageItems returns the page's HTTP response backends.
func (l *HTTPResponseList) PageItems() []HTTPResponse { return l.Backends }

// NextPage returns the next page's URL, or "" on the last page.
func (l *HTTPResponseList) NextPage() string { return rest.Str(l.NextPageURI) }

// HTTPResponseCreate is the body of a create request.
type HTTPResponseCreate struct {
	// Description is at most [acctapi.MaxDescriptionBytes] bytes.
	Description string `json:"description,omitempty"`
	// Metadata is at most [acctapi.MaxMetadataBytes] bytes.
	Metadata string `json:"metadata,omitempty"`
	// Body is the fixed response body; empty for none.
	Body string `json:"body,omitempty"`
	// Headers maps header names (HTTP tokens) to values without CR, LF or
	// NUL; at most [MaxHeaders] of them.
	Headers map[string]string `json:"headers,omitempty"`
	// StatusCode is required, 100 to 599.
	StatusCode int `json:"status_code"`
}

// Validate checks the request against the API's rules.
func (r *HTTPResponseCreate) Validate() error {
	if err := field.CheckUTF8(r); err != nil {
		return err
	}
	var status error
	if r.StatusCode == 0 {
		status = field.Invalid("status_code", "is required: from 100 to 599 (0, or none, was given)")
	} else {
		status = checkStatusCode(r.StatusCode)
	}
	return errors.Join(
		field.CheckDescription("description", r.Description),
		field.CheckMetadata("metadata", r.Metadata),
		checkHeaders(r.Headers),
		status,
	)
}

// HTTPResponseUpdate is the body of an update request. Nil members are left
// unchanged; the rules are those of [HTTPResponseCreate].
type HTTPResponseUpdate struct {
	// ID is the HTTP response backend to update; it is sent in the path.
	ID string `json:"id"`
	// Description, when not nil, replaces the description; at most
	// [acctapi.MaxDescriptionBytes] bytes.
	Description *string `json:"description,omitempty"`
	// Metadata, when not nil, replaces the metadata; at most
	// [acctapi.MaxMetadataBytes] bytes.
	Metadata *string `json:"metadata,omitempty"`
	// Body, when not nil, replaces the response body.
	Body *string `json:"body,omitempty"`
	// Headers, when not nil, replaces every header; a pointer to an empty
	// (or nil) map removes them all.
	Headers *map[string]string `json:"headers,omitempty"`
	// StatusCode, when not nil, replaces the response status, 100 to 599.
	StatusCode *int `json:"status_code,omitempty"`
}

// Validate checks the request against the API's rules.
func (r *HTTPResponseUpdate) Validate() error {
	if err := field.CheckUTF8(r); err != nil {
		return err
	}
	errs := []error{
		field.CheckDescriptionPtr("description", r.Description),
		field.CheckMetadataPtr("metadata", r.Metadata),
	}
	if r.Headers != nil {
		errs = append(errs, checkHeaders(*r.Headers))
	}
	if r.StatusCode != nil {
		errs = append(errs, checkStatusCode(*r.StatusCode))
	}
	return errors.Join(errs...)
}

func checkStatusCode(code int) error {
	if code < 100 || code > 599 {
		return field.Invalid("status_code", "is %d; must be from 100 to 599", code)
	}
	return nil
}

// MaxHeaders is the most headers an HTTP response backend may set. The
// real service publishes no bound; a fixed response rarely needs more than
// a handful (content type, cache control, a few custom ones), and 100 is
// more than common HTTP servers accept in one response or request.
const MaxHeaders = 100

// checkHeaders reports more than MaxHeaders headers (alone: the names are
// not looked at then), else, in name order, header names that are not HTTP
// tokens and values that could end the header line.
func checkHeaders(h map[string]string) error {
	if len(h) > MaxHeaders {
		return field.Invalid("headers", "has %d headers; at most %d are allowed", len(h), MaxHeaders)
	}
	var errs []error
	for _, name := range slices.Sorted(maps.Keys(h)) {
		switch {
		case !field.IsToken(name):
			errs = append(errs, field.Invalid("headers."+name, "is not a valid header name"))
		case strings.ContainsAny(h[name], "\r\n\x00"):
			errs = append(errs, field.Invalid("headers."+name, "has a CR, LF or NUL in its value"))
		}
	}
	return errors.Join(errs...)
}

// HTTPResponses is the client for /backends/http_response. It is safe for
// concurrent use.
type HTTPResponses struct {
	c *acctapi.Client
}

// NewHTTPResponses returns the HTTP response backends client built on c.
func NewHTTPResponses(c *acctapi.Client) *HTTPResponses { return &HTTPResponses{c: c} }

// Create creates an HTTP response backend.
func (s *HTTPResponses) Create(ctx context.Context, r *HTTPResponseCreate) (*HTTPResponse, error) {
	return rest.Create[HTTPResponse](ctx, s.c, resources.HTTPResponses.Path(), r)
}

// Get returns the HTTP response backend with the given id.
func (s *HTTPResponses) Get(ctx context.Context, id string) (*HTTPResponse, error) {
	return rest.Get[HTTPResponse](ctx, s.c, resources.HTTPResponses.Item(id))
}

// Update changes the members of an HTTP response backend that r sets.
func (s *HTTPResponses) Update(ctx context.Context, r *HTTPResponseUpdate) (*HTTPResponse, error) {
	if err := field.CheckRequest(r); err != nil {
		return nil, err
	}
	return rest.Update[HTTPResponse](ctx, s.c, resources.HTTPResponses.Item(r.ID), r)
}

// Delete deletes the HTTP response backend with the given id.
func (s *HTTPResponses) Delete(ctx context.Context, id string) error {
	return rest.Delete(ctx, s.c, resources.HTTPResponses.Item(id))
}

// List returns every HTTP response backend, newest first, following pages
// as needed. An error ends the sequence.
func (s *HTTPResponses) List(ctx context.Context, opts *acctapi.ListOptions) iter.Seq2[HTTPResponse, error] {
	return rest.All[HTTPResponse, HTTPResponseList](ctx, s.c, resources.HTTPResponses.Path(), opts)
}

// Page returns one page of HTTP response backends.
func (s *HTTPResponses) Page(ctx context.Context, opts *acctapi.ListOptions) (*HTTPResponseList, error) {
	return rest.GetPage[HTTPResponseList](ctx, s.c, resources.HTTPResponses.Path(), opts)
}
