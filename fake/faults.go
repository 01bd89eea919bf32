package fake

import (
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
// A Fault with Drop set closes the connection without an answer (the client
// sees a transport error). Otherwise, after Delay, a Fault with a Status
// answers with that status and the contract's error body (Code and Msg,
// with defaults for the status) plus Header; a Fault with no Status only
// delays the request, which then goes on to later reactors and the server.
type Fault struct {
	Status int
	Code   string
	Msg    string
	Header http.Header
	Delay  time.Duration
	Drop   bool
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
func (s *Server) react(c *call) (int, any, error) {
	s.faults.mu.Lock()
	rs := append([]reactorEntry(nil), s.faults.reactors...)
	s.faults.mu.Unlock()
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
		return 0, nil, &apiError{status: f.Status, code: code, msg: msg, header: f.Header}
	}
	return 0, nil, nil
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
