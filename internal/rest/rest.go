// Package rest holds the typed request helpers that resource clients are
// built from, so each operation is one line and no resource repeats the
// request plumbing: paths ([Path]), create, get, update and delete, and
// paged lists ([GetPage], [All]).
//
// Validation: the client's validation switch (acctapi.WithoutValidation)
// governs both kinds of input a resource client sends. A request body with a
// Validate method is validated by acctapi.Client.Do itself; list options
// travel in the query, which Do cannot see as a value with a Validate
// method, so [GetPage] (and [Validate] for any other value) asks the client
// through internal/clienthook.
package rest

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"reflect"
	"strings"

	"github.com/acctapi/acctapi"
	"github.com/acctapi/acctapi/internal/clienthook"
	"github.com/acctapi/acctapi/internal/field"
)

// Validator is a request type with a Validate method.
type Validator interface {
	// Validate returns the request's field errors, joined; nil when it is
	// valid. A client that skips validation never calls it.
	Validate() error
}

// Validate runs v.Validate unless c was built with
// acctapi.WithoutValidation; resource clients call it for checks that are
// not a request body's own (a body's Validate runs in c.Do).
func Validate(c *acctapi.Client, v Validator) error {
	if !clienthook.Validates(c) {
		return nil
	}
	return v.Validate()
}

// Path joins segments into an absolute path, escaping each one, so an id
// such as "a/b" stays one segment: Path("service_users", "a/b") is
// "/service_users/a%2Fb".
func Path(segments ...string) string {
	var b strings.Builder
	for _, s := range segments {
		b.WriteByte('/')
		b.WriteString(url.PathEscape(s))
	}
	return b.String()
}

// Create POSTs body to path and decodes the created resource; c.Do
// validates body first unless the client skips validation. A body that is
// [Dialected] is sent in the client's dialect.
func Create[T any](ctx context.Context, c *acctapi.Client, path string, body Validator) (*T, error) {
	return send[T](ctx, c, http.MethodPost, path, body)
}

// Update PATCHes body to path and decodes the updated resource; c.Do
// validates body first unless the client skips validation. A body that is
// [Dialected] is sent in the client's dialect.
func Update[T any](ctx context.Context, c *acctapi.Client, path string, body Validator) (*T, error) {
	return send[T](ctx, c, http.MethodPatch, path, body)
}

// Get fetches the resource at path.
func Get[T any](ctx context.Context, c *acctapi.Client, path string) (*T, error) {
	return send[T](ctx, c, http.MethodGet, path, nil)
}

// Delete deletes the resource at path.
func Delete(ctx context.Context, c *acctapi.Client, path string) error {
	return c.Do(ctx, http.MethodDelete, path, nil, nil, nil)
}

// Dialected is a request body whose JSON differs between the wire dialects
// (acctapi.Dialect), such as an event destination's, with its target.
type Dialected interface {
	Validator
	// MarshalDialect returns the body's JSON in dialect d.
	MarshalDialect(d acctapi.Dialect) ([]byte, error)
	// ValidateDialect is Validate with its errors' fields named in
	// dialect d.
	ValidateDialect(d acctapi.Dialect) error
}

// dialectBody sends a Dialected body in the client's dialect: c.Do
// validates it with Validate and marshals it with MarshalJSON.
type dialectBody struct {
	Dialected
	d acctapi.Dialect
}

func (b dialectBody) MarshalJSON() ([]byte, error) { return b.MarshalDialect(b.d) }

// Validate names the fields of its errors in the client's dialect, as the
// server would.
func (b dialectBody) Validate() error { return b.ValidateDialect(b.d) }

func send[T any](ctx context.Context, c *acctapi.Client, method, path string, body Validator) (*T, error) {
	if err := field.CheckRequest(body); err != nil {
		return nil, err // before dialectBody would hide the nil
	}
	var in any
	if body != nil {
		in = body
		if db, ok := body.(Dialected); ok && c.Dialect() != acctapi.DialectSpec {
			in = dialectBody{db, c.Dialect()}
		}
	}
	out := new(T)
	if err := c.Do(ctx, method, path, nil, in, out); err != nil {
		return nil, err
	}
	if err := answered(method, path, out); err != nil {
		return nil, err
	}
	return out, nil
}

// answered reports, wrapping acctapi.ErrNoResource, an answer decoded
// into v (a resource or a list type) that holds nothing of one: no id, no
// uri and no list (the API sets id and uri on every resource, and uri and
// the collection on every list). An empty object, null or a 204 from a
// server that is not the API would otherwise read as an empty resource or
// an empty list; a stub that answers only some members still passes.
func answered[T any](method, path string, v *T) error {
	rv := reflect.ValueOf(v).Elem()
	if rv.Kind() != reflect.Struct {
		return nil
	}
	for _, name := range []string{"ID", "URI"} {
		if f := rv.FieldByName(name); f.IsValid() && f.Kind() == reflect.String && f.String() != "" {
			return nil
		}
	}
	for i := range rv.NumField() {
		if f := rv.Field(i); f.Kind() == reflect.Slice && !f.IsNil() && rv.Type().Field(i).IsExported() {
			return nil
		}
	}
	return fmt.Errorf("acctapi: %s %s: %w", method, path, acctapi.ErrNoResource)
}

// Str returns *p, or "" for nil; list types use it for next_page_uri.
func Str(p *string) string {
	if p == nil {
		return ""
	}
	return *p
}
