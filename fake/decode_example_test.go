package fake_test

import (
	"errors"
	"fmt"
	"net/http"
	"strings"

	"github.com/acctapi/acctapi"
	"github.com/acctapi/acctapi/fake"
)

// A handler of your own, mounted beside the fake, reads its bodies as
// strictly as the fake reads the API's, with the contract's errors.
func ExampleServer_DecodeBody() {
	srv, err := fake.New(fake.WithoutListener())
	if err != nil {
		fmt.Println(err)
		return
	}
	defer srv.Close()
	var in struct {
		Status int               `json:"status"`
		Labels map[string]string `json:"labels"`
	}
	for _, body := range []string{`{"status":503}`, `{"status":1,"status":2}`, `{"labels":{"env":5}}`} {
		r, _ := http.NewRequest("POST", "/", strings.NewReader(body))
		r.Header.Set("Content-Type", "application/json")
		var e *acctapi.Error
		if err := srv.DecodeBody(r, &in); errors.As(err, &e) {
			fmt.Println(e.StatusCode, e.ErrorCode, e.Details["field"])
		} else {
			fmt.Println("ok", in.Status)
		}
	}
	// Output:
	// ok 503
	// 400 ERR_NGROK_213 status
	// 400 ERR_NGROK_215 labels.env
}
