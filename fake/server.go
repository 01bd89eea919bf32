package fake

import (
	"context"
	"crypto/rand"
	"encoding/binary"
	"errors"
	"fmt"
	"net/http/httptest"
	"sync"
	"time"

	"github.com/acctapi/acctapi/account"
	"github.com/acctapi/acctapi/fake/internal/store"
)

// MaxBodyBytes is the largest request body the fake reads (1 MiB); a larger
// one is answered with 413.
const MaxBodyBytes = 1 << 20

// inMemoryURL is the base URL of a server without a listener.
const inMemoryURL = "http://acctfake.invalid"

// Server is the fake API. It serves every path of the API from an in-memory
// go-memdb store, as the real service would: authentication, versioning,
// validation (with the domain packages' own Validate methods), pagination,
// CEL filters, referential integrity and several isolated accounts.
//
// Create one with [New] or, in a test, [Start]. A Server is safe for
// concurrent use. Its store is private: read it through the API, [Get],
// [List] and [Server.Journal]; write it through the API and [Seed].
type Server struct {
	// URL is the base URL of the server, such as "http://127.0.0.1:41234",
	// or "http://acctfake.invalid" for a server without a listener (whose
	// requests only its [Server.HTTPClient] can make).
	URL string

	cfg    config
	mu     sync.RWMutex // guards accounts, and keeps them in step with db (AddAccount, Snapshot, Restore)
	schema *store.Schema
	db     *store.DB
	accts  *store.Table[Account, accountUser]
	// initialTokens and usage: see registerAccounts.
	initialTokens *store.Table[none, tokenHash]
	usage         *store.Table[int, none]
	keys          *store.Table[account.APIKey, tokenHash] // every API key, by its hashed token
	users         *store.Table[account.ServiceUser, none]
	env           env
	ids           *idGen
	opIDs         issuedIDs // NewOperationID's, for WithOperationID
	routes        router
	journal       journal
	faults        faults
	limiter       apiLimiter
	members       members               // request types' JSON member names, for decode
	resByIn       map[any]*resourceInfo // by create type
	resByOut      map[any]*resourceInfo // by resource type
	resByKind     map[string]*resourceInfo
	filters       filterCache
	accounts      []Account       // guarded by mu
	fixtureKeys   []FixtureAPIKey // guarded by mu
	initial       *Snapshot       // the state New left, for Reset

	httpSrv  *httptest.Server
	tb       TB         // Start's, for reactors' misuse (see misuse); nil from New
	closeMu  sync.Mutex // guards closing, and inflight.Add against Close's Wait
	closing  bool
	inflight sync.WaitGroup
	once     sync.Once
	// drains ends when Close starts: it ends the drains of refused
	// bodies (see iox.DrainBody), which would otherwise hold Close for
	// as long as a stalled client lets them (iox.DrainWait).
	drains     context.Context
	stopDrains context.CancelFunc
}

// drainStop returns the context that ends the server's drains.
func (s *Server) drainStop() context.Context {
	if s.drains == nil {
		return context.Background() // a Server built by a test, not New
	}
	return s.drains
}

// Account describes one account of the fake. ID and UserID are made up when
// empty; APIKeys are tokens that authenticate as the account's user.
type Account struct {
	// ID names the account: "ac_" and up to 64 letters, digits, "_" or
	// "-". It appears in no response but selects the account in [Seed],
	// [Get] and [List].
	ID string
	// UserID is the account's user, "usr_" and up to 64 letters, digits,
	// "_" or "-": the owner_id of its keys and the principal of what they
	// create.
	UserID string
	// APIKeys are the tokens of the account's initial API keys, each 1 to
	// [MaxTokenBytes] bytes of printable ASCII without spaces. One is made
	// up when empty.
	APIKeys []string
}

// New returns a running Server, listening on a loopback TCP port unless
// [WithoutListener] is given or New runs in a testing/synctest bubble,
// where a listener would block the bubble: there the server is in memory,
// as with WithoutListener, and its [Server.Client] and
// [Server.HTTPClient] reach it. Close it when done. An option that refuses
// its argument, or a nil option, is an error naming it.
func New(opts ...Option) (*Server, error) {
	cfg := config{clock: realClock{}, ingress: DefaultIngressEndpoint}
	for i, opt := range opts {
		if opt == nil {
			return nil, fmt.Errorf("fake: New: option %d of %d is nil", i+1, len(opts))
		}
		if err := opt(&cfg); err != nil {
			return nil, err
		}
	}
	if cfg.noJournal && cfg.budgetSet {
		return nil, errors.New("fake: New: WithJournalBudget and WithoutJournal: a server without a journal has no journal budget")
	}
	if !cfg.seeded {
		var b [8]byte
		_, _ = rand.Read(b[:])
		cfg.seed = binary.LittleEndian.Uint64(b[:])
	}
	s := &Server{cfg: cfg, schema: new(store.Schema), ids: newIDGen(cfg.seed)}
	s.drains, s.stopDrains = context.WithCancel(context.Background())
	s.journal.off = cfg.noJournal
	if err := s.limiter.init(cfg.rateN, cfg.rateEvery); err != nil {
		return nil, err
	}
	s.env = env{ids: s.ids, signer: new(signer), ingress: cfg.ingress, keyIn: func(tx *store.Txn, hash, id string) bool {
		return s.keys.TokenHeldBy(tx, hash, id)
	}}
	s.resByIn, s.resByOut, s.resByKind = map[any]*resourceInfo{}, map[any]*resourceInfo{}, map[string]*resourceInfo{}
	s.register()
	db, err := s.schema.Open()
	if err != nil {
		return nil, err
	}
	s.db = db
	if len(cfg.accounts) == 0 {
		cfg.accounts = []Account{{}}
	}
	for i, a := range cfg.accounts {
		if _, err := s.AddAccount(a); err != nil {
			// The caller gave the account with WithAccount: name it,
			// not AddAccount, which the caller never called.
			inner := errors.Unwrap(err)
			if inner == nil {
				inner = err
			}
			return nil, fmt.Errorf("fake: New: WithAccount (account %d): %w", i+1, inner)
		}
	}
	s.cfg.accounts = nil
	s.initial = s.Snapshot()
	if cfg.inMemory || inBubble(time.Now()) {
		s.URL = inMemoryURL
	} else {
		s.httpSrv = httptest.NewServer(s)
		s.URL = s.httpSrv.URL
	}
	return s, nil
}

// inBubble reports whether now, from time.Now, is a testing/synctest
// bubble's. The package has no way to ask, but the runtime gives a
// bubble's time.Now no monotonic clock reading, which it gives every
// reading outside a bubble (TestStartInBubble pins that, on each Go
// release CI runs). Unlike a guess from the wall time, this does not
// misfire when the system clock is stepped or starts in 1970.
func inBubble(now time.Time) bool {
	return now == now.Round(0)
}

// TB is the part of testing.TB that [Start] needs; *testing.T, *testing.B,
// *testing.F and *rapid.T have it. (It gained Errorf on 2026-11-24: a type
// of one's own written to the earlier TB needs that method too.)
type TB interface {
	// Helper marks the caller as a test helper.
	Helper()
	// Cleanup registers a function to run when the test ends; Start
	// closes the server with it.
	Cleanup(func())
	// Fatalf reports an error and stops the test; Start calls it when the
	// server cannot start.
	Fatalf(format string, args ...any)
	// Errorf reports an error and lets the test go on; the server calls
	// it, from the goroutine serving the request, when a [Reactor]
	// panics or returns a Fault that [Fault.Validate] refuses (never a
	// *testing.F's, see Start).
	Errorf(format string, args ...any)
}

// Start is [New] for tests: it fails tb if the options are invalid and closes
// the server when tb ends. Inside a testing/synctest bubble it makes an
// in-memory server (see New), so that fake.Start(t) works there as it
// does outside; [Server.URL] is then "http://acctfake.invalid".
//
// A [Reactor] that panics or returns a Fault that [Fault.Validate] refuses
// fails tb too (tb.Errorf), besides the 500 that answers the request: a
// client that retries a 500, or a test that only counts failures, would
// otherwise pass on the reactor's bug. Not a *testing.F's: the requests
// of a fuzz test come from its fuzz target, where the F may not report
// (only the 500 says it there).
func Start(tb TB, opts ...Option) *Server {
	tb.Helper()
	s, err := New(opts...)
	if err != nil {
		tb.Fatalf("fake.Start: %v", err)
	}
	if _, fuzz := tb.(interface{ Fuzz(ff any) }); !fuzz {
		s.tb = tb
	}
	tb.Cleanup(s.Close)
	return s
}

// misuse reports a reactor's bug to Start's test, if any: the request
// that met it is answered 500 with msg as well, whatever tb.Errorf does
// (a panic of it is dropped: the 500 still says it).
func (s *Server) misuse(msg string) {
	if s.tb == nil {
		return
	}
	defer func() { _ = recover() }()
	s.tb.Errorf("fake: %s", msg)
}

// Close stops the server and waits for requests in flight to finish.
func (s *Server) Close() {
	s.once.Do(func() {
		s.closeMu.Lock()
		s.closing = true
		s.closeMu.Unlock()
		if s.stopDrains != nil {
			s.stopDrains()
		}
		if s.httpSrv != nil {
			s.httpSrv.Close()
		}
		s.inflight.Wait()
	})
}

// enter counts a request in flight, unless the server is closing.
func (s *Server) enter() bool {
	s.closeMu.Lock()
	defer s.closeMu.Unlock()
	if s.closing {
		return false
	}
	s.inflight.Add(1)
	return true
}
