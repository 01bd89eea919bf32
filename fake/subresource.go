package fake

import (
	"bytes"
	"encoding/json"
	"errors"
	"net/http"
	"reflect"
	"strings"

	"github.com/acctapi/acctapi/fake/internal/store"
	"github.com/acctapi/acctapi/internal/field"
)

// subresource describes items under an item of another resource (a
// subscription's event sources, an operator's bound endpoints) to the
// engine, which serves them through the same stages as a resource: decode
// and check the body against the path, validate, write the parent's row,
// render. P is the parent's type and PX its extra data, T the item, C and
// U the create and update requests; an operation whose hook is nil is not
// served.
type subresource[P, PX, T, C, U any] struct {
	coll   string // the collection's route, "{id}" the parent's id
	key    string // the item's path parameter after the collection ("type"); "" for a list-only sub-resource
	parent **store.Table[P, PX]
	// parentMember is the body member that repeats the parent's id
	// ("subscription_id"); keyMember the one that repeats key ("type").
	parentMember, keyMember string
	// listQuery are the list's query parameters.
	listQuery []string
	// list returns a page of items (all of them when the list is not
	// paged), their ids (nil when not paged), and whether more follow.
	list func(o *op, tx *store.Txn, parent store.Row[P, PX], p listParams) (items []T, ids []string, more bool, err error)
	// listBody is the list's response, of items that render renders.
	listBody func(c *call, p listParams, items []T, ids []string, more bool, render func(T) T) (any, error)
	// find returns the item key of a parent.
	find func(parent P, key string) (T, bool)
	// add adds the item a create request describes; it returns the
	// changed parent and the item.
	add func(o *op, parent P, in *C) (P, T, error)
	// update, when set, checks an update request whose members only name
	// the item; the item is returned as it is.
	update bool
	// remove removes the item key, returning the changed parent.
	remove func(o *op, parent P, key string) (P, error)
	// render fills an item's uri.
	render func(base, parentID string, v T) T
	// missing is the answer for an item key the parent lacks.
	missing func(parentID, key string) error
}

// registerSub adds a sub-resource's routes.
func registerSub[P, PX, T, C, U any](s *Server, sub *subresource[P, PX, T, C, U]) {
	if sub.list != nil {
		s.routes.handle(http.MethodGet, sub.coll, sub.listQuery, sub.listHandler)
	}
	if sub.add != nil {
		s.routes.handle(http.MethodPost, sub.coll, nil, sub.createHandler)
	}
	if sub.key == "" {
		return
	}
	item := sub.coll + "/{" + sub.key + "}"
	if sub.find != nil {
		s.routes.handle(http.MethodGet, item, nil, sub.getHandler)
	}
	if sub.update {
		s.routes.handle(http.MethodPatch, item, nil, sub.updateHandler)
	}
	if sub.remove != nil {
		s.routes.handle(http.MethodDelete, item, nil, sub.deleteHandler)
	}
}

// change runs fn on the parent named in the path, in a write transaction,
// and stores the parent fn returns.
func (sub *subresource[P, PX, T, C, U]) change(c *call, fn func(o *op, parent P) (P, error)) error {
	o := c.op()
	parentID := c.params.get("id")
	return c.s.db.Write(func(tx *store.Txn) error {
		if err := o.begin(tx); err != nil {
			return err
		}
		cur, ok := (*sub.parent).Get(tx, c.account, parentID)
		if !ok {
			return notFound(parentID)
		}
		v, err := fn(o, cur.Value)
		if err != nil {
			return err
		}
		return (*sub.parent).Replace(tx, cur, v, cur.Extra)
	})
}

func (sub *subresource[P, PX, T, C, U]) createHandler(c *call) (int, any, error) {
	parentID := c.params.get("id")
	in, err := decodeChecked[C](c, bodyID{sub.parentMember, parentID})
	if err != nil {
		return 0, nil, err
	}
	var out T
	err = sub.change(c, func(o *op, parent P) (P, error) {
		p, v, err := sub.add(o, parent, in)
		out = v
		return p, err
	})
	if err != nil {
		return 0, nil, err
	}
	return http.StatusCreated, sub.render(c.base, parentID, out), nil
}

func (sub *subresource[P, PX, T, C, U]) getHandler(c *call) (int, any, error) {
	parentID, key := c.params.get("id"), c.params.get(sub.key)
	row, ok := (*sub.parent).Get(c.read(), c.account, parentID)
	if !ok {
		return 0, nil, notFound(parentID)
	}
	v, ok := sub.find(row.Value, key)
	if !ok {
		return 0, nil, sub.missing(parentID, key)
	}
	return http.StatusOK, sub.render(c.base, parentID, v), nil
}

// updateHandler serves an update whose members only name the item: it
// checks them against the path and returns the item.
func (sub *subresource[P, PX, T, C, U]) updateHandler(c *call) (int, any, error) {
	parentID, key := c.params.get("id"), c.params.get(sub.key)
	if _, err := decodeChecked[U](c, bodyID{sub.parentMember, parentID}, bodyID{sub.keyMember, key}); err != nil {
		return 0, nil, err
	}
	return sub.getHandler(c)
}

func (sub *subresource[P, PX, T, C, U]) deleteHandler(c *call) (int, any, error) {
	key := c.params.get(sub.key)
	err := sub.change(c, func(o *op, parent P) (P, error) { return sub.remove(o, parent, key) })
	if err != nil {
		return 0, nil, err
	}
	return http.StatusNoContent, nil, nil
}

func (sub *subresource[P, PX, T, C, U]) listHandler(c *call) (int, any, error) {
	p, err := parseList(c.r.URL.RawQuery, c.dialect)
	if err != nil {
		return 0, nil, err
	}
	parentID := c.params.get("id")
	tx := c.read()
	row, ok := (*sub.parent).Get(tx, c.account, parentID)
	if !ok {
		return 0, nil, notFound(parentID)
	}
	items, ids, more, err := sub.list(c.op(), tx, row, p)
	if err != nil {
		return 0, nil, err
	}
	body, err := sub.listBody(c, p, items, ids, more, func(v T) T { return sub.render(c.base, parentID, v) })
	if err != nil {
		return 0, nil, err
	}
	return http.StatusOK, body, nil
}

// bodyID is a body member that repeats a path parameter: absent, or equal
// to it (field.CheckPathID).
type bodyID struct{ member, value string }

// decodeChecked decodes a request body strictly into a new C, checks the
// members that repeat the path against it and sets them to the path's
// values (so that Validate sees them), then validates and normalizes it:
// the decode and validate stages of every create and update.
func decodeChecked[C any](c *call, ids ...bodyID) (*C, error) {
	in := new(C)
	if err := decode(c.body, in, &c.s.members); err != nil {
		return nil, err
	}
	if err := setPathIDs(in, ids, c.body); err != nil {
		return nil, fromValidation(err)
	}
	if err := checked(in); err != nil {
		return nil, err
	}
	return in, nil
}

// setPathIDs checks each string member of in named by ids against its
// path value and sets it to that value; a type without the member has
// nothing to check. A member that body sends as "" names no resource, so
// it is refused as another id would be; only an absent or null member
// takes the path's (contract §1). The errors are joined, in the order of
// ids.
func setPathIDs(in any, ids []bodyID, body []byte) error {
	v := reflect.ValueOf(in).Elem()
	if v.Kind() != reflect.Struct {
		return nil
	}
	var errs []error
	for _, id := range ids {
		if id.member == "" {
			continue
		}
		f := memberField(v, id.member)
		if !f.IsValid() || f.Kind() != reflect.String || !f.CanSet() {
			continue
		}
		if f.String() == "" && sentEmpty(body, id.member) {
			errs = append(errs, field.Invalid(id.member, "is empty but the path names %q", id.value))
			continue
		}
		if err := field.CheckPathID(id.member, f.String(), id.value); err != nil {
			errs = append(errs, err)
			continue
		}
		f.SetString(id.value)
	}
	return errors.Join(errs...)
}

// sentEmpty reports whether body, a JSON object already decoded without
// error, has the top-level member sent as the empty string. Bodies without
// an empty string anywhere, nearly all of them, are not parsed again.
func sentEmpty(body []byte, member string) bool {
	if !bytes.Contains(body, []byte(`""`)) {
		return false
	}
	var m map[string]json.RawMessage
	return json.Unmarshal(body, &m) == nil && string(bytes.TrimSpace(m[member])) == `""`
}

// memberField returns the field of struct v that encodes as the JSON
// member name, looking into embedded structs (the fake's request types
// that embed a domain package's), or the zero Value.
func memberField(v reflect.Value, name string) reflect.Value {
	t := v.Type()
	for i := range t.NumField() {
		tag, _, _ := strings.Cut(t.Field(i).Tag.Get("json"), ",")
		if f := t.Field(i); f.Anonymous && tag == "" && f.Type.Kind() == reflect.Struct {
			if m := memberField(v.Field(i), name); m.IsValid() {
				return m
			}
			continue
		}
		if tag == name || tag == "" && t.Field(i).Name == name {
			return v.Field(i)
		}
	}
	return reflect.Value{}
}
