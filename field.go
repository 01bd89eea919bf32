package acctapi

import "github.com/acctapi/acctapi/internal/field"

// Size limits shared by every resource that carries a description or
// metadata: the specification's limits on them.
const (
	MaxDescriptionBytes = field.MaxDescriptionBytes
	MaxMetadataBytes    = field.MaxMetadataBytes
)

// ErrInvalid is the sentinel every [FieldError] wraps, so
// errors.Is(err, ErrInvalid) tells a validation failure from other errors,
// whichever package validated (ratelimit's config errors wrap it too).
var ErrInvalid = field.ErrInvalid

// FieldError reports one invalid member of a request: its Field (the JSON
// path, with dots between object members and [i] for list elements, such as
// "target.kinesis.auth.role.role_arn"; "" for the object itself), a
// lower-case Reason without the member's name, the contract's error Code
// the fake answers with (such as [CodeInvalidValue]), and an optional
// underlying cause Err. Its Error method returns "acctapi: <field>: <reason>";
// Unwrap returns the cause and [ErrInvalid].
//
// Validate methods, in this package's siblings and in ratelimit alike,
// return one FieldError per broken rule, joined with [errors.Join]; use
// [errors.As] with a *FieldError to find the first, or [FieldErrors] to
// list them all.
type FieldError = field.Error

// FieldErrors returns every [FieldError] in err's tree, in order. It returns
// nil when err holds none.
func FieldErrors(err error) []*FieldError { return field.Errors(err) }
