package fake

import (
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"
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
		want := int(budget / one)
		if base := (&journalEntry{}).cost(); want == 0 && budget >= base {
			want = 1 // the newest, its body cut to fit
		}
		if len(got) != want {
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
	// Each entry so far costs more than the smallest budget: all go, and
	// the next is kept alone, its body cut to fit.
	s.SetJournalBudget(MinJournalBudget)
	if s.journal.n != 0 {
		t.Errorf("budget MinJournalBudget keeps %d entries of over %d bytes", s.journal.n, MinJournalBudget)
	}
	s.journal.add(journalEntry{Entry: Entry{Status: 10}, req: body}, DefaultJournalBudget)
	if got := kept(t, &s.journal); len(got) != 1 || got[0] != 10 || s.journal.bytes > MinJournalBudget {
		t.Errorf("under MinJournalBudget: %v holding %d bytes, want [10] in at most %d", got, s.journal.bytes, MinJournalBudget)
	}
}

// TestJournalKeepsNewest checks that an entry larger than the whole budget
// is kept alone, its bodies redacted whole and then cut to fit, so that the
// newest entry is always the newest request; and that only a budget too
// small for an entry without bodies keeps nothing.
func TestJournalKeepsNewest(t *testing.T) {
	t.Parallel()
	small := []byte(`{"name":"n"}`)
	big := []byte(`{"name":"n7","description":"` + strings.Repeat("é", 2000) + `","token":"secret-value"}`)
	base := (&journalEntry{}).cost()
	for _, budget := range []int64{base + 60, 3000, 10_000} {
		j := &journal{budget: budget, budgetSet: true}
		for i := range 6 {
			j.add(journalEntry{Entry: Entry{Status: i}, req: small, resp: small}, DefaultJournalBudget)
		}
		j.add(journalEntry{Entry: Entry{Status: 6}, req: big, resp: small}, DefaultJournalBudget)
		got := kept(t, j)
		if len(got) == 0 || got[len(got)-1] != 6 || j.bytes > budget {
			t.Fatalf("budget %d: kept %v in %d bytes, want the newest (6) last, within the budget", budget, got, j.bytes)
		}
		e := j.chunks[len(j.chunks)-1][len(j.chunks[len(j.chunks)-1])-1].redacted()
		if strings.Contains(e.RequestBody, "secret-value") || strings.Contains(e.RequestBody, "withheld") {
			t.Errorf("budget %d: request body %q: want it redacted whole, then cut", budget, e.RequestBody)
		}
		if budget == 10_000 {
			if e.RequestBody != string(redactJSON(big)) {
				t.Errorf("budget %d: request body %q, want it whole", budget, e.RequestBody)
			}
			continue
		}
		note := " …[cut: " + strconv.Itoa(len(big)) + " bytes in all]"
		if !strings.HasSuffix(e.RequestBody, note) || !utf8.ValidString(e.RequestBody) {
			t.Errorf("budget %d: request body %q: want a valid cut ending %q", budget, e.RequestBody, note)
		}
		if e.ResponseBody != string(small) {
			t.Errorf("budget %d: response body %q, want %s whole", budget, e.ResponseBody, small)
		}
	}
	j := &journal{budget: base - 1, budgetSet: true}
	j.add(journalEntry{Entry: Entry{Status: 1}, req: small}, DefaultJournalBudget)
	if j.n != 0 {
		t.Errorf("budget below an entry without bodies keeps %d entries", j.n)
	}
}

// TestJournalLongBodyRedactedThenCut checks that a body longer than
// maxJournalBody is redacted on the whole body and then cut, so that it
// stays readable even when it names a secret member (every API key list
// has "token":null).
func TestJournalLongBodyRedactedThenCut(t *testing.T) {
	t.Parallel()
	var b strings.Builder
	b.WriteString(`{"keys":[`)
	for i := range 20 {
		if i > 0 {
			b.WriteString(",")
		}
		b.WriteString(`{"id":"ak_` + strconv.Itoa(i) + `","metadata":"` + strings.Repeat("m", 4000) + `","token":null}`)
	}
	b.WriteString(`],"token":"tok-secret"}`)
	body := []byte(b.String())
	j := &journal{}
	j.add(journalEntry{Entry: Entry{Status: 200}, resp: body}, DefaultJournalBudget)
	e := j.chunks[0][0].redacted()
	if !strings.HasPrefix(e.ResponseBody, `{"keys":[{"id":"ak_0"`) || strings.Contains(e.ResponseBody, "withheld") {
		t.Fatalf("response body starts %.80q: want the body's start, not withheld", e.ResponseBody)
	}
	note := " …[cut: " + strconv.Itoa(len(body)) + " bytes in all]"
	if !strings.HasSuffix(e.ResponseBody, note) || len(e.ResponseBody) > maxJournalBody {
		t.Errorf("response body of %d bytes ends %q: want at most %d bytes ending %q", len(e.ResponseBody), e.ResponseBody[len(e.ResponseBody)-40:], maxJournalBody, note)
	}
	if c := j.chunks[0][0]; cap(c.resp) > maxJournalBody {
		t.Errorf("journal holds %d bytes of the body, want at most %d", cap(c.resp), maxJournalBody)
	}
}

// TestJournalLeft checks that an entry that leaves the journal, for room,
// for its size or by ClearJournal, counts as gone whatever the order in
// which entries were recorded: a request that started first (a smaller
// id) and finished last is recorded after faster ones, so the entry that
// leaves first need not have the smallest id (a review saw a page's
// cursor refused once its entry had left).
func TestJournalLeft(t *testing.T) {
	t.Parallel()
	s := &Server{}
	j := &s.journal
	j.max = 2
	add := func(id string) { j.add(journalEntry{Entry: Entry{OperationID: id}}, DefaultJournalBudget) }
	add("op_3") // started after op_2, finished first
	add("op_2")
	for _, id := range []string{"op_1", "op_2", "op_3", "op_4"} {
		if s.JournalLeft(id) {
			t.Errorf("JournalLeft(%s) with nothing gone", id)
		}
	}
	add("op_4") // op_3 leaves; op_2, with a smaller id, is kept (a later
	// review found it reported gone while kept)
	for id, want := range map[string]bool{"op_1": true, "op_2": false, "op_3": true, "op_4": false, "op_9": false, "": false} {
		if got := s.JournalLeft(id); got != want {
			t.Errorf("after op_3 left: JournalLeft(%q) = %v, want %v", id, got, want)
		}
	}
	s.ClearJournal()
	if !s.JournalLeft("op_4") || s.JournalLeft("op_5") || j.n != 0 {
		t.Errorf("after ClearJournal: JournalLeft(op_4) %v, (op_5) %v, %d kept; want true, false, 0", s.JournalLeft("op_4"), s.JournalLeft("op_5"), j.n)
	}
	j.budget, j.budgetSet = 1, true
	add("op_6") // larger than the budget: never kept
	if !s.JournalLeft("op_6") {
		t.Error("an entry never kept for its size is not gone")
	}
}

// TestIssuedIDsBounded checks that the operation ids NewOperationID
// issued are remembered up to maxIssuedIDs unused ones, the oldest
// forgotten first, and that ids used as they are issued (cmd/acctfake's
// front end) keep the memory small.
func TestIssuedIDsBounded(t *testing.T) {
	t.Parallel()
	var p issuedIDs
	for i := range 3 * maxIssuedIDs {
		id := strconv.Itoa(i)
		p.issue(id)
		if !p.take(id) {
			t.Fatalf("id %s, just issued, not taken", id)
		}
	}
	if len(p.pending) != 0 || len(p.order) > 64 {
		t.Errorf("after ids used as issued: %d pending, %d in order", len(p.pending), len(p.order))
	}
	for i := range maxIssuedIDs + 1 {
		p.issue("unused-" + strconv.Itoa(i))
	}
	if p.take("unused-0") || !p.take("unused-1") || !p.take("unused-"+strconv.Itoa(maxIssuedIDs)) || p.take("unused-1") {
		t.Error("want the oldest unused id forgotten, the others taken once")
	}
	if len(p.order) > 2*len(p.pending)+64 {
		t.Errorf("%d in order for %d pending", len(p.order), len(p.pending))
	}
}
