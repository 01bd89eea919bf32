package fake_test

import (
	"context"
	"fmt"

	"github.com/acctapi/acctapi/account"
	"github.com/acctapi/acctapi/fake"
)

// JournalBefore pages through the journal, newest first, with a filter
// that sees each entry without its bodies (they are redacted only for the
// entries yielded): here the failed requests, two at a time.
func ExampleServer_JournalBefore() {
	srv, err := fake.New(fake.WithoutListener(), fake.WithIDSeed(1))
	if err != nil {
		fmt.Println(err)
		return
	}
	defer srv.Close()
	users := account.NewServiceUsers(srv.Client())
	for _, id := range []string{"svc_a", "svc_b", "svc_c"} {
		_, _ = users.Get(context.Background(), id)
	}
	_, _ = users.Create(context.Background(), &account.ServiceUserCreate{Name: "ci"})

	failed := func(e fake.Entry) bool { return e.Status >= 400 }
	before := ""
	for page := 1; ; page++ {
		entries, _ := srv.JournalBefore(before, failed)
		n := 0
		for e := range entries {
			fmt.Println(page, e.Method, e.Path, e.Status)
			before = e.OperationID
			if n++; n == 2 {
				break
			}
		}
		if n < 2 {
			break
		}
	}
	// Output:
	// 1 GET /service_users/svc_c 404
	// 1 GET /service_users/svc_b 404
	// 2 GET /service_users/svc_a 404
}
