package fake_test

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/acctapi/acctapi"
	"github.com/acctapi/acctapi/account"
	"github.com/acctapi/acctapi/conformance"
	"github.com/acctapi/acctapi/fake"
)

// filterLists are the lists that take a filter; the first holds 1000 keys.
var filterLists = []string{"/api_keys", "/service_users", "/certificate_authorities", "/event_destinations", "/event_subscriptions", "/backends/tunnel_group"}

// slowestFilter is the slowest filter request this process has seen.
var slowestFilter struct {
	sync.Mutex
	d    time.Duration
	expr string
}

// FuzzFilter sends hostile filter expressions to lists, one of 1000 API
// keys: every answer must be 200 or 400 ERR_NGROK_250 with the contract's
// body. It asserts no wall-clock time: what a filter may cost is bounded
// in CEL cost units and checked by the filter's internal tests, and the
// time it takes is measured by the benchmarks. The slowest request
// is logged; with ACCTAPI_FUZZ_REPORT set to a directory, each fuzz worker
// writes the slowest input it saw there.
func FuzzFilter(f *testing.F) {
	for _, s := range []string{
		`true`,
		`obj.description == "key-1"`,
		`obj.description.startsWith("key-") && obj.metadata in ["a", "b"]`,
		`obj.created_at > time.now.subtract("7d") || obj.created_at < timestamp("2020-01-01T00:00:00Z")`,
		`obj.created_at.add("1d12h") > time.now`,
		`size(obj.metadata) > 3 && !(obj.owner_id == "")`,
		`obj.metadata == null`,
		`obj.description.matches("^(a+)+$")`,
		`[1,2,3].all(x, [1,2,3].all(y, [1,2,3].all(z, x + y + z > 0)))`,
		`[1,2,3,4,5,6,7,8,9,10].map(x, [1,2,3,4,5,6,7,8,9,10].map(y, [1,2,3,4,5,6,7,8,9,10].map(z, x*y*z))).size() > 0`,
		`(obj.description + obj.description + obj.description + obj.description).size() > 0`,
		`obj.id.contains("ak")`,
		`obj["id"] == ""`,
		`obj == obj`,
		`obj.nope`,
		`obj.description`,
		`1/0 == 1`,
		`obj.created_at.add("99999999d") > time.now`,
		`timestamp("not a time") > obj.created_at`,
		strings.Repeat("(", 40) + "true" + strings.Repeat(")", 40),
		strings.Repeat("!", 200) + "true",
		`"` + strings.Repeat("a", 5000) + `" == obj.description`,
		strings.Repeat(`obj.description == "x" || `, 150) + "false",
		`obj.metadata.matches("[\\pL\\pN]{1000}z")`,
		`[obj.id].exists(x, x.startsWith("ak_"))`,
		`obj.metadata in ["a", "b", obj.description] || obj.owner_id != null`,
		`obj.metadata.contains("` + strings.Repeat("m", 199) + `z") || size(obj.metadata) == 200`,
		`time.now.add("999999d") < time.now || timestamp("9999-12-31T23:59:59Z").add("1d") > time.now`,
	} {
		f.Add(s, uint8(0))
	}
	f.Add(`obj.name == "x"`, uint8(1))
	f.Add(`obj.subject_common_name.endsWith(".test")`, uint8(2))
	f.Add(`obj.id == "x"`, uint8(5))

	srv := fake.Start(f, fake.WithoutListener(), fake.WithClock(fake.NewManualClock(t0)), fake.WithIDSeed(3))
	for i := range 1000 {
		in := &account.APIKeyCreate{Description: fmt.Sprintf("key-%d", i), Metadata: []string{"a", "b", "", strings.Repeat("m", 200)}[i%4]}
		if _, err := fake.Seed[account.APIKey](srv, "", in); err != nil {
			f.Fatal(err)
		}
	}
	h := srv.Handler()
	report := os.Getenv("ACCTAPI_FUZZ_REPORT")
	f.Cleanup(func() {
		slowestFilter.Lock()
		defer slowestFilter.Unlock()
		f.Logf("slowest filter request: %v for %q", slowestFilter.d, fzTruncate(slowestFilter.expr, 200))
	})
	f.Fuzz(func(t *testing.T, expr string, list uint8) {
		path := filterLists[int(list)%len(filterLists)]
		target := path + "?limit=100&filter=" + url.QueryEscape(expr)
		req := httptest.NewRequest(http.MethodGet, target, nil)
		req.Header.Set("Authorization", "Bearer "+srv.APIKey())
		req.Header.Set("Service-Version", acctapi.APIVersion)
		rec := httptest.NewRecorder()
		start := time.Now()
		h.ServeHTTP(rec, req)
		d := time.Since(start) // logged, never asserted
		res := rec.Result()
		body, _ := io.ReadAll(res.Body)
		switch res.StatusCode {
		case http.StatusOK:
			var page struct {
				Keys []json.RawMessage `json:"keys"`
			}
			if json.Unmarshal(body, &page) != nil {
				t.Errorf("filter %q: 200 with body %s", expr, fzTruncate(string(body), 200))
			}
		case http.StatusBadRequest:
			e, err := conformance.CheckErrorBody(res.StatusCode, res.Header, body)
			if err != nil {
				t.Fatalf("filter %q: %v", expr, err)
			}
			if e.ErrorCode != acctapi.CodeBadFilter && e.ErrorCode != acctapi.CodeUnknownQueryParam {
				t.Fatalf("filter %q: 400 %s, want %s", expr, e.ErrorCode, acctapi.CodeBadFilter)
			}
		default:
			t.Fatalf("filter %q on %s: %d %s, want 200 or 400", expr, path, res.StatusCode, fzTruncate(string(body), 300))
		}
		slowestFilter.Lock()
		if d > slowestFilter.d {
			slowestFilter.d, slowestFilter.expr = d, expr
			if report != "" {
				_ = os.WriteFile(filepath.Join(report, fmt.Sprintf("slowest-filter-%d", os.Getpid())),
					fmt.Appendf(nil, "%v\t%s\t%q\n", d, path, expr), 0o644)
			}
		}
		slowestFilter.Unlock()
	})
}

func fzTruncate(s string, n int) string {
	if len(s) > n {
		return s[:n] + "…"
	}
	return s
}
