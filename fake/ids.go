package fake

import (
	"context"
	"encoding/binary"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// ksuidEpoch is the epoch of the ids' timestamp part (as in KSUID).
const ksuidEpoch = 1400000000

const base62 = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"

// idGen makes ids "<prefix>_<27 base-62 characters>" that sort by creation:
// the suffix encodes 20 bytes — 4 bytes of seconds since ksuidEpoch, an
// 8-byte sequence number and 8 random bytes — so ids made later always sort
// after ids made earlier, even when the clock stands still or steps back.
// Randomness comes from a seeded generator, so a seed replays the same ids.
type idGen struct {
	mu      sync.Mutex
	rng     *rand.Rand
	seq     uint64
	lastSec uint32
}

func newIDGen(seed uint64) *idGen {
	return &idGen{rng: rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))}
}

// next returns a new id with the given prefix, made at now.
func (g *idGen) next(prefix string, now time.Time) string {
	var raw [20]byte
	g.mu.Lock()
	sec := uint32(max(now.Unix()-ksuidEpoch, 0))
	if sec < g.lastSec {
		sec = g.lastSec
	}
	g.lastSec = sec
	g.seq++
	binary.BigEndian.PutUint32(raw[0:4], sec)
	binary.BigEndian.PutUint64(raw[4:12], g.seq)
	binary.BigEndian.PutUint64(raw[12:20], g.rng.Uint64())
	g.mu.Unlock()
	var digits [27]byte
	var b strings.Builder // one allocation: String does not copy
	b.Grow(len(prefix) + 1 + len(digits))
	b.WriteString(prefix)
	b.WriteByte('_')
	b.Write(appendBase62(digits[:0], raw))
	return b.String()
}

// token returns n random base-62 characters.
func (g *idGen) token(n int) string {
	b := make([]byte, n)
	g.mu.Lock()
	for i := range b {
		b[i] = base62[g.rng.IntN(len(base62))]
	}
	g.mu.Unlock()
	return string(b)
}

// maxIDLen bounds the length of the ids of stored objects, which the
// fake alone makes: a prefix (at most "service") and 28 characters. A test
// checks every resource's prefix against it.
const maxIDLen = 64

// appendBase62 appends the 160-bit big-endian number in raw as 27 base-62
// digits, most significant first, so byte order and text order agree. It
// divides by 62⁵ (which fits in 32 bits) at a time: six passes over the
// number's five words instead of 27.
func appendBase62(dst []byte, raw [20]byte) []byte {
	const digits, chunk = 27, 62 * 62 * 62 * 62 * 62
	var words [5]uint32
	for i := range words {
		words[i] = binary.BigEndian.Uint32(raw[i*4:])
	}
	var out [digits]byte
	for i := digits; i > 0; {
		var rem uint64
		for j := range words {
			cur := rem<<32 | uint64(words[j])
			words[j] = uint32(cur / chunk)
			rem = cur % chunk
		}
		for k := 0; k < 5 && i > 0; k++ {
			i--
			out[i] = base62[rem%62]
			rem /= 62
		}
	}
	return append(dst, out[:]...)
}

// NewOperationID returns a new operation id, "op_" and 27 base-62
// characters that sort by creation, from the sequence the server's own come
// from (so [WithIDSeed] replays it). It is for a handler in front of the
// server that answers some requests itself, as cmd/acctfake's front end
// does (a 431, a request that timed out), so that those answers carry ids
// like the server's; [WithOperationID] gives one to the server for a
// request. The server remembers the last 65,536 ids it issued that no
// request has used yet; see WithOperationID.
func (s *Server) NewOperationID() string {
	id := s.ids.next("op", s.now())
	s.opIDs.issue(id)
	return id
}

// maxIssuedIDs bounds the operation ids NewOperationID issued that a
// request may still use: a front end that answers some requests itself
// (a 431) never hands their ids to the server.
const maxIssuedIDs = 1 << 16

// issuedIDs are the operation ids NewOperationID issued that no request
// has used yet (at most maxIssuedIDs, the oldest forgotten first).
type issuedIDs struct {
	mu      sync.Mutex
	pending map[string]struct{}
	order   []string // issue order, oldest first; may hold ids since used
}

// issue notes a new id, forgetting the oldest unused ones beyond
// maxIssuedIDs.
func (p *issuedIDs) issue(id string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.pending == nil {
		p.pending = map[string]struct{}{}
	}
	p.pending[id] = struct{}{}
	p.order = append(p.order, id)
	for len(p.pending) > maxIssuedIDs {
		delete(p.pending, p.order[0])
		p.order = p.order[1:]
	}
	if len(p.order) > 2*len(p.pending)+64 { // mostly used ids: keep the pending ones
		p.order = slices.DeleteFunc(slices.Clone(p.order), func(id string) bool {
			_, ok := p.pending[id]
			return !ok
		})
	}
}

// take reports whether id was issued and not yet used, and marks it used.
func (p *issuedIDs) take(id string) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	_, ok := p.pending[id]
	delete(p.pending, id)
	return ok
}

type operationIDKey struct{}

// operationIDClaim is an operation id that one request may take.
type operationIDClaim struct {
	id    string
	taken atomic.Bool
}

// WithOperationID returns a copy of ctx that makes the server use id, from
// [Server.NewOperationID], as the operation id of the first request made
// with it: in its Operation-Id (and Ngrok-Operation-Id) header, its error body and its journal
// entry. Any later request with the same context (a client's retry) gets
// an id of its own, so no two journal entries share one. A handler in
// front of the server that may answer the request itself (a timeout)
// answers with the same id, so the journal entry can be found by it. It
// panics if id is not an operation id; the server panics, naming id, when
// a request brings one that it did not issue (one of another server, or
// made up), that a request used already (a second context made with it),
// or that it issued before the last 65,536 it keeps: an id there would
// let two journal entries share it, and an assertion about the journal
// pass or fail for the wrong entry. The panic reaches the test through the
// in-memory client; over TCP it reaches the handler in front of the
// server, whose recovery decides the answer (net/http alone logs it and
// closes the connection; acctfake answers 500).
func WithOperationID(ctx context.Context, id string) context.Context {
	if !isOperationID(id) {
		panic(fmt.Sprintf("fake: WithOperationID: %q is not an operation id (op_ and 27 base-62 characters; see Server.NewOperationID)", truncate(id, 64)))
	}
	return context.WithValue(ctx, operationIDKey{}, &operationIDClaim{id: id})
}

// operationID returns the operation id ctx carries, if no request has
// taken it yet, or a new one.
func (s *Server) operationID(ctx context.Context, now time.Time) string {
	if c, ok := ctx.Value(operationIDKey{}).(*operationIDClaim); ok && c.taken.CompareAndSwap(false, true) {
		if !s.opIDs.take(c.id) {
			panic(fmt.Sprintf("fake: WithOperationID: %s is no id this server's NewOperationID issued, or a request used it already: no two requests share an operation id", c.id))
		}
		return c.id
	}
	return s.ids.next("op", now)
}

// isOperationID reports whether id has the form of the ids idGen makes
// with the prefix "op".
func isOperationID(id string) bool {
	suffix, ok := strings.CutPrefix(id, "op_")
	if !ok || len(suffix) != 27 {
		return false
	}
	for i := range len(suffix) {
		if strings.IndexByte(base62, suffix[i]) < 0 {
			return false
		}
	}
	return true
}
