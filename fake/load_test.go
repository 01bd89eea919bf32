package fake_test

import (
	"context"
	"fmt"
	"net/http"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/acctapi/acctapi"
	"github.com/acctapi/acctapi/account"
	"github.com/acctapi/acctapi/backends"
	"github.com/acctapi/acctapi/fake"
)

// loadClient is a client of a listening fake with enough idle connections
// for every worker, and retries off, so that each call is one request.
func loadClient(tb testing.TB, srv *fake.Server) *acctapi.Client {
	tb.Helper()
	tr := srv.HTTPClient().Transport.(*http.Transport).Clone()
	tr.MaxIdleConnsPerHost = 64
	c, err := acctapi.NewClient(srv.APIKey(), acctapi.WithBaseURL(srv.URL), acctapi.WithHTTPClient(&http.Client{Transport: tr}), acctapi.WithoutRetry())
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(tr.CloseIdleConnections)
	return c
}

// loadRun is the outcome of one load run.
type loadRun struct {
	sent      atomic.Int64
	mu        sync.Mutex
	latencies []time.Duration
	created   map[string]string // service user id → name, created and not deleted
	deleted   int
	contended map[string]bool // descriptions a PATCH of the contended backend answered with
	last      [4]string       // the last value each field writer wrote
}

func (r *loadRun) time(start time.Time) {
	d := time.Since(start)
	r.mu.Lock()
	r.latencies = append(r.latencies, d)
	r.mu.Unlock()
}

// runLoad runs workers goroutines of ops mixed operations each against
// srv: workers 0–3 each own one member of a shared backend and patch it in
// turn; the others create, read, list, patch a backend they all contend
// for, and delete.
func runLoad(tb testing.TB, srv *fake.Server, workers, ops int) *loadRun {
	tb.Helper()
	ctx := context.Background()
	c := loadClient(tb, srv)
	su := account.NewServiceUsers(c)
	keys := account.NewAPIKeys(c)
	hr := backends.NewHTTPResponses(c)
	shared, err := hr.Create(ctx, &backends.HTTPResponseCreate{StatusCode: 200, Description: "shared"})
	if err != nil {
		tb.Fatal(err)
	}
	contended, err := hr.Create(ctx, &backends.HTTPResponseCreate{StatusCode: 200, Description: "contended"})
	if err != nil {
		tb.Fatal(err)
	}
	srv.ClearJournal()
	run := &loadRun{created: map[string]string{}, contended: map[string]bool{}}
	errs := make(chan error, workers)
	var wg sync.WaitGroup
	for w := range workers {
		wg.Go(func() {
			fail := func(op string, err error) bool {
				if err != nil {
					errs <- fmt.Errorf("worker %d: %s: %w", w, op, err)
					return true
				}
				return false
			}
			do := func(op string, fn func() error) bool {
				run.sent.Add(1)
				start := time.Now()
				err := fn()
				run.time(start)
				return !fail(op, err)
			}
			var mine []string
			for i := range ops {
				val := fmt.Sprintf("w%d-%d", w, i)
				if w < 4 {
					// A field writer: no other writer touches its member,
					// so none of its updates may be lost.
					in := &backends.HTTPResponseUpdate{ID: shared.ID}
					switch w {
					case 0:
						in.Description = &val
					case 1:
						in.Metadata = &val
					case 2:
						in.Body = &val
					case 3:
						code := 200 + i%300
						in.StatusCode = &code
						val = fmt.Sprint(code)
					}
					if !do("patch shared", func() error { _, err := hr.Update(ctx, in); return err }) {
						return
					}
					run.mu.Lock()
					run.last[w] = val
					run.mu.Unlock()
					continue
				}
				var ok bool
				switch i % 6 {
				case 0, 3:
					ok = do("create service user", func() error {
						u, err := su.Create(ctx, &account.ServiceUserCreate{Name: val})
						if err == nil {
							mine = append(mine, u.ID)
							run.mu.Lock()
							run.created[u.ID] = val
							run.mu.Unlock()
						}
						return err
					})
				case 1:
					ok = len(mine) == 0 || do("get service user", func() error { _, err := su.Get(ctx, mine[len(mine)-1]); return err })
				case 2:
					ok = do("list", func() error { _, err := su.Page(ctx, &acctapi.FilterOptions{Limit: 10}); return err })
				case 4:
					ok = do("patch contended", func() error {
						v, err := hr.Update(ctx, &backends.HTTPResponseUpdate{ID: contended.ID, Description: &val})
						if err == nil {
							run.mu.Lock()
							run.contended[v.Description] = true
							run.mu.Unlock()
						}
						return err
					})
				case 5:
					if i%12 == 5 && len(mine) > 0 {
						id := mine[0]
						ok = do("delete service user", func() error { return su.Delete(ctx, id) })
						if ok {
							mine = mine[1:]
							run.mu.Lock()
							delete(run.created, id)
							run.deleted++
							run.mu.Unlock()
						}
					} else {
						ok = do("filtered key list", func() error {
							_, err := keys.Page(ctx, &acctapi.FilterOptions{Filter: `obj.description == "none"`, Limit: 5})
							return err
						})
					}
				}
				if !ok {
					return
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		tb.Error(err)
	}
	if tb.Failed() {
		tb.FailNow()
	}

	// No lost update: each field holds its writer's last value.
	got := fake.List[backends.HTTPResponse](srv, "")
	var sh, co backends.HTTPResponse
	for _, v := range got {
		switch v.ID {
		case shared.ID:
			sh = v
		case contended.ID:
			co = v
		}
	}
	if want := run.last; sh.Description != want[0] || sh.Metadata != want[1] || sh.Body != want[2] || fmt.Sprint(sh.StatusCode) != want[3] {
		tb.Errorf("shared backend %+v, want description %q, metadata %q, body %q, status %s (each writer's last)", sh, want[0], want[1], want[2], want[3])
	}
	if len(run.contended) > 0 && !run.contended[co.Description] {
		tb.Errorf("contended backend's description %q is none of the values written", co.Description)
	}
	// Counts: what the successful creates and deletes imply.
	users := fake.List[account.ServiceUser](srv, "")
	if len(users) != len(run.created) {
		tb.Errorf("%d service users stored, want %d (created and not deleted; %d deleted)", len(users), len(run.created), run.deleted)
	}
	for _, u := range users {
		if run.created[u.ID] != u.Name {
			tb.Errorf("stored service user %s %q, want %q", u.ID, u.Name, run.created[u.ID])
		}
	}
	// The journal is complete: one entry per request, none a 5xx, each
	// with its own operation id.
	j := srv.Journal()
	if int64(len(j)) != run.sent.Load() {
		tb.Errorf("journal has %d entries, %d requests were sent", len(j), run.sent.Load())
	}
	seenOps := map[string]bool{}
	for _, e := range j {
		if e.Status >= 500 || seenOps[e.OperationID] {
			tb.Errorf("journal entry %+v: a 5xx or a repeated operation id", e)
		}
		seenOps[e.OperationID] = true
	}
	return run
}

// percentile returns the p-th percentile of ds (sorted in place).
func percentile(ds []time.Duration, p float64) time.Duration {
	if len(ds) == 0 {
		return 0
	}
	slices.Sort(ds)
	return ds[min(len(ds)-1, int(float64(len(ds))*p))]
}

// TestLoad runs 16 workers of mixed operations against one fake over
// loopback TCP and checks that nothing was lost; run it with -race.
func TestLoad(t *testing.T) {
	srv := fake.Start(t)
	const workers, ops = 16, 150
	start := time.Now()
	run := runLoad(t, srv, workers, ops)
	elapsed := time.Since(start)
	n := len(run.latencies)
	t.Logf("%d requests from %d workers in %v: %.0f ops/s, p50 %v, p99 %v",
		n, workers, elapsed.Round(time.Millisecond), float64(n)/elapsed.Seconds(),
		percentile(run.latencies, 0.50), percentile(run.latencies, 0.99))
}

// BenchmarkLoad is TestLoad as a benchmark: each iteration is one request
// of the mix; it reports p99 latency besides the usual figures.
func BenchmarkLoad(b *testing.B) {
	srv := fake.Start(b)
	b.ReportAllocs()
	var run *loadRun
	start := time.Now()
	ops := max(1, b.N/16)
	run = runLoad(b, srv, 16, ops)
	elapsed := time.Since(start)
	b.ReportMetric(float64(len(run.latencies))/elapsed.Seconds(), "ops/s")
	b.ReportMetric(float64(percentile(run.latencies, 0.99).Microseconds()), "p99-µs")
}
