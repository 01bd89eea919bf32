package backends_test

import (
	"context"
	"fmt"

	"github.com/acctapi/acctapi"
	"github.com/acctapi/acctapi/backends"
	"github.com/acctapi/acctapi/internal/apitest"
)

func ExampleFailovers_Update() {
	c, stop := apitest.ExampleClient(`{"id": "bkdfo_2NTVHYnzFxFqwDLTxk1FtSX9NZn", "uri": "https://api.example/backends/failover/bkdfo_2NTVHYnzFxFqwDLTxk1FtSX9NZn", "created_at": "2023-03-24T19:59:31Z",
		"backends": ["bkdhr_2", "bkdtg_1"]}`)
	defer stop()

	order := []string{"bkdhr_2", "bkdtg_1"}
	fo, err := backends.NewFailovers(c).Update(context.Background(), &backends.FailoverUpdate{
		ID:       "bkdfo_2NTVHYnzFxFqwDLTxk1FtSX9NZn",
		Backends: &order, // nil would leave the order unchanged
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(fo.Backends)
	// Output: [bkdhr_2 bkdtg_1]
}

func ExampleHTTPResponses_Get() {
	c, stop := apitest.ExampleClient(`{"id": "bkdhr_2NTVHYH5DazW3TpsD1Qb2tl9yad", "uri": "https://api.example/backends/http_response/bkdhr_2NTVHYH5DazW3TpsD1Qb2tl9yad", "body": "I'm a teapot",
		"headers": {"content-type": "text/plain"}, "status_code": 418, "created_at": "2023-03-24T19:59:31Z"}`)
	defer stop()

	hr, err := backends.NewHTTPResponses(c).Get(context.Background(), "bkdhr_2NTVHYH5DazW3TpsD1Qb2tl9yad")
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(hr.StatusCode, hr.Headers["content-type"], hr.Body)
	// Output: 418 text/plain I'm a teapot
}

func ExampleTunnelGroups_List() {
	c, stop := apitest.ExampleClient(`{"backends": [{"id": "bkdtg_1", "labels": {"app": "api"},
		"tunnels": [{"id": "tn_1", "uri": "https://api.example/tunnels/tn_1"}], "created_at": "2023-03-24T19:59:30Z"}],
		"uri": "https://api.example/backends/tunnel_group", "next_page_uri": null}`)
	defer stop()

	opts := &acctapi.FilterOptions{Filter: `obj.description == ""`}
	for tg, err := range backends.NewTunnelGroups(c).List(context.Background(), opts) {
		if err != nil {
			fmt.Println(err)
			return
		}
		fmt.Println(tg.ID, tg.Labels, len(tg.Tunnels))
	}
	// Output: bkdtg_1 map[app:api] 1
}

func ExampleHTTPResponseCreate_Validate() {
	r := &backends.HTTPResponseCreate{StatusCode: 600, Headers: map[string]string{"Bad Name": "x"}}
	for _, fe := range acctapi.FieldErrors(r.Validate()) {
		fmt.Println(fe)
	}
	// Output:
	// acctapi: headers.Bad Name: is not a valid header name
	// acctapi: status_code: is 600; must be from 100 to 599
}

// A tunnel group matches on at most MaxLabels labels; more are refused
// before anything is sent, with the real service's label count code.
func ExampleCheckLabels() {
	labels := map[string]string{}
	for i := range backends.MaxLabels + 1 {
		labels[fmt.Sprintf("l%03d", i)] = "v"
	}
	err := backends.CheckLabels(labels)
	fmt.Println(err)
	fmt.Println(acctapi.HasCode(err, acctapi.CodeLabelCountLimit))
	// Output:
	// acctapi: labels: has 101 labels; at most 100 are allowed
	// true
}
