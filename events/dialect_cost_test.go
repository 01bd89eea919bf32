package events_test

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/acctapi/acctapi"
	"github.com/acctapi/acctapi/events"
	"github.com/acctapi/acctapi/internal/apitest"
)

// TestTranslateCostIsLinear: what Translate and Target's decoding allocate
// grows with the body, not with its square. A review found a body of
// 20,000 nested arrays (40 KB) taking 646 MB (every level kept a copy of
// its path), and members spelled alternately in the two dialects among
// 65,000 others taking 17 s of CPU (each one left out moved every other
// member's record and copied the output after it).
func TestTranslateCostIsLinear(t *testing.T) {
	deep := func(n int) []byte {
		return []byte(`{"target":{"kinesis":` + strings.Repeat("[", n) + `"\u0041"` + strings.Repeat("]", n) + `}}`)
	}
	alternating := func(junk, pairs int) []byte {
		var b strings.Builder
		b.WriteString(`{"format":"JSON","target":{"monitoring":{`)
		for i := range junk {
			fmt.Fprintf(&b, `"j%d":0,`, i)
		}
		b.WriteString(`"ddtags":null`)
		for i := range pairs {
			n := []string{"tags", "ddtags"}[i%2]
			fmt.Fprintf(&b, `,"%s":1,"%s":null`, n, n)
		}
		b.WriteString(`}}}`)
		return []byte(b.String())
	}
	tests := []struct {
		name string
		body []byte
		// within reports whether the translation's output is right.
		within func(out []byte, err error) error
	}{
		{"nested 9,000 deep", deep(9000), func(out []byte, err error) error {
			if err != nil || !json.Valid(out) || !strings.Contains(string(out), `"A"`) {
				return fmt.Errorf("%.40q, %v; want the body with its escape written out", out, err)
			}
			return nil
		}},
		{"nested 20,000 deep", deep(20000), func(out []byte, err error) error {
			if err != nil || string(out) != string(deep(20000)) {
				return fmt.Errorf("%.40q, %v; want the body as it is, for the decoder to refuse", out, err)
			}
			return nil
		}},
		{"alternating spellings", alternating(20000, 10000), func(out []byte, err error) error {
			// Each null is left out for the other spelling's value (a
			// repeated spelling stays, for the decoder to refuse); the
			// last member is a null.
			if err != nil || !json.Valid(out) || strings.Contains(string(out), `"ddtags"`) ||
				strings.Count(string(out), `"tags":null`) != 1 || !strings.HasSuffix(string(out), `"tags":null}}}`) {
				return fmt.Errorf("%.40q...%q, %v; want every member spelled tags, one null at the end", out, out[max(0, len(out)-40):], err)
			}
			return nil
		}},
	}
	for _, tt := range tests {
		var out []byte
		var err error
		n := apitest.Allocated(func() { out, err = events.Translate(tt.body, acctapi.DialectSpec) }).Bytes
		if e := tt.within(out, err); e != nil {
			t.Errorf("%s: %v", tt.name, e)
		}
		// Linear costs come to a few tens of times the body (a level of
		// nesting is a few bytes of body and a few tens of bytes of
		// state); the squares found were thousands of times.
		t.Logf("%s: %d bytes, Translate allocated %d", tt.name, len(tt.body), n)
		if limit := 100 * uint64(len(tt.body)); n > limit {
			t.Errorf("%s: Translate of %d bytes allocated %d bytes, more than %d", tt.name, len(tt.body), n, limit)
		}
		var tg events.Target
		n = apitest.Allocated(func() { _ = json.Unmarshal(tt.body, &struct{ Target *events.Target }{&tg}) }).Bytes
		t.Logf("%s: decoding a Target allocated %d", tt.name, n)
		if limit := 100 * uint64(len(tt.body)); n > limit {
			t.Errorf("%s: decoding a Target in %d bytes allocated %d bytes, more than %d", tt.name, len(tt.body), n, limit)
		}
	}
}
