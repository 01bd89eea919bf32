package backends_test

import (
	"fmt"
	"testing"

	"github.com/acctapi/acctapi"
	"github.com/acctapi/acctapi/backends"
	"github.com/acctapi/acctapi/internal/apitest"
)

// labels is a valid label set.
var labels = map[string]string{"app": "api"}

func TestValidateAnnotations(t *testing.T) {
	apitest.RunAnnotations(t, []apitest.Annotated{
		{"FailoverCreate", func(d, m string) apitest.Validator { return &backends.FailoverCreate{Description: d, Metadata: m} }},
		{"FailoverUpdate", func(d, m string) apitest.Validator {
			return &backends.FailoverUpdate{ID: "bkdfo_1", Description: &d, Metadata: &m}
		}},
		{"HTTPResponseCreate", func(d, m string) apitest.Validator {
			return &backends.HTTPResponseCreate{Description: d, Metadata: m, StatusCode: 200}
		}},
		{"HTTPResponseUpdate", func(d, m string) apitest.Validator {
			return &backends.HTTPResponseUpdate{ID: "bkdhr_1", Description: &d, Metadata: &m}
		}},
		{"TunnelGroupCreate", func(d, m string) apitest.Validator {
			return &backends.TunnelGroupCreate{Description: d, Metadata: m, Labels: labels}
		}},
		{"TunnelGroupUpdate", func(d, m string) apitest.Validator {
			return &backends.TunnelGroupUpdate{ID: "bkdtg_1", Description: &d, Metadata: &m}
		}},
	})
}

func TestValidateFailover(t *testing.T) {
	invalid := func(field string) []string { return []string{field + " " + acctapi.CodeInvalidValue} }
	apitest.RunValidate(t, []apitest.ValidateCase{
		{"create: no backends", &backends.FailoverCreate{}, nil},
		{"create: empty backends", &backends.FailoverCreate{Backends: []string{}}, nil},
		{"create: one backend", &backends.FailoverCreate{Backends: []string{"bkdhr_1"}}, nil},
		{"create: two backends", &backends.FailoverCreate{Backends: []string{"bkdhr_1", "bkdtg_1"}}, nil},
		{"create: empty id", &backends.FailoverCreate{Backends: []string{"bkdhr_1", ""}}, invalid("backends[1]")},
		{"create: duplicate", &backends.FailoverCreate{Backends: []string{"bkdhr_1", "bkdtg_1", "bkdhr_1"}}, invalid("backends[2]")},
		{"create: same id three times", &backends.FailoverCreate{Backends: []string{"a", "a", "a"}},
			[]string{"backends[1] " + acctapi.CodeInvalidValue, "backends[2] " + acctapi.CodeInvalidValue}},
		{"update: nothing", &backends.FailoverUpdate{ID: "bkdfo_1"}, nil},
		{"update: clear backends", &backends.FailoverUpdate{ID: "bkdfo_1", Backends: &[]string{}}, nil},
		{"update: duplicate", &backends.FailoverUpdate{ID: "bkdfo_1", Backends: &[]string{"x", "x"}}, invalid("backends[1]")},
		{"update: itself", &backends.FailoverUpdate{ID: "bkdfo_1", Backends: &[]string{"bkdhr_1", "bkdfo_1"}}, invalid("backends[1]")},
		{"update: no id, empty backend id", &backends.FailoverUpdate{Backends: &[]string{""}}, invalid("backends[0]")},
	})
}

func TestValidateHTTPResponse(t *testing.T) {
	badStatus := []string{"status_code " + acctapi.CodeInvalidValue}
	apitest.RunValidate(t, []apitest.ValidateCase{
		{"create: no status code", &backends.HTTPResponseCreate{}, badStatus},
		{"create: status 99", &backends.HTTPResponseCreate{StatusCode: 99}, badStatus},
		{"create: status 100", &backends.HTTPResponseCreate{StatusCode: 100}, nil},
		{"create: status 599", &backends.HTTPResponseCreate{StatusCode: 599}, nil},
		{"create: status 600", &backends.HTTPResponseCreate{StatusCode: 600}, badStatus},
		{"create: negative status", &backends.HTTPResponseCreate{StatusCode: -200}, badStatus},
		{"create: headers", &backends.HTTPResponseCreate{StatusCode: 418,
			Headers: map[string]string{"Content-Type": "text/plain", "X-Empty": "", "x!#$%&'*+-.^_`|~9": "ok"}}, nil},
		{"create: bad headers", &backends.HTTPResponseCreate{StatusCode: 418,
			Headers: map[string]string{"": "v", "Bad Name": "v", "X-Split": "a\r\nSet-Cookie: x", "Ök": "v", "X-Nul": "\x00"}},
			[]string{"headers. " + acctapi.CodeInvalidValue, "headers.Bad Name " + acctapi.CodeInvalidValue,
				"headers.X-Nul " + acctapi.CodeInvalidValue, "headers.X-Split " + acctapi.CodeInvalidValue,
				"headers.Ök " + acctapi.CodeInvalidValue}},
		{"update: nothing", &backends.HTTPResponseUpdate{ID: "bkdhr_1"}, nil},
		{"update: body and no headers", &backends.HTTPResponseUpdate{Body: apitest.Ptr(""), Headers: &map[string]string{}}, nil},
		{"update: status 0", &backends.HTTPResponseUpdate{StatusCode: apitest.Ptr(0)}, badStatus},
		{"update: status 99", &backends.HTTPResponseUpdate{StatusCode: apitest.Ptr(99)}, badStatus},
		{"update: status 100", &backends.HTTPResponseUpdate{StatusCode: apitest.Ptr(100)}, nil},
		{"update: status 599", &backends.HTTPResponseUpdate{StatusCode: apitest.Ptr(599)}, nil},
		{"update: status 600", &backends.HTTPResponseUpdate{StatusCode: apitest.Ptr(600)}, badStatus},
		{"update: bad header", &backends.HTTPResponseUpdate{Headers: &map[string]string{"a:b": "c"}},
			[]string{"headers.a:b " + acctapi.CodeInvalidValue}},
		// Each separator on its own, so that no rule hides behind another.
		{"update: a bare CR or LF in a value", &backends.HTTPResponseUpdate{Headers: &map[string]string{"X-Cr": "a\rb", "X-Lf": "a\nb"}},
			[]string{"headers.X-Cr " + acctapi.CodeInvalidValue, "headers.X-Lf " + acctapi.CodeInvalidValue}},
		{"update: braces in a name", &backends.HTTPResponseUpdate{Headers: &map[string]string{"X{A": "v", "X}A": "v"}},
			[]string{"headers.X{A " + acctapi.CodeInvalidValue, "headers.X}A " + acctapi.CodeInvalidValue}},
	})
}

func TestValidateTunnelGroup(t *testing.T) {
	invalid := func(field string) []string { return []string{field + " " + acctapi.CodeInvalidValue} }
	apitest.RunValidate(t, []apitest.ValidateCase{
		{"create: no labels", &backends.TunnelGroupCreate{}, invalid("labels")},
		{"create: empty labels", &backends.TunnelGroupCreate{Labels: map[string]string{}}, invalid("labels")},
		{"create: one label", &backends.TunnelGroupCreate{Labels: labels}, nil},
		{"create: one-byte key and value", &backends.TunnelGroupCreate{Labels: map[string]string{"a": "b"}}, nil},
		{"create: empty key", &backends.TunnelGroupCreate{Labels: map[string]string{"": "api"}}, invalid("labels")},
		{"create: empty value", &backends.TunnelGroupCreate{Labels: map[string]string{"app": "api", "dc": ""}}, invalid("labels.dc")},
		{"update: labels unchanged", &backends.TunnelGroupUpdate{ID: "bkdtg_1"}, nil},
		{"update: one label", &backends.TunnelGroupUpdate{Labels: &labels}, nil},
		{"update: no labels", &backends.TunnelGroupUpdate{Labels: &map[string]string{}}, invalid("labels")},
		{"update: a pointer to a nil map is sent as {}", &backends.TunnelGroupUpdate{Labels: new(map[string]string)}, invalid("labels")},
		{"update: empty value", &backends.TunnelGroupUpdate{Labels: &map[string]string{"app": ""}}, invalid("labels.app")},
		{"update: empty key", &backends.TunnelGroupUpdate{Labels: &map[string]string{"": "api"}}, invalid("labels")},
		{"update: one-byte key and value", &backends.TunnelGroupUpdate{Labels: &map[string]string{"a": "b"}}, nil},
	})
}

// TestValidateBounds checks each collection's bound, at it and one past
// it, on create and update: one error on the collection, whatever its
// members hold (101 empty ids are one error, not 101).
func TestValidateBounds(t *testing.T) {
	ids := func(n int) []string {
		out := make([]string, n)
		for i := range out {
			out[i] = fmt.Sprintf("bkdhr_%d", i)
		}
		return out
	}
	strs := func(n int, key string) map[string]string {
		out := map[string]string{}
		for i := range n {
			out[fmt.Sprintf(key, i)] = "v"
		}
		return out
	}
	over := backends.MaxFailoverBackends + 1
	tooManyIDs, empties := ids(over), make([]string, over)
	tooManyHeaders, tooManyLabels := strs(backends.MaxHeaders+1, "X-H%d"), strs(backends.MaxLabels+1, "l%d")
	badHeaders := strs(backends.MaxHeaders+1, "bad header %d")
	apitest.RunValidate(t, []apitest.ValidateCase{
		{"failover create: at the bound", &backends.FailoverCreate{Backends: ids(backends.MaxFailoverBackends)}, nil},
		{"failover create: past it", &backends.FailoverCreate{Backends: tooManyIDs}, []string{"backends " + acctapi.CodeInvalidValue}},
		{"failover create: past it, all empty", &backends.FailoverCreate{Backends: empties}, []string{"backends " + acctapi.CodeInvalidValue}},
		{"failover update: past it", &backends.FailoverUpdate{ID: "bkdfo_1", Backends: &tooManyIDs}, []string{"backends " + acctapi.CodeInvalidValue}},
		{"http response create: at the bound", &backends.HTTPResponseCreate{StatusCode: 200, Headers: strs(backends.MaxHeaders, "X-H%d")}, nil},
		{"http response create: past it", &backends.HTTPResponseCreate{StatusCode: 200, Headers: tooManyHeaders}, []string{"headers " + acctapi.CodeInvalidValue}},
		{"http response create: past it, all bad", &backends.HTTPResponseCreate{StatusCode: 200, Headers: badHeaders}, []string{"headers " + acctapi.CodeInvalidValue}},
		{"http response update: past it", &backends.HTTPResponseUpdate{ID: "bkdhr_1", Headers: &tooManyHeaders}, []string{"headers " + acctapi.CodeInvalidValue}},
		{"tunnel group create: at the bound", &backends.TunnelGroupCreate{Labels: strs(backends.MaxLabels, "l%d")}, nil},
		{"tunnel group create: past it", &backends.TunnelGroupCreate{Labels: tooManyLabels}, []string{"labels " + acctapi.CodeLabelCountLimit}},
		{"tunnel group update: past it", &backends.TunnelGroupUpdate{ID: "bkdtg_1", Labels: &tooManyLabels}, []string{"labels " + acctapi.CodeLabelCountLimit}},
	})
}
