package trunc

import "testing"

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
