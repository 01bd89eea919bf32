package rest

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
)

// overLimitByDecoding is overLimit written with encoding/json, for
// comparison: the page's object's array members, counted.
func overLimitByDecoding(raw []byte, limit int) bool {
	var members map[string]json.RawMessage
	if json.Unmarshal(raw, &members) != nil {
		return true
	}
	for _, v := range members {
		var elems []json.RawMessage
		if json.Unmarshal(v, &elems) == nil && len(elems) > limit {
			return false
		}
	}
	return true
}

// TestOverLimitAgreesWithDecoding compares the byte scanner with decoding
// on random pages whose strings hold the characters it watches.
func TestOverLimitAgreesWithDecoding(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	texts := []string{"", "a,b", "[x]", "{y}", `q"uote`, `back\slash`, `\"`, "é,", "\u2028"}
	value := func(depth int) any {
		var v func(d int) any
		v = func(d int) any {
			switch k := rng.IntN(6); {
			case k == 0 || d > 3:
				return texts[rng.IntN(len(texts))]
			case k == 1:
				return rng.IntN(100)
			case k == 2:
				return nil
			case k == 3:
				a := make([]any, rng.IntN(4))
				for i := range a {
					a[i] = v(d + 1)
				}
				return a
			default:
				m := map[string]any{}
				for range rng.IntN(3) {
					m[texts[rng.IntN(len(texts))]] = v(d + 1)
				}
				return m
			}
		}
		return v(depth)
	}
	for i := range 3000 {
		page := map[string]any{"uri": texts[rng.IntN(len(texts))]}
		for range 1 + rng.IntN(2) {
			items := make([]any, rng.IntN(8))
			for j := range items {
				items[j] = value(1)
			}
			page[fmt.Sprintf("items%d%s", rng.IntN(3), texts[rng.IntN(len(texts))])] = items
		}
		raw, err := json.Marshal(page)
		if err != nil {
			t.Fatal(err)
		}
		if rng.IntN(2) == 0 {
			var b bytes.Buffer
			if err := json.Indent(&b, raw, " ", "\t"); err != nil {
				t.Fatal(err)
			}
			raw = b.Bytes()
		}
		limit := 1 + rng.IntN(6)
		if _, got := overLimit(raw, limit); got != overLimitByDecoding(raw, limit) {
			t.Fatalf("page %d, limit %d: overLimit %v, decoding %v: %s", i, limit, got, !got, raw)
		}
	}
}

// BenchmarkOverLimit checks a page of 100 items of about 1 KB each: the
// scan is to cost a fraction of the page's decoding, and nothing in
// memory.
func BenchmarkOverLimit(b *testing.B) {
	item := `{"id":"bkdtg_2Vx7ccTfMJ5sBXfOMdBAAAAAAAA","uri":"https://api.example.test/backends/tunnel_group/bkdtg_2Vx7ccTfMJ5sBXfOMdBAAAAAAAA","labels":{"app":"x","env":"prod"},"tunnels":[` +
		strings.TrimSuffix(strings.Repeat(`{"id":"tn_2Vx7ccTfMJ5sBXfOMdBAAAAAAAA","uri":"https://api.example.test/tunnels/tn_2Vx7ccTfMJ5sBXfOMdBAAAAAAAA"},`, 8), ",") + `]}`
	raw := []byte(`{"backends":[` + strings.TrimSuffix(strings.Repeat(item+",", 100), ",") + `],"uri":"u","next_page_uri":null}`)
	b.Run("overLimit", func(b *testing.B) {
		b.ReportAllocs()
		b.SetBytes(int64(len(raw)))
		for b.Loop() {
			if _, ok := overLimit(raw, 100); !ok {
				b.Fatal("over the limit")
			}
		}
	})
	b.Run("decode", func(b *testing.B) {
		b.ReportAllocs()
		b.SetBytes(int64(len(raw)))
		for b.Loop() {
			var page struct {
				Backends []struct {
					ID, URI string
					Labels  map[string]string
					Tunnels []struct{ ID, URI string }
				}
			}
			if err := json.Unmarshal(raw, &page); err != nil {
				b.Fatal(err)
			}
		}
	})
}
