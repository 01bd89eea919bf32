package fake

import (
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/google/cel-go/common/types/ref"

	"github.com/acctapi/acctapi"
	"github.com/acctapi/acctapi/account"
)

// worstItems is how many items the worst-case filter requests look at.
const worstItems = 10_000

// maxSizeKeys are n API keys of the largest size validation allows: a
// 255-byte description and 4,096 bytes of metadata, all "a" so that
// substring searches for "a…ab" find a near match at every byte.
func maxSizeKeys(n int, now time.Time) []account.APIKey {
	keys := make([]account.APIKey, n)
	for i := range keys {
		keys[i] = account.APIKey{ID: "ak_" + strings.Repeat("a", 27), Description: strings.Repeat("a", acctapi.MaxDescriptionBytes),
			Metadata: strings.Repeat("a", acctapi.MaxMetadataBytes), CreatedAt: now, OwnerID: "usr_" + strings.Repeat("a", 27)}
	}
	return keys
}

// orChain joins copies of term with || up to the longest filter allowed;
// every copy is false on maxSizeKeys, so each item costs every term.
func orChain(term string) string {
	n := (maxFilterLen + 4) / (len(term) + 4)
	return strings.Repeat(term+" || ", n-1) + term
}

// worstFilters are the costliest filters we could build over
// maxSizeKeys: none matches, so a request looks at every item until its
// budget is spent.
func worstFilters() []struct{ name, expr string } {
	a := func(n int) string { return strings.Repeat("a", n) }
	return []struct{ name, expr string }{
		{"or-equal", orChain(`obj.description == "x"`)},
		{"or-contains-metadata", orChain(`obj.metadata.contains("b")`)},
		{"or-contains-60", orChain(`obj.metadata.contains("` + a(60) + `b")`)},
		{"contains-4000", `obj.metadata.contains("` + a(4000) + `b")`},
		{"or-startsWith-200", orChain(`obj.metadata.startsWith("` + a(200) + `b")`)},
		{"or-size", orChain(`size(obj.metadata) == 0`)},
		{"or-less", orChain(`obj.metadata < "` + a(100) + `"`)},
		{"in-list", `obj.metadata in [` + strings.Repeat(`"b",`, (maxFilterLen-30)/4) + `"b"]`},
		{"in-list-ints", `obj.created_at == timestamp("2000-01-01T00:00:00Z") || 1 in [` + strings.Repeat("2,", (maxFilterLen-80)/2) + `2]`},
		{"or-timestamp", orChain(`obj.created_at < timestamp("2000-01-01T00:00:00Z")`)},
		{"or-now-add", orChain(`obj.created_at > time.now.add("999d23h59m")`)},
		{"or-false", orChain(`false`)},
		{"or-not", orChain(`!true`)},
		{"or-null", orChain(`obj.owner_id == null`)},
		{"or-owner-contains", orChain(`obj.owner_id.contains("b")`)},
		{"or-id-equal", orChain(`obj.id == "b"`)},
	}
}

// BenchmarkFilterWorst measures one list request's filtering, over
// worstItems items of the largest size, for the worst filters we could
// build (each op is one request; evals/op is how many items it looked at
// before its cost budget ended it, units/op what its evaluations cost).
func BenchmarkFilterWorst(b *testing.B) {
	now := time.Date(2026, 11, 22, 0, 0, 0, 0, time.UTC)
	keys := maxSizeKeys(worstItems, now)
	for _, tt := range worstFilters() {
		b.Run(tt.name, func(b *testing.B) {
			f, err := compileFilter(tt.expr, keyFields)
			if err != nil {
				b.Fatal(err)
			}
			var cur account.APIKey
			obj := &objVal{field: func(name string) ref.Val { return keyField(cur, name) }}
			var evals int
			b.ReportAllocs()
			for b.Loop() {
				match := f.matcher(now)
				evals = 0
				for _, k := range keys {
					cur = k
					evals++
					if _, err := match(obj); err != nil {
						break
					}
				}
			}
			b.ReportMetric(float64(evals), "evals/op")
		})
	}
}

// BenchmarkFilterManyItems measures a request of each of cheapFilters
// over as many items of the largest size as its budget allows (evals/op):
// the per-evaluation charge (celguard.EvalCost) bounds a request's time
// however many items there are.
func BenchmarkFilterManyItems(b *testing.B) {
	now := time.Date(2026, 11, 22, 0, 0, 0, 0, time.UTC)
	obj := keyObj(maxSizeKeys(1, now)[0])
	for _, tt := range cheapFilters {
		b.Run(tt.name, func(b *testing.B) {
			f, err := compileFilter(tt.expr, keyFields)
			if err != nil {
				b.Fatal(err)
			}
			var evals int
			b.ReportAllocs()
			for b.Loop() {
				match := f.matcher(now)
				for evals = 1; evals < 10_000_000; evals++ {
					if _, err := match(obj); err != nil {
						break
					}
				}
			}
			b.ReportMetric(float64(evals), "evals/op")
		})
	}
}

// BenchmarkFilterWorstRequest sends each of the worst filters to a
// server holding worstItems API keys of the largest size: each op is one
// GET /api_keys request, refused with a 400 when its budget is spent
// (status/op is its status). Seeding takes a few seconds.
func BenchmarkFilterWorstRequest(b *testing.B) {
	srv := Start(b, WithoutListener())
	for range worstItems {
		in := &account.APIKeyCreate{Description: strings.Repeat("a", acctapi.MaxDescriptionBytes), Metadata: strings.Repeat("a", acctapi.MaxMetadataBytes)}
		if _, err := Seed[account.APIKey](srv, "", in); err != nil {
			b.Fatal(err)
		}
	}
	h := srv.Handler()
	for _, tt := range worstFilters() {
		b.Run(tt.name, func(b *testing.B) {
			target := "/api_keys?limit=100&filter=" + url.QueryEscape(tt.expr)
			var status int
			b.ReportAllocs()
			for b.Loop() {
				req := httptest.NewRequest(http.MethodGet, target, nil)
				req.Header.Set("Authorization", "Bearer "+srv.APIKey())
				req.Header.Set("Service-Version", acctapi.APIVersion)
				rec := httptest.NewRecorder()
				h.ServeHTTP(rec, req)
				status = rec.Code
			}
			b.ReportMetric(float64(status), "status/op")
		})
	}
}

// BenchmarkCompileFilterWorst measures compiling each of the worst
// filters: what a request with a filter not in the server's cache pays
// before looking at any item.
func BenchmarkCompileFilterWorst(b *testing.B) {
	for _, tt := range worstFilters() {
		b.Run(tt.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, err := compileFilter(tt.expr, keyFields); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
