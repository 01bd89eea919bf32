package fake_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/acctapi/acctapi"
	"github.com/acctapi/acctapi/account"
	"github.com/acctapi/acctapi/backends"
	"github.com/acctapi/acctapi/fake"
)

// In a test, start the fake with one line, srv := fake.Start(t), which
// closes it when the test ends; New is the same for code without a
// testing.TB. Client returns a ready client of the server's first account.
func ExampleNew() {
	clock := fake.NewManualClock(time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC))
	srv, err := fake.New(fake.WithoutListener(), fake.WithClock(clock), fake.WithIDSeed(1))
	if err != nil {
		fmt.Println(err)
		return
	}
	defer srv.Close()

	u, err := account.NewServiceUsers(srv.Client()).Create(context.Background(), &account.ServiceUserCreate{Name: "ci"})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(u.Name, u.Active, u.CreatedAt.Format(time.RFC3339))
	fmt.Println(strings.HasPrefix(u.ID, "service_"), u.URI == srv.URL+"/service_users/"+u.ID)
	// Output:
	// ci true 2026-01-02T03:04:05Z
	// true true
}

// Seed creates resources without HTTP, through the API's own validation;
// tunnels and endpoints, which have no API path, are seeded too. Get and
// List inspect the store.
func ExampleSeed() {
	srv, err := fake.New(fake.WithoutListener(), fake.WithIDSeed(1))
	if err != nil {
		fmt.Println(err)
		return
	}
	defer srv.Close()

	tn, err := fake.Seed[fake.Tunnel](srv, "", &fake.Tunnel{Labels: map[string]string{"app": "web"}})
	if err != nil {
		fmt.Println(err)
		return
	}
	g, err := fake.Seed[backends.TunnelGroup](srv, "", &backends.TunnelGroupCreate{Labels: map[string]string{"app": "web"}})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(len(g.Tunnels), g.Tunnels[0].ID == tn.ID)

	// Invalid input is refused, naming the field.
	_, err = fake.Seed[backends.HTTPResponse](srv, "", &backends.HTTPResponseCreate{StatusCode: 700})
	fmt.Println(strings.Contains(err.Error(), "status_code"))

	got, ok := fake.Get[backends.TunnelGroup](srv, "", g.ID)
	fmt.Println(ok, got.Labels["app"], len(fake.List[fake.Tunnel](srv, "")))
	// Output:
	// 1 true
	// true
	// true web 1
}

// FailNext makes the next requests fail; the client sees the status and
// the contract's error body.
func ExampleServer_FailNext() {
	srv, err := fake.New(fake.WithoutListener(), fake.WithIDSeed(1))
	if err != nil {
		fmt.Println(err)
		return
	}
	defer srv.Close()
	srv.FailNext(http.MethodPost, "/service_users", 1, http.StatusServiceUnavailable)

	users := account.NewServiceUsers(srv.Client()) // retries off
	_, err = users.Create(context.Background(), &account.ServiceUserCreate{Name: "ci"})
	var apiErr *acctapi.Error
	if errors.As(err, &apiErr) {
		fmt.Println(apiErr.StatusCode, apiErr.ErrorCode, apiErr.Msg)
	}
	// The fault is spent: the next request is served.
	u, err := users.Create(context.Background(), &account.ServiceUserCreate{Name: "ci"})
	fmt.Println(u.Name, err)
	// Output:
	// 503 ERR_ACCTAPI_UNAVAILABLE Injected fault: Service Unavailable.
	// ci <nil>
}

// FaultNext injects a fault with its own error code and message; like
// every fault helper it returns a function that removes the fault, and it
// refuses, when added, a method or path pattern that the fake never
// serves (CheckTarget says why, the helpers panic).
func ExampleServer_FaultNext() {
	srv, err := fake.New(fake.WithoutListener(), fake.WithIDSeed(1))
	if err != nil {
		fmt.Println(err)
		return
	}
	defer srv.Close()
	srv.FaultNext(http.MethodDelete, "/api_keys/*", 1, fake.Fault{Status: http.StatusConflict, Code: "ERR_NGROK_999", Msg: "Key in use."})
	err = account.NewAPIKeys(srv.Client()).Delete(context.Background(), "ak_1")
	var apiErr *acctapi.Error
	if errors.As(err, &apiErr) {
		fmt.Println(apiErr.StatusCode, apiErr.ErrorCode, apiErr.Msg)
	}

	remove := srv.FailNext(http.MethodGet, "/service_users/*", 1, http.StatusServiceUnavailable)
	remove() // not used after all

	fmt.Println(srv.CheckTarget("get", "/service_users/*"))
	fmt.Println(srv.CheckTarget(http.MethodGet, "/service_user/*"))
	// Output:
	// 409 ERR_NGROK_999 Key in use.
	// fake: method "get" is not one the fake serves (DELETE, GET, PATCH, POST), or "" or "*" for any
	// fake: pattern "/service_user/*" matches no path the fake serves with GET (such as "/service_users", "/service_users/*", "/backends/**", "/**")
}

// MatchPath is how fault patterns match request paths.
func ExampleMatchPath() {
	for _, p := range []string{"/service_users/service_1", "/service_users", "/backends/failover/bkdfo_1"} {
		one, _ := fake.MatchPath("/service_users/*", p)
		deep, _ := fake.MatchPath("/backends/**", p)
		fmt.Println(p, one, deep)
	}
	_, err := fake.MatchPath("service_users/*", "/service_users/x")
	fmt.Println(err)
	// Output:
	// /service_users/service_1 true false
	// /service_users false false
	// /backends/failover/bkdfo_1 false true
	// fake: pattern "service_users/*" does not start with /
}

// DropAfterNext loses the answer to a request that took effect: the case
// in which a client that retried a POST would create twice. The journal
// marks the dropped answer.
func ExampleServer_DropAfterNext() {
	srv, err := fake.New(fake.WithoutListener(), fake.WithIDSeed(1))
	if err != nil {
		fmt.Println(err)
		return
	}
	defer srv.Close()
	srv.DropAfterNext(http.MethodPost, "/service_users", 1)

	_, err = account.NewServiceUsers(srv.Client()).Create(context.Background(), &account.ServiceUserCreate{Name: "ci"})
	fmt.Println(err != nil, len(fake.List[account.ServiceUser](srv, "")))
	e := srv.Journal()[0]
	fmt.Println(e.Method, e.Path, e.Status, e.Dropped)
	// Output:
	// true 1
	// POST /service_users 201 true
}

// ClientFor acts with another key: here one of a second account, which
// cannot see the first account's resources.
func ExampleServer_ClientFor() {
	srv, err := fake.New(fake.WithoutListener(), fake.WithIDSeed(1), fake.WithAccount(fake.Account{}), fake.WithAccount(fake.Account{}))
	if err != nil {
		fmt.Println(err)
		return
	}
	defer srv.Close()
	ctx := context.Background()
	u, err := account.NewServiceUsers(srv.Client()).Create(ctx, &account.ServiceUserCreate{Name: "ci"})
	if err != nil {
		fmt.Println(err)
		return
	}
	other, err := srv.ClientFor(srv.Accounts()[1].APIKeys[0])
	if err != nil {
		fmt.Println(err)
		return
	}
	_, err = account.NewServiceUsers(other).Get(ctx, u.ID)
	fmt.Println(acctapi.IsNotFound(err))
	// Output:
	// true
}

// React installs a reactor of your own, which can answer any request
// before the server does.
func ExampleServer_React() {
	srv, err := fake.New(fake.WithoutListener(), fake.WithIDSeed(1))
	if err != nil {
		fmt.Println(err)
		return
	}
	defer srv.Close()
	remove := srv.React("GET", "/service_users/*", func(r *http.Request) *fake.Fault {
		return &fake.Fault{Status: http.StatusForbidden, Code: "ERR_EXAMPLE", Msg: "Not today."}
	})

	users := account.NewServiceUsers(srv.Client())
	_, err = users.Get(context.Background(), "service_x")
	fmt.Println(acctapi.HasCode(err, "ERR_EXAMPLE"))
	remove()
	_, err = users.Get(context.Background(), "service_x")
	fmt.Println(acctapi.IsNotFound(err))
	// Output:
	// true
	// true
}

// Journal lists the requests the server answered, with secrets redacted.
func ExampleServer_Journal() {
	clock := fake.NewManualClock(time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC))
	srv, err := fake.New(fake.WithoutListener(), fake.WithClock(clock), fake.WithIDSeed(1))
	if err != nil {
		fmt.Println(err)
		return
	}
	defer srv.Close()
	ctx := context.Background()
	keys := account.NewAPIKeys(srv.Client())
	key, err := keys.Create(ctx, &account.APIKeyCreate{Description: "ci"})
	if err != nil {
		fmt.Println(err)
		return
	}
	clock.Advance(time.Minute)
	_, _ = keys.Get(ctx, "ak_missing")

	for _, e := range srv.Journal() {
		fmt.Println(e.Time.Format(time.TimeOnly), e.Method, e.Path, e.Status, strings.HasPrefix(e.OperationID, "op_"))
	}
	create := srv.Journal()[0]
	fmt.Println(strings.Contains(create.ResponseBody, `"token":"REDACTED"`), strings.Contains(create.ResponseBody, *key.Token))
	// Output:
	// 03:04:05 POST /api_keys 201 true
	// 03:05:05 GET /api_keys/ak_missing 404 true
	// true false
}
