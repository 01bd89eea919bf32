package anylanguage_test

import (
	"fmt"
	"os"
	"slices"

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

	for _, u := range fake.List[account.ServiceUser](srv, "") {
		fmt.Println("service user:", u.Name)
	}
	var keys []string
	for _, k := range fake.List[account.APIKey](srv, "") {
		keys = append(keys, k.Description)
	}
	fmt.Println("api keys:", slices.Contains(keys, "from fixtures"), len(keys)) // and acctfake's own
	for _, b := range fake.List[backends.HTTPResponse](srv, "") {
		fmt.Println("http response backend:", b.Description, b.StatusCode)
	}
	// Output:
	// service user: fixture-bot
	// api keys: true 2
	// http response backend: maintenance page 503
}
