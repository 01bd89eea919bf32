package fake

import (
	"net/http"
	"net/textproto"
	"slices"
	"strings"

	"github.com/acctapi/acctapi"
	"github.com/acctapi/acctapi/events"
	"github.com/acctapi/acctapi/internal/resources"
)

// requestDialect is the wire dialect a request speaks: the real service's
// when it names the version only under the real service's header name,
// Ngrok-Version (as the real service's own clients, and an acctapi.Client
// of acctapi.DialectReal, do), the specification's otherwise (with
// Service-Version, or with no version header at all). h's names are
// canonical (see canonicalHeader).
func requestDialect(h http.Header) acctapi.Dialect {
	if h.Get("Ngrok-Version") != "" && h.Get("Service-Version") == "" {
		return acctapi.DialectReal
	}
	return acctapi.DialectSpec
}

// canonicalHeader returns r, or when some of its header names are not
// canonical ("ngrok-version"), a shallow copy of r whose header has them
// canonical, as net/http's server makes the names it reads from a
// connection: header names match in any letter case, also for a request
// handed to the in-memory transport or to Handler as its maker wrote it.
func canonicalHeader(r *http.Request) *http.Request {
	for k := range r.Header {
		if k != textproto.CanonicalMIMEHeaderKey(k) {
			h := make(http.Header, len(r.Header))
			for k, vs := range r.Header {
				ck := textproto.CanonicalMIMEHeaderKey(k)
				h[ck] = append(h[ck], vs...)
			}
			r2 := *r
			r2.Header = h
			return &r2
		}
	}
	return r
}

// canonicalPath returns r with its path in the normal form
// resources.NormalPath writes: routing, faults, messages and the uris the
// fake answers with then see "/service%5Fusers" as the "/service_users"
// it is (the journal keeps the path as sent).
func canonicalPath(r *http.Request) *http.Request {
	escaped := r.URL.EscapedPath() // its escapes are valid
	canon := resources.NormalPath(escaped)
	if canon == escaped {
		return r
	}
	// Normal escapes unescape to the same path: only RawPath changes.
	u := *r.URL
	u.RawPath = canon
	r2 := *r
	r2.URL = &u
	return &r2
}

// beforeIDAlias is the real service's TypeScript client's name for
// before_id (its Paging type is camel case and sent as the query as is);
// the fake accepts it in the real service's dialect.
const beforeIDAlias = "beforeId"

// queryFor returns the query parameters a route accepts in dialect d:
// allowed, and in the real service's dialect beforeId beside before_id.
func queryFor(allowed []string, d acctapi.Dialect) []string {
	if d != acctapi.DialectReal || !slices.Contains(allowed, "before_id") {
		return allowed
	}
	return append(slices.Clip(allowed), beforeIDAlias)
}

// in returns e as a client of dialect d reads it: in the real service's
// dialect, the field path it names and the paths and event-target names
// in its message are the real service's (events.TranslateField).
func (e *apiError) in(d acctapi.Dialect) *apiError {
	if d != acctapi.DialectReal {
		return e
	}
	out := *e
	if e.field != "" {
		out.field = events.TranslateField(e.field, d)
	}
	switch {
	case len(e.fields) > 0:
		out.msg = validationMessage(e.fields, d) // each reason about a target renamed there
	case out.field != e.field:
		// The message names the path, now the real one; renaming more
		// would rewrite parts of member names the client sent.
		out.msg = strings.ReplaceAll(e.msg, e.field, out.field)
	case strings.HasPrefix(e.field, "target"):
		out.msg = events.TranslateReason(e.field, e.msg, d)
	}
	return &out
}
