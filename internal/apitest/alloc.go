package apitest

import "runtime"

// Allocations is what a function allocated on the heap.
type Allocations struct {
	// Bytes is how many bytes it allocated.
	Bytes uint64
	// Count is how many allocations it made.
	Count uint64
}

// Allocated returns what fn allocates on the heap. Whatever else runs
// meanwhile counts too: a test that calls it does not run in parallel.
func Allocated(fn func()) Allocations {
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	fn()
	runtime.ReadMemStats(&after)
	return Allocations{Bytes: after.TotalAlloc - before.TotalAlloc, Count: after.Mallocs - before.Mallocs}
}
