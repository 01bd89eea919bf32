package fake

import "testing"

// TestJournalBound checks that the journal keeps the most recent entries,
// in order, and never more than its limit.
func TestJournalBound(t *testing.T) {
	t.Parallel()
	for _, limit := range []int{1, 5, 17, journalChunk, journalChunk + 1, 3*journalChunk - 7} {
		j := &journal{max: limit}
		for i := range 5 * journalChunk {
			j.add(journalEntry{Entry: Entry{Status: i}})
			want := min(i+1, limit)
			if j.n < want-journalChunk || j.n > want {
				t.Fatalf("limit %d, after %d entries: %d kept, want at most %d and no fewer than %d", limit, i+1, j.n, want, want-journalChunk)
			}
		}
		var got []int
		for _, c := range j.chunks {
			for _, e := range c {
				got = append(got, e.Status)
			}
		}
		if len(got) != j.n {
			t.Fatalf("limit %d: %d entries in the chunks, count says %d", limit, len(got), j.n)
		}
		for i, st := range got {
			if want := 5*journalChunk - len(got) + i; st != want {
				t.Fatalf("limit %d: entry %d is request %d, want %d (the most recent, in order)", limit, i, st, want)
			}
		}
	}
}
