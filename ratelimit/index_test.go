package ratelimit

import (
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"
	"unsafe"
)

// TestIndexPacksGenerations checks that a generation published as one
// word (its aligned address plus its size's logarithm) unpacks to the
// same entries, inside the memory that holds them, whatever that memory's
// alignment.
func TestIndexPacksGenerations(t *testing.T) {
	t.Parallel()
	var x index
	if x.size() != 0 {
		t.Fatalf("empty index: size %d, want 0", x.size())
	}
	for lg := 4; lg <= 20; lg++ {
		size := 1 << lg
		e, packed := newEntries(size)
		x.t.Store(packed)
		if got := x.load(); got != e || got.mask != uint64(size-1) || uintptr(got.e)&packBits != 0 {
			t.Fatalf("size %d: unpacked %+v, want %+v with mask %#x, aligned to 32 bytes", size, got, e, size-1)
		}
		if x.size() != size {
			t.Fatalf("size %d: size() = %d", size, x.size())
		}
	}
	// Memory at every offset of four bytes from 32-byte alignment: a
	// block that is not aligned is replaced by one with room to align it.
	const size = 16
	for off := range 8 {
		var last []atomic.Uint32
		calls := 0
		e, packed := allocEntries(size, func(n int) []atomic.Uint32 {
			calls++
			big := make([]atomic.Uint32, n+8) // a block of 128 bytes: aligned to 32
			last = big[off : off+n]
			return last
		})
		x.t.Store(packed)
		got := x.load()
		first, end := uintptr(unsafe.Pointer(&last[0])), uintptr(unsafe.Pointer(&last[len(last)-1]))
		if got != e || uintptr(got.e)&packBits != 0 || uintptr(got.e) < first ||
			uintptr(unsafe.Pointer(got.at(got.mask))) > end {
			t.Fatalf("offset %d: unpacked %+v (last entry at %#x), want %+v aligned inside [%#x, %#x]",
				off, got, uintptr(unsafe.Pointer(got.at(got.mask))), e, first, end)
		}
		if want := min(off, 1) + 1; calls != want {
			t.Fatalf("offset %d: %d blocks allocated, want %d", off, calls, want)
		}
	}
}

// TestIndexReadersDuringGrow checks that lookups without the lock find
// every key inserted before them while the index grows through ten
// generations.
func TestIndexReadersDuringGrow(t *testing.T) {
	t.Parallel()
	const n = 4000                                       // 16 to 8,192 entries
	l := mustLimiter(t, 1, time.Hour, WithMaxBuckets(n)) // one shard
	sh := &(*l.t.(*shards[uint8]))[0]
	names, ks := make([]string, n), make([]uint64, n)
	for i := range ks {
		names[i] = fmt.Sprint("key-", i)
		ks[i] = l.hash(names[i]) | keyBits
	}
	var published atomic.Int64
	var wg sync.WaitGroup
	for r := range 2 {
		wg.Go(func() {
			for j := int64(r); published.Load() < n; j += 7919 {
				m := published.Load()
				if m == 0 {
					continue
				}
				j %= m
				if _, _, _, ok := sh.find(ks[j], false); !ok {
					t.Errorf("key %d of %d published not found", j, m)
					return
				}
			}
		})
	}
	for i, name := range names {
		if d := l.AllowAt(name, at(0)); !d.Allowed {
			t.Fatalf("key %d: %+v", i, d)
		}
		published.Store(int64(i + 1))
	}
	wg.Wait()
	if size := sh.ids.size(); size < n {
		t.Fatalf("index of %d entries for %d keys", size, n)
	}
}
