package fake

import (
	"bytes"
	"crypto/subtle"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"time"

	"github.com/acctapi/acctapi"
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
	params  pathParams
	body    []byte
	rtx     store.Txn // the request's read transaction; see read
	hasRead bool
	hook    op // what hooks see; see op
	header  http.Header
}

// baseURL is the base of uris for a request.
func (s *Server) baseURL(r *http.Request) string {
	if s.cfg.publicURL != "" {
		return s.cfg.publicURL
	}
	if s.httpSrv == nil && (r.Host == "" || r.Host == "acctfake.invalid") {
		return inMemoryURL
	}
	scheme := "http"
	if r.TLS != nil {
		scheme = "https"
	}
	return scheme + "://" + r.Host
}

// ServeHTTP serves one API request: faults first, then authentication,
// version, routing, body checks, validation and the operation. After Close
// it answers 503.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if !s.enter() {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusServiceUnavailable)
		raw, _ := json.Marshal(errorf(http.StatusServiceUnavailable, acctapi.CodeUnavailable, "The server is closed.").body(s.ids.next("op", s.now())))
		_, _ = w.Write(raw)
		return
	}
	defer s.inflight.Done()
	s.serveHTTP(w, r)
}

// serveHTTP is ServeHTTP for a request already counted in flight.
func (s *Server) serveHTTP(w http.ResponseWriter, r *http.Request) {
	c := &call{s: s, r: r, now: s.now(), base: s.baseURL(r), header: w.Header()}
	c.opID = s.ids.next("op", c.now)
	var body []byte
	var readErr error
	if r.Body != nil && r.Body != http.NoBody {
		body, readErr = readBody(r.Body, r.ContentLength)
	}
	c.body = body
	entry := Entry{Time: c.now, Method: r.Method, Path: r.URL.Path, Query: r.URL.RawQuery, OperationID: c.opID}

	re := s.react(c)
	var status int
	var out any
	var err error
	switch {
	case re.drop:
	case re.answer != nil:
		err = re.answer
	default:
		status, out, err = s.serve(c, readErr)
	}
	var raw []byte
	if !re.drop {
		status, raw = encode(c, w.Header(), status, out, err)
	}
	entry.Status, entry.Dropped = status, re.drop || re.dropAfter
	s.journal.add(journalEntry{Entry: entry, req: clip(body), resp: clip(raw)})
	if entry.Dropped {
		panic(http.ErrAbortHandler) // net/http closes the connection; RoundTrip reports it
	}
	h := w.Header()
	h["Operation-Id"] = []string{c.opID}
	if raw != nil {
		h["Content-Type"] = []string{"application/json"}
	}
	w.WriteHeader(status)
	if raw != nil {
		_, _ = w.Write(raw)
	}
}

// encode turns a handler's result into the answer's status and JSON body:
// out on success, or err as the contract's error body, whose headers go
// into h.
func encode(c *call, h http.Header, status int, out any, err error) (int, []byte) {
	if err != nil {
		var ae *apiError
		if !errors.As(err, &ae) {
			ae = errorf(http.StatusInternalServerError, acctapi.CodeInternal, "internal error: %v", err)
		}
		for k, vs := range ae.header {
			h[k] = vs
		}
		raw, _ := json.Marshal(ae.body(c.opID))
		return ae.status, raw
	}
	if out == nil {
		return status, nil
	}
	raw, err := json.Marshal(out)
	if err != nil {
		raw, _ = json.Marshal(errorf(http.StatusInternalServerError, acctapi.CodeInternal, "internal error: encoding response").body(c.opID))
		return http.StatusInternalServerError, raw
	}
	return status, raw
}

// readBody reads a request body, up to one byte more than MaxBodyBytes,
// into a buffer the size the request declares (size ≤ 0: unknown), so that
// the body the journal keeps holds little unused capacity.
func readBody(body io.Reader, size int64) ([]byte, error) {
	return iox.ReadAll(io.LimitReader(body, MaxBodyBytes+1), min(size, MaxBodyBytes))
}

// serve runs the pipeline after fault injection.
func (s *Server) serve(c *call, readErr error) (status int, out any, err error) {
	defer func() {
		if v := recover(); v != nil {
			if v == http.ErrAbortHandler {
				panic(v)
			}
			status, out, err = 0, nil, errorf(http.StatusInternalServerError, acctapi.CodeInternal, "internal error: %v", v)
		}
	}()
	if err := s.authenticate(c); err != nil {
		return 0, nil, err
	}
	if err := s.limiter.check(c.account, c.now); err != nil {
		return 0, nil, err
	}
	if err := checkVersion(c.r.Header); err != nil {
		return 0, nil, err
	}
	rt, params := s.routes.match(c.r.URL.EscapedPath())
	if rt == nil {
		return 0, nil, errorf(http.StatusNotFound, acctapi.CodeNoRoute, "No API path %s.", c.r.URL.Path)
	}
	if rt.successor != "" {
		c.header.Set("Deprecation", "true")
		c.header.Set("Link", "<"+c.base+rt.successor+`>; rel="successor-version"`)
	}
	h, ok := rt.methods[c.r.Method]
	if !ok {
		e := errorf(http.StatusMethodNotAllowed, acctapi.CodeMethodNotAllowed, "Method %s is not allowed on %s.", c.r.Method, c.r.URL.Path)
		e.header = http.Header{"Allow": {rt.allow()}}
		return 0, nil, e
	}
	c.params = params
	if err := checkQuery(c.r.URL.RawQuery, rt.query[c.r.Method]); err != nil {
		return 0, nil, err
	}
	if c.r.Method == http.MethodPost || c.r.Method == http.MethodPatch || c.r.Method == http.MethodPut {
		if err := checkBody(c, readErr); err != nil {
			return 0, nil, err
		}
	}
	return h(c)
}

// authenticate checks the bearer token and finds the caller's account.
func (s *Server) authenticate(c *call) error {
	h := c.r.Header.Get("Authorization")
	if h == "" {
		return errorf(http.StatusUnauthorized, acctapi.CodeNoAuthorization, "The API requires an Authorization header: \"Authorization: Bearer <API key>\".")
	}
	scheme, token, ok := strings.Cut(h, " ")
	if !ok || !strings.EqualFold(scheme, "Bearer") || token == "" || strings.ContainsAny(token, " \t") {
		return errorf(http.StatusUnauthorized, acctapi.CodeBadAuthorization, "The Authorization header could not be parsed; use \"Bearer <API key>\".")
	}
	tx := c.read()
	key := hashToken(token)
	row, ok := s.keys.ByToken(tx, string(key))
	// Compare the stored hash in constant time as well, so the answer's
	// timing does not depend on how much of a guess was right.
	if !ok || subtle.ConstantTimeCompare([]byte(row.Extra), []byte(key)) != 1 {
		return errorf(http.StatusUnauthorized, acctapi.CodeInvalidToken, "The API key you specified is invalid or has been deleted.")
	}
	c.account = row.Account
	c.owner = row.Value.OwnerID
	if strings.HasPrefix(c.owner, "service_") && !s.serviceUserActive(tx, c.account, c.owner) {
		return errorf(http.StatusForbidden, acctapi.CodeInactivePrincipal, "The API key belongs to an inactive service user.")
	}
	return nil
}

// checkVersion checks Service-Version, or its alias Ngrok-Version.
func checkVersion(h http.Header) error {
	v := h.Get("Service-Version")
	if v == "" {
		v = h.Get("Ngrok-Version")
	}
	switch strings.TrimSpace(v) {
	case "":
		return errorf(http.StatusBadRequest, acctapi.CodeNoVersion, "The request does not name an API version; send the header \"Service-Version: 2\".")
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
		return errorf(http.StatusBadRequest, acctapi.CodeUnknownQueryParam, "The query string could not be parsed.")
	}
	// Unknown names first, then repeats, each in name order, so that the
	// answer does not depend on map order.
	keys := slices.Sorted(maps.Keys(q))
	for _, k := range keys {
		if !slices.Contains(allowed, k) {
			return &apiError{status: http.StatusBadRequest, code: acctapi.CodeUnknownQueryParam, field: truncate(k, 64),
				msg: fmt.Sprintf("Unknown query parameter %q; supported: %s.", truncate(k, 64), strings.Join(allowed, ", "))}
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

// checkBody checks a request body's size and content type.
func checkBody(c *call, readErr error) error {
	if readErr != nil {
		return errorf(http.StatusBadRequest, acctapi.CodeInvalidJSON, "The request body could not be read.")
	}
	if len(c.body) > MaxBodyBytes {
		return errorf(http.StatusRequestEntityTooLarge, acctapi.CodeBodyTooLarge, "The request body is larger than %d bytes.", MaxBodyBytes)
	}
	if len(bytes.TrimSpace(c.body)) == 0 {
		c.body = []byte("{}")
		return nil
	}
	ct := c.r.Header.Get("Content-Type")
	if mt, _, _ := strings.Cut(ct, ";"); !strings.EqualFold(strings.TrimSpace(mt), "application/json") {
		return errorf(http.StatusUnsupportedMediaType, acctapi.CodeBadContentType, "The request body must be JSON, sent with \"Content-Type: application/json\"; got %q.", truncate(ct, 64))
	}
	return nil
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
	c.hook = op{now: c.now, account: c.account, owner: c.owner, env: &c.s.env}
	return &c.hook
}
