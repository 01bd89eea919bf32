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

// BenchmarkNilAsEmpty measures what Client.Do's NilAsEmpty costs an update
// request: one with nothing to change (no copy), and one whose member
// points to a nil slice (a copy with [] in its place).
func BenchmarkNilAsEmpty(b *testing.B) {
	type binding struct {
		Selectors *[]string `json:"endpoint_selectors,omitempty"`
		Ingress   *string   `json:"ingress_endpoint,omitempty"`
	}
	type update struct {
		ID          string             `json:"id"`
		Description *string            `json:"description,omitempty"`
		Metadata    *string            `json:"metadata,omitempty"`
		Features    *[]string          `json:"enabled_features,omitempty"`
		Labels      *map[string]string `json:"labels,omitempty"`
		Binding     *binding           `json:"binding,omitempty"`
	}
	d := "d"
	features := []string{"bindings"}
	var none []string
	for _, bb := range []struct {
		name string
		in   *update
	}{
		{"unchanged", &update{ID: "k8sop_1", Description: &d, Features: &features, Binding: &binding{Ingress: &d}}},
		{"pointer-to-nil", &update{ID: "k8sop_1", Description: &d, Features: &none, Binding: &binding{Ingress: &d}}},
	} {
		b.Run(bb.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				_ = NilAsEmpty(bb.in)
			}
		})
	}
}
