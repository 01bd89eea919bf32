// Package trunc shortens text for messages: the fake's error messages, the
// conformance suite's failure reports. It imports nothing of the module.
package trunc

import "unicode/utf8"

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
