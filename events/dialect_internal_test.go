package events

import (
	"fmt"
	"strings"
	"testing"

	"github.com/acctapi/acctapi"
)

// TestCutMovesFewRecords: leaving out a member given in the other dialect
// as null moves the records of the object's renamed members only, not of
// all its members: a review found a target of 65,000 members, with two
// spellings alternating among them, taking 17 s of CPU.
func TestCutMovesFewRecords(t *testing.T) {
	var b strings.Builder
	b.WriteString(`{"monitoring":{`)
	for i := range 5000 {
		fmt.Fprintf(&b, `"j%d":0,`, i)
	}
	b.WriteString(`"ddsite":null,"site":"eu","ddtags":null`)
	for i := range 1000 {
		n := []string{"tags", "ddtags"}[i%2]
		fmt.Fprintf(&b, `,"%s":1,"%s":null`, n, n)
	}
	b.WriteString(`}}`)
	body := []byte(b.String())
	tr := newTranslator(body, acctapi.DialectSpec)
	out, err := tr.run(body, targetScope, "target")
	if err != nil || strings.Contains(string(out), `"dd`) || !strings.Contains(string(out), `"site":"eu"`) ||
		!strings.HasSuffix(string(out), `"tags":null}}`) {
		t.Fatalf("%.40q...%q, %v; want site and tags in the specification's names, the last tags null", out, out[max(0, len(out)-40):], err)
	}
	// One cut for ddsite, one for each pair; each moves the records of
	// at most the two renamed names, site and tags.
	if tr.cuts != 1001 || tr.moved > 2*tr.cuts {
		t.Errorf("%d cuts moved %d records; want 1001 cuts moving at most 2 each", tr.cuts, tr.moved)
	}
}
