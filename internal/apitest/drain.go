package apitest

import (
	"bufio"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
)

// AnswersBeforeBodyNotReset checks, over real TCP to the server at base
// (key a valid API key), that an answer given without reading the
// request's body (a 401, which never reads it; a 413 for a body over 1
// MiB, declared or sent chunked) reaches a Go client that is still sending
// the body. A server that closes the socket with the body still arriving
// makes the kernel reset the connection, and the client reports
// "connection reset" or "broken pipe" instead of the answer. Each case is
// tried 40 times: the loss is a race such a server loses often, not
// always.
func AnswersBeforeBodyNotReset(t *testing.T, base, key string) {
	t.Helper()
	client := &http.Client{Transport: &http.Transport{DisableKeepAlives: true}}
	for _, c := range []struct {
		name, token string
		size        int // negative: not declared, sent chunked
		status      int
	}{
		{"401 with a 256 KiB body", "wrong", 256 << 10, http.StatusUnauthorized},
		{"413 with a 2 MiB body", key, 2 << 20, http.StatusRequestEntityTooLarge},
		{"413 with a 2 MiB body, length not declared", key, -(2 << 20), http.StatusRequestEntityTooLarge},
	} {
		body := strings.Repeat("x", max(c.size, -c.size))
		lost := 0
		for range 40 {
			var rd io.Reader = strings.NewReader(body)
			if c.size < 0 {
				rd = io.MultiReader(rd) // no length: sent chunked
			}
			req, err := http.NewRequest("POST", base+"/service_users", rd)
			if err != nil {
				t.Fatal(err)
			}
			req.Header.Set("Authorization", "Bearer "+c.token)
			req.Header.Set("Service-Version", "2")
			req.Header.Set("Content-Type", "application/json")
			resp, err := client.Do(req)
			if err != nil {
				lost++
				continue
			}
			_, _ = io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			if resp.StatusCode != c.status {
				t.Errorf("%s: answered %d, want %d", c.name, resp.StatusCode, c.status)
			}
		}
		if lost != 0 {
			t.Errorf("%s: %d of 40 answers lost to a transport error", c.name, lost)
		}
	}
}

// AnswersBeforeBodyWhole checks, over real TCP to the server at base (key
// a valid API key), that an answer given without reading the body
// declares its length and closes the connection, so that a client that
// sends no more of the body (one that sent "Expect: 100-continue", or
// that stalled) has the whole answer at once. An answer sent chunked ends
// only when the server stops reading the body.
func AnswersBeforeBodyWhole(t *testing.T, base, key string) {
	t.Helper()
	for _, c := range []struct{ name, head string }{
		{"413, Expect: 100-continue", "POST /service_users HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer " + key + "\r\nService-Version: 2\r\n" +
			"Content-Type: application/json\r\nExpect: 100-continue\r\nContent-Length: 2097152\r\n\r\n"},
		{"401, body stalled", "POST /service_users HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer wrong\r\nService-Version: 2\r\n" +
			"Content-Type: application/json\r\nContent-Length: 100\r\n\r\n{\"name\":"},
	} {
		conn, err := net.Dial("tcp", strings.TrimPrefix(base, "http://"))
		if err != nil {
			t.Fatal(err)
		}
		if _, err := io.WriteString(conn, c.head); err != nil {
			t.Fatal(err)
		}
		resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		if resp.ContentLength <= 0 || len(resp.TransferEncoding) != 0 || !resp.Close {
			t.Errorf("%s: %d with Content-Length %d, Transfer-Encoding %q, close %t; want a declared length, not chunked, and the connection closed",
				c.name, resp.StatusCode, resp.ContentLength, resp.TransferEncoding, resp.Close)
		}
		resp.Body.Close()
		conn.Close()
	}
}
