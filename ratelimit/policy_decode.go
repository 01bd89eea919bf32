package ratelimit

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"reflect"
	"strconv"
	"strings"

	"github.com/acctapi/acctapi/internal/field"
)

// decodeValue decodes v, a document's value as decodeDocument reads it
// (maps with string keys, lists, strings, numbers as json.Number or Go
// numbers, booleans, nil), into dst, a pointer to a struct, slice, map,
// string, integer, bool or pointer to one of them. Struct members are
// named by their json tags; a member the struct lacks is an error naming
// the closest one. Every mismatch is reported, each a *field.Error whose
// path (path, then ".member" and "[i]") and reason say what was wanted
// and what was found, in the document's own terms: encoding/json's
// messages name Go types and the first error only.
func decodeValue(path string, v any, dst any) error {
	var errs []error
	decodeInto(path, v, reflect.ValueOf(dst).Elem(), &errs)
	return errors.Join(errs...)
}

func decodeInto(path string, v any, dst reflect.Value, errs *[]error) {
	bad := func(want string) {
		*errs = append(*errs, field.Invalid(path, "must be %s, not %s", want, describe(v)))
	}
	if v == nil {
		return // null leaves the zero value, as encoding/json does
	}
	switch dst.Kind() {
	case reflect.Pointer:
		p := reflect.New(dst.Type().Elem())
		decodeInto(path, v, p.Elem(), errs)
		dst.Set(p)
	case reflect.Struct:
		m, ok := v.(map[string]any)
		if !ok {
			bad("an object")
			return
		}
		names := jsonMembers(dst.Type())
		for _, k := range sortedKeys(m) {
			i, ok := names[k]
			if !ok {
				*errs = append(*errs, field.Invalid(join(path, k), "unknown member%s", suggest(k, sortedKeys(names))))
				continue
			}
			decodeInto(join(path, k), m[k], dst.Field(i), errs)
		}
	case reflect.Map:
		m, ok := v.(map[string]any)
		if !ok {
			bad("an object")
			return
		}
		dst.Set(reflect.MakeMapWithSize(dst.Type(), len(m)))
		for _, k := range sortedKeys(m) {
			e := reflect.New(dst.Type().Elem()).Elem()
			decodeInto(join(path, k), m[k], e, errs)
			dst.SetMapIndex(reflect.ValueOf(k), e)
		}
	case reflect.Slice:
		l, ok := v.([]any)
		if !ok {
			bad("a list")
			return
		}
		s := reflect.MakeSlice(dst.Type(), len(l), len(l))
		for i, e := range l {
			decodeInto(fmt.Sprintf("%s[%d]", path, i), e, s.Index(i), errs)
		}
		dst.Set(s)
	case reflect.String:
		s, ok := v.(string)
		if !ok {
			bad("a string")
			return
		}
		dst.SetString(s)
	case reflect.Bool:
		b, ok := v.(bool)
		if !ok {
			bad("true or false")
			return
		}
		dst.SetBool(b)
	case reflect.Int, reflect.Int64:
		f, ok := number(v)
		switch {
		case !ok || f != math.Trunc(f):
			bad("a whole number")
		case f < math.MinInt64 || f >= math.MaxInt64 || dst.OverflowInt(int64(f)):
			*errs = append(*errs, field.Invalid(path, "%s is out of range", describe(v)))
		default:
			n, exact := integer(v) // exact where a float64 would round
			if !exact {
				n = int64(f)
			}
			dst.SetInt(n)
		}
	case reflect.Interface:
		dst.Set(reflect.ValueOf(v))
	default:
		panic(fmt.Sprintf("ratelimit: decodeValue into %s", dst.Type())) // (a wire type of this package)
	}
}

// jsonMembers maps the json names of t's exported fields to their index.
func jsonMembers(t reflect.Type) map[string]int {
	m := make(map[string]int, t.NumField())
	for i := range t.NumField() {
		f := t.Field(i)
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		if f.IsExported() && name != "-" {
			if name == "" {
				name = f.Name
			}
			m[name] = i
		}
	}
	return m
}

// number returns v, a number of the document (JSON's as json.Number, so
// 1e3 and 10.0 as written, YAML's as Go numbers), as a float64.
func number(v any) (float64, bool) {
	switch n := v.(type) {
	case json.Number:
		f, err := strconv.ParseFloat(string(n), 64)
		return f, err == nil || math.IsInf(f, 0)
	case int:
		return float64(n), true
	case int64:
		return float64(n), true
	case uint64:
		return float64(n), true
	case float64:
		return n, true
	}
	return 0, false
}

// integer returns v as an int64 when it is written as an integer that
// fits (exactly, where a float64 would round).
func integer(v any) (int64, bool) {
	switch n := v.(type) {
	case json.Number:
		i, err := n.Int64()
		return i, err == nil
	case int:
		return int64(n), true
	case int64:
		return n, true
	case uint64:
		return int64(n), n <= math.MaxInt64
	case float64:
		return int64(n), n == math.Trunc(n) && math.Abs(n) < 1<<63
	}
	return 0, false
}

// describe names the kind of a document's value, with the value when it
// is short.
func describe(v any) string {
	switch v := v.(type) {
	case map[string]any:
		return "an object"
	case []any:
		return "a list"
	case string:
		if len(v) > 40 {
			return "a string"
		}
		return fmt.Sprintf("the string %q", v)
	case bool:
		return fmt.Sprintf("%v", v)
	case json.Number, int, int64, uint64, float64:
		return fmt.Sprintf("the number %v", v)
	}
	return fmt.Sprintf("%v", v)
}
