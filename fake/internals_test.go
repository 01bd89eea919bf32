package fake

import (
	"bytes"
	"errors"
	"fmt"
	"math/big"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"testing"
	"testing/iotest"
	"time"

	"github.com/acctapi/acctapi"
	"github.com/acctapi/acctapi/account"
	"github.com/acctapi/acctapi/fake/internal/store"
	"github.com/acctapi/acctapi/internal/resources"
	"github.com/acctapi/acctapi/k8sop"
)

// TestReadBody checks that a body is read whole (up to one byte over the
// limit) whatever length the request declares, and kept without spare
// capacity.
func TestReadBody(t *testing.T) {
	t.Parallel()
	small := `{"name":"x"}`
	big := strings.Repeat("b", MaxBodyBytes+10)
	tests := []struct {
		name     string
		body     string
		declared int64
		want     int // bytes read
	}{
		{"declared", small, int64(len(small)), len(small)},
		{"declared too short", small, 3, len(small)},
		{"declared too long", small, 100, len(small)},
		{"unknown (-1)", small, -1, len(small)},
		{"unknown (0)", small, 0, len(small)},
		{"empty", "", 0, 0},
		{"over the limit, declared", big, int64(len(big)), MaxBodyBytes + 1},
		{"over the limit, unknown", big, -1, MaxBodyBytes + 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			// OneByteReader: every read is short, as on a slow connection.
			got, err := readBody(iotest.OneByteReader(strings.NewReader(tt.body)), tt.declared)
			if err != nil {
				t.Fatal(err)
			}
			if len(got) != tt.want || !bytes.Equal(got, []byte(tt.body[:tt.want])) {
				t.Fatalf("read %d bytes, want the first %d", len(got), tt.want)
			}
			if tt.want < MaxBodyBytes && cap(got) > 2*len(got)+16 {
				t.Errorf("capacity %d for a %d-byte body", cap(got), len(got))
			}
		})
	}
	_, err := readBody(iotest.ErrReader(iotest.ErrTimeout), 10)
	if err != iotest.ErrTimeout {
		t.Errorf("a failing body: got %v, want its error", err)
	}
}

// TestAppendBase62 checks the id encoding against math/big, and that text
// order is number order.
func TestAppendBase62(t *testing.T) {
	t.Parallel()
	var zero, ones [20]byte
	for i := range ones {
		ones[i] = 0xff
	}
	cases := [][20]byte{zero, ones}
	r := rand.New(rand.NewPCG(1, 2))
	for range 2000 {
		var raw [20]byte
		for i := range raw {
			raw[i] = byte(r.UintN(256))
		}
		// Runs of equal bytes reach the carries of every pass.
		if r.IntN(4) == 0 {
			for i := r.IntN(20); i < 20; i++ {
				raw[i] = 0xff
			}
		}
		cases = append(cases, raw)
	}
	for _, raw := range cases {
		got := string(appendBase62(nil, raw))
		want := new(big.Int).SetBytes(raw[:]).Text(62)
		// big.Int's base-62 digits are 0-9a-zA-Z; the ids' are 0-9A-Za-z.
		want = strings.Map(func(c rune) rune {
			switch {
			case c >= 'a' && c <= 'z':
				return c - 'a' + 'A'
			case c >= 'A' && c <= 'Z':
				return c - 'A' + 'a'
			}
			return c
		}, want)
		want = strings.Repeat("0", 27-len(want)) + want
		if got != want {
			t.Fatalf("%x: got %s, want %s", raw, got, want)
		}
	}
	for i := 1; i < len(cases); i++ {
		a, b := cases[i-1], cases[i]
		if bytes.Compare(a[:], b[:]) != strings.Compare(string(appendBase62(nil, a)), string(appendBase62(nil, b))) {
			t.Fatalf("%x and %x: text order differs from number order", a, b)
		}
	}
}

// TestIDsGrow checks that ids from one generator grow with time and within
// a second, and carry their prefix.
func TestIDsGrow(t *testing.T) {
	t.Parallel()
	g := newIDGen(7)
	now := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	prev := ""
	for i := range 1000 {
		id := g.next("service", now.Add(time.Duration(i/10)*time.Second))
		if !strings.HasPrefix(id, "service_") || len(id) != len("service_")+27 {
			t.Fatalf("id %q: want service_ and 27 base-62 digits", id)
		}
		if id <= prev {
			t.Fatalf("id %q does not sort after %q", id, prev)
		}
		prev = id
	}
}

// TestRouterMatch checks path matching: literal segments win over
// parameters, parameters come back unescaped, and empty, undecodable or
// overlong paths match nothing.
func TestRouterMatch(t *testing.T) { // not parallel: AllocsPerRun
	var rt router
	noop := func(*call) (int, any, error) { return 0, nil, nil }
	items := rt.handle(http.MethodGet, "/things/{id}", nil, noop)
	special := rt.handle(http.MethodGet, "/things/special", nil, noop)
	sources := rt.handle(http.MethodGet, "/subs/{id}/sources/{type}", nil, noop)
	tests := []struct {
		path   string
		want   *route
		params map[string]string
	}{
		{"/things/x_1", items, map[string]string{"id": "x_1"}},
		{"/things/special", special, map[string]string{"id": ""}},
		{"/things/a%2Fb%20c", items, map[string]string{"id": "a/b c"}},
		{"/things/x_1/", nil, nil},
		{"//things/x_1", nil, nil},
		{"things/x_1", nil, nil},
		{"/subs/esb_1/sources/api_key_created.v0", sources, map[string]string{"id": "esb_1", "type": "api_key_created.v0"}},
		{"/subs/esb_1/sources/x%2Fy", sources, map[string]string{"id": "esb_1", "type": "x/y"}},
		{"/", nil, nil},
		{"", nil, nil},
		{"/things//x", nil, nil},
		{"/things/%zz", nil, nil},
		{"/things/%2F", items, map[string]string{"id": "/"}},
		{"/nothing/here", nil, nil},
		{strings.Repeat("/things", maxSegments+1), nil, nil},
	}
	for _, tt := range tests {
		got, p := rt.match(tt.path)
		if got != tt.want {
			t.Errorf("%q: matched %v, want %v", tt.path, got, tt.want)
			continue
		}
		for name, want := range tt.params {
			if v := p.get(name); v != want {
				t.Errorf("%q: %s = %q, want %q", tt.path, name, v, want)
			}
		}
	}
	if n := testing.AllocsPerRun(100, func() { rt.match("/subs/esb_1/sources/api_key_created.v0") }); n != 0 {
		t.Errorf("%v allocations to match a path without escapes, want 0", n)
	}
}

// TestResourcesRegistered checks that the server registers every resource
// the description lists, under its name and prefix, and that ids fit the
// filter cost bounds.
func TestResourcesRegistered(t *testing.T) {
	t.Parallel()
	srv := Start(t, WithoutListener())
	if len(srv.resByKind) != len(resources.All()) {
		t.Errorf("%d resources registered, %d described", len(srv.resByKind), len(resources.All()))
	}
	for _, d := range resources.All() {
		info := srv.resByKind[d.Name]
		if info == nil {
			t.Errorf("%s: not registered", d.Name)
			continue
		}
		if info.prefix != d.Prefix {
			t.Errorf("%s: prefix %q, described %q", d.Name, info.prefix, d.Prefix)
		}
		// Filter cost bounds rely on maxIDLen (see fieldSize).
		if n := len(d.Prefix) + 1 + 27; n > maxIDLen {
			t.Errorf("%s: ids of %d characters, more than maxIDLen", d.Name, n)
		}
	}
}

// TestNamesUnderConcurrency runs creates, renames and deletes of a few
// names from several goroutines, with snapshots restored in between, and
// checks that the names the server holds are exactly those its store
// holds. Run it with -race.
func TestNamesUnderConcurrency(t *testing.T) {
	t.Parallel()
	srv := Start(t, WithoutListener())
	users := account.NewServiceUsers(srv.Client())
	ctx := t.Context()
	snap := srv.Snapshot()
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Go(func() {
			for i := range 60 {
				name := fmt.Sprintf("n%d", (g+i)%5)
				switch i % 4 {
				case 0, 1:
					if u, err := users.Create(ctx, &account.ServiceUserCreate{Name: name}); err == nil && i%8 == 1 {
						other := fmt.Sprintf("n%d", (g+i+1)%5)
						_, _ = users.Update(ctx, &account.ServiceUserUpdate{ID: u.ID, Name: &other})
					}
				case 2:
					for u, err := range users.List(ctx, nil) {
						if err != nil {
							break
						}
						if u.Name == name {
							_ = users.Delete(ctx, u.ID)
						}
					}
				case 3:
					if g == 0 {
						srv.Restore(snap)
						snap = srv.Snapshot()
					}
				}
			}
		})
	}
	wg.Wait()
	if err := srv.db.CheckUnique(); err != nil {
		t.Error(err)
	}
	seen := map[string]bool{}
	for _, u := range List[account.ServiceUser](srv, "") {
		if seen[u.Name] {
			t.Errorf("two service users named %q", u.Name)
		}
		seen[u.Name] = true
	}
}

// TestSelectorsCompiledBeforeWrite: an operator's endpoint selectors are
// compiled and checked in validation, before the write transaction, so
// that compiling does not hold up other writes (issue 12, item 3). A write
// transaction is held open here while operator requests with selectors
// that cannot compile, or cost too much, are answered 400; had compiling
// moved into the write transaction, they would wait for it, and this test
// would hang until go test's -timeout, whose stack dump shows where.
func TestSelectorsCompiledBeforeWrite(t *testing.T) {
	t.Parallel()
	srv := Start(t, WithoutListener())
	op, err := Seed[*k8sop.Operator](srv, "", &k8sop.OperatorCreate{EnabledFeatures: []string{"bindings"},
		Binding: &k8sop.BindingCreate{EndpointSelectors: []string{"true"}}})
	if err != nil {
		t.Fatal(err)
	}
	held, release := make(chan struct{}), make(chan struct{})
	writeDone := make(chan error, 1)
	go func() {
		writeDone <- srv.db.Write(func(*store.Txn) error {
			close(held)
			<-release
			return nil
		})
	}()
	<-held
	// A member the selector environment does not declare is found only by
	// compiling (type-checking) the selector; so is a syntax error.
	for _, sel := range []string{`endpoint.nope == "x"`, `endpoint.url ==`} {
		body := `{"enabled_features":["bindings"],"binding":{"endpoint_selectors":["true", ` + strconv.Quote(sel) + `]}}`
		for _, method := range []string{"POST", "PATCH"} {
			path := "/kubernetes_operators"
			if method == "PATCH" {
				path += "/" + op.ID
			}
			req := httptest.NewRequest(method, path, strings.NewReader(body))
			req.Header.Set("Authorization", "Bearer "+srv.APIKey())
			req.Header.Set("Service-Version", "2")
			req.Header.Set("Content-Type", "application/json")
			w := httptest.NewRecorder()
			srv.ServeHTTP(w, req)
			if w.Code != http.StatusBadRequest || !strings.Contains(w.Body.String(), `"field":"binding.endpoint_selectors[1]"`) {
				t.Errorf("%s with selector %.40q while a write is held: %d %s", method, sel, w.Code, w.Body)
			}
		}
	}
	close(release)
	if err := <-writeDone; err != nil {
		t.Fatal(err)
	}
}

// TestWriteChecksKeyAgain pins a review's finding: a request
// authenticates in one snapshot of the store and writes in a later one,
// so a Restore or Reset in between (which removed its key, or its whole
// account) let it write, or answered 500 ("no usage of account"). A write
// now begins only if the request's key is still there: else 401.
func TestWriteChecksKeyAgain(t *testing.T) {
	t.Parallel()
	srv := Start(t, WithoutListener())
	req := httptest.NewRequest("POST", "/service_users", nil)
	req.Header.Set("Authorization", "Bearer "+srv.APIKey())
	c := &call{s: srv, r: req, now: srv.now()}
	if err := srv.authenticate(c); err != nil {
		t.Fatal(err)
	}
	begin := func() error {
		return srv.db.Write(func(tx *store.Txn) error { return c.op().begin(tx) })
	}
	if err := begin(); err != nil {
		t.Fatalf("a write by a key that authenticates: %v", err)
	}
	snap := srv.Snapshot()
	acct, err := srv.AddAccount(Account{})
	if err != nil {
		t.Fatal(err)
	}
	key := acct.APIKeys[0]
	req.Header.Set("Authorization", "Bearer "+key)
	c.hasRead = false // a read of the store as it is now
	if err := srv.authenticate(c); err != nil {
		t.Fatal(err)
	}
	srv.Restore(snap) // the account, and its key, are gone
	var e *apiError
	if err := begin(); !errors.As(err, &e) || e.status != http.StatusUnauthorized || e.code != acctapi.CodeInvalidToken {
		t.Errorf("a write by a key a Restore removed: %v; want 401 %s", err, acctapi.CodeInvalidToken)
	}
}

// TestCloseEndsDrains: Close ends the drains of refused bodies (see
// iox.DrainBody) before it waits for requests in flight, which a stalled
// client would otherwise hold for iox.DrainWait.
func TestCloseEndsDrains(t *testing.T) {
	t.Parallel()
	s, err := New()
	if err != nil {
		t.Fatal(err)
	}
	stop := s.drainStop()
	if stop.Err() != nil {
		t.Fatal("the drains' context ended before Close")
	}
	s.Close()
	if stop.Err() == nil {
		t.Error("Close left the drains' context running")
	}
}
