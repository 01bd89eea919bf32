package fake

import (
	"bytes"
	"encoding/json"
	"strings"
	"sync"
	"time"
	"unicode/utf8"
)

// maxJournal bounds the journal; the oldest entries are dropped first.
const maxJournal = 100_000

// maxJournalBody bounds how much of each body the journal keeps.
const maxJournalBody = 64 << 10

// Entry is one request the server answered, as [Server.Journal] reports it.
// The Authorization header is never recorded, and the values of the members
// token, cloud_secret_access_key, client_secret and api_key in either body
// read "REDACTED".
type Entry struct {
	// Time is the server clock's time when the request arrived.
	Time time.Time
	// Method is the request's HTTP method.
	Method string
	// Path is the request's path, as escaped on the wire.
	Path string
	// Query is the raw query string, without the "?".
	Query string
	// Status is the status code answered.
	Status int
	// OperationID is the op_ id of the answer (also in every error body).
	OperationID string
	// RequestBody is the request's body, secrets redacted.
	RequestBody string
	// ResponseBody is the answer's body, secrets redacted.
	ResponseBody string
	// Dropped reports that the connection was closed instead of answering
	// (a [Fault] with Drop or DropAfter). After Drop, Status is 0 and
	// ResponseBody empty; after DropAfter they are the answer the client
	// never received.
	Dropped bool
}

// journal records requests. Bodies are kept as they came and redacted when
// [Server.Journal] reads them, so that a request pays nothing for it.
// Entries are kept in chunks (see journalChunk), so that recording one
// never copies those before it, and the oldest chunk is dropped whole once
// the journal is full.
type journal struct {
	mu     sync.Mutex
	chunks [][]journalEntry // oldest first; only the last may have room
	n      int              // entries in chunks
	max    int              // the most entries kept; 0 means maxJournal (tests set it)
}

// journalChunk is the most entries in a chunk. Chunks start at 16
// entries and double, so that a server that answers a few requests holds
// a small journal.
const journalChunk = 512

type journalEntry struct {
	Entry
	req, resp []byte
}

// clip bounds a body kept in the journal, copying a clipped one so that the
// journal does not hold the whole of a large body.
func clip(b []byte) []byte {
	if len(b) > maxJournalBody {
		return append([]byte(nil), b[:maxJournalBody]...)
	}
	return b
}

func (j *journal) add(e journalEntry) {
	j.mu.Lock()
	defer j.mu.Unlock()
	if j.n >= j.limit() {
		j.n -= len(j.chunks[0])
		j.chunks[0] = nil
		j.chunks = j.chunks[1:]
	}
	last := len(j.chunks) - 1
	if last < 0 || len(j.chunks[last]) == cap(j.chunks[last]) {
		size := 16
		if last >= 0 {
			size = min(2*cap(j.chunks[last]), journalChunk)
		}
		j.chunks = append(j.chunks, make([]journalEntry, 0, size))
		last++
	}
	j.chunks[last] = append(j.chunks[last], e)
	j.n++
}

// limit is the most entries the journal keeps.
func (j *journal) limit() int {
	if j.max > 0 {
		return j.max
	}
	return maxJournal
}

// Journal returns a copy of the requests the server has answered, oldest
// first (at most the last 100,000).
func (s *Server) Journal() []Entry {
	s.journal.mu.Lock()
	entries := make([]journalEntry, 0, s.journal.n)
	for _, c := range s.journal.chunks {
		entries = append(entries, c...)
	}
	s.journal.mu.Unlock()
	out := make([]Entry, len(entries))
	for i, e := range entries {
		out[i] = e.Entry
		out[i].RequestBody, out[i].ResponseBody = redactJSON(e.req), redactJSON(e.resp)
	}
	return out
}

// ClearJournal forgets the requests recorded so far.
func (s *Server) ClearJournal() {
	s.journal.mu.Lock()
	defer s.journal.mu.Unlock()
	s.journal.chunks, s.journal.n = nil, 0
}

// secretMembers are the JSON members whose values the journal redacts.
var secretMembers = []string{"token", "cloud_secret_access_key", "client_secret", "api_key"}

// redactJSON returns body for the journal with secret members redacted. A
// body that holds none is kept as it is; one that is not JSON but may hold
// one is withheld.
func redactJSON(body []byte) string {
	if len(body) > maxJournalBody {
		body = body[:maxJournalBody]
	}
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
