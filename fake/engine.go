package fake

import (
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"reflect"
	"strconv"
	"strings"

	"github.com/google/cel-go/common/types/ref"
	memdb "github.com/hashicorp/go-memdb"

	"github.com/acctapi/acctapi"
	"github.com/acctapi/acctapi/internal/field"
)

// meta is what a resource's hooks tell the engine about a value to store.
type meta struct {
	unique    string       // value unique within account and kind ("" for none)
	uniqueErr func() error // the answer when unique is taken
	refs      []string     // ids the value references
	token     string       // hashed API key token
	aux       any          // see object.Aux
}

// resource describes one kind of resource to the generic engine: its
// types, id prefix, paths, and the hooks that turn a validated request into
// a stored value. The engine does the rest — routing, decoding, validation
// (the request type's own Validate), storage, uniqueness, references,
// pagination, filters and errors — once for every resource.
//
// T is the stored and returned type, C the create request, U the update
// request.
type resource[T, C, U any] struct {
	kind   string // store kind, and the collection path without its slash
	prefix string // id prefix
	member string // the list response's collection member
	// filter names the fields a list filter may use; nil means the list
	// takes no filter.
	filter []string
	// field returns the filterable field name of a value, for filters, or
	// nil if it has none by that name. It is called only for the fields
	// a filter reads, and only when it reads them.
	field func(v T, name string) ref.Val
	// prepare, when set, runs on a validated create or update request
	// (one of in and up is nil) before the write transaction, for work
	// that must not hold up other writes, such as signing a certificate;
	// it may leave its results on c.
	prepare func(c *call, in *C, up *U) error
	// build makes the value to store from a validated create request.
	build func(c *call, id string, in *C) (T, meta, error)
	// apply makes the updated value from the current one; nil means the
	// resource has no update.
	apply func(c *call, cur T, in *U) (T, meta, error)
	// deleted runs in the delete's transaction (cascades); may be nil.
	deleted func(c *call, cur T) error
	// render fills the uris of a value for the request's base URL.
	render func(base string, v T) T
	// redact, when set, removes what must not be stored or shown again
	// (an API key's token) from a created value; the create response
	// still shows it.
	redact func(v T) T
	// alias is a second collection path serving the same records (the
	// bot-user alias), with its own list member; may be empty.
	alias, aliasMember string
}

// resourceInfo is what Seed, Get and List know of a resource.
type resourceInfo struct {
	kind   string
	prefix string
	newIn  func() any // a new create request, for fixtures
	remove func(c *call, id string) error
	seed   func(c *call, in any) (any, error)
	render func(base string, v any) any
}

// validator is a request type with the domain package's Validate.
type validator interface{ Validate() error }

// normalizer is a request type with the domain package's Normalize.
type normalizer interface{ Normalize() }

// register adds the resource's routes and its Seed, Get and List entries.
func register[T, C, U any](s *Server, res *resource[T, C, U]) {
	paths := []struct{ path, member, successor string }{{res.kind, res.member, ""}}
	if res.alias != "" {
		paths = append(paths, struct{ path, member, successor string }{res.alias, res.aliasMember, "/" + res.kind})
	}
	for _, p := range paths {
		listQuery := []string{"limit", "before_id"}
		if res.filter != nil && p.successor == "" {
			listQuery = append(listQuery, "filter")
		}
		member, filter := p.member, res.filter
		if p.successor != "" {
			filter = nil
		}
		coll, item := "/"+p.path, "/"+p.path+"/{id}"
		routes := []*route{
			s.routes.handle(http.MethodPost, coll, nil, res.createHandler),
			s.routes.handle(http.MethodGet, coll, listQuery, func(c *call) (int, any, error) { return res.listHandler(c, member, filter) }),
			s.routes.handle(http.MethodGet, item, nil, res.getHandler),
			s.routes.handle(http.MethodDelete, item, nil, res.deleteHandler),
		}
		if res.apply != nil {
			routes = append(routes, s.routes.handle(http.MethodPatch, item, nil, res.updateHandler))
		}
		for _, r := range routes {
			r.successor = p.successor
		}
	}
	s.registerSeedOnly(res)
}

// registerSeedOnly adds a resource that has no API path (tunnels,
// endpoints): only Seed, Get and List reach it.
func (s *Server) registerSeedOnly(res any) {
	type registrar interface {
		info() (*resourceInfo, reflect.Type, reflect.Type)
	}
	info, in, out := res.(registrar).info()
	s.resByIn[in] = info
	s.resByOut[out] = info
	s.resByKind[info.kind] = info
}

// info describes the resource to Seed, Get and List.
func (res *resource[T, C, U]) info() (*resourceInfo, reflect.Type, reflect.Type) {
	return &resourceInfo{
		kind:   res.kind,
		prefix: res.prefix,
		newIn:  func() any { return new(C) },
		remove: res.remove,
		seed: func(c *call, in any) (any, error) {
			v, err := res.create(c, in.(*C))
			return v, err
		},
		render: func(base string, v any) any { return res.render(base, v.(T)) },
	}, reflect.TypeFor[C](), reflect.TypeFor[T]()
}

// checkRequest runs a request type's Validate.
func checkRequest(in any) error {
	if v, ok := in.(validator); ok {
		if err := v.Validate(); err != nil {
			return fromValidation(err)
		}
	}
	return nil
}

func (res *resource[T, C, U]) createHandler(c *call) (int, any, error) {
	in := new(C)
	if err := decode(c.body, in, &c.s.members); err != nil {
		return 0, nil, err
	}
	v, err := res.create(c, in)
	if err != nil {
		return 0, nil, err
	}
	return http.StatusCreated, res.render(c.base, v), nil
}

// create validates, normalizes and stores a create request; it is the one
// path for both the API and Seed.
func (res *resource[T, C, U]) create(c *call, in *C) (T, error) {
	var out T
	if err := checkRequest(in); err != nil {
		return out, err
	}
	if n, ok := any(in).(normalizer); ok {
		n.Normalize()
	}
	if res.prepare != nil {
		if err := res.prepare(c, in, nil); err != nil {
			return out, err
		}
	}
	err := c.s.write(func(txn *memdb.Txn) error {
		c.txn = txn
		id := c.s.ids.next(res.prefix, c.now)
		v, m, err := res.build(c, id, in)
		if err != nil {
			return err
		}
		stored := v
		if res.redact != nil {
			stored = res.redact(v)
		}
		if err := c.s.store(txn, &object{Account: c.account, Kind: res.kind, ID: id, Value: stored}, m, nil); err != nil {
			return err
		}
		out = v
		return nil
	})
	return out, err
}

// errTokenInUse is store's answer to an API key token that another key
// already has.
var errTokenInUse = errors.New("fake: API key token already in use")

// store inserts o, enforcing its unique value and token; cur is the
// object o replaces (nil for a new one).
func (s *Server) store(txn *memdb.Txn, o *object, m meta, cur *object) error {
	k := kindTables[o.Kind]
	if m.unique != "" && !k.unique || len(m.refs) > 0 && !k.refs || m.token != "" && !k.tokens {
		// A resource's hooks ask for what its kind's table does not keep:
		// storing it anyway would lose the rule. kinds needs the flag.
		return fmt.Errorf("fake: kind %q keeps no unique values, references or tokens as asked; see kinds", o.Kind)
	}
	if k.unique {
		if m.unique != "" {
			o.Unique = uniqueKey(o.Kind, o.Account, m.unique)
			if holder := s.names.holder(o.Unique); holder != "" && holder != o.ID {
				return m.uniqueErr()
			}
		}
		if cur != nil && cur.Unique != "" && cur.Unique != o.Unique {
			s.names.release(cur.Unique)
		}
		if o.Unique != "" {
			s.names.claim(o.Unique, o.ID)
		}
	}
	// go-memdb does not refuse a duplicate in a unique index (it repoints
	// the entry), so a token already in use is checked here.
	if m.token != "" {
		if other := byToken(txn, m.token); other != nil && other.ID != o.ID {
			return errTokenInUse
		}
	}
	o.Refs, o.Token, o.Aux = m.refs, m.token, m.aux
	return insert(txn, o)
}

func (res *resource[T, C, U]) getHandler(c *call) (int, any, error) {
	o := lookup(c.read(), c.account, res.kind, c.params.get("id"))
	if o == nil {
		return 0, nil, notFound(c.params.get("id"))
	}
	return http.StatusOK, res.render(c.base, o.Value.(T)), nil
}

func (res *resource[T, C, U]) updateHandler(c *call) (int, any, error) {
	id := c.params.get("id")
	in := new(U)
	if err := decode(c.body, in, &c.s.members); err != nil {
		return 0, nil, err
	}
	if err := setPathID(in, id); err != nil {
		return 0, nil, fromValidation(err)
	}
	if err := checkRequest(in); err != nil {
		return 0, nil, err
	}
	if n, ok := any(in).(normalizer); ok {
		n.Normalize()
	}
	if res.prepare != nil {
		if err := res.prepare(c, nil, in); err != nil {
			return 0, nil, err
		}
	}
	var out T
	err := c.s.write(func(txn *memdb.Txn) error {
		c.txn = txn
		o := lookup(txn, c.account, res.kind, id)
		if o == nil {
			return notFound(id)
		}
		v, m, err := res.apply(c, o.Value.(T), in)
		if err != nil {
			return err
		}
		if m.token == "" {
			m.token = o.Token
		}
		out = v
		return c.s.store(txn, &object{Account: o.Account, Kind: o.Kind, ID: o.ID, Value: v}, m, o)
	})
	if err != nil {
		return 0, nil, err
	}
	return http.StatusOK, res.render(c.base, out), nil
}

// setPathID checks the ID member of an update request against the id in
// the path (an absent member is fine) and sets it to that id, so that
// Validate sees it (a failover may not list itself).
func setPathID(in any, id string) error {
	v := reflect.ValueOf(in).Elem()
	if v.Kind() != reflect.Struct {
		return nil
	}
	f := v.FieldByName("ID")
	if !f.IsValid() || f.Kind() != reflect.String || !f.CanSet() {
		return nil
	}
	if err := field.CheckPathID("id", f.String(), id); err != nil {
		return err
	}
	f.SetString(id)
	return nil
}

func (res *resource[T, C, U]) deleteHandler(c *call) (int, any, error) {
	if err := res.remove(c, c.params.get("id")); err != nil {
		return 0, nil, err
	}
	return http.StatusNoContent, nil, nil
}

// remove deletes the object with id, unless another object references
// it; it is the one path for both the API and Delete.
func (res *resource[T, C, U]) remove(c *call, id string) error {
	return c.s.write(func(txn *memdb.Txn) error {
		c.txn = txn
		o := lookup(txn, c.account, res.kind, id)
		if o == nil {
			return notFound(id)
		}
		if r := referrer(txn, id); r != nil {
			return errorf(http.StatusConflict, acctapi.CodeStillReferenced, "%s is still referenced by %s.", id, r.ID)
		}
		if res.deleted != nil {
			if err := res.deleted(c, o.Value.(T)); err != nil {
				return err
			}
		}
		return c.s.drop(txn, o)
	})
}

// listParams are a list request's query parameters.
type listParams struct {
	limit    int
	beforeID string
	filter   string
}

// parseList reads limit, before_id and filter (checkQuery has already
// rejected unknown and repeated parameters).
func parseList(raw string) (listParams, error) {
	q, _ := url.ParseQuery(raw)
	p := listParams{limit: acctapi.MaxLimit, beforeID: q.Get("before_id"), filter: q.Get("filter")}
	if v, ok := q["limit"]; ok {
		n, err := strconv.Atoi(v[0])
		if err == nil && strings.HasPrefix(v[0], "+") {
			err = strconv.ErrSyntax // a sign is not part of an integer here
		}
		if err == nil {
			err = field.CheckLimit(n)
		}
		if err != nil {
			return p, &apiError{status: http.StatusBadRequest, code: acctapi.CodeBadLimit, field: "limit",
				msg: "The page size limit must be between 1 and 100 but " + strconv.Quote(truncate(v[0], 32)) + " was provided."}
		}
		p.limit = n
	}
	return p, nil
}

// listPage is the shape of every paged list response.
func listPage(member string, items any, uri string, next *string) map[string]any {
	return map[string]any{member: items, "uri": uri, "next_page_uri": next}
}

// nextURI builds a next_page_uri: the same path, limit and filter, with
// before_id the last id on the page.
func nextURI(base, path string, p listParams, last string) *string {
	q := url.Values{"before_id": {last}, "limit": {strconv.Itoa(p.limit)}}
	if p.filter != "" {
		q.Set("filter", p.filter)
	}
	s := base + path + "?" + q.Encode()
	return &s
}

func (res *resource[T, C, U]) listHandler(c *call, member string, filterFields []string) (int, any, error) {
	p, err := parseList(c.r.URL.RawQuery)
	if err != nil {
		return 0, nil, err
	}
	var keep func(*object) (bool, error)
	if p.filter != "" {
		f, err := c.s.filters.compile(res.kind, p.filter, filterFields)
		if err != nil {
			return 0, nil, err
		}
		obj := &objVal{names: filterFields, field: func(v any, name string) ref.Val { return res.field(v.(T), name) }}
		match := f.matcher(c.now)
		keep = func(o *object) (bool, error) {
			obj.value = o.Value
			return match(obj)
		}
	}
	objs, more, err := page(c.read(), c.account, res.kind, p.beforeID, p.limit, keep)
	if err != nil {
		return 0, nil, err
	}
	return pageResponse(c, member, p, objs, more, res.render)
}

// pageResponse answers a list request with one page of objects, rendered,
// and the next page's uri when more follow.
func pageResponse[T any](c *call, member string, p listParams, objs []*object, more bool, render func(base string, v T) T) (int, any, error) {
	items := make([]T, len(objs))
	for i, o := range objs {
		items[i] = render(c.base, o.Value.(T))
	}
	var next *string
	if more {
		next = nextURI(c.base, c.r.URL.EscapedPath(), p, objs[len(objs)-1].ID)
	}
	return http.StatusOK, listPage(member, items, c.base+c.r.URL.EscapedPath(), next), nil
}

// itemURI is the absolute uri of an item under a collection path (whose
// segments need no escaping).
func itemURI(base, coll, id string) string {
	return base + "/" + coll + "/" + url.PathEscape(id)
}
