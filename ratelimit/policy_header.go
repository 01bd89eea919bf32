package ratelimit

import "fmt"

// badFieldByte returns the index of the first byte of s that may not
// appear in an HTTP field value (a control character other than a tab),
// or -1. net/http's HTTP/1 server writes a line break as a space and
// sends the other control characters; its HTTP/2 server drops such a
// field.
func badFieldByte(s string) int {
	for i := 0; i < len(s); i++ {
		if badFieldChar(s[i]) {
			return i
		}
	}
	return -1
}

func badFieldChar(c byte) bool { return c < ' ' && c != '\t' || c == 0x7f }

// checkFieldValue refuses a header value whose text, outside its
// placeholders, has a byte no HTTP field value may have.
func checkFieldValue(t template) error {
	for _, part := range t.parts {
		if i := badFieldByte(part); i >= 0 {
			return fmt.Errorf("the value has the control character %q, which an HTTP header value may not hold "+
				"(net/http would send it changed or not at all)", part[i])
		}
	}
	return nil
}

// fieldValue returns s with each byte an HTTP field value may not hold
// replaced by a space, so that a value with placeholders goes out the
// same over HTTP/1 and HTTP/2, whatever the request put in it.
func fieldValue(s string) string {
	if badFieldByte(s) < 0 {
		return s
	}
	b := []byte(s)
	for i, c := range b {
		if badFieldChar(c) {
			b[i] = ' '
		}
	}
	return string(b)
}
