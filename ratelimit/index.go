package ratelimit

import (
	"math/bits"
	"sync/atomic"
	"unsafe"
)

// index maps key hashes to bucket ids in four bytes an entry: open
// addressing with linear probing over the hash's own bits (they come from
// a seeded hash, so no rehashing), and backward-shift deletion, so there
// are no tombstones. An entry holds the id plus one (0 marks it empty), a
// flag marking the bucket contended (see bucket) and a tag of the hash's
// top eight bits; the full hash lives in the bucket, which a lookup reads
// anyway, so a tag match is confirmed there. Growing and deleting read
// hashes back through hashOf. The zero value is an empty index.
//
// One writer at a time (the shard's lock) changes it, while readers look
// keys up without a lock: entries are read and written atomically, and
// growing builds a new table of entries and then publishes it. A reader
// may therefore miss a key that is being inserted, or whose entry a
// deletion is moving back, or find an entry whose bucket has since been
// reclaimed; it confirms what it finds against the bucket, and on a miss
// asks again under the lock (see shards.allow).
//
// A generation of entries is published as one word: the address of its
// first entry, aligned to 32 bytes, plus the base-2 logarithm of its size
// in the five bits the alignment leaves free. A lookup then reaches its
// entry with one load before it, where a pointer to a slice header and a
// mask took two dependent ones (see shards.allow for what that saved).
type index struct {
	t atomic.Pointer[byte] // the packed generation; nil when empty
	n int                  // entries in use; the writer's
}

// entries is one generation of an index's entries, unpacked.
type entries struct {
	e    unsafe.Pointer // the first of mask+1 entries
	mask uint64
}

// load returns the current generation, with mask+1 = 0 entries if none.
func (x *index) load() entries {
	p := unsafe.Pointer(x.t.Load())
	if p == nil {
		return entries{mask: ^uint64(0)}
	}
	lg := uintptr(p) & packBits
	return entries{unsafe.Add(p, -int(lg)), 1<<lg - 1}
}

// packBits are the bits of a published generation's address that hold
// the base-2 logarithm of its size: the entries are aligned to 32 bytes.
const packBits = 31

// newEntries returns an empty generation of size entries, a power of two
// from 16, and its packed address.
func newEntries(size int) (entries, *byte) {
	return allocEntries(size, func(n int) []atomic.Uint32 { return make([]atomic.Uint32, n) })
}

// allocEntries is newEntries with the memory from alloc, which returns n
// zeroed entries; tests give it memory at every alignment.
func allocEntries(size int, alloc func(n int) []atomic.Uint32) (entries, *byte) {
	if size < 16 || size&(size-1) != 0 || uint64(size) > 1<<packBits {
		panic("ratelimit: an index of a size that is not a power of two from 16")
	}
	// Go's allocator aligns blocks of a power of two bytes from 32 to at
	// least 32 bytes (not so under GODEBUG=sbrk=1); should one not be, a
	// block with room to align it is used instead (room that would take a
	// block of 8 KiB to the next size class, of 9,472 bytes, were it
	// always added).
	a := alloc(size)
	if uintptr(unsafe.Pointer(&a[0]))&packBits != 0 {
		a = alloc(size + packBits/4)
	}
	// Aligned by slicing, so that too little room is caught.
	off := (-int(uintptr(unsafe.Pointer(&a[0]))) & packBits) / int(unsafe.Sizeof(a[0]))
	a = a[off : off+size : off+size]
	p := unsafe.Pointer(&a[0])
	lg := uintptr(bits.TrailingZeros(uint(size)))
	return entries{p, uint64(size - 1)}, (*byte)(unsafe.Add(p, lg))
}

// at returns entry i, which must be at most mask.
func (x entries) at(i uint64) *atomic.Uint32 {
	return (*atomic.Uint32)(unsafe.Add(x.e, uintptr(i)*unsafe.Sizeof(atomic.Uint32{})))
}

// An entry: the tag in the top byte, then the contended flag (see
// bucket), then the id plus one.
const (
	// Ids stay below 1<<idBits - 1: at most 1<<21 buckets a shard (64
	// shards), numbered with up to twice that many ids (see newShards).
	idBits    = 23
	idMask    = 1<<idBits - 1
	contended = 1 << idBits
	tagBits   = 32 - idBits - 1
	tagShift  = 64 - tagBits
)

// tagOf returns an entry's tag.
func tagOf(e uint32) uint32 { return e >> (idBits + 1) }

// home returns h's preferred slot. The low six bits of h choose the shard,
// and a record's first word keeps its lock and flags in bits 0 to 8 (see
// bucket), so the slot uses the bits above them.
func (x entries) home(h uint64) uint64 { return (h >> 9) & x.mask }

// size returns the number of slots, 0 for an empty index.
func (x *index) size() int { return int(x.load().mask + 1) }

// put adds h, which must not be present, with bucket id.
func (x *index) put(h uint64, id int32, hashOf func(int32) uint64) {
	// At most 7/8 full: linear probing's expected cost of a hit at that
	// load is 4.5 entries, within one or two cache lines of four-byte
	// entries; 3/4 cost 4 bytes a key more on ratelimit/bench's
	// BytesPerKey (100,000 keys: about 1,563 a shard, just past 3/4 of
	// 2,048 entries).
	if 8*(x.n+1) > 7*x.size() {
		x.grow(hashOf)
	}
	x.load().put(h, uint32(h>>tagShift)<<(idBits+1)|uint32(id+1))
	x.n++
}

// put adds entry e of hash h.
func (x entries) put(h uint64, e uint32) {
	i := x.home(h)
	for x.at(i).Load() != 0 {
		i = (i + 1) & x.mask
	}
	x.at(i).Store(e)
}

// grow publishes a table of twice the size holding the same entries.
// Readers of the old one still find every key it held.
func (x *index) grow(hashOf func(int32) uint64) {
	old := x.load()
	t, packed := newEntries(max(16, 2*int(old.mask+1)))
	for i := range old.mask + 1 {
		if e := old.at(i).Load(); e != 0 {
			t.put(hashOf(int32(e&idMask)-1), e)
		}
	}
	x.t.Store(packed)
}

// setContended sets or clears the contended flag of the entry of bucket
// id, of hash h.
func (x *index) setContended(h uint64, id int32, on bool) {
	t := x.load()
	i := t.home(h)
	for range t.mask + 1 {
		e := t.at(i).Load()
		if e == 0 {
			return
		}
		if e&idMask == uint32(id+1) {
			if on {
				e |= contended
			} else {
				e &^= contended
			}
			t.at(i).Store(e)
			return
		}
		i = (i + 1) & t.mask
	}
}

// at returns the bucket id in slot i, if any; i must be below size().
func (x *index) at(i int) (int32, bool) {
	t := x.load()
	if uint64(i) > t.mask {
		panic("ratelimit: index slot out of range")
	}
	e := t.at(uint64(i)).Load()
	return int32(e&idMask) - 1, e != 0
}

// deleteAt empties slot i and shifts later entries of its probe run back,
// so lookups never stop early. An entry from after i may move into i.
// A reader probing meanwhile may miss an entry moved back behind it; the
// reader then asks again under the lock. Slot i must be in use.
func (x *index) deleteAt(i int, hashOf func(int32) uint64) {
	t := x.load()
	j := uint64(i)
	if j > t.mask {
		panic("ratelimit: index slot out of range")
	}
	for {
		k := j
		for {
			k = (k + 1) & t.mask
			ek := t.at(k).Load()
			if ek == 0 {
				t.at(j).Store(0)
				x.n--
				return
			}
			h := t.home(hashOf(int32(ek&idMask) - 1))
			// Move e[k] to j unless its home lies cyclically in (j, k].
			if (j < k && (h <= j || h > k)) || (j > k && h <= j && h > k) {
				break
			}
		}
		t.at(j).Store(t.at(k).Load())
		j = k
	}
}
