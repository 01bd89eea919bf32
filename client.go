package acctapi

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"math"
	"net/http"
	"net/url"
	"reflect"
	"slices"
	"strings"
	"time"
	"unicode"

	"golang.org/x/time/rate"

	"github.com/acctapi/acctapi/internal/baseurl"
	"github.com/acctapi/acctapi/internal/clienthook"
	"github.com/acctapi/acctapi/internal/field"
	"github.com/acctapi/acctapi/internal/iox"
	"github.com/acctapi/acctapi/internal/resources"
	"github.com/acctapi/acctapi/internal/trunc"
)

// The domain packages' request plumbing (internal/rest) validates list
// options through this hook: they travel in the query, which Do cannot
// validate the way it validates a body.
func init() {
	clienthook.Validates = func(c any) bool { return c.(*Client).validate }
}

// DefaultBaseURL is the base URL a [Client] uses unless [WithBaseURL] says
// otherwise.
const DefaultBaseURL = "https://api.ngrok.com"

// APIVersion is the API version a [Client] asks for, in the Service-Version
// header, the Ngrok-Version header, or both; see [WithDialect].
const APIVersion = "2"

// Shared header values; see newRequest.
var (
	versionHeader = []string{APIVersion}
	jsonHeader    = []string{"application/json"}
)

// maxErrorBody bounds how much of an error response is read, and how much
// of an unwanted success body is drained for the connection's reuse.
const maxErrorBody = 64 << 10

// DefaultMaxResponseBytes is the longest success response body a [Client]
// reads unless [WithMaxResponseBytes] says otherwise: 64 MiB. A page of 100
// items of any resource the API serves is far smaller (HTTP response
// backends with bodies near the 1 MiB request limit aside), while a broken
// or hostile server cannot make a call read more than this. What the bytes
// decode into can be larger: a page of more items than its limit is
// refused undecoded ([ErrPageTooLong]), but an array within an item (a
// tunnel group's tunnels, say) of many "{}" decodes into a struct each,
// about ten times the bytes (measured: a 1 MiB tunnel group of 349,000
// empty tunnels held 11 MB once decoded).
const DefaultMaxResponseBytes = 64 << 20

// DefaultTimeout is the time limit of the HTTP client a [Client] makes when
// [WithHTTPClient] gives none: 30 s for one attempt, from sending the
// request to reading the whole response, so a server that hangs cannot block
// a call whose context has no deadline. Retries each get the full limit.
const DefaultTimeout = 30 * time.Second

// maxErrorMsg bounds, in bytes, the Msg made from an error body that is not
// the API's JSON, and an error code.
const maxErrorMsg = 200

// maxJSONErrorMsg bounds, in bytes, the Msg of the API's JSON error body:
// the API's own messages are far shorter (a filter's error names the
// construct it refuses).
const maxJSONErrorMsg = 4 << 10

// Client is the transport every resource client is built on: it holds the
// base URL, the API key, the HTTP client and the retry policy, and sends JSON
// requests with the headers the API requires.
//
// A Client is safe for concurrent use and should be built once and shared.
// Build resource clients on it, such as account.NewServiceUsers(c). The zero
// value is not usable; call [NewClient].
type Client struct {
	base       *url.URL
	apiKey     string
	http       *http.Client
	userAgent  string
	retry      RetryPolicy
	validate   bool
	maxResp    int64 // longest success body read; see WithMaxResponseBytes
	dialect    Dialect
	dialectSet bool          // WithDialect was given
	throttle   *rate.Limiter // nil: requests are not throttled
	auth, ua   []string      // header values, made once by NewClient
}

// Option configures a [Client]. Options are checked when [NewClient] runs,
// in order: one given twice, or two that set the same thing (WithRetry and
// WithoutRetry), take the later value, as functional options do in Go.
type Option func(*Client) error

// WithBaseURL sets the API's base URL, such as a fake's URL. It must be an
// absolute http or https URL without user information, query or fragment;
// trailing slashes are ignored.
func WithBaseURL(raw string) Option {
	return func(c *Client) error {
		u, err := baseurl.Parse("acctapi: base URL", raw)
		if err != nil {
			return err
		}
		c.base = u
		return nil
	}
}

// WithHTTPClient sets the HTTP client requests go through, with its own
// Timeout (zero means none) and Transport. The default is a client of the
// Client's own with [http.DefaultTransport] and a Timeout of
// [DefaultTimeout]. It must not be nil.
//
// The Client keeps a copy of h whose redirect policy is h's CheckRedirect
// (or net/http's default) behind a guard of its own: a redirect is followed
// only to the base URL's origin (scheme, host and port) and with the
// request's method, so that the API key never goes elsewhere and an
// update is never resent as a GET. Any other redirect is an error wrapping
// [ErrNoResource].
func WithHTTPClient(h *http.Client) Option {
	return func(c *Client) error {
		if h == nil {
			return errors.New("acctapi: WithHTTPClient: nil *http.Client")
		}
		c.http = h
		return nil
	}
}

// WithMaxResponseBytes sets the longest success response body the client
// reads, n bytes (at least 1); the default is [DefaultMaxResponseBytes]. A
// longer body is not read past the limit: the call returns a
// [*ResponseTooLargeError].
func WithMaxResponseBytes(n int64) Option {
	return func(c *Client) error {
		if n < 1 {
			return fmt.Errorf("acctapi: WithMaxResponseBytes(%d): want at least 1", n)
		}
		c.maxResp = n
		return nil
	}
}

// WithUserAgent puts product (such as "myapp/1.2") at the front of the
// User-Agent header, before the library's own "acctapi-go/<version>". It
// must not be empty. Given twice, the later one is used, as for every
// option.
func WithUserAgent(product string) Option {
	return func(c *Client) error {
		switch {
		case product == "":
			return errors.New("acctapi: WithUserAgent: empty product; leave the option out for the library's own User-Agent alone")
		case strings.ContainsAny(product, "\r\n"):
			return errors.New("acctapi: WithUserAgent: user agent contains a line break")
		}
		c.userAgent = product + " " + userAgent()
		return nil
	}
}

// WithRetry sets the retry policy; see [RetryPolicy] for the defaults.
func WithRetry(p RetryPolicy) Option {
	return func(c *Client) error {
		if err := p.validate(); err != nil {
			return err
		}
		c.retry = p
		return nil
	}
}

// WithoutRetry turns retries off: every request is sent exactly once.
func WithoutRetry() Option {
	return func(c *Client) error {
		c.retry = RetryPolicy{MaxAttempts: 1}
		return nil
	}
}

// WithoutValidation makes the client send requests without running their
// Validate methods first, so a test can send invalid input to a server on
// purpose: neither a request body's (see [Client.Do]) nor the list options'
// ([ListOptions.Validate], [FilterOptions.Validate]) run. Text that is not
// valid UTF-8 still cannot be sent: encoding/json writes each such byte as
// U+FFFD, so the server receives other, valid text (send raw bytes with
// your own http.Client to test a server's refusal of it).
func WithoutValidation() Option {
	return func(c *Client) error {
		c.validate = false
		return nil
	}
}

// NewClient returns a Client that authenticates with apiKey. It returns an
// error if apiKey is empty or holds whitespace or a control character, an
// option is invalid or an option is nil (named by its position, counting
// from 1).
func NewClient(apiKey string, opts ...Option) (*Client, error) {
	if apiKey == "" {
		return nil, errors.New("acctapi: NewClient: empty API key")
	}
	if strings.ContainsFunc(apiKey, unicode.IsSpace) {
		return nil, errors.New("acctapi: NewClient: API key contains whitespace")
	}
	if strings.ContainsFunc(apiKey, unicode.IsControl) {
		// net/http would refuse every request's Authorization header.
		return nil, errors.New("acctapi: NewClient: API key contains a control character")
	}
	base, _ := url.Parse(DefaultBaseURL)
	c := &Client{
		base:      base,
		apiKey:    apiKey,
		http:      &http.Client{Timeout: DefaultTimeout},
		userAgent: userAgent(),
		retry:     DefaultRetryPolicy(),
		validate:  true,
		maxResp:   DefaultMaxResponseBytes,
	}
	for i, opt := range opts {
		if opt == nil {
			return nil, fmt.Errorf("acctapi: NewClient: option %d of %d is nil", i+1, len(opts))
		}
		if err := opt(c); err != nil {
			return nil, err
		}
	}
	if !c.dialectSet {
		c.dialect = defaultDialect(c.base)
	}
	c.http = c.followOnlyOwnRedirects(c.http)
	c.auth = []string{"Bearer " + c.apiKey}
	c.ua = []string{c.userAgent}
	return c, nil
}

// BaseURL returns the base URL requests are sent to.
func (c *Client) BaseURL() string { return c.base.String() }

// Do sends one API request and decodes the response. It is the raw escape
// hatch beneath the resource clients (package account and its siblings),
// for an operation they do not have.
//
// path is either an absolute path, each segment escaped with
// [url.PathEscape] (such as "/service_users/a%2Fb"), which is joined to the
// base URL, or an absolute URL (such as a next_page_uri), which is used as it is if it
// has the base URL's scheme and host (the API key is never sent elsewhere). query,
// when not nil, is added to the URL; a parameter that path's query has
// too is an error. in, when not nil, is sent as the JSON
// body; it is marshalled once and never modified. A member of in that
// points to a nil slice or map is sent as [] or {}, as one that points to
// an empty one is (JSON null would mean "absent", contract §1, and leave
// the resource unchanged). out, when not nil, must be a non-nil pointer,
// which receives the decoded JSON response; unknown members are ignored.
//
// When in, or a pointer to it (in passed by value), has a method
// Validate() error, Do runs it first and returns its error without
// sending anything, unless the client was built [WithoutValidation]: this
// is how the resource clients validate request bodies, so the one switch
// governs them all.
//
// in must not be a nil pointer: that is an error (a [*FieldError] on the
// request), whether or not the client validates. So is, before anything
// is sent, a path with an empty, "." or ".." segment, or that names an
// item of a collection by another resource's id ("/service_users/ak_…":
// it would answer 404, which a caller's "not found: already gone" check
// takes for success).
//
// A response status of 400 or more becomes an [*Error]. A DELETE succeeds
// only with 204 No Content, as the API answers every DELETE (contract
// §1): any other status below 400 (a proxy's login page, 200 with {}, a
// redirect without a Location) is an error wrapping [ErrNoResource]. A
// success body longer than the client's limit ([WithMaxResponseBytes]) is
// not read past it and becomes a [*ResponseTooLargeError]. A redirect is
// followed only within the base URL's origin and keeping the method (see
// [WithHTTPClient]); any other is an error wrapping [ErrNoResource].
// Requests are retried as the client's [RetryPolicy] says.
func (c *Client) Do(ctx context.Context, method, path string, query url.Values, in, out any) error {
	if c == nil {
		// A resource client built on a nil *Client (account.NewServiceUsers(nil)).
		return fmt.Errorf("acctapi: %s %s: the *Client is nil; make one with NewClient", method, trunc.String(path, 200))
	}
	if err := field.CheckRequest(in); err != nil {
		return err
	}
	if out != nil {
		if rv := reflect.ValueOf(out); rv.Kind() != reflect.Pointer || rv.IsNil() {
			// Checked before sending: the request would take effect and
			// only its answer be lost.
			return fmt.Errorf("acctapi: %s %s: out must be a non-nil pointer, not %T", method, path, out)
		}
	}
	if v, ok := validator(in); ok && c.validate {
		if err := v.Validate(); err != nil {
			return err
		}
	}
	u, err := c.resolve(path, query)
	if err != nil {
		return err
	}
	var body []byte
	if in != nil {
		if body, err = json.Marshal(field.NilAsEmpty(in)); err != nil {
			return fmt.Errorf("acctapi: encode %s %s: %w", method, path, err)
		}
	}
	resp, unsure, err := c.send(ctx, method, u, body)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if loc := resp.Header.Get("Location"); loc != "" && resp.StatusCode >= 300 && resp.StatusCode < 400 {
		// A redirect the guard did not follow (see followOnlyOwnRedirects).
		drain(resp)
		return &notTheAPI{fmt.Sprintf("acctapi: %s %s: the answer is %d %s to %s, which the client does not follow (%s); is the base URL the API's?",
			method, u.Path, resp.StatusCode, http.StatusText(resp.StatusCode), trunc.String(loc, 200), c.whyNotFollowed(resp, loc))}
	}
	if resp.StatusCode >= 400 {
		err := decodeError(resp)
		if method == http.MethodDelete && unsure && IsNotFound(err) {
			return nil // an earlier attempt deleted it; see RetryPolicy
		}
		return err
	}
	if method == http.MethodDelete && resp.StatusCode != http.StatusNoContent {
		drain(resp)
		return &notTheAPI{fmt.Sprintf("acctapi: DELETE %s: the answer is %d %s%s, not 204 No Content; is the base URL the API's?",
			u.Path, resp.StatusCode, http.StatusText(resp.StatusCode), contentType(resp))}
	}
	if out == nil || resp.StatusCode == http.StatusNoContent {
		drain(resp)
		return nil
	}
	// Content-Length is only a claim: the body is read as it comes, up to
	// one byte past the limit.
	// One byte past the limit tells a body over it; none past MaxInt64
	// ("no limit", which would overflow to a negative limit, reading
	// nothing).
	raw, err := iox.ReadAll(io.LimitReader(resp.Body, c.maxResp+min(1, math.MaxInt64-c.maxResp)), min(resp.ContentLength, c.maxResp))
	if err != nil {
		return fmt.Errorf("acctapi: read %s %s response: %w", method, u.Path, err)
	}
	if int64(len(raw)) > c.maxResp {
		return &ResponseTooLargeError{Method: method, Path: u.Path, Limit: c.maxResp}
	}
	if rm, ok := out.(*json.RawMessage); ok && json.Valid(raw) {
		*rm = raw // as json.Unmarshal would copy it, without its second scan
		return nil
	}
	if err := json.Unmarshal(raw, out); err != nil {
		if !json.Valid(raw) {
			// A login page, an empty body: not the API's answer.
			return &notTheAPI{fmt.Sprintf("acctapi: %s %s: the answer is %d %s%s and not JSON (%v); is the base URL the API's?",
				method, u.Path, resp.StatusCode, http.StatusText(resp.StatusCode), contentType(resp), err)}
		}
		return fmt.Errorf("acctapi: decode %s %s response: %w", method, u.Path, err)
	}
	return nil
}

// followOnlyOwnRedirects returns a copy of h that follows a redirect only
// when the base URL's origin is its target and it keeps the method (307
// and 308), and then only as h's own CheckRedirect allows. Any other
// redirect's answer is returned as it is, unfollowed, for Do to report:
// net/http keeps the Authorization header on a redirect to the same host
// on another port or scheme (a review saw the API key sent over plain HTTP
// after an HTTPS server's 308), and resends a PATCH, POST or DELETE as a
// GET after a 301, 302 or 303, whose answer says nothing of the request
// sent (an update was reported done with the resource unchanged).
func (c *Client) followOnlyOwnRedirects(h *http.Client) *http.Client {
	cp := *h
	own := h.CheckRedirect
	cp.CheckRedirect = func(req *http.Request, via []*http.Request) error {
		if !c.sameOrigin(req.URL) || req.Method != via[0].Method {
			return http.ErrUseLastResponse
		}
		var err error
		if own != nil {
			err = own(req, via)
		} else if len(via) >= 10 {
			err = errors.New("stopped after 10 redirects")
		}
		if err != nil && !errors.Is(err, http.ErrUseLastResponse) {
			// The server's own redirects are no passing failure: a retry
			// would follow them again (a review's loop of 302s took 40
			// requests).
			return &redirectError{err}
		}
		return err
	}
	return &cp
}

// redirectError is a redirect the client refused to follow further,
// which a retry would meet again: [Client.Do] does not retry it.
type redirectError struct{ err error }

func (e *redirectError) Error() string { return e.err.Error() }
func (e *redirectError) Unwrap() error { return e.err }

// sameOrigin reports whether u has the base URL's scheme, host and port,
// a default port written out or not (https://h:443 is https://h).
func (c *Client) sameOrigin(u *url.URL) bool {
	return u.Scheme == c.base.Scheme && strings.EqualFold(u.Hostname(), c.base.Hostname()) &&
		portOf(u) == portOf(c.base)
}

// portOf is u's port, or its scheme's default port when it names none.
func portOf(u *url.URL) string {
	if p := u.Port(); p != "" {
		return p
	}
	if u.Scheme == "https" {
		return "443"
	}
	return "80"
}

// whyNotFollowed says why a redirect's answer, to loc, was not followed.
func (c *Client) whyNotFollowed(resp *http.Response, loc string) string {
	if resp.Request != nil && resp.Request.URL != nil {
		if target, err := resp.Request.URL.Parse(loc); err == nil && !c.sameOrigin(target) {
			return "another origin than the base URL; the API key goes only there"
		}
	}
	if resp.Request != nil && resp.Request.Method != http.MethodGet && resp.Request.Method != http.MethodHead &&
		resp.StatusCode != http.StatusTemporaryRedirect && resp.StatusCode != http.StatusPermanentRedirect {
		return "it would resend the request as a GET"
	}
	return "stopped by the HTTP client's CheckRedirect"
}

// validator returns in's Validate method, also when in is a request
// passed by value whose pointer has it (account.ServiceUserCreate{} for
// &account.ServiceUserCreate{}), which would otherwise go unchecked.
func validator(in any) (interface{ Validate() error }, bool) {
	if v, ok := in.(interface{ Validate() error }); ok {
		return v, true
	}
	rv := reflect.ValueOf(in)
	if !rv.IsValid() || rv.Kind() == reflect.Pointer {
		return nil, false
	}
	p := reflect.New(rv.Type())
	p.Elem().Set(rv)
	v, ok := p.Interface().(interface{ Validate() error })
	return v, ok
}

// notTheAPI is an error, wrapping [ErrNoResource], for an answer the API
// would not give.
type notTheAPI struct{ msg string }

func (e *notTheAPI) Error() string { return e.msg }
func (e *notTheAPI) Unwrap() error { return ErrNoResource }

// drain reads what is left of a body the call does not want, for the
// connection's reuse; only so far, so that a body without end cannot hold
// the call (a longer one costs the connection instead).
func drain(resp *http.Response) {
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, maxErrorBody))
}

// contentType returns " (<media type>)" for a response that names one, or "".
func contentType(resp *http.Response) string {
	if ct := resp.Header.Get("Content-Type"); ct != "" {
		return " (" + trunc.String(ct, 64) + ")"
	}
	return ""
}

// resolve builds the request URL from a path or an absolute URL.
func (c *Client) resolve(path string, query url.Values) (*url.URL, error) {
	var u *url.URL
	if baseurl.IsAbsolute(path) {
		var err error
		if u, err = url.Parse(path); err != nil {
			// The URL cut, as a server chose it (url.Error would repeat it
			// whole).
			var ue *url.Error
			if errors.As(err, &ue) {
				err = ue.Err
			}
			return nil, fmt.Errorf("acctapi: URL %q: %w", trunc.String(path, 200), err)
		}
		// The API key goes only to the base URL's origin, whatever URL a
		// response names.
		if !c.sameOrigin(u) {
			return nil, fmt.Errorf("acctapi: URL %s://%s is another origin than the base URL %s://%s; not sending the API key there",
				u.Scheme, u.Host, c.base.Scheme, c.base.Host)
		}
		if u.User != nil {
			// As for the base URL: credentials go in the Authorization
			// header, never in URLs.
			return nil, fmt.Errorf("acctapi: URL %s: must not carry user information", u.Redacted())
		}
		// Its segments, as a path's (a review's
		// Do(ctx, "DELETE", base+"/service_users/ak_1", ...) was sent),
		// below the base path (both in normal form: %2f is %2F).
		if rel, ok := strings.CutPrefix(resources.NormalPath(u.EscapedPath()), resources.NormalPath(c.base.EscapedPath())); ok && strings.HasPrefix(rel, "/") {
			if err := checkSegments(rel); err != nil {
				return nil, err
			}
		}
	} else {
		if !strings.HasPrefix(path, "/") {
			return nil, fmt.Errorf("acctapi: path %q must start with /", path)
		}
		if err := checkSegments(path); err != nil {
			return nil, err
		}
		cp := *c.base
		if c.base.RawPath == "" && !strings.ContainsAny(path, "%?#") {
			// The common case, plain segments on a base path with no
			// escapes of its own: the path reads the same escaped or not,
			// so there is nothing to parse.
			cp.Path, cp.RawPath, cp.RawQuery = c.base.Path+path, "", ""
		} else {
			rel, err := url.Parse(path)
			if err != nil {
				return nil, fmt.Errorf("acctapi: path %q: %w", path, err)
			}
			cp.Path = c.base.Path + rel.Path
			cp.RawPath = c.base.EscapedPath() + rel.EscapedPath()
			cp.RawQuery = rel.RawQuery
		}
		u = &cp
	}
	if len(query) > 0 {
		q := u.Query()
		for _, k := range slices.Sorted(maps.Keys(query)) {
			if _, ok := q[k]; ok {
				// One would silently replace the other.
				return nil, fmt.Errorf("acctapi: query parameter %q is both in the path and in query", trunc.String(k, 64))
			}
			q[k] = query[k]
		}
		u.RawQuery = q.Encode()
	}
	return u, nil
}

// checkSegments rejects a path with an empty segment, an id the caller left
// empty, or a "." or ".." segment, which servers and proxies resolve to a
// different resource. Only the part before any query is checked.
func checkSegments(path string) error {
	p, _, _ := strings.Cut(path, "?")
	if p == "/" {
		return nil
	}
	for seg := range strings.SplitSeq(p[1:], "/") {
		if err := field.CheckSegment("id", seg); err != nil {
			return err
		}
	}
	return checkForeign(p)
}

// checkForeign rejects a path, without its query, that names an item by
// another resource's id: it answers 404, which a caller's "not found:
// already gone" check takes for success (a review's
// ServiceUsers.Delete(ctx, key.ID)).
func checkForeign(p string) error {
	// In normal form, as the server routes it: ak%5F1 is ak_1.
	if coll, id, owner, prefix, foreign := resources.ForeignItem(resources.NormalPath(p)); foreign {
		return field.Invalid("id", "%q is an id of %s, not of %s, whose ids start %s_", trunc.String(id, 64), owner, coll, prefix)
	}
	return nil
}

// newRequest builds one attempt's request.
func (c *Client) newRequest(ctx context.Context, method string, u *url.URL, body []byte) (*http.Request, error) {
	var r io.Reader
	if body != nil {
		r = bytes.NewReader(body)
	}
	// The URL is set directly rather than printed and parsed again.
	req, err := http.NewRequestWithContext(ctx, method, "", r)
	if err != nil {
		return nil, fmt.Errorf("acctapi: %s %s: %w", method, u.Path, err)
	}
	req.URL, req.Host = u, u.Host
	// Header values are shared, read-only slices of length and capacity
	// one: an append by anyone else copies them.
	req.Header = http.Header{
		"Authorization": c.auth,
		"Ngrok-Version": versionHeader,
		"Accept":        jsonHeader,
		"User-Agent":    c.ua,
	}
	if c.dialect == DialectSpec {
		req.Header["Service-Version"] = versionHeader
	}
	if body != nil {
		req.Header["Content-Type"] = jsonHeader
	}
	return req, nil
}

// decodeError turns an error response into an *Error, whatever its body.
func decodeError(resp *http.Response) error {
	raw, _ := io.ReadAll(io.LimitReader(resp.Body, maxErrorBody))
	e := &Error{StatusCode: resp.StatusCode, RetryAfter: parseRetryAfter(resp.Header.Get("Retry-After"), time.Now())}
	// Each member is read alone, as what it should be or not at all: a
	// server whose details are a string, or whose status_code is one,
	// still has its msg and error_code read (a review's 404 with
	// "status_code":"404" lost its code, and IsNotFound with it).
	// (Members are matched by name in any letter case, as encoding/json
	// matches a struct's.)
	var members struct {
		Msg       json.RawMessage `json:"msg"`
		ErrorCode json.RawMessage `json:"error_code"`
		Details   json.RawMessage `json:"details"`
	}
	var msg, code string
	var details map[string]any
	err := json.Unmarshal(raw, &members)
	if err == nil {
		_ = json.Unmarshal(members.Msg, &msg)
		_ = json.Unmarshal(members.ErrorCode, &code)
		if d := members.Details; len(d) > 0 && d[0] == '{' {
			_ = json.Unmarshal(d, &details)
		}
	}
	if err != nil || msg == "" && code == "" {
		msg := strings.TrimSpace(string(raw))
		if msg == "" {
			msg = http.StatusText(resp.StatusCode)
		} else {
			msg = trunc.Printable(msg, maxErrorMsg)
		}
		e.Msg = msg
	} else {
		// Bounded and printable: a server's msg goes into logs.
		e.Msg, e.ErrorCode = trunc.Printable(msg, maxJSONErrorMsg), trunc.Printable(code, maxErrorMsg)
		for k, v := range details {
			if e.Details == nil {
				e.Details = make(map[string]string, len(details))
			}
			s, ok := v.(string)
			if !ok {
				b, _ := json.Marshal(v)
				s = string(b)
			}
			// Bounded and printable, as msg: Error prints the
			// operation id.
			e.Details[trunc.Printable(k, maxErrorMsg)] = trunc.Printable(s, maxErrorMsg)
		}
	}
	id := resp.Header.Get("Operation-Id")
	if id == "" {
		id = resp.Header.Get("Ngrok-Operation-Id") // the real service's name
	}
	if id = trunc.Printable(id, maxErrorMsg); id != "" && e.OperationID() == "" {
		if e.Details == nil {
			e.Details = map[string]string{}
		}
		e.Details["operation_id"] = id
	}
	return e
}
