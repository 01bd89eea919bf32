package fake

import (
	"bytes"
	"crypto/subtle"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"net"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/acctapi/acctapi"
	"github.com/acctapi/acctapi/events"
	"github.com/acctapi/acctapi/fake/internal/store"
	"github.com/acctapi/acctapi/internal/iox"
	"github.com/acctapi/acctapi/internal/trunc"
)

func (s *Server) now() time.Time { return s.cfg.clock.Now().UTC().Truncate(time.Second) }

// call is one request on its way through the pipeline.
type call struct {
	s       *Server
	r       *http.Request
	opID    string
	now     time.Time
	base    string
	account string
	owner   string // the key's owner_id: a usr_ or service_ id
	keyHash string // the key's hash, as the keys table holds it
	keyID   string // the key's id
	params  pathParams
	body    []byte
	rtx     store.Txn // the request's read transaction; see read
	hasRead bool
	hook    op // what hooks see; see op
	header  http.Header
	// dialect is the wire dialect the request speaks (see requestDialect):
	// bodies are translated from it on input and into it on output.
	dialect acctapi.Dialect
}

// baseURL is the base of uris for a request: the configured public base
// URL, else the scheme and host the request reached. A request without a
// Host (HTTP/1.0) that came over a connection gets the address the
// connection reached, so that the uris it is answered with are reachable
// wherever the handler is mounted.
func (s *Server) baseURL(r *http.Request) string {
	if s.cfg.publicURL != "" {
		return s.cfg.publicURL
	}
	host := r.Host
	if host == "" {
		if a, ok := r.Context().Value(http.LocalAddrContextKey).(net.Addr); ok {
			host = a.String()
		}
	}
	if host == "" || (s.httpSrv == nil && host == "acctfake.invalid") {
		if s.httpSrv != nil {
			return s.httpSrv.URL
		}
		return inMemoryURL
	}
	scheme := "http"
	if r.TLS != nil {
		scheme = "https"
	}
	return scheme + "://" + host
}

// checkHost refuses a request whose Host header is not a host with an
// optional port (see iox.ValidHost); one without a Host (HTTP/1.0) gets
// the address its connection reached (see baseURL).
func checkHost(r *http.Request) error {
	if r.Host == "" || iox.ValidHost(r.Host) {
		return nil
	}
	return errorf(http.StatusBadRequest, acctapi.CodeMalformedRequest, "%s", iox.HostMessage(r.Host))
}

// ServeHTTP serves one API request: authentication (before the body is
// read), faults, version, routing, body checks, validation and the
// operation. After Close it answers 503.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if !s.enter() {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusServiceUnavailable)
		raw, _ := json.Marshal(errorf(http.StatusServiceUnavailable, acctapi.CodeUnavailable, "The server is closed.").body(s.operationID(r.Context(), s.now())))
		_, _ = w.Write(raw)
		return
	}
	defer s.inflight.Done()
	s.serveHTTP(w, r)
}

// serveHTTP is ServeHTTP for a request already counted in flight.
//
// The body is read only once the request has authenticated and named a
// version the fake serves (and declares no more than MaxBodyBytes): a
// client that sent "Expect: 100-continue" gets no 100 Continue without a
// valid token, and the journal keeps no body of such a request.
// Reactors (faults) then see the request, body included; one that failed
// authentication they see without its body, and the answer of a fault still
// wins over that of authentication.
func (s *Server) serveHTTP(w http.ResponseWriter, r *http.Request) {
	var tracked *iox.Body
	if r.Body != nil && r.Body != http.NoBody {
		tracked = &iox.Body{ReadCloser: r.Body}
		r.Body = tracked
	}
	// The journal keeps the path as sent; the rest sees it canonical.
	sent := r.URL.EscapedPath()
	r = canonicalPath(canonicalHeader(r))
	// A malformed Host is answered first, as net/http answers a request
	// it cannot read, open to no fault: no uri is made of it.
	hostErr := checkHost(r)
	base := inMemoryURL
	if hostErr == nil {
		base = s.baseURL(r)
	}
	c := &call{s: s, r: r, now: s.now(), base: base, header: w.Header(), dialect: requestDialect(r.Header)}
	c.opID = s.operationID(r.Context(), c.now)
	entry := Entry{Time: c.now, Method: r.Method, Path: sent, Query: r.URL.RawQuery, OperationID: c.opID}
	authErr := hostErr
	if authErr == nil {
		authErr = guard(func() error { return s.authenticate(c) })
	}
	versionErr := checkVersion(r.Header, c.dialect) // answered by serve, after the rate limit
	var readErr error
	switch {
	case authErr != nil || r.Body == nil || r.Body == http.NoBody:
	case versionErr != nil:
		// Refused unread too (serve answers the version first): a body
		// still arriving would hold the answer until it had.
	case r.ContentLength > MaxBodyBytes:
		// Refused unread: a client that sent "Expect: 100-continue" then
		// gets the 413 instead of "100 Continue" and never uploads it.
		readErr = errBodyTooLarge
	default:
		c.body, readErr = readBody(r.Body, r.ContentLength)
	}
	body := c.body // as it came, for the journal; checkBody may replace c.body

	var re reaction
	if hostErr == nil {
		re = s.react(c)
	}
	if authErr == nil && re.answer == nil && !re.drop && re.ran {
		// A reactor may have delayed the request or written: serve it from
		// the state as it is now, at the time it is now, as if it had only
		// now arrived, its key included. (Whether a reactor ran, not
		// whether one is left: a one-shot fault removes itself before its
		// delay, and a review found the request then served from the state
		// before the delay, by a key deleted meanwhile.)
		c.hasRead = false
		c.now = s.now()
		if authErr = guard(func() error { return s.authenticate(c) }); authErr != nil {
			body = nil
		}
	}
	var status int
	var out any
	var err error
	switch {
	case re.drop:
	case re.answer != nil:
		err = re.answer
	case authErr != nil:
		err = authErr
	default:
		status, out, err = s.serve(c, versionErr, readErr)
	}
	var raw []byte
	if !re.drop {
		status, raw = encode(c, w.Header(), status, out, err)
	}
	entry.Status, entry.Dropped = status, re.drop || re.dropAfter
	s.journal.add(journalEntry{Entry: entry, req: body, resp: raw}, s.cfg.journalBudget())
	if entry.Dropped {
		panic(http.ErrAbortHandler) // net/http closes the connection; RoundTrip reports it
	}
	h := w.Header()
	// Under both names: the real service's clients read its own,
	// Ngrok-Operation-Id.
	h["Operation-Id"] = []string{c.opID}
	h["Ngrok-Operation-Id"] = []string{c.opID}
	if raw != nil {
		h["Content-Type"] = []string{"application/json"}
	}
	// An answer that did not read the whole body (authentication or the
	// version failed, or the body is over MaxBodyBytes) closes the
	// connection, so that net/http sends it at once rather than first
	// read what a client still sends, and then reads the rest, so that
	// the close does not reset the connection under the answer (see
	// iox.DrainDeadline; nothing of this in memory).
	unread := tracked != nil && !tracked.EOF && iox.DrainDeadline(w, 0)
	if unread {
		h["Connection"] = []string{"close"}
		if iox.BodyAllowed(status) {
			h["Content-Length"] = []string{strconv.Itoa(len(raw))}
		}
	}
	w.WriteHeader(status)
	if raw != nil {
		_, _ = w.Write(raw)
	}
	if unread {
		iox.DrainBody(s.drainStop(), w, tracked)
	}
}

// encode turns a handler's result into the answer's status and JSON body:
// out on success, or err as the contract's error body, whose headers go
// into h.
// A request of the real service's dialect is answered in it: the body's
// event targets and an error's field paths under their real names.
func encode(c *call, h http.Header, status int, out any, err error) (int, []byte) {
	if err != nil {
		var ae *apiError
		if !errors.As(err, &ae) {
			ae = errorf(http.StatusInternalServerError, acctapi.CodeInternal, "internal error: %v", err)
		}
		for k, vs := range ae.header {
			h[k] = vs
		}
		raw, _ := json.Marshal(ae.in(c.dialect).body(c.opID))
		return ae.status, raw
	}
	if out == nil {
		return status, nil
	}
	raw, err := json.Marshal(out)
	if err == nil && c.dialect == acctapi.DialectReal {
		raw, err = events.Translate(raw, acctapi.DialectReal)
	}
	if err != nil {
		raw, _ = json.Marshal(errorf(http.StatusInternalServerError, acctapi.CodeInternal, "internal error: encoding response").body(c.opID))
		return http.StatusInternalServerError, raw
	}
	return status, raw
}

// errBodyTooLarge is the read error of a body whose declared length is
// over MaxBodyBytes, which is not read.
var errBodyTooLarge = errors.New("fake: body over MaxBodyBytes")

// readBody reads a request body, up to one byte more than MaxBodyBytes,
// into a buffer the size the request declares (size ≤ 0: unknown), so that
// the body the journal keeps holds little unused capacity.
func readBody(body io.Reader, size int64) ([]byte, error) {
	return iox.ReadAll(io.LimitReader(body, MaxBodyBytes+1), min(size, MaxBodyBytes))
}

// guard runs fn, turning a panic into a 500 answer.
func guard(fn func() error) (err error) {
	defer func() {
		if v := recover(); v != nil {
			if v == http.ErrAbortHandler {
				panic(v)
			}
			err = errorf(http.StatusInternalServerError, acctapi.CodeInternal, "internal error: %v", v)
		}
	}()
	return fn()
}

// serve runs the pipeline after authentication and fault injection, given
// the version check's result and the body's read error.
func (s *Server) serve(c *call, versionErr, readErr error) (status int, out any, err error) {
	defer func() {
		if v := recover(); v != nil {
			if v == http.ErrAbortHandler {
				panic(v)
			}
			status, out, err = 0, nil, errorf(http.StatusInternalServerError, acctapi.CodeInternal, "internal error: %v", v)
		}
	}()
	if err := s.limiter.check(c.account, c.now); err != nil {
		return 0, nil, err
	}
	if versionErr != nil {
		return 0, nil, versionErr
	}
	// Messages name the path as routed, escapes and all, in their normal
	// form (canonicalPath): routes match it so ("/service_users%2Fx" is
	// one segment, not the path its unescaped form spells).
	escaped := c.r.URL.EscapedPath()
	rt, params := s.routes.match(escaped)
	if rt == nil {
		if escaped == "" { // CONNECT host:port, which names no path
			escaped = c.r.RequestURI
		}
		return 0, nil, errorf(http.StatusNotFound, acctapi.CodeNoRoute, "No API path %s.", truncate(escaped, 256))
	}
	if rt.successor != "" {
		c.header.Set("Deprecation", "true")
		c.header.Set("Link", "<"+c.base+rt.successor+`>; rel="successor-version"`)
	}
	h, ok := rt.methods[c.r.Method]
	if !ok {
		e := errorf(http.StatusMethodNotAllowed, acctapi.CodeMethodNotAllowed, "Method %s is not allowed on %s.", truncate(c.r.Method, 32), truncate(escaped, 256))
		e.header = http.Header{"Allow": {rt.allow()}}
		return 0, nil, e
	}
	c.params = params
	if err := checkQuery(c.r.URL.RawQuery, queryFor(rt.query[c.r.Method], c.dialect)); err != nil {
		return 0, nil, err
	}
	empty, err := checkBody(c, readErr)
	if err != nil {
		return 0, nil, err
	}
	if !empty && c.r.Method != http.MethodPost && c.r.Method != http.MethodPatch && c.r.Method != http.MethodPut {
		// GET and DELETE take no body: one sent is checked as any body
		// is (size, content type, text), and may be {} or null, which
		// some clients send; anything else is the real service's 211.
		if b := bytes.TrimSpace(c.body); !bytes.Equal(b, []byte("null")) && decode(b, &struct{}{}, &s.members) != nil {
			return 0, nil, errorf(http.StatusBadRequest, acctapi.CodeBodyNotExpected, "The %s request you made does not expect a body, but you provided one.", c.r.Method)
		}
	}
	return h(c)
}

// errInvalidKey is the answer to a key that does not authenticate.
func errInvalidKey() *apiError {
	return errorf(http.StatusUnauthorized, acctapi.CodeInvalidToken, "The API key you specified is invalid or has been deleted.")
}

// authenticate checks the bearer token and finds the caller's account.
func (s *Server) authenticate(c *call) error {
	// Two headers first, even if the first is empty (contract §2).
	token, fault := iox.BearerToken(c.r.Header)
	switch fault {
	case iox.AuthMany:
		return errorf(http.StatusUnauthorized, acctapi.CodeBadAuthorization, "The request has %d Authorization headers; send one, \"Authorization: Bearer <API key>\".", len(c.r.Header.Values("Authorization")))
	case iox.AuthMissing:
		return errorf(http.StatusUnauthorized, acctapi.CodeNoAuthorization, "The API requires an Authorization header: \"Authorization: Bearer <API key>\".")
	case iox.AuthMalformed:
		return errorf(http.StatusUnauthorized, acctapi.CodeBadAuthorization, "The Authorization header could not be parsed; use \"Bearer <API key>\".")
	}
	tx := c.read()
	key := hashToken(token)
	row, ok := s.keys.ByToken(tx, string(key))
	// Compare the stored hash in constant time as well, so the answer's
	// timing does not depend on how much of a guess was right.
	if !ok || subtle.ConstantTimeCompare([]byte(row.Extra), []byte(key)) != 1 {
		return errInvalidKey()
	}
	c.account, c.keyHash, c.keyID = row.Account, string(row.Extra), row.ID
	c.owner = row.Value.OwnerID
	if strings.HasPrefix(c.owner, "service_") && !s.serviceUserActive(tx, c.account, c.owner) {
		return errorf(http.StatusForbidden, acctapi.CodeInactivePrincipal, "The API key belongs to an inactive service user.")
	}
	return nil
}

// checkVersion checks Service-Version, or the real service's name for it,
// Ngrok-Version, which a request of the real service's dialect sends
// alone; Service-Version wins when both are sent.
func checkVersion(h http.Header, d acctapi.Dialect) error {
	name := "Service-Version"
	vs := h.Values(name)
	if len(vs) == 0 || vs[0] == "" {
		name = "Ngrok-Version"
		vs = h.Values(name)
	}
	if len(vs) > 1 {
		// As with Authorization: which one counts would be a guess (the
		// first, "2", served a request that also said "3").
		return errorf(http.StatusBadRequest, acctapi.CodeBadVersion, "The request sends the header %s %d times; send it once.", name, len(vs))
	}
	var v string
	if len(vs) == 1 {
		v = vs[0]
	}
	switch strings.TrimSpace(v) {
	case "":
		name := "Service-Version"
		if d == acctapi.DialectReal {
			name = "Ngrok-Version"
		}
		return errorf(http.StatusBadRequest, acctapi.CodeNoVersion, "The request does not name an API version; send the header \"%s: 2\".", name)
	case acctapi.APIVersion:
		return nil
	}
	return errorf(http.StatusBadRequest, acctapi.CodeBadVersion, "API version %q is not supported; supported versions: 2.", truncate(v, 32))
}

// checkQuery rejects unknown and repeated query parameters.
func checkQuery(raw string, allowed []string) error {
	if raw == "" {
		return nil
	}
	q, err := url.ParseQuery(raw)
	if err != nil {
		return errorf(http.StatusBadRequest, acctapi.CodeBadQuery, "The query string could not be parsed: %s.", truncate(err.Error(), 128))
	}
	// Unknown names first, then repeats, each in name order, so that the
	// answer does not depend on map order.
	keys := slices.Sorted(maps.Keys(q))
	for _, k := range keys {
		if !slices.Contains(allowed, k) {
			supported := "this path takes no query parameters"
			if len(allowed) > 0 {
				supported = "supported: " + strings.Join(allowed, ", ")
			}
			return &apiError{status: http.StatusBadRequest, code: acctapi.CodeUnknownQueryParam, field: truncate(k, 64),
				msg: fmt.Sprintf("Unknown query parameter %q; %s.", truncate(k, 64), supported)}
		}
	}
	for _, k := range keys {
		if vs := q[k]; len(vs) > 1 {
			return &apiError{status: http.StatusBadRequest, code: acctapi.CodeRepeatedQueryParam, field: k,
				msg: fmt.Sprintf("The query parameter %q is given more than once.", k)}
		}
	}
	return nil
}

// checkBody checks a request body's size and content type (see
// checkJSON); an empty body becomes {}, and checkBody reports that it was.
func checkBody(c *call, readErr error) (empty bool, err error) {
	empty, aerr := checkJSON(c.r.Header, c.body, readErr)
	if aerr != nil {
		return false, aerr
	}
	if empty {
		c.body = []byte("{}")
		return true, nil
	}
	if c.dialect == acctapi.DialectReal {
		b, err := events.Translate(c.body, acctapi.DialectSpec)
		if err != nil {
			return false, fromValidation(err)
		}
		c.body = b
	}
	return false, nil
}

// checkJSON checks a request body that was read with readErr: at most
// MaxBodyBytes, and unless empty (white space only), sent with one
// Content-Type, application/json. It reports whether the body is empty.
func checkJSON(h http.Header, body []byte, readErr error) (empty bool, err *apiError) {
	if readErr != nil && !errors.Is(readErr, errBodyTooLarge) {
		return false, errorf(http.StatusBadRequest, acctapi.CodeInvalidJSON, "The request body could not be read.")
	}
	if readErr != nil || len(body) > MaxBodyBytes {
		return false, errorf(http.StatusRequestEntityTooLarge, acctapi.CodeBodyTooLarge, "The request body is larger than %d bytes.", MaxBodyBytes)
	}
	if len(bytes.TrimSpace(body)) == 0 {
		return true, nil
	}
	if cts := h.Values("Content-Type"); len(cts) > 1 {
		return false, errorf(http.StatusUnsupportedMediaType, acctapi.CodeBadContentType, "The request has %d Content-Type headers; send one, \"Content-Type: application/json\".", len(cts))
	}
	ct := h.Get("Content-Type")
	if strings.TrimSpace(ct) == "" {
		return false, errorf(http.StatusUnsupportedMediaType, acctapi.CodeNoContentType, "The request has a body but no Content-Type; send it with \"Content-Type: application/json\".")
	}
	if mt, _, _ := strings.Cut(ct, ";"); !strings.EqualFold(strings.TrimSpace(mt), "application/json") {
		return false, errorf(http.StatusUnsupportedMediaType, acctapi.CodeBadContentType, "The request body must be JSON, sent with \"Content-Type: application/json\"; got %q.", truncate(ct, 64))
	}
	// After the media type (a body that is not JSON is a 415 whatever its
	// bytes), before anything reads it (the real dialect's translation
	// re-encodes the body, which would turn each bad byte into U+FFFD).
	return false, checkText(body)
}

// truncate shortens s for a message; see trunc.String.
func truncate(s string, n int) string { return trunc.String(s, n) }

// read returns the request's read transaction, made on first use: one
// consistent snapshot serves authentication and the handler.
func (c *call) read() *store.Txn {
	if !c.hasRead {
		c.rtx, c.hasRead = c.s.db.Read(), true
	}
	return &c.rtx
}

// op is what the resource hooks see of the call.
func (c *call) op() *op {
	c.hook = op{now: c.now, base: c.base, account: c.account, owner: c.owner, env: &c.s.env, keyHash: c.keyHash, keyID: c.keyID}
	return &c.hook
}
