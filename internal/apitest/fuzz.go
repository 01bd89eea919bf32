package apitest

import (
	"encoding/json"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
)

// New returns a new, zero *T as a Validator: New[pkg.FooCreate] is a
// request factory for FuzzRequests.
func New[T any, PT interface {
	*T
	Validator
}]() Validator {
	return PT(new(T))
}

// FuzzRequests fuzzes every request type that requests make with
// arbitrary JSON, seeded with seeds: see CheckRequestRoundTrip.
func FuzzRequests(f *testing.F, requests []func() Validator, seeds ...string) {
	for _, seed := range seeds {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		for _, newReq := range requests {
			CheckRequestRoundTrip(t, newReq, data)
		}
	})
}

// CheckRequestRoundTrip decodes data into a request that newReq makes:
// Validate never panics, and a request that validates survives an encode
// and decode unchanged (an empty slice or map may come back nil) and still
// validates; if the type has a Normalize method, the request still
// validates once normalized.
func CheckRequestRoundTrip(t testing.TB, newReq func() Validator, data []byte) {
	t.Helper()
	req := newReq()
	if json.Unmarshal(data, req) != nil || req.Validate() != nil {
		return
	}
	b, err := json.Marshal(req)
	if err != nil {
		t.Fatalf("encode %#v: %v", req, err)
	}
	again := newReq()
	if err := json.Unmarshal(b, again); err != nil {
		t.Fatalf("decode %s: %v", b, err)
	}
	if diff := cmp.Diff(req, again, cmpopts.EquateEmpty()); diff != "" {
		t.Errorf("encode and decode of %s changed the %T (-before +after):\n%s", data, req, diff)
	}
	if err := again.Validate(); err != nil {
		t.Errorf("re-decoded %T no longer validates: %v", again, err)
	}
	if n, ok := req.(interface{ Normalize() }); ok {
		n.Normalize()
		if err := req.Validate(); err != nil {
			t.Errorf("normalized %T no longer validates: %v", req, err)
		}
	}
}
