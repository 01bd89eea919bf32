package fake

import (
	"bytes"
	"encoding/json"
	"sync"
	"time"
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
	Time         time.Time // the server clock's time when the request arrived
	Method       string
	Path         string
	Query        string // the raw query string
	Status       int
	OperationID  string
	RequestBody  string
	ResponseBody string
}

type journal struct {
	mu      sync.Mutex
	entries []Entry
}

func (j *journal) add(e Entry) {
	j.mu.Lock()
	defer j.mu.Unlock()
	if len(j.entries) >= maxJournal {
		j.entries = append(j.entries[:0], j.entries[len(j.entries)-maxJournal/2:]...)
	}
	j.entries = append(j.entries, e)
}

// Journal returns a copy of the requests the server has answered, oldest
// first (at most the last 100,000).
func (s *Server) Journal() []Entry {
	s.journal.mu.Lock()
	defer s.journal.mu.Unlock()
	return append([]Entry(nil), s.journal.entries...)
}

// ClearJournal forgets the requests recorded so far.
func (s *Server) ClearJournal() {
	s.journal.mu.Lock()
	defer s.journal.mu.Unlock()
	s.journal.entries = nil
}

// secretMembers are the JSON members whose values the journal redacts.
var secretMembers = [][]byte{[]byte(`"token"`), []byte(`"cloud_secret_access_key"`), []byte(`"client_secret"`), []byte(`"api_key"`)}

// redactJSON returns body for the journal with secret members redacted. A
// body that is not JSON is kept as it is.
func redactJSON(body []byte) string {
	if len(body) > maxJournalBody {
		body = body[:maxJournalBody]
	}
	hasSecret := false
	for _, m := range secretMembers {
		hasSecret = hasSecret || bytes.Contains(body, m)
	}
	if !hasSecret {
		return string(body)
	}
	var v any
	if err := json.Unmarshal(body, &v); err != nil {
		return "(unparseable body withheld: it may hold a secret)"
	}
	redact(v)
	out, _ := json.Marshal(v)
	return string(out)
}

func redact(v any) {
	switch v := v.(type) {
	case map[string]any:
		for k, inner := range v {
			switch k {
			case "token", "cloud_secret_access_key", "client_secret", "api_key":
				if inner != nil {
					v[k] = "REDACTED"
				}
			default:
				redact(inner)
			}
		}
	case []any:
		for _, inner := range v {
			redact(inner)
		}
	}
}
