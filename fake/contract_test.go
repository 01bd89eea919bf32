package fake_test

import (
	"context"
	"net/http"
	"strings"
	"testing"

	"github.com/acctapi/acctapi"
	"github.com/acctapi/acctapi/account"
	"github.com/acctapi/acctapi/backends"
	"github.com/acctapi/acctapi/fake"
)

// TestErrorTable sends one request for every row of the contract's §2
// table and checks the status, the error code, the body's shape and the
// order of the checks.
func TestErrorTable(t *testing.T) {
	t.Parallel()
	srv, _ := start(t)
	ctx := context.Background()
	inactive, err := fake.Seed[account.ServiceUser](srv, "", &account.ServiceUserCreate{Name: "sleepy"})
	if err != nil {
		t.Fatal(err)
	}
	key, err := account.NewAPIKeys(srv.Client()).Create(ctx, &account.APIKeyCreate{OwnerID: inactive.ID})
	if err != nil {
		t.Fatal(err)
	}
	f := false
	if _, err := account.NewServiceUsers(srv.Client()).Update(ctx, &account.ServiceUserUpdate{ID: inactive.ID, Active: &f}); err != nil {
		t.Fatal(err)
	}
	hr, err := fake.Seed[backends.HTTPResponse](srv, "", &backends.HTTPResponseCreate{StatusCode: 418})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := fake.Seed[backends.Failover](srv, "", &backends.FailoverCreate{Backends: []string{hr.ID}}); err != nil {
		t.Fatal(err)
	}
	if _, err := fake.Seed[account.ServiceUser](srv, "", &account.ServiceUserCreate{Name: "taken"}); err != nil {
		t.Fatal(err)
	}

	tests := []struct {
		name         string
		method, path string
		hdr          map[string]string
		body         string
		status       int
		code         string
	}{
		{"no authorization", "GET", "/service_users", map[string]string{"Authorization": ""}, "", 401, acctapi.CodeNoAuthorization},
		{"not bearer", "GET", "/service_users", map[string]string{"Authorization": "Basic abc"}, "", 401, acctapi.CodeBadAuthorization},
		{"bearer without token", "GET", "/service_users", map[string]string{"Authorization": "Bearer"}, "", 401, acctapi.CodeBadAuthorization},
		{"unknown token", "GET", "/service_users", map[string]string{"Authorization": "Bearer nope"}, "", 401, acctapi.CodeInvalidToken},
		{"auth before routing", "GET", "/no/such/path", map[string]string{"Authorization": "Bearer nope"}, "", 401, acctapi.CodeInvalidToken},
		{"inactive service user", "GET", "/service_users", map[string]string{"Authorization": "Bearer " + *key.Token}, "", 403, acctapi.CodeInactivePrincipal},
		{"no version", "GET", "/service_users", map[string]string{"Service-Version": ""}, "", 400, acctapi.CodeNoVersion},
		{"version 3", "GET", "/service_users", map[string]string{"Service-Version": "3"}, "", 400, acctapi.CodeBadVersion},
		{"version before routing", "GET", "/nowhere", map[string]string{"Service-Version": ""}, "", 400, acctapi.CodeNoVersion},
		{"invalid JSON", "POST", "/service_users", nil, `{"name":`, 400, acctapi.CodeInvalidJSON},
		{"trailing data", "POST", "/service_users", nil, `{"name":"x"} {}`, 400, acctapi.CodeInvalidJSON},
		{"body over 1 MiB", "POST", "/api_keys", nil, `{"description":"` + strings.Repeat("a", fake.MaxBodyBytes) + `"}`, 413, acctapi.CodeBodyTooLarge},
		{"not JSON content type", "POST", "/service_users", map[string]string{"Content-Type": "text/plain"}, `{"name":"x"}`, 415, acctapi.CodeBadContentType},
		{"unknown member", "POST", "/service_users", nil, `{"name":"x","nick":"y"}`, 400, acctapi.CodeUnknownField},
		{"wrong type", "POST", "/service_users", nil, `{"name":5}`, 400, acctapi.CodeInvalidValue},
		{"not an object", "POST", "/service_users", nil, `[1]`, 400, acctapi.CodeInvalidValue},
		{"invalid value", "POST", "/service_users", nil, `{"name":""}`, 400, acctapi.CodeInvalidValue},
		{"description over 255 bytes", "POST", "/api_keys", nil, `{"description":"` + strings.Repeat("é", 128) + `"}`, 400, acctapi.CodeDescriptionTooLong},
		{"metadata over 4096 bytes", "POST", "/api_keys", nil, `{"metadata":"` + strings.Repeat("m", 4097) + `"}`, 400, acctapi.CodeMetadataTooLong},
		{"unknown query parameter", "GET", "/service_users?page=2", nil, "", 400, acctapi.CodeUnknownQueryParam},
		{"filter where none is taken", "GET", "/bot_users?filter=true", nil, "", 400, acctapi.CodeUnknownQueryParam},
		{"query parameter twice", "GET", "/service_users?limit=1&limit=2", nil, "", 400, acctapi.CodeRepeatedQueryParam},
		{"limit 0", "GET", "/service_users?limit=0", nil, "", 400, acctapi.CodeBadLimit},
		{"limit 101", "GET", "/service_users?limit=101", nil, "", 400, acctapi.CodeBadLimit},
		{"limit not a number", "GET", "/service_users?limit=ten", nil, "", 400, acctapi.CodeBadLimit},
		{"filter syntax", "GET", "/api_keys?filter=obj.id%20%3D%3D", nil, "", 400, acctapi.CodeBadFilter},
		{"filter unknown field", "GET", "/api_keys?filter=obj.token%20%3D%3D%20%22x%22", nil, "", 400, acctapi.CodeBadFilter},
		{"filter not boolean", "GET", "/api_keys?filter=obj.description", nil, "", 400, acctapi.CodeBadFilter},
		{"filter contains on id", "GET", "/api_keys?filter=obj.id.contains(%22a%22)", nil, "", 400, acctapi.CodeBadFilter},
		{"no such resource", "GET", "/service_users/service_nope", nil, "", 404, acctapi.CodeNotFound},
		{"unknown path", "GET", "/service_users/x/y", nil, "", 404, acctapi.CodeNoRoute},
		{"method not served", "PUT", "/service_users", nil, `{}`, 405, acctapi.CodeMethodNotAllowed},
		{"name taken", "POST", "/service_users", nil, `{"name":"taken"}`, 409, acctapi.CodeNameTaken},
		{"still referenced", "DELETE", "/backends/http_response/" + hr.ID, nil, "", 409, acctapi.CodeStillReferenced},
		{"unknown reference", "POST", "/backends/failover", nil, `{"backends":["bkdhr_nope"]}`, 400, acctapi.CodeUnknownBackend},
		{"id in body differs from path", "PATCH", "/service_users/" + inactive.ID, nil, `{"id":"service_other"}`, 400, acctapi.CodeInvalidValue},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := raw(t, srv, tt.method, tt.path, tt.hdr, tt.body)
			if r.status != tt.status {
				t.Fatalf("status = %d, want %d; body %s", r.status, tt.status, r.body)
			}
			if ct := r.header.Get("Content-Type"); ct != "application/json" {
				t.Errorf("Content-Type = %q", ct)
			}
			e := r.apiErr(t)
			if e.ErrorCode != tt.code || e.StatusCode != tt.status || e.Msg == "" || !strings.HasPrefix(e.OperationID(), "op_") {
				t.Errorf("body = %+v, want code %s, status %d, a message and an operation id", e, tt.code, tt.status)
			}
			if strings.Contains(string(r.body), srv.APIKey()) || strings.Contains(string(r.body), *key.Token) {
				t.Errorf("error body echoes a token: %s", r.body)
			}
		})
	}
	t.Run("405 names the allowed methods", func(t *testing.T) {
		r := raw(t, srv, "PUT", "/service_users", nil, `{}`)
		if got := r.header.Get("Allow"); got != "GET, POST" {
			t.Errorf("Allow = %q, want %q", got, "GET, POST")
		}
	})
}

// TestNgrokVersionAlias checks that existing clients of the real service,
// which send Ngrok-Version, are served, and that Service-Version wins.
func TestNgrokVersionAlias(t *testing.T) {
	t.Parallel()
	srv, _ := start(t)
	for _, tt := range []struct {
		name   string
		hdr    map[string]string
		status int
	}{
		{"alias alone", map[string]string{"Service-Version": "", "Ngrok-Version": "2"}, 200},
		{"service version wins", map[string]string{"Service-Version": "2", "Ngrok-Version": "9"}, 200},
		{"service version wins when wrong", map[string]string{"Service-Version": "9", "Ngrok-Version": "2"}, 400},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if r := raw(t, srv, "GET", "/api_keys", tt.hdr, ""); r.status != tt.status {
				t.Errorf("status = %d, want %d: %s", r.status, tt.status, r.body)
			}
		})
	}
}

// TestStatusCodes checks 201, 200 and 204 with an empty body.
func TestStatusCodes(t *testing.T) {
	t.Parallel()
	srv, _ := start(t)
	r := raw(t, srv, "POST", "/service_users", nil, `{"name":"a"}`)
	if r.status != http.StatusCreated {
		t.Fatalf("create: %d %s", r.status, r.body)
	}
	var u account.ServiceUser
	r.decode(t, &u)
	if !u.Active {
		t.Error("active did not default to true")
	}
	if got := raw(t, srv, "GET", "/service_users/"+u.ID, nil, ""); got.status != 200 {
		t.Errorf("get: %d", got.status)
	}
	if got := raw(t, srv, "PATCH", "/service_users/"+u.ID, nil, `{"name":"b"}`); got.status != 200 {
		t.Errorf("update: %d", got.status)
	}
	del := raw(t, srv, "DELETE", "/service_users/"+u.ID, nil, "")
	if del.status != http.StatusNoContent || len(del.body) != 0 {
		t.Errorf("delete: %d %q, want 204 and no body", del.status, del.body)
	}
	if got := raw(t, srv, "GET", "/service_users/"+u.ID, nil, ""); got.status != 404 {
		t.Errorf("get after delete: %d", got.status)
	}
}
