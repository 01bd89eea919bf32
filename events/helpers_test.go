package events

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/acctapi/acctapi"
)

// fieldCodes lists "field code" for each field error in err.
func fieldCodes(err error) []string {
	var out []string
	for _, fe := range acctapi.FieldErrors(err) {
		out = append(out, fe.Field+" "+fe.Code)
	}
	return out
}

// validator is a request type under test.
type validator interface{ Validate() error }

// validateTest is one row of a validation table.
type validateTest struct {
	name string
	r    validator
	want []string
}

func runValidate(t *testing.T, tests []validateTest) {
	t.Helper()
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if diff := cmp.Diff(tt.want, fieldCodes(tt.r.Validate())); diff != "" {
				t.Errorf("Validate (-want +got):\n%s", diff)
			}
		})
	}
}

func ptr[T any](v T) *T { return &v }

// roundTrip decodes the golden file into a new T, encodes it again and
// checks that the JSON is the same, member for member, null for null.
func roundTrip[T any](t *testing.T, file string) *T {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join("testdata", file))
	if err != nil {
		t.Fatal(err)
	}
	v := new(T)
	if err := json.Unmarshal(raw, v); err != nil {
		t.Fatal(err)
	}
	again, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	var want, got any
	if err := json.Unmarshal(raw, &want); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(again, &got); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("%s round trip (-want +got):\n%s", file, diff)
	}
	return v
}
