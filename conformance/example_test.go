package conformance_test

import (
	"fmt"
	"net/http"

	"github.com/acctapi/acctapi/conformance"
	"github.com/acctapi/acctapi/fake"
)

// A Target names the server the suite runs against; in a test, pass it to
// conformance.Run(t, target).
func ExampleTarget() {
	srv, err := fake.New(fake.WithoutListener())
	if err != nil {
		panic(err)
	}
	defer srv.Close()
	target := conformance.Target{BaseURL: srv.URL, APIKey: srv.APIKey(), HTTPClient: srv.HTTPClient()}
	fmt.Println(target.BaseURL)
	// Output: http://acctfake.invalid
}

// CheckErrorBody holds any error response to the contract's error body.
func ExampleCheckErrorBody() {
	body := []byte(`{"status_code": 404, "msg": "No API path /nope.", "error_code": "ERR_ACCTAPI_NO_ROUTE", "details": {"operation_id": "op_1"}}`)
	header := http.Header{"Content-Type": {"application/json"}}
	e, err := conformance.CheckErrorBody(http.StatusNotFound, header, body)
	fmt.Println(e.ErrorCode, err)
	_, err = conformance.CheckErrorBody(http.StatusNotFound, header, []byte(`{"status_code": 400, "msg": "x", "error_code": "E", "details": {}}`))
	fmt.Println(err != nil)
	// Output:
	// ERR_ACCTAPI_NO_ROUTE <nil>
	// true
}
