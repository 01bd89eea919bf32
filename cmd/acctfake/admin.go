package main

import (
	"bytes"
	"cmp"
	"crypto/subtle"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"net/http"
	"net/http/httptest"
	"net/url"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/acctapi/acctapi"
	"github.com/acctapi/acctapi/fake"
	"github.com/acctapi/acctapi/internal/field"
	"github.com/acctapi/acctapi/internal/iox"
	"github.com/acctapi/acctapi/internal/trunc"
)

// admin is the admin API under /_acctfake/ (the package doc lists its
// requests): the fake's Go API over HTTP, authenticated with its own token.
// Each request maps onto a method of [fake.Server] (or its
// [fake.ManualClock]); what the Go API does not keep — which faults the
// admin API added, the snapshots it took — the admin keeps here.
type admin struct {
	srv    *fake.Server
	token  string
	clock  *fake.ManualClock // nil: the real clock
	start  *fake.Snapshot    // the state at start, fixtures loaded, for reset
	routes []adminRoute
	ids    adminIDs // its operation ids, apart from the fake's
	// publicURL is -public-url without a trailing slash, "" for none:
	// the base of the journal's uris, as of the API's.
	publicURL string

	mu        sync.Mutex // guards what follows; taken before the fake's own locks
	faults    []*adminFault
	snapshots []*adminSnapshot
	nextID    int
}

// adminRoute is one path of the admin API: its segments after
// /_acctfake/, "{id}" matching any one segment, and its methods.
type adminRoute struct {
	segs    []string
	methods map[string]adminOp
}

// adminOp is one method of an admin route: its handler, the query
// parameters it takes (none unless listed) and whether it takes a body.
// Anything else in a request is refused before the handler runs, so a
// mistake (DELETE /faults?id=flt_1, which would remove every fault) is a
// 400, not a different operation.
type adminOp struct {
	h     adminHandler
	query []string
	body  bool
}

// adminHandler serves one request; id is the path's {id} segment, if any.
// It returns the status and the value to answer in JSON (nil for no body),
// or an error: an *adminError, or one from a response it forwards.
type adminHandler func(r *http.Request, id string) (int, any, error)

// adminError is an answer in the contract's error body.
type adminError struct {
	status      int
	code, field string
	msg         string
}

func (e *adminError) Error() string { return e.msg }

func invalid(field, format string, args ...any) *adminError {
	return &adminError{status: http.StatusBadRequest, code: acctapi.CodeInvalidValue, field: field, msg: fmt.Sprintf(format, args...)}
}

func notFound(what, id string) *adminError {
	return &adminError{status: http.StatusNotFound, code: acctapi.CodeNotFound, msg: fmt.Sprintf("No %s %q.", what, trunc.String(id, 64))}
}

// newAdmin returns the admin API of srv, whose state at this moment is what
// reset returns to; clock is the server's manual clock, or nil.
func newAdmin(srv *fake.Server, token string, clock *fake.ManualClock) *admin {
	a := &admin{srv: srv, token: token, clock: clock, start: srv.Snapshot()}
	route := func(p string, methods map[string]adminOp) {
		a.routes = append(a.routes, adminRoute{segs: strings.Split(p, "/"), methods: methods})
	}
	route("health", map[string]adminOp{"GET": {h: a.health}})
	route("journal", map[string]adminOp{"GET": {h: a.journal, query: []string{"before_id", "limit", "method", "path", "status"}},
		"DELETE": {h: a.clearJournal}})
	route("faults", map[string]adminOp{"GET": {h: a.listFaults}, "POST": {h: a.addFault, body: true}, "DELETE": {h: a.removeFaults}})
	route("faults/{id}", map[string]adminOp{"DELETE": {h: a.removeFault}})
	route("clock", map[string]adminOp{"GET": {h: a.getClock}, "PUT": {h: a.setClock, body: true}})
	route("clock/advance", map[string]adminOp{"POST": {h: a.advanceClock, body: true}})
	route("snapshots", map[string]adminOp{"GET": {h: a.listSnapshots}, "POST": {h: a.takeSnapshot}})
	route("snapshots/{id}", map[string]adminOp{"DELETE": {h: a.deleteSnapshot}})
	route("snapshots/{id}/restore", map[string]adminOp{"POST": {h: a.restoreSnapshot}})
	route("reset", map[string]adminOp{"POST": {h: a.reset}})
	route("accounts", map[string]adminOp{"GET": {h: a.listAccounts}, "POST": {h: a.addAccount, body: true}})
	route("accounts/{id}/api_keys", map[string]adminOp{"POST": {h: a.addAPIKey, body: true}})
	return a
}

// ServeHTTP serves the admin API: authentication (except for health), then
// routing, then the handler. Every error is the contract's error body.
func (a *admin) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	opID := a.opID(r)
	rest, _ := strings.CutPrefix(r.URL.Path, adminPrefix) // "/_acctfake" alone: the whole path, which no route has
	if rest != "health" {
		if err := a.authenticate(r); err != nil {
			answer(w, opID, 0, nil, err)
			return
		}
	}
	op, id, err := a.match(r.Method, rest)
	if err != nil {
		if ae, ok := err.(*adminError); ok && ae.status == http.StatusMethodNotAllowed {
			w.Header().Set("Allow", ae.field)
			ae.field = ""
		}
		answer(w, opID, 0, nil, err)
		return
	}
	if _, err := checkQuery(r, op.query...); err != nil {
		answer(w, opID, 0, nil, err)
		return
	}
	if !op.body {
		// A body where the operation takes none is read as the API reads
		// one on GET and DELETE: empty, {} or null.
		if err := a.decodeBody(r, &struct{}{}); err != nil {
			answer(w, opID, 0, nil, err)
			return
		}
	}
	status, out, err := op.h(r, id)
	answer(w, opID, status, out, err)
}

// authenticate checks the admin token, with the API's error codes.
func (a *admin) authenticate(r *http.Request) error {
	// As the API reads it (iox.BearerToken): an empty header is one that
	// could not be parsed, not a missing one.
	token, fault := iox.BearerToken(r.Header)
	switch fault {
	case iox.AuthMany:
		return &adminError{status: http.StatusUnauthorized, code: acctapi.CodeBadAuthorization,
			msg: fmt.Sprintf(`The request has %d Authorization headers; send one, "Authorization: Bearer <admin token>".`, len(r.Header.Values("Authorization")))}
	case iox.AuthMissing:
		return &adminError{status: http.StatusUnauthorized, code: acctapi.CodeNoAuthorization,
			msg: `The admin API requires "Authorization: Bearer <admin token>"; acctfake prints the token at start.`}
	case iox.AuthMalformed:
		return &adminError{status: http.StatusUnauthorized, code: acctapi.CodeBadAuthorization,
			msg: `The Authorization header could not be parsed; use "Bearer <admin token>".`}
	}
	if subtle.ConstantTimeCompare([]byte(token), []byte(a.token)) != 1 {
		return &adminError{status: http.StatusUnauthorized, code: acctapi.CodeInvalidToken,
			msg: "The admin token is not this server's (an API key is not an admin token)."}
	}
	return nil
}

// match finds the handler for method on rest, the path after /_acctfake/.
// A 405's error carries the Allow header's value in its field.
func (a *admin) match(method, rest string) (adminOp, string, error) {
	segs := strings.Split(rest, "/")
	for _, rt := range a.routes {
		if len(rt.segs) != len(segs) {
			continue
		}
		id, ok := "", true
		for i, s := range rt.segs {
			if s == "{id}" && segs[i] != "" {
				id = segs[i]
			} else if s != segs[i] {
				ok = false
				break
			}
		}
		if !ok {
			continue
		}
		if op, ok := rt.methods[method]; ok {
			return op, id, nil
		}
		allow := slices.Sorted(maps.Keys(rt.methods))
		return adminOp{}, "", &adminError{status: http.StatusMethodNotAllowed, code: acctapi.CodeMethodNotAllowed, field: strings.Join(allow, ", "),
			msg: fmt.Sprintf("Method %s is not allowed on %s.", trunc.String(method, 16), trunc.String(adminPath(rest), 128))}
	}
	return adminOp{}, "", &adminError{status: http.StatusNotFound, code: acctapi.CodeNoRoute,
		msg: fmt.Sprintf("No admin API path %s.", trunc.String(adminPath(rest), 128))}
}

// adminPath is the request's path whose part after adminPrefix is rest,
// or the whole path when it lacks the prefix (a request for /_acctfake).
func adminPath(rest string) string {
	if strings.HasPrefix(rest, "/") {
		return rest
	}
	return adminPrefix + rest
}

// opID is the operation id the front end gave r, or a new one of the
// admin API's own.
func (a *admin) opID(r *http.Request) string {
	if id, ok := r.Context().Value(opIDKey{}).(string); ok {
		return id
	}
	return a.ids.next()
}

// answer writes a handler's result: out in JSON with status, or err in the
// contract's error body with operation id opID. A *forwarded error is
// written as it came.
func answer(w http.ResponseWriter, opID string, status int, out any, err error) {
	var fw *forwarded
	var ae *adminError
	switch {
	case errors.As(err, &fw):
		if fw.opID != "" {
			w.Header().Set("Operation-Id", fw.opID)
			w.Header().Set("Ngrok-Operation-Id", fw.opID)
		}
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(fw.status)
		_, _ = w.Write(fw.body)
		return
	case errors.As(err, &ae):
		writeError(w, opID, ae.status, ae.code, ae.field, ae.msg)
		return
	case err != nil:
		writeError(w, opID, http.StatusInternalServerError, acctapi.CodeInternal, "", "internal error: "+err.Error())
		return
	}
	if out == nil {
		w.WriteHeader(status)
		return
	}
	raw, err := json.Marshal(out)
	if err != nil {
		writeError(w, opID, http.StatusInternalServerError, acctapi.CodeInternal, "", "internal error: encoding the answer")
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_, _ = w.Write(raw)
}

// decodeBody reads a JSON request body into v as the account API reads
// its bodies ([fake.Server.DecodeBody]: content type, size, unknown,
// miscased and repeated members, JSON types, trailing data), with its
// errors. An empty body leaves v as it is.
func (a *admin) decodeBody(r *http.Request, v any) error {
	err := a.srv.DecodeBody(r, v)
	var e *acctapi.Error
	if errors.As(err, &e) {
		return &adminError{status: e.StatusCode, code: e.ErrorCode, field: e.Details["field"], msg: e.Msg}
	}
	return err
}

// checkQuery refuses query parameters other than allowed, and repeated
// ones, as the API does, and returns the parameters.
func checkQuery(r *http.Request, allowed ...string) (url.Values, error) {
	q, err := url.ParseQuery(r.URL.RawQuery)
	if err != nil {
		return nil, &adminError{status: http.StatusBadRequest, code: acctapi.CodeBadQuery, msg: "The query string could not be parsed: " + trunc.String(err.Error(), 128) + "."}
	}
	for _, k := range slices.Sorted(maps.Keys(q)) {
		if !slices.Contains(allowed, k) {
			supported := "this path and method take no query parameters"
			if len(allowed) > 0 {
				supported = "supported: " + strings.Join(allowed, ", ")
			}
			return nil, &adminError{status: http.StatusBadRequest, code: acctapi.CodeUnknownQueryParam, field: trunc.String(k, 64),
				msg: fmt.Sprintf("Unknown query parameter %q; %s.", trunc.String(k, 64), supported)}
		}
		if len(q[k]) > 1 {
			return nil, &adminError{status: http.StatusBadRequest, code: acctapi.CodeRepeatedQueryParam, field: k,
				msg: fmt.Sprintf("The query parameter %q is given more than once.", k)}
		}
	}
	return q, nil
}

// baseURL is the scheme and host a request reached.
func baseURL(r *http.Request) string {
	scheme := "http"
	if r.TLS != nil {
		scheme = "https"
	}
	return scheme + "://" + r.Host
}

func (a *admin) health(*http.Request, string) (int, any, error) {
	return http.StatusOK, map[string]string{"status": "ok"}, nil
}

// journalEntry is a fake.Entry in the admin API's JSON; its id is the
// request's operation id.
type journalEntry struct {
	ID           string    `json:"id"`
	Time         time.Time `json:"time"`
	Method       string    `json:"method"`
	Path         string    `json:"path"`
	Query        string    `json:"query"`
	Status       int       `json:"status"`
	RequestBody  string    `json:"request_body"`
	ResponseBody string    `json:"response_body"`
	Dropped      bool      `json:"dropped"`
}

// journalPage is a page of the journal, shaped like the API's lists.
type journalPage struct {
	Entries     []journalEntry `json:"entries"`
	URI         string         `json:"uri"`
	NextPageURI *string        `json:"next_page_uri"`
}

// journal serves a page of Server.JournalBefore: newest first, filtered
// by method, path (a pattern as faults take) and status (each refused when
// given empty), paged with limit
// (1 to 100, default 100) and before_id (an entry's id: the entries older
// than it; none when it is no longer in the journal, since older entries
// leave first; refused when no entry has it and no entry that left could
// have, Server.JournalLeft).
func (a *admin) journal(r *http.Request, _ string) (int, any, error) {
	q := r.URL.Query() // checked against the route's parameters
	// A filter given empty is refused, as a fault's empty path is: it
	// would otherwise read as "any", and an unset variable in a test would
	// match every request. (An empty limit is no integer from 1 to 100.)
	for _, k := range []string{"before_id", "method", "path", "status"} {
		if v, ok := q[k]; ok && v[0] == "" {
			return 0, nil, invalid(k, "%s is empty; leave it out to take entries of any %s.", k, strings.ReplaceAll(k, "_", " "))
		}
	}
	limit := acctapi.MaxLimit
	if v, ok := q["limit"]; ok {
		// Digits only, as the API's lists read their limit: "+5" is no
		// integer here.
		n, err := field.ParseQueryInt(v[0])
		if err != nil || n < 1 || n > acctapi.MaxLimit {
			return 0, nil, &adminError{status: http.StatusBadRequest, code: acctapi.CodeBadLimit, field: "limit",
				msg: fmt.Sprintf("limit %q is not an integer from 1 to 100.", trunc.String(v[0], 32))}
		}
		limit = n
	}
	// A filter that could match nothing is refused, as a fault's target
	// is: an assertion that no such request happened must not pass
	// because of a typo.
	method, pattern := q.Get("method"), q.Get("path")
	if err := a.checkTarget(method, cmp.Or(pattern, "/**")); err != nil {
		// The journal also records requests the fake does not route (its
		// 404s and 405s); status finds them.
		// Here an empty method is refused (see above): "*", or none, is any.
		err.msg = strings.Replace(err.msg, `or "" or "*" for any`, `or "*" for any (or leave method out)`, 1)
		err.msg = strings.TrimSuffix(err.msg, ".") + "; requests to other paths or with other methods are found by status (404, 405)."
		return 0, nil, err
	}
	// The Go API's filter. It sees entries before their bodies are
	// redacted, so that an entry it passes over costs a few comparisons
	// and the path's match, and the journal seeks to before_id: a page
	// costs what it holds and what the filter passes over, never the
	// journal's length. Its method and path are checked above, so its
	// error is the status's, whose rule is the fake's.
	status, badStatus := fake.AnyStatus, false
	if v, ok := q["status"]; ok {
		// Digits only, as limit; 0 is a request dropped unanswered.
		n, err := field.ParseQueryInt(v[0])
		status, badStatus = n, err != nil
		if n == 0 {
			status = fake.DroppedStatus
		}
	}
	filter, ferr := a.srv.JournalFilter(method, cmp.Or(pattern, "/**"), status)
	if badStatus || ferr != nil {
		return 0, nil, invalid("status", "status %q is not an HTTP status from 100 to 599, or 0 for a request dropped unanswered.", trunc.String(q.Get("status"), 32))
	}
	beforeID := q.Get("before_id")
	if beforeID != "" && !opIDForm.MatchString(beforeID) {
		return 0, nil, invalid("before_id", "before_id %q is not an entry's id (op_ and 27 letters or digits).", trunc.String(beforeID, 64))
	}
	entries, found := a.srv.JournalBefore(beforeID, filter.Match)
	// An id no entry has: one that left the journal has nothing older
	// kept; any other is refused, so that a cursor with a typo does not
	// read as "no such requests".
	if !found && !a.srv.JournalLeft(beforeID) {
		return 0, nil, invalid("before_id", "before_id %q is no entry's id: no entry in the journal has it, and no entry that left the journal could have had it.", beforeID)
	}
	page := journalPage{Entries: []journalEntry{}, URI: cmp.Or(a.publicURL, baseURL(r)) + adminPrefix + "journal"}
	size := 0 // the page's entries' JSON, as the answer writes it
	for e := range entries {
		je := journalEntry{ID: e.OperationID, Time: e.Time, Method: e.Method, Path: e.Path,
			Query: e.Query, Status: e.Status, RequestBody: e.RequestBody, ResponseBody: e.ResponseBody, Dropped: e.Dropped}
		// A page also ends where its entries' JSON would pass
		// fake.MaxPageBytes, as the API's lists do: a kept body of 64 KiB
		// of "<" or control bytes is six times that in JSON.
		b, err := json.Marshal(je)
		if err != nil {
			return 0, nil, err
		}
		if n := len(page.Entries); n == limit || n > 0 && size+len(b) > fake.MaxPageBytes {
			next := url.Values{"before_id": {page.Entries[n-1].ID}, "limit": {strconv.Itoa(limit)}}
			for _, k := range []string{"method", "path", "status"} {
				if v, ok := q[k]; ok {
					next[k] = v
				}
			}
			u := page.URI + "?" + next.Encode()
			page.NextPageURI = &u
			break
		}
		size += len(b)
		page.Entries = append(page.Entries, je)
	}
	return http.StatusOK, page, nil
}

// opIDForm is the form of an operation id, a journal entry's id.
var opIDForm = regexp.MustCompile(`^op_[0-9A-Za-z]{27}$`)

// checkTarget refuses, naming the member at fault, a method and path
// pattern no request to the fake could match (see [fake.Server.CheckTarget]):
// a method it does not serve, in upper case, or a malformed pattern or one
// that matches no path it serves.
func (a *admin) checkTarget(method, pattern string) *adminError {
	if err := a.srv.CheckTarget(method, "/**"); err != nil {
		return invalid("method", "%.200v.", strings.TrimPrefix(err.Error(), "fake: "))
	}
	if err := a.srv.CheckTarget(method, pattern); err != nil {
		return invalid("path", "%.200v.", strings.TrimPrefix(err.Error(), "fake: "))
	}
	return nil
}

func (a *admin) clearJournal(*http.Request, string) (int, any, error) {
	a.srv.ClearJournal()
	return http.StatusNoContent, nil, nil
}

// faultSpec is a fault as the admin API takes it: which requests, how many
// times, and what happens to them (a [fake.Fault]).
type faultSpec struct {
	// Method is the requests' method; "" or "*" for any.
	Method string `json:"method"`
	// Path is a [fake.Server.React] pattern, such as "/service_users/*".
	Path string `json:"path"`
	// Times is how many matching requests the fault takes, 1 or more;
	// absent (null) is every one until the fault is removed.
	Times *int `json:"times,omitempty"`
	// Status answers with this status (400 to 599) and the contract's error
	// body, ErrorCode and Msg when given (see fake.Fault.Validate).
	Status    int    `json:"status,omitempty"`
	ErrorCode string `json:"error_code,omitempty"`
	Msg       string `json:"msg,omitempty"`
	// RetryAfter is the Retry-After header's seconds; a 429 has at least 1.
	RetryAfter int `json:"retry_after,omitempty"`
	// Latency delays the request first: a Go duration such as "1.5s".
	Latency string `json:"latency,omitempty"`
	// Drop closes the connection instead of answering: "before" the
	// request takes effect, or "after" it did.
	Drop string `json:"drop,omitempty"`
}

// adminFault is a fault the admin API added.
type adminFault struct {
	ID string `json:"id"`
	faultSpec
	// Remaining is how many more requests it takes; null for no limit.
	Remaining *int `json:"remaining"`
	// Hits is how many requests it has taken.
	Hits   int `json:"hits"`
	remove func()
}

// fault checks spec, but for its target (see admin.checkTarget), and
// returns the [fake.Fault] it describes.
func (spec *faultSpec) fault() (*fake.Fault, error) {
	if spec.Times != nil && *spec.Times < 1 {
		return nil, invalid("times", "times %d: want 1 or more, or no times for a fault until it is removed.", *spec.Times)
	}
	if spec.RetryAfter < 0 {
		return nil, invalid("retry_after", "retry_after %d: want whole seconds, 0 or more.", spec.RetryAfter)
	}
	// What a fault keeps is bounded, as their number is, so that the
	// faults and their list stay small (path: fake.MaxPatternBytes).
	for _, m := range []struct {
		name, v string
		most    int
	}{{"error_code", spec.ErrorCode, maxFaultCode}, {"msg", spec.Msg, maxFaultMsg}} {
		if len(m.v) > m.most {
			return nil, invalid(m.name, "%s is %d bytes long; a fault's %s is at most %d.", m.name, len(m.v), m.name, m.most)
		}
	}
	f := &fake.Fault{Status: spec.Status, Code: spec.ErrorCode, Msg: spec.Msg}
	if spec.Status == http.StatusTooManyRequests {
		spec.RetryAfter = max(spec.RetryAfter, 1)
	}
	if spec.RetryAfter > 0 {
		f.Header = http.Header{"Retry-After": {strconv.Itoa(spec.RetryAfter)}}
	}
	if spec.Latency != "" {
		d, bad := parseDuration("latency", spec.Latency, `"250ms" or "2s"`)
		if bad != nil {
			return nil, bad
		}
		if d < 0 {
			return nil, invalid("latency", "latency %q is negative; a latency is 0 or more.", trunc.String(spec.Latency, 32))
		}
		f.Delay = d
	}
	switch spec.Drop {
	case "":
	case "before":
		f.Drop = true
	case "after":
		f.DropAfter = true
	default:
		return nil, invalid("drop", `drop %q: want "before" or "after".`, trunc.String(spec.Drop, 16))
	}
	// The rules across members are the Go API's (fake.Fault.Validate),
	// named by the members here.
	var fe *acctapi.FieldError
	if err := f.Validate(); errors.As(err, &fe) {
		name := faultMembers[fe.Field]
		return nil, invalid(name, "%s %s.", name, strings.NewReplacer("Status", "status", "Code", "error_code", "Msg", "msg",
			"Header", "retry_after", "Delay", "latency", "DropAfter", `drop "after"`, "Drop", `drop "before"`).Replace(fe.Reason))
	} else if err != nil {
		return nil, err
	}
	return f, nil
}

// maxFaultCode and maxFaultMsg bound a fault's error_code and msg, in
// bytes.
const (
	maxFaultCode = 64
	maxFaultMsg  = 1024
)

// faultMembers names a fake.Fault's fields as the admin API's members.
var faultMembers = map[string]string{"Status": "status", "Code": "error_code", "Msg": "msg", "Header": "retry_after",
	"Delay": "latency", "Drop": "drop", "DropAfter": "drop"}

// addFault adds a fault with Server.React. A fault with times removes
// itself after that many requests.
func (a *admin) addFault(r *http.Request, _ string) (status int, out any, err error) {
	var spec faultSpec
	if err := a.decodeBody(r, &spec); err != nil {
		return 0, nil, err
	}
	f, err := spec.fault()
	if err != nil {
		return 0, nil, err
	}
	if err := a.checkTarget(spec.Method, spec.Path); err != nil {
		return 0, nil, err
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	if len(a.faults) >= fake.MaxReactors {
		return 0, nil, &adminError{status: http.StatusBadRequest, code: acctapi.CodeInvalidValue,
			msg: fmt.Sprintf("acctfake already has %d faults, the most it holds; remove some first (DELETE %sfaults removes all).", fake.MaxReactors, adminPrefix)}
	}
	a.nextID++
	af := &adminFault{ID: "flt_" + strconv.Itoa(a.nextID), faultSpec: spec}
	if spec.Times != nil {
		af.Remaining = new(int)
		*af.Remaining = *spec.Times
	}
	// The reactor takes a.mu, so it waits until af.remove is set.
	af.remove = a.srv.React(spec.Method, spec.Path, func(*http.Request) *fake.Fault {
		a.mu.Lock()
		defer a.mu.Unlock()
		if af.Remaining != nil {
			if *af.Remaining == 0 {
				return nil // used up by a request running beside this one
			}
			if *af.Remaining--; *af.Remaining == 0 {
				a.dropFault(af)
			}
		}
		af.Hits++
		cp := *f
		cp.Header = f.Header.Clone()
		return &cp
	})
	a.faults = append(a.faults, af)
	return http.StatusCreated, af.view(), nil
}

// view copies af for an answer; a.mu must be held.
func (af *adminFault) view() adminFault {
	v := *af
	if af.Remaining != nil {
		n := *af.Remaining
		v.Remaining = &n
	}
	return v
}

// dropFault removes af from the server and the list; a.mu must be held.
func (a *admin) dropFault(af *adminFault) {
	af.remove()
	a.faults = slices.DeleteFunc(a.faults, func(f *adminFault) bool { return f == af })
}

func (a *admin) listFaults(*http.Request, string) (int, any, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	out := struct {
		Faults []adminFault `json:"faults"`
	}{Faults: []adminFault{}}
	for _, f := range a.faults {
		out.Faults = append(out.Faults, f.view())
	}
	return http.StatusOK, out, nil
}

func (a *admin) removeFault(_ *http.Request, id string) (int, any, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	for _, f := range a.faults {
		if f.ID == id {
			a.dropFault(f)
			return http.StatusNoContent, nil, nil
		}
	}
	return 0, nil, notFound("fault", id)
}

// removeFaults removes every fault at once: the admin's are the server's
// only reactors. (Removing them one by one copied the server's list of
// reactors for each: 20,000 faults took seconds, holding a.mu.)
func (a *admin) removeFaults(*http.Request, string) (int, any, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.srv.ClearFaults()
	a.faults = nil
	return http.StatusNoContent, nil, nil
}

// clockState is the clock as the admin API shows it.
type clockState struct {
	Now    time.Time `json:"now"`
	Manual bool      `json:"manual"`
}

func (a *admin) clockState() clockState {
	if a.clock == nil {
		return clockState{Now: time.Now().UTC()}
	}
	return clockState{Now: a.clock.Now().UTC(), Manual: true}
}

func (a *admin) getClock(*http.Request, string) (int, any, error) {
	return http.StatusOK, a.clockState(), nil
}

// manual decodes the request's body into v and returns the manual clock,
// or an error when the body is wrong or the clock is real.
func (a *admin) manual(r *http.Request, v any) (*fake.ManualClock, error) {
	if err := a.decodeBody(r, v); err != nil {
		return nil, err
	}
	if a.clock == nil {
		return nil, invalid("clock", "The clock is the real one; start acctfake with -clock manual to move it.")
	}
	return a.clock, nil
}

func (a *admin) setClock(r *http.Request, _ string) (int, any, error) {
	var in struct {
		Now string `json:"now"`
	}
	clock, err := a.manual(r, &in)
	if err != nil {
		return 0, nil, err
	}
	now, err := time.Parse(time.RFC3339, in.Now)
	if err != nil {
		return 0, nil, invalid("now", `now %q is not an RFC 3339 time such as "2030-01-02T15:04:05Z".`, trunc.String(in.Now, 40))
	}
	if !representable(now) {
		return 0, nil, invalid("now", "now %s is outside the years 1 to 9999 that the API's timestamps can hold.", in.Now)
	}
	clock.Set(now)
	return http.StatusOK, a.clockState(), nil
}

func (a *admin) advanceClock(r *http.Request, _ string) (int, any, error) {
	var in struct {
		By string `json:"by"`
	}
	clock, err := a.manual(r, &in)
	if err != nil {
		return 0, nil, err
	}
	d, bad := parseDuration("by", in.By, `"90s" or "-2h"`)
	if bad != nil {
		return 0, nil, bad
	}
	if !representable(clock.Now().Add(d)) {
		return 0, nil, invalid("by", "by %s would move the clock outside the years 1 to 9999 that the API's timestamps can hold.", in.By)
	}
	clock.Advance(d)
	return http.StatusOK, a.clockState(), nil
}

// parseDuration reads the duration v of the member name, for which
// examples are examples; one that time.ParseDuration refuses only for its
// size is said to be out of range, not to be no duration.
func parseDuration(name, v, examples string) (time.Duration, *adminError) {
	d, err := time.ParseDuration(v)
	switch {
	case err == nil:
		return d, nil
	case durationForm.MatchString(v):
		return 0, invalid(name, "%s %q is out of range: a duration is at most about 292 years (2562047h) either way.", name, trunc.String(v, 32))
	}
	return 0, invalid(name, "%s %q is not a duration such as %s.", name, trunc.String(v, 32), examples)
}

// durationForm is the form time.ParseDuration reads, whatever the size.
var durationForm = regexp.MustCompile(`^[-+]?(([0-9]+(\.[0-9]*)?|\.[0-9]+)(ns|us|µs|μs|ms|s|m|h))+$`)

// representable reports whether t can be written as an RFC 3339 timestamp,
// as every time the API answers with must be; fake.ManualClock panics on
// any other.
func representable(t time.Time) bool {
	y := t.UTC().Year()
	return y >= 1 && y <= 9999
}

// adminSnapshot is a snapshot the admin API took.
type adminSnapshot struct {
	ID      string    `json:"id"`
	TakenAt time.Time `json:"taken_at"` // by the server's clock
	snap    *fake.Snapshot
}

// maxSnapshots is the most snapshots the admin API keeps: each holds the
// store as it was, which the server's later writes then no longer share.
const maxSnapshots = 100

func (a *admin) takeSnapshot(*http.Request, string) (int, any, error) {
	snap := a.srv.Snapshot()
	a.mu.Lock()
	defer a.mu.Unlock()
	if len(a.snapshots) >= maxSnapshots {
		return 0, nil, &adminError{status: http.StatusBadRequest, code: acctapi.CodeInvalidValue,
			msg: fmt.Sprintf("acctfake already keeps %d snapshots, the most it keeps; delete some first (DELETE %ssnapshots/{id}).", maxSnapshots, adminPrefix)}
	}
	a.nextID++
	s := &adminSnapshot{ID: "snap_" + strconv.Itoa(a.nextID), TakenAt: a.clockState().Now, snap: snap}
	a.snapshots = append(a.snapshots, s)
	return http.StatusCreated, s, nil
}

func (a *admin) listSnapshots(*http.Request, string) (int, any, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	return http.StatusOK, struct {
		Snapshots []*adminSnapshot `json:"snapshots"`
	}{append([]*adminSnapshot{}, a.snapshots...)}, nil
}

// snapshot returns the snapshot with id; a.mu must be held.
func (a *admin) snapshot(id string) (int, error) {
	i := slices.IndexFunc(a.snapshots, func(s *adminSnapshot) bool { return s.ID == id })
	if i < 0 {
		return 0, notFound("snapshot", id)
	}
	return i, nil
}

func (a *admin) restoreSnapshot(_ *http.Request, id string) (int, any, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	i, err := a.snapshot(id)
	if err != nil {
		return 0, nil, err
	}
	a.srv.Restore(a.snapshots[i].snap)
	return http.StatusOK, a.snapshots[i], nil
}

func (a *admin) deleteSnapshot(_ *http.Request, id string) (int, any, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	i, err := a.snapshot(id)
	if err != nil {
		return 0, nil, err
	}
	a.snapshots = slices.Delete(a.snapshots, i, i+1)
	return http.StatusNoContent, nil, nil
}

// reset is Server.Reset (store, journal, faults, rate-limit counts), then
// the state at start, so that the fixtures are back. Snapshots, the clock
// and the id sequence stay.
func (a *admin) reset(*http.Request, string) (int, any, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.srv.Reset()
	a.srv.Restore(a.start)
	a.faults = nil
	return http.StatusNoContent, nil, nil
}

// codeNoInitialKey is the admin API's code for an account whose initial
// API keys were all deleted, so that POST /_acctfake/accounts/{id}/api_keys
// has no key to create one with (409).
const codeNoInitialKey = "ERR_ACCTAPI_NO_INITIAL_KEY"

// adminAccount is a fake.Account in the admin API's JSON. api_keys is
// always present, [] when every initial key was deleted.
type adminAccount struct {
	ID      string   `json:"id,omitempty"`
	UserID  string   `json:"user_id,omitempty"`
	APIKeys []string `json:"api_keys"`
}

// accountOut is acct as the admin API answers it.
func accountOut(acct fake.Account) adminAccount {
	out := adminAccount(acct)
	if out.APIKeys == nil {
		out.APIKeys = []string{}
	}
	return out
}

func (a *admin) listAccounts(*http.Request, string) (int, any, error) {
	out := struct {
		Accounts []adminAccount `json:"accounts"`
	}{Accounts: []adminAccount{}}
	for _, acct := range a.srv.Accounts() {
		out.Accounts = append(out.Accounts, accountOut(acct))
	}
	return http.StatusOK, out, nil
}

// addAccount is Server.AddAccount: ids and a key are made up when not
// given.
func (a *admin) addAccount(r *http.Request, _ string) (int, any, error) {
	var in adminAccount
	if err := a.decodeBody(r, &in); err != nil {
		return 0, nil, err
	}
	for i, k := range in.APIKeys {
		if k == a.token {
			return 0, nil, invalid(fmt.Sprintf("api_keys[%d]", i), "api_keys[%d] is the admin token, which is not an API key.", i)
		}
	}
	// Under a.mu, so that two requests at once cannot both take the last
	// place.
	a.mu.Lock()
	defer a.mu.Unlock()
	if n := len(a.srv.Accounts()); n >= fake.MaxAccounts {
		return 0, nil, &adminError{status: http.StatusBadRequest, code: acctapi.CodeInvalidValue,
			msg: fmt.Sprintf("The server already holds %d accounts, the most acctfake holds.", n)}
	}
	acct, err := a.srv.AddAccount(fake.Account(in))
	if fe := (*acctapi.FieldError)(nil); errors.As(err, &fe) {
		return 0, nil, invalid(fe.Field, "%s %s.", fe.Field, fe.Reason)
	} else if err != nil {
		return 0, nil, invalid("", "%s.", strings.TrimPrefix(err.Error(), "fake: AddAccount: "))
	}
	return http.StatusCreated, accountOut(acct), nil
}

// forwarded is an answer of the account API that the admin API passes on
// as it came.
type forwarded struct {
	status int
	opID   string // its Operation-Id
	body   []byte
}

func (f *forwarded) Error() string { return fmt.Sprintf("HTTP %d", f.status) }

// addAPIKey creates an API key in an account through the account API
// (POST /api_keys, journaled and open to faults like any request),
// authenticated with the account's first key, and answers as the API did:
// 201 with the key and its token, or the API's error, or the fault's; a
// fault that drops the request drops this one (its connection is closed
// without an answer).
func (a *admin) addAPIKey(r *http.Request, id string) (int, any, error) {
	accts := a.srv.Accounts()
	i := slices.IndexFunc(accts, func(acct fake.Account) bool { return acct.ID == id })
	if i < 0 {
		return 0, nil, notFound("account", id)
	}
	if len(accts[i].APIKeys) == 0 {
		return 0, nil, &adminError{status: http.StatusConflict, code: codeNoInitialKey,
			msg: fmt.Sprintf("Account %q has no initial API key left (each was deleted through the API); create keys with POST /api_keys and another key of the account, if it has one, or add an account (POST /_acctfake/accounts).", id)}
	}
	key := accts[i].APIKeys[0]
	body, err := io.ReadAll(io.LimitReader(r.Body, fake.MaxBodyBytes+1))
	if err != nil {
		return 0, nil, &adminError{status: http.StatusBadRequest, code: acctapi.CodeInvalidJSON, msg: "The request body could not be read."}
	}
	// The request gets an operation id of the fake's sequence, as any API
	// request does: the admin request's context carries the front end's
	// admin id, which the fake did not issue and would refuse.
	ctx := fake.WithOperationID(r.Context(), a.srv.NewOperationID())
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, baseURL(r)+"/api_keys", bytes.NewReader(body))
	if err != nil {
		return 0, nil, err
	}
	req.Header.Set("Authorization", "Bearer "+key)
	req.Header.Set("Service-Version", acctapi.APIVersion)
	// Every Content-Type the caller sent: the API refuses two (a second
	// review found only the first forwarded, so two were accepted here).
	if cts := r.Header.Values("Content-Type"); len(cts) > 0 {
		req.Header["Content-Type"] = slices.Clone(cts)
	}
	// Served by the fake's handler here, not its in-memory client: a
	// fault that drops the request (before or after it takes effect)
	// panics with http.ErrAbortHandler, which goes on up through the
	// front end to net/http, so that this request's connection is closed
	// unanswered too, as the fault meant; the client's transport error
	// would have been a 500.
	rec := httptest.NewRecorder()
	a.srv.ServeHTTP(rec, req)
	return 0, nil, &forwarded{status: rec.Code, opID: rec.Header().Get("Operation-Id"), body: rec.Body.Bytes()}
}
