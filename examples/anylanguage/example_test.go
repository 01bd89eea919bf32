package anylanguage_test

import (
	"fmt"
	"os"

	"github.com/acctapi/acctapi/account"
	"github.com/acctapi/acctapi/backends"
	"github.com/acctapi/acctapi/fake"
)

// fixtures.json is what acctfake -fixtures loads; the same file loads into
// an in-process fake with LoadFixtures.
func Example_fixtures() {
	srv, err := fake.New(fake.WithoutListener())
	if err != nil {
		fmt.Println(err)
		return
	}
	defer srv.Close()
	f, err := os.Open("fixtures.json")
	if err != nil {
		fmt.Println(err)
		return
	}
	defer f.Close()
	if err := srv.LoadFixtures(f); err != nil {
		fmt.Println(err)
		return
	}

	users := fake.List[account.ServiceUser](srv, "")
	for _, u := range users {
		fmt.Println("service user:", u.Name)
	}
	for _, k := range fake.List[account.APIKey](srv, "") {
		if k.Description == "from fixtures" {
			fmt.Println("api key owned by the service user:", k.OwnerID == users[0].ID)
		}
	}
	for _, f := range fake.List[backends.Failover](srv, "") {
		b, _ := fake.Get[backends.HTTPResponse](srv, "", f.Backends[0])
		fmt.Println("failover", f.Description, "over:", b.Description, b.StatusCode)
	}
	for _, u := range fake.List[account.ServiceUser](srv, "ac_other") {
		fmt.Println("other account's service user:", u.Name)
	}
	// Output:
	// service user: fixture-bot
	// api key owned by the service user: true
	// failover fallback over: maintenance page 503
	// other account's service user: other-team
}
