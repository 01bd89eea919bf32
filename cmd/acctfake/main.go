// Command acctfake serves the fake Account Management API on a TCP address,
// for tests written in any language.
//
// Usage:
//
//	go build -o acctfake ./cmd/acctfake
//	./acctfake -addr 127.0.0.1:0
//
// On start it prints these lines on standard output:
//
//	listening on http://127.0.0.1:41234
//	api key: <key>
//	admin token: <token>
//
// and, between the last two, a line for each API key that -fixtures
// created (the API shows a key's token only to the request that creates
// it; see fake.Server.FixtureAPIKeys), named by its fixture's ref or its
// id:
//
//	fixture api key ci-key (account ac_..., owner service_...): <token>
//
// Send API requests with "Authorization: Bearer <key>" and
// "Service-Version: 2". Stop it with Ctrl-C, SIGINT or SIGTERM: requests in
// flight get the grace period (-grace), then are cancelled and answered
// 503; the exit status is then 0. A second SIGINT or SIGTERM ends the
// process at once, with status 128 plus the signal's number (130, 143).
//
// # The admin API
//
// The admin API under /_acctfake/ is the fake's Go API over HTTP,
// authenticated with "Authorization: Bearer <admin token>" (health needs
// none). Bodies are JSON, read as strictly as the API's (fake.Server.DecodeBody); an
// operation that takes none accepts an empty body, {} or null. Errors are the
// contract's error body.
//
//	GET    /_acctfake/health                  {"status":"ok"}
//	GET    /_acctfake/journal                 Server.Journal, newest first, paged like the API's lists:
//	                                          ?method=POST&path=/service_users*&status=201&limit=10&before_id=<id>
//	DELETE /_acctfake/journal                 Server.ClearJournal
//	POST   /_acctfake/faults                  Server.React with a fake.Fault: {"method", "path", "times",
//	                                          "status", "error_code", "msg", "retry_after", "latency", "drop"}
//	GET    /_acctfake/faults                  the faults added and not used up, with remaining and hits
//	DELETE /_acctfake/faults[/{id}]           remove every one, or one
//	GET    /_acctfake/clock                   {"now", "manual"}
//	PUT    /_acctfake/clock                   {"now": "2030-01-01T00:00:00Z"}: ManualClock.Set
//	POST   /_acctfake/clock/advance           {"by": "36h"}: ManualClock.Advance
//	POST   /_acctfake/snapshots               Server.Snapshot; GET lists them
//	POST   /_acctfake/snapshots/{id}/restore  Server.Restore; DELETE /_acctfake/snapshots/{id} forgets one
//	POST   /_acctfake/reset                   Server.Reset, then the state at start (fixtures loaded)
//	GET    /_acctfake/accounts                Server.Accounts: the initial keys that still authenticate
//	POST   /_acctfake/accounts                Server.AddAccount: {"id", "user_id", "api_keys"}
//	POST   /_acctfake/accounts/{id}/api_keys  POST /api_keys as the account's first live initial key
//
// The journal's limit and status are decimal digits, as the API's limit
// is ("+5" is refused), and its method and path are checked as a fault's
// are (fake.Server.JournalFilter): a path that matches no path the fake
// serves, such as /service_user/* or /api_keys/service_* (API keys' ids
// start ak_), is a 400, so that an assertion that no such request happened
// cannot pass on a typo. Adding an API key goes through the fake's POST
// /api_keys, faults included: a fault's answer is the answer, and a fault
// that drops that request ("drop": "before" or "after") closes the admin
// request's connection without an answer too (after "after", the key
// exists).
//
// What one request can make the admin API hold is bounded, each bound a
// 400 naming it: at most 1,000 faults (fake.MaxReactors), a path pattern
// of at most 256 bytes (fake.MaxPatternBytes), 100 snapshots, 100
// accounts of at most 1,000 initial keys (fake.MaxAccountKeys); fixtures
// are at most 64 MiB (fake.MaxFixturesBytes).
//
// For example, to answer the next GET /service_users with 429:
//
//	curl -H "Authorization: Bearer $ADMIN_TOKEN" -H "Content-Type: application/json" \
//	  -d '{"method": "GET", "path": "/service_users", "times": 1, "status": 429, "retry_after": 2}' \
//	  "$URL/_acctfake/faults"
//
// # Flags
//
//	-addr ADDR            TCP address (default 127.0.0.1:8080; port 0 picks a free one)
//	-api-key KEY          the first account's API key (default: a fresh random one)
//	-admin-token TOKEN    the admin API's token (default: a fresh random one)
//	-fixtures FILE        JSON resources (and accounts) to create on start; see fake.Server.LoadFixtures
//	-public-url URL       the base of every uri and next_page_uri written (fake.WithPublicBaseURL), such as
//	                      https://fake.example behind a TLS proxy (default: the scheme and host each request reached)
//	-id-seed N            deterministic tokens, and ids with -clock manual (ids carry the time; fake.WithIDSeed)
//	-clock real|manual    manual: the clock moves only through the admin API
//	-clock-start TIME     the manual clock's start, RFC 3339 (default: the time acctfake starts)
//	-journal-budget BYTES the most memory the journal holds (default 64 MiB), at least
//	                      fake.MinJournalBudget (a few hundred bytes; less is refused at start):
//	                      oldest entries dropped first; the newest request always kept, its bodies,
//	                      then its path and query, cut to fit (see fake.Server.SetJournalBudget);
//	                      whatever the budget, at most 100,000 entries, and 64 KiB of each body
//	-max-resources N      the most resources each account stores, every kind together, initial keys
//	                      included, each reference from one to another (a failover's backend, a
//	                      subscription's destination, a tunnel group's tunnel) counting as one more (default 200000,
//	                      fake.DefaultMaxResources); a create or update beyond is 409
//	                      ERR_ACCTAPI_RESOURCE_LIMIT
//	-grace D              how long requests in flight may finish after a signal (default 10s)
//	-request-timeout D    answer 503 to a request still running after D (default 25s)
//	-max-header-bytes N   request line and headers beyond N bytes are answered 431 (default 64 KiB)
//
// and the connection timeouts -read-header-timeout, -read-timeout,
// -write-timeout and -idle-timeout.
//
// # Divergences
//
// What comes before any handler runs is net/http's to answer, with the
// contract's JSON error body all the same: a malformed request line,
// header, Host or escape in the path, and HTTP/1.1 without a Host (400,
// ERR_ACCTAPI_MALFORMED_REQUEST); a Transfer-Encoding other than chunked
// (501) and a version other than HTTP/1.x (505), with the same code;
// headers beyond what it reads at all (431, ERR_ACCTAPI_HEADERS_TOO_LARGE,
// at 1 MiB or twice -max-header-bytes); a client too slow to send its
// headers (nothing, or a 400 in JSON). Their operation ids are the admin
// API's. The one answer without a JSON body is an Expect other than
// 100-continue: 417, with no body. An HTTP/1.0 request without a Host gets
// uris on the address it reached.
package main

import (
	"cmp"
	"context"
	"crypto/rand"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/signal"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/acctapi/acctapi/fake"
)

func main() {
	// Notify also undoes an ignored SIGINT, as a program started with & from
	// a non-interactive shell has, so that both signals work there too.
	sigs := make(chan os.Signal, 2)
	signal.Notify(sigs, os.Interrupt, syscall.SIGTERM)
	ctx, cancel := context.WithCancel(context.Background())
	go func() {
		<-sigs
		cancel()
		sig := <-sigs
		fmt.Fprintf(os.Stderr, "acctfake: %v again: stopping at once\n", sig)
		os.Exit(exitStatus(sig))
	}()
	os.Exit(run(ctx, os.Args[1:], os.Stdout, os.Stderr))
}

// exitStatus is a shell's status for a process ended by sig: 128 plus the
// signal's number.
func exitStatus(sig os.Signal) int {
	if s, ok := sig.(syscall.Signal); ok {
		return 128 + int(s)
	}
	return 1
}

// config is what the flags say.
type config struct {
	addr          string
	apiKey        string
	adminToken    string
	fixtures      string
	publicURL     string
	idSeed        uint64
	seeded        bool
	manualClock   bool
	clockStart    time.Time
	journalBudget int64
	maxResources  int

	grace             time.Duration // for requests in flight after a signal
	requestTimeout    time.Duration // a request still running is answered 503
	maxHeaderBytes    int           // request line and headers, answered 431 beyond
	readHeaderTimeout time.Duration
	readTimeout       time.Duration
	writeTimeout      time.Duration
	idleTimeout       time.Duration
}

// httpServer is the server of h for cfg, with cfg's timeouts and header
// limit, its requests' contexts derived from base.
func httpServer(cfg config, h http.Handler, base context.Context) *http.Server {
	return &http.Server{
		Handler:           h,
		BaseContext:       func(net.Listener) context.Context { return base },
		ReadHeaderTimeout: cfg.readHeaderTimeout,
		ReadTimeout:       cfg.readTimeout,
		WriteTimeout:      cfg.writeTimeout,
		IdleTimeout:       cfg.idleTimeout,
		MaxHeaderBytes:    netHTTPHeaderLimit(cfg.maxHeaderBytes),
		// OPTIONS * reaches the handler, which answers it as the API does
		// any path it does not serve; net/http's own answer is a bare 200.
		DisableGeneralOptionsHandler: true,
	}
}

// parseFlags reads the command line. It returns the exit status 2 when the
// command line is wrong, having said why on stderr.
func parseFlags(args []string, stderr io.Writer) (config, int) {
	cfg := config{}
	fs := flag.NewFlagSet("acctfake", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.StringVar(&cfg.addr, "addr", "127.0.0.1:8080", "TCP address to listen on (port 0: a free port)")
	fs.StringVar(&cfg.apiKey, "api-key", "", "the first account's API key (default: a fresh random key)")
	fs.StringVar(&cfg.adminToken, "admin-token", "", "the admin API's token (default: a fresh random token)")
	fs.StringVar(&cfg.fixtures, "fixtures", "", "JSON file of resources and accounts to create on start")
	fs.StringVar(&cfg.publicURL, "public-url", "", "the base of every uri and next_page_uri written, such as https://fake.example behind a TLS proxy (default: the scheme and host each request reached)")
	fs.Func("id-seed", "make tokens deterministic from this seed (an unsigned integer), and ids with -clock manual (ids carry the time)", func(v string) error {
		n, err := strconv.ParseUint(v, 10, 64)
		cfg.idSeed, cfg.seeded = n, true
		return err
	})
	clock := fs.String("clock", "real", `the server's clock: "real", or "manual" (moved only through the admin API)`)
	start := fs.String("clock-start", "", "the manual clock's start, RFC 3339 (default: now)")
	fs.Int64Var(&cfg.journalBudget, "journal-budget", fake.DefaultJournalBudget, fmt.Sprintf("the most bytes of memory the request journal holds, at least %d: oldest entries dropped first; the newest request is always kept, its bodies, then its path and query, cut to fit; whatever the budget, at most 100,000 entries and 64 KiB of each body", fake.MinJournalBudget))
	fs.IntVar(&cfg.maxResources, "max-resources", fake.DefaultMaxResources, "the most resources each account stores, every kind together, each reference from one to another counting as one more; a create or update beyond is answered 409")
	fs.DurationVar(&cfg.grace, "grace", 10*time.Second, "how long requests in flight may finish after SIGINT or SIGTERM")
	fs.DurationVar(&cfg.requestTimeout, "request-timeout", 25*time.Second, "answer 503 to a request still running after this long (under -write-timeout)")
	fs.IntVar(&cfg.maxHeaderBytes, "max-header-bytes", 64<<10, "answer 431 to a request line and headers larger than this")
	fs.DurationVar(&cfg.readHeaderTimeout, "read-header-timeout", 5*time.Second, "time a client has to send a request's headers")
	fs.DurationVar(&cfg.readTimeout, "read-timeout", 30*time.Second, "time a client has to send a whole request")
	fs.DurationVar(&cfg.writeTimeout, "write-timeout", 30*time.Second, "time from a request's headers to the end of its answer")
	fs.DurationVar(&cfg.idleTimeout, "idle-timeout", 2*time.Minute, "time an idle keep-alive connection is kept")
	if err := fs.Parse(args); err != nil {
		return cfg, 2
	}
	bad := func(format string, args ...any) (config, int) {
		fmt.Fprintf(stderr, "acctfake: "+format+"\n", args...)
		return cfg, 2
	}
	if fs.NArg() > 0 {
		return bad("unexpected arguments %q", fs.Args())
	}
	switch *clock {
	case "real":
		if *start != "" {
			return bad("-clock-start needs -clock manual")
		}
	case "manual":
		cfg.manualClock = true
		cfg.clockStart = time.Now().UTC().Truncate(time.Second)
		if *start != "" {
			t, err := time.Parse(time.RFC3339, *start)
			if err != nil {
				return bad("-clock-start: %v", err)
			}
			if !representable(t) {
				return bad("-clock-start %s: outside the years 1 to 9999", *start)
			}
			cfg.clockStart = t
		}
	default:
		return bad(`-clock %q: want "real" or "manual"`, *clock)
	}
	if cfg.adminToken != "" && strings.ContainsAny(cfg.adminToken, " \t\r\n") {
		return bad("-admin-token holds white space")
	}
	if cfg.adminToken != "" && cfg.adminToken == cfg.apiKey {
		return bad("-admin-token is the same as -api-key: the admin token must not authenticate to the account API")
	}
	if cfg.maxResources < 1 {
		return bad("-max-resources %d: want at least 1", cfg.maxResources)
	}
	if cfg.journalBudget < fake.MinJournalBudget {
		return bad("-journal-budget %d: want at least %d bytes, what the smallest journal entry needs; a smaller budget would keep no request", cfg.journalBudget, fake.MinJournalBudget)
	}
	for _, d := range []struct {
		name string
		v    time.Duration
	}{{"grace", cfg.grace}, {"request-timeout", cfg.requestTimeout}, {"read-header-timeout", cfg.readHeaderTimeout},
		{"read-timeout", cfg.readTimeout}, {"write-timeout", cfg.writeTimeout}, {"idle-timeout", cfg.idleTimeout}} {
		if d.v <= 0 {
			return bad("-%s %v: want a positive duration", d.name, d.v)
		}
	}
	if cfg.requestTimeout >= cfg.writeTimeout {
		return bad("-request-timeout %v: want less than -write-timeout %v, so that the 503 can still be written", cfg.requestTimeout, cfg.writeTimeout)
	}
	if cfg.maxHeaderBytes < 1<<10 {
		return bad("-max-header-bytes %d: want at least 1024", cfg.maxHeaderBytes)
	}
	return cfg, -1
}

// adminTokenUnused returns an error when the fixtures gave an account an
// API key whose token is the admin token (when one was given; the keys
// fixtures create through /api_keys get tokens the server makes up):
// the admin token must not authenticate to the account API, as
// parseFlags holds of -api-key and the admin API of the keys it adds. The
// error names the key by its place, never by its value.
func adminTokenUnused(srv *fake.Server, adminToken string) error {
	if adminToken == "" {
		return nil
	}
	for _, acct := range srv.Accounts() {
		for i, k := range acct.APIKeys {
			if k == adminToken {
				return fmt.Errorf("-fixtures: account %s's api_keys[%d] is the -admin-token: the admin token must not authenticate to the account API", acct.ID, i)
			}
		}
	}
	return nil
}

// netHTTPHeaderLimit is what net/http reads of a request line and headers:
// at least 1 MiB, so that the front end answers 431 in JSON up to there.
func netHTTPHeaderLimit(own int) int { return max(1<<20, 2*own) }

// run serves until ctx ends and returns the exit status.
func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	cfg, code := parseFlags(args, stderr)
	if code >= 0 {
		return code
	}
	fail := func(err error) int {
		fmt.Fprintf(stderr, "acctfake: %v\n", err)
		return 1
	}
	opts := []fake.Option{fake.WithoutListener(), fake.WithMaxResources(cfg.maxResources), fake.WithJournalBudget(cfg.journalBudget)}
	if cfg.publicURL != "" {
		opts = append(opts, fake.WithPublicBaseURL(cfg.publicURL))
	}
	if cfg.apiKey != "" {
		opts = append(opts, fake.WithAccount(fake.Account{APIKeys: []string{cfg.apiKey}}))
	}
	if cfg.seeded {
		opts = append(opts, fake.WithIDSeed(cfg.idSeed))
	}
	var clock *fake.ManualClock
	if cfg.manualClock {
		clock = fake.NewManualClock(cfg.clockStart)
		opts = append(opts, fake.WithClock(clock))
	}
	srv, err := fake.New(opts...)
	if err != nil {
		return fail(err)
	}
	defer srv.Close()
	if cfg.fixtures != "" {
		f, err := os.Open(cfg.fixtures)
		if err == nil {
			err = srv.LoadFixtures(f)
			f.Close()
		}
		if err != nil {
			return fail(err)
		}
		if err := adminTokenUnused(srv, cfg.adminToken); err != nil {
			return fail(err)
		}
	}
	if cfg.adminToken == "" {
		cfg.adminToken = rand.Text()
	}
	ln, err := net.Listen("tcp", cfg.addr)
	if err != nil {
		return fail(err)
	}

	// Requests run in requests, which the end of the grace period cancels.
	requests, cancelRequests := context.WithCancel(context.Background())
	defer cancelRequests()
	admin := newAdmin(srv, cfg.adminToken, clock)
	admin.publicURL = strings.TrimRight(cfg.publicURL, "/")
	hs := httpServer(cfg, &frontend{api: srv.Handler(), admin: admin, newID: srv.NewOperationID, maxHeaderBytes: cfg.maxHeaderBytes,
		timeout: cfg.requestTimeout, shutdown: requests, drainWait: cfg.readTimeout}, requests)
	fmt.Fprintf(stdout, "listening on http://%s\n", ln.Addr())
	fmt.Fprintf(stdout, "api key: %s\n", srv.APIKey())
	for _, k := range srv.FixtureAPIKeys() {
		// The API shows a key's token only to the request that creates it.
		fmt.Fprintf(stdout, "fixture api key %s (account %s, owner %s): %s\n", cmp.Or(k.Ref, k.ID), k.Account, k.OwnerID, k.Token)
	}
	fmt.Fprintf(stdout, "admin token: %s\n", cfg.adminToken)
	errc := make(chan error, 1)
	// What net/http answers itself, before the front end sees a request,
	// is answered in JSON too; its operation ids are the admin API's, so
	// a malformed request does not change the ids -id-seed replays.
	ln = &jsonErrorListener{Listener: ln, newID: admin.ids.next, netHTTPReads: hs.MaxHeaderBytes}
	go func() { errc <- hs.Serve(ln) }()
	select {
	case err := <-errc:
		return fail(err)
	case <-ctx.Done():
	}
	fmt.Fprintf(stderr, "acctfake: shutting down: requests in flight have %v; a second signal stops at once\n", cfg.grace)
	shutdown(hs, cancelRequests, cfg.grace, stderr)
	return 0
}

// cancelledGrace is the least time requests cancelled at the end of the
// grace period get to write their 503 before every connection is closed:
// a cancelled request answers at once, but a process starved of CPU (a
// loaded CI machine) may take a while, and a short -grace must not cost
// it the answer. The program exits as soon as the answers are written.
const cancelledGrace = 10 * time.Second

// shutdown stops hs: it stops accepting, gives requests in flight the grace
// period, then cancels them through their context (the front end answers
// them 503) and gives their answers as long again, and at least
// cancelledGrace, to be written before it closes every connection.
func shutdown(hs *http.Server, cancelRequests context.CancelFunc, grace time.Duration, stderr io.Writer) {
	wait := func(d time.Duration) error {
		ctx, cancel := context.WithTimeout(context.Background(), d)
		defer cancel()
		return hs.Shutdown(ctx)
	}
	if err := wait(grace); err == nil || errors.Is(err, http.ErrServerClosed) {
		return
	}
	fmt.Fprintf(stderr, "acctfake: requests still in flight after %v are cancelled\n", grace)
	cancelRequests()
	if err := wait(max(grace, cancelledGrace)); err != nil && !errors.Is(err, http.ErrServerClosed) {
		hs.Close()
	}
}
