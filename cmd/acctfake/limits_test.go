package main

import (
	"bufio"
	"errors"
	"io"
	"net"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"
)

// send makes one request to the program and returns its status, or 0 when
// the connection was closed without an answer.
func send(t *testing.T, method, u, key string, header http.Header, body io.Reader) int {
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
	resp, err := (&http.Client{Timeout: 30 * time.Second}).Do(req)
	if err != nil {
		t.Logf("%s %.60s: %v", method, u, err)
		return 0
	}
	defer resp.Body.Close()
	_, _ = io.Copy(io.Discard, resp.Body)
	return resp.StatusCode
}

func TestHeaderTooLarge(t *testing.T) {
	base, key := startProgram(t)
	big := http.Header{"X-Big": {strings.Repeat("h", 2*maxHeaderBytes)}}
	if got := send(t, "GET", base+"/api_keys", key, big, nil); got != http.StatusRequestHeaderFieldsTooLarge {
		t.Errorf("a %d-byte header: status %d, want 431", 2*maxHeaderBytes, got)
	}
	// Headers just under the limit are served.
	ok := http.Header{"X-Fine": {strings.Repeat("h", maxHeaderBytes/2)}}
	if got := send(t, "GET", base+"/api_keys", key, ok, nil); got != http.StatusOK {
		t.Errorf("a %d-byte header: status %d, want 200", maxHeaderBytes/2, got)
	}
}

func TestURLTooLong(t *testing.T) {
	base, key := startProgram(t)
	for _, u := range []string{
		base + "/service_users/" + strings.Repeat("a", 2*maxHeaderBytes),
		base + "/api_keys?filter=" + url.QueryEscape(strings.Repeat("x", 2*maxHeaderBytes)),
	} {
		got := send(t, "GET", u, key, nil, nil)
		if got != http.StatusRequestHeaderFieldsTooLarge && got != http.StatusRequestURITooLong {
			t.Errorf("GET of a %d-byte URL: status %d, want 431 or 414", len(u), got)
		}
	}
	// A long filter that fits in the header limit is the API's to refuse.
	if got := send(t, "GET", base+"/api_keys?filter="+url.QueryEscape(strings.Repeat("x", 5000)), key, nil, nil); got != http.StatusBadRequest {
		t.Errorf("GET with a 5000-byte filter: status %d, want 400", got)
	}
}

func TestBodyTooLarge(t *testing.T) {
	base, key := startProgram(t)
	body := `{"name":"` + strings.Repeat("x", 1<<20) + `"}`
	h := http.Header{"Content-Type": {"application/json"}}
	if got := send(t, "POST", base+"/service_users", key, h, strings.NewReader(body)); got != http.StatusRequestEntityTooLarge {
		t.Errorf("POST of %d bytes: status %d, want 413", len(body), got)
	}
	// A body far beyond the limit is cut off too, not read to its end.
	huge := io.LimitReader(zeros{}, 64<<20)
	if got := send(t, "POST", base+"/service_users", key, h, huge); got != http.StatusRequestEntityTooLarge && got != 0 {
		t.Errorf("POST of 64 MiB: status %d, want 413 or a closed connection", got)
	}
}

type zeros struct{}

func (zeros) Read(p []byte) (int, error) {
	for i := range p {
		p[i] = ' '
	}
	return len(p), nil
}

// shorten sets *v to d for the test; it must run before startProgram so
// that the program has stopped when the old value comes back.
func shorten(t *testing.T, v *time.Duration, d time.Duration) {
	t.Helper()
	old := *v
	*v = d
	t.Cleanup(func() { *v = old })
}

// readUntilClosed reads from conn until the server closes it and returns
// what it sent and how long that took; it fails t after limit.
func readUntilClosed(t *testing.T, conn net.Conn, limit time.Duration) (string, time.Duration) {
	t.Helper()
	start := time.Now()
	_ = conn.SetReadDeadline(start.Add(limit))
	b, err := io.ReadAll(bufio.NewReader(conn))
	var ne net.Error
	if errors.As(err, &ne) && ne.Timeout() {
		t.Fatalf("the server kept a slow client for more than %v", limit)
	}
	return string(b), time.Since(start)
}

func TestSlowHeadersCutOff(t *testing.T) {
	shorten(t, &readHeaderTimeout, 300*time.Millisecond)
	base, _ := startProgram(t)
	conn, err := net.Dial("tcp", strings.TrimPrefix(base, "http://"))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	// Half a request line and header, then nothing.
	if _, err := io.WriteString(conn, "GET /api_keys HTTP/1.1\r\nHost: x\r\nService-Ver"); err != nil {
		t.Fatal(err)
	}
	got, took := readUntilClosed(t, conn, 10*time.Second)
	// net/http answers before the handler runs: nothing, 408, or (as of
	// Go 1.26) a plain 400.
	if got != "" && !strings.HasPrefix(got, "HTTP/1.1 408") && !strings.HasPrefix(got, "HTTP/1.1 400") {
		t.Errorf("answer to a slow client: %q, want none, 408 or 400", got)
	}
	t.Logf("slow headers cut off after %v", took.Round(time.Millisecond))
}

func TestSlowBodyCutOff(t *testing.T) {
	shorten(t, &readTimeout, 500*time.Millisecond)
	base, key := startProgram(t)
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
	got, took := readUntilClosed(t, conn, 10*time.Second)
	if strings.HasPrefix(got, "HTTP/1.1 5") || strings.HasPrefix(got, "HTTP/1.1 2") {
		t.Errorf("answer to a client that never finished its body: %q", got)
	}
	t.Logf("slow body cut off after %v with %q", took.Round(time.Millisecond), firstLine(got))
	// Nothing was created.
	if status, body := get(t, base+"/service_users", key); status != 200 || strings.Contains(body, `"name"`) {
		t.Errorf("GET /service_users = %d %s, want no service user", status, body)
	}
}

func firstLine(s string) string {
	l, _, _ := strings.Cut(s, "\r\n")
	return l
}
