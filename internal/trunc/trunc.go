// Package trunc shortens text for messages: the fake's error messages, the
// conformance suite's failure reports. It imports nothing of the module.
package trunc

import (
	"strconv"
	"strings"
	"unicode/utf8"
)

// Printable returns s with each control character but tab written as a
// Go escape (\n, \x1b), so that a message from a server cannot break or
// rewrite the log line it is written into, cut as String cuts it to n
// bytes.
func Printable(s string, n int) string {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 && c != '\t' || c == 0x7f {
			var b strings.Builder
			for _, r := range s[:min(len(s), 4*n+4)] { // enough for n bytes escaped
				if r < 0x20 && r != '\t' || r == 0x7f {
					q := strconv.QuoteRune(r)
					b.WriteString(q[1 : len(q)-1])
				} else {
					b.WriteRune(r)
				}
			}
			return String(b.String(), n)
		}
	}
	return String(s, n)
}

// String returns s if it is at most n bytes long, and otherwise its first
// n bytes or fewer, never splitting a UTF-8 character, followed by "…".
func String(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n-- // never split a character
	}
	return s[:n] + "…"
}
