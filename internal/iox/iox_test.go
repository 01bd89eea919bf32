package iox

import (
	"bufio"
	"context"
	"errors"
	"io"
	"math"
	"net"
	"net/http"
	"net/http/httptest"
	"runtime"
	"strings"
	"testing"
	"testing/iotest"
	"time"
)

func TestReadAll(t *testing.T) {
	long := strings.Repeat("x", 5000)
	for _, tt := range []struct {
		name string
		body string
		size int64
	}{
		{"the declared size", long, 5000},
		{"more than declared", long, 10},
		{"less than declared", "abc", 5000},
		{"unknown size", long, -1},
		{"zero: unknown", "abc", 0},
		{"empty", "", 0},
		// A size is a claim from the other end: a huge one costs no more
		// than the bounded first buffer.
		{"huge declared size", "{}", 50 << 30},
		{"largest declared size", "{}", math.MaxInt64},
	} {
		t.Run(tt.name, func(t *testing.T) {
			// Reads of one byte at a time, as from a slow connection.
			got, err := ReadAll(iotest.OneByteReader(strings.NewReader(tt.body)), tt.size)
			if err != nil || string(got) != tt.body {
				t.Fatalf("got %d bytes, %v; want the body's %d", len(got), err, len(tt.body))
			}
			if cap(got) > 2*len(got)+16 {
				t.Errorf("capacity %d for %d bytes", cap(got), len(got))
			}
			if tt.size > maxFirst {
				var before, after runtime.MemStats
				runtime.ReadMemStats(&before)
				_, _ = ReadAll(strings.NewReader(tt.body), tt.size)
				runtime.ReadMemStats(&after)
				if n := after.TotalAlloc - before.TotalAlloc; n > 2*maxFirst {
					t.Errorf("allocated %d bytes for a %d-byte body", n, len(tt.body))
				}
			}
		})
	}
	// The declared size is one allocation.
	r := strings.NewReader(long)
	if n := testing.AllocsPerRun(20, func() {
		r.Reset(long)
		if _, err := ReadAll(r, int64(len(long))); err != nil {
			t.Fatal(err)
		}
	}); n != 1 {
		t.Errorf("%v allocations to read a body of its declared size, want 1", n)
	}
	boom := errors.New("boom")
	if _, err := ReadAll(iotest.ErrReader(boom), 10); !errors.Is(err, boom) {
		t.Errorf("a failing reader: got %v, want its error", err)
	}
}

func TestValidHost(t *testing.T) {
	t.Parallel()
	long := strings.Repeat("a", 253)
	for host, want := range map[string]bool{
		"example.com":                 true,
		"api.example.com:443":         true,
		"127.0.0.1:8080":              true,
		"localhost":                   true,
		"my_host-1.internal:0":        true,
		"[::1]":                       true,
		"[::1]:8080":                  true,
		"[2001:db8::1]:65535":         true,
		long:                          true,
		long + ":65535":               true,
		"acctfake.invalid":            true,
		"":                            false,
		long + "a":                    false, // a name over 253 bytes
		long + ":655350":              false,
		"example.com:65536":           false,
		"example.com:":                true, // an empty port, which RFC 3986 allows
		"example.com:8080:1":          false,
		"example.com:+80":             false,
		":8080":                       false,
		"%zz":                         false,
		"a%41b":                       false,
		"[::1":                        false,
		"[::1]x":                      false,
		"[::1]:":                      true,
		"[127.0.0.1]":                 false,
		"[fe80::1%eth0]":              false,
		"[x]:y":                       false,
		"a b":                         false,
		"a/b":                         false,
		"user@example.com":            false,
		"exämple.com":                 false,
		strings.Repeat("h", 60_000):   false,
		"example.com\x00":             false,
		"example.com:80\r\nX-Evil: 1": false,
	} {
		if got := ValidHost(host); got != want {
			t.Errorf("ValidHost(%.40q) = %v, want %v", host, got, want)
		}
	}
}

func TestBearerToken(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		name  string
		h     http.Header
		token string
		fault AuthFault
	}{
		{"none", http.Header{}, "", AuthMissing},
		{"one", http.Header{"Authorization": {"Bearer abc"}}, "abc", AuthOK},
		{"scheme in any case", http.Header{"Authorization": {"bEARER abc"}}, "abc", AuthOK},
		{"two", http.Header{"Authorization": {"Bearer a", "Bearer b"}}, "", AuthMany},
		{"two, one empty", http.Header{"Authorization": {"", "Bearer b"}}, "", AuthMany},
		{"empty", http.Header{"Authorization": {""}}, "", AuthMalformed},
		{"no token", http.Header{"Authorization": {"Bearer "}}, "", AuthMalformed},
		{"basic", http.Header{"Authorization": {"Basic dXNlcg=="}}, "", AuthMalformed},
		{"a space in the token", http.Header{"Authorization": {"Bearer a b"}}, "", AuthMalformed},
		{"a tab in the token", http.Header{"Authorization": {"Bearer a\tb"}}, "", AuthMalformed},
		{"two spaces", http.Header{"Authorization": {"Bearer  abc"}}, "", AuthMalformed},
	} {
		if token, fault := BearerToken(tt.h); token != tt.token || fault != tt.fault {
			t.Errorf("%s: BearerToken = %q, %v; want %q, %v", tt.name, token, fault, tt.token, tt.fault)
		}
	}
}

// TestDrainBodyStops: a drain ends when its stop context does, with the
// client still connected and its body unfinished: a closing server does
// not wait DrainWait for a stalled client. The handler sets no deadline,
// so that without the stop the drain would never end; the test waits for
// it until shortly before go test's -timeout, whatever the machine's
// speed.
func TestDrainBodyStops(t *testing.T) {
	stop, cancel := context.WithCancel(context.Background())
	defer cancel()
	answered, drained := make(chan struct{}), make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		defer close(drained)
		// No DrainDeadline: only the stop can end this drain.
		w.Header().Set("Connection", "close")
		w.Header().Set("Content-Length", "2")
		w.WriteHeader(http.StatusUnauthorized)
		_, _ = w.Write([]byte("{}"))
		close(answered)
		DrainBody(stop, w, r.Body)
	}))
	defer srv.Close()
	conn, err := net.Dial("tcp", srv.Listener.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	// Ten bytes of a body of 100, then nothing.
	if _, err := io.WriteString(conn, "POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 100\r\n\r\n0123456789"); err != nil {
		t.Fatal(err)
	}
	resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	<-answered
	cancel()
	var late <-chan time.Time
	if d, ok := t.Deadline(); ok {
		late = time.After(time.Until(d) * 9 / 10)
	}
	select {
	case <-drained:
	case <-late:
		t.Fatal("the drain went on after its stop context ended")
	}
}
