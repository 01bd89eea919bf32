// Package field holds the request-validation plumbing shared by the
// domain packages, the fake and ratelimit: the field error type (exported to
// users as acctapi.FieldError), the shared size and page-size rules, and the
// error codes they carry. It imports nothing of the module, so a package
// that validates (ratelimit) need not import the HTTP transport.
package field

import (
	"errors"
	"fmt"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"
)

// The error codes the shared rules carry; the root package's catalogue
// (acctapi.Code*) refers to these, so each is written once.
const (
	CodeInvalidValue       = "ERR_NGROK_215" // 400: wrong JSON type or invalid value
	CodeInvalidJSON        = "ERR_NGROK_213" // 400: body is not valid JSON
	CodeDescriptionTooLong = "ERR_NGROK_420" // 400: description over 255 bytes
	CodeMetadataTooLong    = "ERR_NGROK_421" // 400: metadata over 4096 bytes
	CodeBadLimit           = "ERR_NGROK_233" // 400: limit not an integer from 1 to 100
	CodeBadFilter          = "ERR_NGROK_250" // 400: filter not valid for the resource
)

// MaxFilterBytes is the longest list filter, a CEL expression (contract §3).
const MaxFilterBytes = 4096

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

// InvalidCode is [Invalid] with code in place of [CodeInvalidValue]: the
// real service's code for the broken rule, where its catalogue has one
// more specific.
func InvalidCode(code, field, format string, args ...any) *Error {
	e := Invalid(field, format, args...)
	e.Code = code
	return e
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
	return Rename(err, func(f string) string {
		switch {
		case f == "":
			return path
		case strings.HasPrefix(f, "["):
			return path + f
		}
		return path + "." + f
	})
}

// Rename returns err with the field of every [Error] in it replaced by
// what name returns for it, as [Prefix] does. err itself is not modified.
func Rename(err error, name func(field string) string) error {
	return Map(err, func(e Error) Error {
		e.Field = name(e.Field)
		return e
	})
}

// Map returns err with every [Error] in it replaced by what fn returns for
// a copy of it. err itself is not modified.
func Map(err error, fn func(Error) Error) error {
	if len(Errors(err)) == 0 {
		return err
	}
	return rename(err, fn)
}

// rename rebuilds err's tree with the field errors mapped. A wrapper
// around a field error is replaced by what it wraps, since it cannot be
// rebuilt around a new error.
func rename(err error, fn func(Error) Error) error {
	switch e := err.(type) {
	case *Error:
		c := fn(*e)
		return &c
	case interface{ Unwrap() []error }:
		if len(Errors(err)) == 0 {
			return err
		}
		inner := e.Unwrap()
		errs := make([]error, len(inner))
		for i, in := range inner {
			errs[i] = rename(in, fn)
		}
		return errors.Join(errs...)
	case interface{ Unwrap() error }:
		if len(Errors(err)) == 0 {
			return err
		}
		return rename(e.Unwrap(), fn)
	}
	return err
}

// CheckDescription reports a description that is not valid UTF-8 (see
// [CheckUTF8]), or one longer than [MaxDescriptionBytes] bytes (bytes, not
// characters) as a [Error] on field with [CodeDescriptionTooLong]; it
// returns nil otherwise.
func CheckDescription(field, s string) error {
	if !utf8.ValidString(s) {
		return notUTF8(field)
	}
	if len(s) > MaxDescriptionBytes {
		return &Error{Field: field, Code: CodeDescriptionTooLong,
			Reason: fmt.Sprintf("is %d bytes; at most %d allowed", len(s), MaxDescriptionBytes)}
	}
	return nil
}

// CheckMetadata reports metadata that is not valid UTF-8 (see [CheckUTF8]),
// or longer than [MaxMetadataBytes] bytes as a [Error] on field with
// [CodeMetadataTooLong]; it returns nil otherwise.
func CheckMetadata(field, s string) error {
	if !utf8.ValidString(s) {
		return notUTF8(field)
	}
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

// ParseQueryInt reads s, a query parameter's value, as an integer of
// decimal digits only, so that a sign ("+5", "-0"), a space or an empty
// value is an error rather than a number. It is the one copy of the rule:
// the fake reads a list's limit with it, acctfake's admin API its limit
// and status.
func ParseQueryInt(s string) (int, error) {
	if s == "" || strings.TrimLeft(s, "0123456789") != "" {
		return 0, errors.New("not an integer of decimal digits (a sign is not part of an integer here)")
	}
	n, err := strconv.Atoi(s)
	if err != nil {
		return 0, errors.New("too large an integer")
	}
	return n, nil
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

// CheckFilter reports a list filter longer than [MaxFilterBytes] or not
// valid UTF-8 as a field error on "filter" with [CodeBadFilter]: what can
// be told without the list's fields. It is the one copy of the rule: the
// list options' Validate and the fake use it.
func CheckFilter(expr string) error {
	switch {
	case len(expr) > MaxFilterBytes:
		return &Error{Field: "filter", Code: CodeBadFilter, Reason: fmt.Sprintf("is longer than %d bytes (%d)", MaxFilterBytes, len(expr))}
	case !utf8.ValidString(expr):
		return &Error{Field: "filter", Code: CodeBadFilter, Reason: "is not valid UTF-8"}
	}
	return nil
}

// CheckUTF8 reports, as an [Error] with [CodeInvalidValue] on its JSON
// path, every string in the request v that is not valid UTF-8: struct
// members (by their JSON names; unexported and "-" members are skipped),
// list elements ("backends[1]"), map values ("headers.X") and map keys (on
// the map's path), through pointers and interfaces. []byte is not text and
// is skipped. It returns nil when every string is valid.
//
// JSON cannot carry such a string: encoding/json replaces each bad byte with
// U+FFFD, so the server would see, measure and store other text than the
// caller's. Validate methods run it first and return its errors alone, since
// their other rules would judge text the server never receives.
func CheckUTF8(v any) error {
	rv := reflect.ValueOf(v)
	// Every request is checked and almost all are valid: a walk that builds
	// no paths first (BenchmarkCheckUTF8).
	if validUTF8(rv) {
		return nil
	}
	var errs []error
	checkUTF8(&errs, "", rv)
	return errors.Join(errs...)
}

// validUTF8 reports whether every string checkUTF8 would check in v is
// valid UTF-8. It checks more than that, the members a json:"-" tag
// hides too, so as not to read tags: when one of those alone is invalid,
// checkUTF8 then finds nothing.
func validUTF8(v reflect.Value) bool {
	switch v.Kind() {
	case reflect.String:
		return utf8.ValidString(v.String())
	case reflect.Pointer, reflect.Interface:
		return v.IsNil() || validUTF8(v.Elem())
	case reflect.Slice, reflect.Array:
		if v.Type().Elem().Kind() == reflect.Uint8 {
			return true
		}
		for i := range v.Len() {
			if !validUTF8(v.Index(i)) {
				return false
			}
		}
	case reflect.Map:
		for it := v.MapRange(); it.Next(); {
			k := it.Key()
			if k.Kind() == reflect.String && !utf8.ValidString(k.String()) || !validUTF8(it.Value()) {
				return false
			}
		}
	case reflect.Struct:
		t := v.Type()
		for i := range t.NumField() {
			if sf := t.Field(i); (sf.IsExported() || sf.Anonymous) && !validUTF8(v.Field(i)) {
				return false
			}
		}
	}
	return true
}

func notUTF8(field string) *Error { return Invalid(field, "is not valid UTF-8") }

func checkUTF8(errs *[]error, path string, v reflect.Value) {
	switch v.Kind() {
	case reflect.String:
		if !utf8.ValidString(v.String()) {
			*errs = append(*errs, notUTF8(path))
		}
	case reflect.Pointer, reflect.Interface:
		if !v.IsNil() {
			checkUTF8(errs, path, v.Elem())
		}
	case reflect.Slice, reflect.Array:
		if v.Type().Elem().Kind() == reflect.Uint8 {
			return
		}
		for i := range v.Len() {
			checkUTF8(errs, fmt.Sprintf("%s[%d]", path, i), v.Index(i))
		}
	case reflect.Map:
		// Each key's name once (a string key is its own, without an
		// allocation), sorted so that errors come in a stable order.
		type entry struct {
			name string
			key  reflect.Value
		}
		entries := make([]entry, 0, v.Len())
		for it := v.MapRange(); it.Next(); {
			k := it.Key()
			name := ""
			if k.Kind() == reflect.String {
				name = k.String()
			} else {
				name = fmt.Sprint(k)
			}
			entries = append(entries, entry{name, k})
		}
		slices.SortFunc(entries, func(a, b entry) int { return strings.Compare(a.name, b.name) })
		for _, e := range entries {
			if e.key.Kind() == reflect.String && !utf8.ValidString(e.name) {
				*errs = append(*errs, Invalid(path, "has a key that is not valid UTF-8: %q", e.name))
				continue
			}
			checkUTF8(errs, member(path, e.name), v.MapIndex(e.key))
		}
	case reflect.Struct:
		t := v.Type()
		for i := range t.NumField() {
			sf := t.Field(i)
			tag, _, _ := strings.Cut(sf.Tag.Get("json"), ",")
			switch {
			case tag == "-":
			case sf.Anonymous && tag == "":
				// Embedded: its members are the outer object's (when
				// exported or a struct, as encoding/json has it).
				if sf.IsExported() || sf.Type.Kind() == reflect.Struct || sf.Type.Kind() == reflect.Pointer {
					checkUTF8(errs, path, v.Field(i))
				}
			case sf.IsExported():
				if tag == "" {
					tag = sf.Name
				}
				checkUTF8(errs, member(path, tag), v.Field(i))
			}
		}
	}
}

// member is the JSON path of member name of the object at path.
func member(path, name string) string {
	if path == "" {
		return name
	}
	return path + "." + name
}

// IsToken reports whether s is an HTTP token (RFC 9110, section 5.6.2):
// what a header field name must be, and what net/http sends as one (it
// drops a header with any other name).
func IsToken(s string) bool {
	return s != "" && strings.IndexFunc(s, func(r rune) bool {
		return r <= ' ' || r > '~' || strings.ContainsRune(`"(),/:;<=>?@[\]{}`, r)
	}) < 0
}

// CheckRequest reports a request body that is a nil pointer, which cannot
// be validated or sent (it would be JSON null), as an [Error] on the
// request itself (Field ""). It returns nil for any other v, nil included.
// The resource clients run it whether or not they validate.
func CheckRequest(v any) error {
	if rv := reflect.ValueOf(v); rv.Kind() == reflect.Pointer && rv.IsNil() {
		return Invalid("", "the request is a nil %T", v)
	}
	return nil
}

// CheckSegment reports a path argument that would not name one resource in
// a URL path: empty ("is required") or "." or ".." (which servers and
// proxies resolve to another path), as an [Error] on field, the argument's
// name ("id", "subscription_id").
func CheckSegment(field, seg string) error {
	switch seg {
	case "":
		return Invalid(field, "is required")
	case ".", "..":
		return Invalid(field, "must not be %q", seg)
	}
	return nil
}

// NilAsEmpty returns v, a request body, ready for encoding/json: when v is
// a struct, or a pointer to one, that holds a non-nil pointer to a nil
// slice or map (not []byte, nor a type with its own JSON or text encoding)
// (in a member, an embedded struct or a struct a member points to), it
// returns a copy of it in which each such pointer points to an empty slice
// or map instead; v itself is never modified. JSON would carry the nil one
// as null, which the API reads as an absent member (contract §1), while
// Validate reads it as empty, as Go does: `var keep []string; u.Backends =
// &keep` must remove every child, as &[]string{} does, not leave them all.
// Any other v is returned as it is.
func NilAsEmpty(v any) any {
	rv := reflect.ValueOf(v)
	switch {
	case rv.Kind() == reflect.Struct:
		if cp, ok := nilAsEmpty(rv, 0); ok {
			return cp.Interface()
		}
	case rv.Kind() == reflect.Pointer && !rv.IsNil() && rv.Elem().Kind() == reflect.Struct:
		if cp, ok := nilAsEmpty(rv.Elem(), 0); ok {
			return cp.Addr().Interface()
		}
	}
	return v
}

// maxRequestDepth bounds how deep NilAsEmpty follows struct pointers;
// request types nest two levels (an operator's binding).
const maxRequestDepth = 8

// encodesItself reports whether encoding/json leaves values of the pointer
// type t to their own MarshalJSON or MarshalText (a *json.RawMessage, whose
// empty value is no JSON at all), which NilAsEmpty leaves alone, as it
// leaves []byte, which JSON carries as a base64 string, not a list.
func encodesItself(t reflect.Type) bool {
	return t.Implements(jsonMarshaler) || t.Implements(textMarshaler) ||
		t.Elem().Implements(jsonMarshaler) || t.Elem().Implements(textMarshaler)
}

var (
	jsonMarshaler = reflect.TypeFor[interface{ MarshalJSON() ([]byte, error) }]()
	textMarshaler = reflect.TypeFor[interface{ MarshalText() ([]byte, error) }]()
)

// nilAsEmpty returns an addressable copy of the struct s with its nil
// slices and maps behind pointers made empty, and true, or s and false when
// it has none.
func nilAsEmpty(s reflect.Value, depth int) (reflect.Value, bool) {
	if depth > maxRequestDepth {
		return s, false
	}
	var cp reflect.Value
	for i := range s.NumField() {
		if !s.Type().Field(i).IsExported() {
			continue
		}
		f := s.Field(i)
		var with reflect.Value // the member's new value, if it needs one
		switch {
		case f.Kind() == reflect.Struct:
			if ns, ok := nilAsEmpty(f, depth+1); ok {
				with = ns
			}
		case f.Kind() != reflect.Pointer || f.IsNil() || encodesItself(f.Type()):
		case f.Elem().Kind() == reflect.Slice && f.Elem().IsNil() && f.Elem().Type().Elem().Kind() != reflect.Uint8:
			with = reflect.New(f.Elem().Type())
			with.Elem().Set(reflect.MakeSlice(f.Elem().Type(), 0, 0))
		case f.Elem().Kind() == reflect.Map && f.Elem().IsNil():
			with = reflect.New(f.Elem().Type())
			with.Elem().Set(reflect.MakeMap(f.Elem().Type()))
		case f.Elem().Kind() == reflect.Struct:
			if ns, ok := nilAsEmpty(f.Elem(), depth+1); ok {
				with = ns.Addr()
			}
		}
		if !with.IsValid() {
			continue
		}
		if !cp.IsValid() {
			cp = reflect.New(s.Type()).Elem()
			cp.Set(s)
		}
		cp.Field(i).Set(with)
	}
	if !cp.IsValid() {
		return s, false
	}
	return cp, true
}
