package fake

import (
	"errors"
	"fmt"
	"net"
	"reflect"
	"strconv"
	"time"

	"github.com/acctapi/acctapi/internal/baseurl"
)

// DefaultIngressEndpoint is the ingress_endpoint a Kubernetes operator with
// bindings gets when it names none; see [WithIngressEndpoint].
const DefaultIngressEndpoint = "connect.ngrok-endpoints.com:443"

// config is what the options set; New reads it.
type config struct {
	clock     Clock
	seed      uint64
	seeded    bool
	accounts  []Account
	publicURL string
	ingress   string
	inMemory  bool
	rateN     int64
	rateEvery time.Duration
	// budget is the journal's byte budget, when budgetSet (WithJournalBudget).
	budget    int64
	budgetSet bool
	// noJournal: WithoutJournal.
	noJournal bool
	// resources is the bound on each account's resources, when not 0
	// (WithMaxResources).
	resources int
}

// maxResources is the most resources an account may store:
// WithMaxResources's bound, else DefaultMaxResources.
func (cfg *config) maxResources() int {
	if cfg.resources > 0 {
		return cfg.resources
	}
	return DefaultMaxResources
}

// journalBudget is the journal's byte budget until [Server.SetJournalBudget]
// sets one: WithJournalBudget's, else [DefaultJournalBudget].
func (cfg *config) journalBudget() int64 {
	if cfg.budgetSet {
		return cfg.budget
	}
	return DefaultJournalBudget
}

// Option configures a [Server]. Options apply in order: one given twice
// (two WithIDSeed) takes the later value, as functional options do in Go;
// a value an option refuses makes [New] and [Start] fail.
type Option func(*config) error

// WithClock makes the server read time from c, such as a [ManualClock].
// A nil c, or one holding a nil pointer ((*ManualClock)(nil)), makes [New]
// fail naming the option: the server could not read the time from it. So
// does a clock reading the zero time, such as a zero ManualClock (not one
// from [NewManualClock]): the server would stamp everything January 1 of
// year 1.
func WithClock(c Clock) Option {
	return func(cfg *config) error {
		if c == nil {
			return errors.New("fake: WithClock: nil clock")
		}
		if v := reflect.ValueOf(c); v.Kind() == reflect.Pointer && v.IsNil() {
			return fmt.Errorf("fake: WithClock: nil clock (a nil %T)", c)
		}
		if c.Now().IsZero() {
			return fmt.Errorf("fake: WithClock: the %T reads the zero time (a zero ManualClock? use NewManualClock)", c)
		}
		cfg.clock = c
		return nil
	}
}

// WithIDSeed makes ids and tokens deterministic: two servers with the same
// seed, clock and requests make the same ids.
func WithIDSeed(seed uint64) Option {
	return func(cfg *config) error {
		cfg.seed, cfg.seeded = seed, true
		return nil
	}
}

// WithAccount adds an account. Without it a server has one account with
// one made-up key ([Server.APIKey]).
func WithAccount(a Account) Option {
	return func(cfg *config) error {
		if err := a.check(); err != nil {
			return fmt.Errorf("fake: WithAccount: %w", err)
		}
		if len(cfg.accounts) >= MaxAccounts {
			return fmt.Errorf("fake: WithAccount: more than %d accounts (fake.MaxAccounts)", MaxAccounts)
		}
		cfg.accounts = append(cfg.accounts, a)
		return nil
	}
}

// WithPublicBaseURL sets the base of every uri and next_page_uri the server
// writes, instead of the scheme and host each request reached. It must be
// an absolute http or https URL without user information, query or
// fragment, as [acctapi.WithBaseURL] requires; trailing slashes are
// dropped, so "https://api.example/v2/" writes
// "https://api.example/v2/service_users/…".
func WithPublicBaseURL(u string) Option {
	return func(cfg *config) error {
		p, err := baseurl.Parse("fake: WithPublicBaseURL", u)
		if err != nil {
			return err
		}
		cfg.publicURL = p.String()
		return nil
	}
}

// WithIngressEndpoint sets the ingress_endpoint given to Kubernetes
// operators that enable bindings without naming one. The default is
// [DefaultIngressEndpoint]. It must be a host and port, as
// [net.SplitHostPort] reads them, with a port from 1 to 65535.
func WithIngressEndpoint(hostport string) Option {
	return func(cfg *config) error {
		host, port, err := net.SplitHostPort(hostport)
		if err != nil {
			return fmt.Errorf("fake: WithIngressEndpoint %q: want host:port", hostport)
		}
		if host == "" {
			return fmt.Errorf("fake: WithIngressEndpoint %q: empty host", hostport)
		}
		if n, err := strconv.Atoi(port); err != nil || n < 1 || n > 65535 || port != strconv.Itoa(n) {
			return fmt.Errorf("fake: WithIngressEndpoint %q: want a port from 1 to 65535", hostport)
		}
		cfg.ingress = hostport
		return nil
	}
}

// WithoutListener makes the server listen nowhere: requests reach it only
// through [Server.HTTPClient] and [Server.Client], in memory, which is
// faster. [Server.URL] is then "http://acctfake.invalid". [Start] and [New]
// choose it by themselves inside a testing/synctest bubble.
func WithoutListener() Option {
	return func(cfg *config) error {
		cfg.inMemory = true
		return nil
	}
}

// WithRateLimit limits each account to n management API requests in any
// rolling window of length every; more are answered with 429,
// ERR_NGROK_226 and a Retry-After header. The real service allows 120 per
// 60 s. Off unless asked for.
func WithRateLimit(n int64, every time.Duration) Option {
	return func(cfg *config) error {
		if n < 1 || every < time.Second || every%time.Second != 0 {
			return fmt.Errorf("fake: WithRateLimit(%d, %v): want n ≥ 1 and a window of whole seconds, at least 1s", n, every)
		}
		cfg.rateN, cfg.rateEvery = n, every
		return nil
	}
}

// WithJournalBudget sets the most memory, in bytes, that the server's
// journal holds, instead of [DefaultJournalBudget]; see
// [Server.SetJournalBudget], which changes it later. A budget below
// [MinJournalBudget] (0 and negative ones included) makes [New] fail
// naming it: it would keep no entry, and an assertion that a request was
// never sent would pass with nothing to check. [WithoutJournal] makes a
// server without a journal; the two together make New fail.
func WithJournalBudget(bytes int64) Option {
	return func(cfg *config) error {
		if err := checkJournalBudget(bytes); err != nil {
			return fmt.Errorf("fake: WithJournalBudget(%d): %w", bytes, err)
		}
		cfg.budget, cfg.budgetSet = bytes, true
		return nil
	}
}

// WithoutJournal makes a server that keeps no journal, for a server whose
// requests no test looks at (a benchmark's): it saves the journal's time
// and memory. [Server.Journal], [Server.JournalMatching],
// [Server.JournalBefore], [Server.JournalBackward], [Server.JournalLeft]
// and [Server.SetJournalBudget] of such a server panic, naming this
// option, rather than report no requests; [Server.ClearJournal] does
// nothing.
// Given with [WithJournalBudget], it makes [New] fail.
func WithoutJournal() Option {
	return func(cfg *config) error {
		cfg.noJournal = true
		return nil
	}
}

// DefaultMaxResources is the most resources an account of a [Server] may
// store unless [WithMaxResources] says otherwise: 200,000, twice what the
// largest of the project's benchmarks stores, and far more than a test
// needs.
const DefaultMaxResources = 200_000

// WithMaxResources bounds the number of resources each account stores, of
// every kind together (API keys, initial keys included, service users,
// backends, certificate authorities, event destinations and
// subscriptions, Kubernetes operators, seeded tunnels and endpoints),
// instead of [DefaultMaxResources]. Each reference one resource holds to
// another counts as one more: a failover of 100 backends counts 101, as
// does a subscription of 100 destinations, and a tunnel group counts one
// more for each tunnel it lists (an index entry of a reference takes a
// few hundred bytes, more than a small resource). Seeding a tunnel counts
// it and its place in each group whose labels it carries, so a seed too
// may be refused; deleting it frees them. A create, an update or a seed
// beyond the bound is answered with 409 and [acctapi.CodeResourceLimit]
// (and [Seed] fails with that error), and changes nothing; deleting a
// resource makes room. With the bounds on each resource's lists (such as
// [backends.MaxFailoverBackends]), it bounds what an account holds and
// what a page of any list costs. n must be at least 1.
func WithMaxResources(n int) Option {
	return func(cfg *config) error {
		if n < 1 {
			return fmt.Errorf("fake: WithMaxResources(%d): want at least 1", n)
		}
		cfg.resources = n
		return nil
	}
}
