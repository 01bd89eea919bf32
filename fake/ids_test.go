package fake

import (
	"bytes"
	"math/big"
	"math/rand/v2"
	"strings"
	"testing"
	"time"
)

// TestAppendBase62 checks the id encoding against math/big, and that text
// order is number order.
func TestAppendBase62(t *testing.T) {
	t.Parallel()
	var zero, ones [20]byte
	for i := range ones {
		ones[i] = 0xff
	}
	cases := [][20]byte{zero, ones}
	r := rand.New(rand.NewPCG(1, 2))
	for range 2000 {
		var raw [20]byte
		for i := range raw {
			raw[i] = byte(r.UintN(256))
		}
		// Runs of equal bytes reach the carries of every pass.
		if r.IntN(4) == 0 {
			for i := r.IntN(20); i < 20; i++ {
				raw[i] = 0xff
			}
		}
		cases = append(cases, raw)
	}
	for _, raw := range cases {
		got := string(appendBase62(nil, raw))
		want := new(big.Int).SetBytes(raw[:]).Text(62)
		// big.Int's base-62 digits are 0-9a-zA-Z; the ids' are 0-9A-Za-z.
		want = strings.Map(func(c rune) rune {
			switch {
			case c >= 'a' && c <= 'z':
				return c - 'a' + 'A'
			case c >= 'A' && c <= 'Z':
				return c - 'A' + 'a'
			}
			return c
		}, want)
		want = strings.Repeat("0", 27-len(want)) + want
		if got != want {
			t.Fatalf("%x: got %s, want %s", raw, got, want)
		}
	}
	for i := 1; i < len(cases); i++ {
		a, b := cases[i-1], cases[i]
		if bytes.Compare(a[:], b[:]) != strings.Compare(string(appendBase62(nil, a)), string(appendBase62(nil, b))) {
			t.Fatalf("%x and %x: text order differs from number order", a, b)
		}
	}
}

// TestIDsGrow checks that ids from one generator grow with time and within
// a second, and carry their prefix.
func TestIDsGrow(t *testing.T) {
	t.Parallel()
	g := newIDGen(7)
	now := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	prev := ""
	for i := range 1000 {
		id := g.next("service", now.Add(time.Duration(i/10)*time.Second))
		if !strings.HasPrefix(id, "service_") || len(id) != len("service_")+27 {
			t.Fatalf("id %q: want service_ and 27 base-62 digits", id)
		}
		if id <= prev {
			t.Fatalf("id %q does not sort after %q", id, prev)
		}
		prev = id
	}
}
