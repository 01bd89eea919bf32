package fake

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"maps"
	"net/http"
	"net/url"
	"path"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/acctapi/acctapi"
	"github.com/acctapi/acctapi/events"
	"github.com/acctapi/acctapi/internal/field"
	"github.com/acctapi/acctapi/internal/resources"
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
//
// [Fault.Validate] says which Faults make no sense; the helpers that take
// one panic with it, and a reactor's Fault that fails it is answered 500
// and fails the test of [Start]'s server.
type Fault struct {
	// Status is the answer's status, from 400 to 599; 0 answers nothing.
	// (A fault's answer is the contract's error body, which under a
	// success or redirect status a client would read as a resource.)
	Status int
	// Code is the answer's error_code; empty picks one for the status
	// (ERR_NGROK_226 for 429, for example). It needs a Status.
	Code string
	// Msg is the answer's msg; empty says which fault it is. It needs a
	// Status.
	Msg string
	// Header is added to the answer. It needs a Status. Its names are
	// valid header names in canonical form ("Retry-After", as
	// http.Header.Set writes them), each with at least one value free of
	// control characters but tab; the headers the server sets itself
	// (Content-Type, Content-Length, Transfer-Encoding, Connection,
	// Trailer, Operation-Id, Ngrok-Operation-Id) are not a Fault's to set.
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

// Validate reports what makes f senseless, if anything, as an
// [acctapi.FieldError] naming the Fault's field: a Status other than 0 or
// 400 to 599; a negative Delay; a Code, Msg or Header without a Status
// (they are parts of its answer); Drop with a Status, Code, Msg, Header or
// DropAfter (a dropped request is answered nothing); a Fault that does
// nothing (no Status, Delay, Drop or DropAfter); and a Header that would
// not reach the client as given (see [Fault.Header]), its reason naming
// the header: an invalid or non-canonical name, which net/http drops or
// the in-memory client does not find, a header the server sets itself,
// one with no value, or a value with a control character.
func (f Fault) Validate() error {
	switch {
	case f.Status != 0 && (f.Status < 400 || f.Status > 599):
		return field.Invalid("Status", "%d is not from 400 to 599", f.Status)
	case f.Delay < 0:
		return field.Invalid("Delay", "%v is negative", f.Delay)
	case f.Drop && (f.Status != 0 || f.Code != "" || f.Msg != "" || f.Header != nil || f.DropAfter):
		return field.Invalid("Drop", "answers nothing: it takes no Status, Code, Msg, Header or DropAfter")
	case f.Status == 0 && (f.Code != "" || f.Msg != "" || f.Header != nil):
		return field.Invalid("Status", "is 0, but Code, Msg and Header are parts of an answer with a status")
	case f.Status == 0 && f.Delay == 0 && !f.Drop && !f.DropAfter:
		return field.Invalid("Status", "is 0, and the fault does nothing: give it a Status, a Delay, Drop or DropAfter")
	}
	return checkFaultHeader(f.Header)
}

// serverHeaders are the headers the server sets on every answer, or that
// frame it (net/http's and the in-memory transport's): a Fault's Header
// setting one would be ignored, or would break the answer (a
// Content-Length that is not the body's) while the journal records it
// whole.
var serverHeaders = []string{"Connection", "Content-Length", "Content-Type", "Ngrok-Operation-Id", "Operation-Id", "Trailer", "Transfer-Encoding"}

// checkFaultHeader reports the first header of h, in name order, that
// would not reach the client as given.
func checkFaultHeader(h http.Header) error {
	for _, name := range slices.Sorted(maps.Keys(h)) {
		q := strconv.Quote(truncate(name, 64))
		switch canon := http.CanonicalHeaderKey(name); {
		case !field.IsToken(name):
			return field.Invalid("Header", "%s is not a header name (RFC 9110 token): net/http would drop it", q)
		case canon != name:
			return field.Invalid("Header", "%s is not in canonical form: write %q, as http.Header.Set does", q, canon)
		case slices.Contains(serverHeaders, name):
			return field.Invalid("Header", "%s is set by the server, not by a fault", q)
		case len(h[name]) == 0:
			return field.Invalid("Header", "%s has no value", q)
		}
		for _, v := range h[name] {
			if strings.ContainsFunc(v, func(r rune) bool { return (r < ' ' && r != '\t') || r == 0x7f }) {
				return field.Invalid("Header", "%s has a value with a control character: %q", q, truncate(v, 64))
			}
		}
	}
	return nil
}

// Reactor decides whether to take over a request: it returns the [Fault]
// to answer with, or nil to let the request go on. It runs after the
// request's authentication has been checked (a Fault's answer still wins
// over an authentication error; the request of one that failed it, or
// that fails the version check, has no body: the server does not read
// it), never while the store is locked, and may be called from several
// goroutines at once.
type Reactor func(r *http.Request) *Fault

type reactorEntry struct {
	id      int
	method  string
	pattern *Pattern
	fn      Reactor
}

// MaxReactors is the most reactors a server holds at once (those of
// [Server.React] and of every fault helper): adding one more panics, and
// cmd/acctfake answers 400, so that the reactors a request runs past stay
// few.
const MaxReactors = 1000

type faults struct {
	mu       sync.Mutex
	next     int
	reactors []reactorEntry
}

// React adds a reactor for requests whose method is method ("" or "*" for
// any) and whose path matches pattern, a pattern as [MatchPath] takes it
// ("/service_users/*", "/backends/**", "/**" for all). Reactors run in the
// order they were added; the first that returns a Fault answers. React
// returns a function that removes the reactor.
//
// React panics, with a message saying what is wrong, when method is not
// one the fake serves (in upper case: "GET", "POST", "PATCH", "DELETE"),
// when pattern is malformed, or when it matches no path the fake serves
// with that method: such a reactor could never run, and a test relying on
// it would pass or fail for the wrong reason. [Server.CheckTarget]
// reports the same as an error. React and the fault helpers also panic
// when the server already holds [MaxReactors] reactors.
func (s *Server) React(method, pattern string, fn Reactor) (remove func()) {
	s.mustTarget("React", method, pattern)
	if fn == nil {
		panic("fake: React: nil reactor")
	}
	return s.addReactor("React", method, pattern, fn)
}

// addReactor adds a reactor whose method and pattern have been checked;
// it panics, naming the helper fn, when the server has MaxReactors.
func (s *Server) addReactor(fn, method, pattern string, r Reactor) (remove func()) {
	pat, err := ParsePattern(pattern)
	if err != nil {
		panic(err) // checked by mustTarget
	}
	s.faults.mu.Lock()
	defer s.faults.mu.Unlock()
	if len(s.faults.reactors) >= MaxReactors {
		panic(fmt.Sprintf("fake: %s: the server already has %d reactors, the most it holds (MaxReactors); remove some first", fn, MaxReactors))
	}
	s.faults.next++
	id := s.faults.next
	// A new slice each time: react reads the old one without the lock.
	s.faults.reactors = append(s.faults.reactors[:len(s.faults.reactors):len(s.faults.reactors)], reactorEntry{id: id, method: anyMethod(method), pattern: pat, fn: r})
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

// anyMethod returns method with "*", which callers may write for any
// method, as "", which the fake stores and compares.
func anyMethod(method string) string {
	if method == "*" {
		return ""
	}
	return method
}

// ClearFaults removes every reactor.
func (s *Server) ClearFaults() {
	s.faults.mu.Lock()
	defer s.faults.mu.Unlock()
	s.faults.reactors = nil
}

// FaultNext answers the next n requests matching method and pattern (see
// [Server.React]) with f, then stops; n is 1 or more. It is the general
// form of [Server.FailNext], [Server.DropNext], [Server.DropAfterNext] and
// [Server.RateLimitNext], for a fault with its own error code and message
// (f.Code, f.Msg), headers, or a delay. It returns a function that removes
// the fault before it is used up.
//
// FaultNext panics, as React does, on a method or pattern that could never
// match, and also on an n under 1 (a fault for no request would let a test
// that relies on it pass without it) and on a Fault that [Fault.Validate]
// refuses.
func (s *Server) FaultNext(method, pattern string, n int, f Fault) (remove func()) {
	return s.faultNext("FaultNext", method, pattern, n, f)
}

// faultNext is FaultNext for the helper fn, which its panics name.
func (s *Server) faultNext(fn, method, pattern string, n int, f Fault) (remove func()) {
	s.mustTarget(fn, method, pattern)
	if err := checkFault(n, f); err != nil {
		panic("fake: " + fn + ": " + err.Error())
	}
	return s.reactN(fn, method, pattern, n, f)
}

// checkFault checks what FaultNext and its shorthands are given.
func checkFault(n int, f Fault) error {
	if n < 1 {
		return fmt.Errorf("n = %d; want 1 or more", n)
	}
	if err := f.Validate(); err != nil {
		return errors.New(faultMessage(err))
	}
	return nil
}

// faultMessage words a Validate error for a message: "Fault.Status 204
// is not from 400 to 599".
func faultMessage(err error) string {
	var fe *field.Error
	if errors.As(err, &fe) {
		return fmt.Sprintf("Fault.%s %s", fe.Field, fe.Reason)
	}
	return err.Error()
}

// reactN adds a reactor that returns f for the next n (1 or more) matching
// requests and then removes itself; method and pattern have been checked.
func (s *Server) reactN(fn, method, pattern string, n int, f Fault) (remove func()) {
	var mu sync.Mutex
	left := n
	mu.Lock() // until remove is set: a request may reach the reactor first
	defer mu.Unlock()
	remove = s.addReactor(fn, method, pattern, func(*http.Request) *Fault {
		mu.Lock()
		defer mu.Unlock()
		if left <= 0 {
			return nil
		}
		if left--; left == 0 {
			remove() // react holds no lock while reactors run
		}
		cp := f
		cp.Header = f.Header.Clone()
		return &cp
	})
	return remove
}

// FailNext answers the next n requests matching method and pattern (see
// [Server.React]) with status and the contract's error body, whose code is
// the status's usual one (see [Fault.Code]); [Server.FaultNext] sets a code
// and message of its own. It returns a function that removes the fault
// before it is used up. It panics as FaultNext does, on a status that is
// not from 400 to 599 in particular.
func (s *Server) FailNext(method, pattern string, n, status int) (remove func()) {
	if status < 400 || status > 599 {
		panic(fmt.Sprintf("fake: FailNext: status %d is not from 400 to 599", status))
	}
	return s.faultNext("FailNext", method, pattern, n, Fault{Status: status})
}

// DropNext closes the connection of the next n matching requests without
// answering them. It returns a function that removes the fault before it
// is used up, and panics as [Server.FaultNext] does.
//
// Over TCP, net/http's Transport resends a GET, HEAD, OPTIONS or TRACE
// request (or one with an Idempotency-Key or X-Idempotency-Key header) by
// itself, once, on a new
// connection, when a reused connection closes before any answer: as it
// would against the real service. The client then gets the second answer,
// and the journal shows the drop and the resend. For the code under test
// to see the drop of such a request, drop two (n = 2), or serve it in
// memory ([WithoutListener]), where nothing resends.
func (s *Server) DropNext(method, pattern string, n int) (remove func()) {
	return s.faultNext("DropNext", method, pattern, n, Fault{Drop: true})
}

// DropAfterNext serves the next n matching requests and then closes their
// connections before answering them (see [Fault.DropAfter]): each request
// takes effect, but its client sees a transport error. It returns a
// function that removes the fault before it is used up, and panics as
// [Server.FaultNext] does.
func (s *Server) DropAfterNext(method, pattern string, n int) (remove func()) {
	return s.faultNext("DropAfterNext", method, pattern, n, Fault{DropAfter: true})
}

// RateLimitNext answers the next n matching requests with 429,
// ERR_NGROK_226 and a Retry-After header of retryAfter (whole seconds,
// rounded up, at least 1). It returns a function that removes the fault
// before it is used up, and panics as [Server.FaultNext] does, and on a
// negative retryAfter.
func (s *Server) RateLimitNext(method, pattern string, n int, retryAfter time.Duration) (remove func()) {
	if retryAfter < 0 {
		panic(fmt.Sprintf("fake: RateLimitNext: retryAfter %v is negative", retryAfter))
	}
	secs := max(1, int((retryAfter+time.Second-1)/time.Second))
	return s.faultNext("RateLimitNext", method, pattern, n, Fault{Status: http.StatusTooManyRequests,
		Header: http.Header{"Retry-After": {strconv.Itoa(secs)}}})
}

// Latency delays every matching request by d before it is served, in real
// time (see [Fault.Delay]). It returns a function that removes the delay.
// It panics as [Server.React] does, and on a d that is not positive (a
// delay of nothing would let a test that relies on it pass without it).
func (s *Server) Latency(method, pattern string, d time.Duration) (remove func()) {
	s.mustTarget("Latency", method, pattern)
	if d <= 0 {
		panic(fmt.Sprintf("fake: Latency: delay %v is not positive", d))
	}
	return s.addReactor("Latency", method, pattern, func(*http.Request) *Fault { return &Fault{Delay: d} })
}

// MaxPatternBytes is the longest path pattern the fake takes: longer ones
// are refused (by [ParsePattern], [MatchPath], [Server.CheckTarget] and
// the fault helpers, and by cmd/acctfake with 400), so that matching a
// pattern against a path costs little whatever the two hold.
const MaxPatternBytes = 256

// maxSegmentAtoms is the most characters and wildcards a segment of a
// pattern with a wildcard may hold: the matcher keeps one bit for each.
const maxSegmentAtoms = 63

// Pattern is a path pattern, parsed once by [ParsePattern], that matches
// request paths: how reactors and [JournalFilter] (cmd/acctfake's journal
// filter among them) match paths. A Pattern is immutable and safe for concurrent use; matching one
// costs time in proportion to the path's length, whatever the pattern.
type Pattern struct {
	src  string
	deep bool         // the pattern ended in "/**"
	segs []patternSeg // its segments after the leading "/", without the "/**"
}

// patternSeg is one segment of a pattern: a literal, or a list of atoms
// that a bit-parallel automaton runs over a path segment (bit i set: the
// first i atoms matched).
type patternSeg struct {
	lit   string // the segment, when it has no wildcard or escape
	atoms []patternAtom
	stars uint64 // bit i: atom i is a star
}

// patternAtom is one step of a segment: a star, '?', a class or one rune.
type patternAtom struct {
	kind   byte // '*', '?', '[' or 0 for the rune r
	r      rune
	neg    bool
	ranges [][2]rune
}

// ParsePattern checks pattern and returns it parsed for matching. A
// pattern is a [path.Match] pattern that starts with "/", where a final
// "/**" also matches any deeper path ("/service_users/*" matches one
// service user's path, "/backends/**" everything under /backends, "/**"
// every path). A "/" always separates segments (a class cannot match one)
// and '*', '?' and classes match within one segment. ParsePattern returns
// an error for a pattern that does not start with "/", a malformed one,
// one that is not UTF-8, one longer than [MaxPatternBytes], and one with a
// segment of more than 63 characters and wildcards that holds a wildcard.
//
// ParsePattern checks the pattern's form only, not the fake's routes: a
// pattern with a typo ("/service_user/*") parses, and matches nothing. To
// look for requests in the journal, use [Server.JournalMatching] or
// [Server.JournalFilter], which refuse a pattern that no path the fake
// serves matches ([Server.CheckTarget]), so that an assertion that no
// such request was made cannot pass on a typo.
func ParsePattern(pattern string) (*Pattern, error) {
	q := strconv.Quote(truncate(pattern, 64))
	switch {
	case len(pattern) > MaxPatternBytes:
		return nil, fmt.Errorf("fake: pattern %s is %d bytes long; a pattern is at most %d", q, len(pattern), MaxPatternBytes)
	case !strings.HasPrefix(pattern, "/"):
		return nil, fmt.Errorf("fake: pattern %s does not start with /", q)
	case !utf8.ValidString(pattern):
		return nil, fmt.Errorf("fake: pattern %s is not UTF-8", q)
	}
	p := &Pattern{src: pattern}
	rest, deep := strings.CutSuffix(pattern, "/**")
	p.deep = deep
	if deep && rest == "" {
		return p, nil
	}
	for _, seg := range strings.Split(rest[1:], "/") {
		if _, err := path.Match(seg, ""); err != nil {
			return nil, fmt.Errorf("fake: pattern %s: %w", q, err)
		}
		ps, err := parseSegment(seg)
		if err != nil {
			return nil, fmt.Errorf("fake: pattern %s: %w", q, err)
		}
		p.segs = append(p.segs, ps)
	}
	return p, nil
}

// parseSegment parses a segment that path.Match accepts.
func parseSegment(seg string) (patternSeg, error) {
	if !strings.ContainsAny(seg, `*?[\`) {
		return patternSeg{lit: seg}, nil
	}
	var ps patternSeg
	rune1 := func(i int) (rune, int) { // a rune, escaped or not, at seg[i]
		if seg[i] == '\\' {
			i++
		}
		r, n := utf8.DecodeRuneInString(seg[i:])
		return r, i + n
	}
	for i := 0; i < len(seg); {
		a := patternAtom{kind: seg[i]}
		switch seg[i] {
		case '*':
			i++
			if n := len(ps.atoms); n > 0 && ps.atoms[n-1].kind == '*' {
				continue // "**" within a segment is "*"
			}
		case '?':
			i++
		case '[':
			i++
			if seg[i] == '^' {
				a.neg = true
				i++
			}
			for len(a.ranges) == 0 || seg[i] != ']' {
				var lo, hi rune
				lo, i = rune1(i)
				hi = lo
				if seg[i] == '-' {
					hi, i = rune1(i + 1)
				}
				a.ranges = append(a.ranges, [2]rune{lo, hi})
			}
			i++
		default:
			a.kind = 0
			a.r, i = rune1(i)
		}
		if len(ps.atoms) == maxSegmentAtoms {
			return patternSeg{}, fmt.Errorf("segment %q has more than %d characters and wildcards", truncate(seg, 64), maxSegmentAtoms)
		}
		if a.kind == '*' {
			ps.stars |= 1 << len(ps.atoms)
		}
		ps.atoms = append(ps.atoms, a)
	}
	return ps, nil
}

// matches reports whether a matches the rune r of a path segment; bad
// reports that r stands for a byte that is not UTF-8, which only '?' and
// a class match (as path.Match has them).
func (a *patternAtom) matches(r rune, bad bool) bool {
	switch a.kind {
	case '?':
		return true
	case '[':
		in := false
		for _, rg := range a.ranges {
			if rg[0] <= r && r <= rg[1] {
				in = true
				break
			}
		}
		return in != a.neg
	}
	return !bad && a.r == r
}

// match reports whether the path segment s (which holds no "/") matches.
// It runs every atom in parallel over s, one step a rune: each rune's mask
// of the atoms that match it is computed once per call for an ASCII rune,
// and for the others unless the rune repeats the one before.
func (ps *patternSeg) match(s string) bool {
	if ps.atoms == nil {
		return s == ps.lit
	}
	var ascii [utf8.RuneSelf]uint64
	var seen [2]uint64 // bit c: ascii[c] is computed
	mask := func(r rune, bad bool) uint64 {
		var m uint64
		for i := range ps.atoms {
			if a := &ps.atoms[i]; a.kind != '*' && a.matches(r, bad) {
				m |= 1 << i
			}
		}
		return m
	}
	final := uint64(1) << len(ps.atoms)
	state := ps.closure(1)
	lastR, lastBad, lastM := rune(-1), false, uint64(0)
	for i := 0; i < len(s); {
		var m uint64
		if c := s[i]; c < utf8.RuneSelf {
			if seen[c>>6]&(1<<(c&63)) == 0 {
				ascii[c] = mask(rune(c), false)
				seen[c>>6] |= 1 << (c & 63)
			}
			m = ascii[c]
			i++
		} else {
			r, n := utf8.DecodeRuneInString(s[i:])
			bad := r == utf8.RuneError && n == 1
			if r != lastR || bad != lastBad {
				lastR, lastBad, lastM = r, bad, mask(r, bad)
			}
			m = lastM
			i += n
		}
		state = ps.closure((state&m)<<1 | state&ps.stars)
		if state == 0 {
			return false
		}
	}
	return state&final != 0
}

// closure adds to state what a star lets match nothing: the atom after
// it. No two stars are next to each other, so once is enough.
func (ps *patternSeg) closure(state uint64) uint64 {
	return state | (state&ps.stars)<<1
}

// String returns the pattern as written.
func (p *Pattern) String() string { return p.src }

// Match reports whether the request path matches p. path is as escaped
// on the wire (a journal [Entry]'s Path); its segments are unescaped as
// routing unescapes them, each on its own, so "/api%5Fkeys" matches
// "/api_keys" as it is served, while "/service_users%2Fx", one segment no
// route serves, does not match "/service_users/*".
func (p *Pattern) Match(path string) bool {
	if p.deep && len(p.segs) == 0 {
		return true // "/**"
	}
	if !strings.HasPrefix(path, "/") {
		return false
	}
	rest := path[1:]
	for i := range p.segs {
		seg, tail, more := strings.Cut(rest, "/")
		if strings.IndexByte(seg, '%') >= 0 {
			if u, err := url.PathUnescape(seg); err == nil {
				seg = u
			}
		}
		if !p.segs[i].match(seg) {
			return false
		}
		if !more {
			// The path ends here: a deep pattern matches its prefix
			// itself, any pattern a path of as many segments.
			return i == len(p.segs)-1
		}
		rest = tail
	}
	return p.deep
}

// MatchPath reports whether the request path p matches pattern, a pattern
// as [ParsePattern] takes it. It returns an error for a pattern that
// ParsePattern refuses, whatever p is; to match one pattern against many
// paths, parse it once. Like ParsePattern, it does not check the pattern
// against the fake's routes: to filter the journal, use
// [Server.JournalMatching], which does.
func MatchPath(pattern, p string) (bool, error) {
	pat, err := ParsePattern(pattern)
	if err != nil {
		return false, err
	}
	return pat.Match(p), nil
}

// CheckTarget reports, as an error saying what is wrong, whether a
// reactor for method and pattern could never run: method is neither "",
// "*" nor one the fake serves (in upper case), pattern is malformed or too
// long (see [ParsePattern]), or no path the fake serves with that method
// matches it. A segment where a path has an item's id matches only what
// can be an id of that collection: the fake's ids are the collection's
// prefix, "_" and 27 letters and digits ("ak_…" under /api_keys,
// "service_…" under /service_users and /bot_users, "bkdhr_…" under
// /backends/http_response), so "/api_keys/service_*" matches nothing. A
// literal segment is taken as a made-up id (the fake answers it 404)
// unless it is another collection's id ("/api_keys/service_2abc"). A
// subscription's source segment matches only what an event type
// matches: "/event_subscriptions/*/sources/api_key_created" (without its
// ".v0") matches nothing.
// [Server.React] and the helpers panic on what it reports; cmd/acctfake
// uses it to answer 400.
func (s *Server) CheckTarget(method, pattern string) error {
	method = anyMethod(method)
	if method != "" && !s.routes.serves(method) {
		return fmt.Errorf("fake: method %q is not one the fake serves (%s), or \"\" or \"*\" for any", truncate(method, 16), strings.Join(s.routes.methods(), ", "))
	}
	pat, err := ParsePattern(pattern)
	if err != nil {
		return err
	}
	if ok, miss := s.routes.matchable(method, pat); !ok {
		with := ""
		if method != "" {
			with = " with " + method
		}
		if miss != "" {
			return fmt.Errorf(`fake: pattern %q %s, so it matches no path the fake serves%s`, truncate(pattern, 64), miss, with)
		}
		return fmt.Errorf(`fake: pattern %q matches no path the fake serves%s (such as "/service_users", "/service_users/*", "/backends/**", "/**")`, truncate(pattern, 64), with)
	}
	return nil
}

// mustTarget panics with CheckTarget's error, prefixed with the caller.
func (s *Server) mustTarget(fn, method, pattern string) {
	if err := s.CheckTarget(method, pattern); err != nil {
		panic("fake: " + fn + ": " + strings.TrimPrefix(err.Error(), "fake: "))
	}
}

// serves reports whether a route serves method.
func (rt *router) serves(method string) bool {
	for _, r := range rt.routes {
		if r.methods[method] != nil {
			return true
		}
	}
	return false
}

// methods lists the methods the routes serve, sorted.
func (rt *router) methods() []string {
	var ms []string
	for _, r := range rt.routes {
		for m := range r.methods {
			if !slices.Contains(ms, m) {
				ms = append(ms, m)
			}
		}
	}
	slices.Sort(ms)
	return ms
}

// matchable reports whether a pattern matches a path of some route that
// serves method ("": any). A literal segment of a route must match the
// pattern's segment; a parameter matches any segment but an empty one,
// and a parameter that is an item's id (see idPrefixes) only a segment
// that can be such an id. When no route matches, miss says why the
// first route that failed only on an id failed ("" for none).
func (rt *router) matchable(method string, p *Pattern) (ok bool, miss string) {
	if p.deep && len(p.segs) == 0 {
		return len(rt.routes) > 0, ""
	}
	for _, r := range rt.routes {
		if method != "" && r.methods[method] == nil {
			continue
		}
		if len(r.segs) < len(p.segs) || (!p.deep && len(r.segs) != len(p.segs)) {
			continue
		}
		ok, idMiss := true, ""
		for i := range p.segs {
			if r.segs[i] == "" {
				ok = p.segs[i].lit != "" || p.segs[i].atoms != nil
				if coll := strings.Join(r.segs[:i], "/"); ok && idPrefixes[coll] != "" && !p.segs[i].canMatchID(idPrefixes[coll]) {
					// Go on: a later segment may fail too, which makes
					// the route no near miss.
					if idMiss == "" {
						idMiss = fmt.Sprintf("matches no id of %s: their ids start %s_ (and 27 letters and digits)", coll, idPrefixes[coll])
					}
				}
				// A subscription's source is named by its event type: a
				// pattern that no type matches (api_key_created without
				// its .v0) never fires.
				if ok && i > 0 && r.segs[i-1] == "sources" && idMiss == "" &&
					!slices.ContainsFunc(events.Types(), p.segs[i].match) {
					idMiss = "matches no event type: a source is named by its type, such as api_key_created.v0"
				}
			} else {
				ok = p.segs[i].match(r.segs[i])
			}
			if !ok {
				break
			}
		}
		if ok && idMiss == "" {
			return true, ""
		}
		if ok && miss == "" {
			miss = idMiss
		}
	}
	return false, miss
}

// idPrefixes is the id prefix of the items of each collection with an API
// path ("api_keys": "ak"), its alias included ("bot_users": "service"),
// from the one description of the resources: the fake makes every id it
// stores "<prefix>_" and 27 base-62 characters. A route's parameter that
// follows such a collection's path is an item's id (of the item itself,
// or of the parent of a sub-resource).
var idPrefixes = func() map[string]string {
	m := map[string]string{}
	for _, d := range resources.All() {
		if d.NoAPI {
			continue
		}
		m[d.Name] = d.Prefix
		if d.Alias != "" {
			m[d.Alias] = d.Prefix
		}
	}
	return m
}()

// canMatchID reports whether ps matches some id of prefix. A pattern
// with wildcards must match a segment that starts with prefix and "_",
// then base-62 characters only (of any length: a test may name an id it
// made up, "service_1"). A literal names a path the fake serves, and
// answers 404 for when the id is made up ("does-not-exist", "svc_a"), so
// it is refused only when it is plainly another collection's id (another
// prefix and "_": /api_keys/service_… for a user's id where a key's was
// meant), as such a fault would never fire on the request meant.
func (ps *patternSeg) canMatchID(prefix string) bool {
	if ps.atoms == nil {
		_, p, known := resources.OwnerOf(ps.lit)
		return !known || p == prefix
	}
	// The atoms that can match each character, as match computes them;
	// then the states reachable over the prefix, and over any base-62
	// characters after it.
	mask := func(r rune) uint64 {
		var m uint64
		for i := range ps.atoms {
			if a := &ps.atoms[i]; a.kind != '*' && a.matches(r, false) {
				m |= 1 << i
			}
		}
		return m
	}
	step := func(state uint64, r rune) uint64 {
		return ps.closure((state&mask(r))<<1 | state&ps.stars)
	}
	state := ps.closure(1)
	for _, r := range prefix + "_" {
		if state = step(state, r); state == 0 {
			return false
		}
	}
	final := uint64(1) << len(ps.atoms)
	for {
		if state&final != 0 {
			return true
		}
		next := state
		for _, r := range base62 {
			next |= step(state, r)
		}
		if next == state {
			return false
		}
		state = next
	}
}

// reaction is what the reactors decided for a request.
type reaction struct {
	answer    *apiError // a fault's answer instead of the server's
	drop      bool      // close the connection before serving
	dropAfter bool      // serve (or answer), then close without writing it
	ran       bool      // a reactor was called (it may have delayed or written)
}

// react runs the reactors, with no lock of the server held. Each sees the
// request with its body, which the server has already read — or, for a
// request that failed authentication or fails the version check, whose
// body is never read, with an empty body. A reactor that panics, or returns a Fault that
// [Fault.Validate] refuses (which only a Reactor of React's can: the
// helpers check theirs when added), is answered with 500 and the reason,
// and fails Start's test (see misuse).
func (s *Server) react(c *call) reaction {
	s.faults.mu.Lock()
	rs := s.faults.reactors // never modified in place: React and remove copy
	s.faults.mu.Unlock()
	var re reaction
	for _, r := range rs {
		if r.method != "" && r.method != c.r.Method {
			continue
		}
		// The path as routed: escaped, so "/service_users%2Fx", one
		// segment that no route serves, is not "/service_users/x".
		if !r.pattern.Match(c.r.URL.EscapedPath()) {
			continue
		}
		re.ran = true
		f, err := callReactor(r.fn, c)
		if err != nil {
			s.misuse(fmt.Sprintf("%s %s: %s", c.r.Method, c.r.URL.EscapedPath(), err.msg))
			re.answer = err
			return re
		}
		if f == nil {
			continue
		}
		if err := f.Validate(); err != nil {
			re.answer = errorf(http.StatusInternalServerError, acctapi.CodeInternal, "A reactor returned an invalid fault: %s.", faultMessage(err))
			s.misuse(fmt.Sprintf("%s %s: %s", c.r.Method, c.r.URL.EscapedPath(), re.answer.msg))
			return re
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
