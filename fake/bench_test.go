package fake_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/acctapi/acctapi"
	"github.com/acctapi/acctapi/account"
	"github.com/acctapi/acctapi/backends"
	"github.com/acctapi/acctapi/fake"
)

// benchServer is an in-memory fake with n service users seeded.
func benchServer(b *testing.B, n int) (*fake.Server, *account.ServiceUsers) {
	b.Helper()
	srv, _ := start(b)
	for i := range n {
		if _, err := fake.Seed[account.ServiceUser](srv, "", &account.ServiceUserCreate{Name: fmt.Sprintf("user-%d", i)}); err != nil {
			b.Fatal(err)
		}
	}
	return srv, account.NewServiceUsers(srv.Client())
}

func BenchmarkCreateServiceUser(b *testing.B) {
	_, su := benchServer(b, 0)
	ctx := context.Background()
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		i++
		if _, err := su.Create(ctx, &account.ServiceUserCreate{Name: fmt.Sprintf("u%d", i)}); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkGetServiceUser(b *testing.B) {
	srv, su := benchServer(b, 1000)
	id := fake.List[account.ServiceUser](srv, "")[500].ID
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		if _, err := su.Get(ctx, id); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkPage100 fetches a page of 100 from the middle of a list of n:
// its cost must not grow with n.
func BenchmarkPage100(b *testing.B) {
	for _, n := range []int{1000, 100_000} {
		b.Run(fmt.Sprintf("stored=%d", n), func(b *testing.B) {
			srv, su := benchServer(b, n)
			before := fake.List[account.ServiceUser](srv, "")[n/2].ID
			ctx := context.Background()
			b.ReportAllocs()
			for b.Loop() {
				p, err := su.Page(ctx, &acctapi.FilterOptions{Limit: 100, BeforeID: before})
				if err != nil || len(p.ServiceUsers) != 100 {
					b.Fatalf("page: %v, %d items", err, len(p.ServiceUsers))
				}
			}
		})
	}
}

// BenchmarkFilter10k filters 10,000 API keys down to the one that matches.
func BenchmarkFilter10k(b *testing.B) {
	srv, _ := start(b)
	for i := range 10_000 {
		if _, err := fake.Seed[account.APIKey](srv, "", &account.APIKeyCreate{Description: fmt.Sprintf("key-%d", i)}); err != nil {
			b.Fatal(err)
		}
	}
	keys := account.NewAPIKeys(srv.Client())
	ctx := context.Background()
	opts := &acctapi.FilterOptions{Filter: `obj.description == "key-4242" && obj.created_at >= timestamp("2020-01-01T00:00:00Z")`}
	b.ReportAllocs()
	for b.Loop() {
		p, err := keys.Page(ctx, opts)
		if err != nil || len(p.Keys) != 1 {
			b.Fatalf("page: %v", err)
		}
	}
}

// BenchmarkHeapPerServiceUser reports the heap held per stored service
// user (bytes/user), seeding 10,000.
func BenchmarkHeapPerServiceUser(b *testing.B) {
	const n = 10_000
	for b.Loop() {
		srv, _ := start(b)
		var before, after runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&before)
		for i := range n {
			if _, err := fake.Seed[account.ServiceUser](srv, "", &account.ServiceUserCreate{Name: fmt.Sprintf("user-%05d", i)}); err != nil {
				b.Fatal(err)
			}
		}
		runtime.GC()
		runtime.ReadMemStats(&after)
		b.ReportMetric(float64(after.HeapAlloc-before.HeapAlloc)/n, "bytes/user")
		runtime.KeepAlive(srv)
	}
}

// BenchmarkMixedTCP runs a mixed workload (create, get, list a page,
// update) from 8 concurrent clients over loopback TCP.
func BenchmarkMixedTCP(b *testing.B) {
	srv := fake.Start(b)
	su := account.NewServiceUsers(srv.Client())
	ctx := context.Background()
	seed, err := su.Create(ctx, &account.ServiceUserCreate{Name: "seed"})
	if err != nil {
		b.Fatal(err)
	}
	var n atomic.Int64
	b.ReportAllocs()
	b.SetParallelism(4) // 4 × GOMAXPROCS(2) = 8 clients
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			i := n.Add(1)
			var err error
			switch i % 4 {
			case 0:
				_, err = su.Create(ctx, &account.ServiceUserCreate{Name: fmt.Sprintf("m%d", i)})
			case 1:
				_, err = su.Get(ctx, seed.ID)
			case 2:
				_, err = su.Page(ctx, &acctapi.FilterOptions{Limit: 20})
			case 3:
				name := fmt.Sprintf("seed-%d", i)
				_, err = su.Update(ctx, &account.ServiceUserUpdate{ID: seed.ID, Name: &name})
			}
			if err != nil {
				b.Error(err)
				return
			}
		}
	})
}

// BenchmarkServer measures the fake alone: requests go straight to its
// in-memory RoundTripper, without the typed client and net/http's client.
func BenchmarkServer(b *testing.B) {
	srv, _ := benchServer(b, 1000)
	rt := srv.HTTPClient().Transport
	id := fake.List[account.ServiceUser](srv, "")[500].ID
	send := func(b *testing.B, method, path, body string) {
		req, _ := http.NewRequest(method, srv.URL+path, nil)
		req.Header = http.Header{"Authorization": {"Bearer " + srv.APIKey()}, "Service-Version": {"2"}}
		if body != "" {
			req.Body = io.NopCloser(strings.NewReader(body))
			req.Header.Set("Content-Type", "application/json")
		}
		resp, err := rt.RoundTrip(req)
		if err != nil || resp.StatusCode >= 300 {
			b.Fatalf("%s %s: %v %v", method, path, resp.StatusCode, err)
		}
	}
	i := 0 // names stay unique when the benchmark runs again
	b.Run("create", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			i++
			send(b, "POST", "/service_users", `{"name":"s`+strconv.Itoa(i)+`"}`)
		}
	})
	b.Run("get", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			send(b, "GET", "/service_users/"+id, "")
		}
	})
}

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
