package fake

import (
	"strings"
	"testing"
)

// kept returns the statuses of the entries j keeps, oldest first, and
// checks that its count and byte total agree with them.
func kept(t *testing.T, j *journal) []int {
	t.Helper()
	var got []int
	var bytes int64
	for i, c := range j.chunks {
		if i == 0 {
			c = c[j.head:]
		}
		for _, e := range c {
			got = append(got, e.Status)
			bytes += e.size
		}
	}
	if len(got) != j.n || bytes != j.bytes {
		t.Fatalf("%d entries of %d bytes in the chunks, the journal counts %d of %d", len(got), bytes, j.n, j.bytes)
	}
	return got
}

// TestJournalBound checks that the journal keeps the most recent entries,
// in order, and exactly as many as its limit allows.
func TestJournalBound(t *testing.T) {
	t.Parallel()
	for _, limit := range []int{1, 5, 17, journalChunk, journalChunk + 1, 3*journalChunk - 7} {
		j := &journal{max: limit}
		for i := range 5 * journalChunk {
			j.add(journalEntry{Entry: Entry{Status: i}}, DefaultJournalBudget)
			if want := min(i+1, limit); j.n != want {
				t.Fatalf("limit %d, after %d entries: %d kept, want %d", limit, i+1, j.n, want)
			}
		}
		got := kept(t, j)
		for i, st := range got {
			if want := 5*journalChunk - len(got) + i; st != want {
				t.Fatalf("limit %d: entry %d is request %d, want %d (the most recent, in order)", limit, i, st, want)
			}
		}
	}
}

// TestJournalByteBudget checks that the journal never holds more bytes than
// its budget, drops the oldest entries first, keeps as many of the most
// recent as fit, and that the zero journal's budget is DefaultJournalBudget.
func TestJournalByteBudget(t *testing.T) {
	t.Parallel()
	body := []byte(strings.Repeat("b", 10_000))
	one := (&journalEntry{req: body}).cost()
	for _, budget := range []int64{0, one - 1, one, 3*one + 5, 100 * one} {
		j := &journal{budget: budget, budgetSet: true}
		for i := range 3 * journalChunk {
			j.add(journalEntry{Entry: Entry{Status: i}, req: body}, DefaultJournalBudget)
			if j.bytes > budget {
				t.Fatalf("budget %d, after %d entries: %d bytes kept", budget, i+1, j.bytes)
			}
		}
		got := kept(t, j)
		if want := int(budget / one); len(got) != want {
			t.Errorf("budget %d (%d entries): %d kept, want %d", budget, budget/one, len(got), want)
		}
		for i, st := range got {
			if want := 3*journalChunk - len(got) + i; st != want {
				t.Fatalf("budget %d: entry %d is request %d, want %d", budget, i, st, want)
			}
		}
	}

	var j journal
	if got := j.byteBudget(DefaultJournalBudget); got != DefaultJournalBudget || DefaultJournalBudget != 64<<20 {
		t.Errorf("zero journal's budget %d, want 64 MiB", got)
	}
	// A journal of the default budget filled with the largest bodies it
	// keeps stays within it.
	big := []byte(strings.Repeat("x", maxJournalBody))
	for range DefaultJournalBudget/(2*maxJournalBody) + 50 {
		j.add(journalEntry{Entry: Entry{Method: "POST", Path: "/service_users"}, req: big, resp: big}, DefaultJournalBudget)
	}
	if j.bytes > DefaultJournalBudget || j.n >= DefaultJournalBudget/(2*maxJournalBody) {
		t.Errorf("default budget: %d entries of %d bytes kept", j.n, j.bytes)
	}
	kept(t, &j)
}

// TestSetJournalBudget checks that lowering the budget drops the oldest
// entries at once.
func TestSetJournalBudget(t *testing.T) {
	t.Parallel()
	s := &Server{}
	body := []byte(strings.Repeat("b", 1000))
	for i := range 10 {
		s.journal.add(journalEntry{Entry: Entry{Status: i}, req: body}, DefaultJournalBudget)
	}
	one := s.journal.bytes / 10
	s.SetJournalBudget(3 * one)
	if got := kept(t, &s.journal); len(got) != 3 || got[0] != 7 {
		t.Errorf("after lowering the budget to 3 entries: %v, want [7 8 9]", got)
	}
	s.SetJournalBudget(-1)
	if s.journal.n != 0 || len(s.Journal()) != 0 {
		t.Errorf("budget 0 keeps %d entries", s.journal.n)
	}
}
