package main

import (
	"bufio"
	"context"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/acctapi/acctapi"
	"github.com/acctapi/acctapi/fake"
)

// TestFrontendPanics checks that a handler's panic is answered 500 in the
// contract's body, and that http.ErrAbortHandler (an injected drop) still
// closes the connection without an answer.
func TestFrontendPanics(t *testing.T) {
	t.Parallel()
	f := &frontend{
		api: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.URL.Path == "/abort" {
				panic(http.ErrAbortHandler)
			}
			panic("boom")
		}),
		newID: newIDs(t), maxHeaderBytes: 64 << 10, timeout: time.Hour, shutdown: context.Background(),
	}
	ts := httptest.NewServer(f)
	defer ts.Close()
	r := do(t, "GET", ts.URL+"/boom", "", "")
	if code, msg := r.want(t, 500, "").errorBody(t); code != "ERR_ACCTAPI_INTERNAL" || msg != "internal error: boom" {
		t.Errorf("panic answered %s %q", code, msg)
	}
	if resp, err := http.Get(ts.URL + "/abort"); err == nil {
		resp.Body.Close()
		t.Errorf("ErrAbortHandler answered %d, want the connection closed", resp.StatusCode)
	}
}

// TestFrontendTimeout checks, in a synctest bubble (no wall-clock time),
// that a request still running after the timeout is answered 503 in the
// contract's body while its handler still runs, and that a request that
// finishes is answered as its handler wrote, whatever the machine's speed.
func TestFrontendTimeout(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		release := make(chan struct{})
		f := &frontend{
			api: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				if r.URL.Path == "/slow" {
					<-release // outlives the request's context: the fake's latency fault ends with it, a hung handler need not
				}
				w.WriteHeader(http.StatusNoContent)
			}),
			newID: newIDs(t), maxHeaderBytes: 64 << 10, timeout: time.Second, shutdown: context.Background(),
		}
		defer close(release)
		for _, tt := range []struct {
			path     string
			want     int
			wantBody string
		}{
			{path: "/slow", want: http.StatusServiceUnavailable, wantBody: "did not finish within 1s"},
			{path: "/fast", want: http.StatusNoContent},
		} {
			rec := httptest.NewRecorder()
			start := time.Now()
			f.ServeHTTP(rec, httptest.NewRequest("GET", tt.path, nil))
			if rec.Code != tt.want || !strings.Contains(rec.Body.String(), tt.wantBody) {
				t.Errorf("GET %s: %d %s, want %d with %q", tt.path, rec.Code, rec.Body, tt.want, tt.wantBody)
			}
			if tt.want == http.StatusServiceUnavailable {
				if waited := time.Since(start); waited != time.Second { // the bubble's clock: exact
					t.Errorf("GET %s answered after %v, want the timeout 1s", tt.path, waited)
				}
				if !strings.Contains(rec.Body.String(), `"error_code":"ERR_ACCTAPI_UNAVAILABLE"`) {
					t.Errorf("GET %s: body %s, want the contract's body with ERR_ACCTAPI_UNAVAILABLE", tt.path, rec.Body)
				}
			}
		}
	})
}

// newIDs returns a fake's operation id sequence, for a front end.
func newIDs(t *testing.T) func() string {
	srv, err := fake.New(fake.WithoutListener())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(srv.Close)
	return srv.NewOperationID
}

// TestFrontendTimeoutJournaled checks, in a synctest bubble, that the 503
// for an API request that ran past the timeout carries the operation id of
// the request's journal entry, so a client can find what the fake did.
func TestFrontendTimeoutJournaled(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		srv, err := fake.New(fake.WithoutListener())
		if err != nil {
			t.Fatal(err)
		}
		defer srv.Close()
		srv.Latency("GET", "/service_users", time.Hour)
		f := &frontend{api: srv.Handler(), admin: newAdmin(srv, "admin", nil), newID: srv.NewOperationID,
			maxHeaderBytes: 64 << 10, timeout: time.Second, shutdown: context.Background()}
		req := httptest.NewRequest("GET", "/service_users", nil)
		req.Header.Set("Authorization", "Bearer "+srv.APIKey())
		req.Header.Set("Service-Version", "2")
		rec := httptest.NewRecorder()
		f.ServeHTTP(rec, req)
		synctest.Wait() // the fake's handler ends with the request's context
		r := response{rec.Code, rec.Header(), rec.Body.String()}
		if code, _ := r.errorBody(t); r.status != http.StatusServiceUnavailable || code != acctapi.CodeUnavailable {
			t.Fatalf("answered %d %s", r.status, r.body)
		}
		j := srv.Journal()
		if id := r.header.Get("Operation-Id"); len(j) != 1 || j[0].OperationID != id {
			t.Errorf("503 with operation id %q; journal %+v", id, j)
		}
	})
}

// pipeListener hands out one end of net.Pipe conns: a server on it runs
// inside a synctest bubble.
type pipeListener struct{ conns chan net.Conn }

func (l pipeListener) Accept() (net.Conn, error) {
	c, ok := <-l.conns
	if !ok {
		return nil, net.ErrClosed
	}
	return c, nil
}
func (l pipeListener) Close() error   { return nil }
func (l pipeListener) Addr() net.Addr { return &net.TCPAddr{IP: net.IPv4(127, 0, 0, 1)} }

// lateReads is the server's end of a connection on which a read at or
// after a time, before the server has written anything, fails at once,
// reported as an error of the test.
type lateReads struct {
	net.Conn
	after   time.Time
	written *atomic.Bool
	t       *testing.T
}

func (c lateReads) Read(p []byte) (int, error) {
	if !c.written.Load() && !time.Now().Before(c.after) {
		c.t.Errorf("the server read from the connection at the timeout before answering: it waits for the rest of the body")
		return 0, io.ErrUnexpectedEOF
	}
	return c.Conn.Read(p)
}

func (c lateReads) Write(p []byte) (int, error) {
	c.written.Store(true)
	return c.Conn.Write(p)
}

// TestFrontendTimeoutWhileReadingTheBody checks, in a synctest bubble,
// that a request whose body stops short of its Content-Length is answered
// 503 at the timeout, and the connection closed: net/http first reads what
// is left of an unread body before a keep-alive answer, so the 503 waited
// for the read timeout (30 s in a review, against a -request-timeout of
// 2s), and the client got nothing.
//
// A server that read the rest of the body before answering must fail
// this test, not hang it: the bubble's clock cannot advance past a
// goroutine waiting on a mutex, and a writer waiting on a read holds one.
// So the handler waits without reading the body, and the server's end of
// the connection fails, as an error of the test, any read made at the
// timeout or later before the answer, which a server that answers at once
// never makes.
func TestFrontendTimeoutWhileReadingTheBody(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f := &frontend{
			// Waits without reading the body: a handler blocked in a
			// read would hold the body's mutex (see above).
			api: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				<-r.Context().Done()
			}),
			newID: newIDs(t), maxHeaderBytes: 64 << 10, timeout: time.Second, shutdown: context.Background(),
		}
		l := pipeListener{make(chan net.Conn, 1)}
		srv := &http.Server{Handler: f, ReadTimeout: time.Hour}
		go srv.Serve(l)
		client, server := net.Pipe()
		l.conns <- lateReads{server, time.Now().Add(f.timeout), new(atomic.Bool), t}
		close(l.conns)
		answered := make(chan *http.Response, 1)
		go func() {
			resp, err := http.ReadResponse(bufio.NewReader(client), nil)
			if err != nil {
				t.Errorf("reading the answer: %v", err)
			}
			answered <- resp
		}()
		go io.WriteString(client, "POST /service_users HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{\"name\":")
		start := time.Now()
		select {
		case resp := <-answered:
			if resp == nil {
				return
			}
			if resp.StatusCode != http.StatusServiceUnavailable || !resp.Close {
				t.Errorf("answered %d (close %t), want 503 with the connection closed", resp.StatusCode, resp.Close)
			}
			if waited := time.Since(start); waited != time.Second { // the bubble's clock: exact
				t.Errorf("answered after %v, want the timeout 1s", waited)
			}
		case <-time.After(time.Minute):
			t.Errorf("no answer a minute after a request timeout of 1s")
		}
		client.Close()
		srv.Close()
		// The connection's goroutine waits a while before it closes (net/http's
		// closeWriteAndWait); the bubble's clock lets it, so none is left.
		time.Sleep(time.Second)
		synctest.Wait()
	})
}
