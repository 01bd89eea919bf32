// Package apitest holds the test helpers that the resource packages'
// tests share: a validation table runner, golden-file round trips, a fuzz
// round trip for request types, a recording test server that checks the
// request each client operation sends, and a canned server for examples.
//
// It is test support: it imports "testing" and is imported only by
// _test.go files.
//
// The table row types (ValidateCase, Annotated, GoldenFile, Request, Call)
// are aliases of unnamed struct types, so that tables in other packages may
// use unkeyed literals without go vet's composites check objecting.
package apitest

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/acctapi/acctapi"
	"github.com/acctapi/acctapi/internal/rest"
)

// Validator is a request type: every request type has a Validate method.
// It is the one interface of internal/rest.
type Validator = rest.Validator

// FieldCodes lists err's field errors as "field code", in order.
func FieldCodes(err error) []string {
	var out []string
	for _, fe := range acctapi.FieldErrors(err) {
		out = append(out, fe.Field+" "+fe.Code)
	}
	return out
}

// JSONValue decodes b into a generic value, for comparing JSON documents
// member by member; it fails the test if b is not JSON.
func JSONValue(t testing.TB, b []byte) any {
	t.Helper()
	var v any
	if err := json.Unmarshal(b, &v); err != nil {
		t.Fatalf("decode %s: %v", b, err)
	}
	return v
}

// Quote returns s as a JSON string.
func Quote(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

// Text returns exactly n bytes of mostly two-byte characters, so byte
// limits are seen to count bytes: Text(256) is only 128 characters.
func Text(n int) string { return strings.Repeat("é", n/2) + strings.Repeat("a", n%2) }

// Ptr returns a pointer to v.
func Ptr[T any](v T) *T { return &v }
