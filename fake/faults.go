package fake

import (
	"bytes"
	"fmt"
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
	// Status is the answer's status, from 200 to 599; 0 answers nothing.
	Status int
	// Code is the answer's error_code; empty picks one for the status
	// (ERR_NGROK_226 for 429, for example).
	Code string
	// Msg is the answer's msg; empty says which fault it is.
	Msg string
	// Header is added to the answer.
	Header http.Header
	// Delay is waited, in real time (not the server's [Clock]; fake time
	// under testing/synctest), before anything else; a cancelled request
	// stops waiting.
	Delay time.Duration
	// Drop closes the connection before the request is served.
	Drop bool
	// DropAfter closes the connection instead of writing the answer.
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
	// A new slice each time: react reads the old one without the lock.
	s.faults.reactors = append(s.faults.reactors[:len(s.faults.reactors):len(s.faults.reactors)], reactorEntry{id: id, method: method, pattern: pattern, fn: fn})
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

// reactN adds a reactor that returns f for the next n matching requests and
// then removes itself.
func (s *Server) reactN(method, pattern string, n int, f Fault) {
	if n <= 0 {
		return
	}
	var mu sync.Mutex
	left := n
	var remove func()
	mu.Lock() // until remove is set: a request may reach the reactor first
	defer mu.Unlock()
	remove = s.React(method, pattern, func(*http.Request) *Fault {
		mu.Lock()
		defer mu.Unlock()
		if left <= 0 {
			return nil
		}
		if left--; left == 0 {
			remove() // react holds no lock while reactors run
		}
		cp := f
		return &cp
	})
}

// FailNext answers the next n requests matching method and pattern (see
// [Server.React]) with status and the contract's error body.
func (s *Server) FailNext(method, pattern string, n, status int) {
	s.reactN(method, pattern, n, Fault{Status: status})
}

// DropNext closes the connection of the next n matching requests without
// answering them.
func (s *Server) DropNext(method, pattern string, n int) {
	s.reactN(method, pattern, n, Fault{Drop: true})
}

// DropAfterNext serves the next n matching requests and then closes their
// connections before answering them (see [Fault.DropAfter]): each request
// takes effect, but its client sees a transport error.
func (s *Server) DropAfterNext(method, pattern string, n int) {
	s.reactN(method, pattern, n, Fault{DropAfter: true})
}

// RateLimitNext answers the next n matching requests with 429,
// ERR_NGROK_226 and a Retry-After header of retryAfter (whole seconds,
// rounded up, at least 1).
func (s *Server) RateLimitNext(method, pattern string, n int, retryAfter time.Duration) {
	secs := max(1, int((retryAfter+time.Second-1)/time.Second))
	s.reactN(method, pattern, n, Fault{Status: http.StatusTooManyRequests,
		Header: http.Header{"Retry-After": {strconv.Itoa(secs)}}})
}

// Latency delays every matching request by d before it is served, in real
// time (see [Fault.Delay]). It returns a function that removes the delay.
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

// reaction is what the reactors decided for a request.
type reaction struct {
	answer    *apiError // a fault's answer instead of the server's
	drop      bool      // close the connection before serving
	dropAfter bool      // serve (or answer), then close without writing it
}

// react runs the reactors, with no lock of the server held. Each sees the
// request with its body, which the server has already read. A reactor that
// panics, or returns a Fault whose Status is not from 200 to 599, is
// answered with 500 and the reason.
func (s *Server) react(c *call) reaction {
	s.faults.mu.Lock()
	rs := s.faults.reactors // never modified in place: React and remove copy
	s.faults.mu.Unlock()
	var re reaction
	for _, r := range rs {
		if r.method != "" && r.method != "*" && r.method != c.r.Method {
			continue
		}
		if !matchPattern(r.pattern, c.r.URL.Path) {
			continue
		}
		f, err := callReactor(r.fn, c)
		if err != nil {
			re.answer = err
			return re
		}
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
			re.drop = true
			return re
		}
		re.dropAfter = re.dropAfter || f.DropAfter
		if f.Status == 0 {
			continue
		}
		if f.Status < 200 || f.Status > 599 {
			re.answer = errorf(http.StatusInternalServerError, acctapi.CodeInternal, "A reactor's fault has status %d, not one from 200 to 599.", f.Status)
			return re
		}
		code, msg := f.Code, f.Msg
		if code == "" {
			code = defaultCode(f.Status)
		}
		if msg == "" {
			msg = "Injected fault: " + http.StatusText(f.Status) + "."
		}
		re.answer = &apiError{status: f.Status, code: code, msg: msg, header: f.Header}
		return re
	}
	return re
}

// callReactor calls fn with a shallow copy of c's request whose body reads
// what the server read, and turns a panic into an error answer.
func callReactor(fn Reactor, c *call) (f *Fault, err *apiError) {
	defer func() {
		if v := recover(); v != nil {
			if v == http.ErrAbortHandler {
				panic(v)
			}
			f, err = nil, errorf(http.StatusInternalServerError, acctapi.CodeInternal, "A reactor panicked: %s.", truncate(fmt.Sprint(v), 200))
		}
	}()
	r := c.r.WithContext(c.r.Context())
	r.Body = io.NopCloser(bytes.NewReader(c.body))
	return fn(r), nil
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
