package fake_test

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/acctapi/acctapi"
	"github.com/acctapi/acctapi/backends"
	"github.com/acctapi/acctapi/fake"
)

// TestSeedTunnelsBounded pins MaxTunnels: an account holds at most so many
// tunnels, and Seed and fixtures refuse one more with 409
// CodeResourceLimit, so that a tunnel group, which lists every matching
// tunnel of its account, holds and answers at most so many. Before, 20,000
// tunnels were taken, seeding them into 5 groups took 14.5 s, and the 5
// groups listed as 9.9 MB.
func TestSeedTunnelsBounded(t *testing.T) {
	t.Parallel()
	srv, _ := start(t)
	labels := map[string]string{"app": "web"}
	var groups []string
	for range 5 {
		groups = append(groups, must(fake.Seed[backends.TunnelGroup](srv, "", &backends.TunnelGroupCreate{Labels: labels}))(t).ID)
	}
	for i := range fake.MaxTunnels {
		if _, err := fake.Seed[fake.Tunnel](srv, "", &fake.Tunnel{Labels: labels}); err != nil {
			t.Fatalf("tunnel %d: %v", i, err)
		}
	}
	_, err := fake.Seed[fake.Tunnel](srv, "", &fake.Tunnel{Labels: labels})
	var apiErr *acctapi.Error
	if !errors.As(err, &apiErr) || apiErr.StatusCode != 409 || !acctapi.HasCode(err, acctapi.CodeResourceLimit) ||
		!strings.Contains(err.Error(), "MaxTunnels is 1000") {
		t.Fatalf("tunnel %d: %v; want 409 %s naming MaxTunnels", fake.MaxTunnels+1, err, acctapi.CodeResourceLimit)
	}
	if n := len(fake.List[fake.Tunnel](srv, "")); n != fake.MaxTunnels {
		t.Errorf("%d tunnels stored; want %d", n, fake.MaxTunnels)
	}
	for _, id := range groups {
		g, _ := fake.Get[backends.TunnelGroup](srv, "", id)
		if len(g.Tunnels) != fake.MaxTunnels {
			t.Errorf("group %s lists %d tunnels; want %d", id, len(g.Tunnels), fake.MaxTunnels)
		}
	}
	// After deleting one, one more is taken; other accounts have their own.
	if err := fake.Delete[fake.Tunnel](srv, "", fake.List[fake.Tunnel](srv, "")[0].ID); err != nil {
		t.Fatal(err)
	}
	must(fake.Seed[fake.Tunnel](srv, "", &fake.Tunnel{}))(t)
	other := must(srv.AddAccount(fake.Account{}))(t)
	must(fake.Seed[fake.Tunnel](srv, other.ID, &fake.Tunnel{}))(t)
}

// TestFixturesTunnelsBounded checks that fixtures are held to MaxTunnels
// as Seed is, the error naming the fixture.
func TestFixturesTunnelsBounded(t *testing.T) {
	t.Parallel()
	srv, _ := start(t)
	fixtures := make([]fake.Fixture, fake.MaxTunnels+1)
	for i := range fixtures {
		fixtures[i] = fake.Fixture{Path: "/tunnels", Body: json.RawMessage(`{"labels":{"app":"web"}}`)}
	}
	err := srv.LoadFixtures(strings.NewReader(mustJSON(t, fixtures)))
	if err == nil || !strings.Contains(err.Error(), "fixture 1000 (/tunnels)") || !strings.Contains(err.Error(), "MaxTunnels is 1000") {
		t.Errorf("fixtures of %d tunnels: %v; want the last refused, named", len(fixtures), err)
	}
	if n := len(fake.List[fake.Tunnel](srv, "")); n != fake.MaxTunnels {
		t.Errorf("%d tunnels stored; want %d", n, fake.MaxTunnels)
	}
}

// BenchmarkSeedTunnels seeds MaxTunnels tunnels into an account with five
// tunnel groups that match them all.
func BenchmarkSeedTunnels(b *testing.B) {
	labels := map[string]string{"app": "web"}
	b.ReportAllocs()
	for b.Loop() {
		b.StopTimer()
		srv, _ := start(b)
		for range 5 {
			must(fake.Seed[backends.TunnelGroup](srv, "", &backends.TunnelGroupCreate{Labels: labels}))(b)
		}
		b.StartTimer()
		for range fake.MaxTunnels {
			must(fake.Seed[fake.Tunnel](srv, "", &fake.Tunnel{Labels: labels}))(b)
		}
	}
}
