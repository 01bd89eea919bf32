package fake

import (
	"bytes"
	"encoding/json"
	"fmt"
	"iter"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"
	"unicode/utf8"
	"unsafe"
)

// maxJournal bounds the journal's entries; the oldest are dropped first.
const maxJournal = 100_000

// maxJournalBody bounds how much of each body the journal keeps: a
// longer one is redacted whole, then cut (see cutBody).
const maxJournalBody = 64 << 10

// DefaultJournalBudget is the most memory, in bytes, that a server's
// journal holds unless [Server.SetJournalBudget] says otherwise: 64 MiB.
// Bodies count at the size of the buffers the journal keeps, plus a fixed
// cost per entry.
const DefaultJournalBudget = 64 << 20

// maxJournalMethod is the most bytes of a request's method an entry
// keeps: a longer one (no method the fake serves) is cut as a body is
// (see cutBody), so that every entry fits [MinJournalBudget].
const maxJournalMethod = 64

// opIDLen is the length of an operation id: "op_" and 27 characters.
const opIDLen = 3 + 27

// MinJournalBudget is the smallest byte budget a journal takes (a few
// hundred bytes; it depends on the platform's word size): what an entry
// costs without its bodies, path and query. [WithJournalBudget],
// [Server.SetJournalBudget] and acctfake's -journal-budget refuse a
// smaller one, so that under every budget they take each request is kept
// when it is recorded (see [Server.SetJournalBudget]). A server that needs no
// journal is made [WithoutJournal].
const MinJournalBudget = entryOverhead + opIDLen + maxJournalMethod

// Entry is one request the server answered, as [Server.Journal] reports it.
// The Authorization header is never recorded, nor the body of a request
// that failed authentication (the server does not read it), and the values
// of the members token, cloud_secret_access_key (aws_secret_access_key in
// the real service's dialect), client_secret and api_key in either body
// read "REDACTED". A body that is not JSON and may spell one of those
// names is withheld: it reads "(unparseable body withheld: it may hold a
// secret)".
//
// A body is kept whole up to 64 KiB. A longer one, and one that does not
// fit the journal's byte budget (see [Server.SetJournalBudget]), is
// redacted whole and then cut: it reads as its first bytes, at a UTF-8
// boundary, followed by " …[cut: N bytes in all]", where N is the body's
// size on the wire. What is cut is no longer valid JSON.
type Entry struct {
	// Time is the server clock's time when the request arrived.
	Time time.Time
	// Method is the request's HTTP method; one longer than 64 bytes (no
	// method the fake serves) is cut as a body is (see above).
	Method string
	// Path is the request's path, as escaped on the wire. It is cut as
	// a body is (see above) only in an entry that would not fit the byte
	// budget even without its bodies.
	Path string
	// Query is the raw query string, without the "?"; cut as Path is.
	Query string
	// Status is the status code answered.
	Status int
	// OperationID is the op_ id of the answer (also in every error body).
	OperationID string
	// RequestBody is the request's body, secrets redacted; cut when long
	// (see above). It is empty for a body the server did not read: that of
	// a request that failed authentication or the version check, or whose
	// declared length is over MaxBodyBytes.
	RequestBody string
	// ResponseBody is the answer's body, secrets redacted; cut when long
	// (see above).
	ResponseBody string
	// Dropped reports that the connection was closed instead of answering
	// (a [Fault] with Drop or DropAfter). After Drop, Status is 0 and
	// ResponseBody empty; after DropAfter they are the answer the client
	// never received.
	Dropped bool
}

// journal records requests. Bodies of up to maxJournalBody bytes that fit
// the budget are kept as they came and redacted when [Server.Journal] reads
// them, so that a request pays nothing for it; a longer one, or one cut to
// fit, is redacted when recorded (see journalEntry.finish), since redaction
// needs the whole body. Entries are kept in chunks (see journalChunk), so
// that recording one never copies those before it. The journal keeps at
// most limit() entries and budget bytes, dropping the oldest entries one by
// one beyond either; each request is kept when it is recorded, its bodies
// (and its path, query and method) cut to fit the budget if they must,
// since the budget is never below MinJournalBudget (a budget lowered later
// may drop it, see Server.SetJournalBudget).
type journal struct {
	// off reports that the server was made WithoutJournal: add keeps
	// nothing, and the Server's journal methods panic. Set by New only.
	off    bool
	mu     sync.Mutex
	chunks [][]journalEntry // oldest first; only the last may have room
	starts []int64          // the sequence number of each chunk's first entry
	head   int              // entries at the front of chunks[0] already dropped
	n      int              // entries kept
	next   int64            // the sequence number of the next entry added
	byID   map[string]int64 // operation id to sequence number, of the entries kept
	bytes  int64            // their cost (journalEntry.size)
	max    int              // the most entries kept; 0 means maxJournal (tests set it)
	budget int64            // the most bytes kept, when budgetSet
	// budgetSet reports that budget was set; the zero journal has
	// DefaultJournalBudget.
	budgetSet bool
	// gone is the greatest operation id of an entry that left (or was
	// never kept), "" when none has: see Server.JournalLeft.
	gone string
}

// left notes that the entry with operation id id is not (or no longer)
// kept.
func (j *journal) left(id string) {
	j.gone = max(j.gone, id)
}

// journalChunk is the most entries in a chunk. Chunks start at 16
// entries and double, so that a server that answers a few requests holds
// a small journal.
const journalChunk = 512

type journalEntry struct {
	Entry
	req, resp []byte
	// final reports that req and resp are already redacted and cut (see
	// finish): what Journal reports.
	final bool
	size  int64 // what the entry costs against the budget; set by add
}

// entryOverhead is what an entry costs beyond its bodies and strings: its
// struct, and its place in the index by operation id (a string header and
// a sequence number, with the map's slack).
const entryOverhead = int64(unsafe.Sizeof(journalEntry{})) + 32

// cost is what e holds in memory: its fixed size, the capacity of its
// body buffers and the bytes of its strings.
func (e *journalEntry) cost() int64 {
	return entryOverhead + int64(cap(e.req)+cap(e.resp)+
		len(e.Method)+len(e.Path)+len(e.Query)+len(e.OperationID))
}

// finish redacts e's bodies, whole, and keeps at most room bytes of the
// two together, and at most maxJournalBody of each, cutting each
// with cutBody; the copies it keeps hold no more than that, so that the
// journal does not hold the whole of a large body.
func (e *journalEntry) finish(room int64) {
	req, resp := redactJSON(e.req), redactJSON(e.resp)
	nReq, nResp := share(min(len(req), maxJournalBody), min(len(resp), maxJournalBody), room)
	e.req, e.resp = cutBody(req, len(e.req), nReq), cutBody(resp, len(e.resp), nResp)
	e.final = true
}

// share returns how much of two things of sizes a and b to keep in room
// bytes: both when they fit, else as evenly as their sizes allow.
func share(a, b int, room int64) (int, int) {
	if int64(a+b) <= room {
		return a, b
	}
	half := int(room / 2)
	switch {
	case a <= half:
		return a, int(room) - a
	case b <= half:
		return int(room) - b, b
	default:
		return half, int(room) - half
	}
}

// cutStrings cuts e's path and query, as cutBody cuts a body, so that
// they fit in budget bytes together with up to half of it for the bodies
// (which finish then cuts), if the entry's other members leave them room;
// it reports whether they do. A path and query are longest (about 64 KiB)
// where bodies are small (a GET, a 404), so without this the newest
// request could be too large to keep.
func (e *journalEntry) cutStrings(budget int64, bodies int) bool {
	room := budget - entryOverhead - int64(len(e.Method)+len(e.OperationID))
	if room < 0 {
		return false
	}
	strs, _ := share(len(e.Path)+len(e.Query), bodies, room)
	nPath, nQuery := share(len(e.Path), len(e.Query), int64(strs))
	e.Path, e.Query = string(cutBody(e.Path, len(e.Path), nPath)), string(cutBody(e.Query, len(e.Query), nQuery))
	return true
}

// cutBody returns body in a buffer of its own if it is at most n bytes
// long, else its first bytes, at a UTF-8 boundary, followed by a note of
// the size on the wire, together at most n bytes (none when the note does
// not fit).
func cutBody(body string, wire, n int) []byte {
	if len(body) <= n {
		if body == "" {
			return nil
		}
		return append(make([]byte, 0, len(body)), body...)
	}
	note := " …[cut: " + strconv.Itoa(wire) + " bytes in all]"
	k := n - len(note)
	if k < 0 {
		return nil
	}
	for k > 0 && !utf8.RuneStart(body[k]) {
		k--
	}
	out := make([]byte, 0, k+len(note))
	return append(append(out, body[:k]...), note...)
}

// add records e, first dropping the oldest entries that the entry count or
// the byte budget have no room for. A body longer than maxJournalBody is
// redacted and cut now, and an entry larger than the whole budget has its
// bodies cut to fit it (see finish), and its path and query too if it
// does not fit without its bodies (see cutStrings); a method longer than
// maxJournalMethod is cut too, so that an entry always fits a budget of
// MinJournalBudget or more, which is all that SetJournalBudget and
// WithJournalBudget take. dflt is the budget until SetJournalBudget sets
// one (the server's WithJournalBudget, or DefaultJournalBudget). A
// journal that is off keeps nothing.
func (j *journal) add(e journalEntry, dflt int64) {
	if j.off {
		return
	}
	if len(e.Method) > maxJournalMethod {
		e.Method = string(cutBody(e.Method, len(e.Method), maxJournalMethod))
	}
	orig := e
	for {
		cut := j.budgetNow(dflt)
		e = orig
		e.cutFor(cut)
		j.mu.Lock()
		// The budget again, under the lock: SetJournalBudget may have
		// lowered it since the cut above; then cut again, from the entry
		// as it came (a cut body is no longer JSON to redact).
		budget := j.byteBudget(dflt)
		if e.size <= budget {
			j.keep(e, budget)
			j.mu.Unlock()
			return
		}
		if budget == cut || budget < MinJournalBudget {
			// No room even when cut: only under a budget below
			// MinJournalBudget, which no Server takes.
			j.left(e.OperationID)
			j.mu.Unlock()
			return
		}
		j.mu.Unlock()
	}
}

// cutFor cuts e to fit budget (see add), outside the journal's lock
// (redaction parses the bodies), and sets its size.
func (e *journalEntry) cutFor(budget int64) {
	bodies := int64(cap(e.req) + cap(e.resp))
	base := e.cost() - bodies // the entry without its bodies
	if base > budget && e.cutStrings(budget, int(bodies)) {
		base = e.cost() - bodies
	}
	if room := budget - base; room >= 0 && (len(e.req) > maxJournalBody || len(e.resp) > maxJournalBody || bodies > room) {
		e.finish(room)
	}
	e.size = e.cost()
}

// keep appends e, which fits budget, dropping the oldest entries it
// needs room for. j.mu is held.
func (j *journal) keep(e journalEntry, budget int64) {
	for j.n > 0 && (j.n >= j.limit() || j.bytes+e.size > budget) {
		j.dropOldest()
	}
	last := len(j.chunks) - 1
	if last < 0 || len(j.chunks[last]) == cap(j.chunks[last]) {
		size := 16
		if last >= 0 {
			size = min(2*cap(j.chunks[last]), journalChunk)
		}
		j.chunks = append(j.chunks, make([]journalEntry, 0, size))
		j.starts = append(j.starts, j.next)
		last++
	}
	j.chunks[last] = append(j.chunks[last], e)
	if e.OperationID != "" {
		if j.byID == nil {
			j.byID = map[string]int64{}
		}
		j.byID[e.OperationID] = j.next
	}
	j.next++
	j.n++
	j.bytes += e.size
}

// dropOldest forgets the oldest entry, releasing its bodies at once and its
// chunk once the chunk holds no entry. j.n must be positive.
func (j *journal) dropOldest() {
	first := j.chunks[0]
	e := &first[j.head]
	j.bytes -= e.size
	j.left(e.OperationID)
	if seq, ok := j.byID[e.OperationID]; ok && seq == j.starts[0]+int64(j.head) {
		delete(j.byID, e.OperationID)
	}
	*e = journalEntry{}
	j.head++
	j.n--
	if j.head == len(first) {
		j.chunks[0] = nil
		j.chunks, j.starts = j.chunks[1:], j.starts[1:]
		j.head = 0
	}
}

// first is the sequence number of the oldest entry kept (j.next when
// none is).
func (j *journal) first() int64 {
	return j.next - int64(j.n)
}

// at returns the entry kept with sequence number seq, which must be one.
func (j *journal) at(seq int64) *journalEntry {
	i, found := slices.BinarySearch(j.starts, seq)
	if !found {
		i--
	}
	return &j.chunks[i][seq-j.starts[i]]
}

// journalBatch is how many entries a walk through the journal copies at a
// time, under its lock.
const journalBatch = 64

// backward yields the entries with a sequence number below from, newest
// first, that keep (nil: all) accepts, each shown to keep without its
// bodies, and redacted only when yielded. It holds the lock only to copy
// a batch of entries (without their bodies, which never change), so that
// yield and keep may do anything; an entry dropped meanwhile is skipped.
// It costs time in proportion to the entries it yields and passes over,
// never to the journal's length.
func (j *journal) backward(from int64, keep func(Entry) bool, yield func(Entry) bool) {
	var batch [journalBatch]journalEntry
	for {
		j.mu.Lock()
		from = min(from, j.next)
		lo := max(j.first(), from-journalBatch)
		n := 0
		for seq := from - 1; seq >= lo; seq-- {
			batch[n] = *j.at(seq)
			n++
		}
		j.mu.Unlock()
		if n == 0 {
			return
		}
		from = lo
		for i := range n {
			e := &batch[i]
			if keep != nil && !keep(e.Entry) {
				continue
			}
			if !yield(e.redacted()) {
				return
			}
		}
		clear(batch[:n])
	}
}

// limit is the most entries the journal keeps.
func (j *journal) limit() int {
	if j.max > 0 {
		return j.max
	}
	return maxJournal
}

// budgetNow is byteBudget, taking the journal's lock.
func (j *journal) budgetNow(dflt int64) int64 {
	j.mu.Lock()
	defer j.mu.Unlock()
	return j.byteBudget(dflt)
}

// byteBudget is the most bytes the journal keeps: what SetJournalBudget
// set, else dflt.
func (j *journal) byteBudget(dflt int64) int64 {
	if j.budgetSet {
		return j.budget
	}
	return dflt
}

// SetJournalBudget sets the most memory, in bytes, that the journal holds
// (until set, that of [WithJournalBudget], else [DefaultJournalBudget]):
// bodies at the size of the buffers kept, plus a fixed cost per entry of a
// few hundred bytes. Beyond it the oldest entries are dropped first. A
// request is always kept when it is recorded: one larger than the whole
// budget is kept alone, its bodies cut to fit (see [Entry]), and its path
// and query too when the entry does not fit even without its bodies (a
// path and a query may each be about 64 KiB), so that the last entry is
// the last request; a body, path or query left no room even for the note
// of its cut reads empty. Lowering the budget drops entries at once,
// oldest first, until those left fit, which may be none (entries already
// kept are not cut again); the next request is kept as above. The
// journal also never keeps more than the last 100,000 entries.
//
// SetJournalBudget panics, naming the value, on a budget below
// [MinJournalBudget] (0 and negative ones included), which
// [WithJournalBudget] and acctfake's -journal-budget refuse too: such a
// budget would keep no entry, and an assertion that a request was never
// sent would pass with nothing to check. A server that needs no journal
// is made [WithoutJournal]; SetJournalBudget panics on one, as the
// journal's readers do.
func (s *Server) SetJournalBudget(bytes int64) {
	s.mustJournal("SetJournalBudget")
	if err := checkJournalBudget(bytes); err != nil {
		panic(fmt.Sprintf("fake: SetJournalBudget(%d): %v", bytes, err))
	}
	j := &s.journal
	j.mu.Lock()
	defer j.mu.Unlock()
	j.budget, j.budgetSet = bytes, true
	for j.n > 0 && j.bytes > j.budget {
		j.dropOldest()
	}
}

// checkJournalBudget refuses a budget that no entry fits.
func checkJournalBudget(bytes int64) error {
	if bytes < MinJournalBudget {
		return fmt.Errorf("want a budget of at least %d bytes (MinJournalBudget), which the smallest entry needs; "+
			"for a server without a journal use WithoutJournal", MinJournalBudget)
	}
	return nil
}

// mustJournal panics, naming the method fn and the option, on a server
// made WithoutJournal: an empty journal would let an assertion that a
// request was never sent pass with nothing to check.
func (s *Server) mustJournal(fn string) {
	if s.journal.off {
		panic("fake: " + fn + ": the server was made WithoutJournal and keeps no journal")
	}
}

// Journal returns a copy of the requests the server has answered, oldest
// first: at most the last 100,000, and no more than the journal's byte
// budget holds (see [Server.SetJournalBudget]). [Server.JournalMatching]
// returns those of one method, path pattern and status, checked against
// the fake's routes. Journal panics on a server made [WithoutJournal],
// as the other methods that read the journal do.
func (s *Server) Journal() []Entry {
	s.mustJournal("Journal")
	entries := s.journal.entries()
	out := make([]Entry, len(entries))
	for i := range entries {
		out[i] = entries[i].redacted()
	}
	return out
}

// JournalBackward returns an iterator over the entries of [Server.Journal],
// newest first: those kept when iteration starts, less any dropped (for
// room) before it reaches them. It redacts each entry's bodies only when
// it is reached, and never copies the journal, so that looking at the
// last few entries of a long journal costs little.
func (s *Server) JournalBackward() iter.Seq[Entry] {
	s.mustJournal("JournalBackward")
	return func(yield func(Entry) bool) {
		s.journal.mu.Lock()
		from := s.journal.next
		s.journal.mu.Unlock()
		s.journal.backward(from, nil, yield)
	}
}

// JournalBefore returns an iterator, as [Server.JournalBackward] does,
// over the entries older than the one whose operation id is beforeID (all
// of them for ""), and only those for which keep, when not nil, returns
// true; and whether beforeID is "" or the id of an entry the journal
// keeps (see [Server.JournalLeft] for one that is not). keep sees each
// entry without its bodies (RequestBody and ResponseBody are empty):
// they are redacted, which costs, only for the entries yielded. beforeID
// is found through an index, and the journal is never copied: a page of
// a filtered journal costs in proportion to the entries it yields and
// those keep refuses, not to the journal's length. A [JournalFilter]'s
// Match, as keep, filters by method, path pattern and status, checked
// against the fake's routes.
func (s *Server) JournalBefore(beforeID string, keep func(Entry) bool) (entries iter.Seq[Entry], found bool) {
	s.mustJournal("JournalBefore")
	j := &s.journal
	j.mu.Lock()
	from, found := j.next, true
	if beforeID != "" {
		from, found = j.byID[beforeID]
	}
	j.mu.Unlock()
	if !found {
		return func(func(Entry) bool) {}, false
	}
	return func(yield func(Entry) bool) { j.backward(from, keep, yield) }, true
}

// AnyStatus and DroppedStatus are statuses a [JournalFilter] takes
// besides the HTTP ones: AnyStatus matches entries of every status, and
// DroppedStatus those of requests whose connection a [Fault] with Drop
// closed before any answer (an [Entry] with Status 0 and Dropped set).
// 0 is neither: [Server.JournalFilter] refuses it, so that a status left
// unset does not read as "any" or as "dropped".
const (
	AnyStatus     = -1
	DroppedStatus = -2
)

// JournalFilter selects journal entries by method, path pattern and
// status, checked against the fake's routes when [Server.JournalFilter]
// makes it: unlike a [Pattern] of [ParsePattern], one with a typo is an
// error, not a filter that matches nothing. A JournalFilter is immutable
// and safe for concurrent use; its zero value is not a filter, and its
// Match panics.
type JournalFilter struct {
	method string // "": any
	pat    *Pattern
	status int
}

// JournalFilter returns a filter of journal entries: those whose method
// is method ("" or "*" for any), whose path matches pattern (a pattern as
// [Server.React] takes it; "/**" for any path) and whose status is status
// (100 to 599, [AnyStatus] or [DroppedStatus]). It returns an error, as
// [Server.CheckTarget] does, for a method the fake does not serve and a
// pattern that is malformed or matches no path it serves with that
// method (such as "/service_user/*", or "/api_keys/service_*", which no
// API key's id matches), and one naming the status for any other status
// (0 included) and for one the fake never answers a request of method
// with (1xx and 3xx, and a 2xx other than its success: 201 to a POST, 200
// to a GET or PATCH, 204 to a DELETE): such a filter could match no
// request to a route, and an
// assertion that no such request was made would pass on a typo. Requests
// the fake does not route (its 404s and 405s) are found by status, with
// the pattern "/**". acctfake's admin journal filters with it.
func (s *Server) JournalFilter(method, pattern string, status int) (*JournalFilter, error) {
	if err := s.CheckTarget(method, pattern); err != nil {
		return nil, err
	}
	if status != AnyStatus && status != DroppedStatus && (status < 100 || status > 599) {
		return nil, fmt.Errorf("fake: status %d is not an HTTP status from 100 to 599, AnyStatus or DroppedStatus", status)
	}
	if status != AnyStatus && status != DroppedStatus {
		if err := checkAnswered(anyMethod(method), status); err != nil {
			return nil, err
		}
	}
	pat, err := ParsePattern(pattern)
	if err != nil {
		return nil, err // checked by CheckTarget
	}
	return &JournalFilter{method: anyMethod(method), pat: pat, status: status}, nil
}

// successStatus is the status of the fake's answer to a request of each
// method that succeeds: 201 to a POST, 200 to a GET or PATCH, 204 to a
// DELETE. Its other answers are errors, 400 to 599.
var successStatus = map[string]int{http.MethodPost: 201, http.MethodGet: 200, http.MethodPatch: 200, http.MethodDelete: 204}

// checkAnswered refuses a status the fake never answers a request of
// method ("" for any) with: 1xx, 3xx, and a 2xx other than the method's
// success status. A filter for a DELETE answered 200 found nothing, and
// an assertion that no DELETE succeeded passed after one had (a review).
func checkAnswered(method string, status int) error {
	if status < 200 || status > 299 && status < 400 {
		return fmt.Errorf("fake: status %d: the fake never answers %d (its answers are 200, 201 and 204 on success, 400 to 599 otherwise)", status, status)
	}
	if status > 299 {
		return nil
	}
	if method == "" {
		if status == 200 || status == 201 || status == 204 {
			return nil
		}
		return fmt.Errorf("fake: status %d: the fake's successes are 201 (POST), 200 (GET, PATCH) and 204 (DELETE)", status)
	}
	if want := successStatus[method]; status != want {
		return fmt.Errorf("fake: status %d: the fake answers a %s that succeeds %d", status, method, want)
	}
	return nil
}

// Match reports whether e passes f. It reads e's Method, Path, Status
// and Dropped only, so it serves as JournalBefore's keep, which sees
// entries without their bodies. It panics on a JournalFilter that
// [Server.JournalFilter] did not make (nil, or the zero value).
func (f *JournalFilter) Match(e Entry) bool {
	if f == nil || f.pat == nil {
		panic("fake: JournalFilter.Match: not a filter made by Server.JournalFilter")
	}
	switch {
	case f.method != "" && e.Method != f.method:
		return false
	case f.status == DroppedStatus:
		if e.Status != 0 || !e.Dropped {
			return false
		}
	case f.status != AnyStatus && e.Status != f.status:
		return false
	}
	return f.pat.Match(e.Path)
}

// JournalMatching returns the entries of [Server.Journal], oldest first,
// that the filter of [Server.JournalFilter] for method, pattern and
// status passes, or its error: a method or pattern no request to the
// fake could match, or a status that is none. Unlike filtering Journal
// with [MatchPath], it refuses a pattern with a typo instead of finding
// nothing. It redacts the bodies of the entries it returns only.
func (s *Server) JournalMatching(method, pattern string, status int) ([]Entry, error) {
	s.mustJournal("JournalMatching")
	f, err := s.JournalFilter(method, pattern, status)
	if err != nil {
		return nil, err
	}
	entries, _ := s.JournalBefore("", f.Match)
	var out []Entry
	for e := range entries {
		out = append(out, e)
	}
	slices.Reverse(out)
	return out, nil
}

// entries copies the entries kept, oldest first. The copies share their
// bodies with the journal: a body is never changed once recorded.
func (j *journal) entries() []journalEntry {
	j.mu.Lock()
	defer j.mu.Unlock()
	out := make([]journalEntry, 0, j.n)
	for i, c := range j.chunks {
		if i == 0 {
			c = c[j.head:]
		}
		out = append(out, c...)
	}
	return out
}

// redacted is e as [Server.Journal] reports it.
func (e *journalEntry) redacted() Entry {
	out := e.Entry
	if e.final {
		out.RequestBody, out.ResponseBody = string(e.req), string(e.resp)
	} else {
		out.RequestBody, out.ResponseBody = redactJSON(e.req), redactJSON(e.resp)
	}
	return out
}

// ClearJournal forgets the requests recorded so far ([Server.Reset] calls
// it); on a server made [WithoutJournal], which records none, it does
// nothing.
func (s *Server) ClearJournal() {
	j := &s.journal
	j.mu.Lock()
	defer j.mu.Unlock()
	for j.n > 0 {
		j.dropOldest()
	}
	j.chunks, j.starts, j.head, j.byID = nil, nil, 0, nil
}

// JournalLeft reports whether operationID may be the id of an entry that
// has left the journal: dropped for room (the byte budget, the entry
// count), never kept (larger than the budget), or cleared by
// [Server.ClearJournal]. The server makes operation ids in increasing
// order, so it is true for every id that sorts at or before the newest id
// of an entry that left, unless an entry of that id is still kept (a
// request that took longer is journaled after later ones, so it can
// outlast them: a review found it reported gone while kept), and false
// for any later one, which no entry that left has. A cursor into the
// journal (the id of the last entry of a page) whose entry is gone has
// nothing older kept; an id for which JournalLeft is false and that no
// entry has is no entry's id at all.
func (s *Server) JournalLeft(operationID string) bool {
	s.mustJournal("JournalLeft")
	s.journal.mu.Lock()
	defer s.journal.mu.Unlock()
	_, kept := s.journal.byID[operationID]
	return operationID != "" && operationID <= s.journal.gone && !kept
}

// secretMembers are the JSON members whose values the journal redacts.
// Both dialects' names are here (see acctapi.Dialect): a request of the
// real service's dialect sends, and is answered, aws_secret_access_key.
var secretMembers = []string{"token", "cloud_secret_access_key", "aws_secret_access_key", "client_secret", "api_key"}

// redactJSON returns body for the journal with secret members redacted. A
// body that holds none is kept as it is; one that is not JSON but may hold
// one is withheld. It reads the whole body: cutting comes after.
func redactJSON(body []byte) string {
	if !maySpellSecret(body) {
		return string(body)
	}
	var v any
	if err := json.Unmarshal(body, &v); err != nil {
		return "(unparseable body withheld: it may hold a secret)"
	}
	if !redact(v) {
		return string(body)
	}
	out, _ := json.Marshal(v)
	return string(out)
}

// maySpellSecret reports whether body may name a secret member, however
// spelt. encoding/json, which decodes request bodies, matches member names
// without regard to case (Unicode folding included), and JSON escapes
// spell one name several ways; so any escape or non-ASCII byte counts.
func maySpellSecret(body []byte) bool {
	for _, b := range body {
		if b == '\\' || b >= utf8.RuneSelf {
			return true
		}
	}
	lower := bytes.ToLower(body)
	for _, m := range secretMembers {
		if bytes.Contains(lower, []byte(m)) {
			return true
		}
	}
	return false
}

// isSecretMember reports whether encoding/json would decode a member named
// k into a secret field: its names match under Unicode case folding.
func isSecretMember(k string) bool {
	for _, m := range secretMembers {
		if strings.EqualFold(k, m) {
			return true
		}
	}
	return false
}

// redact replaces the values of secret members in v and reports whether it
// replaced any.
func redact(v any) bool {
	changed := false
	switch v := v.(type) {
	case map[string]any:
		for k, inner := range v {
			if isSecretMember(k) {
				if inner != nil {
					v[k] = "REDACTED"
					changed = true
				}
				continue
			}
			changed = redact(inner) || changed
		}
	case []any:
		for _, inner := range v {
			changed = redact(inner) || changed
		}
	}
	return changed
}
