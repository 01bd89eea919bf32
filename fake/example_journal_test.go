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

// JournalMatching finds the requests of one method, path pattern and
// status. The pattern is checked against the fake's routes: a typo, or
// another resource's id prefix, is an error rather than an empty answer
// that would let "no key was deleted" pass.
func ExampleServer_JournalMatching() {
	srv, err := fake.New(fake.WithoutListener())
	if err != nil {
		fmt.Println(err)
		return
	}
	defer srv.Close()
	keys := account.NewAPIKeys(srv.Client())
	key, err := keys.Create(context.Background(), &account.APIKeyCreate{Description: "ci"})
	if err != nil {
		fmt.Println(err)
		return
	}
	if err := keys.Delete(context.Background(), key.ID); err != nil {
		fmt.Println(err)
		return
	}

	deletes, err := srv.JournalMatching("DELETE", "/api_keys/*", fake.AnyStatus)
	fmt.Println(len(deletes), err)
	for _, e := range deletes {
		fmt.Println(e.Method, e.Path == "/api_keys/"+key.ID, e.Status)
	}
	_, err = srv.JournalMatching("DELETE", "/api_key/*", fake.AnyStatus)
	fmt.Println(err)
	_, err = srv.JournalMatching("DELETE", "/api_keys/service_*", fake.AnyStatus)
	fmt.Println(err)
	// Output:
	// 1 <nil>
	// DELETE true 204
	// fake: pattern "/api_key/*" matches no path the fake serves with DELETE (such as "/service_users", "/service_users/*", "/backends/**", "/**")
	// fake: pattern "/api_keys/service_*" matches no id of api_keys: their ids start ak_ (and 27 letters and digits), so it matches no path the fake serves with DELETE
}
