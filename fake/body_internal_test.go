package fake

import (
	"bytes"
	"strings"
	"testing"
	"testing/iotest"
)

// TestReadBody checks that a body is read whole (up to one byte over the
// limit) whatever length the request declares, and kept without spare
// capacity.
func TestReadBody(t *testing.T) {
	t.Parallel()
	small := `{"name":"x"}`
	big := strings.Repeat("b", MaxBodyBytes+10)
	tests := []struct {
		name     string
		body     string
		declared int64
		want     int // bytes read
	}{
		{"declared", small, int64(len(small)), len(small)},
		{"declared too short", small, 3, len(small)},
		{"declared too long", small, 100, len(small)},
		{"unknown (-1)", small, -1, len(small)},
		{"unknown (0)", small, 0, len(small)},
		{"empty", "", 0, 0},
		{"over the limit, declared", big, int64(len(big)), MaxBodyBytes + 1},
		{"over the limit, unknown", big, -1, MaxBodyBytes + 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			// OneByteReader: every read is short, as on a slow connection.
			got, err := readBody(iotest.OneByteReader(strings.NewReader(tt.body)), tt.declared)
			if err != nil {
				t.Fatal(err)
			}
			if len(got) != tt.want || !bytes.Equal(got, []byte(tt.body[:tt.want])) {
				t.Fatalf("read %d bytes, want the first %d", len(got), tt.want)
			}
			if tt.want < MaxBodyBytes && cap(got) > 2*len(got)+16 {
				t.Errorf("capacity %d for a %d-byte body", cap(got), len(got))
			}
		})
	}
	_, err := readBody(iotest.ErrReader(iotest.ErrTimeout), 10)
	if err != iotest.ErrTimeout {
		t.Errorf("a failing body: got %v, want its error", err)
	}
}
