package ratelimit

import (
	"math"
	"math/bits"
	"runtime"
	"sync/atomic"
	"time"
	"unsafe"
)

// A bucket's state is a fixed-size record of bytes. The Redis store
// (ratelimit/redisstore) keeps the same two counts in a record of its own,
// updated by a Lua script, with the same nGroups, group size and slot
// length; a change to them here belongs there too. The record holds two
// conservative counts of the
// key's admissions; each alone never counts fewer admissions inside the
// window than there are, so their minimum does not either, and the limiter
// admits while that minimum is below capacity.
//
//   - Groups: up to nGroups runs of consecutive admissions, each with its
//     count and the time of its latest admission (a 16-bit index on a grid
//     of a few milliseconds for a one-minute window, rounded up; the
//     newest group's time is exact, through sub). A group leaves the
//     window in full when its latest admission does. An admission joins
//     the newest group when it arrives at the same instant, or while that
//     group holds fewer than l.group = ceil(capacity/12); otherwise it
//     starts a group, or, when all are in use, the newest takes it. With
//     capacity at most nGroups every group is one admission or one
//     instant, so the groups are an exact sliding log (to the grid step,
//     and the latest admission exactly). Above that they are exact for
//     bursts at one instant (a batch sent once every window is admitted in
//     full, as by an exact log) and release a dense run of admissions a
//     group at a time. (On ratelimit/bench, groups of capacity/8 admitted
//     0.94 of an exact log on the boundary burst, groups of capacity/16
//     0.94 on bursts spread over 0.6s; capacity/12 keeps both above 0.95.)
//   - Ring (only when capacity > nGroups): a counter per slot of
//     max(1s, window/60) rounded down to whole seconds, a slot counted in
//     full until its last instant has left the window. It bounds how late
//     any admission is released to one slot whatever the traffic, which
//     keeps Decision.RetryAfter within max(1s, window/60) of an exact log's
//     answer where the groups are coarse (traffic spread over the window).
//     The ring alone was the limiter before issue 15: on ratelimit/bench
//     it admitted 0.87 of an exact log on the boundary burst and 0.50 on
//     bursts once every window.
//
// Layout (little-endian, offsets in bytes):
//
//	0   key    uint64  the key's hash with keyBits set, or 0 when free,
//	                   and the record's lock (see key; the index keeps
//	                   only a tag of the hash)
//	8   last   uint64  ns since the epoch: the latest time seen (earlier
//	                   times are treated as this one); the ring holds the
//	                   slots up to last's
//	16  sub    41 bits how far the newest group's grid time lies after the
//	                   latest admission, in ns: the latest admission's
//	                   time, exactly; bytes 16 to 20 hold its low 40 bits
//	                   and bit 7 of byte 21 its 41st (a grid step is less
//	                   than 2^41-1 ns for every window up to 366 days).
//	                   Or subAtLast: the latest admission is at last, and
//	                   the newest group's grid time is yet to be set
//	                   (see update)
//	21  head   3 bits  ring position of the oldest group (bits 0-2)
//	    n      4 bits  live groups (bits 3-6)
//	22  times  [nGroups]uint16
//	38  pend   uint16  with four-byte counters and a ring of counters (see
//	                   below)
//	38  grouped T, aligned to T (at 40 with four-byte counters): the sum
//	                   of the groups' counts
//	    total  T       the sum of the ring
//	    counts [nGroups]T, the groups' counts; or, with a ring of
//	                   counters, cur T, the newest group's count alone
//	                   (see below)
//	    ring   the ring in unary, uwords words aligned to 8 (see
//	           unaryRing), when the limiter's uwords is not 0; or
//	    pend   uint16  with one- or two-byte counters and a ring of
//	                   counters, aligned to 2: admissions counted in
//	                   total but not yet in the ring, all in last's slot
//	                   (at most 65,535: update leaves a decision that
//	                   would count more to updateAll)
//
// A ring of counters, [ring]T where position p holds the slot congruent to
// p, is kept apart from the record, in a part of its own (bucket.r), so
// that a decision that changes no slot touches only the record: the
// common one, an admission in the same second as the key's last request,
// counts in pend, and the first decision that needs the ring (updateAll)
// adds pend to last's slot. The records of many keys then lie close
// together. The groups' counts go with it, before the ring: the common
// decision counts in the newest group, whose count the record keeps (cur);
// the other groups' counts, read only when a group leaves or to answer a
// rejection, are written when their group stops being the newest. With
// four-byte counters that makes a record of 56 bytes where it took 80
// (the bytes a key takes in all stay within 8 of what they were, see
// TestMemoryPerBucket): on Keys100kParallel's workload, the two limiters
// taken in turns within one process (as ratelimit/bench's
// Keys100kPaired does), a decision took 0.83 and 0.81 of its time with
// the 80-byte records (medians of 40 and 30 rounds, 2026-11-24). Records
// padded to 64 bytes, one cache line each, took 0.94 and 0.97 of the
// 56-byte records' time (medians of 30 and 40 rounds the same evening,
// quartiles 0.89 to 1.07 and 0.83 to 1.11): not kept, for 8 more bytes a
// key. On ratelimit/bench's Keys100kParallel (capacity 2^30 an hour:
// four-byte counters, 61 slots), a record of 384 bytes with its ring (a
// record of more than two cache lines started on one) became one of 80
// and a ring of 248: 38 MB of records for 100,000 keys became 8 MB, and
// paired.sh's ratio of sethvargo's time to acctapi's went from 0.99 and
// 1.02 to 1.56 and 1.23 (two rounds at 17:32 on 2026-11-24, old and new
// back to back). With 30,000 keys, whose 384-byte records took 11 MB, the
// old layout already took two thirds of sethvargo's time.
//
// With T = uint8 (capacities up to 127) and no ring the record is 48
// bytes; the unary ring of a capacity of 100, 5 words, makes one of 88.
// The unary form is used when it is smaller than a ring of counters and at
// most maxUnaryWords words.
const (
	nGroups  = 8
	offLast  = 8
	offSub   = 16 // the word at 16 holds sub, head and n (and times[0])
	offTimes = 22
)

// The word at offSub: sub's low 40 bits, then head, n and sub's 41st bit
// in its sixth byte. A sub of subAtLast, never a grid step's, says that
// the latest admission is at last.
const (
	subAtLast = 1<<41 - 1
	subLow    = 1<<40 - 1
	subHigh   = 47 // the bit of the word holding sub's 41st
	headBit   = 40 // head: bits 40-42
	nBit      = 43 // n: bits 43-46
	headMask  = 7
	nMask     = 15
)

// maxUnaryWords bounds the unary ring, whose slot changes shift it whole
// and whose rejections walk it, to 512 bits: capacities up to 226
// with a ring of 61 slots.
const maxUnaryWords = 8

// unaryWords returns the words a unary ring of ring slots needs when no
// slot count exceeds capacity and the ring counts at most twice the
// capacity: one bit per admission and one between slots.
func unaryWords(capacity int64, ring uint32) int {
	return int((2*capacity + int64(ring) - 1 + 63) / 64)
}

// groupedOffset is the offset of grouped for counters of width bytes;
// total, counts and pend or the unary ring follow it.
func groupedOffset(width int) int {
	return (offTimes + 2*nGroups + width - 1) / width * width
}

// pendOffset is the offset of pend, in a record whose ring is one of
// counters: with four-byte counters in the two bytes before grouped, so
// that the record is no larger than without it; otherwise after cur.
func pendOffset(width int) int {
	if width == 4 {
		return offTimes + 2*nGroups
	}
	return (curEnd(width) + 1) / 2 * 2
}

// curEnd is the offset of the byte after cur, in a record whose ring is
// one of counters.
func curEnd(width int) int {
	return groupedOffset(width) + 3*width
}

// countsEnd is the offset of the byte after counts.
func countsEnd(width int) int {
	return groupedOffset(width) + (2+nGroups)*width
}

// ringOffset is the offset of the unary ring.
func ringOffset(width int) int {
	return (countsEnd(width) + 7) / 8 * 8
}

// recordBytes is the size of a bucket's record and of its ring's part
// (0 when the ring is in the record or there is none), each a multiple of
// 8, with a ring of ring slots of width bytes, or uwords words in the
// record when uwords is not 0. A ring of counters's part holds the
// groups' counts, then the ring.
func recordBytes(width int, ring uint32, uwords int) (record, ringPart int) {
	switch {
	case uwords != 0:
		return ringOffset(width) + 8*uwords, 0
	case ring == 0:
		return ringOffset(width), 0
	}
	return (max(curEnd(width), pendOffset(width)+2) + 7) / 8 * 8, ((nGroups+int(ring))*width + 7) / 8 * 8
}

// bucket is a view of one record, p, and of its ring of counters, r, if
// it has one (nil otherwise).
type bucket[T counter] struct{ p, r unsafe.Pointer }

// A record's first word identifies its key and guards the rest. A key's
// identity is its hash with keyBits set, k; the word is 0 while the record
// is free.
//
// A record starts uncontended: a decision locks it alone, without its
// shard's lock, by clearing the unlocked bit. A decision that finds it held
// or contended, or that missed it without the shard's lock (see index),
// takes the shard's lock. If it had to wait for that lock, requests are
// contending: it clears the uncontended bit (and flags the key's index
// entry), and from then on the shard's lock guards the record, once a
// decision that locked the record alone before has unlocked it; decisions
// for the key go to the shard's lock, whose waiting suits a key that
// requests contend for. After calmDecisions decisions that found the
// shard's lock free since it became contended, the next makes the record
// uncontended again (see shards.allowLocked): a key whose requests
// stopped contending for it returns to decisions without the shard's
// lock, and one that two processors take in turns stays with the lock for
// a while rather than go back and forth at once. The calm bits count
// those decisions down while the record is contended, and are all set
// otherwise. (Decisions that waited do not start the count again: whether
// a decision waits depends on every key of the shard, and a quiet key
// beside a busy one would stay with the shard's lock.)
//
// The word's low nine bits hold these flags in place of the hash's bits 0
// to 8. Bits 0 to 5 are shared anyway by the records of one shard (with
// 64 shards); bits 6 to 8 are lost, so keys whose hashes differ only there
// (with one shard, only in bits 0 to 8) share a bucket, as keys whose
// hashes collide would.
//
// An unlocked, uncontended record's first byte is 0xFF (flags and calm
// bits set); a held record's is always 0xFE. Only atomic operations touch
// the first word, except unlock, which on amd64 is a plain store of 0xFF
// to the word's first byte (see unlock_amd64.go): while a record is held,
// only its holder changes that byte (another decision's failed
// compare-and-swap writes the word back unchanged), and the one flag
// others change then, uncontended, lies in the next byte (bit 8). (The calm bits
// change only under the shard's lock while the record is contended, when
// no decision holds it without that lock.) The rest of a record is read
// and written by whoever holds its lock, or, while it is free, contended
// or the overflow bucket (whose first word is always 0), by the holder of
// the shard's lock.
const (
	unlocked     = 1
	calmShift    = 2
	calmBits     = 63 << calmShift                       // bits 2 to 7
	uncontended  = 1 << 8                                // not in unlocked's byte (see unlock)
	keyBits      = unlocked | 2 | calmBits | uncontended // 2 keeps a held word non-zero
	identityBits = unlocked | calmBits | uncontended
	// calmDecisions is how many decisions that find the shard's lock
	// free a contended record takes before the next makes it uncontended
	// (see calm).
	calmDecisions = calmBits >> calmShift
)

func (b bucket[T]) word0() *atomic.Uint64 { return (*atomic.Uint64)(b.p) }

// identity returns the key of a record whose first word is w, or
// identityBits (never a key) if it is free.
func identity(w uint64) uint64 { return w | identityBits }

// key returns the identity of the record's key.
func (b bucket[T]) key() uint64 { return identity(b.word0().Load()) }

// tryLock locks b, k's record, if it is unlocked and uncontended: a
// decision's one attempt without the shard's lock.
func (b bucket[T]) tryLock(k uint64) bool {
	return b.word0().CompareAndSwap(k, k&^unlocked)
}

// spinWait is the round-th wait for a decision that holds a record
// without the shard's lock. Such holders keep a record for one decision,
// so the first rounds spin, and later ones yield the processor in case the
// holder is not running.
func spinWait(round int) {
	if round >= 16 {
		runtime.Gosched()
	}
}

// contend makes b, whose shard's lock the caller holds, contended, and
// waits until no decision holds it without the shard's lock (spinWait).
// It reports whether b was uncontended. (A record that was uncontended has
// its calm bits all set, so its count starts at calmDecisions; a contended
// one keeps its count.)
func (b bucket[T]) contend() (was bool) {
	w := b.word0()
	for i := 0; ; i++ {
		v := w.Load()
		switch {
		case v&uncontended != 0:
			was = w.CompareAndSwap(v, v&^uncontended) || was
		case v&unlocked != 0:
			return was
		default:
			spinWait(i)
		}
	}
}

// calm is called by a decision that holds the shard's lock and did not
// wait for it. If b is contended and its count is not spent, it counts one
// down and reports true (b stays contended); otherwise it reports false,
// and the caller makes b uncontended (lockUncontended).
func (b bucket[T]) calm() bool {
	w := b.word0()
	v := w.Load()
	if v&uncontended != 0 || v&calmBits == 0 {
		return false
	}
	// Contended: no decision holds b without the shard's lock.
	w.Store(v - 1<<calmShift)
	return true
}

// lockUncontended locks b, whose shard's lock the caller holds without
// having waited for it, and makes it uncontended again, its calm bits all
// set: the requests that contended for it have gone. It waits while a
// decision without the shard's lock holds b (spinWait), and reports
// whether b was contended.
func (b bucket[T]) lockUncontended() (was bool) {
	w := b.word0()
	for i := 0; ; i++ {
		v := w.Load()
		if v&unlocked != 0 && w.CompareAndSwap(v, (v|uncontended|calmBits)&^unlocked) {
			return v&uncontended == 0
		}
		spinWait(i)
	}
}

// acquire takes b, whose shard's lock the caller holds, unless a decision
// holds it without the shard's lock; locked reports whether b was locked
// and must be unlocked after.
func (b bucket[T]) acquire() (ok, locked bool) {
	w := b.word0()
	v := w.Load()
	switch {
	case v&unlocked == 0:
		return false, false
	case v&uncontended == 0:
		return true, false
	}
	ok = w.CompareAndSwap(v, v&^unlocked)
	return ok, ok
}

func (b bucket[T]) last() *uint64 { return (*uint64)(unsafe.Add(b.p, offLast)) }

// word is the word at offSub, which holds sub, head and n; its top two
// bytes are times[0], which the setters leave alone.
func (b bucket[T]) word() *uint64 { return (*uint64)(unsafe.Add(b.p, offSub)) }

func (b bucket[T]) sub() uint64 { return subOf(*b.word()) }
func (b bucket[T]) head() uint8 { return uint8(*b.word()>>headBit) & headMask }
func (b bucket[T]) n() uint8    { return uint8(*b.word()>>nBit) & nMask }

func (b bucket[T]) setSub(s uint64) {
	p := b.word()
	*p = withSub(*p, s)
}

// subOf returns the sub held in w, the word at offSub.
func subOf(w uint64) uint64 { return w&subLow | w>>subHigh&1<<40 }

// withSub returns w, the word at offSub, holding sub s.
func withSub(w, s uint64) uint64 { return w&^(subLow|1<<subHigh) | s&subLow | s>>40&1<<subHigh }

func (b bucket[T]) setHeadN(h, n uint8) {
	p := b.word()
	*p = *p&^(headMask<<headBit|nMask<<nBit) | uint64(h)<<headBit | uint64(n)<<nBit
}
func (b bucket[T]) times() *[nGroups]uint16 {
	return (*[nGroups]uint16)(unsafe.Add(b.p, offTimes))
}

// width is the size of T in bytes: a constant of each instantiation, so
// the offsets below fold to constants.
func (b bucket[T]) width() int {
	var z T
	return int(unsafe.Sizeof(z))
}

func (b bucket[T]) grouped() *T { return (*T)(unsafe.Add(b.p, groupedOffset(b.width()))) }

func (b bucket[T]) total() *T {
	return (*T)(unsafe.Add(b.p, groupedOffset(b.width())+b.width()))
}

// counts returns the groups' counts: in the record, or, with a ring of
// counters (b.r is not nil), in the ring's part, where the newest group's
// is not kept (see cur).
func (b bucket[T]) counts() *[nGroups]T {
	if b.r != nil {
		return (*[nGroups]T)(b.r)
	}
	return (*[nGroups]T)(unsafe.Add(b.p, groupedOffset(b.width())+2*b.width()))
}

// cur returns the count of group i, the newest: in the record with a ring
// of counters, else among counts.
func (b bucket[T]) cur(i uint8) *T {
	if b.r != nil {
		return (*T)(unsafe.Add(b.p, groupedOffset(b.width())+2*b.width()))
	}
	return &b.counts()[i]
}

// pend is the count of admissions in last's slot not yet in the ring of
// counters.
func (b bucket[T]) pend() *uint16 { return (*uint16)(unsafe.Add(b.p, pendOffset(b.width()))) }

// ring returns the ring of counters, of n slots, after the counts.
func (b bucket[T]) ring(n uint32) []T {
	return unsafe.Slice((*T)(unsafe.Add(b.r, nGroups*b.width())), n)
}

// unary returns the ring in its unary form, of n words.
func (b bucket[T]) unary(n uint32) unaryRing {
	return unsafe.Slice((*uint64)(unsafe.Add(b.p, ringOffset(b.width()))), n)
}

// The groups' time grid has steps of u = (1s/256) << ushift: small enough
// that two windows span fewer than 2^15 steps (a live group is less than two
// windows old, so a 16-bit index identifies it), and whole seconds are
// grid points while u is at most a second.
const gridBase = uint64(time.Second / 256)

// grid returns floor(t/u).
func (l *Limiter) grid(t uint64) uint64 {
	return l.gridSec(t, t/uint64(time.Second))
}

// gridSec is grid given sec, t in whole seconds.
func (l *Limiter) gridSec(t, sec uint64) uint64 {
	return (sec<<8 | (t-sec*uint64(time.Second))/gridBase) >> (l.ushift & 63)
}

// gridTime returns the time of grid index q: q steps of gridBase<<ushift
// ns (a second is 256 gridBase).
func (l *Limiter) gridTime(q uint64) uint64 {
	return q * l.gridNs
}

// gridUp rounds t, whose grid index is q, up to the grid, as a group's
// time is stored (a group never leaves the window early; sub says by how
// much it was rounded): it returns the index and its time.
func (l *Limiter) gridUp(q, t uint64) (uint64, uint64) {
	gt := l.gridTime(q)
	if gt < t {
		q++
		gt = l.gridTime(q)
	}
	return q, gt
}

// groupTime returns the time, in ns since the epoch, of a group stored as
// grid index v, given q, the grid index of a time no earlier than the
// group's latest admission and less than two windows after it. (A stored
// index is rounded up, so it may lie one step after q.)
func (l *Limiter) groupTime(q uint64, v uint16) uint64 {
	age := int64(int16(uint16(q) - v))
	return l.gridTime(uint64(int64(q) - age))
}

// newest returns the time of the latest admission (that of the newest
// group, which must exist), given q, the grid index of a time at or after
// it and less than two windows after it.
func (b bucket[T]) newest(l *Limiter, q uint64) uint64 {
	if b.sub() == subAtLast {
		return *b.last()
	}
	i := (b.head() + b.n() - 1) % nGroups
	return l.latest(q, b.times()[i], b.sub())
}

// latest returns the time of the latest admission, exactly, from the
// newest group's grid index v and its sub, given q as for newest.
// Comparisons with it add the window to it rather than subtract it from a
// time, which could not wrap even if it were later. (A method of the
// Limiter, not of the generic bucket, so it is inlined.)
func (l *Limiter) latest(q uint64, v uint16, sub uint64) uint64 {
	return l.groupTime(q, v) - sub
}

// idle reports whether b counts no admission inside the window at t (or
// at last, if that is later).
func (b bucket[T]) idle(l *Limiter, t uint64) bool {
	if b.n() == 0 {
		return true
	}
	last := *b.last()
	t = max(t, last)
	return t >= last+l.wns || t >= b.newest(l, l.grid(t))+l.wns
}

// update applies one request at time t to b.
//
// A time earlier than b's last is treated as last; the retry delay is still
// measured from the caller's time, so that waiting it out lands the retry
// where the bucket admits it.
//
// The common case, an admission later in the same second as the key's
// latest request that the newest group takes, with no group leaving and
// the ring's oldest slot inside the window, is decided here with no more
// than it needs; everything else goes to updateAll, which decides the
// same (TestLayoutsSameDecisions). With it, and a grid time computed by one
// multiplication, ratelimit/bench's SingleKey went from 51 to 45 ns a
// decision (clock included; medians of 3 alternating runs).
//
// An admission here leaves the newest group's grid time and sub to be set
// from last by the next decision that needs them (updateAll), and marks
// the record so (subAtLast): the next decision here then needs no grid
// time at all while the newest group is the only one. On
// Keys100kParallel's workload (one group a key), with the limiter before
// and after taken in turns within one process, a decision took 0.95 and
// 0.91 of its time (medians of 30 rounds, 2026-11-24).
func (b bucket[T]) update(l *Limiter, t uint64) Decision {
	// The word holding sub, head and n, read once (see bucket.word).
	wp := b.word()
	w := *wp
	last, n := *b.last(), uint8(w>>nBit)&nMask
	if t < last || n == 0 || !l.fast {
		return b.updateAll(l, t)
	}
	sec := t / uint64(time.Second)
	if start := sec * uint64(time.Second); last < start {
		return b.updateAll(l, t) // (last <= t: the same second)
	}
	times := b.times()
	h := uint8(w>>headBit) & headMask
	ni := (h + n - 1) % nGroups
	// At last, the newest admission lies in t's second, so inside the
	// window: with no older group, no group leaves.
	newest := last
	if atLast := subOf(w) == subAtLast; !atLast || h != ni {
		q := l.gridSec(t, sec)
		if !atLast {
			newest = l.latest(q, times[ni], subOf(w))
		}
		if t >= newest+l.wns || h != ni && min(l.groupTime(q, times[h]), newest)+l.wns <= t {
			return b.updateAll(l, t) // a group leaves
		}
	}
	grouped := int64(*b.grouped())
	counted := grouped
	if l.ring != 0 {
		// The same slot as last's; its oldest slot lies inside the window
		// (l.fast), so the ring counts its total.
		counted = min(counted, int64(*b.total()))
	}
	same := t == newest
	cur := b.cur(ni)
	if counted >= l.capacity || grouped >= 2*l.capacity ||
		!same && *cur >= T(l.group) && n < nGroups ||
		l.ring != 0 && l.uwords == 0 && *b.pend() == math.MaxUint16 {
		return b.updateAll(l, t) // rejected, collapsing, a new group, or pend full
	}
	if !same {
		*wp = withSub(w, subAtLast)
	}
	*cur++
	*b.grouped()++
	*b.last() = t
	if ring := l.ring; ring != 0 {
		total := b.total()
		if l.uwords != 0 {
			b.unary(l.uwords).add(uint(*total) + uint(ring) - 1)
		} else {
			*b.pend()++ // last's slot, and t's (see updateAll)
		}
		*total++
	}
	return Decision{Allowed: true, Remaining: l.capacity - counted - 1}
}

// updateAll is update for every case.
func (b bucket[T]) updateAll(l *Limiter, t uint64) Decision {
	caller := t
	// The counter ring's slot for the caller's time, read first (the
	// unary ring has no slot of its own to read): with many keys
	// the record is a cache miss, and so is this slot's line, some
	// hundred instructions later; read here, the two misses overlap (on
	// ratelimit/bench's Keys100kParallel). It is the slot admissions count
	// in unless another request for the key came later.
	var (
		slots      []T
		csec       = uint32(caller / uint64(time.Second))
		ccur, cpos uint32
		pre        T
	)
	last := *b.last()
	if ring := l.ring; ring != 0 && l.uwords == 0 {
		slots = b.ring(ring)
		ccur = l.slotDiv.div(csec)
		cpos = l.ringDiv.mod(ccur)
		pre = slots[cpos]
		// What update counted in pend lies in last's slot.
		if p := b.pend(); *p != 0 {
			slots[l.ringDiv.mod(l.slotDiv.div(uint32(last/uint64(time.Second))))] += T(*p)
			*p = 0
			pre = slots[cpos]
		}
	}
	t = max(t, last)
	w := l.wns
	sec := t / uint64(time.Second)
	q := l.gridSec(t, sec)

	// Groups: drop those that have left the window. The newest group's
	// time is the latest admission, exactly; an older group's rounded time
	// may lie after it, but its admissions do not.
	times, counts := b.times(), b.counts()
	h, n := b.head(), b.n()
	newest := uint64(0)
	if n > 0 {
		// b.newest, by hand: generic methods are not inlined.
		ni := (h + n - 1) % nGroups
		if b.sub() == subAtLast {
			// update admitted at last: set the newest group's grid time,
			// rounded up, and sub, as for any admission (see addGroup).
			newest = last
			ql, gt := l.gridUp(l.grid(last), last)
			b.setSub(gt - last)
			times[ni] = uint16(ql)
		} else {
			newest = l.latest(q, times[ni], b.sub())
		}
		if t-last >= w || t >= newest+w {
			n = 0
		}
	}
	if n == 0 {
		*b.grouped() = 0
	}
	for n > 1 && min(l.groupTime(q, times[h]), newest)+w <= t {
		*b.grouped() -= counts[h]
		h = (h + 1) % nGroups
		n--
	}
	b.setHeadN(h, n)
	grouped := int64(*b.grouped())
	counted := grouped

	// Ring.
	var (
		cur, pos, jmin uint32
		rc             int64
		u              unaryRing
	)
	if ring := l.ring; ring != 0 {
		total := b.total()
		if l.uwords != 0 {
			u = b.unary(l.uwords)
			cur = l.slotDiv.div(uint32(sec))
			if lsec := uint32(last / uint64(time.Second)); lsec != uint32(sec) {
				if head := l.slotDiv.div(lsec); cur != head {
					// Slots head+1..cur begin; as many of the oldest leave.
					if k := cur - head; k >= ring {
						clear(u)
						*total = 0
					} else {
						*total -= T(u.drop(int(k)))
					}
				}
			}
		} else {
			cur, pos = ccur, cpos
			if uint32(sec) != csec {
				cur = l.slotDiv.div(uint32(sec))
				pos = l.ringDiv.mod(cur)
				pre = slots[pos]
			}
			if lsec := uint32(last / uint64(time.Second)); lsec != uint32(sec) {
				if head := l.slotDiv.div(lsec); cur != head {
					// Clear the positions of slots head+1..cur: they held
					// slots that are now older than the ring.
					p := l.ringDiv.mod(head + 1)
					for range min(cur-head, ring) {
						*total -= slots[p]
						slots[p] = 0
						if p++; p == ring {
							p = 0
						}
					}
					pre = 0 // cur's position was among them
				}
			}
		}
		// The ring holds cur-ring+1..cur, of which at most one is older
		// than jmin, the oldest slot that may hold an admission inside the
		// window; it is the oldest (in the byte ring, at the position
		// after cur's).
		jmin = l.jmin(uint32(sec), cur)
		rc = int64(*total)
		if old := cur - ring + 1; old < jmin {
			if u != nil {
				rc -= int64(u.run(0))
			} else {
				p := pos + 1
				if p == ring {
					p = 0
				}
				rc -= int64(slots[p])
			}
		}
		counted = min(counted, rc)
	}
	*b.last() = t

	// The unary ring has room for one more whenever counted < capacity
	// (it then counts less than twice the capacity; see unaryWords). That
	// is checked too, so that no input can write past the record or panic
	// with the shard's lock held: were it ever false, the request would
	// be rejected.
	if counted < l.capacity && (u == nil || uint(*b.total())+uint(l.ring)-1 < 64*uint(len(u))) {
		b.addGroup(l, t, q, n > 0 && t == newest, counted)
		if l.ring != 0 {
			if u != nil {
				u.add(uint(*b.total()) + uint(l.ring) - 1)
			} else {
				slots[pos] = pre + 1
			}
			*b.total()++
		}
		return Decision{Allowed: true, Remaining: l.capacity - counted - 1}
	}

	// Rejected: the earliest time either count drops below capacity.
	free := b.groupsFree(l, grouped-l.capacity+1, q, newest)
	if l.ring != 0 {
		need := rc - l.capacity + 1
		var j uint32
		if u != nil {
			j = u.free(cur-l.ring+1, jmin, need, l.ring)
		} else {
			j = b.ringFree(l, slots, jmin, need)
		}
		free = min(free, l.slotLeaves(j))
	}
	return Decision{RetryAfter: ceilSeconds(time.Duration(free - caller))}
}

// addGroup counts an admission at t, with grid index q, in the groups;
// same says it is at the latest admission's instant, and counted is the
// count the admission was decided on.
//
// When all groups are in use the newest absorbs the admission, so the
// groups can count admissions that have left the window (those of a
// group whose latest admission has not), while the ring admits what they
// would not: 20,000 random timelines of 600 requests at capacities 9 to
// 48 took them to at most 1.36 times the capacity (2026-11-25). They
// never count more than twice the capacity (the counter type is chosen to
// hold that): past it they collapse into one group at t holding what the
// admission was decided on, itself included (every admission counted lies
// at or before t); TestAddGroupCollapses drives that.
func (b bucket[T]) addGroup(l *Limiter, t, q uint64, same bool, counted int64) {
	times, counts := b.times(), b.counts()
	h, n := b.head(), b.n()
	newest := (h + n - 1) % nGroups
	full := int64(*b.grouped()) >= 2*l.capacity
	if same && !full {
		*b.cur(newest)++ // the same instant: nothing is lost
		*b.grouped()++
		return
	}
	// Rounded up; sub makes the newest group's time exact.
	q, gt := l.gridUp(q, t)
	tq := uint16(q)
	b.setSub(gt - t)
	switch {
	case full:
		b.setHeadN(0, 1)
		*b.cur(0), times[0] = T(counted+1), tq
		*b.grouped() = T(counted + 1)
		return
	case n > 0 && (*b.cur(newest) < T(l.group) || n == nGroups):
		*b.cur(newest)++
		times[newest] = tq
	default:
		// The newest group becomes an older one: its count goes among
		// counts (where it is already, unless the record keeps it).
		if n > 0 {
			counts[newest] = *b.cur(newest)
		}
		i := (h + n) % nGroups
		*b.cur(i), times[i] = 1, tq
		b.setHeadN(h, n+1)
	}
	*b.grouped()++
}

// groupsFree returns when the groups will have released need admissions;
// q is the grid index of last, and newest the latest admission.
func (b bucket[T]) groupsFree(l *Limiter, need int64, q, newest uint64) uint64 {
	times, counts := b.times(), b.counts()
	h, n := b.head(), b.n()
	for i := range n - 1 {
		g := (h + i) % nGroups
		if need -= int64(counts[g]); need <= 0 {
			return min(l.groupTime(q, times[g]), newest) + l.wns
		}
	}
	return newest + l.wns
}

// ringFree returns the slot at which the ring, counting need more
// admissions than it may, will have released need of them: walking the
// oldest counted slots from jmin.
func (b bucket[T]) ringFree(l *Limiter, slots []T, jmin uint32, need int64) uint32 {
	j := jmin
	for p := l.ringDiv.mod(jmin); ; j++ {
		if need -= int64(slots[p]); need <= 0 {
			return j
		}
		if p++; p == l.ring {
			p = 0
		}
	}
}

// slotLeaves returns when slot j has left the window: the end of the
// slot, one window later.
func (l *Limiter) slotLeaves(j uint32) uint64 {
	return (uint64(j+1)*uint64(l.ssec) + uint64(l.wsec)) * uint64(time.Second)
}

// unaryRing is a bucket's ring in unary: its slots, oldest first, each as
// as many one bits as it counts admissions, one zero bit between
// consecutive slots, least significant bit of the first word first. A ring
// of r slots counting total admissions uses total+r-1 bits, and every bit
// after those is zero: a ring of empty slots is all zeros, a new slot
// begins by the drop of an old one, and an admission in the newest slot
// sets the bit after the used ones. No slot holds more than the capacity
// and the ring no more than twice the capacity (see unaryWords), so for
// small capacities it takes fewer bytes than a counter a slot: 5 words
// (40 bytes) for 61 slots at a capacity of 100, where one-byte counters
// take 61.
type unaryRing []uint64

// add sets bit i, the first unused one: an admission in the newest slot.
func (u unaryRing) add(i uint) { u[i/64] |= 1 << (i % 64) }

// run returns the number of one bits from bit i up to the next zero: the
// count of the slot whose bits begin at i.
func (u unaryRing) run(i int) int {
	n := 0
	for w, s := i/64, uint(i%64); w < len(u); w, s = w+1, 0 {
		z := bits.TrailingZeros64(^(u[w] >> s))
		n += z
		if z < 64-int(s) {
			break
		}
	}
	return n
}

// drop removes the k oldest slots, 0 < k < the ring's length, with the
// zero after each, and returns the admissions they counted. The k slots
// that begin are empty: the zeros between them are the unused bits.
func (u unaryRing) drop(k int) int {
	// p: the bit after the k-th zero. The ring uses ring-1 zeros, at
	// least k, so it lies among the used bits.
	p, left := 0, k
	for w, x := range u {
		z := ^x
		if c := bits.OnesCount64(z); left > c {
			left -= c
			continue
		}
		p = w*64 + selectBit(z, left-1) + 1
		break
	}
	// Shift right by p bits.
	ws, bs := p/64, uint(p%64)
	for w := range u {
		var v uint64
		if j := w + ws; j < len(u) {
			v = u[j] >> bs
			if j+1 < len(u) && bs != 0 {
				v |= u[j+1] << (64 - bs)
			}
		}
		u[w] = v
	}
	return p - k
}

// free returns the slot at which the ring, whose oldest slot is first,
// will have released need admissions counted from slot jmin on (jmin is
// first or the slot after it): the unary form of ringFree. That is the
// slot of the one bit need places after the bits of the slots before
// jmin, and a bit's slot is first plus the zeros before it. need must not
// exceed what the ring counts from jmin on; if it did, the newest slot
// would be the answer.
func (u unaryRing) free(first, jmin uint32, need int64, ring uint32) uint32 {
	k := need - 1 // the k-th one bit, from 0
	if jmin != first {
		k += int64(u.run(0))
	}
	seen := 0 // one bits in the words before
	for w, x := range u {
		c := bits.OnesCount64(x)
		if k >= int64(c) {
			k -= int64(c)
			seen += c
			continue
		}
		p := w*64 + selectBit(x, int(k))
		return first + uint32(p-seen-int(k))
	}
	return first + ring - 1
}

// selectBit returns the position of the set bit of x that has k set bits
// before it; x must have more than k. Small k, the common case (a retry
// delay in sparse traffic, a slot or two to drop), clears the bits below;
// larger k halves the word six times.
func selectBit(x uint64, k int) int {
	if k < 8 {
		for ; k > 0; k-- {
			x &= x - 1
		}
		return bits.TrailingZeros64(x)
	}
	p := 0
	for _, s := range [...]uint{32, 16, 8, 4, 2, 1} {
		if lo := bits.OnesCount64(x & (1<<s - 1)); k >= lo {
			k -= lo
			x >>= s
			p += int(s)
		}
	}
	return p
}
