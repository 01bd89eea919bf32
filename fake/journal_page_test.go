package fake

import (
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/acctapi/acctapi"
)

// journalOf returns a server whose journal holds n entries with ids
// op_00000 upwards, a GET for every third and a POST for the others, each
// with a small body.
func journalOf(n int) *Server {
	s := &Server{}
	for i := range n {
		method := "POST"
		if i%3 == 0 {
			method = "GET"
		}
		s.journal.add(journalEntry{Entry: Entry{OperationID: fmt.Sprintf("op_%05d", i), Method: method, Path: "/service_users", Status: 200},
			resp: []byte(`{"id":"` + strconv.Itoa(i) + `"}`)}, DefaultJournalBudget)
	}
	return s
}

// TestJournalBeforeCost pins what a page of the journal costs, counted in
// entries the filter looks at: a page seeks to before_id and looks at the
// entries it returns and those it passes over (at most a batch more),
// never at the rest of the journal. Before, every page copied the whole
// journal and walked it from the newest entry, redacting each: 100,000
// entries paged 100 at a time took 73 s.
func TestJournalBeforeCost(t *testing.T) {
	t.Parallel()
	s := journalOf(10_000)
	looked := 0
	count := func(e Entry) bool { looked++; return true }
	entries, found := s.JournalBefore("op_05000", count)
	if !found {
		t.Fatal("op_05000 not found")
	}
	var got []string
	for e := range entries {
		if got = append(got, e.OperationID); len(got) == 5 {
			break
		}
	}
	if want := []string{"op_04999", "op_04998", "op_04997", "op_04996", "op_04995"}; !slices.Equal(got, want) {
		t.Errorf("JournalBefore(op_05000): %v, want %v", got, want)
	}
	if looked > 5+journalBatch {
		t.Errorf("a page of 5 looked at %d entries; want at most %d", looked, 5+journalBatch)
	}

	// A filter that matches nothing looks at each older entry once.
	looked = 0
	entries, _ = s.JournalBefore("op_00100", func(e Entry) bool { looked++; return false })
	for range entries {
		t.Fatal("an entry the filter refused was yielded")
	}
	if looked != 100 {
		t.Errorf("a filter refusing all looked at %d entries before op_00100; want 100", looked)
	}

	// The filter sees no body; a yielded entry has its body.
	entries, _ = s.JournalBefore("", func(e Entry) bool {
		if e.ResponseBody != "" {
			t.Errorf("the filter saw a body: %q", e.ResponseBody)
		}
		return e.Method == "GET"
	})
	for e := range entries {
		if e.OperationID != "op_09999" || e.ResponseBody != `{"id":"9999"}` {
			t.Errorf("first GET: %s %q; want op_09999 with its body", e.OperationID, e.ResponseBody)
		}
		break
	}
	if _, found := s.JournalBefore("op_99999", nil); found {
		t.Error("JournalBefore(op_99999) found an entry no request had")
	}
}

// TestJournalBeforeOrder checks that JournalBefore follows the journal's
// order, which is the order in which answers were recorded, not that of
// the ids: a request that started first (a smaller id) may finish last.
func TestJournalBeforeOrder(t *testing.T) {
	t.Parallel()
	s := &Server{}
	for _, id := range []string{"op_1", "op_3", "op_2", "op_4"} {
		s.journal.add(journalEntry{Entry: Entry{OperationID: id}}, DefaultJournalBudget)
	}
	ids := func(before string) []string {
		entries, _ := s.JournalBefore(before, nil)
		var out []string
		for e := range entries {
			out = append(out, e.OperationID)
		}
		return out
	}
	for before, want := range map[string][]string{"": {"op_4", "op_2", "op_3", "op_1"}, "op_2": {"op_3", "op_1"}, "op_3": {"op_1"}, "op_1": nil} {
		if got := ids(before); !slices.Equal(got, want) {
			t.Errorf("before %q: %v, want %v", before, got, want)
		}
	}
	var back []string
	for e := range s.JournalBackward() {
		back = append(back, e.OperationID)
	}
	if want := ids(""); !slices.Equal(back, want) {
		t.Errorf("JournalBackward: %v, want %v", back, want)
	}
}

// TestJournalBackwardWhileRecording walks the journal while requests are
// recorded and the oldest entries dropped: the walk yields entries newest
// first, never one twice, never an empty one, and the index by id stays
// that of the entries kept.
func TestJournalBackwardWhileRecording(t *testing.T) {
	t.Parallel()
	s := journalOf(1000)
	s.journal.max = 1000
	var wg sync.WaitGroup
	wg.Go(func() {
		for i := range 2000 {
			s.journal.add(journalEntry{Entry: Entry{OperationID: fmt.Sprintf("op_1%05d", i)}}, DefaultJournalBudget)
		}
	})
	for range 20 {
		prev := "op_999999"
		for e := range s.JournalBackward() {
			if e.OperationID == "" || e.OperationID >= prev {
				t.Fatalf("walk yielded %q after %q", e.OperationID, prev)
			}
			prev = e.OperationID
		}
	}
	wg.Wait()
	if len(s.journal.byID) != s.journal.n || s.journal.n != 1000 {
		t.Errorf("%d ids indexed, %d entries kept; want 1000 each", len(s.journal.byID), s.journal.n)
	}
	if _, found := s.JournalBefore("op_00999", nil); found {
		t.Error("an entry dropped for room is still found")
	}
	s.ClearJournal()
	if _, found := s.JournalBefore("op_101999", nil); found || len(s.journal.byID) != 0 {
		t.Error("ClearJournal left the index")
	}
}

// TestJournalKeepsNewestLongPath pins SetJournalBudget's promise that the
// newest request is always kept, for a request whose path (or query) alone
// is larger than the budget: its path and query are cut as bodies are.
// Before, a GET of a 20,000-byte path under a 10,000-byte budget was not
// journaled, and the request before it stayed the newest entry.
func TestJournalKeepsNewestLongPath(t *testing.T) {
	t.Parallel()
	long := "/service_users/service_" + strings.Repeat("a", 20_000)
	query := "limit=" + strings.Repeat("9", 30_000)
	for _, budget := range []int64{10_000, 2_000, entryOverhead + 100} {
		j := &journal{budget: budget, budgetSet: true}
		j.add(journalEntry{Entry: Entry{Method: "GET", Path: "/service_users", Status: 200, OperationID: "op_1"}}, DefaultJournalBudget)
		j.add(journalEntry{Entry: Entry{Method: "GET", Path: long, Query: query, Status: 404, OperationID: "op_2"},
			resp: []byte(`{"error_code":"ERR_NGROK_404","msg":"not found"}`)}, DefaultJournalBudget)
		got := kept(t, j)
		if len(got) == 0 || got[len(got)-1] != 404 || j.bytes > budget {
			t.Fatalf("budget %d: kept %v in %d bytes; want the 404 last, within the budget", budget, got, j.bytes)
		}
		last := j.chunks[len(j.chunks)-1]
		e := last[len(last)-1].redacted()
		pathNote := " …[cut: " + strconv.Itoa(len(long)) + " bytes in all]"
		queryNote := " …[cut: " + strconv.Itoa(len(query)) + " bytes in all]"
		if budget >= 2_000 && (!strings.HasPrefix(e.Path, "/service_users/service_a") || !strings.HasSuffix(e.Path, pathNote) ||
			!strings.HasSuffix(e.Query, queryNote)) {
			t.Errorf("budget %d: path %.40q…, query %.40q…; want each cut, with its note", budget, e.Path, e.Query)
		}
		if budget >= 2_000 && e.ResponseBody != `{"error_code":"ERR_NGROK_404","msg":"not found"}` {
			t.Errorf("budget %d: response body %q; want it whole, the path and query cut instead", budget, e.ResponseBody)
		}
		if e.OperationID != "op_2" || e.Method != "GET" {
			t.Errorf("budget %d: newest %s %s; want op_2 GET", budget, e.OperationID, e.Method)
		}
	}
	j := &journal{budget: entryOverhead - 1, budgetSet: true}
	j.add(journalEntry{Entry: Entry{Method: "GET", Path: long}}, DefaultJournalBudget)
	if j.n != 0 {
		t.Errorf("a budget below an entry without bodies, path and query keeps %d entries", j.n)
	}
}

// BenchmarkJournalPage reads one page of 100 from the middle of a journal
// of 100,000 entries, as acctfake's GET /_acctfake/journal?before_id= does.
func BenchmarkJournalPage(b *testing.B) {
	s := journalOf(100_000)
	b.ReportAllocs()
	for b.Loop() {
		entries, _ := s.JournalBefore("op_50000", nil)
		n := 0
		for range entries {
			if n++; n == 100 {
				break
			}
		}
	}
}

// BenchmarkJournalFilterNone reads a page of 100,000 entries through a
// filter that matches none of them.
func BenchmarkJournalFilterNone(b *testing.B) {
	s := journalOf(100_000)
	b.ReportAllocs()
	for b.Loop() {
		entries, _ := s.JournalBefore("", func(e Entry) bool { return e.Method == "DELETE" })
		for range entries {
			b.Fatal("matched")
		}
	}
}

// TestJournalKeepsNewestLongPathServed is the review's case through a
// server: under a 10,000-byte budget, a GET of a service user whose id is
// 20,000 bytes long is journaled, as the newest entry, with its 404.
func TestJournalKeepsNewestLongPathServed(t *testing.T) {
	t.Parallel()
	s, err := New(WithoutListener())
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	s.SetJournalBudget(10_000)
	get := func(p string) {
		req, _ := http.NewRequest("GET", s.URL+p, nil)
		req.Header.Set("Authorization", "Bearer "+s.APIKey())
		req.Header.Set("Service-Version", acctapi.APIVersion)
		resp, err := s.HTTPClient().Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
	}
	get("/service_users")
	get("/service_users/service_" + strings.Repeat("a", 20_000))
	for e := range s.JournalBackward() {
		if e.Status != 404 || !strings.HasPrefix(e.Path, "/service_users/service_aaa") || !strings.Contains(e.Path, "[cut: 20023 bytes in all]") {
			t.Errorf("newest entry: %d %.60q…; want the 404, its path cut", e.Status, e.Path)
		}
		break
	}
}
