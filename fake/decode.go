package fake

import (
	"bytes"
	"encoding"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"reflect"
	"strconv"
	"strings"
	"sync"
	"unicode/utf8"

	"github.com/acctapi/acctapi"
)

// DecodeBody reads r's body into v as s reads the API's request bodies
// (contract §1 and §2): at most [MaxBodyBytes], sent with one Content-Type,
// application/json, valid JSON holding one value and nothing after it, no
// member unknown to v's type, spelt in another letter case or given twice,
// and every member of the JSON type its field takes. An empty body (white
// space only) leaves v as it is. Its error is an *[acctapi.Error] with the
// contract's status, code and message, and the member at fault, by its
// JSON path, in Details["field"]; the caller adds Details["operation_id"].
// cmd/acctfake's admin API reads its bodies with it, so that they are read
// as strictly as the API's. It is safe for concurrent use.
func (s *Server) DecodeBody(r *http.Request, v any) error {
	var body []byte
	var readErr error
	if r.Body != nil && r.Body != http.NoBody {
		body, readErr = readBody(r.Body, r.ContentLength)
	}
	empty, err := checkJSON(canonicalHeader(r).Header, body, readErr)
	if err == nil && !empty {
		if derr := decode(body, v, &s.members); derr != nil && !errors.As(derr, &err) {
			err = errorf(http.StatusBadRequest, acctapi.CodeInvalidValue, "%s", truncate(derr.Error(), 256))
		}
	}
	if err == nil {
		return nil
	}
	return err.bodyWithoutOperation()
}

// checkText refuses a body that is not UTF-8, or that escapes half of a
// UTF-16 surrogate pair (JSON.stringify writes "\ud800" for a lone one):
// either is read as U+FFFD by encoding/json, so the fake would store other
// text than the client sent. Strings in bodies are UTF-8 (contract §1).
func checkText(body []byte) *apiError {
	if !utf8.Valid(body) {
		return errorf(http.StatusBadRequest, acctapi.CodeInvalidJSON, "The request body is not valid JSON: it is not UTF-8.")
	}
	if at := loneSurrogate(body); at >= 0 {
		return errorf(http.StatusBadRequest, acctapi.CodeInvalidJSON, "The request body escapes half of a UTF-16 surrogate pair at byte %d; strings must be valid Unicode.", at)
	}
	return nil
}

// loneSurrogate returns the offset of the first \u escape in body of a
// surrogate that is not half of a pair, or -1.
func loneSurrogate(body []byte) int {
	hex4 := func(i int) (rune, bool) {
		if i+6 > len(body) || body[i] != '\\' || body[i+1] != 'u' {
			return 0, false
		}
		n, err := strconv.ParseUint(string(body[i+2:i+6]), 16, 16)
		return rune(n), err == nil
	}
	for i := 0; i < len(body); i++ {
		if body[i] != '\\' || i+1 >= len(body) {
			continue
		}
		r, ok := hex4(i)
		if !ok {
			i++ // another escape: skip its character (\\ included)
			continue
		}
		switch {
		case r >= 0xD800 && r <= 0xDBFF:
			if lo, ok := hex4(i + 6); !ok || lo < 0xDC00 || lo > 0xDFFF {
				return i
			}
			i += 11
		case r >= 0xDC00 && r <= 0xDFFF:
			return i
		default:
			i += 5
		}
	}
	return -1
}

// decode reads a JSON request body into v strictly: unknown members,
// members of the wrong type and trailing data are errors with the
// contract's codes. The body's text was checked (checkText) by its
// caller: checkJSON for a request's, decodeFixture for a fixture's.
func decode(body []byte, v any, ms *members) error {
	dec := json.NewDecoder(bytes.NewReader(body))
	// checkMembers, below, is the check of member names that counts (it
	// refuses other letter cases too); this one only stops encoding/json
	// early, and no request is answered differently without it.
	dec.DisallowUnknownFields()
	err := dec.Decode(v)
	if err == nil {
		if _, terr := dec.Token(); terr != io.EOF {
			return errorf(http.StatusBadRequest, acctapi.CodeInvalidJSON, "The request body has data after its JSON value.")
		}
		return checkMembers(body, reflect.TypeOf(v), ms)
	}
	var syn *json.SyntaxError
	var typ *json.UnmarshalTypeError
	var fe *acctapi.FieldError
	switch {
	case errors.As(err, &fe):
		// A type's own UnmarshalJSON refused a member (an event target
		// naming one in both dialects, which only a body of the
		// specification's dialect reaches undecoded): there, a real name is
		// an unknown member, which the strict walk names.
		if merr := checkMembers(body, reflect.TypeOf(v), ms); merr != nil {
			return merr
		}
		return fromValidation(err)
	case errors.As(err, &syn) && strings.Contains(syn.Error(), "exceeded max depth"):
		// Valid JSON, but deeper than encoding/json reads (10,000 levels).
		return errorf(http.StatusBadRequest, acctapi.CodeInvalidJSON, "The request body nests arrays or objects too deeply (more than 10,000 levels).")
	case errors.As(err, &syn), errors.Is(err, io.ErrUnexpectedEOF), errors.Is(err, io.EOF):
		return errorf(http.StatusBadRequest, acctapi.CodeInvalidJSON, "The request body is not valid JSON.")
	}
	if errors.As(err, &typ) || strings.HasPrefix(err.Error(), "json: unknown field ") {
		// The body is valid JSON (encoding/json scans a whole value before
		// decoding it). Its error names a member by its name alone or by Go
		// type names ("OperatorCreate.region"); the walk names it by its
		// JSON path, indexes and map keys included ("sources[1].type",
		// "labels.env"), and finds the first fault in the body's order.
		sc := memberScanner{b: body, ms: ms, types: true}
		if werr := sc.value(reflect.TypeOf(v), ""); werr != nil {
			return werr
		}
	}
	switch {
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

// members caches, per request type, the exact JSON member names of its
// struct types and their types. The zero value is ready; it is safe for
// concurrent use. A Server owns one.
type members struct {
	m sync.Map // reflect.Type (a struct type) -> map[string]reflect.Type
}

// of returns the members of struct type t, looking into embedded structs
// as encoding/json does.
func (ms *members) of(t reflect.Type) map[string]reflect.Type {
	if v, ok := ms.m.Load(t); ok {
		return v.(map[string]reflect.Type)
	}
	out := map[string]reflect.Type{}
	addMembers(out, t)
	ms.m.Store(t, out)
	return out
}

func addMembers(out map[string]reflect.Type, t reflect.Type) {
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
				addMembers(out, ft)
				continue
			}
		}
		if tag == "" {
			tag = f.Name
		}
		if _, dup := out[tag]; !dup {
			out[tag] = f.Type
		}
	}
}

// checkMembers walks a body that decoded into a value of type t and reports
// what encoding/json lets through: a member whose name differs from the
// request type's only in letter case ("Name" for "name"), which is unknown
// to the API, and a member given twice in one object, of which
// encoding/json would silently keep the last. The body is valid JSON (the
// decoder accepted it); the walk allocates only for escaped member names,
// nested paths and large objects.
func checkMembers(body []byte, t reflect.Type, ms *members) error {
	sc := memberScanner{b: body, ms: ms}
	return sc.value(t, "")
}

type memberScanner struct {
	b  []byte
	i  int
	ms *members
	// types also checks that each value is of the JSON type its Go type
	// takes, as encoding/json does (decode sets it only once encoding/json
	// has refused the body, to name the member by its JSON path).
	types bool
}

func (sc *memberScanner) space() {
	for sc.i < len(sc.b) {
		switch sc.b[sc.i] {
		case ' ', '\t', '\r', '\n':
			sc.i++
		default:
			return
		}
	}
}

// value scans one value whose Go type is t (nil: anything) at path, its
// JSON path ("" for the body; with types unset, only containers get theirs).
func (sc *memberScanner) value(t reflect.Type, path string) error {
	for t != nil && t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if t != nil && sc.opaque(t) {
		t = nil
	}
	sc.space()
	if sc.i >= len(sc.b) {
		return nil
	}
	switch c := sc.b[sc.i]; c {
	case '{':
		if sc.types && t != nil && t.Kind() != reflect.Struct && t.Kind() != reflect.Map && t.Kind() != reflect.Interface {
			return wrongType(path, t)
		}
		return sc.object(t, path)
	case '[':
		if sc.types && t != nil && t.Kind() != reflect.Slice && t.Kind() != reflect.Array && t.Kind() != reflect.Interface {
			return wrongType(path, t)
		}
		sc.i++
		var elem reflect.Type
		if t != nil && (t.Kind() == reflect.Slice || t.Kind() == reflect.Array) {
			elem = t.Elem()
		}
		for n := 0; ; {
			sc.space()
			if sc.i >= len(sc.b) {
				return nil
			}
			switch sc.b[sc.i] {
			case ']':
				sc.i++
				return nil
			case ',':
				sc.i++
				continue
			}
			sub := path
			if sc.types || sc.b[sc.i] == '{' || sc.b[sc.i] == '[' || sc.b[sc.i] == 'n' {
				sub = truncate(path+"["+strconv.Itoa(n)+"]", 64) // only nested values need their path
			}
			if err := sc.nullElement(elem, sub); err != nil {
				return err
			}
			if err := sc.value(elem, sub); err != nil {
				return err
			}
			n++
		}
	case '"':
		sc.str()
		if sc.types && t != nil && t.Kind() != reflect.String && t.Kind() != reflect.Interface &&
			(t.Kind() != reflect.Slice || t.Elem().Kind() != reflect.Uint8) {
			return wrongType(path, t)
		}
	default: // a number, true, false or null
		start := sc.i
		for sc.i < len(sc.b) && !strings.ContainsRune(",]} \t\r\n", rune(sc.b[sc.i])) {
			sc.i++
		}
		if sc.types && t != nil && c != 'n' {
			return checkScalar(string(sc.b[start:sc.i]), t, path)
		}
	}
	return nil
}

// nullElement refuses a null at sc.i that is an element of an array or a
// map value whose Go type t is a string, number or bool: encoding/json
// leaves such an element its zero value, so {"labels":{"a":null}} would be
// stored as "a": "" and ["bkdhr_1",null] as a "" id, where the client sent
// neither. A struct's member sent as null is absent (contract §1), which
// this does not touch; an element whose type can hold null (a pointer, an
// interface, a slice or a map) is left to it.
func (sc *memberScanner) nullElement(t reflect.Type, path string) error {
	if t == nil || !bytes.HasPrefix(sc.b[sc.i:], []byte("null")) {
		return nil
	}
	switch t.Kind() {
	case reflect.String, reflect.Bool, reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Float32, reflect.Float64:
		if sc.opaque(t) {
			return nil
		}
		return &apiError{status: http.StatusBadRequest, code: acctapi.CodeInvalidValue, field: path,
			msg: "The value of " + path + " must be a JSON " + jsonKind(t.Kind().String()) + ", not null."}
	}
	return nil
}

var (
	jsonUnmarshaler = reflect.TypeFor[json.Unmarshaler]()
	textUnmarshaler = reflect.TypeFor[encoding.TextUnmarshaler]()
)

// opaque reports whether values of t decode themselves (time.Time), so
// that the walk checks neither their JSON type nor their members. A struct
// that decodes itself but has JSON members (an event target) is walked.
func (sc *memberScanner) opaque(t reflect.Type) bool {
	pt := reflect.PointerTo(t)
	if !pt.Implements(jsonUnmarshaler) && !pt.Implements(textUnmarshaler) {
		return false
	}
	return t.Kind() != reflect.Struct || len(sc.ms.of(t)) == 0
}

// checkScalar checks a number, true or false (lit) against t, as
// encoding/json decodes it.
func checkScalar(lit string, t reflect.Type, path string) error {
	k := t.Kind()
	if lit == "true" || lit == "false" {
		if k == reflect.Bool || k == reflect.Interface {
			return nil
		}
		return wrongType(path, t)
	}
	var err error
	switch {
	case k == reflect.Interface:
		return nil
	case reflect.Int <= k && k <= reflect.Int64:
		_, err = strconv.ParseInt(lit, 10, t.Bits())
	case reflect.Uint <= k && k <= reflect.Uintptr:
		_, err = strconv.ParseUint(lit, 10, t.Bits())
	case k == reflect.Float32 || k == reflect.Float64:
		_, err = strconv.ParseFloat(lit, t.Bits())
	default:
		return wrongType(path, t)
	}
	if err == nil {
		return nil
	}
	f := path
	if errors.Is(err, strconv.ErrRange) {
		return &apiError{status: http.StatusBadRequest, code: acctapi.CodeInvalidValue, field: path,
			msg: "The value of " + f + " is out of range."}
	}
	want := "an integer"
	if k >= reflect.Uint && k <= reflect.Uintptr {
		want = "a whole number, 0 or more"
	}
	return &apiError{status: http.StatusBadRequest, code: acctapi.CodeInvalidValue, field: path,
		msg: "The value of " + f + " must be " + want + " (a JSON number without a fraction or exponent)."}
}

// wrongType is the error for a value at path of another JSON type than
// Go type t takes.
func wrongType(path string, t reflect.Type) *apiError {
	if path == "" {
		return errorf(http.StatusBadRequest, acctapi.CodeInvalidValue, "The request body must be a JSON %s.", jsonKind(t.Kind().String()))
	}
	return &apiError{status: http.StatusBadRequest, code: acctapi.CodeInvalidValue, field: path,
		msg: "The value of " + path + " must be a JSON " + jsonKind(t.Kind().String()) + "."}
}

// str skips a string and returns its contents as they appear, and whether
// they hold an escape.
func (sc *memberScanner) str() (raw []byte, escaped bool) {
	sc.i++ // the opening quote
	start := sc.i
	for sc.i < len(sc.b) {
		switch sc.b[sc.i] {
		case '\\':
			escaped = true
			sc.i += 2
			continue
		case '"':
			raw = sc.b[start:sc.i]
			sc.i++
			return raw, escaped
		}
		sc.i++
	}
	return sc.b[start:], escaped
}

// object scans an object whose Go type is t: a struct's members must be
// spelled as its JSON names; no member may appear twice.
func (sc *memberScanner) object(t reflect.Type, path string) error {
	sc.i++ // {
	var names map[string]reflect.Type
	if t != nil && t.Kind() == reflect.Struct {
		names = sc.ms.of(t)
	}
	var small [8][]byte // the names seen, while few
	seen := small[:0]
	var many map[string]bool
	for {
		sc.space()
		if sc.i >= len(sc.b) {
			return nil
		}
		switch sc.b[sc.i] {
		case '}':
			sc.i++
			return nil
		case ',':
			sc.i++
			continue
		}
		key, escaped := sc.str()
		if escaped || !utf8.Valid(key) {
			// As encoding/json reads the name: escapes resolved, invalid
			// UTF-8 as U+FFFD (so "\xff" and "\xfe" are the same name).
			var s string
			if json.Unmarshal(append(append([]byte{'"'}, key...), '"'), &s) == nil {
				key = []byte(s)
			}
		}
		field := func() string {
			if path == "" {
				return truncate(string(key), 64)
			}
			return truncate(path+"."+string(key), 64)
		}
		if many != nil {
			if many[string(key)] {
				return duplicateMember(field())
			}
			many[string(key)] = true
		} else {
			for _, k := range seen {
				if bytes.Equal(k, key) {
					return duplicateMember(field())
				}
			}
			if seen = append(seen, key); len(seen) == len(small) {
				many = make(map[string]bool, 2*len(small))
				for _, k := range seen {
					many[string(k)] = true
				}
			}
		}
		var ft reflect.Type
		switch {
		case names != nil:
			var ok bool
			if ft, ok = names[string(key)]; !ok {
				f := field()
				return &apiError{status: http.StatusBadRequest, code: acctapi.CodeUnknownField, field: f,
					msg: "The request member " + f + " is unknown."}
			}
		case t != nil && t.Kind() == reflect.Map:
			ft = t.Elem()
		}
		sc.space()
		sc.i++ // :
		sc.space()
		sub := path
		if sc.types || sc.i < len(sc.b) && (sc.b[sc.i] == '{' || sc.b[sc.i] == '[' || sc.b[sc.i] == 'n') {
			sub = field() // only nested values need their path
		}
		if t != nil && t.Kind() == reflect.Map {
			if err := sc.nullElement(ft, sub); err != nil {
				return err
			}
		}
		if err := sc.value(ft, sub); err != nil {
			return err
		}
	}
}

func duplicateMember(field string) *apiError {
	return &apiError{status: http.StatusBadRequest, code: acctapi.CodeInvalidJSON, field: field,
		msg: "The request member " + field + " appears more than once."}
}
