package rest_test

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/acctapi/acctapi"
	"github.com/acctapi/acctapi/internal/rest"
)

// maxItems bounds how many items the loop tests take from a pager, so that
// a pager that never stops fails the test instead of hanging it.
const maxItems = 50

// TestAllEndsWhenTheServerDoesNotAdvance checks that a server whose
// next_page_uri never advances ends the sequence with ErrPageLoop, after
// the items it served once, instead of looping forever.
func TestAllEndsWhenTheServerDoesNotAdvance(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name  string
		setup func(p *pager, base string)
		opts  *acctapi.ListOptions
		want  []string
		reqs  []string
	}{
		{
			name: "the same next page again and again",
			setup: func(p *pager, base string) {
				next := base + "/things?before_id=t2"
				p.pages["/things"] = page(&next, "t3", "t2")
				p.pages["/things?before_id=t2"] = page(&next, "t1")
			},
			want: []string{"t3", "t2", "t1", "error"},
			reqs: []string{"/things", "/things?before_id=t2"},
		},
		{
			name: "back to the first page, query reordered",
			setup: func(p *pager, base string) {
				next := base + "/things?before_id=t9&limit=2"
				p.pages["/things?before_id=t9&limit=2"] = page(&next, "t8", "t7")
			},
			opts: &acctapi.ListOptions{Limit: 2, BeforeID: "t9"},
			want: []string{"t8", "t7", "error"},
			reqs: []string{"/things?before_id=t9&limit=2"},
		},
		{
			name: "a relative next page that repeats",
			setup: func(p *pager, base string) {
				next := "/things?before_id=t1"
				p.pages["/things"] = page(&next, "t1")
				p.pages["/things?before_id=t1"] = page(&next, "t0")
			},
			want: []string{"t1", "t0", "error"},
			reqs: []string{"/things", "/things?before_id=t1"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			p, srv := newPager(t)
			tt.setup(p, srv.URL)
			c := clientOf(t, srv)
			got, last := collectLoop(t, c, tt.opts)
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("sequence (-want +got):\n%s", diff)
			}
			if !errors.Is(last, acctapi.ErrPageLoop) {
				t.Errorf("last error = %v, want ErrPageLoop", last)
			}
			if diff := cmp.Diff(tt.reqs, p.requests()); diff != "" {
				t.Errorf("requests (-want +got):\n%s", diff)
			}
		})
	}
}

// TestAllEndsOnARepeatedCursor checks a server that answers every page
// with the same items and a next_page_uri that differs each time only in a
// parameter of its own: the cursor, before_id, does not advance.
func TestAllEndsOnARepeatedCursor(t *testing.T) {
	t.Parallel()
	p, srv := newPager(t)
	n := 0 // pages served; requests come one at a time
	for i := range maxItems + 2 {
		key := "/things"
		if i > 0 {
			key = fmt.Sprintf("/things?before_id=t1&n=%d", i)
		}
		p.pages[key] = func() any {
			n++
			next := fmt.Sprintf("%s/things?before_id=t1&n=%d", srv.URL, n)
			return page(&next, "t1")()
		}
	}
	c := clientOf(t, srv)
	got, last := collectLoop(t, c, nil)
	if diff := cmp.Diff([]string{"t1", "t1", "error"}, got); diff != "" {
		t.Errorf("sequence (-want +got):\n%s", diff)
	}
	if !errors.Is(last, acctapi.ErrPageLoop) {
		t.Errorf("last error = %v, want ErrPageLoop", last)
	}
}

// TestAllEndsAfterEmptyPages checks a server that answers every page with
// no items and a new cursor: the listing follows MaxEmptyPages of them in a
// row and ends with ErrPageLoop at the next, while a page with items
// between them starts the count again.
func TestAllEndsAfterEmptyPages(t *testing.T) {
	t.Parallel()
	for _, withItems := range []int{-1, rest.MaxEmptyPages / 2} {
		p, srv := newPager(t)
		pages := rest.MaxEmptyPages*2 + 4
		for i := range pages {
			key := "/things"
			if i > 0 {
				key = fmt.Sprintf("/things?before_id=c%03d", 999-i)
			}
			// Cursors go down, as ids do down a listing.
			next := fmt.Sprintf("%s/things?before_id=c%03d", srv.URL, 999-(i+1))
			if i == withItems {
				p.pages[key] = page(&next, "t1")
			} else {
				p.pages[key] = page(&next)
			}
		}
		got, last := collectLoop(t, clientOf(t, srv), nil)
		want, reqs := []string{"error"}, rest.MaxEmptyPages+1
		if withItems >= 0 {
			want, reqs = []string{"t1", "error"}, withItems+1+rest.MaxEmptyPages+1
		}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("item page %d: sequence (-want +got):\n%s", withItems, diff)
		}
		if !errors.Is(last, acctapi.ErrPageLoop) || !strings.Contains(last.Error(), "no items") {
			t.Errorf("item page %d: last error = %v, want ErrPageLoop saying the pages had no items", withItems, last)
		}
		if n := len(p.requests()); n != reqs {
			t.Errorf("item page %d: %d requests, want %d", withItems, n, reqs)
		}
	}
}

// collectLoop drains List over /things, recording item ids and "error",
// and fails the test if it yields more than maxItems items.
func collectLoop(t *testing.T, c *acctapi.Client, opts *acctapi.ListOptions) (got []string, last error) {
	t.Helper()
	var q rest.Querier
	if opts != nil {
		q = opts
	}
	for item, err := range rest.All[thing, thingList](t.Context(), c, rest.Path("things"), q) {
		if err != nil {
			got, last = append(got, "error"), err
			continue
		}
		got = append(got, item.ID)
		if len(got) > maxItems {
			t.Fatalf("the pager yielded over %d items: %v", maxItems, got[:10])
		}
	}
	return got, last
}

// TestPageLoopErrorIsShort pins a review's finding: ErrPageLoop's error
// quoted the whole next_page_uri, which a server chooses (8 MiB of it in
// the review). It is cut now. (The pages and cursors a listing has asked
// for are kept as hashes, 32 bytes each, whatever their length.)
func TestPageLoopErrorIsShort(t *testing.T) {
	t.Parallel()
	p, srv := newPager(t)
	long := strings.Repeat("x", 100_000)
	next := srv.URL + "/things?before_id=" + long
	p.pages["/things"] = page(&next, "t1")
	p.pages["/things?before_id="+long] = page(&next, "t0")
	_, last := collectLoop(t, clientOf(t, srv), nil)
	if !errors.Is(last, acctapi.ErrPageLoop) || len(last.Error()) > 1024 {
		t.Errorf("last error of %d bytes (%.120v…), want ErrPageLoop of at most 1 KiB", len(last.Error()), last)
	}
}

// TestAllRefusesAnotherPath checks that a next_page_uri naming another
// path than the list's, absolute or relative, ends the sequence with an
// error wrapping acctapi.ErrOtherPath, without requesting it: its page was
// decoded as the list's, and the listing ended early with no error (a
// review's /service_users naming /api_keys).
func TestAllRefusesAnotherPath(t *testing.T) {
	t.Parallel()
	for _, relative := range []bool{false, true} {
		p, srv := newPager(t)
		next := "/other?before_id=t2"
		if !relative {
			next = srv.URL + next
		}
		p.pages["/things"] = page(&next, "t3", "t2")
		p.pages["/other?before_id=t2"] = page(nil, "o1")
		got, last := collectLoop(t, clientOf(t, srv), nil)
		if diff := cmp.Diff([]string{"t3", "t2", "error"}, got); diff != "" {
			t.Errorf("relative %v: sequence (-want +got):\n%s", relative, diff)
		}
		if !errors.Is(last, acctapi.ErrOtherPath) {
			t.Errorf("relative %v: last error = %v, want ErrOtherPath", relative, last)
		}
		if diff := cmp.Diff([]string{"/things"}, p.requests()); diff != "" {
			t.Errorf("relative %v: requests (-want +got):\n%s", relative, diff)
		}
	}
}
