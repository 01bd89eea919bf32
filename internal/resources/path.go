package resources

import "strings"

// NormalPath returns escaped, a URL path whose escapes are valid (as
// net/url's EscapedPath writes it), in the normal form of RFC 3986
// (§6.2.2): an escaped unreserved character (letter, digit, "-", ".",
// "_", "~") written as itself, other escapes in upper case. A segment
// that would become "." or ".." keeps its escapes (in upper case): no dot
// segment is removed, and none is a resource's. The fake routes the normal
// form, and the SDK checks it for another resource's id, so that
// "/service%5Fusers/ak%5F1" is the "/service_users/ak_1" it spells to both.
func NormalPath(escaped string) string {
	if !strings.Contains(escaped, "%") {
		return escaped
	}
	segs := strings.Split(escaped, "/")
	for i, seg := range segs {
		if !strings.Contains(seg, "%") {
			continue
		}
		norm := normalEscapes(seg)
		if norm == "." || norm == ".." {
			// seg holds only dots and %2e: its escapes in upper case.
			norm = strings.ToUpper(seg)
		}
		segs[i] = norm
	}
	return strings.Join(segs, "/")
}

// normalEscapes returns seg, a path segment whose escapes are valid, with
// its escaped unreserved characters written as themselves and its other
// escapes in upper case.
func normalEscapes(seg string) string {
	var n strings.Builder
	for i := 0; i < len(seg); i++ {
		if seg[i] != '%' || i+2 >= len(seg) {
			n.WriteByte(seg[i])
			continue
		}
		esc := strings.ToUpper(seg[i : i+3])
		if v := unhex(seg[i+1])<<4 | unhex(seg[i+2]); unreserved(v) {
			n.WriteByte(v)
		} else {
			n.WriteString(esc)
		}
		i += 2
	}
	return n.String()
}

func unhex(c byte) byte {
	switch {
	case c <= '9':
		return c - '0'
	case c >= 'a':
		return c - 'a' + 10
	}
	return c - 'A' + 10
}

// unreserved reports whether c is one of RFC 3986's unreserved characters.
func unreserved(c byte) bool {
	return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '-' || c == '.' || c == '_' || c == '~'
}
