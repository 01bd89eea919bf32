package bench

import (
	"fmt"
	"hash/maphash"
	"math/rand/v2"
	"testing"
	"time"
)

// BenchmarkFloor is what every library pays on Keys100kParallel before
// deciding anything: the loop (a random key, its first byte read: its
// string is a cache miss too), then that and the monotonic clock (what
// acctapi's Limiter.Allow reads where it does not read the processor's
// time-stamp counter; ratelimit's BenchmarkClock measures that), time.Now
// (what sethvargo's Take reads: the wall clock and the monotonic one), and
// the monotonic clock and the key's maphash (acctapi hashes keys of more
// than 16 bytes so).
func BenchmarkFloor(b *testing.B) {
	ks := keys(100_000)
	epoch, seed := time.Now(), maphash.MakeSeed()
	for _, c := range []struct {
		name string
		f    func(key string) uint64
	}{
		{"loop", func(key string) uint64 { return uint64(key[0]) }},
		{"monotonic-clock", func(key string) uint64 { return uint64(key[0]) + uint64(time.Since(epoch)) }},
		{"time.Now", func(key string) uint64 { return uint64(key[0]) + uint64(time.Now().UnixNano()) }},
		{"monotonic-clock+maphash", func(key string) uint64 { return maphash.String(seed, key) + uint64(time.Since(epoch)) }},
	} {
		b.Run(c.name, func(b *testing.B) {
			b.ReportAllocs()
			b.RunParallel(func(pb *testing.PB) {
				r := rand.New(rand.NewPCG(rand.Uint64(), 1))
				var sum uint64 // one per goroutine: a shared one would move between processors
				for pb.Next() {
					sum += c.f(ks[r.IntN(len(ks))])
				}
				if sum == 1 {
					b.Log("sum", sum) // keeps sum live
				}
			})
		})
	}
}

// BenchmarkKeysParallel is Keys100kParallel for acctapi and sethvargo at
// other numbers of keys: how the time of a decision grows with the memory
// the keys take, once it no longer fits the processors' caches.
func BenchmarkKeysParallel(b *testing.B) {
	for _, n := range []int{10_000, 30_000, 100_000, 300_000} {
		ks := keys(n)
		for _, im := range impls {
			if im.name != "acctapi" && im.name != "sethvargo" {
				continue
			}
			b.Run(fmt.Sprintf("%d/%s", n, im.name), func(b *testing.B) {
				randomKeys(b, im.new(b, 1<<30, time.Hour), ks)
			})
		}
	}
}
