package fake

import (
	"bytes"
	"errors"
	"fmt"
	"net/http"
	"strconv"

	"github.com/acctapi/acctapi"
)

// HTTPClient returns an *http.Client that reaches this server: over TCP for
// a listening server, in memory for one made [WithoutListener].
func (s *Server) HTTPClient() *http.Client {
	if s.httpSrv != nil {
		return s.httpSrv.Client()
	}
	return &http.Client{Transport: transport{s}}
}

// Client returns an [acctapi.Client] with retries off — unlike
// [acctapi.NewClient], which retries 429s and idempotent 5xx by default —
// for the server's first account, authenticated with its first key. With
// retries off a test sees every answer as the server gave it: a fault
// injected once ([Server.FailNext]) reaches the caller instead of being
// retried away. To test code as it runs in production, with the default
// retries, pass acctapi.WithRetry(acctapi.DefaultRetryPolicy()). opts are
// applied after those defaults. It panics on an invalid option, as a
// test's programming error; use [Server.ClientFor] to have it reported
// instead.
func (s *Server) Client(opts ...acctapi.Option) *acctapi.Client {
	c, err := s.ClientFor(s.APIKey(), opts...)
	if err != nil {
		panic(fmt.Sprintf("fake: Client: %v", err)) // only a caller's invalid option gets here
	}
	return c
}

// ClientFor is [Server.Client] authenticated with apiKey instead, retries
// off as well: a key of another account ([Server.Accounts],
// [Server.AddAccount]) or one created through the API, say to act as a
// service user. An option that points the client at another base URL
// (acctapi.WithBaseURL) is an error: the client would not be the server's,
// and would send its key elsewhere.
func (s *Server) ClientFor(apiKey string, opts ...acctapi.Option) (*acctapi.Client, error) {
	base := []acctapi.Option{acctapi.WithBaseURL(s.URL), acctapi.WithHTTPClient(s.HTTPClient()), acctapi.WithoutRetry()}
	c, err := acctapi.NewClient(apiKey, append(base, opts...)...)
	if err != nil {
		return nil, err
	}
	if want, _ := acctapi.NewClient(apiKey, base...); c.BaseURL() != want.BaseURL() {
		return nil, fmt.Errorf("fake: the client's base URL would be %s, not the server's %s: leave acctapi.WithBaseURL out", truncate(c.BaseURL(), 128), want.BaseURL())
	}
	return c, nil
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
