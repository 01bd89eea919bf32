package fake_test

import (
	"fmt"

	"github.com/acctapi/acctapi/fake"
)

// ParsePattern parses a path pattern once, to match it against many
// paths; it refuses a malformed pattern and one longer than
// MaxPatternBytes.
func ExampleParsePattern() {
	pat, err := fake.ParsePattern("/backends/*/bkd??_*")
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, p := range []string{"/backends/failover/bkdfo_1", "/backends/failover", "/backends/a/b/bkdfo_1"} {
		fmt.Println(p, pat.Match(p))
	}
	_, err = fake.ParsePattern("/service_users/[")
	fmt.Println(err)
	// Output:
	// /backends/failover/bkdfo_1 true
	// /backends/failover false
	// /backends/a/b/bkdfo_1 false
	// fake: pattern "/service_users/[": syntax error in pattern
}
