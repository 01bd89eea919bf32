// Package rest holds the typed request helpers that resource clients are
// built from, so each operation is one line and no resource repeats the
// request plumbing.
package rest

import (
	"context"
	"net/http"

	"github.com/acctapi/acctapi"
)

// Validator is a request type with a Validate method.
type Validator interface {
	// Validate returns the request's field errors, joined; nil when it is
	// valid. A client that skips validation never calls it.
	Validate() error
}

// Create validates body (unless the client skips validation), POSTs it to
// path and decodes the created resource.
func Create[T any](ctx context.Context, c *acctapi.Client, path string, body Validator) (*T, error) {
	return send[T](ctx, c, http.MethodPost, path, body)
}

// Update validates body (unless the client skips validation), PATCHes it
// to path and decodes the updated resource.
func Update[T any](ctx context.Context, c *acctapi.Client, path string, body Validator) (*T, error) {
	return send[T](ctx, c, http.MethodPatch, path, body)
}

// Get fetches the resource at path.
func Get[T any](ctx context.Context, c *acctapi.Client, path string) (*T, error) {
	out := new(T)
	if err := c.Do(ctx, http.MethodGet, path, nil, nil, out); err != nil {
		return nil, err
	}
	return out, nil
}

// Delete deletes the resource at path.
func Delete(ctx context.Context, c *acctapi.Client, path string) error {
	return c.Do(ctx, http.MethodDelete, path, nil, nil, nil)
}

func send[T any](ctx context.Context, c *acctapi.Client, method, path string, body Validator) (*T, error) {
	if err := c.Validate(body); err != nil {
		return nil, err
	}
	out := new(T)
	if err := c.Do(ctx, method, path, nil, body, out); err != nil {
		return nil, err
	}
	return out, nil
}

// Str returns *p, or "" for nil; list types use it for next_page_uri.
func Str(p *string) string {
	if p == nil {
		return ""
	}
	return *p
}
