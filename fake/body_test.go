package fake_test

import (
	"net/http"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/acctapi/acctapi"
	"github.com/acctapi/acctapi/account"
	"github.com/acctapi/acctapi/backends"
	"github.com/acctapi/acctapi/fake"
)

// padded returns body followed by white space up to n bytes.
func padded(body string, n int) string {
	return body + strings.Repeat(" ", n-len(body))
}

// TestBodyLimit checks the 1 MiB limit at its edge: a body of exactly
// 1 MiB passes the size check (and is then judged on its content), one
// byte more is 413.
func TestBodyLimit(t *testing.T) {
	t.Parallel()
	srv, _ := start(t)
	tests := []struct {
		name   string
		body   string
		status int
		code   string
	}{
		{"exactly 1 MiB, valid", padded(`{"name":"big"}`, fake.MaxBodyBytes), http.StatusCreated, ""},
		{"exactly 1 MiB, name too long", `{"name":"d` + strings.Repeat("x", fake.MaxBodyBytes-len(`{"name":"d"}`)) + `"}`, http.StatusBadRequest, acctapi.CodeInvalidValue},
		{"1 MiB + 1, white space", padded(`{"name":"big2"}`, fake.MaxBodyBytes+1), http.StatusRequestEntityTooLarge, acctapi.CodeBodyTooLarge},
		{"far over", padded(`{"name":"big3"}`, 3*fake.MaxBodyBytes), http.StatusRequestEntityTooLarge, acctapi.CodeBodyTooLarge},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := raw(t, srv, "POST", "/service_users", nil, tt.body)
			if r.status != tt.status {
				t.Fatalf("status %d, want %d: %.200s", r.status, tt.status, r.body)
			}
			if tt.code != "" && r.apiErr(t).ErrorCode != tt.code {
				t.Errorf("code %s, want %s", r.apiErr(t).ErrorCode, tt.code)
			}
		})
	}
	if n := len(fake.List[account.ServiceUser](srv, "")); n != 1 {
		t.Errorf("%d service users, want the one 1 MiB create", n)
	}
}

// TestPatchBodies checks odd PATCH bodies: an empty body is {}, and JSON
// null members are absent.
func TestPatchBodies(t *testing.T) {
	t.Parallel()
	srv, _ := start(t)
	su := must(fake.Seed[account.ServiceUser](srv, "", &account.ServiceUserCreate{Name: "a"}))(t)
	hr := must(fake.Seed[backends.HTTPResponse](srv, "", &backends.HTTPResponseCreate{StatusCode: 201, Body: "b",
		Headers: map[string]string{"A": "1"}}))(t)
	fo := must(fake.Seed[backends.Failover](srv, "", &backends.FailoverCreate{Backends: []string{hr.ID}}))(t)

	tests := []struct {
		name, path string
		hdr        map[string]string
		body       string
		want       any // what a GET shows afterwards, decoded into its type
	}{
		{"empty body", "/service_users/" + su.ID, nil, "", su},
		{"empty body without content type", "/service_users/" + su.ID, map[string]string{"Content-Type": ""}, "", su},
		{"white space body", "/service_users/" + su.ID, nil, " \n\t", su},
		{"empty object", "/service_users/" + su.ID, nil, "{}", su},
		{"null members", "/service_users/" + su.ID, nil, `{"id":null,"name":null,"active":null}`, su},
		{"null members of a backend", "/backends/http_response/" + hr.ID, nil,
			`{"description":null,"metadata":null,"body":null,"headers":null,"status_code":null}`, hr},
		{"null backends list", "/backends/failover/" + fo.ID, nil, `{"backends":null}`, fo},
		{"id equal to the path", "/service_users/" + su.ID, nil, `{"id":"` + su.ID + `"}`, su},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := raw(t, srv, "PATCH", tt.path, tt.hdr, tt.body)
			if r.status != http.StatusOK {
				t.Fatalf("status %d: %s", r.status, r.body)
			}
			for _, resp := range []response{r, raw(t, srv, "GET", tt.path, nil, "")} {
				switch want := tt.want.(type) {
				case account.ServiceUser:
					var got account.ServiceUser
					resp.decode(t, &got)
					if diff := cmp.Diff(want, got); diff != "" {
						t.Errorf("(-want +got):\n%s", diff)
					}
				case backends.HTTPResponse:
					var got backends.HTTPResponse
					resp.decode(t, &got)
					if diff := cmp.Diff(want, got); diff != "" {
						t.Errorf("(-want +got):\n%s", diff)
					}
				case backends.Failover:
					var got backends.Failover
					resp.decode(t, &got)
					if diff := cmp.Diff(want, got); diff != "" {
						t.Errorf("(-want +got):\n%s", diff)
					}
				}
			}
		})
	}
	// An empty POST body is {} too, and is then validated.
	r := raw(t, srv, "POST", "/backends/failover", map[string]string{"Content-Type": ""}, "")
	if r.status != http.StatusCreated {
		t.Errorf("empty POST body of a failover: %d %s", r.status, r.body)
	}
	r = raw(t, srv, "POST", "/service_users", nil, "")
	if r.status != http.StatusBadRequest || r.apiErr(t).Details["field"] != "name" {
		t.Errorf("empty POST body of a service user: %d %s, want 400 naming name", r.status, r.body)
	}
}

// TestStrictMembers checks what encoding/json alone would let through:
// member names differing only in letter case are unknown members, a member
// given twice is refused, and the check of a body's id comes after its
// members are known.
func TestStrictMembers(t *testing.T) {
	t.Parallel()
	srv, _ := start(t)
	su := must(fake.Seed[account.ServiceUser](srv, "", &account.ServiceUserCreate{Name: "a"}))(t)
	tests := []struct {
		name, method, path, body string
		code, field              string
	}{
		{"capitalized name", "POST", "/service_users", `{"Name":"caps"}`, acctapi.CodeUnknownField, "Name"},
		{"twice", "POST", "/service_users", `{"name":"b","name":"c"}`, acctapi.CodeInvalidJSON, "name"},
		{"nested, other case", "POST", "/backends/http_response", `{"status_code":200,"headers":{"a":"b"},"Body":"x"}`, acctapi.CodeUnknownField, "Body"},
		{"twice in a map", "POST", "/backends/http_response", `{"status_code":200,"headers":{"a":"b","a":"c"}}`, acctapi.CodeInvalidJSON, "headers.a"},
		{"unknown member before a wrong id", "PATCH", "/service_users/" + su.ID, `{"id":"other","nick":"x"}`, acctapi.CodeUnknownField, "nick"},
		{"wrong id", "PATCH", "/service_users/" + su.ID, `{"id":"other"}`, acctapi.CodeInvalidValue, "id"},
		{"id in another case", "PATCH", "/service_users/" + su.ID, `{"ID":"other"}`, acctapi.CodeUnknownField, "ID"},
		{"twice as invalid UTF-8", "POST", "/backends/tunnel_group", "{\"labels\":{\"\xff\":\"a\",\"\xfe\":\"b\"}}", acctapi.CodeInvalidJSON, "labels.\ufffd"},
		{"twice, escaped and not", "POST", "/backends/tunnel_group", "{\"labels\":{\"\xff\":\"a\",\"\\ufffd\":\"b\"}}", acctapi.CodeInvalidJSON, "labels.\ufffd"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := raw(t, srv, tt.method, tt.path, nil, tt.body)
			if r.status != http.StatusBadRequest {
				t.Fatalf("status %d, want 400: %s", r.status, r.body)
			}
			e := r.apiErr(t)
			if e.ErrorCode != tt.code || e.Details["field"] != tt.field {
				t.Errorf("code %s field %q, want %s %q: %s", e.ErrorCode, e.Details["field"], tt.code, tt.field, r.body)
			}
		})
	}
	if diff := cmp.Diff([]string{"a"}, names(fake.List[account.ServiceUser](srv, ""))); diff != "" {
		t.Errorf("service users (-want +got):\n%s", diff)
	}
}

func names(us []account.ServiceUser) []string {
	var out []string
	for _, u := range us {
		out = append(out, u.Name)
	}
	return out
}
