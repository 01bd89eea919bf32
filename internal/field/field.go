// Package field holds the request-validation plumbing shared by the
// domain packages, the fake and ratelimit: the field error type (exported to
// users as acctapi.FieldError), the shared size and page-size rules, and the
// error codes they carry. It imports nothing of the module, so a package
// that validates (ratelimit) need not import the HTTP transport.
package field

import (
	"errors"
	"fmt"
	"strings"
)

// The error codes the shared rules carry; the root package's catalogue
// (acctapi.Code*) refers to these, so each is written once.
const (
	CodeInvalidValue       = "ERR_NGROK_215" // 400: wrong JSON type or invalid value
	CodeInvalidJSON        = "ERR_NGROK_213" // 400: body is not valid JSON
	CodeDescriptionTooLong = "ERR_NGROK_420" // 400: description over 255 bytes
	CodeMetadataTooLong    = "ERR_NGROK_421" // 400: metadata over 4096 bytes
	CodeBadLimit           = "ERR_NGROK_233" // 400: limit not an integer from 1 to 100
)

// MaxLimit is the largest page size the API serves, and its default.
const MaxLimit = 100

// Size limits shared by every resource that carries a description or
// metadata: the specification's limits on them.
const (
	MaxDescriptionBytes = 255
	MaxMetadataBytes    = 4096
)

// ErrInvalid is the sentinel every [Error] wraps, so
// errors.Is(err, ErrInvalid) tells a validation failure from other errors.
var ErrInvalid = errors.New("invalid request")

// Error reports one invalid member of a request. Validate methods return
// one Error per broken rule, joined with [errors.Join]; use [errors.As]
// to find the first, or [Errors] to list them all.
type Error struct {
	// Field is the member's JSON path, with dots between object members and
	// [i] for list elements ("target.kinesis.auth.role.role_arn",
	// "enabled_features[2]"); "" when the error is about the object validated
	// itself.
	Field string
	// Reason says what is wrong with the member, lower-case and without its
	// name, such as "is required".
	Reason string
	// Code is the contract's error code for the broken rule, which the fake
	// answers with, such as [CodeInvalidValue].
	Code string
	// Err, when not nil, is the underlying cause; [Error.Unwrap] returns
	// it.
	Err error
}

// Invalid returns an Error for field with the generic invalid-value code
// [CodeInvalidValue] and a reason built with [fmt.Sprintf].
func Invalid(field, format string, args ...any) *Error {
	return &Error{Field: field, Reason: fmt.Sprintf(format, args...), Code: CodeInvalidValue}
}

// Error returns "acctapi: <field>: <reason>".
func (e *Error) Error() string {
	var b strings.Builder
	b.WriteString("acctapi: ")
	if e.Field != "" {
		b.WriteString(e.Field)
		b.WriteString(": ")
	}
	b.WriteString(e.Reason)
	if e.Err != nil {
		b.WriteString(": ")
		b.WriteString(e.Err.Error())
	}
	return b.String()
}

// Unwrap returns the cause, if any, and [ErrInvalid].
func (e *Error) Unwrap() []error {
	if e.Err != nil {
		return []error{ErrInvalid, e.Err}
	}
	return []error{ErrInvalid}
}

// Errors returns every [Error] in err's tree, in order. It returns
// nil when err holds none.
func Errors(err error) []*Error {
	var out []*Error
	var walk func(error)
	walk = func(err error) {
		switch e := err.(type) {
		case nil:
		case *Error:
			out = append(out, e)
		case interface{ Unwrap() []error }:
			for _, inner := range e.Unwrap() {
				walk(inner)
			}
		case interface{ Unwrap() error }:
			walk(e.Unwrap())
		}
	}
	walk(err)
	return out
}

// Prefix returns err with every [Error] in it re-rooted under path:
// a field "role_arn" becomes "<path>.role_arn", a field "[2]" becomes
// "<path>[2]", and an empty field becomes path. Validators of nested objects
// use it so the outer request's errors name the full JSON path. Errors in
// err that hold no Error are kept as they are; err itself is not
// modified. It returns nil for a nil err.
func Prefix(path string, err error) error {
	if len(Errors(err)) == 0 {
		return err
	}
	return prefix(path, err)
}

// prefix rebuilds err's tree with the field errors re-rooted. A wrapper
// around a field error is replaced by what it wraps, since it cannot be
// rebuilt around a new error.
func prefix(path string, err error) error {
	switch e := err.(type) {
	case *Error:
		c := *e
		switch {
		case c.Field == "":
			c.Field = path
		case strings.HasPrefix(c.Field, "["):
			c.Field = path + c.Field
		default:
			c.Field = path + "." + c.Field
		}
		return &c
	case interface{ Unwrap() []error }:
		if len(Errors(err)) == 0 {
			return err
		}
		inner := e.Unwrap()
		errs := make([]error, len(inner))
		for i, in := range inner {
			errs[i] = prefix(path, in)
		}
		return errors.Join(errs...)
	case interface{ Unwrap() error }:
		if len(Errors(err)) == 0 {
			return err
		}
		return prefix(path, e.Unwrap())
	}
	return err
}

// CheckDescription reports a description longer than [MaxDescriptionBytes]
// bytes (bytes, not characters) as a [Error] on field with
// [CodeDescriptionTooLong]; it returns nil otherwise.
func CheckDescription(field, s string) error {
	if len(s) > MaxDescriptionBytes {
		return &Error{Field: field, Code: CodeDescriptionTooLong,
			Reason: fmt.Sprintf("is %d bytes; at most %d allowed", len(s), MaxDescriptionBytes)}
	}
	return nil
}

// CheckMetadata reports metadata longer than [MaxMetadataBytes] bytes as a
// [Error] on field with [CodeMetadataTooLong]; it returns nil otherwise.
func CheckMetadata(field, s string) error {
	if len(s) > MaxMetadataBytes {
		return &Error{Field: field, Code: CodeMetadataTooLong,
			Reason: fmt.Sprintf("is %d bytes; at most %d allowed", len(s), MaxMetadataBytes)}
	}
	return nil
}

// CheckDescriptionPtr and CheckMetadataPtr are [CheckDescription] and
// [CheckMetadata] for the optional members of update requests: nil passes.
func CheckDescriptionPtr(field string, s *string) error {
	if s == nil {
		return nil
	}
	return CheckDescription(field, *s)
}

// CheckMetadataPtr is [CheckMetadata] for an optional member: nil passes.
func CheckMetadataPtr(field string, s *string) error {
	if s == nil {
		return nil
	}
	return CheckMetadata(field, *s)
}

// CheckPathID reports a request body member (such as "id" or
// "subscription_id") that names another resource than the path does, as a
// field error on field with [CodeInvalidValue]; an empty member is absent.
// The resource clients and the fake both use it.
func CheckPathID(field, body, path string) error {
	if body != "" && body != path {
		return Invalid(field, "is %q but the path names %q", body, path)
	}
	return nil
}

// CheckLimit reports a page size outside 1 to [MaxLimit] as a field error
// on "limit" with [CodeBadLimit]. It is the one copy of the rule: the list
// options' Validate and the fake use it.
func CheckLimit(n int) error {
	if n < 1 || n > MaxLimit {
		return &Error{Field: "limit", Code: CodeBadLimit, Reason: "must be from 1 to 100"}
	}
	return nil
}
