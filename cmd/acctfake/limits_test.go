package main

import (
	"bufio"
	"errors"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"strings"
	"testing"

	"github.com/acctapi/acctapi"
	"github.com/acctapi/acctapi/internal/apitest"
)

// send makes one request to the program and returns its answer, with
// status 0 when the connection was closed without an answer.
func send(t *testing.T, method, u, key string, header http.Header, body io.Reader) response {
	t.Helper()
	req, err := http.NewRequest(method, u, body)
	if err != nil {
		t.Fatal(err)
	}
	for k, vs := range header {
		req.Header[k] = vs
	}
	req.Header.Set("Authorization", "Bearer "+key)
	req.Header.Set("Service-Version", "2")
	resp, err := http.DefaultClient.Do(req) // no timeout of its own: go test -timeout guards a hang
	if err != nil {
		t.Logf("%s %.60s: %v", method, u, err)
		return response{}
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return response{resp.StatusCode, resp.Header, string(b)}
}

// maxHeaderBytes is the program's default -max-header-bytes.
const maxHeaderBytes = 64 << 10

// TestHeaderTooLarge checks that headers over -max-header-bytes are
// answered 431 in the contract's error body, up to what net/http reads at
// all (1 MiB), beyond which net/http answers on its own.
func TestHeaderTooLarge(t *testing.T) {
	t.Parallel()
	p := startProgram(t)
	big := http.Header{"X-Big": {strings.Repeat("h", 2*maxHeaderBytes)}}
	if got := send(t, "GET", p.base+"/api_keys", p.key, big, nil); got.status != http.StatusRequestHeaderFieldsTooLarge {
		t.Errorf("a %d-byte header: status %d, want 431", 2*maxHeaderBytes, got.status)
	} else if code, _ := got.errorBody(t); code != acctapi.CodeHeadersTooLarge {
		t.Errorf("431's error_code %q, want %q", code, acctapi.CodeHeadersTooLarge)
	}
	// Headers under the limit are served.
	ok := http.Header{"X-Fine": {strings.Repeat("h", maxHeaderBytes/2)}}
	if got := send(t, "GET", p.base+"/api_keys", p.key, ok, nil); got.status != http.StatusOK {
		t.Errorf("a %d-byte header: status %d, want 200", maxHeaderBytes/2, got.status)
	}
	// The admin API too.
	if got := send(t, "GET", p.base+"/_acctfake/faults", p.admin, big, nil); got.status != http.StatusRequestHeaderFieldsTooLarge {
		t.Errorf("admin API, a %d-byte header: status %d, want 431", 2*maxHeaderBytes, got.status)
	} else {
		got.errorBody(t)
	}
	// Beyond what net/http reads, it answers itself (README's divergences).
	huge := http.Header{"X-Huge": {strings.Repeat("h", netHTTPHeaderLimit(maxHeaderBytes)+8<<10)}}
	if got := send(t, "GET", p.base+"/api_keys", p.key, huge, nil); got.status != http.StatusRequestHeaderFieldsTooLarge && got.status != 0 {
		t.Errorf("a header beyond net/http's limit: status %d, want 431 or a closed connection", got.status)
	}
}

func TestURLTooLong(t *testing.T) {
	t.Parallel()
	p := startProgram(t)
	for _, u := range []string{
		p.base + "/service_users/" + strings.Repeat("a", 2*maxHeaderBytes),
		p.base + "/api_keys?filter=" + url.QueryEscape(strings.Repeat("x", 2*maxHeaderBytes)),
	} {
		got := send(t, "GET", u, p.key, nil, nil)
		if got.status != http.StatusRequestHeaderFieldsTooLarge {
			t.Errorf("GET of a %d-byte URL: status %d, want 431", len(u), got.status)
			continue
		}
		got.errorBody(t)
	}
	// A long filter that fits in the header limit is the API's to refuse.
	if got := send(t, "GET", p.base+"/api_keys?filter="+url.QueryEscape(strings.Repeat("x", 5000)), p.key, nil, nil); got.status != http.StatusBadRequest {
		t.Errorf("GET with a 5000-byte filter: status %d, want 400", got.status)
	}
}

// TestHTTP10WithoutHost checks that an HTTP/1.0 request without a Host
// gets uris on the address it reached, not on acctfake.invalid.
func TestHTTP10WithoutHost(t *testing.T) {
	t.Parallel()
	p := startProgram(t)
	conn, err := net.Dial("tcp", strings.TrimPrefix(p.base, "http://"))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	req := "GET /service_users HTTP/1.0\r\nAuthorization: Bearer " + p.key + "\r\nService-Version: 2\r\n\r\n"
	if _, err := io.WriteString(conn, req); err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(conn)
	if !strings.HasPrefix(string(b), "HTTP/1.0 200") || !strings.Contains(string(b), `"uri":"`+p.base+`/service_users"`) {
		t.Errorf("answer to HTTP/1.0 without Host: %q, want 200 with uri %s/service_users", b, p.base)
	}
}

// TestNetHTTPAnswersFirst pins what README lists as net/http's to answer
// before any handler runs: the status of each (acctfake rewrites the
// bodies in JSON: TestNetHTTPAnswersInJSON).
func TestNetHTTPAnswersFirst(t *testing.T) {
	t.Parallel()
	p := startProgram(t)
	for _, tt := range []struct{ raw, want string }{
		{"NOT A REQUEST LINE\r\n\r\n", "HTTP/1.1 400 Bad Request"},
		{"GET /api_keys HTTP/1.1\r\nHost: x\r\nBad Header\r\n\r\n", "HTTP/1.1 400 Bad Request"},
		{"GET /api_keys HTTP/1.1\r\nHost: a b\r\n\r\n", "HTTP/1.1 400 Bad Request"},
		{"GET /api_keys HTTP/1.1\r\n\r\n", "HTTP/1.1 400 Bad Request"}, // HTTP/1.1 without Host
		{"GET /api_keys HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\nContent-Length: 6\r\n\r\n", "HTTP/1.1 400 Bad Request"},
		{"GET /api_keys HTTP/1.1\r\nHost: x\r\nExpect: magic\r\n\r\n", "HTTP/1.1 417 Expectation Failed"},
		{"POST /api_keys HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: gzip\r\n\r\n", "HTTP/1.1 501 Not Implemented"},
		{"GET /api_keys HTTP/2.0\r\nHost: x\r\n\r\n", "HTTP/1.1 505 HTTP Version Not Supported"},
	} {
		conn, err := net.Dial("tcp", strings.TrimPrefix(p.base, "http://"))
		if err != nil {
			t.Fatal(err)
		}
		_, _ = io.WriteString(conn, tt.raw)
		b, _ := io.ReadAll(conn)
		conn.Close()
		if got := firstLine(string(b)); !strings.HasPrefix(got, tt.want) {
			t.Errorf("answer to %q: %q, want net/http's %q", tt.raw, got, tt.want)
		}
	}
}

func TestBodyTooLarge(t *testing.T) {
	t.Parallel()
	p := startProgram(t)
	base, key := p.base, p.key
	body := `{"name":"` + strings.Repeat("x", 1<<20) + `"}`
	h := http.Header{"Content-Type": {"application/json"}}
	if got := send(t, "POST", base+"/service_users", key, h, strings.NewReader(body)); got.status != http.StatusRequestEntityTooLarge {
		t.Errorf("POST of %d bytes: status %d, want 413", len(body), got.status)
	}
	// A body far beyond the limit is cut off too, not read to its end.
	huge := io.LimitReader(zeros{}, 64<<20)
	if got := send(t, "POST", base+"/service_users", key, h, huge); got.status != http.StatusRequestEntityTooLarge && got.status != 0 {
		t.Errorf("POST of 64 MiB: status %d, want 413 or a closed connection", got.status)
	}
}

type zeros struct{}

func (zeros) Read(p []byte) (int, error) {
	for i := range p {
		p[i] = ' '
	}
	return len(p), nil
}

// readUntilClosed reads from conn until the server closes it and returns
// what it sent. It waits until shortly before go test's -timeout
// (apitest.Deadline), whatever the machine's speed: a server that never cuts
// the client off fails the test, naming that.
func readUntilClosed(t *testing.T, conn net.Conn) string {
	t.Helper()
	if d, ok := apitest.Deadline(t); ok {
		_ = conn.SetReadDeadline(d)
	}
	b, err := io.ReadAll(bufio.NewReader(conn))
	if errors.Is(err, os.ErrDeadlineExceeded) {
		t.Fatalf("the server never closed the connection; it sent %q", b)
	}
	if err != nil && !errors.Is(err, net.ErrClosed) && !strings.Contains(err.Error(), "connection reset") {
		t.Fatalf("reading until the server closes: %v", err)
	}
	return string(b)
}

func TestSlowHeadersCutOff(t *testing.T) {
	t.Parallel()
	base := startProgram(t, "-read-header-timeout", "300ms").base
	conn, err := net.Dial("tcp", strings.TrimPrefix(base, "http://"))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	// Half a request line and header, then nothing.
	if _, err := io.WriteString(conn, "GET /api_keys HTTP/1.1\r\nHost: x\r\nService-Ver"); err != nil {
		t.Fatal(err)
	}
	got := readUntilClosed(t, conn)
	// net/http answers before the handler runs: nothing, 408, or (as of
	// Go 1.26) a plain 400.
	if got != "" && !strings.HasPrefix(got, "HTTP/1.1 408") && !strings.HasPrefix(got, "HTTP/1.1 400") {
		t.Errorf("answer to a slow client: %q, want none, 408 or 400", got)
	}
}

func TestSlowBodyCutOff(t *testing.T) {
	t.Parallel()
	p := startProgram(t, "-read-timeout", "2s")
	base, key := p.base, p.key
	conn, err := net.Dial("tcp", strings.TrimPrefix(base, "http://"))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	req := "POST /service_users HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer " + key +
		"\r\nService-Version: 2\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{\"name\":"
	if _, err := io.WriteString(conn, req); err != nil {
		t.Fatal(err)
	}
	got := readUntilClosed(t, conn)
	if strings.HasPrefix(got, "HTTP/1.1 5") || strings.HasPrefix(got, "HTTP/1.1 2") {
		t.Errorf("answer to a client that never finished its body: %q", got)
	}
	// Nothing was created. The GET has the read timeout too: on a machine
	// too loaded to send it within 2 s its connection is cut off as well
	// (status 0), and it is sent again, so that the outcome does not
	// depend on the machine's speed.
	for {
		got := send(t, "GET", base+"/service_users", key, nil, nil)
		if got.status == 0 {
			continue
		}
		if got.status != 200 || strings.Contains(got.body, `"name"`) {
			t.Errorf("GET /service_users = %d %s, want no service user", got.status, got.body)
		}
		break
	}
}

func firstLine(s string) string {
	l, _, _ := strings.Cut(s, "\r\n")
	return l
}
