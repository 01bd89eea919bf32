package fake

import (
	"net/url"
	"sort"
	"strings"
)

// handler serves one method of one route. It returns the status and the
// value to encode as the JSON body (nil for none), or an error.
type handler func(c *call) (int, any, error)

// route is one path pattern and the methods it serves.
type route struct {
	segs    []string // literal segments, or "" for a parameter
	params  []string // parameter names, in order
	methods map[string]handler
	query   map[string][]string // allowed query parameters per method
	// successor, when set, marks a deprecated alias (the bot-user paths),
	// answered with Deprecation and a Link header pointing at successor.
	successor string
}

// router matches escaped request paths against routes.
type router struct {
	routes []*route
}

// handle adds a handler for method on pattern, where "{name}" segments are
// parameters ("/service_users/{id}"). query lists the query parameters the
// method accepts.
func (rt *router) handle(method, pattern string, query []string, h handler) *route {
	segs, params := parsePattern(pattern)
	if len(params) > maxParams || len(segs) > maxSegments {
		panic("fake: route " + pattern + " has more parameters or segments than match handles") // a programming error, caught by every test
	}
	for _, r := range rt.routes {
		if equalSegs(r.segs, segs) {
			r.methods[method] = h
			r.query[method] = query
			return r
		}
	}
	r := &route{segs: segs, params: params, methods: map[string]handler{method: h}, query: map[string][]string{method: query}}
	rt.routes = append(rt.routes, r)
	return r
}

func parsePattern(p string) (segs, params []string) {
	for _, s := range strings.Split(strings.Trim(p, "/"), "/") {
		if strings.HasPrefix(s, "{") {
			segs = append(segs, "")
			params = append(params, strings.Trim(s, "{}"))
		} else {
			segs = append(segs, s)
		}
	}
	return segs, params
}

func equalSegs(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// maxParams and maxSegments bound a route's parameters and segments.
const (
	maxParams   = 2
	maxSegments = 8
)

// pathParams are a matched route's parameters, unescaped.
type pathParams struct {
	names  []string
	values [maxParams]string
}

// get returns the parameter name, or "".
func (p pathParams) get(name string) string {
	for i, n := range p.names {
		if n == name {
			return p.values[i]
		}
	}
	return ""
}

// match finds the route for an escaped path and returns its parameters,
// unescaped. Literal segments win over parameters; a path is matched only
// as the API spells it, so a trailing slash or an empty segment matches
// nothing. It allocates only to unescape a segment that holds an escape.
func (rt *router) match(escaped string) (*route, pathParams) {
	if len(escaped) < 2 || escaped[0] != '/' || escaped[len(escaped)-1] == '/' {
		return nil, pathParams{}
	}
	var buf [maxSegments]string
	segs := buf[:0]
	for rest := escaped[1:]; ; {
		seg, tail, more := strings.Cut(rest, "/")
		if len(segs) == maxSegments {
			return nil, pathParams{} // longer than any route
		}
		u, err := url.PathUnescape(seg)
		if err != nil || u == "" {
			return nil, pathParams{}
		}
		segs = append(segs, u)
		if !more {
			break
		}
		rest = tail
	}
	var best *route
	bestLiterals := -1
	for _, r := range rt.routes {
		if len(r.segs) != len(segs) {
			continue
		}
		literals, ok := 0, true
		for i, s := range r.segs {
			if s == "" {
				continue
			}
			if s != segs[i] {
				ok = false
				break
			}
			literals++
		}
		if ok && literals > bestLiterals {
			best, bestLiterals = r, literals
		}
	}
	if best == nil {
		return nil, pathParams{}
	}
	p := pathParams{names: best.params}
	j := 0
	for i, s := range best.segs {
		if s == "" {
			p.values[j] = segs[i]
			j++
		}
	}
	return best, p
}

// allow returns the route's methods for an Allow header.
func (r *route) allow() string {
	ms := make([]string, 0, len(r.methods))
	for m := range r.methods {
		ms = append(ms, m)
	}
	sort.Strings(ms)
	return strings.Join(ms, ", ")
}
