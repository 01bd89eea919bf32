package fake

import (
	"bytes"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"net/http"
	"net/http/httptest"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	memdb "github.com/hashicorp/go-memdb"

	"github.com/acctapi/acctapi"
	"github.com/acctapi/acctapi/internal/iox"
	"github.com/acctapi/acctapi/k8sop"
)

// MaxBodyBytes is the largest request body the fake reads (1 MiB); a larger
// one is answered with 413.
const MaxBodyBytes = 1 << 20

// DefaultIngressEndpoint is the ingress_endpoint a Kubernetes operator with
// bindings gets when it names none; see [WithIngressEndpoint].
const DefaultIngressEndpoint = "connect.ngrok-endpoints.com:443"

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

	cfg       config
	mu        sync.RWMutex // guards db (swapped by Restore and Reset)
	db        *memdb.MemDB
	names     names // with db; see names for its locking
	ids       *idGen
	routes    router
	journal   journal
	faults    faults
	limiter   apiLimiter
	members   members               // request types' JSON member names, for decode
	resByIn   map[any]*resourceInfo // by create type
	resByOut  map[any]*resourceInfo // by resource type
	resByKind map[string]*resourceInfo
	signer    *signer
	filters   filterCache
	accounts  []Account // guarded by mu
	initial   *Snapshot // the state New left, for Reset

	httpSrv  *httptest.Server
	closeMu  sync.Mutex // guards closing, and inflight.Add against Close's Wait
	closing  bool
	inflight sync.WaitGroup
	once     sync.Once
}

// Account describes one account of the fake. ID and UserID are made up when
// empty; APIKeys are tokens that authenticate as the account's user.
type Account struct {
	// ID names the account ("ac_..."); it appears in no response but
	// selects the account in [Seed], [Get] and [List].
	ID string
	// UserID is the account's user ("usr_..."), the owner_id of its keys and
	// the principal of what they create.
	UserID string
	// APIKeys are the tokens of the account's initial API keys. One is made
	// up when empty.
	APIKeys []string
}

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
}

// Option configures a [Server].
type Option func(*config) error

// WithClock makes the server read time from c, such as a [ManualClock].
func WithClock(c Clock) Option {
	return func(cfg *config) error {
		if c == nil {
			return errors.New("fake: WithClock: nil clock")
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
		for i, k := range a.APIKeys {
			if k == "" || strings.ContainsAny(k, " \t\r\n") {
				// Name the key by its place, never by its value.
				return fmt.Errorf("fake: WithAccount: APIKeys[%d] is empty or holds white space", i)
			}
		}
		cfg.accounts = append(cfg.accounts, a)
		return nil
	}
}

// WithPublicBaseURL sets the base of every uri and next_page_uri the server
// writes, instead of the scheme and host each request reached.
func WithPublicBaseURL(u string) Option {
	return func(cfg *config) error {
		p, err := url.Parse(u)
		if err != nil || (p.Scheme != "http" && p.Scheme != "https") || p.Host == "" {
			return fmt.Errorf("fake: WithPublicBaseURL: %q is not an absolute http(s) URL", u)
		}
		cfg.publicURL = strings.TrimSuffix(u, "/")
		return nil
	}
}

// WithIngressEndpoint sets the ingress_endpoint given to Kubernetes
// operators that enable bindings without naming one. The default is
// [DefaultIngressEndpoint].
func WithIngressEndpoint(hostport string) Option {
	return func(cfg *config) error {
		if hostport == "" {
			return errors.New("fake: WithIngressEndpoint: empty endpoint")
		}
		cfg.ingress = hostport
		return nil
	}
}

// WithoutListener makes the server listen nowhere: requests reach it only
// through [Server.HTTPClient] and [Server.Client], in memory, which is
// faster. [Server.URL] is then "http://acctfake.invalid".
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

// New returns a running Server, listening on a loopback TCP port unless
// [WithoutListener] is given. Close it when done.
func New(opts ...Option) (*Server, error) {
	cfg := config{clock: realClock{}, ingress: DefaultIngressEndpoint}
	for _, opt := range opts {
		if err := opt(&cfg); err != nil {
			return nil, err
		}
	}
	if !cfg.seeded {
		var b [8]byte
		_, _ = rand.Read(b[:])
		cfg.seed = binary.LittleEndian.Uint64(b[:])
	}
	s := &Server{cfg: cfg, db: newDB(), ids: newIDGen(cfg.seed)}
	s.names.rebuild(s.db.Txn(false))
	if err := s.limiter.init(cfg.rateN, cfg.rateEvery); err != nil {
		return nil, err
	}
	s.signer = &signer{ids: s.ids}
	s.resByIn, s.resByOut, s.resByKind = map[any]*resourceInfo{}, map[any]*resourceInfo{}, map[string]*resourceInfo{}
	s.register()
	if len(cfg.accounts) == 0 {
		cfg.accounts = []Account{{}}
	}
	for _, a := range cfg.accounts {
		if _, err := s.AddAccount(a); err != nil {
			return nil, err
		}
	}
	s.cfg.accounts = nil
	s.initial = s.Snapshot()
	if cfg.inMemory {
		s.URL = inMemoryURL
	} else {
		s.httpSrv = httptest.NewServer(s)
		s.URL = s.httpSrv.URL
	}
	return s, nil
}

// TB is the part of testing.TB that [Start] needs; *testing.T, *testing.B
// and *rapid.T have it.
type TB interface {
	// Helper marks the caller as a test helper.
	Helper()
	// Cleanup registers a function to run when the test ends; Start
	// closes the server with it.
	Cleanup(func())
	// Fatalf reports an error and stops the test; Start calls it when the
	// server cannot start.
	Fatalf(format string, args ...any)
}

// Start is [New] for tests: it fails tb if the options are invalid and closes
// the server when tb ends.
func Start(tb TB, opts ...Option) *Server {
	tb.Helper()
	s, err := New(opts...)
	if err != nil {
		tb.Fatalf("fake.Start: %v", err)
	}
	tb.Cleanup(s.Close)
	return s
}

// Close stops the server and waits for requests in flight to finish.
func (s *Server) Close() {
	s.once.Do(func() {
		s.closeMu.Lock()
		s.closing = true
		s.closeMu.Unlock()
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

// HTTPClient returns an *http.Client that reaches this server: over TCP for
// a listening server, in memory for one made [WithoutListener].
func (s *Server) HTTPClient() *http.Client {
	if s.httpSrv != nil {
		return s.httpSrv.Client()
	}
	return &http.Client{Transport: transport{s}}
}

// Client returns an [acctapi.Client] for the server's first account,
// authenticated with its first key, with retries off so tests see the
// server's answers as they are. opts are applied after those defaults.
// It panics on an invalid option, as a test's programming error; use
// [Server.ClientFor] to have it reported instead.
func (s *Server) Client(opts ...acctapi.Option) *acctapi.Client {
	c, err := s.ClientFor(s.APIKey(), opts...)
	if err != nil {
		panic(fmt.Sprintf("fake: Client: %v", err)) // only a caller's invalid option gets here
	}
	return c
}

// ClientFor is [Server.Client] authenticated with apiKey instead: a key of
// another account ([Server.Accounts], [Server.AddAccount]) or one created
// through the API, say to act as a service user.
func (s *Server) ClientFor(apiKey string, opts ...acctapi.Option) (*acctapi.Client, error) {
	base := []acctapi.Option{acctapi.WithBaseURL(s.URL), acctapi.WithHTTPClient(s.HTTPClient()), acctapi.WithoutRetry()}
	return acctapi.NewClient(apiKey, append(base, opts...)...)
}

// Handler returns the server as an http.Handler, to mount on a server of
// your own (as cmd/acctfake does).
func (s *Server) Handler() http.Handler { return s }

// transport serves requests in memory.
type transport struct{ s *Server }

// RoundTrip serves req by calling the server's handler directly.
func (t transport) RoundTrip(req *http.Request) (*http.Response, error) {
	if !t.s.enter() {
		return nil, errors.New("fake: server closed")
	}
	defer t.s.inflight.Done()
	w := &memResponse{header: http.Header{}}
	var dropped bool
	func() {
		defer func() {
			if v := recover(); v != nil {
				if v != http.ErrAbortHandler {
					panic(v)
				}
				dropped = true
			}
		}()
		t.s.serveHTTP(w, req)
	}()
	if req.Body != nil {
		req.Body.Close()
	}
	if dropped {
		return nil, fmt.Errorf("fake: %s %s: connection reset by injected fault", req.Method, req.URL.Path)
	}
	if w.status == 0 {
		w.status = http.StatusOK
	}
	w.rd.Reset(w.body)
	return &http.Response{
		Status:        statusLine(w.status),
		StatusCode:    w.status,
		Proto:         "HTTP/1.1",
		ProtoMajor:    1,
		ProtoMinor:    1,
		Header:        w.header,
		Body:          w,
		ContentLength: int64(len(w.body)),
		Request:       req,
	}, nil
}

// memResponse is the http.ResponseWriter of an in-memory request, and
// then the body of its response.
type memResponse struct {
	header http.Header
	status int
	body   []byte
	rd     bytes.Reader
}

// Read implements io.Reader for the response body.
func (m *memResponse) Read(p []byte) (int, error) { return m.rd.Read(p) }

// Close implements io.Closer for the response body.
func (m *memResponse) Close() error { return nil }

// statusLines are the status lines of the answers the fake gives most.
var statusLines = func() map[int]string {
	m := map[int]string{}
	for code := 100; code < 600; code++ {
		if text := http.StatusText(code); text != "" {
			m[code] = strconv.Itoa(code) + " " + text
		}
	}
	return m
}()

// statusLine is the Status of a response with code.
func statusLine(code int) string {
	if line, ok := statusLines[code]; ok {
		return line
	}
	return strconv.Itoa(code) + " " + http.StatusText(code)
}

func (m *memResponse) Header() http.Header { return m.header }

func (m *memResponse) WriteHeader(status int) {
	if m.status == 0 {
		m.status = status
	}
}

func (m *memResponse) Write(b []byte) (int, error) {
	m.WriteHeader(http.StatusOK)
	m.body = append(m.body, b...)
	return len(b), nil
}

// now is the server's time, in UTC whole seconds as the API writes it.
func (s *Server) now() time.Time { return s.cfg.clock.Now().UTC().Truncate(time.Second) }

// hashToken returns the SHA-256 of a token (raw bytes in a string), the form keys are stored in.
func hashToken(token string) string {
	sum := sha256.Sum256([]byte(token))
	return string(sum[:])
}

// call is one request on its way through the pipeline.
type call struct {
	s       *Server
	r       *http.Request
	opID    string
	now     time.Time
	base    string
	account string
	owner   string // the key's owner_id: a usr_ or service_ id
	params  pathParams
	body    []byte
	txn     *memdb.Txn // set by handlers that write
	rtxn    *memdb.Txn // the request's read transaction; see read
	header  http.Header
	cert    *k8sop.Cert // a certificate signed before the write (operators)
}

// baseURL is the base of uris for a request.
func (s *Server) baseURL(r *http.Request) string {
	if s.cfg.publicURL != "" {
		return s.cfg.publicURL
	}
	if s.httpSrv == nil && (r.Host == "" || r.Host == "acctfake.invalid") {
		return inMemoryURL
	}
	scheme := "http"
	if r.TLS != nil {
		scheme = "https"
	}
	return scheme + "://" + r.Host
}

// ServeHTTP serves one API request: faults first, then authentication,
// version, routing, body checks, validation and the operation. After Close
// it answers 503.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if !s.enter() {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusServiceUnavailable)
		raw, _ := json.Marshal(errorf(http.StatusServiceUnavailable, acctapi.CodeUnavailable, "The server is closed.").body(s.ids.next("op", s.now())))
		_, _ = w.Write(raw)
		return
	}
	defer s.inflight.Done()
	s.serveHTTP(w, r)
}

// serveHTTP is ServeHTTP for a request already counted in flight.
func (s *Server) serveHTTP(w http.ResponseWriter, r *http.Request) {
	c := &call{s: s, r: r, now: s.now(), base: s.baseURL(r), header: w.Header()}
	c.opID = s.ids.next("op", c.now)
	var body []byte
	var readErr error
	if r.Body != nil && r.Body != http.NoBody {
		body, readErr = readBody(r.Body, r.ContentLength)
	}
	c.body = body
	entry := Entry{Time: c.now, Method: r.Method, Path: r.URL.Path, Query: r.URL.RawQuery, OperationID: c.opID}

	re := s.react(c)
	var status int
	var out any
	var err error
	switch {
	case re.drop:
	case re.answer != nil:
		err = re.answer
	default:
		status, out, err = s.serve(c, readErr)
	}
	var raw []byte
	if !re.drop {
		status, raw = encode(c, w.Header(), status, out, err)
	}
	entry.Status, entry.Dropped = status, re.drop || re.dropAfter
	s.journal.add(journalEntry{Entry: entry, req: clip(body), resp: clip(raw)})
	if entry.Dropped {
		panic(http.ErrAbortHandler) // net/http closes the connection; RoundTrip reports it
	}
	h := w.Header()
	h["Operation-Id"] = []string{c.opID}
	if raw != nil {
		h["Content-Type"] = []string{"application/json"}
	}
	w.WriteHeader(status)
	if raw != nil {
		_, _ = w.Write(raw)
	}
}

// encode turns a handler's result into the answer's status and JSON body:
// out on success, or err as the contract's error body, whose headers go
// into h.
func encode(c *call, h http.Header, status int, out any, err error) (int, []byte) {
	if err != nil {
		var ae *apiError
		if !errors.As(err, &ae) {
			ae = errorf(http.StatusInternalServerError, acctapi.CodeInternal, "internal error: %v", err)
		}
		for k, vs := range ae.header {
			h[k] = vs
		}
		raw, _ := json.Marshal(ae.body(c.opID))
		return ae.status, raw
	}
	if out == nil {
		return status, nil
	}
	raw, err := json.Marshal(out)
	if err != nil {
		raw, _ = json.Marshal(errorf(http.StatusInternalServerError, acctapi.CodeInternal, "internal error: encoding response").body(c.opID))
		return http.StatusInternalServerError, raw
	}
	return status, raw
}

// readBody reads a request body, up to one byte more than MaxBodyBytes,
// into a buffer the size the request declares (size ≤ 0: unknown), so that
// the body the journal keeps holds little unused capacity.
func readBody(body io.Reader, size int64) ([]byte, error) {
	return iox.ReadAll(io.LimitReader(body, MaxBodyBytes+1), min(size, MaxBodyBytes))
}

// serve runs the pipeline after fault injection.
func (s *Server) serve(c *call, readErr error) (status int, out any, err error) {
	defer func() {
		if v := recover(); v != nil {
			if v == http.ErrAbortHandler {
				panic(v)
			}
			status, out, err = 0, nil, errorf(http.StatusInternalServerError, acctapi.CodeInternal, "internal error: %v", v)
		}
	}()
	if err := s.authenticate(c); err != nil {
		return 0, nil, err
	}
	if err := s.limiter.check(c.account, c.now); err != nil {
		return 0, nil, err
	}
	if err := checkVersion(c.r.Header); err != nil {
		return 0, nil, err
	}
	rt, params := s.routes.match(c.r.URL.EscapedPath())
	if rt == nil {
		return 0, nil, errorf(http.StatusNotFound, acctapi.CodeNoRoute, "No API path %s.", c.r.URL.Path)
	}
	if rt.successor != "" {
		c.header.Set("Deprecation", "true")
		c.header.Set("Link", "<"+c.base+rt.successor+`>; rel="successor-version"`)
	}
	h, ok := rt.methods[c.r.Method]
	if !ok {
		e := errorf(http.StatusMethodNotAllowed, acctapi.CodeMethodNotAllowed, "Method %s is not allowed on %s.", c.r.Method, c.r.URL.Path)
		e.header = http.Header{"Allow": {rt.allow()}}
		return 0, nil, e
	}
	c.params = params
	if err := checkQuery(c.r.URL.RawQuery, rt.query[c.r.Method]); err != nil {
		return 0, nil, err
	}
	if c.r.Method == http.MethodPost || c.r.Method == http.MethodPatch || c.r.Method == http.MethodPut {
		if err := checkBody(c, readErr); err != nil {
			return 0, nil, err
		}
	}
	return h(c)
}

// authenticate checks the bearer token and finds the caller's account.
func (s *Server) authenticate(c *call) error {
	h := c.r.Header.Get("Authorization")
	if h == "" {
		return errorf(http.StatusUnauthorized, acctapi.CodeNoAuthorization, "The API requires an Authorization header: \"Authorization: Bearer <API key>\".")
	}
	scheme, token, ok := strings.Cut(h, " ")
	if !ok || !strings.EqualFold(scheme, "Bearer") || token == "" || strings.ContainsAny(token, " \t") {
		return errorf(http.StatusUnauthorized, acctapi.CodeBadAuthorization, "The Authorization header could not be parsed; use \"Bearer <API key>\".")
	}
	txn := c.read()
	key := hashToken(token)
	o := byToken(txn, key)
	// Compare the stored hash in constant time as well, so the answer's
	// timing does not depend on how much of a guess was right.
	if o == nil || subtle.ConstantTimeCompare([]byte(o.Token), []byte(key)) != 1 {
		return errorf(http.StatusUnauthorized, acctapi.CodeInvalidToken, "The API key you specified is invalid or has been deleted.")
	}
	c.account = o.Account
	c.owner = keyOwner(o)
	if strings.HasPrefix(c.owner, "service_") && !serviceUserActive(txn, c.account, c.owner) {
		return errorf(http.StatusForbidden, acctapi.CodeInactivePrincipal, "The API key belongs to an inactive service user.")
	}
	return nil
}

// checkVersion checks Service-Version, or its alias Ngrok-Version.
func checkVersion(h http.Header) error {
	v := h.Get("Service-Version")
	if v == "" {
		v = h.Get("Ngrok-Version")
	}
	switch strings.TrimSpace(v) {
	case "":
		return errorf(http.StatusBadRequest, acctapi.CodeNoVersion, "The request does not name an API version; send the header \"Service-Version: 2\".")
	case acctapi.APIVersion:
		return nil
	}
	return errorf(http.StatusBadRequest, acctapi.CodeBadVersion, "API version %q is not supported; supported versions: 2.", truncate(v, 32))
}

// checkQuery rejects unknown and repeated query parameters.
func checkQuery(raw string, allowed []string) error {
	if raw == "" {
		return nil
	}
	q, err := url.ParseQuery(raw)
	if err != nil {
		return errorf(http.StatusBadRequest, acctapi.CodeUnknownQueryParam, "The query string could not be parsed.")
	}
	// Unknown names first, then repeats, each in name order, so that the
	// answer does not depend on map order.
	keys := slices.Sorted(maps.Keys(q))
	for _, k := range keys {
		if !slices.Contains(allowed, k) {
			return &apiError{status: http.StatusBadRequest, code: acctapi.CodeUnknownQueryParam, field: truncate(k, 64),
				msg: fmt.Sprintf("Unknown query parameter %q; supported: %s.", truncate(k, 64), strings.Join(allowed, ", "))}
		}
	}
	for _, k := range keys {
		if vs := q[k]; len(vs) > 1 {
			return &apiError{status: http.StatusBadRequest, code: acctapi.CodeRepeatedQueryParam, field: k,
				msg: fmt.Sprintf("The query parameter %q is given more than once.", k)}
		}
	}
	return nil
}

// checkBody checks a request body's size and content type.
func checkBody(c *call, readErr error) error {
	if readErr != nil {
		return errorf(http.StatusBadRequest, acctapi.CodeInvalidJSON, "The request body could not be read.")
	}
	if len(c.body) > MaxBodyBytes {
		return errorf(http.StatusRequestEntityTooLarge, acctapi.CodeBodyTooLarge, "The request body is larger than %d bytes.", MaxBodyBytes)
	}
	if len(bytes.TrimSpace(c.body)) == 0 {
		c.body = []byte("{}")
		return nil
	}
	ct := c.r.Header.Get("Content-Type")
	if mt, _, _ := strings.Cut(ct, ";"); !strings.EqualFold(strings.TrimSpace(mt), "application/json") {
		return errorf(http.StatusUnsupportedMediaType, acctapi.CodeBadContentType, "The request body must be JSON, sent with \"Content-Type: application/json\"; got %q.", truncate(ct, 64))
	}
	return nil
}

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n-- // never split a character
	}
	return s[:n] + "…"
}

// read returns the request's read transaction, made on first use: one
// consistent snapshot serves authentication and the handler.
func (c *call) read() *memdb.Txn {
	if c.rtxn == nil {
		c.rtxn = c.s.read()
	}
	return c.rtxn
}

// read returns a read transaction on the current store.
func (s *Server) read() *memdb.Txn {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return s.db.Txn(false)
}

// write runs fn in a write transaction, committing when it returns nil. It
// holds the read side of s.mu throughout, so Restore and Reset, which swap
// the store, wait for writes in progress. fn never calls user code and
// never takes s.mu again (a second read lock deadlocks once a writer
// waits): what it needs of the accounts it reads from the store.
func (s *Server) write(fn func(txn *memdb.Txn) error) error {
	s.mu.RLock()
	defer s.mu.RUnlock()
	txn := s.db.Txn(true)
	committed := false
	defer func() {
		if !committed { // failed, or panicked
			s.names.discard()
			txn.Abort()
		}
	}()
	if err := fn(txn); err != nil {
		return err
	}
	s.names.commit()
	txn.Commit()
	committed = true
	return nil
}
