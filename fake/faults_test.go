package fake_test

import (
	"context"
	"errors"
	"io"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/google/go-cmp/cmp"

	"fmt"
	"slices"

	"github.com/acctapi/acctapi"
	"github.com/acctapi/acctapi/account"
	"github.com/acctapi/acctapi/fake"
)

// TestFailNext checks that FailNext answers the next n matching requests
// with the status and then lets requests through.
func TestFailNext(t *testing.T) {
	t.Parallel()
	srv, _ := start(t)
	ctx := t.Context()
	users := account.NewServiceUsers(srv.Client())
	srv.FailNext("POST", "/service_users", 2, http.StatusServiceUnavailable)
	srv.FailNext("GET", "/service_users/*", 1, http.StatusInternalServerError)

	steps := []struct {
		name   string
		call   func() error
		status int
		code   string
	}{
		{"GET a list: another pattern", func() error { _, err := users.Page(ctx, nil); return err }, 0, ""},
		{"first POST fails", func() error { _, err := users.Create(ctx, &account.ServiceUserCreate{Name: "a"}); return err }, 503, acctapi.CodeUnavailable},
		{"second POST fails", func() error { _, err := users.Create(ctx, &account.ServiceUserCreate{Name: "a"}); return err }, 503, acctapi.CodeUnavailable},
		{"third POST succeeds", func() error { _, err := users.Create(ctx, &account.ServiceUserCreate{Name: "a"}); return err }, 0, ""},
		{"GET by id fails once", func() error { _, err := users.Get(ctx, "service_any"); return err }, 500, acctapi.CodeInternal},
		{"then the server answers", func() error { _, err := users.Get(ctx, "service_any"); return err }, 404, acctapi.CodeNotFound},
	}
	for _, st := range steps {
		err := st.call()
		if st.status == 0 {
			if err != nil {
				t.Fatalf("%s: %v", st.name, err)
			}
			continue
		}
		wantAPIError(t, err, st.status, st.code)
	}
	// The faulted requests never reached the store: one service user.
	if n := len(fake.List[account.ServiceUser](srv, "")); n != 1 {
		t.Errorf("%d service users, want 1", n)
	}
	// An injected answer is journaled with its status and operation id.
	j := srv.Journal()
	if j[1].Status != 503 || j[1].OperationID == "" {
		t.Errorf("journal entry of a fault: %+v", j[1])
	}
}

// TestFailNextConcurrent checks that FailNext(n) answers exactly n
// requests when more than n reach it at once: requests held by an earlier
// reactor have all read the list of reactors before the fault removes
// itself, so only its count stops them.
func TestFailNextConcurrent(t *testing.T) {
	t.Parallel()
	const k = 8
	srv, _ := start(t)
	arrived, release := make(chan struct{}, k), make(chan struct{})
	srv.React("GET", "/service_users", func(*http.Request) *fake.Fault {
		arrived <- struct{}{}
		<-release
		return nil
	})
	srv.FailNext("GET", "/service_users", 1, http.StatusServiceUnavailable)
	users := account.NewServiceUsers(srv.Client()) // without retries
	errs := make(chan error, k)
	for range k {
		go func() {
			_, err := users.Page(t.Context(), nil)
			errs <- err
		}()
	}
	for range k {
		<-arrived
	}
	close(release)
	failed := 0
	for range k {
		if err := <-errs; err != nil {
			wantAPIError(t, err, http.StatusServiceUnavailable, acctapi.CodeUnavailable)
			failed++
		}
	}
	if failed != 1 {
		t.Errorf("%d of %d requests failed, want exactly 1", failed, k)
	}
}

// TestFaultBeforeAuthentication checks that reactors run before
// authentication: a request with a bad key still gets the fault.
func TestFaultBeforeAuthentication(t *testing.T) {
	t.Parallel()
	srv, _ := start(t)
	srv.FailNext("*", "/**", 1, http.StatusBadGateway)
	r := raw(t, srv, "GET", "/nowhere", map[string]string{"Authorization": "Bearer bad"}, "")
	if r.status != http.StatusBadGateway || r.apiErr(t).ErrorCode != acctapi.CodeInternal {
		t.Errorf("got %d %s, want 502 %s", r.status, r.body, acctapi.CodeInternal)
	}
}

// TestReact checks custom reactors: matching by method and pattern, the
// order in which they run, their removal, and ClearFaults.
func TestReact(t *testing.T) {
	t.Parallel()
	srv, _ := start(t)
	var seen atomic.Int64
	count := srv.React("", "/**", func(*http.Request) *fake.Fault { seen.Add(1); return nil })
	removeTeapot := srv.React("GET", "/service_users/*", func(r *http.Request) *fake.Fault {
		if r.Header.Get("X-Test") == "skip" {
			return nil
		}
		return &fake.Fault{Status: http.StatusTeapot, Code: "ERR_TEAPOT", Msg: "I'm a teapot.", Header: http.Header{"X-Fault": {"teapot"}}}
	})
	srv.React("GET", "/service_users/*", func(*http.Request) *fake.Fault { return &fake.Fault{Status: http.StatusConflict} })
	srv.React("DELETE", "/backends/**", func(*http.Request) *fake.Fault { return &fake.Fault{Status: http.StatusGone} })

	type answer struct {
		Status int
		Code   string
		Msg    string
		Header string
	}
	do := func(method, path string, hdr map[string]string) answer {
		t.Helper()
		r := raw(t, srv, method, path, hdr, "")
		a := answer{Status: r.status, Header: r.header.Get("X-Fault")}
		if r.status >= 400 {
			e := r.apiErr(t)
			a.Code, a.Msg = e.ErrorCode, e.Msg
		}
		return a
	}
	steps := []struct {
		name         string
		before       func()
		method, path string
		hdr          map[string]string
		want         answer
	}{
		{"first matching reactor answers", nil, "GET", "/service_users/service_x", nil,
			answer{418, "ERR_TEAPOT", "I'm a teapot.", "teapot"}},
		{"a reactor returning nil passes to the next", nil, "GET", "/service_users/service_x", map[string]string{"X-Test": "skip"},
			answer{409, acctapi.CodeInvalidValue, "Injected fault: Conflict.", ""}},
		{"method must match", nil, "DELETE", "/service_users/service_x", nil,
			answer{404, acctapi.CodeNotFound, `Resource "service_x" not found.`, ""}},
		{"pattern * is one segment", nil, "GET", "/service_users", nil, answer{Status: 200}},
		{"pattern /** matches deeper paths", nil, "DELETE", "/backends/failover/bkdfo_x", nil,
			answer{410, acctapi.CodeInvalidValue, "Injected fault: Gone.", ""}},
		{"removed reactor no longer answers", removeTeapot, "GET", "/service_users/service_x", nil,
			answer{409, acctapi.CodeInvalidValue, "Injected fault: Conflict.", ""}},
		{"removing twice is harmless", removeTeapot, "GET", "/service_users/service_x", nil,
			answer{409, acctapi.CodeInvalidValue, "Injected fault: Conflict.", ""}},
		{"ClearFaults removes every reactor", srv.ClearFaults, "DELETE", "/backends/failover/bkdfo_x", nil,
			answer{404, acctapi.CodeNotFound, `Resource "bkdfo_x" not found.`, ""}},
	}
	for _, st := range steps {
		if st.before != nil {
			st.before()
		}
		if diff := cmp.Diff(st.want, do(st.method, st.path, st.hdr)); diff != "" {
			t.Errorf("%s (-want +got):\n%s", st.name, diff)
		}
	}
	if got := seen.Load(); got != 7 {
		t.Errorf("counting reactor saw %d requests, want 7 (all before ClearFaults)", got)
	}
	count() // removing after ClearFaults is harmless
}

// TestRateLimitNext checks that the client's default retry policy waits
// for Retry-After and then succeeds. It runs in a synctest bubble with a
// server without a listener, so the waits take no real time.
func TestRateLimitNext(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		srv, _ := start(t)
		c := clientFor(t, srv, srv.APIKey(), acctapi.WithRetry(acctapi.DefaultRetryPolicy()))
		users := account.NewServiceUsers(c)
		srv.RateLimitNext("POST", "/service_users", 2, 1500*time.Millisecond)

		begin := time.Now()
		u, err := users.Create(t.Context(), &account.ServiceUserCreate{Name: "patient"})
		if err != nil {
			t.Fatal(err)
		}
		if waited := time.Since(begin); waited != 4*time.Second {
			t.Errorf("waited %v, want 2 × Retry-After of 2s (1.5s rounded up)", waited)
		}
		// 429 is retried for POST too, and the one create took effect once.
		if diff := cmp.Diff([]string{u.ID}, idsOf(fake.List[account.ServiceUser](srv, ""), func(u account.ServiceUser) string { return u.ID })); diff != "" {
			t.Errorf("service users (-want +got):\n%s", diff)
		}
		statuses := idsOf(srv.Journal(), func(e fake.Entry) string { return http.StatusText(e.Status) })
		if diff := cmp.Diff([]string{"Too Many Requests", "Too Many Requests", "Created"}, statuses); diff != "" {
			t.Errorf("journal statuses (-want +got):\n%s", diff)
		}

		// More 429s than the policy's attempts: the client gives up with
		// the rate-limit error and its Retry-After.
		srv.RateLimitNext("GET", "/service_users", 4, 3*time.Second)
		_, err = users.Page(t.Context(), nil)
		if d, ok := acctapi.IsRateLimited(err); !ok || d != 3*time.Second {
			t.Errorf("err = %v (retry after %v), want 429 with Retry-After 3s", err, d)
		}
		wantAPIError(t, err, http.StatusTooManyRequests, acctapi.CodeRateLimited)
	})
}

// TestDropNext checks that a dropped connection reaches the client as a
// transport error, that the client does not retry a POST (so no create is
// duplicated), and that it does retry a GET.
func TestDropNext(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		srv, _ := start(t)
		var posts atomic.Int64
		srv.React("POST", "/service_users", func(*http.Request) *fake.Fault { posts.Add(1); return nil })
		srv.DropNext("POST", "/service_users", 1)
		users := account.NewServiceUsers(clientFor(t, srv, srv.APIKey(), acctapi.WithRetry(acctapi.DefaultRetryPolicy())))

		_, err := users.Create(t.Context(), &account.ServiceUserCreate{Name: "once"})
		var apiErr *acctapi.Error
		if err == nil || errors.As(err, &apiErr) {
			t.Fatalf("err = %v, want a transport error", err)
		}
		if got := posts.Load(); got != 1 {
			t.Errorf("the client sent %d POSTs, want 1 (no retry)", got)
		}
		if n := len(fake.List[account.ServiceUser](srv, "")); n != 0 {
			t.Errorf("%d service users after a dropped create, want 0", n)
		}
		// Creating again, after the drop, makes exactly one.
		must(users.Create(t.Context(), &account.ServiceUserCreate{Name: "once"}))(t)
		if n := len(fake.List[account.ServiceUser](srv, "")); n != 1 {
			t.Errorf("%d service users, want exactly 1", n)
		}

		// GET is retried after a drop, and succeeds.
		srv.DropNext("GET", "/service_users", 2)
		page, err := users.Page(t.Context(), nil)
		if err != nil || len(page.ServiceUsers) != 1 {
			t.Errorf("GET after two drops: %v, %v", page, err)
		}
		// The journal holds every attempt, the dropped ones marked.
		type attempt struct {
			Method  string
			Status  int
			Dropped bool
		}
		var got []attempt
		for _, e := range srv.Journal() {
			got = append(got, attempt{e.Method, e.Status, e.Dropped})
		}
		want := []attempt{{"POST", 0, true}, {"POST", 201, false}, {"GET", 0, true}, {"GET", 0, true}, {"GET", 200, false}}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("journal (-want +got):\n%s", diff)
		}
	})
}

// misuseTB is a testing.TB that records Errorf instead of failing the
// test: the server of fake.Start reports a reactor's bug there.
type misuseTB struct {
	testing.TB
	mu   sync.Mutex
	errs []string
}

func (m *misuseTB) Errorf(format string, args ...any) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.errs = append(m.errs, fmt.Sprintf(format, args...))
}

// take returns the errors recorded since the last call.
func (m *misuseTB) take() []string {
	m.mu.Lock()
	defer m.mu.Unlock()
	errs := m.errs
	m.errs = nil
	return errs
}

// TestReactorMisbehaving checks that a reactor that panics, or returns a
// fault with a status that is not an answer, gets a 500 with the contract's
// body, fails the test of fake.Start's server (once, naming the request
// and the bug), and that the server goes on serving; and that reactors see
// the request's body.
func TestReactorMisbehaving(t *testing.T) {
	t.Parallel()
	tb := &misuseTB{TB: t}
	srv, _ := start(tb)
	remove := srv.React("GET", "/service_users", func(*http.Request) *fake.Fault { panic("reactor bug") })
	r := raw(t, srv, "GET", "/service_users", nil, "")
	if r.status != 500 || r.apiErr(t).ErrorCode != acctapi.CodeInternal || !strings.Contains(r.apiErr(t).Msg, "reactor bug") {
		t.Errorf("panicking reactor: %d %s", r.status, r.body)
	}
	if errs := tb.take(); len(errs) != 1 || !strings.Contains(errs[0], "GET /service_users: A reactor panicked: reactor bug") {
		t.Errorf("panicking reactor: the test was told %q; want one error naming the request and the panic", errs)
	}
	remove()
	for _, f := range []fake.Fault{{Status: 101}, {Status: 200}, {Drop: true, Status: 503}, {Msg: "no status"},
		{Status: 503, Header: http.Header{"Content-Length": {"3"}}}} {
		remove = srv.React("GET", "/service_users", func(*http.Request) *fake.Fault { return &f })
		want := fmt.Sprint(f.Validate())
		if r := raw(t, srv, "GET", "/service_users", nil, ""); r.status != 500 || !strings.Contains(r.apiErr(t).Msg, "A reactor returned an invalid fault: Fault.") {
			t.Errorf("reactor's fault %+v (%s): %d %s", f, want, r.status, r.body)
		}
		var fe *acctapi.FieldError
		if !errors.As(f.Validate(), &fe) {
			t.Fatalf("Validate of %+v: %v, want a FieldError", f, f.Validate())
		}
		if errs := tb.take(); len(errs) != 1 || !strings.Contains(errs[0], "GET /service_users: A reactor returned an invalid fault: Fault."+fe.Field+" ") {
			t.Errorf("reactor's fault %+v: the test was told %q; want one error naming Fault.%s", f, errs, fe.Field)
		}
		remove()
	}
	var fe *acctapi.FieldError
	if err := (fake.Fault{Status: 204}).Validate(); !errors.As(err, &fe) || fe.Field != "Status" {
		t.Errorf("Validate of status 204: %v, want a FieldError for Status", err)
	}
	if err := (fake.Fault{Status: 503, Delay: time.Second}).Validate(); err != nil {
		t.Errorf("Validate of a delayed 503: %v", err)
	}
	var seen string
	srv.React("POST", "/service_users", func(r *http.Request) *fake.Fault {
		b, _ := io.ReadAll(r.Body)
		seen = string(b)
		return nil
	})
	if r := raw(t, srv, "POST", "/service_users", nil, `{"name":"seen"}`); r.status != 201 {
		t.Errorf("create after the reactor read the body: %d %s", r.status, r.body)
	}
	if seen != `{"name":"seen"}` {
		t.Errorf("the reactor read %q", seen)
	}
	if r := raw(t, srv, "GET", "/service_users", nil, ""); r.status != 200 {
		t.Errorf("after misbehaving reactors: %d %s", r.status, r.body)
	}
}

// TestRateLimitNextZero checks that a zero wait still sends Retry-After: 1.
func TestRateLimitNextZero(t *testing.T) {
	t.Parallel()
	srv, _ := start(t)
	srv.RateLimitNext("GET", "/service_users", 1, 0)
	if r := raw(t, srv, "GET", "/service_users", nil, ""); r.status != 429 || r.header.Get("Retry-After") != "1" {
		t.Errorf("status %d Retry-After %q, want 429 and 1", r.status, r.header.Get("Retry-After"))
	}
}

// TestDropAfterNext checks that a request under DropAfter takes effect and
// is journaled with the answer the server computed, while its client sees
// a transport error; that the client's default policy sends such a POST or
// PATCH once and retries such a GET; and that a DropAfter fault drops
// whatever answer the request gets, an injected one included.
func TestDropAfterNext(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		srv, _ := start(t)
		users := account.NewServiceUsers(clientFor(t, srv, srv.APIKey(), acctapi.WithRetry(acctapi.DefaultRetryPolicy())))
		transportErr := func(what string, err error) {
			t.Helper()
			var apiErr *acctapi.Error
			if err == nil || errors.As(err, &apiErr) {
				t.Errorf("%s: err = %v, want a transport error", what, err)
			}
		}
		type line struct {
			Method, Path string
			Status       int
		}
		journal := func() []line {
			var out []line
			for _, e := range srv.Journal() {
				out = append(out, line{e.Method, e.Path, e.Status})
			}
			srv.ClearJournal()
			return out
		}

		srv.DropAfterNext("POST", "/service_users", 1)
		_, err := users.Create(t.Context(), &account.ServiceUserCreate{Name: "once"})
		transportErr("create", err)
		created := fake.List[account.ServiceUser](srv, "")
		if diff := cmp.Diff([]string{"once"}, idsOf(created, func(u account.ServiceUser) string { return u.Name })); diff != "" {
			t.Fatalf("service users after a create whose answer was dropped (-want +got):\n%s", diff)
		}
		if diff := cmp.Diff([]line{{"POST", "/service_users", http.StatusCreated}}, journal()); diff != "" {
			t.Errorf("journal (-want +got):\n%s", diff)
		}
		if e := srv.Journal(); len(e) != 0 {
			t.Errorf("ClearJournal left %d entries", len(e))
		}
		// The create happened: making it again finds the name taken.
		_, err = users.Create(t.Context(), &account.ServiceUserCreate{Name: "once"})
		wantAPIError(t, err, http.StatusConflict, acctapi.CodeNameTaken)
		journal()

		id := created[0].ID
		srv.DropAfterNext("PATCH", "/service_users/*", 1)
		_, err = users.Update(t.Context(), &account.ServiceUserUpdate{ID: id, Name: ptr("renamed")})
		transportErr("update", err)
		if got, _ := fake.Get[account.ServiceUser](srv, "", id); got.Name != "renamed" {
			t.Errorf("name %q after an update whose answer was dropped, want renamed", got.Name)
		}
		if diff := cmp.Diff([]line{{"PATCH", "/service_users/" + id, http.StatusOK}}, journal()); diff != "" {
			t.Errorf("journal (-want +got):\n%s", diff)
		}

		// A GET is retried, and the retry's answer arrives.
		srv.DropAfterNext("GET", "/service_users/*", 2)
		u, err := users.Get(t.Context(), id)
		if err != nil || u.Name != "renamed" {
			t.Errorf("GET after two dropped answers: %+v, %v", u, err)
		}
		get := line{"GET", "/service_users/" + id, http.StatusOK}
		if diff := cmp.Diff([]line{get, get, get}, journal()); diff != "" {
			t.Errorf("journal (-want +got):\n%s", diff)
		}

		// A DropAfter fault drops any answer: an injected one, and an error
		// of the server's. Neither changes anything.
		srv.DropAfterNext("DELETE", "/service_users/*", 2)
		srv.FailNext("DELETE", "/service_users/*", 1, http.StatusServiceUnavailable)
		plain := account.NewServiceUsers(srv.Client())
		transportErr("delete answered 503", plain.Delete(t.Context(), id))
		transportErr("delete answered 404", plain.Delete(t.Context(), "service_missing"))
		want := []line{{"DELETE", "/service_users/" + id, http.StatusServiceUnavailable}, {"DELETE", "/service_users/service_missing", http.StatusNotFound}}
		if diff := cmp.Diff(want, journal()); diff != "" {
			t.Errorf("journal (-want +got):\n%s", diff)
		}
		if _, ok := fake.Get[account.ServiceUser](srv, "", id); !ok {
			t.Errorf("the service user is gone after a DELETE answered 503")
		}
	})
}

// TestDropAfterReactorsOutsideLock checks that a reactor under DropAfter
// runs with no lock of the server held: one that reads and writes the
// store while a write request is on its way would otherwise deadlock,
// which synctest reports.
func TestDropAfterReactorsOutsideLock(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		srv, _ := start(t)
		var seeded atomic.Int64
		for _, pattern := range []string{"/service_users", "/service_users/*"} {
			srv.React("", pattern, func(r *http.Request) *fake.Fault {
				_ = fake.List[account.ServiceUser](srv, "")
				if _, err := fake.Seed[account.APIKey](srv, "", &account.APIKeyCreate{Description: "from a reactor"}); err != nil {
					t.Errorf("seeding from a reactor: %v", err)
				}
				seeded.Add(1)
				return &fake.Fault{DropAfter: true}
			})
		}
		users := account.NewServiceUsers(srv.Client())
		if _, err := users.Create(t.Context(), &account.ServiceUserCreate{Name: "x"}); err == nil {
			t.Errorf("create under DropAfter succeeded")
		}
		id := fake.List[account.ServiceUser](srv, "")[0].ID
		if _, err := users.Update(t.Context(), &account.ServiceUserUpdate{ID: id, Active: ptr(false)}); err == nil {
			t.Errorf("update under DropAfter succeeded")
		}
		if err := users.Delete(t.Context(), id); err == nil {
			t.Errorf("delete under DropAfter succeeded")
		}
		if n := len(fake.List[account.ServiceUser](srv, "")); n != 0 || seeded.Load() != 3 {
			t.Errorf("%d service users, %d reactor runs; want 0 and 3", n, seeded.Load())
		}
	})
}

// TestLatency checks that Latency delays matching requests by exactly its
// duration, in a synctest bubble, and that its remove function ends it.
func TestLatency(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		srv, _ := start(t)
		users := account.NewServiceUsers(srv.Client())
		remove := srv.Latency("GET", "/service_users", 3*time.Second)
		srv.Latency("GET", "/service_users", 2*time.Second) // delays add up

		begin := time.Now()
		must(users.Page(t.Context(), nil))(t)
		if d := time.Since(begin); d != 5*time.Second {
			t.Errorf("delayed by %v, want 5s", d)
		}
		begin = time.Now()
		must(users.Get(t.Context(), must(fake.Seed[account.ServiceUser](srv, "", &account.ServiceUserCreate{Name: "x"}))(t).ID))(t)
		if d := time.Since(begin); d != 0 {
			t.Errorf("another path delayed by %v", d)
		}
		remove()
		begin = time.Now()
		must(users.Page(t.Context(), nil))(t)
		if d := time.Since(begin); d != 2*time.Second {
			t.Errorf("after removing one delay: %v, want 2s", d)
		}

		// A request whose context ends while it is delayed is answered
		// once it ends, and the client sees its context's error.
		ctx, cancel := context.WithTimeout(t.Context(), time.Second)
		defer cancel()
		_, err := users.Page(ctx, nil)
		if !errors.Is(err, context.DeadlineExceeded) {
			t.Errorf("err = %v, want the context's deadline", err)
		}
	})
}

// TestCloseWaitsForRequests checks that Close waits for a request in
// flight (held by a reactor) before returning.
func TestCloseWaitsForRequests(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		srv, err := fake.New(fake.WithoutListener(), fake.WithIDSeed(1))
		if err != nil {
			t.Fatal(err)
		}
		srv.Latency("", "/**", time.Minute)
		done := make(chan error, 1)
		go func() {
			_, err := account.NewServiceUsers(srv.Client()).Page(context.Background(), nil)
			done <- err
		}()
		synctest.Wait() // the request is in flight, delayed
		begin := time.Now()
		srv.Close()
		if d := time.Since(begin); d != time.Minute {
			t.Errorf("Close returned after %v, want 1m (the request's delay)", d)
		}
		if err := <-done; err != nil {
			t.Errorf("request in flight at Close: %v", err)
		}
		if _, err := account.NewServiceUsers(srv.Client()).Page(context.Background(), nil); err == nil {
			t.Error("a request after Close succeeded")
		}
	})
}

// TestNoRetryAfterDrop: with the default retry policy, a POST or PATCH
// whose connection drops is sent once and never again (it might have taken
// effect); a GET or DELETE is retried. Over loopback TCP, where
// net/http's own transport might retry too, and in memory.
func TestNoRetryAfterDrop(t *testing.T) {
	overBothTransports(t, func(t *testing.T, srv *fake.Server, c *acctapi.Client) {
		su := account.NewServiceUsers(c)
		ctx := context.Background()
		attempts := func(method, pattern string) *atomic.Int64 {
			var n atomic.Int64
			srv.React(method, pattern, func(*http.Request) *fake.Fault { n.Add(1); return nil })
			srv.DropNext(method, pattern, 1)
			return &n
		}

		n := attempts("POST", "/service_users")
		if _, err := su.Create(ctx, &account.ServiceUserCreate{Name: "once"}); err == nil {
			t.Errorf("create through a dropped connection succeeded")
		}
		if n.Load() != 1 || len(fake.List[account.ServiceUser](srv, "")) != 0 {
			t.Errorf("POST: %d attempts, %d service users; want 1 and 0", n.Load(), len(fake.List[account.ServiceUser](srv, "")))
		}

		u := must(su.Create(ctx, &account.ServiceUserCreate{Name: "kept"}))(t)
		n = attempts("PATCH", "/service_users/*")
		if _, err := su.Update(ctx, &account.ServiceUserUpdate{ID: u.ID, Name: ptr("renamed")}); err == nil {
			t.Errorf("update through a dropped connection succeeded")
		}
		if got, _ := fake.Get[account.ServiceUser](srv, "", u.ID); n.Load() != 1 || got.Name != "kept" {
			t.Errorf("PATCH: %d attempts, name %q; want 1 and unchanged", n.Load(), got.Name)
		}

		n = attempts("GET", "/service_users/*")
		if _, err := su.Get(ctx, u.ID); err != nil || n.Load() != 2 {
			t.Errorf("GET: %v after %d attempts; want success after 2", err, n.Load())
		}
		n = attempts("DELETE", "/service_users/*")
		if err := su.Delete(ctx, u.ID); err != nil || n.Load() != 2 {
			t.Errorf("DELETE: %v after %d attempts; want success after 2", err, n.Load())
		}
	})
}

// TestNoRetryAfterDropAfter is TestNoRetryAfterDrop in the dangerous case:
// the request reaches the store and commits, and only then does the
// connection drop (Fault.DropAfter). A POST or PATCH is still sent once,
// so the create or update is applied once, not duplicated; a GET is
// retried and succeeds. Over loopback TCP and in memory.
func TestNoRetryAfterDropAfter(t *testing.T) {
	overBothTransports(t, func(t *testing.T, srv *fake.Server, c *acctapi.Client) {
		su := account.NewServiceUsers(c)
		ctx := context.Background()
		// journaled returns the journal's entries for method since the
		// last call, as "status path".
		journaled := func(method string) []string {
			var out []string
			for _, e := range srv.Journal() {
				if e.Method == method {
					out = append(out, fmt.Sprint(e.Status, " ", e.Path))
				}
			}
			srv.ClearJournal()
			return out
		}

		srv.DropAfterNext("POST", "/service_users", 1)
		if _, err := su.Create(ctx, &account.ServiceUserCreate{Name: "once"}); err == nil {
			t.Errorf("create whose answer was dropped succeeded")
		}
		users := fake.List[account.ServiceUser](srv, "")
		if len(users) != 1 || users[0].Name != "once" {
			t.Fatalf("service users %+v, want exactly one, named once", users)
		}
		if got := journaled("POST"); !slices.Equal(got, []string{"201 /service_users"}) {
			t.Errorf("POSTs journaled: %q, want one, answered 201", got)
		}

		// API keys have no unique member: a repeated create would make
		// a second key.
		srv.DropAfterNext("POST", "/api_keys", 1)
		if _, err := account.NewAPIKeys(c).Create(ctx, &account.APIKeyCreate{Description: "once"}); err == nil {
			t.Errorf("create whose answer was dropped succeeded")
		}
		var once int
		for _, k := range fake.List[account.APIKey](srv, "") {
			if k.Description == "once" {
				once++
			}
		}
		if got := journaled("POST"); once != 1 || !slices.Equal(got, []string{"201 /api_keys"}) {
			t.Errorf("%d API keys made, POSTs journaled: %q; want one, answered 201", once, got)
		}

		id := users[0].ID
		srv.DropAfterNext("PATCH", "/service_users/*", 1)
		if _, err := su.Update(ctx, &account.ServiceUserUpdate{ID: id, Name: ptr("renamed")}); err == nil {
			t.Errorf("update whose answer was dropped succeeded")
		}
		if got, _ := fake.Get[account.ServiceUser](srv, "", id); got.Name != "renamed" {
			t.Errorf("name %q, want renamed: the update was applied", got.Name)
		}
		if got := journaled("PATCH"); !slices.Equal(got, []string{"200 /service_users/" + id}) {
			t.Errorf("PATCHes journaled: %q, want one, answered 200", got)
		}

		srv.DropAfterNext("GET", "/service_users/*", 1)
		if u, err := su.Get(ctx, id); err != nil || u.Name != "renamed" {
			t.Errorf("GET whose first answer was dropped: %+v, %v; want the retry's answer", u, err)
		}
		if got := journaled("GET"); len(got) != 2 {
			t.Errorf("GETs journaled: %q, want two (the dropped answer and the retry)", got)
		}
		if n := len(fake.List[account.ServiceUser](srv, "")); n != 1 {
			t.Errorf("%d service users at the end, want 1", n)
		}
	})
}

// TestFaultTargetsChecked: a fault that could never match, or whose
// answer could not be given, is refused when it is added (a panic naming
// what is wrong, and CheckTarget's error), not accepted to match nothing
// or to answer 500 later.
func TestFaultTargetsChecked(t *testing.T) {
	t.Parallel()
	srv, _ := start(t)
	noop := func(*http.Request) *fake.Fault { return nil }
	for _, tt := range []struct {
		name string
		add  func()
		want string // in the panic's message; "" for none
	}{
		{"lower-case method", func() { srv.FailNext("get", "/service_users/*", 1, 503) }, `FailNext: method "get" is not one the fake serves (DELETE, GET, PATCH, POST)`},
		{"method the fake never serves", func() { srv.React("PUT", "/service_users", noop) }, `React: method "PUT"`},
		{"no leading slash", func() { srv.DropNext("GET", "service_users/*", 1) }, `DropNext: pattern "service_users/*" does not start with /`},
		{"malformed pattern", func() { srv.Latency("", "/service_users/[", time.Second) }, `Latency: pattern "/service_users/[": syntax error in pattern`},
		{"no such path", func() { srv.DropAfterNext("", "/service_user/*", 1) }, `DropAfterNext: pattern "/service_user/*" matches no path the fake serves`},
		{"too deep", func() { srv.FailNext("", "/service_users/*/*", 1, 503) }, `pattern "/service_users/*/*" matches no path`},
		{"trailing slash", func() { srv.FailNext("", "/service_users/", 1, 503) }, `pattern "/service_users/" matches no path`},
		{"no path with that method", func() { srv.RateLimitNext("PATCH", "/service_users", 1, 0) }, `RateLimitNext: pattern "/service_users" matches no path the fake serves with PATCH`},
		{"no path under it", func() { srv.React("", "/nothing/**", noop) }, `pattern "/nothing/**" matches no path`},
		{"pattern too long", func() { srv.FailNext("", "/service_users/*"+strings.Repeat("a", 20000)+"b", 1, 503) }, `is 20017 bytes long; a pattern is at most 256`},
		{"pattern too long for Latency", func() { srv.Latency("", "/"+strings.Repeat("a", 256), time.Second) }, `is 257 bytes long; a pattern is at most 256`},
		{"status 42", func() { srv.FailNext("GET", "/service_users", 1, 42) }, "FailNext: status 42 is not from 400 to 599"},
		{"status 0", func() { srv.FailNext("GET", "/service_users", 1, 0) }, "FailNext: status 0 is not from 400 to 599"},
		{"status 200", func() { srv.FailNext("GET", "/service_users", 1, 200) }, "FailNext: status 200 is not from 400 to 599"},
		{"status 302", func() { srv.FailNext("GET", "/service_users", 1, 302) }, "FailNext: status 302 is not from 400 to 599"},
		{"status 204", func() { srv.FaultNext("DELETE", "/service_users/*", 1, fake.Fault{Status: 204}) }, "FaultNext: Fault.Status 204 is not from 400 to 599"},
		{"status 600", func() { srv.FaultNext("GET", "/service_users", 1, fake.Fault{Status: 600}) }, "FaultNext: Fault.Status 600 is not from 400 to 599"},
		{"negative n", func() { srv.FailNext("GET", "/service_users", -1, 503) }, "FailNext: n = -1; want 1 or more"},
		{"n = 0", func() { srv.FailNext("GET", "/service_users", 0, 503) }, "FailNext: n = 0; want 1 or more"},
		{"code without a status", func() { srv.FaultNext("GET", "/service_users", 1, fake.Fault{Code: "ERR_X"}) }, "FaultNext: Fault.Status is 0, but Code, Msg and Header"},
		{"header with a delay, no status", func() {
			srv.FaultNext("GET", "/service_users", 1, fake.Fault{Delay: time.Millisecond, Header: http.Header{"Retry-After": {"1"}}})
		}, "FaultNext: Fault.Status is 0, but Code, Msg and Header"},
		{"a fault that does nothing", func() { srv.FaultNext("GET", "/service_users", 1, fake.Fault{}) }, "FaultNext: Fault.Status is 0, and the fault does nothing"},
		// A header that would not reach the client as given: dropped by
		// net/http, not found by the in-memory client, the server's own
		// (ignored, or breaking the answer while the journal records it
		// whole), or empty.
		{"invalid header name", func() {
			srv.FaultNext("GET", "/service_users", 1, fake.Fault{Status: 503, Header: http.Header{"Bad Header": {"x"}}})
		},
			`FaultNext: Fault.Header "Bad Header" is not a header name`},
		{"non-canonical header name", func() {
			srv.FaultNext("GET", "/service_users", 1, fake.Fault{Status: 503, Header: http.Header{"retry-after": {"1"}}})
		},
			`FaultNext: Fault.Header "retry-after" is not in canonical form: write "Retry-After"`},
		{"content-length", func() {
			srv.FaultNext("GET", "/service_users", 1, fake.Fault{Status: 503, Header: http.Header{"Content-Length": {"3"}}})
		},
			`FaultNext: Fault.Header "Content-Length" is set by the server`},
		{"content-type", func() {
			srv.FaultNext("GET", "/service_users", 1, fake.Fault{Status: 503, Header: http.Header{"Content-Type": {"text/plain"}}})
		}, `FaultNext: Fault.Header "Content-Type" is set by the server`},
		{"operation-id", func() {
			srv.FaultNext("GET", "/service_users", 1, fake.Fault{Status: 503, Header: http.Header{"Operation-Id": {"op_x"}}})
		},
			`FaultNext: Fault.Header "Operation-Id" is set by the server`},
		{"ngrok-operation-id", func() {
			srv.FaultNext("GET", "/service_users", 1, fake.Fault{Status: 503, Header: http.Header{"Ngrok-Operation-Id": {"op_x"}}})
		},
			`FaultNext: Fault.Header "Ngrok-Operation-Id" is set by the server`},
		{"transfer-encoding", func() {
			srv.FaultNext("GET", "/service_users", 1, fake.Fault{Status: 503, Header: http.Header{"Transfer-Encoding": {"chunked"}}})
		}, `FaultNext: Fault.Header "Transfer-Encoding" is set by the server`},
		{"no value", func() {
			srv.FaultNext("GET", "/service_users", 1, fake.Fault{Status: 503, Header: http.Header{"X-Fault": {}}})
		},
			`FaultNext: Fault.Header "X-Fault" has no value`},
		{"control character", func() {
			srv.FaultNext("GET", "/service_users", 1, fake.Fault{Status: 503, Header: http.Header{"X-Fault": {"a\r\nX-Evil: 1"}}})
		},
			`FaultNext: Fault.Header "X-Fault" has a value with a control character`},
		{"a header of its own", func() {
			srv.FaultNext("GET", "/service_users", 1, fake.Fault{Status: 503, Header: http.Header{"X-Fault": {"a\tb"}, "Retry-After": {"1"}}})
		}, ""},
		{"drop with a status", func() { srv.FaultNext("GET", "/service_users", 1, fake.Fault{Drop: true, Status: 503}) }, "FaultNext: Fault.Drop answers nothing"},
		{"drop before and after", func() { srv.FaultNext("GET", "/service_users", 1, fake.Fault{Drop: true, DropAfter: true}) }, "FaultNext: Fault.Drop answers nothing"},
		{"negative delay", func() { srv.FaultNext("GET", "/service_users", 1, fake.Fault{Delay: -time.Second}) }, "FaultNext: Fault.Delay -1s is negative"},
		{"nil reactor", func() { srv.React("GET", "/service_users", nil) }, "React: nil reactor"},
		{"negative latency", func() { srv.Latency("GET", "/service_users", -time.Second) }, "Latency: delay -1s is not positive"},
		{"no latency", func() { srv.Latency("GET", "/service_users", 0) }, "Latency: delay 0s is not positive"},
		{"negative retry-after", func() { srv.RateLimitNext("GET", "/service_users", 1, -5*time.Second) }, "RateLimitNext: retryAfter -5s is negative"},
		// What the fake serves is accepted: "" and "*" for any method, a
		// literal id where the route has a parameter, "**" below a prefix.
		// A segment where the path has an item's id must be able to match
		// one of that collection's ids ("<prefix>_" and letters and
		// digits): another resource's prefix would never fire.
		{"another resource's id", func() { srv.FailNext("DELETE", "/api_keys/service_*", 1, 503) },
			`FailNext: pattern "/api_keys/service_*" matches no id of api_keys: their ids start ak_`},
		{"another backend's id", func() { srv.FailNext("", "/backends/failover/bkdhr_*", 1, 503) },
			`matches no id of backends/failover: their ids start bkdfo_`},
		{"a bot user's id is a service user's", func() { srv.DropNext("GET", "/bot_users/usr_*", 1) },
			`matches no id of bot_users: their ids start service_`},
		{"a parent's id", func() { srv.FailNext("GET", "/event_subscriptions/ed_*/sources", 1, 503) },
			`matches no id of event_subscriptions: their ids start esb_`},
		// A literal names a path the fake serves (a made-up id, answered
		// 404), unless it is plainly another collection's id (a second
		// review found made-up ids refused, among them the svc_a of
		// ExampleServer_JournalBefore).
		{"another collection's id", func() { srv.FailNext("DELETE", "/api_keys/service_2abc", 1, 503) }, `matches no id of api_keys: their ids start ak_`},
		{"a made-up id", func() { srv.FailNext("GET", "/api_keys/nope", 1, 503) }, ""},
		{"a made-up id with an underscore", func() { srv.FailNext("GET", "/service_users/svc_a", 1, 503) }, ""},
		{"a made-up id of the collection", func() { srv.FailNext("GET", "/api_keys/ak_missing_1", 1, 503) }, ""},
		{"a character no id has", func() { srv.FailNext("GET", "/api_keys/ak-*", 1, 503) }, `matches no id of api_keys`},
		{"an underscore after the prefix's", func() { srv.FailNext("GET", "/api_keys/ak_*_*", 1, 503) }, `matches no id of api_keys`},
		{"a class of no id's first letter", func() { srv.FailNext("GET", "/api_keys/[b-z]*", 1, 503) }, `matches no id of api_keys`},
		{"ids of the collection", func() { srv.FailNext("DELETE", "/api_keys/ak_*", 1, 503) }, ""},
		{"a bot user", func() { srv.FailNext("DELETE", "/bot_users/service_*", 1, 503) }, ""},
		{"ids by class", func() { srv.FailNext("GET", "/api_keys/[a]k?[0-9A-Za-z]*", 1, 503) }, ""},
		{"a star", func() { srv.FailNext("GET", "/backends/*/*", 1, 503) }, ""},
		{"a source's type is no id", func() { srv.FailNext("GET", "/event_subscriptions/esb_*/sources/api_key_created.v0", 1, 503) }, ""},
		{"a pattern of source types", func() { srv.FailNext("DELETE", "/event_subscriptions/*/sources/api_key_*", 1, 503) }, ""},
		// A type that is none never fired (a review's api_key_created,
		// without its .v0).
		{"a source type that is none", func() { srv.FailNext("GET", "/event_subscriptions/esb_*/sources/api_key_created", 1, 503) },
			`pattern "/event_subscriptions/esb_*/sources/api_key_created" matches no event type: a source is named by its type, such as api_key_created.v0, so it matches no path the fake serves with GET`},
		{"a pattern no source type matches", func() { srv.FailNext("GET", "/event_subscriptions/*/sources/*.v1", 1, 503) }, "matches no event type"},
		{"any method, one item", func() { srv.FailNext("", "/service_users/service_1", 1, 503) }, ""},
		{"star", func() { srv.FailNext("*", "/backends/*/*", 1, 503) }, ""},
		{"below a prefix", func() { srv.DropNext("DELETE", "/backends/**", 1) }, ""},
		{"a sub-resource", func() { srv.FailNext("GET", "/kubernetes_operators/*/bound_endpoints", 1, 503) }, ""},
		{"every path", func() { srv.React("", "/**", noop) }, ""},
		{"a delay with an answer", func() {
			srv.FaultNext("GET", "/service_users", 1, fake.Fault{Delay: time.Second, Status: 503, Code: "ERR_X"})
		}, ""},
		{"drop after an answer", func() { srv.FaultNext("POST", "/service_users", 1, fake.Fault{DropAfter: true, Status: 503}) }, ""},
	} {
		t.Run(tt.name, func(t *testing.T) {
			defer func() {
				got := recover()
				msg, _ := got.(string)
				switch {
				case tt.want == "" && got != nil:
					t.Errorf("panic %v, want none", got)
				case tt.want != "" && !strings.Contains(msg, tt.want):
					t.Errorf("panic %#v, want a message with %q", got, tt.want)
				}
			}()
			tt.add()
		})
	}
	srv.ClearFaults()
	if err := srv.CheckTarget("GET", "/service_users*"); err != nil {
		t.Errorf(`CheckTarget("GET", "/service_users*") = %v; it matches the collection`, err)
	}
	if err := srv.CheckTarget("GET", "/api_key/*"); err == nil || !strings.Contains(err.Error(), "matches no path") {
		t.Errorf(`CheckTarget("GET", "/api_key/*") = %v`, err)
	}
	if r := raw(t, srv, "GET", "/service_users", nil, ""); r.status != 200 {
		t.Errorf("after refused faults: %d %s", r.status, r.body)
	}
}

// TestFaultNext: a fault carries its own error code, message and headers;
// the helpers' remove functions take a fault back before it is used up.
func TestFaultNext(t *testing.T) {
	t.Parallel()
	srv, _ := start(t)
	srv.FaultNext("POST", "/service_users", 1, fake.Fault{Status: 409, Code: "ERR_NGROK_9999", Msg: "Made up.",
		Header: http.Header{"X-Fault": {"yes"}}})
	r := raw(t, srv, "POST", "/service_users", nil, `{"name":"a"}`)
	if e := r.apiErr(t); r.status != 409 || e.ErrorCode != "ERR_NGROK_9999" || e.Msg != "Made up." || r.header.Get("X-Fault") != "yes" {
		t.Errorf("got %d %s %q, want 409 ERR_NGROK_9999 \"Made up.\" with X-Fault", r.status, r.body, r.header.Get("X-Fault"))
	}
	for _, add := range []func() func(){
		func() func() { return srv.FailNext("GET", "/service_users", 1, 503) },
		func() func() { return srv.DropNext("GET", "/service_users", 1) },
		func() func() { return srv.DropAfterNext("GET", "/service_users", 1) },
		func() func() { return srv.RateLimitNext("GET", "/service_users", 1, time.Second) },
		func() func() { return srv.FaultNext("GET", "/service_users", 2, fake.Fault{Status: 500}) },
		func() func() { return srv.Latency("GET", "/service_users", time.Hour) },
	} {
		remove := add()
		remove()
		remove() // twice is harmless
	}
	if r := raw(t, srv, "GET", "/service_users", nil, ""); r.status != 200 {
		t.Errorf("after removing every fault: %d %s", r.status, r.body)
	}
}

// TestMatchPath pins the pattern language, above all what "**" does after
// a prefix with wildcards: before, the prefix was compared literally, so a
// pattern CheckTarget accepted ("/event_subscriptions/*/**") never matched.
func TestMatchPath(t *testing.T) {
	t.Parallel()
	tests := []struct {
		pattern, path string
		want          bool
	}{
		{"/service_users/*", "/service_users/service_1", true},
		{"/service_users/*", "/service_users", false},
		{"/service_users/**", "/service_users", true},
		{"/service_users/**", "/service_users/service_1", true},
		{"/service_users/**", "/service_usersx/service_1", false},
		{"/event_subscriptions/*/**", "/event_subscriptions/esb_1/sources", true},
		{"/event_subscriptions/*/**", "/event_subscriptions/esb_1/sources/api_key_created.v0", true},
		{"/event_subscriptions/*/**", "/event_subscriptions", false},
		{"/*/**", "/service_users/service_1", true},
		{"/service_user?/**", "/service_users/service_1", true},
		{"/service_user?/**", "/service_user/service_1", false},
		{"/backends/*/**", "/backends/failover/bkdfo_1", true},
		{"/backends/*/**", "/api_keys/ak_1", false},
		{"/**", "/anything/at/all", true},
	}
	for _, tt := range tests {
		got, err := fake.MatchPath(tt.pattern, tt.path)
		if err != nil || got != tt.want {
			t.Errorf("MatchPath(%q, %q) = %v, %v; want %v", tt.pattern, tt.path, got, err, tt.want)
		}
	}
	// What CheckTarget accepts, a fault with that pattern answers.
	srv, _ := start(t)
	for _, pattern := range []string{"/event_subscriptions/*/**", "/*/**", "/service_user?/**"} {
		if err := srv.CheckTarget("GET", pattern); err != nil {
			t.Errorf("CheckTarget(GET, %q) = %v", pattern, err)
			continue
		}
		remove := srv.FailNext("GET", pattern, 1, 503)
		if r := raw(t, srv, "GET", "/service_users/service_nope", nil, ""); (r.status == 503) != (pattern != "/event_subscriptions/*/**") {
			t.Errorf("FailNext(GET, %q): GET /service_users/service_nope answered %d", pattern, r.status)
		}
		remove()
	}
}

// TestDropResentOverTCP pins what DropNext's documentation says: over TCP,
// net/http resends a GET whose reused connection was dropped before any
// answer, so dropping one such request lets the client succeed (the
// journal shows the drop and the resend), and dropping two reaches the
// code under test.
func TestDropResentOverTCP(t *testing.T) {
	t.Parallel()
	srv := fake.Start(t) // over TCP
	users := account.NewServiceUsers(srv.Client())
	u := must(users.Create(t.Context(), &account.ServiceUserCreate{Name: "kept"}))(t) // the connection is now reused
	srv.DropNext("GET", "/service_users/*", 1)
	if _, err := users.Get(t.Context(), u.ID); err != nil {
		t.Fatalf("one drop of a GET: %v; net/http resends it", err)
	}
	srv.DropNext("GET", "/service_users/*", 2)
	if _, err := users.Get(t.Context(), u.ID); err == nil {
		t.Fatal("two drops of a GET: no error")
	}
	var dropped int
	for _, e := range srv.Journal() {
		if e.Dropped {
			dropped++
		}
	}
	if dropped != 3 {
		t.Errorf("%d dropped entries in the journal, want 3", dropped)
	}
}

// TestReactorsBounded pins MaxReactors: a server holds at most so many
// reactors, React and the helpers panic on one more, naming the bound,
// and removing one makes room. Before, reactors were added without end,
// each request running past all of them.
func TestReactorsBounded(t *testing.T) {
	t.Parallel()
	srv, _ := start(t)
	noop := func(*http.Request) *fake.Fault { return nil }
	var removes []func()
	for range fake.MaxReactors {
		removes = append(removes, srv.React("", "/**", noop))
	}
	for name, add := range map[string]func(){
		"React":    func() { srv.React("", "/**", noop) },
		"FailNext": func() { srv.FailNext("", "/**", 1, 503) },
		"Latency":  func() { srv.Latency("", "/**", time.Second) },
	} {
		func() {
			defer func() {
				if msg := fmt.Sprint(recover()); !strings.Contains(msg, name+": the server already has 1000 reactors") {
					t.Errorf("%s beyond MaxReactors: panic %q", name, msg)
				}
			}()
			add()
		}()
	}
	removes[0]()
	srv.FailNext("", "/**", 1, 503)
	if r := raw(t, srv, "GET", "/service_users", nil, ""); r.status != 503 {
		t.Errorf("the fault added after removing one: %d", r.status)
	}
	// The fault, used up, removed itself: its slot takes another of each
	// one-shot kind in turn, each used up before the next (a mutation
	// review found a used-up fault kept its slot, and no test failed).
	for i, add := range []func(){
		func() { srv.FailNext("", "/**", 2, 503) },
		func() { srv.FaultNext("", "/**", 2, fake.Fault{Status: 502}) },
		func() { srv.RateLimitNext("", "/**", 2, time.Second) },
	} {
		add()
		for range 2 {
			if r := raw(t, srv, "GET", "/service_users", nil, ""); r.status < 400 {
				t.Fatalf("one-shot fault %d: %d, want its error", i, r.status)
			}
		}
	}
	if r := raw(t, srv, "GET", "/service_users", nil, ""); r.status != 200 {
		t.Errorf("after the used-up faults: %d, want 200", r.status)
	}
}

// TestEscapedPathAsRouted pins a review's finding: the journal recorded a
// request's decoded path and faults matched it, while routing matches the
// path as escaped on the wire, so GET /service_users%2F<id> (one segment,
// a 404) was journaled as a GET of the service user, and a fault for
// POST /backends/http_response answered POST /backends%2Fhttp_response.
// Both now see the path as routed.
func TestEscapedPathAsRouted(t *testing.T) {
	t.Parallel()
	srv, _ := start(t)
	su := must(fake.Seed[account.ServiceUser](srv, "", &account.ServiceUserCreate{Name: "a"}))(t)
	srv.FailNext("POST", "/backends/http_response", 1, http.StatusTeapot)
	if r := raw(t, srv, "POST", "/backends%2Fhttp_response", nil, `{"status_code":200}`); r.status != http.StatusNotFound {
		t.Errorf("POST /backends%%2Fhttp_response: %d %s; want the router's 404, not the fault", r.status, r.body)
	}
	if r := raw(t, srv, "GET", "/service_users%2F"+su.ID, nil, ""); r.status != http.StatusNotFound {
		t.Fatalf("GET /service_users%%2F<id>: %d", r.status)
	}
	j := srv.Journal()
	if got := j[len(j)-1].Path; got != "/service_users%2F"+su.ID {
		t.Errorf("journaled path %q; want it as escaped on the wire", got)
	}
	if r := raw(t, srv, "POST", "/backends/http_response", nil, `{"status_code":200}`); r.status != http.StatusTeapot {
		t.Errorf("the fault was used up by a path it does not match: %d", r.status)
	}
	// An escape routing decodes within a segment is the path it serves: a
	// fault on it fires, and the journal's entry matches it (a review of
	// the change found GET /api%5Fkeys served as /api_keys past a fault).
	srv.FailNext("GET", "/api_keys", 2, http.StatusTeapot)
	if r := raw(t, srv, "GET", "/api%5fkeys", nil, ""); r.status != http.StatusTeapot {
		t.Errorf("GET /api%%5fkeys with a fault on /api_keys: %d; want the fault's 418", r.status)
	}
	if r := raw(t, srv, "GET", "/api%5Fkeys", nil, ""); r.status != http.StatusTeapot {
		t.Errorf("GET /api%%5Fkeys with a fault on /api_keys: %d; want the fault's 418", r.status)
	}
	j = srv.Journal()
	if e := j[len(j)-1]; e.Path != "/api%5Fkeys" {
		t.Errorf("journaled path %q; want it as sent", e.Path)
	} else if ok, _ := fake.MatchPath("/api_keys", e.Path); !ok {
		t.Errorf("MatchPath(/api_keys, %q) = false; want the path it was served as", e.Path)
	}
}

// FuzzReactorMisuse: with fake.Start(f) in a fuzz test, a reactor that
// panics inside the fuzz target gets its request a 500, as documented: the
// F may not report from the fuzz target, and calling its Errorf there had
// crashed the target with "f.Errorf was called inside the fuzz target" (a
// review's finding), or, behind the real listener, left the client an EOF
// and the test passing.
func FuzzReactorMisuse(f *testing.F) {
	mem, tcp := fake.Start(f, fake.WithoutListener()), fake.Start(f)
	for _, srv := range []*fake.Server{mem, tcp} {
		srv.React("GET", "/service_users", func(r *http.Request) *fake.Fault {
			if strings.Contains(r.Header.Get("X-Fuzz"), "z") {
				panic("fuzz boom")
			}
			return nil
		})
	}
	f.Add("a")
	f.Add("zz")
	f.Fuzz(func(t *testing.T, q string) {
		for _, srv := range []*fake.Server{mem, tcp} {
			req, err := http.NewRequest("GET", srv.URL+"/service_users", nil)
			if err != nil {
				t.Fatal(err)
			}
			req.Header.Set("Authorization", "Bearer "+srv.APIKey())
			req.Header.Set("Service-Version", "2")
			req.Header.Set("X-Fuzz", strings.Map(func(r rune) rune {
				if r < ' ' || r > '~' {
					return -1
				}
				return r
			}, q))
			resp, err := srv.HTTPClient().Do(req)
			if err != nil {
				t.Fatal(err)
			}
			body, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if strings.Contains(req.Header.Get("X-Fuzz"), "z") != (resp.StatusCode == http.StatusInternalServerError) ||
				resp.StatusCode == http.StatusInternalServerError && !strings.Contains(string(body), "fuzz boom") {
				t.Errorf("X-Fuzz %q: %d %s", req.Header.Get("X-Fuzz"), resp.StatusCode, body)
			}
		}
	})
}
