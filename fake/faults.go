package fake

import (
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"path"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/acctapi/acctapi"
)

// Fault is how the server answers a request a reactor takes over.
//
// After Delay, a Fault with Drop set closes the connection without an
// answer, before the request reaches the server (the client sees a
// transport error, and nothing happened). Otherwise a Fault with a Status
// answers with that status and the contract's error body (Code and Msg,
// with defaults for the status) plus Header; a Fault with no Status only
// delays the request, which then goes on to later reactors and the server.
//
// A Fault with DropAfter set drops the answer instead of the request: the
// request goes on (to the Fault's own Status, later reactors and the
// server) as if DropAfter were not set, so a write takes effect and the
// journal records the answer the server computed, and then the connection
// is closed before any of that answer is written. The client sees a
// transport error for a request that did happen: the case in which a
// client that retried a POST or PATCH would repeat it.
type Fault struct {
	Status    int
	Code      string
	Msg       string
	Header    http.Header
	Delay     time.Duration
	Drop      bool
	DropAfter bool
}

// Reactor decides whether to take over a request: it returns the [Fault]
// to answer with, or nil to let the request go on. It runs before
// authentication, never while the store is locked, and may be called from
// several goroutines at once.
type Reactor func(r *http.Request) *Fault

type reactorEntry struct {
	id      int
	method  string
	pattern string
	fn      Reactor
}

type faults struct {
	mu       sync.Mutex
	next     int
	reactors []reactorEntry
}

// React adds a reactor for requests whose method is method ("" or "*" for
// any) and whose path matches pattern, a [path.Match] pattern where a final
// "/**" also matches any deeper path ("/service_users/*", "/backends/**",
// "/**" for all). Reactors run in the order they were added; the first that
// returns a Fault answers. React returns a function that removes the
// reactor.
func (s *Server) React(method, pattern string, fn Reactor) (remove func()) {
	s.faults.mu.Lock()
	defer s.faults.mu.Unlock()
	s.faults.next++
	id := s.faults.next
	s.faults.reactors = append(s.faults.reactors, reactorEntry{id: id, method: method, pattern: pattern, fn: fn})
	return func() {
		s.faults.mu.Lock()
		defer s.faults.mu.Unlock()
		for i, r := range s.faults.reactors {
			if r.id == id {
				s.faults.reactors = append(s.faults.reactors[:i:i], s.faults.reactors[i+1:]...)
				return
			}
		}
	}
}

// ClearFaults removes every reactor.
func (s *Server) ClearFaults() {
	s.faults.mu.Lock()
	defer s.faults.mu.Unlock()
	s.faults.reactors = nil
}

// nTimes wraps f so that it is returned for the first n matching requests
// only.
func nTimes(n int, f Fault) Reactor {
	var mu sync.Mutex
	left := n
	return func(*http.Request) *Fault {
		mu.Lock()
		defer mu.Unlock()
		if left <= 0 {
			return nil
		}
		left--
		cp := f
		return &cp
	}
}

// FailNext answers the next n requests matching method and pattern (see
// [Server.React]) with status and the contract's error body.
func (s *Server) FailNext(method, pattern string, n, status int) {
	s.React(method, pattern, nTimes(n, Fault{Status: status}))
}

// DropNext closes the connection of the next n matching requests without
// answering them.
func (s *Server) DropNext(method, pattern string, n int) {
	s.React(method, pattern, nTimes(n, Fault{Drop: true}))
}

// DropAfterNext serves the next n matching requests and then closes their
// connections before answering them (see [Fault.DropAfter]): each request
// takes effect, but its client sees a transport error.
func (s *Server) DropAfterNext(method, pattern string, n int) {
	s.React(method, pattern, nTimes(n, Fault{DropAfter: true}))
}

// RateLimitNext answers the next n matching requests with 429,
// ERR_NGROK_226 and a Retry-After header of retryAfter (whole seconds,
// rounded up).
func (s *Server) RateLimitNext(method, pattern string, n int, retryAfter time.Duration) {
	secs := int((retryAfter + time.Second - 1) / time.Second)
	s.React(method, pattern, nTimes(n, Fault{Status: http.StatusTooManyRequests,
		Header: http.Header{"Retry-After": {strconv.Itoa(secs)}}}))
}

// Latency delays every matching request by d before it is served. It
// returns a function that removes the delay.
func (s *Server) Latency(method, pattern string, d time.Duration) (remove func()) {
	return s.React(method, pattern, func(*http.Request) *Fault { return &Fault{Delay: d} })
}

// matchPattern matches a request path against a reactor pattern.
func matchPattern(pattern, p string) bool {
	if prefix, ok := strings.CutSuffix(pattern, "/**"); ok {
		return prefix == "" || p == prefix || strings.HasPrefix(p, prefix+"/")
	}
	ok, _ := path.Match(pattern, p)
	return ok
}

// react runs the reactors; a non-zero status or an error means one answered.
// Reactors run with no lock of the server held. When one returned a Fault
// with DropAfter, react does not return: it computes the answer (the
// fault's or the server's), journals it and drops the connection.
func (s *Server) react(c *call) (int, any, error) {
	s.faults.mu.Lock()
	rs := append([]reactorEntry(nil), s.faults.reactors...)
	s.faults.mu.Unlock()
	dropAfter := false
	for _, r := range rs {
		if r.method != "" && r.method != "*" && r.method != c.r.Method {
			continue
		}
		if !matchPattern(r.pattern, c.r.URL.Path) {
			continue
		}
		f := r.fn(c.r)
		if f == nil {
			continue
		}
		if f.Delay > 0 {
			t := time.NewTimer(f.Delay)
			select {
			case <-t.C:
			case <-c.r.Context().Done():
				t.Stop()
			}
		}
		if f.Drop {
			panic(http.ErrAbortHandler)
		}
		dropAfter = dropAfter || f.DropAfter
		if f.Status == 0 {
			continue
		}
		code, msg := f.Code, f.Msg
		if code == "" {
			code = defaultCode(f.Status)
		}
		if msg == "" {
			msg = "Injected fault: " + http.StatusText(f.Status) + "."
		}
		err := &apiError{status: f.Status, code: code, msg: msg, header: f.Header}
		if dropAfter {
			s.dropAnswer(c, c.body, 0, nil, err)
		}
		return 0, nil, err
	}
	if dropAfter {
		body := c.body // as it came: serve may replace an empty body
		status, out, err := s.serve(c, unreadBody(c))
		s.dropAnswer(c, body, status, out, err)
	}
	return 0, nil, nil
}

// unreadBody is the error serveHTTP had reading c's body, as far as it
// can be told from the body it kept (serveHTTP does not hand it to react):
// a body shorter than its Content-Length and not over the size limit was
// cut short.
func unreadBody(c *call) error {
	if n := len(c.body); n <= MaxBodyBytes && int64(n) < c.r.ContentLength {
		return io.ErrUnexpectedEOF
	}
	return nil
}

// dropAnswer journals the answer to c that serveHTTP would have written
// (status and out, or err) and then closes the connection without writing
// it. body is the request body as it came. It is called with no lock of
// the server held, after any write of the request has committed.
func (s *Server) dropAnswer(c *call, body []byte, status int, out any, err error) {
	var raw []byte
	if err != nil {
		var ae *apiError
		if !errors.As(err, &ae) {
			ae = errorf(http.StatusInternalServerError, acctapi.CodeInternal, "internal error: %v", err)
		}
		status = ae.status
		raw, _ = json.Marshal(ae.body(c.opID))
	} else if out != nil {
		var merr error
		if raw, merr = json.Marshal(out); merr != nil {
			status = http.StatusInternalServerError
			raw, _ = json.Marshal(errorf(status, acctapi.CodeInternal, "internal error: encoding response").body(c.opID))
		}
	}
	entry := Entry{Time: c.now, Method: c.r.Method, Path: c.r.URL.Path, Query: c.r.URL.RawQuery, Status: status, OperationID: c.opID}
	s.journal.add(journalEntry{Entry: entry, req: clip(body), resp: clip(raw)})
	panic(http.ErrAbortHandler)
}

// defaultCode is the error code an injected fault of a status carries.
func defaultCode(status int) string {
	switch {
	case status == http.StatusTooManyRequests:
		return acctapi.CodeRateLimited
	case status == http.StatusNotFound:
		return acctapi.CodeNotFound
	case status == http.StatusServiceUnavailable:
		return acctapi.CodeUnavailable
	case status >= 500:
		return acctapi.CodeInternal
	}
	return acctapi.CodeInvalidValue
}
