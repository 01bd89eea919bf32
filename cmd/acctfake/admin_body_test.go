package main

import (
	"cmp"
	"net/http"
	"strings"
	"testing"
)

// TestAdminBodiesStrict checks that the admin API reads bodies as strictly
// as the account API: a member given twice or in another letter case, a
// member of the wrong JSON type, a body that is not JSON or not sent as
// JSON, each refused with the API's code and the member named.
func TestAdminBodiesStrict(t *testing.T) {
	t.Parallel()
	p := startProgram(t, "-clock", "manual")
	for _, tt := range []struct {
		name, method, path, ctype, body string
		status                          int
		code, field                     string
	}{
		{"member twice", "POST", "faults", "", `{"method":"GET","path":"/service_users","status":500,"status":501}`, 400, "ERR_NGROK_213", "status"},
		{"member in another case", "POST", "faults", "", `{"Method":"GET","path":"/service_users","status":500}`, 400, "ERR_NGROK_214", "Method"},
		{"wrong type", "POST", "faults", "", `{"path":"/service_users","status":"500"}`, 400, "ERR_NGROK_215", "status"},
		{"wrong element type", "POST", "accounts", "", `{"api_keys":["a",2]}`, 400, "ERR_NGROK_215", "api_keys[1]"},
		{"not JSON", "PUT", "clock", "", `now=2030`, 400, "ERR_NGROK_213", ""},
		{"after the value", "POST", "clock/advance", "", `{"by":"1s"} {}`, 400, "ERR_NGROK_213", ""},
		{"text/plain", "POST", "faults", "text/plain", `{"path":"/service_users","status":500}`, 415, "ERR_NGROK_210", ""},
		{"text/plain where no body is taken", "DELETE", "faults", "text/plain", `x`, 415, "ERR_NGROK_210", ""},
		{"invalid JSON where no body is taken", "DELETE", "faults", "", `not json at all`, 400, "ERR_NGROK_213", ""},
	} {
		t.Run(tt.name, func(t *testing.T) {
			h := http.Header{"Content-Type": {cmp.Or(tt.ctype, "application/json")}}
			r := send(t, tt.method, p.base+"/_acctfake/"+tt.path, p.admin, h, strings.NewReader(tt.body)).want(t, tt.status, tt.code)
			if d := decode[struct {
				Details map[string]string `json:"details"`
			}](t, r); d.Details["field"] != tt.field {
				t.Errorf("field %q, want %q: %s", d.Details["field"], tt.field, r.body)
			}
		})
	}
	// Nothing was added.
	if r := p.adm(t, "GET", "faults", "").want(t, 200, ""); strings.Contains(r.body, `"id":"flt_`) {
		t.Errorf("faults after refused requests: %s", r.body)
	}
	// {} and null are no members, where an operation takes none.
	p.adm(t, "POST", "snapshots", `{}`).want(t, 201, "")
	p.adm(t, "POST", "snapshots", `null`).want(t, 201, "")
}

// TestAdminRequestMessages pins messages that were garbled or too lax: an
// unknown query parameter where an operation takes none, and two
// Authorization headers.
func TestAdminRequestMessages(t *testing.T) {
	t.Parallel()
	p := startProgram(t)
	r := p.adm(t, "DELETE", "faults?id=x", "").want(t, 400, "ERR_NGROK_231")
	if !strings.Contains(r.body, `Unknown query parameter \"id\"; this path and method take no query parameters.`) {
		t.Errorf("message: %s", r.body)
	}
	// Two Authorization headers.
	p.admWith(t, "GET", "faults", "", http.Header{"Authorization": {"Bearer " + p.admin, "Bearer wrong"}}).want(t, 401, "")
}

// TestAdminAccountsAfterKeyDeleted checks that an initial key deleted
// through the API is no longer listed, cannot be given to another
// account, and that adding a key to an account without a live initial
// key is a clear 409.
func TestAdminAccountsAfterKeyDeleted(t *testing.T) {
	t.Parallel()
	p := startProgram(t, "-api-key", "tok")
	keys := decode[struct {
		Keys []struct {
			ID string `json:"id"`
		} `json:"keys"`
	}](t, p.api(t, "GET", "/api_keys", "").want(t, 200, ""))
	p.api(t, "DELETE", "/api_keys/"+keys.Keys[0].ID, "").want(t, 204, "")
	if r := p.adm(t, "GET", "accounts", "").want(t, 200, ""); strings.Contains(r.body, `"tok"`) || !strings.Contains(r.body, `"api_keys":[]`) {
		t.Errorf("accounts list the deleted key, or omit api_keys: %s", r.body)
	}
	r := p.adm(t, "POST", "accounts", `{"id":"ac_other","api_keys":["tok"]}`).want(t, 400, "ERR_NGROK_215")
	if !strings.Contains(r.body, `"field":"api_keys[0]"`) || strings.Contains(r.body, `"tok"`) {
		t.Errorf("reusing the deleted key: %s", r.body)
	}
	id := p.firstAccount(t)
	p.adm(t, "POST", "accounts/"+id+"/api_keys", `{}`).want(t, 409, "ERR_ACCTAPI_NO_INITIAL_KEY")
}

// TestAdminAddKeyContentTypes checks that adding a key forwards every
// Content-Type the caller sent, so that two are refused as the API refuses
// them (a second review found only the first forwarded).
func TestAdminAddKeyContentTypes(t *testing.T) {
	t.Parallel()
	p := startProgram(t)
	id := p.firstAccount(t)
	// Two Content-Type headers.
	p.admWith(t, "POST", "accounts/"+id+"/api_keys", `{"description":"two"}`,
		http.Header{"Content-Type": {"application/json", "text/plain"}}).want(t, 415, "")
}
