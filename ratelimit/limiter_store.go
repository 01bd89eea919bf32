package ratelimit

import (
	"math"
	"math/bits"
	"sync"
	"sync/atomic"
	"time"
	"unsafe"
)

// The in-memory store: keys are spread over shards by the low bits of
// their hash. A shard keeps its buckets' records in chunks of about 8 KiB
// (a bucket id is chunk<<shift | record; a ring of counters lies apart,
// see bucket), and an index from key hash to
// bucket id. A decision for a key with a bucket reads the index without a
// lock and locks only the bucket's record (see shards.allow), unless
// requests contend for the key; those decisions, and creating, reclaiming
// and sweeping buckets, take the shard's lock.
//
// A bucket with no admitted request left inside the window holds no
// information and is reclaimed: a few buckets are examined whenever a new
// bucket is created, and Sweep reclaims all of them at once. A request for
// a reclaimed key (or any key new to its shard) is then treated as arriving
// no earlier than the latest reclamation in that shard, so never earlier
// than the sweep that reclaimed it: clamping a late-arriving time can only
// make limiting stricter.
//
// The number of live buckets is capped (WithMaxBuckets; the cap is divided
// evenly among the shards). When a shard is full, even after reclaiming
// what it can, requests for keys without a bucket share that shard's one
// overflow bucket. A key that later gets a bucket of its own inherits what
// the overflow bucket still counts, so nothing it was admitted through the
// overflow bucket is forgotten. At the cap, the shard is scanned for idle
// buckets at most once per second.

// chunkBytes is the target size of one chunk of records: small, so that
// a partly used chunk per shard wastes little.
const chunkBytes = 8 << 10

type shard[T counter] struct {
	// Read by decisions without mu; written under it.
	ids      index
	dir      atomic.Pointer[chunk] // the first of the chunks
	stride   int                   // words per record
	rstride  int                   // words per ring of counters kept apart, or 0
	perChunk int32                 // records per chunk
	shift    uint8                 // ids per chunk: 1<<shift >= perChunk
	_        [64]byte

	mu         sync.Mutex
	chunks     []chunk // dir points into it
	cursor     int     // next index slot sweepN examines
	free       []int32
	next       int32 // records of the last chunk below next are in use
	live       int
	max        int
	horizon    uint64 // new buckets start no earlier than this
	full       uint32 // skip full sweeps at the cap before this second
	fullSweeps int    // full sweeps at the cap, for tests
	overflow   int32  // -1 until needed
	_          [64]byte
}

// chunk is the memory of perChunk records, and of their rings of counters
// if these are kept apart (nil otherwise).
type chunk struct{ records, rings unsafe.Pointer }

type shards[T counter] []shard[T]

// newShards returns n shards of perShard buckets each, whose records take
// recordBytes and their rings of counters kept apart ringBytes (0 for
// none), both multiples of 8.
func newShards[T counter](n, perShard, recordBytes, ringBytes int) *shards[T] {
	// A chunk's records and rings take about chunkBytes; its records are
	// numbered up to the next power of two, which at most doubles the ids
	// a shard uses (idBits leaves room for that).
	perChunk := int32(max(1, chunkBytes/(recordBytes+ringBytes)))
	s := make(shards[T], n)
	for i := range s {
		s[i] = shard[T]{
			stride:   recordBytes / 8,
			rstride:  ringBytes / 8,
			perChunk: perChunk,
			shift:    uint8(bits.Len32(uint32(perChunk - 1))),
			next:     perChunk,
			max:      perShard,
			overflow: -1,
		}
	}
	return &s
}

// at returns id's record, which alloc returned. (No bounds are checked:
// ids come only from alloc, directly or through the index.)
func (sh *shard[T]) at(id int32) bucket[T] {
	c := (*chunk)(unsafe.Add(unsafe.Pointer(sh.dir.Load()), uintptr(id>>sh.shift)*unsafe.Sizeof(chunk{})))
	i := uintptr(id & (1<<sh.shift - 1))
	return bucket[T]{unsafe.Add(c.records, i*uintptr(sh.stride)*8), unsafe.Add(c.rings, i*uintptr(sh.rstride)*8)}
}

// words returns id's record and its ring kept apart (empty if none) as
// words, for copying and clearing.
func (sh *shard[T]) words(id int32) (record, ring []uint64) {
	b := sh.at(id)
	return unsafe.Slice((*uint64)(b.p), sh.stride), unsafe.Slice((*uint64)(b.r), sh.rstride)
}

// hashOf returns the key of id's record, which is in use.
func (sh *shard[T]) hashOf(id int32) uint64 { return sh.at(id).key() }

func (s *shards[T]) len() int {
	n := 0
	for i := range *s {
		sh := &(*s)[i]
		sh.mu.Lock()
		n += sh.live
		sh.mu.Unlock()
	}
	return n
}

func (s *shards[T]) start(l *Limiter, h uint64) (uint64, bool) {
	sh := &(*s)[h&l.shardMask]
	sh.mu.Lock()
	defer sh.mu.Unlock()
	_, _, _, live := sh.find(h|keyBits, false)
	return sh.horizon, live
}

func (s *shards[T]) sweep(l *Limiter, t uint64) int {
	n := 0
	for i := range *s {
		sh := &(*s)[i]
		sh.mu.Lock()
		n += sh.sweepN(l, t, math.MaxInt)
		sh.mu.Unlock()
	}
	return n
}

// allow decides a request for the key hashed to h at t.
//
// A decision for an existing key normally takes no shard-wide lock: it
// finds the key's record through the index, which it reads without one,
// and locks the record alone through the record's first word (see
// bucket). Requests for many keys then touch no line of memory in common,
// where a shard's lock is shared by a 64th of the keys. A decision that
// finds no record, finds it held or contended, takes the shard's lock and
// looks again, creating the bucket if need be (see allowLocked): requests
// that contend for one key wait on the shard's lock (a sync.Mutex, which
// lets one processor run while the others wait) rather than spin on the
// record, and a contended index entry sends them there without reading
// the record.
//
// Measured on ratelimit/bench (two procs, alternating runs), against every
// decision taking the shard's lock: Keys100kParallel went from 137 to 105
// ns a decision with the machine in its slow state (where moving a line
// between processors costs most), from 59.5 to 54.9 in its fast state,
// and from 83 to 80 between the two; HotKeyParallel from 46-48 to 48-53.
// Spinning on a hot key's record instead had taken HotKeyParallel to
// 120-130 ns in the slow state.
//
// With 100,000 keys a decision is a chain of dependent cache misses: the
// key's bytes (to hash them), the index entry, the record. Tried on
// Keys100kParallel on 2026-11-24 and not kept, none showing a difference
// beyond the machine's noise: records and rings in 2 MB huge pages
// (madvise; medians of 12 alternating runs 56.2 against 58.2 ns);
// prefetching the index entry, or the record, before reading the clock
// (paired ratios 1.05 and 1.00 over 14 pairs); unlocking with a plain
// store instead of the atomic Or (amd64 assembly: Keys100kParallel 1.01
// over 20 pairs; kept later for one key, see below); 64-byte records, one
// line each (two-byte counters against four-byte ones: 1.04 over 10
// pairs). What would remove a miss is the record found without the index
// (records in the hash table itself), which costs the table's empty slots
// in memory per key.
//
// On one key (SingleKey, about 49 ns a decision on 2026-11-25, on a
// 2-vCPU Intel Xeon VM), knocking parts out of a copy gave, as medians of
// 5 alternating runs: without the clock read 23.5 ns (the read is about
// half of it), without the record's lock and unlock 40.3, with the unlock
// a plain store 44.4, without update 45.0. The plain store (unlock, on
// amd64) is what was kept: a byte store, the flags others change moved
// out of the lock's byte. Alone it took HotKeyParallel, where two
// processors take one key's record in turns, from 62-77 to 74-120 ns, the
// key going back and forth between decisions with and without the
// shard's lock (neither PAUSE in spinWait, 102-112, nor a waiting
// decision clearing the uncontended flag, 68-78, helped); with a
// contended record staying so for calmDecisions (63) decisions (see
// bucket) it took 65.5-71.5 against 57.6-69.2 (medians 69.5 and 66.2 over
// 7 alternating runs at 01:43; with 7 decisions, 84-94). Kept, 7
// alternating runs at 01:41: SingleKey 46.1-48.5 ns (median 48.1)
// against 50.0-52.5 (50.5), sethvargo's time over acctapi's 1.47-1.54
// (median 1.51) against 1.39-1.43 (1.41). Splitting the shard's lock and
// what follows it out of allow into a function of its own changed
// nothing (SingleKey medians 48.6 and 48.6 over 7 runs).
//
// A lookup is a chain of dependent loads: the shard's index, the entry,
// the chunk's address, the record. Publishing an index generation as one
// word (see index), where a pointer to a slice header and a mask took two
// dependent loads, took one from the chain: SingleKey 42.9-44.9 ns
// (median 44.5) against 45.6-47.8 (46.7), sethvargo's time over acctapi's
// 1.54-1.63 (1.57) against 1.50-1.55 (1.51), 7 alternating runs at 02:45
// on 2026-11-25; Keys100kPaired 76.4-80.8 ns (median of 4 runs 77.5)
// against 79.8-82.6 (80.8). Reaching the shard without loading the
// shards' slice header (a pointer to the first of them) changed nothing:
// SingleKey medians of 10 alternating runs 44.8 with it, 43.9 without.
//
// Measured on the evening of 2026-11-24 with the two limiters taken in
// turns within one process (as ratelimit/bench's Keys100kPaired does; an A/A
// run gave 0.996, quartiles 0.97 and 1.04), by knocking parts out of a
// copy: without the record (no lock, no update) a decision took 0.25 of
// its time, without update alone 0.81, without the clock read 0.78
// (time passed in), without the atomic lock and unlock 0.98. The record's
// memory is what counts: records of 128 bytes took 1.20 and 1.21 times as
// long as 80 (medians of 20 and 16 rounds), and records of 56 (the
// groups' counts moved to the ring's part, see bucket) 0.81 to 0.83 as
// long (30 and 40 rounds). Reading the clock first, or between
// the index and the record (so that it might overlap the record's miss),
// and the records in one mapping advised to use huge pages, changed
// nothing beyond the quartiles.
func (s *shards[T]) allow(l *Limiter, h uint64, t uint64) Decision {
	sh := &(*s)[h&l.shardMask]
	k := h | keyBits
	id, b, w, ok := sh.find(k, true)
	if ok && w == k && b.tryLock(k) {
		d := b.update(l, t)
		b.unlock()
		return d
	}
	// Whether this decision had to wait for the shard's lock tells whether
	// requests are contending for it.
	waited := !sh.mu.TryLock()
	if waited {
		sh.mu.Lock()
	}
	d := sh.allowLocked(l, k, t, waited, id, b, ok)
	sh.mu.Unlock()
	return d
}

// allowLocked is allow's decision under the shard's lock, given whether
// it waited for the lock and what the lookup without it found (b, of id,
// if ok).
//
// Under the shard's lock, a record that holds k is k's bucket, and stays
// so. A decision that waited makes the bucket contended; one that did not
// counts for a contended bucket (calm), and after calmDecisions of them
// makes it uncontended again: a key whose requests stopped contending for
// it returns to decisions without the shard's lock.
func (sh *shard[T]) allowLocked(l *Limiter, k, t uint64, waited bool, id int32, b bucket[T], ok bool) Decision {
	if !ok || b.key() != k {
		id, b, _, ok = sh.find(k, false)
	}
	switch {
	case ok && waited:
		if b.contend() {
			sh.ids.setContended(k, id, true)
		}
		return b.update(l, t)
	case ok && b.calm():
		return b.update(l, t)
	case ok:
		if b.lockUncontended() {
			sh.ids.setContended(k, id, false)
		}
		d := b.update(l, t)
		b.unlock()
		return d
	}
	b, owned := sh.insert(l, k, t)
	d := b.update(l, t)
	if owned {
		b.unlock()
	}
	return d
}

// find returns the bucket id of key k, its record and the record's first
// word, reading the index without a lock (see index). With fast, contended
// entries are passed over without reading their records: if k's is one,
// only the shard's lock may take it, and the search fails; if it is
// another key's with the same tag, k's lies further on.
func (sh *shard[T]) find(k uint64, fast bool) (int32, bucket[T], uint64, bool) {
	x := sh.ids.load()
	tag := uint32(k >> tagShift)
	i := x.home(k)
	for range x.mask + 1 {
		e := x.at(i).Load()
		if e == 0 {
			break
		}
		if tagOf(e) == tag && (!fast || e&contended == 0) {
			id := int32(e&idMask) - 1
			b := sh.at(id)
			if w := b.word0().Load(); identity(w) == k {
				return id, b, w, true
			}
		}
		i = (i + 1) & x.mask
	}
	return 0, bucket[T]{}, 0, false
}

// insert creates a bucket for key k, locked, or returns the overflow
// bucket (which only holders of mu use, and which is never locked) when the
// shard is full; owned reports which.
//
// At the cap, a full sweep runs at most once per second of t per shard:
// a bucket can only become idle when t reaches a later second, so a flood
// of new keys costs a few bucket examinations each, not a scan of the shard.
//
// A new bucket created while the overflow bucket still counts requests
// inside the window starts as a copy of it: the key may have been admitted
// through the overflow bucket, and those admissions must keep counting.
// Copying can only make limiting stricter.
func (sh *shard[T]) insert(l *Limiter, k uint64, t uint64) (b bucket[T], owned bool) {
	sh.sweepN(l, t, 4)
	if sh.live >= sh.max {
		if sec := uint32(t / uint64(time.Second)); sec >= sh.full {
			sh.sweepN(l, t, math.MaxInt)
			sh.fullSweeps++
			if sh.live >= sh.max {
				sh.full = sec + 1
			}
		}
		if sh.live >= sh.max {
			if sh.overflow < 0 {
				sh.overflow = sh.alloc()
				sh.start(sh.at(sh.overflow), t)
			}
			return sh.at(sh.overflow), false
		}
	}
	id := sh.alloc()
	b = sh.at(id)
	if sh.overflow >= 0 && !sh.at(sh.overflow).idle(l, t) {
		// Not the first word: the overflow bucket's is 0.
		r, ring := sh.words(id)
		or, oring := sh.words(sh.overflow)
		copy(r[1:], or[1:])
		copy(ring, oring)
	} else {
		sh.start(b, t)
	}
	// Locked before a reader can find it.
	b.word0().Store(k &^ unlocked)
	sh.ids.put(k, id, sh.hashOf)
	sh.live++
	return b, true
}

// start initialises an empty bucket at t, or at the shard's horizon if
// that is later.
func (sh *shard[T]) start(b bucket[T], t uint64) {
	*b.last() = max(t, sh.horizon)
}

func (sh *shard[T]) alloc() int32 {
	if n := len(sh.free); n > 0 {
		id := sh.free[n-1]
		sh.free = sh.free[:n-1]
		return id
	}
	if sh.next == sh.perChunk {
		sh.addChunk()
		sh.next = 0
	}
	id := int32(len(sh.chunks)-1)<<sh.shift | sh.next
	sh.next++
	return id
}

// addChunk adds a chunk of records. Readers only reach a chunk through an
// id published in the index after it was added, so its address is set in
// place while chunks has room; when it has none, chunks moves and dir is
// pointed at the copy.
func (sh *shard[T]) addChunk() {
	c := chunk{records: unsafe.Pointer(unsafe.SliceData(make([]uint64, int(sh.perChunk)*sh.stride)))}
	if sh.rstride != 0 {
		c.rings = unsafe.Pointer(unsafe.SliceData(make([]uint64, int(sh.perChunk)*sh.rstride)))
	}
	if len(sh.chunks) < cap(sh.chunks) {
		sh.chunks = append(sh.chunks, c)
		return
	}
	sh.chunks = append(make([]chunk, 0, max(4, 2*cap(sh.chunks))), sh.chunks...)
	sh.chunks = append(sh.chunks, c)
	sh.dir.Store(&sh.chunks[0])
}

// sweepN examines up to n buckets, continuing round-robin where the last
// sweep stopped, and reclaims those that hold no admitted request inside the
// window at t.
func (sh *shard[T]) sweepN(l *Limiter, t uint64, n int) int {
	reclaimed := 0
	size := sh.ids.size()
	for steps := 0; n > 0 && sh.live > 0 && steps < size; {
		if sh.cursor >= size {
			sh.cursor = 0
		}
		id, ok := sh.ids.at(sh.cursor)
		if !ok {
			sh.cursor++
			steps++
			continue
		}
		n--
		b := sh.at(id)
		// A bucket a decision holds is in use: not idle.
		ok, locked := b.acquire()
		if !ok {
			sh.cursor++
			steps++
			continue
		}
		te := max(t, *b.last())
		if !b.idle(l, te) {
			if locked {
				b.unlock()
			}
			sh.cursor++
			steps++
			continue
		}
		// Deleting may move a later entry into this slot: examine it again.
		sh.ids.deleteAt(sh.cursor, sh.hashOf)
		r, ring := sh.words(id)
		clear(r[1:])
		clear(ring)
		b.word0().Store(0) // unlocks it, no longer any key's
		sh.free = append(sh.free, id)
		sh.live--
		// The key's next request must not see an earlier time than te,
		// when its bucket was known to be empty.
		sh.horizon = max(sh.horizon, te)
		reclaimed++
	}
	return reclaimed
}
