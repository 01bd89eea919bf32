package fake

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"reflect"
	"strings"

	"github.com/acctapi/acctapi"
)

// decode reads a JSON request body into v strictly: unknown members,
// members of the wrong type and trailing data are errors with the
// contract's codes.
func decode(body []byte, v any) error {
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.DisallowUnknownFields()
	err := dec.Decode(v)
	if err == nil {
		if _, terr := dec.Token(); terr != io.EOF {
			return errorf(http.StatusBadRequest, acctapi.CodeInvalidJSON, "The request body has data after its JSON value.")
		}
		return checkMembers(body, reflect.TypeOf(v))
	}
	var syn *json.SyntaxError
	var typ *json.UnmarshalTypeError
	switch {
	case errors.As(err, &syn), errors.Is(err, io.ErrUnexpectedEOF), errors.Is(err, io.EOF):
		return errorf(http.StatusBadRequest, acctapi.CodeInvalidJSON, "The request body is not valid JSON.")
	case errors.As(err, &typ):
		field := typ.Field
		if field == "" {
			return errorf(http.StatusBadRequest, acctapi.CodeInvalidValue, "The request body must be a JSON object.")
		}
		return &apiError{status: http.StatusBadRequest, code: acctapi.CodeInvalidValue, field: field,
			msg: "The value of " + field + " must be a JSON " + jsonKind(typ.Type.Kind().String()) + "."}
	case strings.HasPrefix(err.Error(), "json: unknown field "):
		name := strings.Trim(strings.TrimPrefix(err.Error(), "json: unknown field "), `"`)
		return &apiError{status: http.StatusBadRequest, code: acctapi.CodeUnknownField, field: truncate(name, 64),
			msg: "The request member " + truncate(name, 64) + " is unknown."}
	}
	return errorf(http.StatusBadRequest, acctapi.CodeInvalidValue, "The request body has an invalid value: %s.", truncate(err.Error(), 200))
}

// jsonKind names a Go kind as a JSON type.
func jsonKind(k string) string {
	switch {
	case strings.HasPrefix(k, "int"), strings.HasPrefix(k, "uint"), strings.HasPrefix(k, "float"):
		return "number"
	case k == "bool":
		return "boolean"
	case k == "slice" || k == "array":
		return "array"
	case k == "map" || k == "struct" || k == "ptr":
		return "object"
	}
	return k
}

// checkMembers walks a body that decoded into a value of type t and reports
// what encoding/json lets through: a member whose name differs from the
// request type's only in letter case ("Name" for "name"), which is unknown
// to the API, and a member given twice in one object, of which
// encoding/json would silently keep the last.
func checkMembers(body []byte, t reflect.Type) error {
	dec := json.NewDecoder(bytes.NewReader(body))
	return walkMembers(dec, t, "")
}

func walkMembers(dec *json.Decoder, t reflect.Type, path string) error {
	tok, err := dec.Token()
	if err != nil {
		return nil // decode has accepted the body: this cannot happen
	}
	for t != nil && t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	switch tok {
	case json.Delim('['):
		var elem reflect.Type
		if t != nil && (t.Kind() == reflect.Slice || t.Kind() == reflect.Array) {
			elem = t.Elem()
		}
		for dec.More() {
			if err := walkMembers(dec, elem, path+"[]"); err != nil {
				return err
			}
		}
		_, _ = dec.Token()
	case json.Delim('{'):
		seen := map[string]bool{}
		for dec.More() {
			kt, _ := dec.Token()
			name, _ := kt.(string)
			field := name
			if path != "" {
				field = path + "." + name
			}
			if seen[name] {
				return &apiError{status: http.StatusBadRequest, code: acctapi.CodeInvalidJSON, field: truncate(field, 64),
					msg: "The request member " + truncate(field, 64) + " appears more than once."}
			}
			seen[name] = true
			var ft reflect.Type
			if t != nil && t.Kind() == reflect.Struct {
				f, ok := memberType(t, name)
				if !ok {
					return &apiError{status: http.StatusBadRequest, code: acctapi.CodeUnknownField, field: truncate(field, 64),
						msg: "The request member " + truncate(field, 64) + " is unknown."}
				}
				ft = f
			} else if t != nil && t.Kind() == reflect.Map {
				ft = t.Elem()
			}
			if err := walkMembers(dec, ft, field); err != nil {
				return err
			}
		}
		_, _ = dec.Token()
	}
	return nil
}

// memberType returns the type of the member of struct type t spelled
// exactly name in JSON, looking into embedded structs as encoding/json does.
func memberType(t reflect.Type, name string) (reflect.Type, bool) {
	for i := range t.NumField() {
		f := t.Field(i)
		tag, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		if tag == "-" || (!f.IsExported() && !f.Anonymous) {
			continue
		}
		if f.Anonymous && tag == "" {
			ft := f.Type
			if ft.Kind() == reflect.Pointer {
				ft = ft.Elem()
			}
			if ft.Kind() == reflect.Struct {
				if mt, ok := memberType(ft, name); ok {
					return mt, true
				}
				continue
			}
		}
		if tag == "" {
			tag = f.Name
		}
		if tag == name {
			return f.Type, true
		}
	}
	return nil, false
}
