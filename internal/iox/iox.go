// Package iox holds the I/O helpers that the client, the fake and
// acctfake share.
package iox

import (
	"io"
	"net/http"
	"time"
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
// after an answer that did not read it. Half a second is net/http's own
// wait before it closes a connection whose body it gave up on: it lets a
// client that is sending finish, and ends a stalled one's connection long
// before any read timeout.
const DrainWait = 500 * time.Millisecond

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
// follow it.
func DrainDeadline(w http.ResponseWriter) bool {
	return http.NewResponseController(w).SetReadDeadline(time.Now().Add(DrainWait)) == nil
}

// DrainBody sends w's answer, already written, and then reads and
// discards what is left of body, for at most DrainWait (see
// DrainDeadline) and DrainBytes.
func DrainBody(w http.ResponseWriter, body io.Reader) {
	if err := http.NewResponseController(w).Flush(); err != nil {
		return
	}
	_, _ = io.Copy(io.Discard, io.LimitReader(body, DrainBytes))
}

// BodyAllowed reports whether an answer of status may have a body, and
// so a Content-Length (not 1xx, 204 or 304).
func BodyAllowed(status int) bool {
	return status >= 200 && status != http.StatusNoContent && status != http.StatusNotModified
}

// Body is a request body that records whether it was read to its end:
// an answer that did not read it closes the connection and drains it
// (DrainBody).
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
