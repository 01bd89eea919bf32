package sdk_test

import (
	"context"
	"fmt"
	"strconv"
	"time"

	"github.com/acctapi/acctapi"
	"github.com/acctapi/acctapi/account"
	"github.com/acctapi/acctapi/fake"
)

// Example is the whole tour: start the fake, create a service user and
// keys for it, list the user's keys with a filter (three pages of two),
// and handle a key that does not exist.
func Example() {
	ctx := context.Background()

	// One line starts the fake on a loopback port (in a test, use
	// fake.Start(t), which also closes it). The seed and the manual clock
	// only make this output repeatable.
	srv, err := fake.New(fake.WithIDSeed(1), fake.WithClock(fake.NewManualClock(time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC))))
	if err != nil {
		fmt.Println(err)
		return
	}
	defer srv.Close()

	// A client as production code builds it, pointed at the fake's URL.
	// (srv.Client() returns the same, with retries off.)
	c, err := acctapi.NewClient(srv.APIKey(), acctapi.WithBaseURL(srv.URL))
	if err != nil {
		fmt.Println(err)
		return
	}
	users := account.NewServiceUsers(c)
	keys := account.NewAPIKeys(c)

	ci, err := users.Create(ctx, &account.ServiceUserCreate{Name: "ci"})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println("created", ci.Name, "active:", ci.Active)

	// Five keys for the service user, and one more for ourselves (the
	// account's user) that the filter below leaves out.
	for i := range 5 {
		if _, err := keys.Create(ctx, &account.APIKeyCreate{OwnerID: ci.ID, Description: fmt.Sprintf("ci-%d", i)}); err != nil {
			fmt.Println(err)
			return
		}
	}
	if _, err := keys.Create(ctx, &account.APIKeyCreate{Description: "laptop"}); err != nil {
		fmt.Println(err)
		return
	}

	// List is an iterator: it fetches the next page when the loop needs
	// it. The filter is CEL over one key, bound to obj; quote values with
	// strconv.Quote. Newest first.
	filter := &acctapi.FilterOptions{Limit: 2, Filter: "obj.owner_id == " + strconv.Quote(ci.ID)}
	for k, err := range keys.List(ctx, filter) {
		if err != nil {
			fmt.Println(err)
			return
		}
		fmt.Println("key", k.Description, "token shown:", k.Token != nil)
	}

	// Errors are *acctapi.Error; the helpers see through wrapping.
	_, err = keys.Get(ctx, "ak_missing")
	if acctapi.IsNotFound(err) {
		fmt.Println("not found:", acctapi.HasCode(err, acctapi.CodeNotFound))
	}
	// Output:
	// created ci active: true
	// key ci-4 token shown: false
	// key ci-3 token shown: false
	// key ci-2 token shown: false
	// key ci-1 token shown: false
	// key ci-0 token shown: false
	// not found: true
}

// Example_pages walks a list one page at a time, as a UI with a "next"
// button would: Page returns one page, and BeforeID asks for the items
// after the last one shown.
func Example_pages() {
	ctx := context.Background()
	srv, err := fake.New(fake.WithoutListener(), fake.WithIDSeed(1))
	if err != nil {
		fmt.Println(err)
		return
	}
	defer srv.Close()
	keys := account.NewAPIKeys(srv.Client())
	for i := range 5 {
		// Seed writes straight to the fake's store, through the API's own
		// validation: quicker than a request when a test only needs data.
		if _, err := fake.Seed[account.APIKey](srv, "", &account.APIKeyCreate{Description: fmt.Sprintf("batch-%d", i)}); err != nil {
			fmt.Println(err)
			return
		}
	}

	opts := &acctapi.FilterOptions{Limit: 2, Filter: `obj.description.startsWith("batch-")`}
	for n := 1; ; n++ {
		page, err := keys.Page(ctx, opts)
		if err != nil {
			fmt.Println(err)
			return
		}
		var descs []string
		for _, k := range page.Keys {
			descs = append(descs, k.Description)
		}
		fmt.Println("page", n, descs, "last:", page.NextPage() == "")
		if page.NextPage() == "" {
			break
		}
		opts.BeforeID = page.Keys[len(page.Keys)-1].ID
	}
	// Output:
	// page 1 [batch-4 batch-3] last: false
	// page 2 [batch-2 batch-1] last: false
	// page 3 [batch-0] last: true
}

// Example_errors shows how to tell errors apart: a missing resource, a
// server-side rule (a taken name), and a request the client refused to
// send because it breaks a rule.
func Example_errors() {
	ctx := context.Background()
	srv, err := fake.New(fake.WithoutListener(), fake.WithIDSeed(1))
	if err != nil {
		fmt.Println(err)
		return
	}
	defer srv.Close()
	users := account.NewServiceUsers(srv.Client())

	if _, err := users.Get(ctx, "service_missing"); acctapi.IsNotFound(err) {
		fmt.Println("missing: not found")
	}

	if _, err := users.Create(ctx, &account.ServiceUserCreate{Name: "deploy"}); err != nil {
		fmt.Println(err)
		return
	}
	_, err = users.Create(ctx, &account.ServiceUserCreate{Name: "deploy"})
	if acctapi.HasCode(err, acctapi.CodeNameTaken) {
		fmt.Println("deploy again: name taken")
	}

	_, err = users.Create(ctx, &account.ServiceUserCreate{Name: ""})
	for _, fe := range acctapi.FieldErrors(err) {
		fmt.Println("empty name: invalid", fe.Field)
	}
	// Output:
	// missing: not found
	// deploy again: name taken
	// empty name: invalid name
}
