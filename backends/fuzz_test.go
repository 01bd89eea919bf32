package backends_test

import (
	"testing"

	"github.com/acctapi/acctapi/backends"
	"github.com/acctapi/acctapi/internal/apitest"
)

func FuzzRequests(f *testing.F) {
	apitest.FuzzRequests(f, []func() apitest.Validator{
		apitest.New[backends.FailoverCreate],
		apitest.New[backends.FailoverUpdate],
		apitest.New[backends.HTTPResponseCreate],
		apitest.New[backends.HTTPResponseUpdate],
		apitest.New[backends.TunnelGroupCreate],
		apitest.New[backends.TunnelGroupUpdate],
	},
		`{"description":"fo","backends":["bkdhr_1","bkdtg_1"]}`,
		`{"id":"bkdfo_1","backends":[]}`,
		`{"status_code":418,"body":"I'm a teapot","headers":{"content-type":"text/plain"}}`,
		`{"id":"bkdhr_1","status_code":null,"headers":{}}`,
		`{"labels":{"app":"api","dc":"eu"},"metadata":"{}"}`,
		`{"id":"bkdtg_1","labels":{"":"x"}}`,
		`{"backends":["a","a"]}`,
	)
}
