package apitest

import (
	"testing"

	"github.com/acctapi/acctapi"
	"github.com/google/go-cmp/cmp"
)

// ValidateCase is one row of a validation table: the field errors Req's
// Validate must yield, as "field code" (see FieldCodes), nil for none.
type ValidateCase = struct {
	// Name names the subtest.
	Name string
	// Req is the request to validate.
	Req Validator
	// Want are the field errors, as "field code", in order; nil for none.
	Want []string
}

// RunValidate runs each case in a parallel subtest of its name.
func RunValidate(t *testing.T, cases []ValidateCase) {
	t.Helper()
	for _, tt := range cases {
		t.Run(tt.Name, func(t *testing.T) {
			t.Parallel()
			if diff := cmp.Diff(tt.Want, FieldCodes(tt.Req.Validate())); diff != "" {
				t.Errorf("field errors (-want +got):\n%s", diff)
			}
		})
	}
}

// Annotated makes a request of one type with the given description and
// metadata, valid otherwise.
type Annotated = struct {
	// Name is the type's name, which begins each subtest's name.
	Name string
	// Build returns a request with the given description and metadata, valid
	// otherwise.
	Build func(desc, meta string) Validator
}

// RunAnnotations checks the description (255 bytes) and metadata (4096
// bytes) limits, at and just past each, on every type.
func RunAnnotations(t *testing.T, types []Annotated) {
	t.Helper()
	descTooLong := "description " + acctapi.CodeDescriptionTooLong
	metaTooLong := "metadata " + acctapi.CodeMetadataTooLong
	tests := []struct {
		name       string
		desc, meta string
		want       []string
	}{
		{"empty", "", "", nil},
		{"description 255 bytes", Text(255), "", nil},
		{"description 256 bytes", Text(256), "", []string{descTooLong}},
		{"metadata 4096 bytes", "", Text(4096), nil},
		{"metadata 4097 bytes", "", Text(4097), []string{metaTooLong}},
		{"both too long", Text(256), Text(4097), []string{descTooLong, metaTooLong}},
	}
	var cases []ValidateCase
	for _, typ := range types {
		for _, tt := range tests {
			cases = append(cases, ValidateCase{typ.Name + "/" + tt.name, typ.Build(tt.desc, tt.meta), tt.want})
		}
	}
	RunValidate(t, cases)
}
