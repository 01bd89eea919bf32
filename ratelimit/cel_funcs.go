package ratelimit

import (
	"crypto/md5"
	"crypto/sha1"
	"crypto/sha256"
	"crypto/sha512"
	"encoding/base64"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"hash"
	"hash/crc32"
	"hash/crc64"
	"hash/maphash"
	"math/bits"
	"math/rand/v2"
	"net/http"
	"net/netip"
	"net/textproto"
	"net/url"
	"regexp"
	"regexp/syntax"
	"strings"
	"sync/atomic"
	"unicode"

	"github.com/google/cel-go/cel"
	"github.com/google/cel-go/common/ast"
	"github.com/google/cel-go/common/operators"
	"github.com/google/cel-go/common/overloads"
	"github.com/google/cel-go/common/types"
	"github.com/google/cel-go/common/types/ref"
	"github.com/google/cel-go/common/types/traits"
	"github.com/google/cel-go/parser"

	"github.com/acctapi/acctapi/internal/trunc"
)

// The Traffic Policy macros beyond cel-go's standard library and its
// Strings, Lists and Encoders extensions. Functions that read the request
// (getReqHeader, rand.int, secrets.get, ...) are macros that pass a hidden
// request handle, so their bindings need no per-request closure and are
// never folded into constants.

// varRequest is the hidden handle the request functions receive.
const varRequest = "__acctapi_request"

var requestType = cel.OpaqueType("acctapi.ratelimit.Request")

// functionNames lists the functions and macros of the catalogue, for
// suggestions and for the test that each has a test.
var functionNames = []string{
	// request
	"getReqHeader", "hasReqHeader", "getQueryParam", "hasQueryParam", "getReqCookie", "hasReqCookie",
	// encoding, hashing, JSON, query strings, URLs
	"base64.decode", "base64.encode", "basic_auth.encode",
	"hash.crc32", "hash.crc64", "hash.md5", "hash.sha1", "hash.sha256", "hash.sha512", "hash.xxhash64",
	"crc32", "crc64", "md5", "sha1", "sha256", "sha512", "xxhash64",
	"json.decode", "json.encode", "decodeJson", "encodeJson", "isJson", "decodeBase64", "encodeBase64",
	"queryString.decode", "queryString.encode", "decodeQueryString", "encodeQueryString", "isQueryString",
	"url.escape", "escapeUrl", "url.unescape", "unescapeUrl", "url.parse", "parseUrl", "isURL",
	// lists and maps
	"all", "exists", "exists_one", "filter", "map", "size", "join", "slice", "flatten", "sort", "sortBy",
	"distinct", "lists.range",
	// strings
	"matches", "startsWith", "endsWith", "contains", "charAt", "indexOf", "lastIndexOf", "format", "split",
	"replace", "substring", "trim", "reverse", "lowerAscii", "upperAscii", "lower", "upper", "strings.quote",
	"isPrivateIp",
	// timestamps and durations
	"getDate", "getDayOfMonth", "getDayOfWeek", "getDayOfYear", "getFullYear", "getMonth", "getHours",
	"getMinutes", "getSeconds", "getMilliseconds",
	// random, secrets, utility
	"rand.double", "rand.int", "secrets.get", "has", "inCidrRange", "inCidrRanges",
}

// requestMacro expands name(args...) into __name(<request>, args...); a
// literal first argument of a header function is canonicalized.
func requestMacro(name string, args int, canon bool) cel.Macro {
	return cel.GlobalMacro(name, args, func(eh cel.MacroExprFactory, _ ast.Expr, in []ast.Expr) (ast.Expr, *cel.Error) {
		out := []ast.Expr{eh.NewIdent(varRequest)}
		for i, arg := range in {
			if canon && i == 0 && arg.Kind() == ast.LiteralKind {
				if s, ok := arg.AsLiteral().(types.String); ok {
					arg = eh.NewLiteral(types.String(textproto.CanonicalMIMEHeaderKey(string(s))))
				}
			}
			out = append(out, arg)
		}
		return eh.NewCall("__"+name, out...), nil
	})
}

// namespacedMacro expands ns.fn(args...) into __<ns>_<fn>(<request>,
// args...) (or with defaults, when args are missing); other receivers are
// left alone.
func namespacedMacro(ns, fn string, args int, defaults ...ref.Val) cel.Macro {
	return cel.ReceiverMacro(fn, args, func(eh cel.MacroExprFactory, target ast.Expr, in []ast.Expr) (ast.Expr, *cel.Error) {
		if target.Kind() != ast.IdentKind || target.AsIdent() != ns {
			return nil, nil
		}
		out := []ast.Expr{eh.NewIdent(varRequest)}
		out = append(out, in...)
		for _, d := range defaults {
			out = append(out, eh.NewLiteral(d))
		}
		return eh.NewCall("__"+ns+"_"+fn, out...), nil
	})
}

// memberMacro rewrites <x>.member(args...) into fn(x, args...).
func memberMacro(member string, args int, fn string) cel.Macro {
	return cel.ReceiverMacro(member, args, func(eh cel.MacroExprFactory, target ast.Expr, in []ast.Expr) (ast.Expr, *cel.Error) {
		if target.Kind() == ast.IdentKind && strings.Contains(fn, ".") && strings.HasPrefix(fn, target.AsIdent()+".") {
			return nil, nil // the namespaced function itself
		}
		return eh.NewCall(fn, append([]ast.Expr{target}, in...)...), nil
	})
}

// hasMacro is has() that also accepts the documentation's index form,
// has(m[k]) meaning k in m, and a variable whose value may be absent,
// has(req.url.port).
//
// has(x[i]) of a list is whether i is an index of x. (has(<name>) of a name
// that no variable begins, req.cookie, is cel-go's has(), which the
// checker refuses; explain names the whole name.)
var hasMacro = cel.GlobalMacro(operators.Has, 1, func(eh cel.MacroExprFactory, target ast.Expr, args []ast.Expr) (ast.Expr, *cel.Error) {
	arg := args[0]
	if arg.Kind() == ast.CallKind && arg.AsCall().FunctionName() == operators.Index && len(arg.AsCall().Args()) == 2 {
		c := arg.AsCall()
		return eh.NewCall("__has_index", c.Args()[0], c.Args()[1]), nil
	}
	if name, ok := dottedName(arg); ok {
		if _, ok := varIndex[name]; ok {
			return eh.NewCall("__present", eh.NewIdent(varRequest), eh.NewLiteral(types.String(name))), nil
		}
	}
	return parser.MakeHas(eh, target, args)
})

// hasIndex is has(x[k]): k in x for a map, 0 <= k < size(x) for a list.
func hasIndex(x, k ref.Val) ref.Val {
	switch x := x.(type) {
	case traits.Mapper:
		_, found := x.Find(k)
		return types.Bool(found)
	case traits.Lister:
		i, ok := k.(types.Int)
		if !ok {
			return types.NewErr("has(x[k]): a list's index must be an int, not %s", k.Type().TypeName())
		}
		n, _ := x.Size().(types.Int)
		return types.Bool(i >= 0 && i < n)
	}
	return types.NewErr("has(x[k]): x is a %s, neither a map nor a list", x.Type().TypeName())
}

// dottedName returns the qualified name a chain of selections spells
// ("req.url.port"), if e is one.
func dottedName(e ast.Expr) (string, bool) {
	switch e.Kind() {
	case ast.IdentKind:
		return e.AsIdent(), true
	case ast.SelectKind:
		s := e.AsSelect()
		if s.IsTestOnly() {
			return "", false
		}
		if p, ok := dottedName(s.Operand()); ok {
			return p + "." + s.FieldName(), true
		}
	}
	return "", false
}

// requestFunc declares __name(request, args...) with a binding that gets
// the activation.
func requestFunc(name string, args []*cel.Type, out *cel.Type, fn func(a *activation, args []ref.Val) ref.Val) cel.EnvOption {
	return cel.Function("__"+name, cel.Overload("__"+name+"_"+fmt.Sprint(len(args)),
		append([]*cel.Type{requestType}, args...), out,
		cel.FunctionBinding(func(vals ...ref.Val) ref.Val {
			h, ok := vals[0].(requestHandle)
			if !ok {
				return types.NewErr("%s: no request", name)
			}
			return fn(h.a, vals[1:])
		})))
}

func str(v ref.Val) string { s, _ := v.(types.String); return string(s) }

// funcOptions returns the environment options declaring the catalogue's
// functions and macros.
func funcOptions() []cel.EnvOption {
	strT, intT, dblT, boolT, dynT := cel.StringType, cel.IntType, cel.DoubleType, cel.BoolType, cel.DynType
	macros := []cel.Macro{
		hasMacro,
		requestMacro("getReqHeader", 1, true), requestMacro("hasReqHeader", 1, true),
		requestMacro("getQueryParam", 1, false), requestMacro("hasQueryParam", 1, false),
		requestMacro("getReqCookie", 1, false), requestMacro("hasReqCookie", 1, false),
		namespacedMacro("rand", "double", 0),
		namespacedMacro("rand", "int", 0, types.Int(0), types.Int(1)),
		namespacedMacro("rand", "int", 2),
		namespacedMacro("secrets", "get", 2),
		memberMacro("decodeJson", 0, "json.decode"), memberMacro("encodeJson", 0, "json.encode"),
		memberMacro("decodeQueryString", 0, "queryString.decode"),
		memberMacro("encodeQueryString", 0, "queryString.encode"),
		memberMacro("escapeUrl", 0, "url.escape"), memberMacro("unescapeUrl", 0, "url.unescape"),
		memberMacro("parseUrl", 0, "url.parse"),
		// matches runs as __matches, which refuses a match that could run
		// long before running it (see boundedMatch).
		memberMacro("matches", 1, "__matches"),
		cel.GlobalMacro("matches", 2, func(eh cel.MacroExprFactory, _ ast.Expr, in []ast.Expr) (ast.Expr, *cel.Error) {
			return eh.NewCall("__matches", in...), nil
		}),
	}
	opts := []cel.EnvOption{
		// One overload of dyn: a typed one per kind leaves a dyn
		// container with no overload at run time, naming __has_index.
		cel.Function("__has_index", cel.Overload("rl_has_index", []*cel.Type{dynT, dynT}, boolT, cel.BinaryBinding(hasIndex))),
		cel.Function("__matches", cel.Overload("rl_matches_string", []*cel.Type{strT, strT}, boolT,
			cel.BinaryBinding(func(s, p ref.Val) ref.Val { return boundedMatch(str(s), str(p)) }))),
		requestFunc("getReqHeader", []*cel.Type{strT}, strList, func(a *activation, v []ref.Val) ref.Val {
			return stringList(a.headerValues(str(v[0])))
		}),
		requestFunc("hasReqHeader", []*cel.Type{strT}, boolT, func(a *activation, v []ref.Val) ref.Val {
			return types.Bool(len(a.headerValues(str(v[0]))) > 0)
		}),
		requestFunc("getQueryParam", []*cel.Type{strT}, strList, func(a *activation, v []ref.Val) ref.Val {
			return stringList(a.queryParam(str(v[0])))
		}),
		requestFunc("hasQueryParam", []*cel.Type{strT}, boolT, func(a *activation, v []ref.Val) ref.Val {
			return types.Bool(a.queryParam(str(v[0])) != nil)
		}),
		requestFunc("getReqCookie", []*cel.Type{strT}, cookieT, func(a *activation, v []ref.Val) ref.Val {
			c := &http.Cookie{}
			for _, k := range a.cookies() {
				if k.Name == str(v[0]) {
					c = k
					break
				}
			}
			return celValue(cookieValue(c))
		}),
		requestFunc("hasReqCookie", []*cel.Type{strT}, boolT, func(a *activation, v []ref.Val) ref.Val {
			for _, k := range a.cookies() {
				if k.Name == str(v[0]) {
					return types.True
				}
			}
			return types.False
		}),
		requestFunc("present", []*cel.Type{strT}, boolT, func(a *activation, v []ref.Val) ref.Val {
			return types.Bool(!types.IsError(varIndex[str(v[0])].value(a)))
		}),
		requestFunc("rand_double", nil, dblT, func(*activation, []ref.Val) ref.Val { return types.Double(rand.Float64()) }),
		requestFunc("rand_int", []*cel.Type{intT, intT}, intT, func(_ *activation, v []ref.Val) ref.Val {
			lo, hi := v[0].(types.Int), v[1].(types.Int)
			if lo < 0 || hi < lo {
				return types.NewErr("rand.int: want 0 <= min <= max, got min %d and max %d", lo, hi)
			}
			// hi-lo+1 is at most 2^63: it fits a uint64, not an int64.
			return lo + types.Int(rand.Uint64N(uint64(hi-lo)+1))
		}),
		requestFunc("secrets_get", []*cel.Type{strT, strT}, strT, func(a *activation, v []ref.Val) ref.Val {
			s, err := a.prov.secrets(str(v[0]), str(v[1]))
			if err != nil {
				return types.NewErr("secrets.get(%q, %q): %v", str(v[0]), str(v[1]), err)
			}
			return types.String(s)
		}),
		cel.Function("basic_auth.encode", cel.Overload("basic_auth_encode", []*cel.Type{strT, strT}, strT,
			cel.BinaryBinding(func(u, p ref.Val) ref.Val {
				return types.String("Basic " + base64.StdEncoding.EncodeToString([]byte(str(u)+":"+str(p))))
			}))),
		cel.Function("json.decode", cel.Overload("json_decode_string", []*cel.Type{strT}, dynT,
			cel.UnaryBinding(func(s ref.Val) ref.Val {
				if err := overBuildCost("json.decode", "json_decode_string", str(s)); err != nil {
					return err
				}
				var v any
				if err := json.Unmarshal([]byte(str(s)), &v); err != nil {
					return types.NewErr("json.decode: %v", err)
				}
				return celValue(v)
			}))),
		strMember("isJson", boolT, func(s string) ref.Val { return types.Bool(json.Valid([]byte(s))) }),
		strMember("decodeBase64", strT, func(s string) ref.Val {
			b, err := base64.StdEncoding.DecodeString(s)
			if err != nil {
				return types.NewErr("decodeBase64: %v", err)
			}
			return types.String(b)
		}),
		strMember("encodeBase64", strT, func(s string) ref.Val {
			return types.String(base64.StdEncoding.EncodeToString([]byte(s)))
		}),
		cel.Function("queryString.decode", cel.Overload("query_string_decode", []*cel.Type{strT}, strMap,
			cel.UnaryBinding(func(s ref.Val) ref.Val {
				if err := overBuildCost("queryString.decode", "query_string_decode", str(s)); err != nil {
					return err
				}
				q, err := url.ParseQuery(str(s))
				if err != nil {
					return types.NewErr("queryString.decode: %v", err)
				}
				m := make(map[string]string, len(q))
				for k, v := range q {
					m[k] = v[0]
				}
				return celValue(m)
			}))),
		cel.Function("queryString.encode", cel.Overload("query_string_encode", []*cel.Type{cel.MapType(strT, dynT)}, strT,
			cel.UnaryBinding(encodeQueryString))),
		strMember("isQueryString", boolT, func(s string) ref.Val { return types.Bool(isQueryString(s)) }),
		strFunc("url.escape", func(s string) ref.Val { return types.String(url.QueryEscape(s)) }),
		strFunc("url.unescape", func(s string) ref.Val {
			u, err := url.QueryUnescape(s)
			if err != nil {
				return types.NewErr("url.unescape: %v", err)
			}
			return types.String(u)
		}),
		cel.Function("url.parse", cel.Overload("url_parse_string", []*cel.Type{strT}, cel.MapType(strT, dynT),
			cel.UnaryBinding(func(s ref.Val) ref.Val {
				if err := overBuildCost("url.parse", "url_parse_string", str(s)); err != nil {
					return err
				}
				return parseURL(str(s))
			}))),
		strMember("isURL", boolT, func(s string) ref.Val {
			u, err := url.Parse(s)
			return types.Bool(err == nil && u.Scheme != "" && (u.Host != "" || u.Opaque != ""))
		}),
		strMember("lower", strT, func(s string) ref.Val { return types.String(strings.ToLower(s)) }),
		strMember("upper", strT, func(s string) ref.Val { return types.String(strings.ToUpper(s)) }),
		strMember("isPrivateIp", boolT, func(s string) ref.Val {
			if len(s) > maxAddrBytes {
				return types.False
			}
			ip, err := netip.ParseAddr(s)
			return types.Bool(err == nil && ip.Is4() && ip.IsPrivate())
		}),
		cel.Function("split", cel.MemberOverload("string_split_whitespace", []*cel.Type{strT}, strList,
			cel.UnaryBinding(func(s ref.Val) ref.Val {
				if err := overBuildCost("split", "string_split_whitespace", str(s)); err != nil {
					return err
				}
				return stringList(strings.Fields(str(s)))
			}))),
		cel.Function("inCidrRange", cel.Overload("in_cidr_range", []*cel.Type{strT, strT}, boolT,
			cel.BinaryBinding(func(ip, cidr ref.Val) ref.Val {
				addr, ok := parseIP(str(ip))
				return types.Bool(ok && inCIDR(addr, str(cidr)))
			}))),
		cel.Function("inCidrRanges", cel.Overload("in_cidr_ranges", []*cel.Type{strT, strList}, boolT,
			cel.BinaryBinding(func(ip, cidrs ref.Val) ref.Val {
				addr, ok := parseIP(str(ip))
				l, isList := cidrs.(traits.Lister)
				if !ok || !isList {
					return types.False
				}
				for it := l.Iterator(); it.HasNext() == types.True; {
					if inCIDR(addr, str(it.Next())) {
						return types.True
					}
				}
				return types.False
			}))),
	}
	for _, h := range hashes {
		opts = append(opts,
			cel.Function("hash."+h.name,
				cel.Overload("hash_"+h.name, []*cel.Type{strT}, strT,
					cel.UnaryBinding(func(s ref.Val) ref.Val { return h.sum(str(s), "hex") })),
				cel.Overload("hash_"+h.name+"_format", []*cel.Type{strT, strT}, strT,
					cel.BinaryBinding(func(s, f ref.Val) ref.Val { return h.sum(str(s), str(f)) }))),
		)
		macros = append(macros, memberMacro(h.name, 0, "hash."+h.name), memberMacro(h.name, 1, "hash."+h.name))
	}
	return append(opts, cel.Macros(macros...))
}

// linearOverloads are the overloads of this file whose work grows with the
// length of their first argument, a string; their cost is charged by
// that length (see costOptions).
var linearOverloads = append([]string{
	// size of a string counts its runes, reading it (cel-go charges it
	// one unit: ten thousand of a 1 MiB header took 9.7 s); conversions
	// from a string read it, base64.decode allocates before it checks
	overloads.SizeString, "string_size",
	overloads.StringToDouble, overloads.StringToInt, overloads.StringToUint,
	overloads.StringToTimestamp, overloads.StringToDuration, "base64_decode_string",
	"url_escape_string", "url_unescape_string",
	"string_isJson", "string_decodeBase64", "string_encodeBase64", "string_isQueryString", "string_isURL",
	"string_lower", "string_upper",
}, hashOverloads()...)

// buildCosts are the overloads of this file that build a value of many
// parts from one string, each charged a unit per ten bytes it reads and
// jsonValueCost for each part it may build, counted before building:
// json.decode was charged by the bytes alone, and a 1 MB header of empty
// objects allocated 43 MB a call (queryString.decode, url.parse and
// split() allocate alike, per pair or field). A call over the limit is
// refused before it builds (overBuildCost), and charged what it read.
var buildCosts = map[string]func(string) uint64{
	"json_decode_string":      jsonCost,
	"query_string_decode":     queryCost,
	"url_parse_string":        queryCost,
	"string_split_whitespace": fieldsCost,
}

// overBuildCost is the error of function fn (overload id) refusing to
// build from s, or nil if the cost is within the limit.
func overBuildCost(fn, id, s string) ref.Val {
	if c := buildCosts[id](s); c > maxEvalCost {
		return overBudget("%s: the call is %d cost units of work, over the limit of %d", fn, c, maxEvalCost)
	}
	return nil
}

// queryCost is the cost of decoding the query string s (or the URL s):
// its pairs are separated by "&".
func queryCost(s string) uint64 {
	return 1 + uint64(len(s))/10 + jsonValueCost*uint64(strings.Count(s, "&")+1)
}

// fieldsCost is the cost of strings.Fields(s): its fields.
func fieldsCost(s string) uint64 {
	fields, space := uint64(0), true
	for _, r := range s {
		if unicode.IsSpace(r) {
			space = true
		} else if space {
			space = false
			fields++
		}
	}
	return 1 + uint64(len(s))/10 + jsonValueCost*fields
}

// hashOverloads are the overloads of every hash function (see hashes),
// whose work grows with the string hashed.
func hashOverloads() []string {
	var ids []string
	for _, h := range hashes {
		ids = append(ids, "hash_"+h.name, "hash_"+h.name+"_format")
	}
	return ids
}

// jsonValueCost is the cost of each value json.decode builds: decoding
// allocates about 100 to 150 bytes a value (an empty object, an array, a
// number, an object of one member, measured), and the package charges
// about 30 bytes allocated a unit elsewhere (a string's ten bytes, a list
// element's sixteen-byte header and its share of the list).
const jsonValueCost = 4

// jsonCost is the cost of json.decode(s) (see buildCosts): the values it
// may build are each object or array, each element or member after a
// comma, each member's key, and the first value.
func jsonCost(s string) uint64 {
	values := uint64(1)
	inString, escaped := false, false
	for i := range len(s) {
		c := s[i]
		switch {
		case escaped:
			escaped = false
		case inString:
			escaped = c == '\\'
			inString = c != '"'
		case c == '"':
			inString = true
		case c == '{', c == '[', c == ',', c == ':':
			values++
		}
	}
	return 1 + uint64(len(s))/10 + jsonValueCost*values
}

func strFunc(name string, fn func(string) ref.Val) cel.EnvOption {
	return cel.Function(name, cel.Overload(strings.ReplaceAll(name, ".", "_")+"_string",
		[]*cel.Type{cel.StringType}, cel.StringType,
		cel.UnaryBinding(func(s ref.Val) ref.Val { return fn(str(s)) })))
}

func strMember(name string, out *cel.Type, fn func(string) ref.Val) cel.EnvOption {
	return cel.Function(name, cel.MemberOverload("string_"+name, []*cel.Type{cel.StringType}, out,
		cel.UnaryBinding(func(s ref.Val) ref.Val { return fn(str(s)) })))
}

// headerValues returns the values of the request header name, in any
// case; host is the request's Host.
func (a *activation) headerValues(name string) []string {
	if strings.EqualFold(name, "host") {
		if a.r.Host == "" {
			return nil
		}
		return []string{a.r.Host}
	}
	if len(name) > shortKeyBytes && len(name) > a.longestHeader() {
		// (Values would copy name to canonicalize it, a copy charged one
		// unit: a 1 MiB name ten thousand times was 10 GB.)
		return nil
	}
	return a.r.Header.Values(name)
}

// queryParam returns the values of query parameter name, nil if it has
// none; a name longer than any parameter's is not hashed to look it up.
func (a *activation) queryParam(name string) []string {
	q := a.queryValues()
	if len(name) > shortKeyBytes && len(name) > a.queryLongest {
		return nil
	}
	return q[name]
}

// longestHeader is the length of the request's longest header name.
func (a *activation) longestHeader() int {
	if a.headerLongest1 == 0 {
		n := 0
		for k := range a.r.Header {
			n = max(n, len(k))
		}
		a.headerLongest1 = n + 1
	}
	return a.headerLongest1 - 1
}

type hashFunc struct {
	name string
	new  func() hash.Hash
}

var crc64Table = crc64.MakeTable(crc64.ISO)

var hashes = []hashFunc{
	{"crc32", func() hash.Hash { return crc32.NewIEEE() }},
	{"crc64", func() hash.Hash { return crc64.New(crc64Table) }},
	{"md5", md5.New},
	{"sha1", sha1.New},
	{"sha256", sha256.New},
	{"sha512", sha512.New},
	{"xxhash64", func() hash.Hash { return new(xxh64) }},
}

// sum hashes s and formats the digest as "hex" or "base64".
func (h hashFunc) sum(s, format string) ref.Val {
	d := h.new()
	d.Write([]byte(s))
	b := d.Sum(nil)
	switch format {
	case "hex":
		return types.String(hex.EncodeToString(b))
	case "base64":
		return types.String(base64.StdEncoding.EncodeToString(b))
	}
	return types.NewErr("hash.%s: format %q is neither \"hex\" nor \"base64\"", h.name, format)
}

func encodeQueryString(m ref.Val) ref.Val {
	mp, ok := m.(traits.Mapper)
	if !ok {
		return types.NewErr("queryString.encode: not a map")
	}
	if queryStringSize(mp) > maxKeyBytes {
		return tooLong("queryString.encode")
	}
	q := url.Values{}
	for it := mp.Iterator(); it.HasNext() == types.True; {
		k := it.Next()
		v := mp.Get(k)
		vals := []ref.Val{v}
		if l, ok := v.(traits.Lister); ok {
			vals = vals[:0]
			for li := l.Iterator(); li.HasNext() == types.True; {
				vals = append(vals, li.Next())
			}
		}
		for _, e := range vals {
			s, err := keyString(e)
			if err != nil {
				return types.NewErr("queryString.encode: %v", err)
			}
			q.Add(str(k), s)
		}
	}
	return types.String(q.Encode())
}

// isQueryString reports whether s is a non-empty query string of
// key[=value] pairs joined with "&", without spaces and with valid escapes.
func isQueryString(s string) bool {
	if s == "" || strings.ContainsAny(s, " \t\r\n") {
		return false
	}
	for p := range strings.SplitSeq(s, "&") {
		k, _, _ := strings.Cut(p, "=")
		if k == "" {
			return false
		}
	}
	_, err := url.ParseQuery(s)
	return err == nil
}

// parseURL is url.parse: the parts of a URL as a map with the names of
// Go's url.URL in snake case, plus hostname, port and query_params.
func parseURL(s string) ref.Val {
	u, err := url.Parse(s)
	if err != nil {
		return types.NewErr("url.parse: %v", err)
	}
	// celValue makes the nested query_params an ordered map too.
	return celValue(map[string]any{
		"scheme": u.Scheme, "opaque": u.Opaque, "user": u.User.String(), "host": u.Host,
		"hostname": u.Hostname(), "port": u.Port(), "path": u.Path, "raw_path": u.EscapedPath(),
		"raw_query": u.RawQuery, "fragment": u.Fragment, "query_params": map[string][]string(u.Query()),
	})
}

// maxAddrBytes bounds the text of an IP address or CIDR prefix (45 bytes
// for the longest IPv6 address, a zone or a prefix length besides): a
// longer string is none, and is not read. Parsing reads a string that has
// no '.' or ':' to its end, and these functions are charged one unit, so
// a 1 MiB header tested a thousand times was a gigabyte read.
const maxAddrBytes = 64

// parseIP parses ip for inCidrRange(s): false for an invalid ip, which is
// in no range; an IPv4-mapped IPv6 address counts as its IPv4 address.
func parseIP(ip string) (netip.Addr, bool) {
	if len(ip) > maxAddrBytes {
		return netip.Addr{}, false
	}
	addr, err := netip.ParseAddr(ip)
	if err != nil {
		return netip.Addr{}, false
	}
	return addr.Unmap().WithZone(""), true
}

// inCIDR reports whether addr lies in cidr; a cidr that does not parse
// holds nothing.
func inCIDR(addr netip.Addr, cidr string) bool {
	if len(cidr) > maxAddrBytes {
		return false
	}
	p, err := netip.ParsePrefix(cidr)
	return err == nil && p.Contains(addr)
}

// xxh64 is XXH64 with seed 0 as a hash.Hash that buffers its input.
type xxh64 struct{ buf []byte }

const (
	xxPrime1 uint64 = 11400714785074694791
	xxPrime2 uint64 = 14029467366897019727
	xxPrime3 uint64 = 1609587929392839161
	xxPrime4 uint64 = 9650029242287828579
	xxPrime5 uint64 = 2870177450012600261
)

func (x *xxh64) Write(p []byte) (int, error) { x.buf = append(x.buf, p...); return len(p), nil }
func (x *xxh64) Reset()                      { x.buf = x.buf[:0] }
func (x *xxh64) Size() int                   { return 8 }
func (x *xxh64) BlockSize() int              { return 32 }
func (x *xxh64) Sum(b []byte) []byte         { return binary.BigEndian.AppendUint64(b, xxhash64(x.buf)) }

func xxRound(acc, in uint64) uint64 {
	return bits.RotateLeft64(acc+in*xxPrime2, 31) * xxPrime1
}

func xxMerge(acc, v uint64) uint64 {
	return (acc^xxRound(0, v))*xxPrime1 + xxPrime4
}

func xxhash64(b []byte) uint64 {
	n := uint64(len(b))
	var h uint64
	if len(b) >= 32 {
		p1, p2 := xxPrime1, xxPrime2
		v1, v2, v3, v4 := p1+p2, p2, uint64(0), -p1
		for ; len(b) >= 32; b = b[32:] {
			v1 = xxRound(v1, binary.LittleEndian.Uint64(b))
			v2 = xxRound(v2, binary.LittleEndian.Uint64(b[8:]))
			v3 = xxRound(v3, binary.LittleEndian.Uint64(b[16:]))
			v4 = xxRound(v4, binary.LittleEndian.Uint64(b[24:]))
		}
		h = bits.RotateLeft64(v1, 1) + bits.RotateLeft64(v2, 7) + bits.RotateLeft64(v3, 12) + bits.RotateLeft64(v4, 18)
		h = xxMerge(xxMerge(xxMerge(xxMerge(h, v1), v2), v3), v4)
	} else {
		h = xxPrime5
	}
	h += n
	for ; len(b) >= 8; b = b[8:] {
		h = bits.RotateLeft64(h^xxRound(0, binary.LittleEndian.Uint64(b)), 27)*xxPrime1 + xxPrime4
	}
	if len(b) >= 4 {
		h = bits.RotateLeft64(h^uint64(binary.LittleEndian.Uint32(b))*xxPrime1, 23)*xxPrime2 + xxPrime3
		b = b[4:]
	}
	for _, c := range b {
		h = bits.RotateLeft64(h^uint64(c)*xxPrime5, 11) * xxPrime1
	}
	h ^= h >> 33
	h *= xxPrime2
	h ^= h >> 29
	h *= xxPrime3
	h ^= h >> 32
	return h
}

// maxMatchSteps bounds the work of one matches call: the string's length
// times the pattern's compiled size, a bound on what RE2-style matching
// (Go's regexp) does. A short pattern such as a{1000}b compiles to about a
// thousand steps a byte, and took 5 s over a 1 MiB header on the
// development machine; at this bound a call does at most 2,000,000 steps
// (a 1 MiB string with a pattern of 2 steps, a 2 KiB path with one of
// 1,000). A call beyond it fails to evaluate, before it runs.
const maxMatchSteps = 2_000_000

// maxPatternSteps bounds the size of any pattern's program, whatever the
// string: compiling one costs memory in proportion (about 120 bytes
// allocated an instruction, measured, and a 2 KB pattern can expand to
// 2,000,000), which a
// black-box check used to allocate 2.5 GB in one request through patterns
// taken from it, matched against an empty string.
const maxPatternSteps = 20_000

// matchCache holds compiled patterns of up to maxCachedPattern bytes and
// maxCachedSteps instructions (a compiled pattern of 804 instructions
// keeps 43 KB, measured, so the cache holds under 14 MB), each in the
// slot its hash picks, the latest compiled there
// staying: a bounded cache that patterns taken from requests cannot grow,
// and in which the cost tracker finds the pattern the call it charges
// has just compiled. A larger pattern is compiled at each call, and
// charged for it (see costOptions).
var (
	matchCache [256]atomic.Pointer[compiledPattern]
	matchSeed  = maphash.MakeSeed()
)

const (
	maxCachedPattern = 4096
	maxCachedSteps   = 1000
)

type compiledPattern struct {
	pattern string
	re      *regexp.Regexp // nil until a call within the limit compiles it
	steps   int            // the program's size, bounded by progSize
	err     error
}

// maxPatternBytes bounds a pattern: parsing is linear in its length, but
// a longer one is nothing a rule needs.
const maxPatternBytes = 64 << 10

// patternFor returns pattern p, parsed and sized, and compiled when
// compile is true and a string of n-1 bytes against it stays within
// maxMatchSteps. Compiling expands counted repetitions (a{1000} is a
// thousand instructions), so the size is bounded from the parse tree
// first: a black-box check measured 0.7 s and 904 MB to compile a 7 KB
// pattern taken from a request, before the limit refused the call.
func patternFor(p string, n int, compile bool) *compiledPattern {
	slot := &matchCache[maphash.String(matchSeed, p)%uint64(len(matchCache))]
	if c := slot.Load(); c != nil && c.pattern == p {
		return c
	}
	c := &compiledPattern{pattern: p}
	if len(p) > maxPatternBytes {
		c.err = &budgetError{fmt.Sprintf("the pattern is longer than %d bytes", maxPatternBytes)}
		return c
	}
	re, err := syntax.Parse(p, syntax.Perl)
	if err == nil {
		c.steps = progSize(re) + 4
	}
	switch {
	case err != nil:
		c.err = err
	case c.steps > maxPatternSteps:
		c.err = &budgetError{fmt.Sprintf("the pattern is %d steps or more, over the limit of %d", c.steps, maxPatternSteps)}
	case !compile || n*c.steps > maxMatchSteps:
		return c
	default:
		c.re, c.err = regexp.Compile(p)
	}
	if len(p) <= maxCachedPattern && c.steps <= maxCachedSteps {
		slot.Store(c)
	}
	return c
}

// progSize is about the size of re's compiled program, in instructions
// (the whole program has 4 more: a fail, a match and a capture's two),
// saturating just above maxMatchSteps.
func progSize(re *syntax.Regexp) int {
	n := 0
	for _, sub := range re.Sub {
		n += progSize(sub)
	}
	switch re.Op {
	case syntax.OpLiteral:
		n = len(re.Rune)
	case syntax.OpConcat:
	case syntax.OpAlternate:
		n += len(re.Sub) - 1
	case syntax.OpCapture:
		n += 2
	case syntax.OpStar, syntax.OpPlus, syntax.OpQuest:
		n++
	case syntax.OpRepeat:
		// min copies, then max-min optional ones (or a star).
		k := re.Max
		if k < 0 {
			k = re.Min + 1
		}
		if k > 0 && n+1 > maxMatchSteps/k {
			return maxMatchSteps + 1
		}
		n = k*(n+1) - re.Min
	default:
		n = 1
	}
	return min(n, maxMatchSteps+1)
}

// boundedMatch is matches (RE2 syntax, as cel-go's), refused when the
// string's length times the pattern's size exceeds maxMatchSteps.
func boundedMatch(s, p string) ref.Val {
	c := patternFor(p, len(s)+1, true)
	if _, ok := c.err.(*budgetError); ok {
		return overBudget("matches: %v", c.err)
	}
	if c.err != nil {
		return types.NewErr("matches: %s", trunc.String(c.err.Error(), 200))
	}
	if steps := (len(s) + 1) * c.steps; steps > maxMatchSteps {
		return overBudget("matches: a %d-byte string against a pattern of %d steps is %d steps, over the limit of %d", len(s), c.steps, steps, maxMatchSteps)
	}
	return types.Bool(c.re.MatchString(s))
}
