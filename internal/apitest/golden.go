package apitest

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// GoldenFile is a golden file in testdata and a new value of the type it
// holds, for RunGolden.
type GoldenFile = struct {
	// File is the file's name under testdata.
	File string
	// V is a pointer to a new value of the type the file holds, to decode
	// into.
	V any
}

// RunGolden round-trips each golden file (see RoundTrip) in a parallel
// subtest named after the file.
func RunGolden(t *testing.T, files []GoldenFile) {
	t.Helper()
	for _, g := range files {
		t.Run(g.File, func(t *testing.T) {
			t.Parallel()
			RoundTrip(t, g.File, g.V)
		})
	}
}

// RoundTrip decodes testdata/file into v, knowing every member, and checks
// that v encodes back to the same document, member for member and null for
// null, and that a member added by a later API version is ignored.
func RoundTrip(t testing.TB, file string, v any) {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join("testdata", file))
	if err != nil {
		t.Fatal(err)
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		t.Fatalf("decode %s: %v", file, err)
	}
	out, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(JSONValue(t, raw), JSONValue(t, out)); diff != "" {
		t.Errorf("%s: re-encoded document differs (-golden +got):\n%s", file, diff)
	}
	doc, ok := JSONValue(t, raw).(map[string]any)
	if !ok {
		t.Fatalf("%s: not a JSON object", file)
	}
	doc["added_later"] = map[string]any{"x": []any{1.0}}
	future, _ := json.Marshal(doc)
	if err := json.Unmarshal(future, v); err != nil {
		t.Errorf("%s with an unknown member: %v", file, err)
	}
}

// ReadGolden decodes testdata/file into a new T, with RoundTrip's checks,
// and returns it.
func ReadGolden[T any](t testing.TB, file string) *T {
	t.Helper()
	v := new(T)
	RoundTrip(t, file, v)
	return v
}
