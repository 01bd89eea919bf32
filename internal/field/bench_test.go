package field

import "testing"

// BenchmarkCheckUTF8 checks a valid request of the shape Validate methods
// see: text members, a list of objects, a map and a nested object.
func BenchmarkCheckUTF8(b *testing.B) {
	type source struct {
		Type   string `json:"type"`
		Filter string `json:"filter,omitempty"`
	}
	type backend struct {
		ID  string `json:"id"`
		URI string `json:"uri"`
	}
	type request struct {
		Description *string           `json:"description,omitempty"`
		Metadata    *string           `json:"metadata,omitempty"`
		Sources     []source          `json:"sources"`
		Labels      map[string]string `json:"labels"`
		Backends    []backend         `json:"backends"`
		Secret      []byte            `json:"secret"`
	}
	d, m := "a subscription for the audit log", `{"team":"platform"}`
	r := &request{
		Description: &d,
		Metadata:    &m,
		Sources:     []source{{Type: "api_key_created_v0"}, {Type: "ip_policy_updated_v0", Filter: "obj.action == 'deny'"}, {Type: "bot_user_deleted_v0"}},
		Labels:      map[string]string{"env": "prod", "region": "eu"},
		Backends:    []backend{{ID: "bkdhr_1", URI: "https://a"}, {ID: "bkdhr_2", URI: "https://b"}},
	}
	b.ReportAllocs()
	for b.Loop() {
		if err := CheckUTF8(r); err != nil {
			b.Fatal(err)
		}
	}
}
