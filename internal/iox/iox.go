// Package iox holds the I/O helper that the client and the fake share.
package iox

import "io"

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
