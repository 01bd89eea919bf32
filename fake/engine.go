package fake

import (
	"encoding/json"
	"net/http"
	"net/url"
	"reflect"
	"strconv"
	"time"

	"github.com/google/cel-go/common/types/ref"

	"github.com/acctapi/acctapi"
	"github.com/acctapi/acctapi/fake/internal/store"
	"github.com/acctapi/acctapi/internal/field"
	"github.com/acctapi/acctapi/internal/resources"
	"github.com/acctapi/acctapi/internal/rest"
)

// none is the extra data of a table that keeps none beside its values.
type none = struct{}

// op is what a resource's hooks see of a request: its time, account and
// owner, the write transaction (nil in prepare), and the server's settings
// and generators, never the HTTP request.
type op struct {
	now     time.Time
	base    string // the base of uris the caller sees
	account string
	owner   string // the caller: a usr_ or service_ id
	tx      *store.Txn
	env     *env
	// keyHash is the request's key as the keys table holds it ("" for
	// the Go API's writes, which have no key), and keyID the key's id;
	// see begin.
	keyHash, keyID string
}

// begin starts o's write in tx. The request authenticated in an earlier
// snapshot of the store: a Restore or Reset meanwhile may have removed
// its key, or its whole account (a review saw a create then answered 500,
// "no usage of account"), so the write goes ahead only if the key is
// still there.
func (o *op) begin(tx *store.Txn) error {
	o.tx = tx
	if o.keyHash != "" && !o.env.keyIn(tx, o.keyHash, o.keyID) {
		return errInvalidKey()
	}
	return nil
}

// env is what hooks need of the server.
type env struct {
	ids     *idGen
	signer  *signer
	ingress string // WithIngressEndpoint
	// keyIn reports whether the key of hash hash is still the key of id,
	// in tx (which names its account: ids are never reused).
	keyIn func(tx *store.Txn, hash, id string) bool
}

// newToken makes an API key token: random base-62 text, shaped like the
// real service's tokens.
func (e *env) newToken() string { return e.ids.token(27) + "_" + e.ids.token(22) }

// resource describes one kind of resource to the generic engine: its
// description (path, id prefix, list member, filter fields), its table,
// and the hooks that turn a validated request into a stored value. The
// engine does the rest — routing, decoding, validation (the request type's
// own Validate), storage, uniqueness, references, pagination, filters and
// errors — once for every resource.
//
// T is the stored and returned type, X the extra data kept beside it and
// handed from prepare to build and apply, C the create request, U the
// update request.
type resource[T, X, C, U any] struct {
	resources.Desc
	// constraints are the table's (unique values, tokens, references).
	constraints store.Constraints[T, X]
	table       *store.Table[T, X] // set by register
	// field returns the filterable field name of a value, for filters, or
	// nil if it has none by that name. It is called only for the fields
	// a filter reads, and only when it reads them.
	field func(v T, name string) ref.Val
	// prepare, when set, runs on a validated create or update request
	// (one of in and up is nil) before the write transaction, for work
	// that must not hold up other writes (signing a certificate, compiling
	// selectors); what it returns goes to build or apply.
	prepare func(o *op, in *C, up *U) (X, error)
	// build makes the value to store, and its extra data, from a validated
	// create request and what prepare returned.
	build func(o *op, id string, in *C, x X) (T, X, error)
	// apply makes the updated value from the current row; nil means the
	// resource has no update.
	apply func(o *op, cur store.Row[T, X], in *U, x X) (T, X, error)
	// deleted runs in the delete's transaction (cascades); may be nil.
	deleted func(o *op, cur T) error
	// refs, when set, returns how many references a value holds, for the
	// bound on what an account stores (WithMaxResources); without it,
	// those the table indexes (constraints.Refs).
	refs func(v T) int
	// render fills the uris of a value for the base URL.
	render func(base string, v T) T
	// aliasRender, when set, is render on the Alias paths (a bot user's
	// uri is under /bot_users there).
	aliasRender func(base string, v T) T
	// redact, when set, removes what must not be stored or shown again
	// (an API key's token) from a created value; the create response
	// still shows it.
	redact func(v T) T
	// serverSet names the create request's JSON members that the server
	// sets (id, uri, ...), for a resource whose create request is its
	// record (tunnels, endpoints): Seed refuses them set, fixtures given.
	serverSet []string
}

// resourceInfo is what Seed, Get, List, Delete and fixtures know of a
// resource.
type resourceInfo struct {
	kind      string
	prefix    string
	serverSet []string   // see resource.serverSet
	newIn     func() any // a new create request, for fixtures
	remove    func(c *call, id string) error
	seed      func(c *call, in any) (any, error)
	get       func(tx *store.Txn, base, account, id string) (any, bool)
	list      func(tx *store.Txn, base, account string) []any
}

// register defines the resource's table, adds its routes (none for a
// resource without an API path) and its Seed, Get and List entries.
func register[T, X, C, U any](s *Server, res *resource[T, X, C, U]) {
	res.table = store.Define(s.schema, res.Name, res.constraints)
	if !res.NoAPI {
		paths := []struct{ path, member, successor string }{{res.Name, res.Member, ""}}
		if res.Alias != "" {
			paths = append(paths, struct{ path, member, successor string }{res.Alias, res.AliasMember, "/" + res.Name})
		}
		for _, p := range paths {
			res := res
			if p.successor != "" && res.aliasRender != nil {
				alias := *res
				alias.render = res.aliasRender
				res = &alias
			}
			listQuery := []string{"limit", "before_id"}
			filter := res.Filter
			if p.successor != "" {
				filter = nil
			}
			if filter != nil {
				listQuery = append(listQuery, "filter")
			}
			member := p.member
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
	}
	info := &resourceInfo{
		kind:      res.Name,
		prefix:    res.Prefix,
		serverSet: res.serverSet,
		newIn:     func() any { return new(C) },
		remove:    res.remove,
		seed: func(c *call, in any) (any, error) {
			v, err := res.create(c, in.(*C))
			return res.render(c.base, v), err
		},
		get: func(tx *store.Txn, base, account, id string) (any, bool) {
			row, ok := res.table.Get(tx, account, id)
			if !ok {
				return nil, false
			}
			return res.render(base, row.Value), true
		},
		list: func(tx *store.Txn, base, account string) []any {
			rows := res.table.All(tx, account)
			out := make([]any, len(rows))
			for i, row := range rows {
				out[len(rows)-1-i] = res.render(base, row.Value) // newest first
			}
			return out
		},
	}
	s.resByIn[reflect.TypeFor[C]()] = info
	s.resByOut[reflect.TypeFor[T]()] = info
	s.resByKind[info.kind] = info
}

// checkRequest runs a request type's Validate.
func checkRequest(in any) error {
	if v, ok := in.(rest.Validator); ok {
		if err := v.Validate(); err != nil {
			return fromValidation(err)
		}
	}
	return nil
}

// normalizer is a request type with the domain package's Normalize.
type normalizer interface{ Normalize() }

// checked validates and normalizes a decoded request.
func checked(in any) error {
	if err := checkRequest(in); err != nil {
		return err
	}
	if n, ok := in.(normalizer); ok {
		n.Normalize()
	}
	return nil
}

func (res *resource[T, X, C, U]) createHandler(c *call) (int, any, error) {
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
func (res *resource[T, X, C, U]) create(c *call, in *C) (T, error) {
	var out T
	if err := checked(in); err != nil {
		return out, err
	}
	o := c.op()
	var x X
	if res.prepare != nil {
		var err error
		if x, err = res.prepare(o, in, nil); err != nil {
			return out, err
		}
	}
	err := c.s.db.Write(func(tx *store.Txn) error {
		if err := o.begin(tx); err != nil {
			return err
		}
		// Whether the account has room for one more, first (its
		// references are known once it is built).
		if err := c.s.checkRoom(tx, c.account, 1, true); err != nil {
			return err
		}
		id := c.s.ids.next(res.Prefix, c.now)
		v, x, err := res.build(o, id, in, x)
		if err != nil {
			return err
		}
		// It and its references, each of which the bound counts too.
		if err := c.s.countResources(tx, c.account, 1+res.refCount(v)); err != nil {
			return err
		}
		stored := v
		if res.redact != nil {
			stored = res.redact(v)
		}
		if err := res.table.Insert(tx, c.account, id, stored, x); err != nil {
			return err
		}
		out = v
		return nil
	})
	return out, err
}

func (res *resource[T, X, C, U]) getHandler(c *call) (int, any, error) {
	row, ok := res.table.Get(c.read(), c.account, c.params.get("id"))
	if !ok {
		return 0, nil, notFound(c.params.get("id"))
	}
	return http.StatusOK, res.render(c.base, row.Value), nil
}

func (res *resource[T, X, C, U]) updateHandler(c *call) (int, any, error) {
	id := c.params.get("id")
	// A body's id is absent or the path's; it is set to it, so that
	// Validate sees it (a failover may not list itself).
	in, err := decodeChecked[U](c, bodyID{"id", id})
	if err != nil {
		return 0, nil, err
	}
	o := c.op()
	var x X
	if res.prepare != nil {
		var err error
		if x, err = res.prepare(o, nil, in); err != nil {
			return 0, nil, err
		}
	}
	var out T
	err = c.s.db.Write(func(tx *store.Txn) error {
		if err := o.begin(tx); err != nil {
			return err
		}
		cur, ok := res.table.Get(tx, c.account, id)
		if !ok {
			return notFound(id)
		}
		v, x, err := res.apply(o, cur, in, x)
		if err != nil {
			return err
		}
		if n := res.refCount(v) - res.refCount(cur.Value); n != 0 {
			if err := c.s.countResources(tx, c.account, n); err != nil {
				return err
			}
		}
		out = v
		return res.table.Replace(tx, cur, v, x)
	})
	if err != nil {
		return 0, nil, err
	}
	return http.StatusOK, res.render(c.base, out), nil
}

func (res *resource[T, X, C, U]) deleteHandler(c *call) (int, any, error) {
	if err := res.remove(c, c.params.get("id")); err != nil {
		return 0, nil, err
	}
	return http.StatusNoContent, nil, nil
}

// remove deletes the row with id, unless another row references it; it
// is the one path for both the API and Delete.
func (res *resource[T, X, C, U]) remove(c *call, id string) error {
	o := c.op()
	return c.s.db.Write(func(tx *store.Txn) error {
		if err := o.begin(tx); err != nil {
			return err
		}
		cur, ok := res.table.Get(tx, c.account, id)
		if !ok {
			return notFound(id)
		}
		if _, by, ok := tx.Referrer(c.account, id); ok {
			return errorf(http.StatusConflict, acctapi.CodeStillReferenced, "%s is still referenced by %s.", id, by)
		}
		if res.deleted != nil {
			if err := res.deleted(o, cur.Value); err != nil {
				return err
			}
		}
		if err := res.table.Delete(tx, c.account, id); err != nil {
			return err
		}
		return c.s.countResources(tx, c.account, -1-res.refCount(cur.Value))
	})
}

// refCount returns how many references v holds, each of which counts
// against the bound on what an account stores.
func (res *resource[T, X, C, U]) refCount(v T) int {
	if res.refs != nil {
		return res.refs(v)
	}
	return res.table.RefCount(v)
}

// listParams are a list request's query parameters.
type listParams struct {
	limit    int
	beforeID string
	filter   string
}

// parseList reads limit, before_id and filter (checkQuery has already
// rejected unknown and repeated parameters); in the real service's dialect,
// before_id may be spelt beforeId, but not both ways at once. An empty
// before_id is none, as the real service's clients send it (ngrok-api-go
// for a Paging.BeforeID that points to ""). An empty filter (filter=, or
// filter alone) is refused, as any other string that is not an
// expression.
func parseList(raw string, d acctapi.Dialect) (listParams, error) {
	q, _ := url.ParseQuery(raw)
	p := listParams{limit: acctapi.MaxLimit, beforeID: q.Get("before_id"), filter: q.Get("filter")}
	if alias, ok := q[beforeIDAlias]; ok && d == acctapi.DialectReal {
		if _, both := q["before_id"]; both {
			return p, &apiError{status: http.StatusBadRequest, code: acctapi.CodeRepeatedQueryParam, field: beforeIDAlias,
				msg: "The query parameters before_id and beforeId are the same parameter; give only one."}
		}
		p.beforeID = alias[0]
	}
	if v, ok := q["filter"]; ok && v[0] == "" {
		// Not an expression (contract §2): a filter built from an unset
		// value would otherwise list every item.
		return p, &apiError{status: http.StatusBadRequest, code: acctapi.CodeBadFilter, field: "filter",
			msg: "The filter is empty; omit the filter parameter to list every item."}
	}
	if v, ok := q["limit"]; ok {
		n, err := field.ParseQueryInt(v[0])
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

func (res *resource[T, X, C, U]) listHandler(c *call, member string, filterFields []string) (int, any, error) {
	p, err := parseList(c.r.URL.RawQuery, c.dialect)
	if err != nil {
		return 0, nil, err
	}
	var keep func(*T) (bool, error)
	if p.filter != "" {
		f, err := c.s.filters.compile(res.Name, p.filter, filterFields)
		if err != nil {
			return 0, nil, err
		}
		// The filter reads the stored value's fields through cur, so no
		// value is copied or boxed to reach it.
		var cur *T
		obj := &objVal{field: func(name string) ref.Val { return res.field(*cur, name) }}
		if err := f.checkNow(c.now); err != nil {
			return 0, nil, err
		}
		match := f.matcher(c.now)
		keep = func(v *T) (bool, error) {
			cur = v
			return match(obj)
		}
	}
	items, ids, more, err := res.table.Page(c.read(), c.account, p.beforeID, p.limit, keep)
	if err != nil {
		return 0, nil, err
	}
	body, err := pageBody(c, member, p, items, ids, more, func(v T) T { return res.render(c.base, v) })
	if err != nil {
		return 0, nil, err
	}
	return http.StatusOK, body, nil
}

// MaxPageBytes bounds the JSON of a page's items: a page holds up to limit
// items, but ends early, after at least one item, where the next would
// take its items past MaxPageBytes; its next_page_uri then continues from
// its last item, as for a page of limit items. (Items of up to 1 MiB each,
// an HTTP response backend's body for one, would otherwise make a page of
// 100 about 100 MiB, which the server holds several times over while it
// answers, and which is more than a Client reads by default.)
const MaxPageBytes = 8 << 20

// pageBody is the body of a paged list response: items, rendered by render
// one at a time as they are encoded (so that no more is rendered than the
// page holds: an item's uris, up to 100 destination refs' of a
// subscription, each repeat the base URL), whose ids are ids, cut to
// MaxPageBytes, and the next page's uri when more follow them or the page
// was cut.
func pageBody[T any](c *call, member string, p listParams, items []T, ids []string, more bool, render func(T) T) (map[string]any, error) {
	raw := make([]json.RawMessage, 0, len(items))
	size := 0
	for i := range items {
		b, err := json.Marshal(render(items[i]))
		if err != nil {
			return nil, err
		}
		if i > 0 && size+len(b) > MaxPageBytes {
			ids, more = ids[:i], true
			break
		}
		size += len(b)
		raw = append(raw, b)
	}
	var next *string
	if more {
		next = nextURI(c.base, c.r.URL.EscapedPath(), p, ids[len(ids)-1])
	}
	return listPage(member, raw, c.base+c.r.URL.EscapedPath(), next), nil
}

// itemURI is the absolute uri of an item under a collection path (whose
// segments need no escaping).
func itemURI(base, coll, id string) string {
	return base + "/" + coll + "/" + url.PathEscape(id)
}
