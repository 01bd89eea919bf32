package ratelimit

import (
	"fmt"
	"net"
	"net/http"
	"net/textproto"
	"net/url"
	"reflect"
	"strconv"
	"strings"
	"sync"

	"github.com/google/cel-go/cel"
	"github.com/google/cel-go/common/ast"
	"github.com/google/cel-go/common/types"
	"github.com/google/cel-go/common/types/ref"
	"github.com/google/cel-go/common/types/traits"
	"github.com/google/cel-go/interpreter"
)

// Names of the traffic-policy variables this package provides to CEL.
const (
	varReqHost       = "req.host"
	varReqMethod     = "req.method"
	varReqURL        = "req.url"
	varReqURLPath    = "req.url.path"
	varReqURLQuery   = "req.url.query"
	varReqURLHost    = "req.url.host"
	varReqHeaders    = "req.headers"
	varReqUserAgent  = "req.user_agent"
	varConnClientIP  = "conn.client_ip"
	varConnClientPrt = "conn.client_port"
	varConnServerIP  = "conn.server_ip"
	varConnServerPrt = "conn.server_port"
	varBucketKey     = "actions.ngrok.rate_limit.bucket_key"
	varLimited       = "actions.ngrok.rate_limit.limited"
	varErrorCode     = "actions.ngrok.rate_limit.error.code"
	varErrorMessage  = "actions.ngrok.rate_limit.error.message"
	// varRequest is the hidden handle the request functions receive.
	varRequest = "__acctapi_request"
)

// Limits on the size of an expression, enforced by the parser.
const (
	maxExprBytes     = 4096
	maxExprRecursion = 64
)

var requestType = cel.OpaqueType("acctapi.ratelimit.Request")

// env returns the CEL environment shared by bucket keys and rule
// expressions. It is built once and never modified.
var env = sync.OnceValues(func() (*cel.Env, error) {
	str := cel.StringType
	strList := cel.ListType(str)
	// The request functions are macros that pass the hidden request handle,
	// so their bindings can read the request without a per-request closure.
	// A literal header name is canonicalized at compile time.
	reqMacro := func(name string, canon bool) cel.Macro {
		return cel.GlobalMacro(name, 1, func(eh cel.MacroExprFactory, _ ast.Expr, args []ast.Expr) (ast.Expr, *cel.Error) {
			arg := args[0]
			if canon && arg.Kind() == ast.LiteralKind {
				if s, ok := arg.AsLiteral().(types.String); ok {
					arg = eh.NewLiteral(types.String(textproto.CanonicalMIMEHeaderKey(string(s))))
				}
			}
			return eh.NewCall("__"+name, eh.NewIdent(varRequest), arg), nil
		})
	}
	binding := func(name string, out *cel.Type, fn func(*activation, string) ref.Val) cel.EnvOption {
		return cel.Function("__"+name, cel.Overload("__"+name+"_request_string",
			[]*cel.Type{requestType, str}, out,
			cel.BinaryBinding(func(lhs, rhs ref.Val) ref.Val {
				h, ok := lhs.(requestHandle)
				s, ok2 := rhs.(types.String)
				if !ok || !ok2 {
					return types.NewErr("%s: unexpected arguments", name)
				}
				return fn(h.a, string(s))
			})))
	}
	return cel.NewEnv(
		cel.Variable(varReqHost, str),
		cel.Variable(varReqMethod, str),
		cel.Variable(varReqURL, str),
		cel.Variable(varReqURLPath, str),
		cel.Variable(varReqURLQuery, str),
		cel.Variable(varReqURLHost, str),
		cel.Variable(varReqHeaders, cel.MapType(str, strList)),
		cel.Variable(varReqUserAgent, str),
		cel.Variable(varConnClientIP, str),
		cel.Variable(varConnClientPrt, cel.IntType),
		cel.Variable(varConnServerIP, str),
		cel.Variable(varConnServerPrt, cel.IntType),
		cel.Variable(varBucketKey, str),
		cel.Variable(varLimited, cel.BoolType),
		cel.Variable(varErrorCode, str),
		cel.Variable(varErrorMessage, str),
		cel.Variable(varRequest, requestType),
		cel.Macros(
			reqMacro("getReqHeader", true), reqMacro("hasReqHeader", true),
			reqMacro("getQueryParam", false), reqMacro("hasQueryParam", false),
		),
		binding("getReqHeader", strList, func(a *activation, name string) ref.Val {
			return types.NewStringList(types.DefaultTypeAdapter, a.r.Header.Values(name))
		}),
		binding("hasReqHeader", cel.BoolType, func(a *activation, name string) ref.Val {
			return types.Bool(len(a.r.Header.Values(name)) > 0)
		}),
		binding("getQueryParam", strList, func(a *activation, name string) ref.Val {
			return types.NewStringList(types.DefaultTypeAdapter, a.queryValues()[name])
		}),
		binding("hasQueryParam", cel.BoolType, func(a *activation, name string) ref.Val {
			return types.Bool(a.queryValues().Has(name))
		}),
		cel.ParserExpressionSizeLimit(maxExprBytes),
		cel.ParserRecursionLimit(maxExprRecursion),
	)
})

// compile checks expr and plans it for evaluation. want, when not nil, is
// the required output type.
func compile(expr string, want *cel.Type) (cel.Program, error) {
	p, _, err := compileAST(expr, want)
	return p, err
}

// compileAST is compile that also returns the checked expression.
func compileAST(expr string, want *cel.Type) (cel.Program, *cel.Ast, error) {
	e, err := env()
	if err != nil {
		return nil, nil, err
	}
	checked, iss := e.Compile(expr)
	if err := iss.Err(); err != nil {
		return nil, nil, fmt.Errorf("does not compile: %s", oneLine(err.Error()))
	}
	out := checked.OutputType()
	if want != nil && !want.IsAssignableType(out) && out != cel.DynType {
		return nil, nil, fmt.Errorf("has type %s; want %s", out, want)
	}
	if want == nil && out.Kind() == types.MapKind {
		return nil, nil, fmt.Errorf("has type %s, which cannot be a bucket key", out)
	}
	p, err := e.Program(checked, cel.EvalOptions(cel.OptOptimize))
	return p, checked, err
}

// literalHeader reports whether checked is getReqHeader('<literal>') and
// returns the canonical header name.
func literalHeader(checked *cel.Ast) (string, bool) {
	e := checked.NativeRep().Expr()
	if e.Kind() != ast.CallKind {
		return "", false
	}
	c := e.AsCall()
	if c.FunctionName() != "__getReqHeader" || len(c.Args()) != 2 || c.Args()[1].Kind() != ast.LiteralKind {
		return "", false
	}
	s, ok := c.Args()[1].AsLiteral().(types.String)
	return string(s), ok
}

func oneLine(s string) string {
	s = strings.TrimPrefix(s, "ERROR: <input>:")
	return strings.Join(strings.Fields(s), " ")
}

// requestHandle is the CEL value of the hidden request variable.
type requestHandle struct{ a *activation }

func (h requestHandle) ConvertToNative(reflect.Type) (any, error) {
	return nil, fmt.Errorf("ratelimit: the request has no native form")
}
func (h requestHandle) ConvertToType(ref.Type) ref.Val { return types.NewErr("no conversion") }
func (h requestHandle) Equal(o ref.Val) ref.Val        { return types.Bool(o == ref.Val(h)) }
func (h requestHandle) Type() ref.Type                 { return requestType }
func (h requestHandle) Value() any                     { return h.a }

// actionVars are the rate-limit action's result variables.
type actionVars struct {
	bucketKey, errCode, errMessage string
	limited                        bool
}

// activation resolves the traffic-policy variables for one request. It is
// reused through a pool, so evaluating needs no map per request; values
// that cost something to compute are computed on first use.
type activation struct {
	r        *http.Request
	clientIP func(*http.Request) string
	vars     actionVars

	ip, port  string
	ipDone    bool
	query     url.Values
	queryDone bool
	headers   ref.Val
	local     net.Addr
	localDone bool
	self      requestHandle
}

var _ interpreter.Activation = (*activation)(nil)

func (a *activation) reset(r *http.Request, clientIP func(*http.Request) string) {
	*a = activation{r: r, clientIP: clientIP}
	a.self = requestHandle{a}
}

// ResolveName implements interpreter.Activation.
func (a *activation) ResolveName(name string) (any, bool) {
	if s, ok := a.stringVar(name); ok {
		return types.String(s), true
	}
	switch name {
	case varReqHeaders:
		return a.headerMap(), true
	case varConnClientPrt:
		a.clientIPValue()
		p, _ := strconv.Atoi(a.port)
		return types.Int(p), true
	case varConnServerPrt:
		_, port := a.serverAddr()
		p, _ := strconv.Atoi(port)
		return types.Int(p), true
	case varLimited:
		return types.Bool(a.vars.limited), true
	case varRequest:
		return a.self, true
	}
	return nil, false
}

// isStringVar reports whether name is a variable of type string.
func isStringVar(name string) bool {
	var a activation
	a.reset(&http.Request{URL: &url.URL{}}, nil)
	_, ok := a.stringVar(name)
	return ok
}

// stringVar returns the value of the string variable name.
func (a *activation) stringVar(name string) (string, bool) {
	r := a.r
	switch name {
	case varReqHost:
		return r.Host, true
	case varReqMethod:
		return r.Method, true
	case varReqURL:
		return a.fullURL(), true
	case varReqURLPath:
		return r.URL.Path, true
	case varReqURLQuery:
		return r.URL.RawQuery, true
	case varReqURLHost:
		return a.urlHost(), true
	case varReqUserAgent:
		return r.UserAgent(), true
	case varConnClientIP:
		return a.clientIPValue(), true
	case varConnServerIP:
		host, _ := a.serverAddr()
		return host, true
	case varBucketKey:
		return a.vars.bucketKey, true
	case varErrorCode:
		return a.vars.errCode, true
	case varErrorMessage:
		return a.vars.errMessage, true
	}
	return "", false
}

// Parent implements interpreter.Activation.
func (a *activation) Parent() interpreter.Activation { return nil }

func (a *activation) urlHost() string {
	if a.r.URL.Host != "" {
		return a.r.URL.Host
	}
	return a.r.Host
}

func (a *activation) fullURL() string {
	u := *a.r.URL
	if u.Host == "" {
		u.Host = a.r.Host
	}
	if u.Scheme == "" {
		u.Scheme = "http"
		if a.r.TLS != nil {
			u.Scheme = "https"
		}
	}
	return u.String()
}

func (a *activation) clientIPValue() string {
	if !a.ipDone {
		a.ipDone = true
		a.ip, a.port = splitHostPort(a.r.RemoteAddr)
		if a.clientIP != nil {
			a.ip = a.clientIP(a.r)
		}
	}
	return a.ip
}

func (a *activation) serverAddr() (string, string) {
	if !a.localDone {
		a.localDone = true
		a.local, _ = a.r.Context().Value(http.LocalAddrContextKey).(net.Addr)
	}
	if a.local == nil {
		return "", ""
	}
	return splitHostPort(a.local.String())
}

func splitHostPort(addr string) (string, string) {
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return addr, ""
	}
	return host, port
}

func (a *activation) queryValues() url.Values {
	if !a.queryDone {
		a.queryDone = true
		a.query, _ = url.ParseQuery(a.r.URL.RawQuery)
	}
	return a.query
}

// headerMap returns req.headers: lower-case names to lists of values.
func (a *activation) headerMap() ref.Val {
	if a.headers == nil {
		m := make(map[string][]string, len(a.r.Header))
		for k, v := range a.r.Header {
			m[strings.ToLower(k)] = v
		}
		a.headers = types.NewDynamicMap(types.DefaultTypeAdapter, m)
	}
	return a.headers
}

// keyString turns a bucket-key value into its part of the key, following
// the contract (§7): a list joins its elements' forms with ","; null is "";
// anything else uses its CEL string form. It fails for values with no
// string form (maps, for example).
func keyString(v ref.Val) (string, error) {
	switch v := v.(type) {
	case types.String:
		return string(v), nil
	case types.Null:
		return "", nil
	case traits.Lister:
		var b strings.Builder
		it := v.Iterator()
		for i := 0; it.HasNext() == types.True; i++ {
			s, err := keyString(it.Next())
			if err != nil {
				return "", err
			}
			if i > 0 {
				b.WriteByte(',')
			}
			b.WriteString(s)
		}
		return b.String(), nil
	}
	s := v.ConvertToType(types.StringType)
	if str, ok := s.(types.String); ok {
		return string(str), nil
	}
	return "", fmt.Errorf("a value of type %s has no string form", v.Type().TypeName())
}
