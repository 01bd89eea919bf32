package field

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// fieldsOf lists err's field errors as "field: reason (code)".
func fieldsOf(err error) []string {
	var out []string
	for _, fe := range Errors(err) {
		out = append(out, fe.Field+": "+fe.Reason+" ("+fe.Code+")")
	}
	return out
}

func TestCheckDescriptionAndMetadataRefuseInvalidUTF8(t *testing.T) {
	t.Parallel()
	// 100 bytes that JSON would turn into 300 (one U+FFFD each): the
	// size rule alone passes them.
	bad := strings.Repeat("\xff", 100)
	for name, check := range map[string]func(string, string) error{
		"CheckDescription":    CheckDescription,
		"CheckMetadata":       CheckMetadata,
		"CheckDescriptionPtr": func(f, s string) error { return CheckDescriptionPtr(f, &s) },
		"CheckMetadataPtr":    func(f, s string) error { return CheckMetadataPtr(f, &s) },
	} {
		want := []string{"x.y: is not valid UTF-8 (" + CodeInvalidValue + ")"}
		if diff := cmp.Diff(want, fieldsOf(check("x.y", bad))); diff != "" {
			t.Errorf("%s: field errors (-want +got):\n%s", name, diff)
		}
	}
}

func TestCheckUTF8(t *testing.T) {
	t.Parallel()
	type inner struct {
		RoleARN string `json:"role_arn"`
	}
	type Embedded struct {
		Note string `json:"note"`
	}
	type request struct {
		Embedded
		Name      string             `json:"name"`
		Opt       *string            `json:"opt,omitempty"`
		IDs       []string           `json:"ids"`
		Headers   map[string]string  `json:"headers"`
		PtrMap    *map[string]string `json:"ptr_map"`
		Auth      *inner             `json:"auth"`
		List      []inner            `json:"list"`
		Untagged  string
		Skipped   string `json:"-"`
		Raw       []byte `json:"raw"`
		Any       any    `json:"any"`
		unexposed string
		Count     int `json:"count"`
	}
	bad := "a\xffb"
	ok := "héllo"
	tests := []struct {
		name string
		in   any
		want []string
	}{
		{name: "nil", in: nil},
		{name: "nil pointer", in: (*request)(nil)},
		{name: "valid everywhere", in: &request{Name: ok, Opt: &ok, IDs: []string{ok}, Headers: map[string]string{ok: ok},
			Auth: &inner{ok}, List: []inner{{ok}}, Untagged: ok, Any: ok}},
		{name: "ignored members", in: &request{Skipped: bad, Raw: []byte(bad), unexposed: bad}},
		{name: "every place", in: &request{
			Embedded: Embedded{Note: bad},
			Name:     bad,
			Opt:      &bad,
			IDs:      []string{ok, bad},
			Headers:  map[string]string{"X": "v\xfe", "k\xfe": ok},
			PtrMap:   &map[string]string{"Y": bad},
			Auth:     &inner{RoleARN: bad},
			List:     []inner{{ok}, {bad}},
			Untagged: bad,
			Any:      bad,
		}, want: []string{
			"note: is not valid UTF-8 (ERR_NGROK_215)",
			"name: is not valid UTF-8 (ERR_NGROK_215)",
			"opt: is not valid UTF-8 (ERR_NGROK_215)",
			"ids[1]: is not valid UTF-8 (ERR_NGROK_215)",
			"headers.X: is not valid UTF-8 (ERR_NGROK_215)",
			`headers: has a key that is not valid UTF-8: "k\xfe" (ERR_NGROK_215)`,
			"ptr_map.Y: is not valid UTF-8 (ERR_NGROK_215)",
			"auth.role_arn: is not valid UTF-8 (ERR_NGROK_215)",
			"list[1].role_arn: is not valid UTF-8 (ERR_NGROK_215)",
			"Untagged: is not valid UTF-8 (ERR_NGROK_215)",
			"any: is not valid UTF-8 (ERR_NGROK_215)",
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			err := CheckUTF8(tt.in)
			if diff := cmp.Diff(tt.want, fieldsOf(err)); diff != "" {
				t.Errorf("field errors (-want +got):\n%s", diff)
			}
			if (err != nil) != (len(tt.want) > 0) {
				t.Errorf("CheckUTF8 = %v", err)
			}
			if err != nil && !errors.Is(err, ErrInvalid) {
				t.Error("the errors do not wrap ErrInvalid")
			}
		})
	}
}

func TestCheckRequest(t *testing.T) {
	t.Parallel()
	type create struct{ Name string }
	if err := CheckRequest(&create{}); err != nil {
		t.Errorf("CheckRequest(non-nil) = %v", err)
	}
	if err := CheckRequest(nil); err != nil {
		t.Errorf("CheckRequest(nil interface) = %v, want nil: no body", err)
	}
	err := CheckRequest((*create)(nil))
	want := []string{": the request is a nil *field.create (ERR_NGROK_215)"}
	if diff := cmp.Diff(want, fieldsOf(err)); diff != "" {
		t.Errorf("CheckRequest(nil pointer) (-want +got):\n%s", diff)
	}
}

func TestCheckSegment(t *testing.T) {
	t.Parallel()
	tests := []struct {
		seg  string
		want []string
	}{
		{seg: "esb_1"},
		{seg: "a/b"}, // escaped by the path builder: one segment
		{seg: "...", want: nil},
		{seg: "", want: []string{"subscription_id: is required (ERR_NGROK_215)"}},
		{seg: ".", want: []string{`subscription_id: must not be "." (ERR_NGROK_215)`}},
		{seg: "..", want: []string{`subscription_id: must not be ".." (ERR_NGROK_215)`}},
	}
	for _, tt := range tests {
		if diff := cmp.Diff(tt.want, fieldsOf(CheckSegment("subscription_id", tt.seg))); diff != "" {
			t.Errorf("CheckSegment(%q) (-want +got):\n%s", tt.seg, diff)
		}
	}
}

// FuzzCheckUTF8 checks the rule's reason to be: CheckUTF8 passes a request
// exactly when encoding/json carries each of its strings (a member, a list
// element, a map key and value) through unchanged.
func FuzzCheckUTF8(f *testing.F) {
	f.Add("plain", "é", "k")
	f.Add("a\xffb", "", "")
	f.Add("", "\xed\xa0\x80", "\xc3")
	f.Add("\ufffd", "\u2028", "k\xfe")
	type request struct {
		S string            `json:"s"`
		L []string          `json:"l"`
		M map[string]string `json:"m"`
	}
	f.Fuzz(func(t *testing.T, s, elem, key string) {
		in := request{S: s, L: []string{elem}, M: map[string]string{key: s}}
		b, err := json.Marshal(in)
		if err != nil {
			t.Fatal(err)
		}
		var out request
		if err := json.Unmarshal(b, &out); err != nil {
			t.Fatal(err)
		}
		same := cmp.Equal(in, out)
		if err := CheckUTF8(&in); (err == nil) != same {
			t.Errorf("CheckUTF8 = %v, but the JSON round trip keeps the request: %v", err, same)
		}
	})
}
