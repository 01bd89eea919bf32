package backends_test

import (
	"testing"

	"github.com/acctapi/acctapi/backends"
)

func FuzzRequests(f *testing.F) {
	fuzzRequests(f, []func() validator{
		func() validator { return new(backends.FailoverCreate) },
		func() validator { return new(backends.FailoverUpdate) },
		func() validator { return new(backends.HTTPResponseCreate) },
		func() validator { return new(backends.HTTPResponseUpdate) },
		func() validator { return new(backends.TunnelGroupCreate) },
		func() validator { return new(backends.TunnelGroupUpdate) },
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
