package ratelimit

import (
	"encoding/base64"
	"strings"
	"sync"
	"unicode/utf8"

	"github.com/google/cel-go/cel"
	"github.com/google/cel-go/common/functions"
	"github.com/google/cel-go/common/types"
	"github.com/google/cel-go/common/types/ref"
	"github.com/google/cel-go/common/types/traits"
)

// Functions that build text or lists from values an expression makes
// cheaply are bounded before they build, not charged after: a list of a
// thousand references to one 1 MiB header costs an expression a thousand
// units, and joining or encoding it would build a gigabyte (a black-box
// check measured 5 GB allocated by one request before the cost limit
// stopped it). join, format, json.encode (encodeJson), queryString.encode
// and replace refuse to build text whose size, measured before building
// (see joinSize, formatSize, textSize), exceeds maxKeyBytes; split refuses to build a list of
// more elements than maxEvalCost, which its cost would exceed anyway.
//
// These redefine cel-go's bindings of the same overloads (same
// signatures), checking first and then calling cel-go's own binding, so
// the functions keep cel-go's semantics.

// celBinding returns cel-go's binding of overload id of function fn in
// ext.Strings, ext.Lists and ext.Encoders.
func celBinding(fn, id string) *functions.Overload {
	for _, o := range celBindings()[fn] {
		if o.Operator == id {
			return o
		}
	}
	panic("ratelimit: cel-go has no overload " + id + " of " + fn) // (TestBoundedBuilders)
}

var celBindings = sync.OnceValue(func() map[string][]*functions.Overload {
	m := map[string][]*functions.Overload{}
	for name, f := range celExtEnv().Functions() {
		if b, err := f.Bindings(); err == nil {
			m[name] = b
		}
	}
	return m
})

// tooLong is the error of a function refusing to build more than
// maxKeyBytes.
func tooLong(fn string) ref.Val {
	return overBudget("%s: the result would be longer than %d bytes", fn, maxKeyBytes)
}

// tooMany is the error of split refusing to build more than maxEvalCost
// elements.
func tooMany() ref.Val {
	return overBudget("split: the result would have more than %d elements", maxEvalCost)
}

// boundedBuilders returns the environment options redefining the
// builders' bindings.
func boundedBuilders() []cel.EnvOption {
	strT, intT, dynT := cel.StringType, cel.IntType, cel.DynType
	strList := cel.ListType(strT)
	join := celBinding("join", "list_join")
	joinSep := celBinding("join", "list_join_string")
	format := celBinding("format", "string_format")
	replace := celBinding("replace", "string_replace_string_string")
	replaceN := celBinding("replace", "string_replace_string_string_int")
	split := celBinding("split", "string_split_string")
	splitN := celBinding("split", "string_split_string_int")
	encode := celBinding("json.encode", "json_encode_dyn")
	return []cel.EnvOption{
		cel.Function("join",
			cel.MemberOverload("list_join", []*cel.Type{strList}, strT, cel.UnaryBinding(func(l ref.Val) ref.Val {
				if joinSize(l, 0) > maxKeyBytes {
					return tooLong("join")
				}
				return join.Unary(l)
			})),
			cel.MemberOverload("list_join_string", []*cel.Type{strList, strT}, strT, cel.BinaryBinding(func(l, sep ref.Val) ref.Val {
				if joinSize(l, len(str(sep))) > maxKeyBytes {
					return tooLong("join")
				}
				return joinSep.Binary(l, sep)
			}))),
		cel.Function("format",
			cel.MemberOverload("string_format", []*cel.Type{strT, cel.ListType(dynT)}, strT, cel.FunctionBinding(func(args ...ref.Val) ref.Val {
				if formatSize(str(args[0]), args[1]) > maxKeyBytes {
					return tooLong("format")
				}
				return format.Function(args...)
			}))),
		cel.Function("replace",
			cel.MemberOverload("string_replace_string_string", []*cel.Type{strT, strT, strT}, strT, cel.FunctionBinding(func(args ...ref.Val) ref.Val {
				if replacedSize(str(args[0]), str(args[1]), str(args[2]), -1) > maxKeyBytes {
					return tooLong("replace")
				}
				return replace.Function(args...)
			})),
			cel.MemberOverload("string_replace_string_string_int", []*cel.Type{strT, strT, strT, intT}, strT, cel.FunctionBinding(func(args ...ref.Val) ref.Val {
				n, _ := args[3].(types.Int)
				if replacedSize(str(args[0]), str(args[1]), str(args[2]), int64(n)) > maxKeyBytes {
					return tooLong("replace")
				}
				return replaceN.Function(args...)
			}))),
		cel.Function("split",
			cel.MemberOverload("string_split_string", []*cel.Type{strT, strT}, strList, cel.BinaryBinding(func(s, sep ref.Val) ref.Val {
				if splitCount(str(s), str(sep), -1) > maxEvalCost {
					return tooMany()
				}
				return split.Binary(s, sep)
			})),
			cel.MemberOverload("string_split_string_int", []*cel.Type{strT, strT, intT}, strList, cel.FunctionBinding(func(args ...ref.Val) ref.Val {
				n, _ := args[2].(types.Int)
				if splitCount(str(args[0]), str(args[1]), int64(n)) > maxEvalCost {
					return tooMany()
				}
				return splitN.Function(args...)
			}))),
		cel.Function("json.encode",
			cel.Overload("json_encode_dyn", []*cel.Type{dynT}, strT, cel.UnaryBinding(func(v ref.Val) ref.Val {
				if textSize(v, jsonDoubleBytes) > maxKeyBytes {
					return tooLong("json.encode")
				}
				return encode.Unary(v)
			}))),
		// base64.decode as the Traffic Policy documentation has it: padding
		// required, as decodeBase64 (cel-go also accepts unpadded input).
		cel.Function("base64.decode",
			cel.Overload("base64_decode_string", []*cel.Type{strT}, cel.BytesType, cel.UnaryBinding(func(s ref.Val) ref.Val {
				b, err := base64.StdEncoding.DecodeString(str(s))
				if err != nil {
					return types.NewErr("base64.decode: %v", err)
				}
				return types.Bytes(b)
			}))),
	}
}

// Bounds of the text of a scalar. As a value of its own, a number may be
// formatted with a precision: a double in %f with 100 digits after the
// point (cel-go's largest precision) is at most 410 bytes, an int in
// binary 65. Inside a list or map, or in JSON, it takes its plain form:
// an int at most 20 bytes, a timestamp or duration under 40, and a double
// at most 24 in JSON (the shortest form that reads back, 1e+300) but up to
// 330 in format's %s of a list (cel-go writes every digit, 1e300 as 301
// of them; a review built 9 MB past a bound of 32).
const (
	numberBytes       = 512
	intBytes          = 66
	nestedIntBytes    = 20
	jsonDoubleBytes   = 32
	formatDoubleBytes = 330
	otherScalarBytes  = 64
)

// joinSize is the size of list l's strings joined with sep (other
// elements, which join refuses, count as otherScalarBytes), or more than
// maxKeyBytes.
func joinSize(l ref.Val, sep int) int {
	n := 0
	if l, ok := l.(traits.Lister); ok {
		for it := l.Iterator(); it.HasNext() == types.True && n <= maxKeyBytes; {
			if s, ok := it.Next().(types.String); ok {
				n += len(s) + sep
			} else {
				n += otherScalarBytes
			}
		}
	}
	return n
}

// formatSize bounds the size of format's result: the format string, and
// each argument as a string (in hex, twice its size, if the format has a
// %x) or as the text of textSize.
func formatSize(format string, args ref.Val) int {
	n, per := len(format), 1
	if strings.Contains(format, "%x") || strings.Contains(format, "%X") {
		per = 2
	}
	if l, ok := args.(traits.Lister); ok {
		for it := l.Iterator(); it.HasNext() == types.True && n <= maxKeyBytes; {
			switch v := it.Next().(type) {
			case types.String:
				n += per * len(v)
			case types.Bytes:
				n += 2 * len(v)
			case types.Int, types.Uint:
				n += intBytes
			case types.Double:
				n += numberBytes
			default:
				n += textSize(v, formatDoubleBytes)
			}
		}
	}
	return n
}

// textSize bounds the size of v's text in the forms cel-go's builders and
// queryString.encode write for a value (a string quoted and escaped,
// bytes in base64 or hex, a list or map with brackets and separators),
// or is more than maxKeyBytes, with a double counted as doubleBytes
// (jsonDoubleBytes or formatDoubleBytes). A string's escaped size is
// counted exactly, so the bound is at most a few bytes an element above
// the real size.
func textSize(v ref.Val, doubleBytes int) int {
	n := 0
	var walk func(v ref.Val)
	walk = func(v ref.Val) {
		switch v := v.(type) {
		case types.String:
			n += quotedSize(string(v))
		case types.Bytes:
			n += 2*len(v) + 2
		case types.Bool, types.Null:
			n += 5
		case types.Int, types.Uint:
			n += nestedIntBytes
		case types.Double:
			n += doubleBytes
		case traits.Lister:
			n += 2
			for it := v.Iterator(); it.HasNext() == types.True && n <= maxKeyBytes; {
				walk(it.Next())
				n += 2
			}
		case traits.Mapper:
			n += 2
			for it := v.Iterator(); it.HasNext() == types.True && n <= maxKeyBytes; {
				k := it.Next()
				walk(k)
				walk(v.Get(k))
				n += 4
			}
		default:
			n += otherScalarBytes
		}
	}
	walk(v)
	return n
}

// quotedSize is the size of s quoted and escaped as JSON (encoding/json,
// with HTML escaping): at least as long as any quoted form cel-go writes.
func quotedSize(s string) int {
	n := 2
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			switch {
			case c < 0x20 || c == '<' || c == '>' || c == '&':
				n += 6
			case c == '"' || c == '\\':
				n += 2
			default:
				n++
			}
			i++
			continue
		}
		r, w := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && w == 1 || r == '\u2028' || r == '\u2029' {
			n += 6
		} else {
			n += w
		}
		i += w
	}
	return n
}

// queryStringSize bounds the size of queryString.encode's result for map
// m: each key escaped, with "=" and "&", once for each of its values (a
// list's elements are values of their own), and each value escaped (one
// that is not a string counted as textSize, escaped).
func queryStringSize(m traits.Mapper) int {
	n := 0
	value := func(k int, v ref.Val) {
		n += k + 2
		if s, ok := v.(types.String); ok {
			n += escapedSize(string(s))
		} else {
			n += 3 * textSize(v, jsonDoubleBytes)
		}
	}
	for it := m.Iterator(); it.HasNext() == types.True && n <= maxKeyBytes; {
		k := it.Next()
		ks := escapedSize(str(k))
		if l, ok := m.Get(k).(traits.Lister); ok {
			for li := l.Iterator(); li.HasNext() == types.True && n <= maxKeyBytes; {
				value(ks, li.Next())
			}
			continue
		}
		value(ks, m.Get(k))
	}
	return n
}

// escapedSize is the size of url.QueryEscape(s).
func escapedSize(s string) int {
	n := 0
	for i := range len(s) {
		switch c := s[i]; {
		case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z', '0' <= c && c <= '9',
			c == '-', c == '_', c == '.', c == '~', c == ' ':
			n++
		default:
			n += 3
		}
	}
	return n
}

// replacedSize is the size of s with n (all, if negative) occurrences of
// old replaced by new.
func replacedSize(s, old, new string, n int64) int {
	if len(new) <= len(old) || n == 0 {
		return len(s)
	}
	k := int64(strings.Count(s, old)) // (utf8.RuneCountInString(s)+1 for an empty old)
	if n > 0 {
		k = min(k, n)
	}
	return len(s) + int(min(k, int64(maxKeyBytes)))*(len(new)-len(old))
}

// splitCount is the number of elements s.split(sep, n) returns.
func splitCount(s, sep string, n int64) int64 {
	if n == 0 {
		return 0
	}
	k := int64(strings.Count(s, sep)) + 1
	if sep == "" {
		k = int64(utf8.RuneCountInString(s))
	}
	if n > 0 {
		k = min(k, n)
	}
	return k
}
