package fake

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"strings"

	"github.com/acctapi/acctapi"
	"github.com/acctapi/acctapi/internal/field"
)

// Seed creates a resource in an account without an HTTP request, through
// the same validation, defaults and hooks as the API's create, and returns
// what was stored, as a GET would show it. in is the create request of the
// resource (such as *account.ServiceUserCreate), or the record itself for
// resources that have no create path (*k8sop.Endpoint, *Tunnel). T is the
// resource's type or a pointer to it (account.ServiceUser or
// *account.ServiceUser, as the typed clients return it). accountID ""
// means the first account. What the resource records as its creator (an
// API key's owner, an operator's principal, an endpoint's principal when
// in names none) is the account's user.
//
// A record used as the request must leave empty what the server sets (a
// Tunnel's ID, URI and CreatedAt; an endpoint's ID, URI, CreatedAt and
// UpdatedAt), and its references to what the fake stores must name that:
// an endpoint's Tunnel a tunnel of the account, its Principal the
// account's user or one of its service users (its Domain, TCPAddr, Edge
// and TunnelSession name what the fake does not store, and are kept as
// given). Seed refuses any other with an [acctapi.FieldError] naming the
// member ("id", "tunnel.id"), and a tunnel an endpoint refers to cannot
// be deleted while it does, as the API refuses to delete a referenced
// backend. An account holds at most [MaxTunnels] tunnels: Seed (and
// fixtures) refuse one more with a 409 [acctapi.CodeResourceLimit] error.
//
//	u, err := fake.Seed[account.ServiceUser](srv, "", &account.ServiceUserCreate{Name: "ci"})
func Seed[T any, C any](s *Server, accountID string, in *C) (T, error) {
	var zero T
	info, ptr := s.resourceOf(reflect.TypeFor[T]())
	if info == nil || s.resByIn[reflect.TypeFor[C]()] != info {
		return zero, fmt.Errorf("fake: Seed: %v is not the create type of %v; %s", reflect.TypeFor[C](), reflect.TypeFor[T](), s.knownTypes())
	}
	if in == nil {
		return zero, fmt.Errorf("fake: Seed: nil %v", reflect.TypeFor[C]())
	}
	acct, err := s.accountOf(accountID)
	if err != nil {
		return zero, err
	}
	// Text that is not UTF-8 would not survive the copy below (JSON makes
	// each bad byte U+FFFD), and the API never receives any.
	if err := field.CheckUTF8(in); err != nil {
		return zero, &seedError{fields: field.Errors(err)}
	}
	// A deep copy, so that neither Normalize nor the store shares anything
	// with the caller's value, into the request type the resource was
	// registered with (which may embed C; see seedAs).
	cp := info.newIn()
	if raw, err := json.Marshal(in); err != nil {
		return zero, fmt.Errorf("fake: Seed: %w", err)
	} else if err := json.Unmarshal(raw, cp); err != nil {
		return zero, fmt.Errorf("fake: Seed: %w", err)
	}
	if names := info.serverSetIn(cp, nil); len(names) > 0 {
		fields := make([]*acctapi.FieldError, len(names))
		for i, name := range names {
			fields[i] = field.Invalid(name, "is set by the server: leave it empty, and read it from what Seed returns")
		}
		return zero, &seedError{fields: fields}
	}
	c := &call{s: s, now: s.now(), base: s.seedBase(), account: acct, owner: s.userOf(acct)}
	v, err := info.seed(c, cp)
	if err != nil {
		if ae, ok := err.(*apiError); ok {
			return zero, &seedError{api: ae.bodyWithoutOperation(), fields: ae.fields}
		}
		return zero, fmt.Errorf("fake: Seed: %w", err)
	}
	return copyAs[T](v, ptr), nil
}

// MaxTunnels is the most tunnels an account holds; seeding one more is
// refused (409, [acctapi.CodeResourceLimit]). Each tunnel group backend
// lists every tunnel of its account whose labels it matches, so this
// bounds what one tunnel group holds and answers, and what seeding a
// tunnel costs (it adds the tunnel to each group it matches).
const MaxTunnels = 1000

// serverSetIn returns the members of in, a create request of the
// resource, that the server sets (see resource.serverSet) and that in sets
// to other than their zero value, or that given (a fixture's body, nil
// for Seed) gives at all ("id": "" included): the server would replace
// what they say.
func (info *resourceInfo) serverSetIn(in any, given map[string]json.RawMessage) []string {
	if len(info.serverSet) == 0 {
		return nil
	}
	members := func(v any) map[string]json.RawMessage {
		var m map[string]json.RawMessage
		if raw, err := json.Marshal(v); err == nil {
			_ = json.Unmarshal(raw, &m)
		}
		return m
	}
	got, zero := members(in), members(info.newIn())
	var names []string
	for _, name := range info.serverSet {
		if _, ok := given[name]; ok || !bytes.Equal(got[name], zero[name]) {
			names = append(names, name)
		}
	}
	return names
}

// seedError is what Seed returns when the API would have answered with an
// error: it wraps the *acctapi.Error the API would have sent, and, for a
// validation failure, each *acctapi.FieldError, so that acctapi.HasCode,
// errors.As and errors.Is(err, acctapi.ErrInvalid) work on it as on the
// client's errors.
type seedError struct {
	api    *acctapi.Error // nil when the client's own validation refused
	fields []*acctapi.FieldError
}

func (e *seedError) Error() string {
	if e.api == nil {
		return "fake: Seed: " + errors.Join(e.unwrapFields()...).Error()
	}
	return "fake: Seed: " + e.api.Error()
}

func (e *seedError) unwrapFields() []error {
	out := make([]error, len(e.fields))
	for i, f := range e.fields {
		out[i] = f
	}
	return out
}

// Unwrap returns the API's error and the field errors.
func (e *seedError) Unwrap() []error {
	if e.api == nil {
		return e.unwrapFields()
	}
	return append([]error{e.api}, e.unwrapFields()...)
}

// resourceOf returns the resource whose type is t, or what t points to,
// and whether t is the pointer; nil if t is neither.
func (s *Server) resourceOf(t reflect.Type) (info *resourceInfo, ptr bool) {
	if info := s.resByOut[t]; info != nil {
		return info, false
	}
	if t.Kind() == reflect.Pointer {
		if info := s.resByOut[t.Elem()]; info != nil {
			return info, true
		}
	}
	return nil, false
}

// mustResource is resourceOf for Get and List, which panic on a type
// that is not a resource: answering "not found" or "none" for it would
// let a wrong assertion pass.
func (s *Server) mustResource(fn string, t reflect.Type) (*resourceInfo, bool) {
	info, ptr := s.resourceOf(t)
	if info == nil {
		panic(fmt.Sprintf("fake: %s: %v is not a resource type of the fake; %s", fn, t, s.knownTypes()))
	}
	return info, ptr
}

// mustOwnID panics when id cannot be one of the resource's: it can never
// be found, and "not found" would let a wrong assertion pass.
func (info *resourceInfo) mustOwnID(fn, id string) {
	if err := info.checkOwnID(id); err != nil {
		panic(fmt.Sprintf("fake: %s: %v", fn, err))
	}
}

// checkOwnID reports an id that cannot be one of the resource's: empty,
// or without its prefix ("ak_..." or "nope" for a service user), since the
// fake makes every id it stores with the resource's prefix.
func (info *resourceInfo) checkOwnID(id string) error {
	if strings.HasPrefix(id, info.prefix+"_") {
		return nil
	}
	return fmt.Errorf("id %q is not one of %s, whose ids start %s_", truncate(id, 64), info.kind, info.prefix)
}

// mustAccount returns the account accountID names ("" for the first), and
// panics for an account the server does not have: Get and List answering
// "nothing there" would let a test with a mistyped account id pass.
func (s *Server) mustAccount(fn, accountID string) string {
	acct, err := s.accountOf(accountID)
	if err != nil {
		panic(fmt.Sprintf("fake: %s: %v", fn, err))
	}
	return acct
}

// knownTypes lists the resource types, for a message.
func (s *Server) knownTypes() string {
	names := make([]string, 0, len(s.resByOut))
	for t := range s.resByOut {
		names = append(names, fmt.Sprint(t))
	}
	slices.Sort(names)
	return "the resource types are " + strings.Join(names, ", ") + " (or pointers to them)"
}

// copyAs returns a deep copy of v, a resource's value, as T: the value's
// type, or a pointer to it when ptr is set.
func copyAs[T any](v any, ptr bool) T {
	if ptr {
		p := reflect.New(reflect.TypeFor[T]().Elem())
		p.Elem().Set(reflect.ValueOf(v))
		return deepCopy(p.Interface().(T))
	}
	return deepCopy(v.(T))
}

// seedBase is the base URL of uris outside a request.
func (s *Server) seedBase() string {
	if s.cfg.publicURL != "" {
		return s.cfg.publicURL
	}
	return s.URL
}

// Get returns a copy of the resource with id in an account ("" for the
// first), with its uri filled in, and whether it exists in that account.
// T is the resource's type or a pointer to it (account.ServiceUser or
// *account.ServiceUser). Get panics, naming the types it knows, when T is
// neither: that is a mistake in the test, which an answer of "not found"
// would hide. Get panics too when accountID names no account of the
// server, and when id cannot be one of T's: empty, or without T's id
// prefix (an API key's "ak_..." or "nope" as a service user's id), for the
// same reason ([Delete] returns those errors; [Seed] the one about the
// account).
func Get[T any](s *Server, accountID, id string) (v T, ok bool) {
	info, ptr := s.mustResource("Get", reflect.TypeFor[T]())
	acct := s.mustAccount("Get", accountID)
	info.mustOwnID("Get", id)
	tx := s.db.Read()
	got, ok := info.get(&tx, s.seedBase(), acct, id)
	if !ok {
		return v, false
	}
	return copyAs[T](got, ptr), true
}

// Delete removes the resource of type T (or what T points to) with id
// from an account ("" for the first) as the API's DELETE would: it refuses
// one that others reference, and cascades as the API does. It returns an
// error, not "not found", for an id that cannot be one of T's (empty, or
// without T's id prefix), as [Get] panics for one. It is also how
// tests remove what has no API path, such as a seeded k8sop.Endpoint or
// [Tunnel].
func Delete[T any](s *Server, accountID, id string) error {
	info, _ := s.resourceOf(reflect.TypeFor[T]())
	if info == nil {
		return fmt.Errorf("fake: Delete: %v is not a resource type of the fake; %s", reflect.TypeFor[T](), s.knownTypes())
	}
	acct, err := s.accountOf(accountID)
	if err != nil {
		return err
	}
	if err := info.checkOwnID(id); err != nil {
		return fmt.Errorf("fake: Delete: %w", err)
	}
	c := &call{s: s, now: s.now(), base: s.seedBase(), account: acct, owner: s.userOf(acct)}
	if err := info.remove(c, id); err != nil {
		if ae, ok := err.(*apiError); ok {
			return fmt.Errorf("fake: Delete: %d %s: %s", ae.status, ae.code, ae.msg)
		}
		return fmt.Errorf("fake: Delete: %w", err)
	}
	return nil
}

// List returns copies of every resource of type T in an account ("" for
// the first), newest first, as the API lists them. T is the resource's
// type or a pointer to it, as for [Get], and List panics as Get does when
// T is neither, or when accountID names no account of the server.
func List[T any](s *Server, accountID string) []T {
	info, ptr := s.mustResource("List", reflect.TypeFor[T]())
	acct := s.mustAccount("List", accountID)
	tx := s.db.Read()
	vs := info.list(&tx, s.seedBase(), acct)
	out := make([]T, len(vs))
	for i, v := range vs {
		out[i] = copyAs[T](v, ptr)
	}
	return out
}

// deepCopy returns a copy of v that shares no pointer, slice or map with
// it, so that changing what Seed, Get and List return never changes a
// stored value (which go-memdb requires never to change after insertion).
func deepCopy[T any](v T) T {
	return copyValue(reflect.ValueOf(&v).Elem()).Interface().(T)
}

// copyValue deep-copies the exported parts of v; unexported struct fields
// (such as time.Time's) are copied as they are.
func copyValue(v reflect.Value) reflect.Value {
	switch v.Kind() {
	case reflect.Pointer:
		if v.IsNil() {
			return v
		}
		p := reflect.New(v.Type().Elem())
		p.Elem().Set(copyValue(v.Elem()))
		return p
	case reflect.Interface:
		if v.IsNil() {
			return v
		}
		out := reflect.New(v.Type()).Elem()
		out.Set(copyValue(v.Elem()))
		return out
	case reflect.Slice:
		if v.IsNil() {
			return v
		}
		out := reflect.MakeSlice(v.Type(), v.Len(), v.Len())
		for i := range v.Len() {
			out.Index(i).Set(copyValue(v.Index(i)))
		}
		return out
	case reflect.Array:
		out := reflect.New(v.Type()).Elem()
		for i := range v.Len() {
			out.Index(i).Set(copyValue(v.Index(i)))
		}
		return out
	case reflect.Map:
		if v.IsNil() {
			return v
		}
		out := reflect.MakeMapWithSize(v.Type(), v.Len())
		for it := v.MapRange(); it.Next(); {
			out.SetMapIndex(it.Key(), copyValue(it.Value()))
		}
		return out
	case reflect.Struct:
		out := reflect.New(v.Type()).Elem()
		out.Set(v)
		for i := range v.NumField() {
			if v.Type().Field(i).IsExported() {
				out.Field(i).Set(copyValue(v.Field(i)))
			}
		}
		return out
	}
	return v
}
