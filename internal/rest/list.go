package rest

import (
	"context"
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"iter"
	"net/http"
	"net/url"
	"strings"

	"github.com/acctapi/acctapi"
	"github.com/acctapi/acctapi/internal/baseurl"
	"github.com/acctapi/acctapi/internal/clienthook"
	"github.com/acctapi/acctapi/internal/field"
	"github.com/acctapi/acctapi/internal/resources"
	"github.com/acctapi/acctapi/internal/trunc"
)

// Querier is implemented by *acctapi.ListOptions and
// *acctapi.FilterOptions.
type Querier interface {
	// Query returns the page's query parameters.
	Query() url.Values
	// Validate checks the options; [GetPage] runs it before sending unless
	// the client was built with acctapi.WithoutValidation.
	Validate() error
}

// Page is one page of a list response, as resource list types expose it.
type Page[T any] interface {
	// PageItems returns the page's items.
	PageItems() []T
	// NextPage returns the next page's absolute URL, or "" on the last page.
	NextPage() string
}

// GetPage fetches one page of the list at path into a new L, after
// validating opts unless the client skips validation.
func GetPage[L any](ctx context.Context, c *acctapi.Client, path string, opts Querier) (*L, error) {
	var q url.Values
	if opts != nil {
		if err := Validate(c, opts); err != nil {
			return nil, err
		}
		q = opts.Query()
		if err := checkCursor(c, path, q.Get("before_id")); err != nil {
			return nil, err
		}
	}
	// The page is read raw, and its items counted, before it is decoded:
	// an item may decode into a hundred times its bytes ("{}" into a
	// zeroed struct), and the API serves at most the limit asked for.
	var raw json.RawMessage
	if err := c.Do(ctx, http.MethodGet, path, q, nil, &raw); err != nil {
		return nil, err
	}
	// The limit asked for: the options', or a next page's own query's.
	lq := q
	if lq == nil {
		if _, query, ok := strings.Cut(path, "?"); ok {
			lq, _ = url.ParseQuery(query) // the pairs that parse
		}
	}
	where, _, _ := strings.Cut(path, "?")
	limit := acctapi.MaxLimit
	if n, err := field.ParseQueryInt(lq.Get("limit")); err == nil && n > 0 {
		limit = n // above MaxLimit only without validation
	}
	if name, ok := overLimit(raw, limit); !ok {
		return nil, fmt.Errorf("%w: GET %s: %s holds more than %d", acctapi.ErrPageTooLong, trunc.String(where, 200), trunc.String(name, 64), limit)
	}
	out := new(L)
	if raw != nil { // nil: a 204, which answered reports
		if err := json.Unmarshal(raw, out); err != nil {
			return nil, fmt.Errorf("acctapi: decode GET %s response: %w", trunc.String(where, 200), err)
		}
	}
	if err := answered(http.MethodGet, path, out); err != nil {
		return nil, err
	}
	return out, nil
}

// overLimit reports whether raw, a page, is within limit, at least 1: ok
// is false, with the member's name as written, when a member of the
// page's object is an array of more than limit elements (a page's items
// are its one array member). It scans raw's bytes, which Do has found to
// be valid JSON, without decoding or allocating: it counts the commas
// between an array's elements. Anything but an object is ok, for decoding
// to judge.
func overLimit(raw []byte, limit int) (name string, ok bool) {
	depth := 0
	inString, escaped := false, false
	keyStart, key := -1, []byte(nil) // the object's member being read
	array, commas := false, 0        // in an array member, and its commas
	for i, c := range raw {
		if inString {
			switch {
			case escaped:
				escaped = false
			case c == '\\':
				escaped = true
			case c == '"':
				inString = false
				if keyStart >= 0 {
					key, keyStart = raw[keyStart:i], -1
				}
			}
			continue
		}
		switch c {
		case ' ', '\t', '\r', '\n':
		case '"':
			inString = true
			if depth == 1 && key == nil {
				keyStart = i + 1
			}
		case '{', '[':
			if depth == 0 && c != '{' {
				return "", true
			}
			if depth == 1 && c == '[' {
				array, commas = true, 0
			}
			depth++
		case '}', ']':
			depth--
			if depth == 1 {
				array = false
			}
		case ',':
			switch {
			case depth == 1:
				key = nil // the next member's name follows
			case depth == 2 && array:
				if commas++; commas >= limit {
					return string(key), false // at least limit+1 elements
				}
			}
		default:
			if depth == 0 {
				return "", true // not an object
			}
		}
	}
	return "", true
}

// checkCursor refuses, unless the client skips validation, a before_id
// that is plainly another collection's id: the server takes any before_id
// (contract §3), so ServiceUsers.Page with an API key's id answered an
// empty page, with no error (a misuse review). Only a collection's own
// list is checked, not a sub-resource's (an operator's bound endpoints),
// whose path Do checks.
func checkCursor(c *acctapi.Client, path, before string) error {
	if _, ok := resources.Collection(path); !ok || before == "" || !clienthook.Validates(c) {
		return nil
	}
	if _, id, owner, prefix, foreign := resources.ForeignItem(path + "/" + url.PathEscape(before)); foreign {
		return field.Invalid("before_id", "%q is an id of %s, not of %s, whose ids start %s_", trunc.String(id, 64), owner, strings.TrimPrefix(path, "/"), prefix)
	}
	return nil
}

// All returns every item of the list at path, newest first, fetching pages as
// the loop asks for them. It starts with opts and then follows each page's
// next_page_uri exactly as the server gave it, until one is null. A page
// with no items that names a next page is followed too (by the contract a
// next page means a further item exists), but at most MaxEmptyPages of
// them in a row. The API key is never
// sent anywhere but the base URL's origin: when next_page_uri names another
// origin (a server's configured public URL, say, or a proxy's name for it),
// All requests path with next_page_uri's query on the base URL instead, the
// next page being the same path by the API's contract. An error ends the
// sequence after it is yielded.
//
// A server that does not advance ends the sequence with an error wrapping
// acctapi.ErrPageLoop, rather than a loop without end: a next_page_uri that
// names a page already fetched (the same path and query, whatever the
// query's order), or that asks for items before an id already asked for
// (whatever else its query says), or before an id not below the last one
// asked for (the contract's ids sort by when they were made, a list is
// newest first, so a listing's cursors go down; ids are compared only
// when they have one prefix and one length).
// So does a server that sends more than MaxEmptyPages pages in a row with
// no items and a next_page_uri. A next_page_uri whose path does not end
// with the list's (another list's page, which would be decoded as this
// one's) ends it with an error wrapping acctapi.ErrOtherPath. (A server
// that makes up a new cursor for every page, each with items and lower
// than the last, or pages by another parameter than before_id, cannot be
// told from a long list; the caller's break or context ends that.)
//
// L is the list response type (such as account.ServiceUserList); *L must
// implement [Page].
func All[T any, L any, PL interface {
	*L
	Page[T]
}](ctx context.Context, c *acctapi.Client, path string, opts Querier) iter.Seq2[T, error] {
	return func(yield func(T, error) bool) {
		var zero T
		page, err := GetPage[L](ctx, c, path, opts)
		var (
			base   *url.URL                   // parsed when a page has a next page
			visits map[[sha256.Size]byte]bool // hashes of the pages and cursors asked for
			empty  int                        // pages in a row with no items
			cursor string                     // the last before_id asked for
		)
		if opts != nil {
			cursor = opts.Query().Get("before_id")
		}
		for {
			if err != nil {
				yield(zero, err)
				return
			}
			items := PL(page).PageItems()
			for _, item := range items {
				if !yield(item, nil) {
					return
				}
			}
			next := PL(page).NextPage()
			if next == "" {
				return
			}
			if empty = empty + 1; len(items) > 0 {
				empty = 0
			}
			if empty > MaxEmptyPages {
				yield(zero, fmt.Errorf("acctapi: list %s: %d pages in a row with no items, the last naming next_page_uri %q: %w",
					path, empty, trunc.String(next, 200), acctapi.ErrPageLoop))
				return
			}
			if base == nil {
				base, _ = url.Parse(c.BaseURL()) // NewClient checked it
				visits = map[[sha256.Size]byte]bool{}
				var q url.Values
				if opts != nil {
					q = opts.Query()
				}
				visit(visits, base, path+"?"+q.Encode())
			}
			nextPath := onBase(base, path, next)
			if !samePath(path, nextPath) {
				// Its items would be decoded as this list's, and the
				// listing would end early with no error (a review's
				// /service_users page naming /api_keys).
				yield(zero, fmt.Errorf("acctapi: list %s: next_page_uri %q names another path; the API's next page is the same path: %w",
					path, trunc.String(next, 200), acctapi.ErrOtherPath))
				return
			}
			if !visit(visits, base, nextPath) {
				yield(zero, fmt.Errorf("acctapi: list %s: next_page_uri %q: %w", path, trunc.String(next, 200), acctapi.ErrPageLoop))
				return
			}
			if b := beforeID(nextPath); sortable(b, cursor) && b >= cursor {
				yield(zero, fmt.Errorf("acctapi: list %s: next_page_uri %q asks for items before %q, not below the last cursor %q (ids go down a listing): %w",
					path, trunc.String(next, 200), trunc.String(b, 64), trunc.String(cursor, 64), acctapi.ErrPageLoop))
				return
			} else if b != "" {
				cursor = b
			}
			page, err = GetPage[L](ctx, c, nextPath, nil)
		}
	}
}

// beforeID returns the before_id of p, a path and query, or "".
func beforeID(p string) string {
	_, q, _ := strings.Cut(p, "?")
	v, _ := url.ParseQuery(q) // the pairs that parse, whatever else does not
	return v.Get("before_id")
}

// sortable reports whether ids a and b sort as the API's ids do, by their
// text: both of one prefix and one length (the contract's ids are a
// prefix and 27 base-62 characters; "9" and "10" of another server would
// not compare so).
func sortable(a, b string) bool {
	pa, _, oka := strings.Cut(a, "_")
	pb, _, okb := strings.Cut(b, "_")
	return a != "" && b != "" && len(a) == len(b) && oka && okb && pa == pb
}

// MaxEmptyPages is how many pages in a row with no items but a next page
// [All] follows before it ends the listing with acctapi.ErrPageLoop. The
// fake never sends such a page (a page holds at least one item, or names
// no next page); a server that does is followed a little way, so that no
// item past an empty page is silently lost, but not without end.
const MaxEmptyPages = 16

// visit records the page at p (a path on base or an absolute URL) and its
// before_id cursor in visits, and reports whether neither was there before.
// A page is keyed by its path below base and its query in a canonical
// order; a cursor by its value alone, since within one listing the server
// has no reason to ask for items before the same id twice. Each is kept as
// its SHA-256, 32 bytes whatever the server's uris (a review found
// cursors of 2 MiB kept whole, 234 MiB after 59 pages).
func visit(visits map[[sha256.Size]byte]bool, base *url.URL, p string) bool {
	u, err := url.Parse(p)
	if err != nil {
		return true // Do reports it
	}
	path := u.EscapedPath()
	if !u.IsAbs() {
		path = base.EscapedPath() + path
	}
	q := u.Query()
	page := sha256.Sum256([]byte("page " + path + "?" + q.Encode()))
	before := q.Get("before_id")
	cursor := sha256.Sum256([]byte("before_id " + before))
	if visits[page] || (before != "" && visits[cursor]) {
		return false
	}
	visits[page] = true
	if before != "" {
		visits[cursor] = true
	}
	return true
}

// samePath reports whether nextPath, a next page as onBase returns it,
// names the list at path: its path ends with path's, as the API's (the
// same path) does, and as one behind a proxy that mounts the API under a
// prefix of its own does (/elsewhere/things for /things), which All
// follows as it is. One that does not parse is Do's to report.
func samePath(path, nextPath string) bool {
	u, err := url.Parse(nextPath)
	if err != nil {
		return true
	}
	p, err := url.Parse(path)
	if err != nil {
		return true
	}
	return strings.HasSuffix(u.EscapedPath(), p.EscapedPath())
}

// onBase returns next, a next_page_uri, when it is relative or on base's
// origin, and otherwise path with next's query, to be requested on the base
// URL.
func onBase(base *url.URL, path, next string) string {
	if !baseurl.IsAbsolute(next) {
		return next
	}
	u, err := url.Parse(next)
	if err != nil || (u.Scheme == base.Scheme && strings.EqualFold(u.Host, base.Host) && u.User == nil) {
		return next // Do reports a URL that does not parse
	}
	if u.RawQuery == "" {
		return path
	}
	return path + "?" + u.RawQuery
}
