package ratelimit

import (
	"sync/atomic"
	"testing"
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
	// Memory at every offset of four bytes from 32-byte alignment, with
	// the slack newEntries gives it when it is not aligned.
	const size = 16
	buf := make([]atomic.Uint32, size+packBits/4+8)
	for off := range 8 {
		a := buf[off : off+size+packBits/4]
		e, packed := packEntries(a, size)
		x.t.Store(packed)
		first, end := uintptr(unsafe.Pointer(&a[0])), uintptr(unsafe.Pointer(&a[len(a)-1]))
		got := x.load()
		if got != e || uintptr(got.e)&packBits != 0 || uintptr(got.e) < first ||
			uintptr(unsafe.Pointer(got.at(got.mask))) > end {
			t.Fatalf("offset %d: unpacked %+v (last entry at %#x), want %+v aligned inside [%#x, %#x]",
				off, got, uintptr(unsafe.Pointer(got.at(got.mask))), e, first, end)
		}
	}
}
