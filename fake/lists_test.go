package fake_test

import (
	"fmt"
	"net/url"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/acctapi/acctapi"
	"github.com/acctapi/acctapi/account"
	"github.com/acctapi/acctapi/backends"
	"github.com/acctapi/acctapi/fake"
	"github.com/google/go-cmp/cmp"
)

// page is a decoded service-user list page.
type svcPage struct {
	ServiceUsers []account.ServiceUser `json:"service_users"`
	URI          string                `json:"uri"`
	NextPageURI  *string               `json:"next_page_uri"`
}

// pathOf strips the server's base URL from an absolute URL.
func pathOf(t *testing.T, srv *fake.Server, abs string) string {
	t.Helper()
	p, ok := strings.CutPrefix(abs, srv.URL)
	if !ok {
		t.Fatalf("%q is not an absolute URL of the server %s", abs, srv.URL)
	}
	return p
}

// TestPagination follows next_page_uri through lists of several sizes and
// checks order, page sizes, uri and next_page_uri, which is null exactly on
// the last page.
func TestPagination(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name      string
		n         int
		query     string // of the first request
		wantSizes []int
		wantLimit string // in next_page_uri
	}{
		{"empty", 0, "", []int{0}, ""},
		{"one", 1, "?limit=1", []int{1}, ""},
		{"exact multiple of the limit", 9, "?limit=3", []int{3, 3, 3}, "3"},
		{"remainder", 10, "?limit=3", []int{3, 3, 3, 1}, "3"},
		{"limit 100 is allowed", 5, "?limit=100", []int{5}, ""},
		{"default limit is 100", 101, "", []int{100, 1}, "100"},
		{"exactly the default limit", 100, "", []int{100}, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			srv, clk := start(t)
			var want []string // newest first
			for i := range tt.n {
				if i%7 == 0 {
					clk.Advance(time.Second) // several ids per second, and several seconds
				}
				u := must(fake.Seed[account.ServiceUser](srv, "", &account.ServiceUserCreate{Name: fmt.Sprint("u", i)}))(t)
				want = append([]string{u.ID}, want...)
			}
			var got []string
			var sizes []int
			path := "/service_users" + tt.query
			for {
				var p svcPage
				raw(t, srv, "GET", path, nil, "").decode(t, &p)
				if p.URI != srv.URL+"/service_users" {
					t.Errorf("uri = %q, want the list's absolute URL without query", p.URI)
				}
				sizes = append(sizes, len(p.ServiceUsers))
				got = append(got, idsOf(p.ServiceUsers, func(u account.ServiceUser) string { return u.ID })...)
				if p.NextPageURI == nil {
					break
				}
				next := must(url.Parse(*p.NextPageURI))(t)
				q := next.Query()
				if wantQ := (url.Values{"before_id": {got[len(got)-1]}, "limit": {tt.wantLimit}}); !cmp.Equal(wantQ, q) {
					t.Errorf("next_page_uri query %v, want %v", q, wantQ)
				}
				if len(sizes) > 10 {
					t.Fatal("too many pages")
				}
				path = pathOf(t, srv, *p.NextPageURI)
			}
			if diff := cmp.Diff(tt.wantSizes, sizes); diff != "" {
				t.Errorf("page sizes (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(want, got, cmpEmpty); diff != "" {
				t.Errorf("ids (-want +got):\n%s", diff)
			}
			if !slices.IsSortedFunc(got, func(a, b string) int { return strings.Compare(b, a) }) {
				t.Errorf("ids are not newest (largest) first: %v", got)
			}
			// The typed client follows the same pages.
			all := collect(t, account.NewServiceUsers(srv.Client()).List(t.Context(), &acctapi.FilterOptions{Limit: 3}))
			if diff := cmp.Diff(want, idsOf(all, func(u account.ServiceUser) string { return u.ID }), cmpEmpty); diff != "" {
				t.Errorf("client List ids (-want +got):\n%s", diff)
			}
		})
	}
}

// cmpEmpty makes nil and empty slices equal.
var cmpEmpty = cmp.Comparer(func(a, b []string) bool { return slices.Equal(a, b) })

// TestBeforeID checks that before_id need not be an existing id.
func TestBeforeID(t *testing.T) {
	t.Parallel()
	srv, _ := start(t)
	var ids []string // newest first
	for i := range 5 {
		u := must(fake.Seed[account.ServiceUser](srv, "", &account.ServiceUserCreate{Name: fmt.Sprint("u", i)}))(t)
		ids = append([]string{u.ID}, ids...)
	}
	tests := []struct {
		name, before string
		want         []string
	}{
		{"existing id", ids[1], ids[2:]},
		{"between two ids", ids[2] + "z", ids[2:]},
		{"after every id", "service_zzzzzzzzzzzzzzzzzzzzzzzzzzz", ids[1:]},
		{"before every id", "service_0", nil},
		{"another kind's prefix", "a", nil},
		{"deleted id", ids[0], ids[1:]},
	}
	must(0, account.NewServiceUsers(srv.Client()).Delete(t.Context(), ids[0]))(t)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var p svcPage
			r := raw(t, srv, "GET", "/service_users?before_id="+url.QueryEscape(tt.before), nil, "")
			if r.status != 200 {
				t.Fatalf("status %d: %s", r.status, r.body)
			}
			r.decode(t, &p)
			if diff := cmp.Diff(tt.want, idsOf(p.ServiceUsers, func(u account.ServiceUser) string { return u.ID }), cmpEmpty); diff != "" {
				t.Errorf("ids (-want +got):\n%s", diff)
			}
			if p.NextPageURI != nil {
				t.Errorf("next_page_uri = %q, want null", *p.NextPageURI)
			}
		})
	}
}

// TestAPIKeyFilters runs CEL filters on /api_keys, with time read from the
// manual clock.
func TestAPIKeyFilters(t *testing.T) {
	t.Parallel()
	srv, clk := start(t)
	ctx := t.Context()
	su := must(fake.Seed[account.ServiceUser](srv, "", &account.ServiceUserCreate{Name: "bot"}))(t)
	user := srv.Accounts()[0].UserID
	seed := func(desc, meta, owner string) {
		t.Helper()
		must(fake.Seed[account.APIKey](srv, "", &account.APIKeyCreate{Description: desc, Metadata: meta, OwnerID: owner}))(t)
	}
	// The account's initial key: description "", created at t0.
	seed("ci-old", `{"env":"ci"}`, "")
	clk.Advance(10 * 24 * time.Hour) // 2026-11-11T12:00:00Z
	seed("ci-new", "", su.ID)
	seed("prod", `{"env":"prod"}`, "")
	clk.Advance(time.Hour) // now: 2026-11-11T13:00:00Z

	tests := []struct {
		name, filter string
		want         []string // descriptions, newest first
	}{
		{"startsWith", `obj.description.startsWith("ci-")`, []string{"ci-new", "ci-old"}},
		{"endsWith", `obj.description.endsWith("new")`, []string{"ci-new"}},
		{"contains on metadata", `obj.metadata.contains("prod")`, []string{"prod"}},
		{"empty description", `obj.description == ""`, []string{""}},
		{"not empty", `!(obj.description == "")`, []string{"prod", "ci-new", "ci-old"}},
		{"in a list", `obj.description in ["prod", "ci-old", "nope"]`, []string{"prod", "ci-old"}},
		{"owner in a list", `obj.owner_id in ["` + su.ID + `"]`, []string{"ci-new"}},
		{"owner", `obj.owner_id == "` + user + `" && obj.description != ""`, []string{"prod", "ci-old"}},
		{"created after a timestamp", `obj.created_at > timestamp("2026-11-05T00:00:00Z")`, []string{"prod", "ci-new"}},
		{"created at t0", `obj.created_at == timestamp("2026-11-01T12:00:00Z")`, []string{"ci-old", ""}},
		{"last 7 days", `obj.created_at > time.now.subtract("7d")`, []string{"prod", "ci-new"}},
		{"last 7 days, as the real service writes it", `obj.created_at > timestamp(time.now).subtract("7d")`, []string{"prod", "ci-new"}},
		{"older than 7 days", `obj.created_at <= time.now.subtract("7d")`, []string{"ci-old", ""}},
		{"add", `obj.created_at.add("10d1h") == time.now`, []string{"ci-old", ""}},
		{"size", `size(obj.description) > 4 || obj.metadata == "x"`, []string{"ci-new", "ci-old"}},
		{"id equality", `obj.id == "ak_nope"`, nil},
		{"or and parentheses", `(obj.description == "prod" || obj.description == "ci-new") && obj.metadata != ""`, []string{"prod"}},
		{"null test", `obj.owner_id != null && obj.description.startsWith("ci")`, []string{"ci-new", "ci-old"}},
	}
	keys := account.NewAPIKeys(srv.Client())
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got := collect(t, keys.List(ctx, &acctapi.FilterOptions{Filter: tt.filter, Limit: 1}))
			descs := idsOf(got, func(k account.APIKey) string { return k.Description })
			if diff := cmp.Diff(tt.want, descs, cmpEmpty); diff != "" {
				t.Errorf("filter %s (-want +got):\n%s", tt.filter, diff)
			}
		})
	}

	// next_page_uri carries the filter, and the last matching item ends the
	// list even when unmatched items follow it.
	const f = `obj.description.startsWith("ci-")`
	p := must(keys.Page(ctx, &acctapi.FilterOptions{Filter: f, Limit: 1}))(t)
	if p.NextPageURI == nil {
		t.Fatal("first page of two: next_page_uri is null")
	}
	next := must(url.Parse(*p.NextPageURI))(t)
	if diff := cmp.Diff(url.Values{"before_id": {p.Keys[0].ID}, "limit": {"1"}, "filter": {f}}, next.Query()); diff != "" {
		t.Errorf("next_page_uri query (-want +got):\n%s", diff)
	}
	var last account.APIKeyList
	raw(t, srv, "GET", pathOf(t, srv, *p.NextPageURI), nil, "").decode(t, &last)
	if len(last.Keys) != 1 || last.Keys[0].Description != "ci-old" || last.NextPageURI != nil {
		t.Errorf("second page %+v, want ci-old and next_page_uri null", last)
	}
}

// TestFilterOtherLists checks filters on the service user list and that
// lists without a filter refuse one.
func TestFilterOtherLists(t *testing.T) {
	t.Parallel()
	srv, clk := start(t)
	a := must(fake.Seed[account.ServiceUser](srv, "", &account.ServiceUserCreate{Name: "a"}))(t)
	clk.Advance(time.Hour)
	b := must(fake.Seed[account.ServiceUser](srv, "", &account.ServiceUserCreate{Name: "b"}))(t)
	got := collect(t, account.NewServiceUsers(srv.Client()).List(t.Context(), &acctapi.FilterOptions{Filter: `obj.created_at > timestamp("2026-11-01T12:00:00Z")`}))
	if diff := cmp.Diff([]account.ServiceUser{b}, got); diff != "" {
		t.Errorf("filtered (-want +got):\n%s", diff)
	}
	got = collect(t, account.NewServiceUsers(srv.Client()).List(t.Context(), &acctapi.FilterOptions{Filter: `obj.id == "` + a.ID + `"`}))
	if diff := cmp.Diff([]account.ServiceUser{a}, got); diff != "" {
		t.Errorf("by id (-want +got):\n%s", diff)
	}
	for _, tt := range []struct {
		path string
		code string
	}{
		{"/service_users?filter=" + url.QueryEscape(`obj.name == "a"`), acctapi.CodeBadFilter}, // name is not filterable
		{"/backends/failover?filter=true", acctapi.CodeUnknownQueryParam},
		{"/backends/http_response?filter=true", acctapi.CodeUnknownQueryParam},
		{"/kubernetes_operators?filter=true", acctapi.CodeUnknownQueryParam},
		{"/api_keys?filter=" + url.QueryEscape(`obj.created_at > time.now.subtract("7w")`), acctapi.CodeBadFilter},
		{"/api_keys?filter=" + url.QueryEscape(`obj`), acctapi.CodeBadFilter},
		// An empty filter is not an expression: built from an unset value,
		// it had listed every item (a review's finding).
		{"/api_keys?filter=", acctapi.CodeBadFilter},
		{"/api_keys?filter", acctapi.CodeBadFilter},
		{"/service_users?limit=5&filter=", acctapi.CodeBadFilter},
	} {
		r := raw(t, srv, "GET", tt.path, nil, "")
		if r.status != 400 || r.apiErr(t).ErrorCode != tt.code {
			t.Errorf("GET %s: %d %s, want 400 %s", tt.path, r.status, r.body, tt.code)
		}
	}
}

func TestFilterIDSubstringAnywhere(t *testing.T) {
	t.Parallel()
	srv, _ := start(t)
	for _, f := range []string{`obj.id.startsWith("service_")`, `string(obj.id).startsWith("service_")`, `(obj.id + "").contains("x")`} {
		r := raw(t, srv, "GET", "/service_users?filter="+url.QueryEscape(f), nil, "")
		if r.status != 400 || r.apiErr(t).ErrorCode != acctapi.CodeBadFilter {
			t.Errorf("filter %s: status %d %s, want 400 %s", f, r.status, r.body, acctapi.CodeBadFilter)
		}
	}
}

// TestFilterLimits: a filter's length, nesting and cost are bounded, and
// every refusal is 400 ERR_NGROK_250. The cost row uses no macro (those
// are refused before any cost is counted): a chain of contains over the
// largest metadata, about 56,000 units an item, which the request's
// budget (2,500,000 tracked, as much again untracked; TestFilterRequestCost
// pins where it stops) refuses before it has looked at 100 items. The
// per-item limit (100,000) has no row: no filter of at most 4096 bytes
// costs that much on one item of the fake's bounded fields.
func TestFilterLimits(t *testing.T) {
	srv, _ := start(t)
	for i := range 100 {
		must(fake.Seed[account.APIKey](srv, "", &account.APIKeyCreate{Description: fmt.Sprintf("key-%d", i),
			Metadata: strings.Repeat("a", acctapi.MaxMetadataBytes)}))(t)
	}
	// As many terms as the longest filter holds, each false on every key,
	// so each key costs every term.
	term := `obj.metadata.contains("b")`
	costly := strings.Repeat(term+" || ", (4096+4)/(len(term)+4)-1) + term
	for _, tt := range []struct {
		name, filter string
		status       int
		msg          string // in the refusal's msg
	}{
		{"4096 bytes", `obj.description == "` + strings.Repeat("x", 4096-len(`obj.description == ""`)) + `"`, 200, ""},
		{"4097 bytes", `obj.description == "` + strings.Repeat("x", 4097-len(`obj.description == ""`)) + `"`, 400, "longer than 4096 bytes"},
		{"nesting", strings.Repeat("(", 64) + "true" + strings.Repeat(")", 64), 400, ""},
		{"macros are refused", `[1, 2].all(x, x > 0)`, 400, "all"},
		{"over the per-request cost", costly, 400, "too costly over this list's items"},
		{"cheap, over every item", `obj.description.endsWith("-49") && obj.created_at > timestamp("2000-01-01T00:00:00Z")`, 200, ""},
	} {
		t.Run(tt.name, func(t *testing.T) {
			got := raw(t, srv, "GET", "/api_keys?filter="+url.QueryEscape(tt.filter), nil, "")
			if got.status != tt.status {
				t.Fatalf("status %d %s, want %d", got.status, got.body, tt.status)
			}
			if got.status == 400 {
				if e := got.apiErr(t); e.ErrorCode != acctapi.CodeBadFilter || !strings.Contains(e.Msg, tt.msg) {
					t.Errorf("error %+v, want %s with %q", e, acctapi.CodeBadFilter, tt.msg)
				}
			}
		})
	}
	// The same filter over 40 such keys is within the budget: what the
	// row above hit is the request's budget, not a limit on one item.
	few, _ := start(t)
	for range 40 {
		must(fake.Seed[account.APIKey](few, "", &account.APIKeyCreate{Metadata: strings.Repeat("a", acctapi.MaxMetadataBytes)}))(t)
	}
	if got := raw(t, few, "GET", "/api_keys?filter="+url.QueryEscape(costly), nil, ""); got.status != 200 {
		t.Errorf("the costly filter over 40 keys: %d %s, want 200", got.status, got.body)
	}
}

// TestPageBytesBounded pins a review's finding: 100 HTTP response backends
// with bodies of almost 1 MiB made one list page of 105 MB, which the
// server held about three times over while answering and which a Client
// refused to read. A page now ends early, after at least one item, where
// the next item would take its items' JSON past fake.MaxPageBytes, and
// its next_page_uri continues: every item is listed once, in order, in
// both dialects.
func TestPageBytesBounded(t *testing.T) {
	t.Parallel()
	srv, _ := start(t)
	body := strings.Repeat("b", 1_000_000)
	var want []string // newest first
	for range 10 {
		b := must(fake.Seed[backends.HTTPResponse](srv, "", &backends.HTTPResponseCreate{StatusCode: 200, Body: body}))(t)
		want = append([]string{b.ID}, want...)
	}
	for _, version := range []string{"Service-Version", "Ngrok-Version"} {
		var got []string
		var sizes []int
		for path := "/backends/http_response?limit=100"; path != ""; {
			r := raw(t, srv, "GET", path, map[string]string{"Service-Version": "", version: "2"}, "")
			if r.status != 200 {
				t.Fatalf("%s: status %d: %.200s", path, r.status, r.body)
			}
			var p struct {
				Backends    []backends.HTTPResponse `json:"backends"`
				NextPageURI *string                 `json:"next_page_uri"`
			}
			r.decode(t, &p)
			sizes = append(sizes, len(r.body))
			if len(r.body) > fake.MaxPageBytes+4096 {
				t.Errorf("%s: a page of %d bytes; want at most MaxPageBytes (%d) and the page's own members", path, len(r.body), fake.MaxPageBytes)
			}
			got = append(got, idsOf(p.Backends, func(b backends.HTTPResponse) string { return b.ID })...)
			path = ""
			if p.NextPageURI != nil {
				path = pathOf(t, srv, *p.NextPageURI)
			}
		}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("%s: ids over every page (-want +got):\n%s", version, diff)
		}
		if len(sizes) != 2 {
			t.Errorf("%s: %d pages of %v bytes; want two (8 items of about 1 MB, then 2)", version, len(sizes), sizes)
		}
	}
	// The SDK lists them all with its default response limit.
	n := 0
	for _, err := range backends.NewHTTPResponses(srv.Client()).List(t.Context(), nil) {
		if err != nil {
			t.Fatal(err)
		}
		n++
	}
	if n != len(want) {
		t.Errorf("the SDK listed %d backends; want %d", n, len(want))
	}
}
