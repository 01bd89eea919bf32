package trunc

import "testing"

func TestPrintable(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct{ s, want string }{
		{"plain\ttab é", "plain\ttab é"},
		{"line\nbreak", `line\nbreak`},
		{"\x1b[2J\x00\x7f\r", `\x1b[2J\x00\x7f\r`},
		{"a\u0085b\u009b2J", `a\u0085b\u009b2J`},
		{"\xff", `\xff`},
		{"\xff\n", `\xff\n`},
	} {
		if got := Printable(tt.s, 100); got != tt.want {
			t.Errorf("Printable(%q) = %q, want %q", tt.s, got, tt.want)
		}
	}
	for _, tt := range []struct {
		s    string
		n    int
		want string
	}{
		{"ab\ncd", 4, `ab\n…`},
		{"ab\x1bcd", 3, "ab…"}, // never inside an escape
		{"ab\x1bcd", 5, "ab…"},
		{"ab\x1bcd", 6, `ab\x1b…`},
		{"aé", 2, "a…"}, // never inside a character
		{"abc", 3, "abc"},
	} {
		if got := Printable(tt.s, tt.n); got != tt.want {
			t.Errorf("Printable(%q, %d) = %q, want %q", tt.s, tt.n, got, tt.want)
		}
	}
}

func TestString(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		s    string
		n    int
		want string
	}{
		{"short", "abc", 3, "abc"},
		{"empty", "", 0, ""},
		{"cut", "abcd", 3, "abc…"},
		{"zero", "abc", 0, "…"},
		{"never splits a character", "aé", 2, "a…"},
		{"whole character", "éa", 2, "é…"},
	}
	for _, tt := range tests {
		if got := String(tt.s, tt.n); got != tt.want {
			t.Errorf("%s: String(%q, %d) = %q, want %q", tt.name, tt.s, tt.n, got, tt.want)
		}
	}
}
