package k8sop

import (
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/acctapi/acctapi"
)

// TestEndpointValidate checks that Validate keeps an endpoint within the
// sizes MaxSelectorCost assumes: maxEndpoint passes, and one byte more in
// any string member (found by reflection, so that a member added later is
// covered), or one binding more, is refused naming the member.
func TestEndpointValidate(t *testing.T) {
	if err := maxEndpoint().Validate(); err != nil {
		t.Fatalf("an endpoint of the largest size: %v", err)
	}
	for _, name := range stringMembers(reflect.TypeFor[Endpoint](), "") {
		if name == "id" || name == "uri" {
			continue // set by the server
		}
		t.Run(name, func(t *testing.T) {
			e := maxEndpoint()
			grow(reflect.ValueOf(e).Elem(), strings.Split(name, "."))
			fes := acctapi.FieldErrors(e.Validate())
			if len(fes) != 1 || fes[0].Field != name || fes[0].Code == "" {
				t.Errorf("errors %v; want one on %s", fes, name)
			}
			// Text that is not UTF-8, which JSON would change.
			e = maxEndpoint()
			set(reflect.ValueOf(e).Elem(), strings.Split(name, "."), "a\xff")
			fes = acctapi.FieldErrors(e.Validate())
			if len(fes) != 1 || fes[0].Field != name || !strings.Contains(fes[0].Reason, "UTF-8") {
				t.Errorf("not UTF-8: errors %v; want one on %s", fes, name)
			}
		})
	}
	few := &Endpoint{Bindings: make([]string, MaxBindings+1), CreatedAt: time.Now()}
	if fes := acctapi.FieldErrors(few.Validate()); len(fes) != 1 || fes[0].Field != "bindings" {
		t.Errorf("%d bindings: %v; want one error on bindings", MaxBindings+1, fes)
	}
	long := &Endpoint{Bindings: []string{"kubernetes", strings.Repeat("a", MaxEndpointStringBytes+1)}}
	if fes := acctapi.FieldErrors(long.Validate()); len(fes) != 1 || fes[0].Field != "bindings[1]" {
		t.Errorf("a long binding: %v; want one error on bindings[1]", fes)
	}
}

// stringMembers lists the JSON paths of t's string members, those of its
// struct and pointer-to-struct members included.
func stringMembers(t reflect.Type, prefix string) []string {
	var out []string
	for f := range t.Fields() {
		name := prefix + strings.Split(f.Tag.Get("json"), ",")[0]
		ft := f.Type
		if ft.Kind() == reflect.Pointer {
			ft = ft.Elem()
		}
		switch {
		case ft.Kind() == reflect.String:
			out = append(out, name)
		case ft.Kind() == reflect.Struct && ft != reflect.TypeFor[time.Time]():
			out = append(out, stringMembers(ft, name+".")...)
		}
	}
	return out
}

// grow adds a byte to the string member at the JSON path of v.
func grow(v reflect.Value, path []string) { set(v, path, "") }

// set sets the string member at the JSON path of v to s, or adds a byte
// to it if s is empty.
func set(v reflect.Value, path []string, s string) {
	for f := range v.NumField() {
		if strings.Split(v.Type().Field(f).Tag.Get("json"), ",")[0] != path[0] {
			continue
		}
		m := v.Field(f)
		if m.Kind() == reflect.Pointer { // a copy: maxEndpoint's references share one
			cp := reflect.New(m.Type().Elem())
			cp.Elem().Set(m.Elem())
			m.Set(cp)
			m = cp.Elem()
		}
		if len(path) > 1 {
			set(m, path[1:], s)
			return
		}
		if s == "" {
			s = m.String() + "a"
		}
		m.SetString(s)
	}
}

// TestMatchFailureNamesSelector checks that a selector that fails when
// evaluated (here, time.now.subtract() before year 1) does not match and
// is reported on its index, unless another selector matches.
func TestMatchFailureNamesSelector(t *testing.T) {
	s, err := CompileSelectors([]string{`endpoint.name == "x"`, `endpoint.created_at > time.now.subtract("99999d")`})
	if err != nil {
		t.Fatal(err)
	}
	year100 := time.Date(100, 1, 1, 0, 0, 0, 0, time.UTC)
	ok, err := s.MatchAt(&Endpoint{ID: "ep_1"}, year100)
	if fes := acctapi.FieldErrors(err); ok || len(fes) != 1 || fes[0].Field != "endpoint_selectors[1]" ||
		!strings.Contains(fes[0].Reason, "timestamp out of range") {
		t.Errorf("MatchAt = %v, %v; want no match and an error on endpoint_selectors[1]", ok, err)
	}
	if ok, err := s.MatchAt(&Endpoint{ID: "ep_1", Name: "x"}, year100); !ok || err != nil {
		t.Errorf("MatchAt with the first selector matching = %v, %v; want true, nil", ok, err)
	}
	if ok, err := s.MatcherAt(time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC), MatchBudget).Match(&Endpoint{}); !ok || err != nil {
		t.Errorf("Matcher at 2030 = %v, %v; want true, nil", ok, err)
	}
}
