// Package iox holds the I/O helpers that the client, the fake and
// acctfake share.
package iox

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/netip"
	"strings"
	"sync"
	"time"

	"github.com/acctapi/acctapi/internal/trunc"
)

// maxFirst bounds the first buffer ReadAll makes from a declared size:
// the size comes from the other end of a connection, and a body is only
// trusted as far as it has arrived.
const maxFirst = 64 << 10

// ReadAll is io.ReadAll with a first buffer of size bytes when size is
// known (> 0; the Content-Length of a request or response) and at most
// 64 KiB, so that a body of the declared length is read into one
// allocation of its own size rather than a 512-byte buffer grown by
// copying. A body longer or shorter than declared is still read whole.
// When the result would keep more than twice its length in unused capacity
// (an unknown or wrong size), it is copied into a buffer of its own size,
// so that a caller that keeps it keeps no more than it read.
func ReadAll(r io.Reader, size int64) ([]byte, error) {
	first := int64(512)
	if size > 0 {
		first = min(size, maxFirst) + 1 // +1: room for the read that meets EOF
	}
	b := make([]byte, 0, first)
	for {
		n, err := r.Read(b[len(b):cap(b)])
		b = b[:len(b)+n]
		if err == io.EOF {
			if cap(b) > 2*len(b)+16 {
				b = append([]byte(nil), b...)
			}
			return b, nil
		}
		if err != nil {
			return b, err
		}
		if len(b) == cap(b) {
			b = append(b, 0)[:len(b)] // grow as append does
		}
	}
}

// DrainWait bounds how long DrainBody reads the rest of a request's body
// after an answer that did not read it. The drain ends sooner when the
// client closes the connection, which a client does once it has read the
// answer (Go's, curl): the wait only bounds what a stalled client holds,
// a goroutine and a connection, in the order of a read timeout (acctfake's
// is 30 s). It is long so that a client on a loaded machine, which may
// take a while to read the answer, gets it rather than a connection reset:
// with net/http's own half second, 40 refused 2 MiB uploads from parallel
// tests on a 2-vCPU machine could lose one.
const DrainWait = 10 * time.Second

// DrainBytes bounds what DrainBody reads: the cost of a body the answer
// refused is bounded in bytes as well as in time.
const DrainBytes = 32 << 20

// DrainDeadline prepares the drain of a request's body that w's answer
// will not have read: it bounds reads on w's connection to DrainWait from
// now, and reports whether it could (not on an in-memory connection,
// where there is nothing to drain). Closing a socket while the client's
// body is still arriving makes the kernel reset the connection, and a
// client still sending then reports "connection reset" or "broken pipe"
// instead of the answer; net/http reads at most 256 KiB of it first. When
// it reports true, the answer should close the connection
// ("Connection: close", so that net/http does not read the rest before
// writing it) and declare its length (so that DrainBody's flush sends it
// whole, not chunked with its end after the drain), and DrainBody should
// follow it. wait, when positive and shorter, replaces DrainWait: a server
// whose read timeout is shorter (acctfake's -read-timeout) holds a
// refused body's connection no longer than that.
func DrainDeadline(w http.ResponseWriter, wait time.Duration) bool {
	if wait <= 0 || wait > DrainWait {
		wait = DrainWait
	}
	return http.NewResponseController(w).SetReadDeadline(time.Now().Add(wait)) == nil
}

// DrainBody sends w's answer, already written, and then reads and
// discards what is left of body, for at most DrainWait (see
// DrainDeadline) and DrainBytes, and no longer than stop lasts: a server
// that is closing ends its drains, rather than wait for stalled clients.
func DrainBody(stop context.Context, w http.ResponseWriter, body io.Reader) {
	rc := http.NewResponseController(w)
	if err := rc.Flush(); err != nil {
		return
	}
	// The deadline is moved from stop's goroutine only while the drain
	// runs: never after DrainBody has returned, when w is no longer the
	// handler's.
	var mu sync.Mutex
	draining := true
	after := context.AfterFunc(stop, func() {
		mu.Lock()
		defer mu.Unlock()
		if draining {
			_ = rc.SetReadDeadline(time.Now())
		}
	})
	defer func() {
		if !after() {
			mu.Lock()
			draining = false
			mu.Unlock()
		}
	}()
	_, _ = io.Copy(io.Discard, io.LimitReader(body, DrainBytes))
}

// BodyAllowed reports whether an answer of status may have a body, and
// so a Content-Length (not 1xx, 204 or 304).
func BodyAllowed(status int) bool {
	return status >= 200 && status != http.StatusNoContent && status != http.StatusNotModified
}

// Body is a request body that records whether it was read to its end:
// an answer that did not read it closes the connection and drains it
// (DrainBody). (A body whose read failed, at a read timeout or on a
// malformed chunk, gives net/http's error again at once: its drain ends
// there, TestNoDrainAfterFailedRead.)
type Body struct {
	io.ReadCloser
	// EOF is set once a read met the end of the body.
	EOF bool
}

// Read reads from the body, setting EOF when it meets the end.
func (b *Body) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	if err == io.EOF {
		b.EOF = true
	}
	return n, err
}

// MaxHostBytes bounds a Host header that ValidHost accepts: a DNS name of
// at most 253 bytes, a colon and a port of five digits.
const MaxHostBytes = 253 + 1 + 5

// HostMessage is the error message for a Host header that ValidHost
// refuses, quoting at most its first 64 bytes.
func HostMessage(host string) string {
	return fmt.Sprintf("The Host header %q is not a host name or IP address with an optional port, of at most %d bytes.",
		trunc.String(host, 64), MaxHostBytes)
}

// ValidHost reports whether host, a request's Host header, is a host the
// servers answer and put into the uris they answer with: a DNS name or an
// IPv4 address (letters, digits, '-', '_' and '.'; at most 253 bytes) or
// an IPv6 address in brackets (no zone), then optionally a colon and a
// port from 0 to 65535 (or no port after the colon, as RFC 3986 allows).
// net/http lets through much more (any byte a header may hold, '%' and
// '[' included, up to the header limit): a Host of 60 KB went into every
// uri of a page, so that one list allocated 672 MiB (a review's
// measurement), and a malformed one made uris no client can parse.
func ValidHost(host string) bool {
	if host == "" || len(host) > MaxHostBytes {
		return false
	}
	name, port := host, ""
	if host[0] == '[' {
		end := strings.IndexByte(host, ']')
		if end < 0 {
			return false
		}
		a, err := netip.ParseAddr(host[1:end])
		if err != nil || !a.Is6() || a.Zone() != "" {
			return false
		}
		name, port = "", host[end+1:]
		if port != "" {
			if port[0] != ':' {
				return false
			}
			port = port[1:]
		}
	} else if i := strings.IndexByte(host, ':'); i >= 0 {
		name, port = host[:i], host[i+1:]
	}
	if port != "" {
		if len(port) > 5 {
			return false
		}
		n := 0
		for _, c := range []byte(port) {
			if c < '0' || c > '9' {
				return false
			}
			n = n*10 + int(c-'0')
		}
		if n > 65535 {
			return false
		}
	}
	if host[0] == '[' {
		return true
	}
	if name == "" || len(name) > 253 {
		return false
	}
	for _, c := range []byte(name) {
		switch {
		case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z', '0' <= c && c <= '9', c == '-', c == '_', c == '.':
		default:
			return false
		}
	}
	return true
}

// An AuthFault is what is wrong with a request's Authorization header, as
// BearerToken finds it; the fake and acctfake's admin API answer each
// with their own message and contract §2's code.
type AuthFault int

const (
	// AuthOK: one header, "Bearer <token>".
	AuthOK AuthFault = iota
	// AuthMissing: no Authorization header (ERR_NGROK_200).
	AuthMissing
	// AuthMany: more than one, even if one is empty (ERR_NGROK_201).
	AuthMany
	// AuthMalformed: not "Bearer <token>" (case-insensitive scheme, one
	// space, a token without spaces or tabs), an empty header included
	// (ERR_NGROK_201).
	AuthMalformed
)

// BearerToken returns the token of h's one Authorization header, or what
// is wrong with it: the one copy of the rule for the API and the admin
// API.
func BearerToken(h http.Header) (string, AuthFault) {
	vs, present := h["Authorization"]
	switch {
	case !present:
		return "", AuthMissing
	case len(vs) > 1:
		return "", AuthMany
	}
	scheme, token, ok := strings.Cut(vs[0], " ")
	if !ok || !strings.EqualFold(scheme, "Bearer") || token == "" || strings.ContainsAny(token, " \t") {
		return "", AuthMalformed
	}
	return token, AuthOK
}
