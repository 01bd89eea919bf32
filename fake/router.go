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
	// deprecated marks the bot-user alias, answered with Deprecation and
	// Link headers pointing at successor.
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

// match finds the route for an escaped path and returns its parameters,
// unescaped. Literal segments win over parameters.
func (rt *router) match(escaped string) (*route, map[string]string) {
	raw := strings.Split(strings.Trim(escaped, "/"), "/")
	segs := make([]string, len(raw))
	for i, s := range raw {
		u, err := url.PathUnescape(s)
		if err != nil || u == "" {
			return nil, nil
		}
		segs[i] = u
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
		return nil, nil
	}
	params := make(map[string]string, len(best.params))
	j := 0
	for i, s := range best.segs {
		if s == "" {
			params[best.params[j]] = segs[i]
			j++
		}
	}
	return best, params
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
