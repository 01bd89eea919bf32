package acctapi

import (
	"errors"
	"fmt"
	"strings"
)

// Size limits shared by every resource that carries a description or
// metadata (account-api.md, "Conventions" and "Limits").
const (
	MaxDescriptionBytes = 255
	MaxMetadataBytes    = 4096
)

// ErrInvalid is the sentinel every [FieldError] wraps, so
// errors.Is(err, ErrInvalid) tells a validation failure from other errors.
var ErrInvalid = errors.New("invalid request")

// FieldError reports one invalid member of a request. Validate methods return
// one FieldError per broken rule, joined with [errors.Join]; use [errors.As]
// to find the first, or [FieldErrors] to list them all.
type FieldError struct {
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
	// Err, when not nil, is the underlying cause; [FieldError.Unwrap] returns
	// it.
	Err error
}

// Invalid returns a FieldError for field with the generic invalid-value code
// [CodeInvalidValue] and a reason built with [fmt.Sprintf].
func Invalid(field, format string, args ...any) *FieldError {
	return &FieldError{Field: field, Reason: fmt.Sprintf(format, args...), Code: CodeInvalidValue}
}

// Error returns "acctapi: <field>: <reason>".
func (e *FieldError) Error() string {
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
func (e *FieldError) Unwrap() []error {
	if e.Err != nil {
		return []error{ErrInvalid, e.Err}
	}
	return []error{ErrInvalid}
}

// FieldErrors returns every [FieldError] in err's tree, in order. It returns
// nil when err holds none.
func FieldErrors(err error) []*FieldError {
	var out []*FieldError
	var walk func(error)
	walk = func(err error) {
		switch e := err.(type) {
		case nil:
		case *FieldError:
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

// Prefix returns err with every [FieldError] in it re-rooted under path:
// a field "role_arn" becomes "<path>.role_arn", a field "[2]" becomes
// "<path>[2]", and an empty field becomes path. Validators of nested objects
// use it so the outer request's errors name the full JSON path. Errors in
// err that hold no FieldError are kept as they are; err itself is not
// modified. It returns nil for a nil err.
func Prefix(path string, err error) error {
	if len(FieldErrors(err)) == 0 {
		return err
	}
	return prefix(path, err)
}

// prefix rebuilds err's tree with the field errors re-rooted. A wrapper
// around a field error is replaced by what it wraps, since it cannot be
// rebuilt around a new error.
func prefix(path string, err error) error {
	switch e := err.(type) {
	case *FieldError:
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
		if len(FieldErrors(err)) == 0 {
			return err
		}
		inner := e.Unwrap()
		errs := make([]error, len(inner))
		for i, in := range inner {
			errs[i] = prefix(path, in)
		}
		return errors.Join(errs...)
	case interface{ Unwrap() error }:
		if len(FieldErrors(err)) == 0 {
			return err
		}
		return prefix(path, e.Unwrap())
	}
	return err
}

// CheckDescription reports a description longer than [MaxDescriptionBytes]
// bytes (bytes, not characters) as a [FieldError] on field with
// [CodeDescriptionTooLong]; it returns nil otherwise.
func CheckDescription(field, s string) error {
	if len(s) > MaxDescriptionBytes {
		return &FieldError{Field: field, Code: CodeDescriptionTooLong,
			Reason: fmt.Sprintf("is %d bytes; at most %d allowed", len(s), MaxDescriptionBytes)}
	}
	return nil
}

// CheckMetadata reports metadata longer than [MaxMetadataBytes] bytes as a
// [FieldError] on field with [CodeMetadataTooLong]; it returns nil otherwise.
func CheckMetadata(field, s string) error {
	if len(s) > MaxMetadataBytes {
		return &FieldError{Field: field, Code: CodeMetadataTooLong,
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
