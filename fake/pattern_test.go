package fake_test

import (
	"path"
	"strings"
	"testing"

	"github.com/acctapi/acctapi/fake"
)

// TestPatternMatchesAsPathMatch compares the fake's segment matcher with
// path.Match, whose language patterns are, over every segment pattern of
// up to three tokens and every path segment of up to four runes from
// small alphabets (stars, '?', classes, escapes and a two-byte rune).
func TestPatternMatchesAsPathMatch(t *testing.T) {
	t.Parallel()
	tokens := []string{"a", "b", "*", "?", "[ab]", "[^a]", "[a-é]", "é", `\*`}
	runes := []string{"a", "b", "é", "*"}
	var patterns, segments []string
	var grow func(out *[]string, alphabet []string, prefix string, n int)
	grow = func(out *[]string, alphabet []string, prefix string, n int) {
		*out = append(*out, prefix)
		if n == 0 {
			return
		}
		for _, tok := range alphabet {
			grow(out, alphabet, prefix+tok, n-1)
		}
	}
	grow(&patterns, tokens, "", 3)
	grow(&segments, runes, "", 4)
	mismatches := 0
	for _, seg := range patterns {
		pat, err := fake.ParsePattern("/x/" + seg)
		if err != nil {
			t.Fatalf("ParsePattern(%q): %v", "/x/"+seg, err)
		}
		for _, s := range segments {
			want, _ := path.Match(seg, s)
			if got := pat.Match("/x/" + s); got != want {
				if mismatches++; mismatches <= 10 {
					t.Errorf("pattern %q, segment %q: Match = %v, path.Match = %v", seg, s, got, want)
				}
			}
		}
	}
	if mismatches > 0 {
		t.Errorf("%d mismatches in all", mismatches)
	}
}

// TestParsePatternLimits pins what ParsePattern refuses beyond the syntax:
// a pattern longer than MaxPatternBytes (before, a 20,000-byte pattern
// was taken, and matching it against a 60 KB path took seconds), and a
// wildcard segment of more than 63 characters and wildcards. A literal
// segment may be longer, up to the pattern's length.
func TestParsePatternLimits(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, pattern, err string
	}{
		{"longest", "/service_users/" + strings.Repeat("a", fake.MaxPatternBytes-len("/service_users/")), ""},
		{"one byte too long", "/service_users/" + strings.Repeat("a", fake.MaxPatternBytes-len("/service_users/")+1), "257 bytes long; a pattern is at most 256"},
		{"the review's", "/service_users/*" + strings.Repeat("a", 20000) + "b", "20017 bytes long"},
		{"long literal segment", "/service_users/" + strings.Repeat("a", 200), ""},
		{"63 atoms", "/service_users/*" + strings.Repeat("a", 62), ""},
		{"64 atoms", "/service_users/*" + strings.Repeat("a", 63), "has more than 63 characters and wildcards"},
		{"stars collapse", "/service_users/" + strings.Repeat("*", 100), ""},
		{"not UTF-8", "/service_users/\xff", "is not UTF-8"},
		{"malformed", "/service_users/[", "syntax error in pattern"},
		{"no slash", "service_users", "does not start with /"},
	}
	for _, tt := range tests {
		_, err := fake.ParsePattern(tt.pattern)
		if (err == nil) != (tt.err == "") || (err != nil && !strings.Contains(err.Error(), tt.err)) {
			t.Errorf("%s: ParsePattern(%.40q…) = %v; want error containing %q", tt.name, tt.pattern, err, tt.err)
		}
		if _, err2 := fake.MatchPath(tt.pattern, "/service_users/x"); (err2 == nil) != (err == nil) {
			t.Errorf("%s: MatchPath's error %v, ParsePattern's %v", tt.name, err2, err)
		}
	}
	srv, _ := start(t)
	long := "/service_users/*" + strings.Repeat("a", 20000) + "b"
	if err := srv.CheckTarget("GET", long); err == nil || !strings.Contains(err.Error(), "a pattern is at most 256") {
		t.Errorf("CheckTarget(GET, 20 KB pattern) = %v", err)
	}
}

// TestPatternMatchAllocates pins that matching a parsed pattern allocates
// nothing, whatever the path: the pattern is parsed once, when added.
func TestPatternMatchAllocates(t *testing.T) {
	pat, err := fake.ParsePattern("/service_users/*" + strings.Repeat("a", 40) + "[ab]?b")
	if err != nil {
		t.Fatal(err)
	}
	p := "/service_users/" + strings.Repeat("a", 60000)
	if n := testing.AllocsPerRun(10, func() { pat.Match(p) }); n != 0 {
		t.Errorf("Match allocates %v times a call; want 0", n)
	}
	if pat.Match(p) || !pat.Match("/service_users/x"+strings.Repeat("a", 42)+"b") {
		t.Error("Match: wrong answer")
	}
}

// BenchmarkPatternMatchLongPath matches the longest pattern with a star
// against a path with a 60,000-byte segment that it does not match: the
// case in which path.Match backtracked over the whole segment for each
// position of the pattern.
func BenchmarkPatternMatchLongPath(b *testing.B) {
	pattern := "/service_users/*" + strings.Repeat("a", 62)
	pat, err := fake.ParsePattern(pattern)
	if err != nil {
		b.Fatal(err)
	}
	p := "/service_users/" + strings.Repeat("a", 60000) + "b"
	b.ReportAllocs()
	for b.Loop() {
		if pat.Match(p) {
			b.Fatal("matched")
		}
	}
}

// BenchmarkMatchPathLongPath is the same with the pattern parsed for each
// match, as MatchPath does.
func BenchmarkMatchPathLongPath(b *testing.B) {
	pattern := "/service_users/*" + strings.Repeat("a", 62)
	p := "/service_users/" + strings.Repeat("a", 60000) + "b"
	b.ReportAllocs()
	for b.Loop() {
		if ok, _ := fake.MatchPath(pattern, p); ok {
			b.Fatal("matched")
		}
	}
}
