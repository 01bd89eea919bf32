// Package trunc shortens text for messages: the fake's error messages, the
// conformance suite's failure reports. It imports nothing of the module.
package trunc

import (
	"fmt"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Printable returns s with each control character but tab (C0, DEL and
// C1) written as a Go escape (\n, \x1b, \u0085), and each byte that is
// not UTF-8 as \x and its hex, so that a message from a server cannot
// break or rewrite the log line it is written into; cut to at most n
// bytes before "…", never inside a character or an escape.
func Printable(s string, n int) string {
	var b strings.Builder
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		unit := s[i : i+size]
		switch {
		case r == utf8.RuneError && size == 1:
			unit = fmt.Sprintf(`\x%02x`, s[i])
		case r != '\t' && unicode.IsControl(r):
			q := strconv.QuoteRune(r)
			unit = q[1 : len(q)-1]
		}
		if b.Len()+len(unit) > n {
			return b.String() + "…"
		}
		b.WriteString(unit)
		i += size
	}
	if b.Len() == len(s) {
		return s // nothing escaped: s itself
	}
	return b.String()
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
