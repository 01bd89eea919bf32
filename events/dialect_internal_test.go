package events

import (
	"fmt"
	"strings"
	"testing"

	"github.com/acctapi/acctapi"
)

// TestCutAmongManyMembers: members given in the other dialect as null are
// left out, one cut each, among many other members (a review found a
// target of 65,000 members, with two spellings alternating among them,
// taking 17 s of CPU when each cut moved every member's record; a cut
// now moves the records of the scope's renamed members only, which
// object keeps).
func TestCutAmongManyMembers(t *testing.T) {
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
	// One cut for ddsite, one for each pair; each cut examines the
	// records of the scope's renamed members only (site and tags), not
	// one per member written (the 17 s case).
	if tr.cuts != 1001 {
		t.Errorf("%d cuts; want 1001", tr.cuts)
	}
	if tr.moved > 2*tr.cuts {
		t.Errorf("cuts examined %d records; want at most 2 a cut (%d)", tr.moved, 2*tr.cuts)
	}
}

// TestErrorPathNamesEmptyMembers: a member named "" is a member, not an
// element, in an error's path (a review of the rewrite found it named as
// "[0]").
func TestErrorPathNamesEmptyMembers(t *testing.T) {
	for body, want := range map[string]string{
		`{"a":{"":{"target":{"monitoring":1,"datadog":2}}}}`: "a..target.monitoring",
		`{"":{"target":{"monitoring":1,"datadog":2}}}`:       "target.monitoring",
		`[{"target":{"monitoring":1,"datadog":2}}]`:          "[0].target.monitoring",
	} {
		_, err := Translate([]byte(body), acctapi.DialectSpec)
		if err == nil || !strings.HasPrefix(err.Error(), "acctapi: "+want+": ") {
			t.Errorf("%s: %v; want an error on %s", body, err, want)
		}
	}
}
