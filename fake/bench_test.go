package fake_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"runtime"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/acctapi/acctapi"
	"github.com/acctapi/acctapi/account"
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
