package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/acctapi/acctapi"
	"github.com/acctapi/acctapi/fake"
	"github.com/acctapi/acctapi/internal/iox"
)

// adminPrefix is the admin API's path prefix, which no path of the account
// API uses.
const adminPrefix = "/_acctfake/"

// frontend is the handler in front of the fake and the admin API. It
// answers in the contract's JSON error body what neither can: a request
// line and headers over maxHeaderBytes (431), a request still running after
// timeout or when the grace period of a shutdown has ended (503). It gives
// a request without a Host (HTTP/1.0) the address the connection reached,
// so that the uris it is answered with are reachable, and sends paths
// under /_acctfake/ to the admin API.
//
// Every request gets its operation id here. An API request's comes from
// newID (the fake's Server.NewOperationID, the id the fake would have
// given it): the fake answers and journals the request with it
// (fake.WithOperationID), and so does the front end when it answers
// itself, so a 503 for a request that ran too long carries the id of its
// journal entry. A request to the admin API (health polls included) takes
// nothing from the fake's sequence, so it does not change the ids and
// tokens that -id-seed replays: the admin API numbers its own (admin.ids),
// and never hands one to the fake. (A 431 the front end answers itself
// leaves the fake an issued id no request uses; the fake keeps at most
// 65,536 of those, the oldest forgotten first.)
type frontend struct {
	api            http.Handler
	admin          *admin
	newID          func() string
	maxHeaderBytes int
	timeout        time.Duration
	shutdown       context.Context // ends with the grace period
	drainWait      time.Duration   // -read-timeout: the most a refused body is drained (see iox.DrainDeadline)
}

// errTimeout is the cause of a request context's end at the timeout.
var errTimeout = errors.New("request timeout")

// opIDKey is the request context's key for the operation id the front end
// gave the request.
type opIDKey struct{}

func (f *frontend) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	toAdmin := r.URL.Path == strings.TrimSuffix(adminPrefix, "/") || strings.HasPrefix(r.URL.Path, adminPrefix)
	h, opID := f.api, ""
	if toAdmin {
		h, opID = f.admin, f.admin.ids.next()
	} else {
		opID = f.newID()
	}
	if n := headerBytes(r); n > f.maxHeaderBytes {
		writeError(w, opID, http.StatusRequestHeaderFieldsTooLarge, acctapi.CodeHeadersTooLarge, "",
			fmt.Sprintf("The request line and headers are %d bytes; this server reads at most %d.", n, f.maxHeaderBytes))
		return
	}
	ctx, cancel := context.WithTimeoutCause(r.Context(), f.timeout, errTimeout)
	defer cancel()
	ctx = context.WithValue(ctx, opIDKey{}, opID)
	if !toAdmin {
		ctx = fake.WithOperationID(ctx, opID) // an id the fake issued, for this request
	}
	r = r.WithContext(ctx)
	if r.Host == "" {
		if a, ok := ctx.Value(http.LocalAddrContextKey).(net.Addr); ok {
			r.Host = a.String()
		}
	}
	// The fake refuses a malformed Host itself (journaled); the admin API
	// puts the Host into uris and requests of its own, so refuses it here.
	if toAdmin && !iox.ValidHost(r.Host) {
		writeError(w, opID, http.StatusBadRequest, acctapi.CodeMalformedRequest, "", iox.HostMessage(r.Host))
		return
	}
	// The handler writes into a buffer, in a goroutine of its own, so that
	// a request that runs too long can still be answered here.
	buf := &bufferedResponse{header: http.Header{}}
	var body *iox.Body
	if r.Body != nil && r.Body != http.NoBody {
		body = &iox.Body{ReadCloser: r.Body}
		r.Body = body
	}
	done := make(chan any, 1)
	go func() {
		defer func() { done <- recover() }()
		h.ServeHTTP(buf, r)
	}()
	select {
	case p := <-done:
		if body != nil && !body.EOF {
			// An answer given without reading the whole body (a 401, which
			// never reads it): before a keep-alive answer net/http would
			// read the rest, which a client still sending holds until the
			// read timeout (a review saw a 401 never arrive). Closing the
			// connection sends it at once; iox.DrainBody then reads the
			// rest, so that the close resets nothing.
			w.Header().Set("Connection", "close")
			drain := iox.DrainDeadline(w, f.drainWait)
			buf.length = drain
			buf.answer(w, p, opID)
			if drain {
				iox.DrainBody(f.shutdown, w, body)
			}
			return
		}
		buf.answer(w, p, opID)
		return
	case <-ctx.Done():
	}
	if context.Cause(ctx) != errTimeout && f.shutdown.Err() == nil {
		// The connection failed (a read timeout) or the client went away:
		// the handler sees it too, and its answer is for whoever listens.
		deadline, _ := ctx.Deadline()
		t := time.NewTimer(time.Until(deadline))
		defer t.Stop()
		select {
		case p := <-done:
			buf.answer(w, p, opID)
			return
		case <-t.C:
		}
	}
	msg := fmt.Sprintf("The request did not finish within %v; it may still take effect.", f.timeout)
	if f.shutdown.Err() != nil {
		msg = "The server is shutting down and cancelled the request; it may still take effect."
	}
	// The handler may still be reading the body. Before a keep-alive
	// answer net/http would read what is left of it first, which a body
	// shorter than its Content-Length holds until the read timeout; an
	// answer that closes the connection goes out at once. After it,
	// net/http still drains the body before closing, so reads end now: the
	// connection closes at once, not at the read timeout (a review saw
	// acctfake's defaults, a read timeout longer than the request timeout,
	// hold it for minutes). The deadline alone did not always do: when the
	// handler was still blocked reading the body as this returned,
	// net/http cleared the deadline (to end that read) before its drain,
	// which then waited for a stalled client indefinitely (a review saw the
	// connection open at 36 s with -request-timeout 1s, in 3 runs of 4; a
	// goroutine dump showed the drain in body.Close). So the connection is
	// taken over and closed once the answer is out.
	w.Header().Set("Connection", "close")
	writeError(w, opID, http.StatusServiceUnavailable, acctapi.CodeUnavailable, "", msg)
	rc := http.NewResponseController(w)
	_ = rc.SetReadDeadline(time.Now())
	if err := rc.Flush(); err == nil {
		if conn, _, err := rc.Hijack(); err == nil {
			_ = conn.Close()
		}
	}
}

// headerBytes is the size of r's request line and headers as sent, near
// enough: what the 431 check counts.
func headerBytes(r *http.Request) int {
	n := len(r.Method) + len(r.RequestURI) + len(r.Proto) + 4
	if r.Host != "" {
		n += len("Host: ") + len(r.Host) + 2
	}
	for k, vs := range r.Header {
		for _, v := range vs {
			n += len(k) + len(v) + 4
		}
	}
	return n
}

// bufferedResponse is the http.ResponseWriter the front end gives a
// handler: it keeps the answer until the handler returns.
type bufferedResponse struct {
	header http.Header
	status int
	body   []byte
	// length makes answer declare the body's length: an answer flushed
	// before the handler returns (see iox.DrainBody) is otherwise sent
	// chunked, its end only after the flush's caller is done.
	length bool
}

func (b *bufferedResponse) Header() http.Header { return b.header }

func (b *bufferedResponse) WriteHeader(status int) {
	if b.status == 0 {
		b.status = status
	}
}

func (b *bufferedResponse) Write(p []byte) (int, error) {
	b.WriteHeader(http.StatusOK)
	b.body = append(b.body, p...)
	return len(p), nil
}

// answer writes the buffered answer to w. A handler that panicked with
// http.ErrAbortHandler (an injected drop) has its connection closed
// without an answer; any other panic p is answered 500, and the program
// keeps serving.
func (b *bufferedResponse) answer(w http.ResponseWriter, p any, opID string) {
	if p == http.ErrAbortHandler {
		panic(p)
	}
	if p != nil {
		writeError(w, opID, http.StatusInternalServerError, acctapi.CodeInternal, "", fmt.Sprintf("internal error: %.200v", p))
		return
	}
	h := w.Header()
	for k, vs := range b.header {
		h[k] = vs
	}
	if b.status == 0 {
		b.status = http.StatusOK
	}
	if b.length && iox.BodyAllowed(b.status) {
		h.Set("Content-Length", strconv.Itoa(len(b.body)))
	}
	w.WriteHeader(b.status)
	_, _ = w.Write(b.body)
}

// writeError answers with the contract's error body (§2) and operation id
// opID; field, when not empty, names the member or parameter at fault.
func writeError(w http.ResponseWriter, opID string, status int, code, field, msg string) {
	details := map[string]string{"operation_id": opID}
	if field != "" {
		details["field"] = field
	}
	raw, _ := json.Marshal(&acctapi.Error{StatusCode: status, Msg: msg, ErrorCode: code, Details: details})
	h := w.Header()
	h.Set("Content-Type", "application/json")
	h.Set("Operation-Id", opID)
	h.Set("Ngrok-Operation-Id", opID)
	// Its length, so that a flush before the handler returns (the 503's,
	// see ServeHTTP) does not make the answer chunked.
	h.Set("Content-Length", strconv.Itoa(len(raw)))
	w.WriteHeader(status)
	_, _ = w.Write(raw)
}

// adminIDs numbers the admin API's operation ids: "op_" and the count in
// 27 decimal digits (base-62 characters, the contract's form), in order,
// the same in every run. The zero value starts at 1.
type adminIDs struct{ n atomic.Uint64 }

func (a *adminIDs) next() string { return fmt.Sprintf("op_%027d", a.n.Add(1)) }

// netHTTPErrorHeaders is what net/http writes after the status line of an
// answer it makes itself, before any handler runs (a request it cannot
// read: a malformed request line, header, Host or path escape, headers
// beyond what it reads, a transfer encoding or HTTP version it does not
// speak), and before its plain-text body: one Write of the whole answer.
const netHTTPErrorHeaders = "\r\nContent-Type: text/plain; charset=utf-8\r\nConnection: close\r\n\r\n"

// jsonErrorListener hands out connections that answer, in the contract's
// JSON error body, what net/http would answer in plain text before any
// handler runs (see netHTTPErrorHeaders). Every other byte goes through
// as written: a handler's answer always carries a Date header after
// Connection, so it never looks like one of net/http's own.
type jsonErrorListener struct {
	net.Listener
	newID        func() string // the answers' operation ids
	netHTTPReads int           // what net/http reads of a request line and headers, for 431's message
}

// Accept wraps the listener's next connection.
func (l *jsonErrorListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	return &jsonErrorConn{Conn: c, l: l}, nil
}

// jsonErrorConn is a connection of a jsonErrorListener.
type jsonErrorConn struct {
	net.Conn
	l *jsonErrorListener
}

// Write writes p, or in its place the JSON answer for net/http's own
// plain-text answer p. It reports len(p) written when it wrote the whole
// replacement.
func (c *jsonErrorConn) Write(p []byte) (int, error) {
	out, ok := c.l.rewrite(p)
	if !ok {
		return c.Conn.Write(p)
	}
	if _, err := c.Conn.Write(out); err != nil {
		return 0, err
	}
	return len(p), nil
}

// CloseWrite half-closes the connection as net/http does after a 431, so
// that the client reads the answer before the connection is reset.
func (c *jsonErrorConn) CloseWrite() error {
	if cw, ok := c.Conn.(interface{ CloseWrite() error }); ok {
		return cw.CloseWrite()
	}
	return nil
}

// rewrite returns the JSON answer for p when p is one of net/http's own
// plain-text answers: the same status, with the contract's error body,
// [acctapi.CodeHeadersTooLarge] for 431 and [acctapi.CodeMalformedRequest]
// for the rest.
func (l *jsonErrorListener) rewrite(p []byte) ([]byte, bool) {
	rest, ok := bytes.CutPrefix(p, []byte("HTTP/1.1 "))
	if !ok {
		return nil, false
	}
	line, body, ok := bytes.Cut(rest, []byte(netHTTPErrorHeaders))
	if !ok || len(line) < 4 || line[3] != ' ' || bytes.ContainsAny(line, "\r\n") {
		return nil, false
	}
	status, err := strconv.Atoi(string(line[:3]))
	if err != nil || status < 400 || status > 599 {
		return nil, false
	}
	code, msg := acctapi.CodeMalformedRequest, ""
	switch {
	case status == http.StatusRequestHeaderFieldsTooLarge:
		code = acctapi.CodeHeadersTooLarge
		msg = fmt.Sprintf("The request line and headers are over the %d bytes this server reads.", l.netHTTPReads)
	case status == http.StatusNotImplemented:
		msg = "The request's Transfer-Encoding is not supported; send a body with Content-Length, or chunked."
	default:
		// net/http's body is "400 Bad Request", or with a reason after a
		// colon ("missing required Host header").
		msg = "The request could not be read as HTTP/1.1 (a malformed request line, header, Host, or escape in the path)."
		if _, reason, ok := strings.Cut(string(body), ": "); ok && reason != "" {
			msg = "The request could not be read as HTTP/1.1: " + reason + "."
		}
	}
	opID := l.newID()
	raw, _ := json.Marshal(&acctapi.Error{StatusCode: status, Msg: msg, ErrorCode: code, Details: map[string]string{"operation_id": opID}})
	return fmt.Appendf(nil, "HTTP/1.1 %d %s\r\nContent-Type: application/json\r\nOperation-Id: %s\r\nNgrok-Operation-Id: %[3]s\r\nContent-Length: %d\r\nConnection: close\r\n\r\n%s",
		status, http.StatusText(status), opID, len(raw), raw), true
}
