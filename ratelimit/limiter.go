package ratelimit

import (
	"encoding/binary"
	"fmt"
	"hash/maphash"
	"math/bits"
	"math/rand/v2"
	"sync/atomic"
	"testing"
	"time"
	"unsafe"

	"github.com/acctapi/acctapi/internal/counterclock"
)

// MaxCapacity is the largest capacity a [Limiter] accepts, the
// specification's maximum for the rate-limit action.
const MaxCapacity = 2_000_000_000

// DefaultMaxBuckets is the number of live buckets a [Limiter] keeps at most
// unless [WithMaxBuckets] says otherwise.
const DefaultMaxBuckets = 1 << 20

// Decision is the outcome of one call to [Limiter.AllowAt].
type Decision struct {
	// Allowed reports whether the request was admitted (and counted).
	Allowed bool
	// RetryAfter is zero when Allowed. Otherwise it is the wait, in whole
	// seconds rounded up and at least one second, after which a request for
	// the same key is admitted if no other request for that key arrives
	// in between.
	RetryAfter time.Duration
	// Remaining is how many more requests the key's bucket would admit at
	// the same instant.
	Remaining int64
}

// A Limiter is a keyed sliding-window rate limiter: for every key it admits
// at most capacity requests in any window of the configured length, and it
// never counts a request it rejects.
//
// It is never more permissive than an exact sliding log of its admissions,
// and close to one. With a capacity of 8 or less it admits what the log
// admits, but that an admission other than the latest may leave the window
// up to window/16,000 late (4 ms for windows up to 64 s, 250 ms at an
// hour); above that, it admits a request at most max(1s, window/60) later
// than the log would. A burst at one instant leaves the window exactly one
// window later.
// [Decision.RetryAfter] is truthful (a request for the key sent that much
// later, with none in between, is admitted) and at most max(1s, window/60)
// longer than the log's answer.
//
// Times come from one clock, with nanosecond precision, from 68 years
// before the limiter was created to 68 years after (earlier times count as
// the earliest, later ones as the latest). A time earlier than one already
// seen for a key counts as that later time: the window never moves
// backwards.
//
// A key costs a fixed number of bytes whatever its length, from 57 at a
// capacity of 8 or less, through 96 at 100 per minute and 351 at 100,000
// per minute or per hour, to 658 at the most (100,000 per 119 s: a ring of
// 120 one-second slots of four-byte counters). A key with no admission
// left in the window is forgotten, a few at a time as new keys arrive or
// all at once by [Limiter.Sweep]; below the cap on keys, forgetting never
// changes a decision. Keys are stored as a 64-bit hash: two keys share
// a bucket only if their hashes collide, which can only make limiting
// stricter.
//
// The number of keys held at once is capped ([WithMaxBuckets]). At the cap,
// keys that have no bucket share one overflow bucket until room is freed:
// the limit still holds for every key, but those keys also limit each
// other. Keys that have a bucket are never evicted early, so a flood of new
// keys cannot reset anyone's limit.
//
// A Limiter is safe for concurrent use by multiple goroutines; decisions
// for one key are made one at a time. The zero value is not usable; create
// one with [NewLimiter].
type Limiter struct {
	// How a Limiter works, beyond its contract above:
	//
	// Accuracy: up to nGroups (8) admissions are kept as groups with
	// their times on a grid of (1s/256) << ushift (window/16,000 at most);
	// above that, admissions are counted per slot of max(1s, window/60) in
	// a ring, and one leaves the window when its whole slot has (see
	// bucket and update in limiter_bucket.go).
	//
	// Memory: measured with 100,000 keys (the bucket and the key's index
	// entry): 57 bytes at a capacity of 8 or less, 72 at 10 to 30 per
	// minute, 96 at 100 per minute, 136 at 200 per minute, 203 at 250 per
	// minute (and up to 32,767 per minute), 301 at 1,000 per 110 s (a
	// window of 111 slots), 350 above 32,767 per minute (four-byte
	// counters) with a window of 61 slots (a minute, an hour, a day), 393
	// with 71 (70 s), 658 with 120 (119 s, the most slots: a window of
	// up to 119 s has one-second slots). With WithMaxBuckets below 4,096,
	// hashes share a bucket when their top 61 bits collide.
	//
	// At the cap, a key that gets a bucket while the overflow bucket still
	// counts requests starts with what it counts (the key may have been
	// admitted through it): a key forgotten and back may then be limited
	// by other keys' requests, stricter, never looser. While times move
	// forward and the limiter is below its cap, forgetting a key never
	// changes a decision.
	//
	// Concurrency: decisions for keys that have buckets share no lock
	// except while requests contend for a key; its decisions then wait on
	// a lock shared with a 64th of the keys (all keys below 4,096
	// buckets), as do decisions that create buckets; once 63 of its
	// decisions have found that lock free, the key goes back to deciding
	// without it (see shards.allow in limiter_store.go).
	capacity  int64
	window    time.Duration
	wns       uint64 // window in ns
	wsec      uint32 // window in seconds
	ssec      uint32 // ring slot length in seconds
	wslots    uint32 // wsec/ssec when ssec divides wsec, else 0
	ring      uint32 // slots in a bucket's ring; 0 when capacity <= nGroups
	uwords    uint32 // words of the ring in unary; 0 for a counter a slot
	fast      bool   // update's fast path applies: the ring's oldest slot is never outside the window
	group     uint32 // admissions a group takes before a new one starts
	ushift    uint8  // groups' time grid: (1s/256) << ushift
	gridNs    uint64 // the grid's step in ns: gridBase << ushift
	slotDiv   divider
	ringDiv   divider
	epoch     time.Time
	seed      maphash.Seed
	mix       [4]uint64 // random keys of hash for keys of 32 bytes or less
	shardMask uint64
	tmin      uint64        // the earliest time since the epoch AllowAt uses
	clockOff  uint64        // clockBase's time since the epoch, in ns (see elapsed)
	clock     atomic.Uint32 // Allow's clock: clockUndecided, clockTicker or clockSince
	t         table
	shared    *shared // WithStore's store, or nil (see store.go)
}

// table is the in-memory store of buckets behind a Limiter (a shared
// store given by WithStore decides instead; see store.go). It keeps each
// bucket's record (see limiter_bucket.go) by key hash and applies
// bucket.update to it under the record's lock or its shard's (see
// shards.allow).
type table interface {
	allow(l *Limiter, h uint64, t uint64) Decision
	sweep(l *Limiter, t uint64) int
	len() int
	// start reports whether the key hashed to h has a bucket, and the
	// earliest time a new one for it would start at (the shard's
	// horizon): for tests that model the limiter.
	start(l *Limiter, h uint64) (horizon uint64, live bool)
}

// NewLimiter returns a limiter that admits at most capacity requests per key
// in any window of length window. capacity must be from 1 to [MaxCapacity]
// and window a whole number of seconds, at least one. It takes the options
// [WithMaxBuckets] and [WithStore] (buckets kept in a store shared by
// several processes).
//
// For example, NewLimiter(120, time.Minute) allows each key 120 requests in
// any rolling minute.
func NewLimiter(capacity int64, window time.Duration, opts ...Option) (*Limiter, error) {
	if capacity < 1 || capacity > MaxCapacity {
		return nil, fmt.Errorf("ratelimit: capacity %d is not from 1 to %d", capacity, MaxCapacity)
	}
	if window < time.Second || window%time.Second != 0 || window > maxWindow {
		return nil, fmt.Errorf("ratelimit: window %v is not a whole number of seconds from 1s to %v", window, maxWindow)
	}
	o, err := buildOptions(opts)
	if err != nil {
		return nil, err
	}
	return newLimiter(capacity, window, o.maxBuckets, o.store), nil
}

// maxWindow bounds windows so that every time computation fits in 32-bit
// seconds with room to spare.
const maxWindow = 366 * 24 * time.Hour

// newLimiter returns a limiter that keeps its buckets in store, or in the
// process when store is nil. With a store the in-process table is never
// used, so it is the smallest there is: one shard of one bucket, allocated
// only if used.
func newLimiter(capacity int64, window time.Duration, maxBuckets int, store *shared) *Limiter {
	if store != nil {
		maxBuckets = 1
	}
	l := newLimiterWidth(capacity, window, maxBuckets, 0)
	l.shared = store
	return l
}

// newLimiterWidth is newLimiter with the counter width in bytes forced to
// width (1, 2 or 4) unless width is 0, so tests can drive the wider
// counters at small capacities.
func newLimiterWidth(capacity int64, window time.Duration, maxBuckets, width int) *Limiter {
	return newLimiterLayout(capacity, window, maxBuckets, width, false)
}

// newLimiterLayout is newLimiterWidth that never uses the unary ring when
// counters is true, so tests can compare the two forms.
func newLimiterLayout(capacity int64, window time.Duration, maxBuckets, width int, counters bool) *Limiter {
	if width == 0 {
		// Counters hold up to twice the capacity (see addGroup).
		switch {
		case 2*capacity <= 1<<8-1:
			width = 1
		case 2*capacity <= 1<<16-1:
			width = 2
		default:
			width = 4
		}
	}
	wsec := uint32(window / time.Second)
	ssec := max(1, wsec/60)
	ring := uint32(0)
	if capacity > nGroups {
		ring = (wsec+ssec-1)/ssec + 1
	}
	wslots := uint32(0)
	if wsec%ssec == 0 {
		wslots = wsec / ssec
	}
	shards := 64
	if maxBuckets < 64*64 {
		shards = 1
	}
	perShard := max(1, maxBuckets/shards)
	// The epoch lies about 68 years in the past, on a whole multiple of the
	// slot in wall-clock time (so times without a monotonic reading map to
	// reproducible slot boundaries), and keeps now's monotonic reading.
	now := time.Now()
	slot := time.Duration(ssec) * time.Second
	back := time.Duration(now.UnixNano()%int64(slot)) + time.Duration(uint64(ssec)*(1<<31/uint64(ssec)))*time.Second
	wns := uint64(window)
	l := &Limiter{
		capacity:  capacity,
		window:    window,
		wns:       wns,
		wsec:      wsec,
		ssec:      ssec,
		wslots:    wslots,
		ring:      ring,
		group:     uint32((capacity + 11) / 12), // see limiter_bucket.go
		slotDiv:   newDivider(ssec),
		ringDiv:   newDivider(max(ring, 1)),
		epoch:     now.Add(-back),
		seed:      maphash.MakeSeed(),
		mix:       [4]uint64{rand.Uint64(), rand.Uint64(), rand.Uint64(), rand.Uint64()},
		shardMask: uint64(shards - 1),
	}
	// Group times are 16-bit grid indices; two windows must span fewer
	// than 2^15 steps (see grid).
	for gridBase<<l.ushift*(1<<15-4) < 2*wns {
		l.ushift++
	}
	l.gridNs = gridBase << l.ushift
	// In a synctest bubble, time.Now has no monotonic reading, and Allow
	// reads the bubble's clock through time.Since.
	if !hasMonotonic(now) {
		l.clock.Store(clockSince)
	} else {
		l.clockOff = uint64(clockBase.Sub(l.epoch))
	}
	// The earliest time the slot arithmetic handles without wrapping: a
	// whole window and a whole ring after the epoch.
	l.tmin = uint64(wsec+(ring+1)*ssec) * uint64(time.Second)
	if uw := unaryWords(capacity, ring); ring != 0 && !counters && uw <= maxUnaryWords &&
		sum(recordBytes(width, ring, uw)) < sum(recordBytes(width, ring, 0)) {
		l.uwords = uint32(uw)
	}
	l.fast = ring == 0 || wslots == ring-1
	rec, ringPart := recordBytes(width, ring, int(l.uwords))
	switch width {
	case 1:
		l.t = newShards[uint8](shards, perShard, rec, ringPart)
	case 2:
		l.t = newShards[uint16](shards, perShard, rec, ringPart)
	default:
		l.t = newShards[uint32](shards, perShard, rec, ringPart)
	}
	return l
}

// sum returns a + b, the bytes of a record and of its ring kept apart.
func sum(a, b int) int { return a + b }

// Capacity returns the most requests the limiter admits per key in any
// window.
func (l *Limiter) Capacity() int64 { return l.capacity }

// Window returns the length of the sliding window.
func (l *Limiter) Window() time.Duration { return l.window }

// Allow is AllowAt(key, time.Now()), reading the clock at a fraction of
// the cost.
//
// Where Linux keeps its clock by the processor's time-stamp counter
// (amd64, the "tsc" clocksource, a counter of constant rate that does not
// stop), Allow reads the counter and converts it with the monotonic clock,
// which it reads again once a millisecond has passed since it last did: a
// call within that millisecond reads the clock for about a fifth of what
// time.Now costs, one after it as time.Since does, with the counter twice
// more. Allow's time is then within a few microseconds of time.Now's
// (more while the kernel slews its clock fast to correct it: the change
// of rate times a millisecond, about 170 µs at chrony's fastest slew
// reversing), so AllowAt or Sweep given time.Now may see times that much
// apart; RetryAfter holds on Allow's own clock. If the counter disagrees
// with the clock again and again, or the kernel stops keeping its clock by
// it, Allow reads the monotonic clock from then on. Elsewhere Allow reads
// the monotonic clock, about half the cost of time.Now.
//
// In a test binary (see testing.Testing) Allow reads the clock as
// time.Since does, so that a test sees one clock whether it calls Allow
// or AllowAt(key, time.Now()), and every call in a testing/synctest
// bubble reads the bubble's clock (the bubble's clock starts in 2000, so
// a key used both inside and outside a bubble sees two clocks). With a
// store ([WithStore]) Allow reads time.Now.
func (l *Limiter) Allow(key string) Decision {
	if l.shared != nil {
		return l.allowShared(key, time.Now())
	}
	return l.t.allow(l, l.hash(key), l.clamp(l.elapsed()))
}

// Allow's clock (Limiter.clock).
const (
	clockUndecided = iota // until Allow's first call
	clockTicker           // the process's tickClock, or time.Since once it is off
	clockSince            // time.Since: no counter, a test binary, or created in or first called from a synctest bubble
)

// elapsed returns Allow's time: the clock's time since the epoch.
func (l *Limiter) elapsed() time.Duration {
	switch l.clock.Load() {
	case clockTicker:
		if ns, ok := ticker.now(); ok {
			return time.Duration(ns + l.clockOff)
		}
	case clockUndecided:
		l.chooseClock()
	}
	return time.Since(l.epoch)
}

// chooseClock sets Allow's clock at its first call: the counter, if the
// process uses it, the binary is not a test binary (unless
// counterclock.InTests says otherwise, for benchmarks) and the call is not
// in a synctest bubble (a limiter created outside a bubble and first used
// in one keeps reading the bubble's clock, as time.Since does there).
func (l *Limiter) chooseClock() {
	now := time.Now()
	c := uint32(clockSince)
	if hasMonotonic(now) && (!testing.Testing() || counterclock.InTests.Load()) && startTicker() {
		c = clockTicker
	}
	l.clock.CompareAndSwap(clockUndecided, c)
}

// AllowAt reports whether a request for key arriving at now is admitted,
// and counts it if so. A rejected request is not counted; its Decision says
// how long to wait.
func (l *Limiter) AllowAt(key string, now time.Time) Decision {
	if l.shared != nil {
		return l.allowShared(key, now) // WithStore; see store.go
	}
	return l.t.allow(l, l.hash(key), l.since(now))
}

// Sweep reclaims every bucket that holds no admitted request still inside
// the window at now, and returns how many it reclaimed. Calling it is
// optional: creating buckets reclaims idle ones incrementally.
func (l *Limiter) Sweep(now time.Time) int {
	return l.t.sweep(l, l.since(now))
}

// Len returns the number of live buckets, not counting overflow buckets.
func (l *Limiter) Len() int { return l.t.len() }

// maxT is the latest representable time: 32-bit seconds since the epoch.
const maxT = (1<<32 - 1) * uint64(time.Second)

// since converts now to nanoseconds since the epoch, clamped to the range
// the limiter represents (times about 68 years before its creation, the
// zero time among them, all map to its earliest time).
func (l *Limiter) since(now time.Time) uint64 {
	return l.clamp(now.Sub(l.epoch))
}

// clamp maps d, a time as a duration since the epoch, to the range the
// limiter represents.
func (l *Limiter) clamp(d time.Duration) uint64 {
	if d < 0 || uint64(d) < l.tmin {
		return l.tmin
	}
	return min(uint64(d), maxT)
}

// hash returns key's 64-bit seeded hash: its low bits choose the shard,
// the next ones the index slot, the top ones the index tag.
//
// Keys of 16 bytes or less (an IPv4 address, a short API key) are hashed
// inline: the key read as two little-endian words (overlapping below 16
// bytes; two 32-bit words below 8, three of its bytes below 4), each mixed
// with a random key, folded twice through a 64x64->128-bit multiplication
// (a "mum" step) with the length. Replacing maphash.String with it took
// AllowAt from 593 to 558 instructions a call (callgrind on
// ratelimit/bench's SingleKey). Keys of 17 to 32 bytes (an IPv6 address,
// an address and a route) are hashed inline too, as four words
// (overlapping below 32 bytes), each with a random key of its own, folded
// through three mum steps: on Keys100kParallel's workload (keys of 21 to
// 25 bytes, most of 24 and 25), with the limiter before and after taken
// in turns within one process, a decision took 0.96, 0.92 and 0.955 of
// its time (medians of 30 or 31 rounds, 2026-11-25), where paired.sh,
// its processes taken in turns, had shown no difference an earlier day.
// Longer keys use maphash. A review (2026-11-25) found no collision
// among 5.7 million rearranged keys, and half the output bits flipping
// for any bit flipped in the key; TestHashSpreadsKeys checks the spread
// of the bits the limiter uses.
func (l *Limiter) hash(key string) uint64 {
	n := len(key)
	if n > 32 {
		return maphash.String(l.seed, key)
	}
	if n > 16 {
		p := unsafe.Slice(unsafe.StringData(key), n)
		a, b := binary.LittleEndian.Uint64(p), binary.LittleEndian.Uint64(p[8:])
		c, d := binary.LittleEndian.Uint64(p[n-16:]), binary.LittleEndian.Uint64(p[n-8:])
		return mum(mum(a^l.mix[0], b^l.mix[1])^mum(c^l.mix[2], d^l.mix[3]), uint64(n)^l.mix[0])
	}
	var a, b uint64
	p := unsafe.Slice(unsafe.StringData(key), n)
	switch {
	case n >= 8:
		a, b = binary.LittleEndian.Uint64(p), binary.LittleEndian.Uint64(p[n-8:])
	case n >= 4:
		a, b = uint64(binary.LittleEndian.Uint32(p)), uint64(binary.LittleEndian.Uint32(p[n-4:]))
	case n > 0:
		a = uint64(p[0])<<16 | uint64(p[n>>1])<<8 | uint64(p[n-1])
	}
	return mum(mum(a^l.mix[0], b^l.mix[1])^l.mix[2], uint64(n)^l.mix[3])
}

// mum folds the 128-bit product of a and b into 64 bits.
func mum(a, b uint64) uint64 {
	hi, lo := bits.Mul64(a, b)
	return hi ^ lo
}

// divider divides and reduces 32-bit numbers by a fixed divisor with two
// multiplications (Lemire, Kaser and Kurz, "Faster remainder by direct
// computation", 2019).
type divider struct {
	d uint32
	m uint64 // ceil(2^64/d); 0 when d is 1
}

func newDivider(d uint32) divider {
	if d <= 1 {
		return divider{d: 1}
	}
	return divider{d: d, m: ^uint64(0)/uint64(d) + 1}
}

func (v divider) div(x uint32) uint32 {
	if v.m == 0 {
		return x
	}
	hi, _ := bits.Mul64(v.m, uint64(x))
	return uint32(hi)
}

func (v divider) mod(x uint32) uint32 {
	if v.m == 0 {
		return 0
	}
	hi, _ := bits.Mul64(v.m*uint64(x), uint64(v.d))
	return uint32(hi)
}

// counter is the width of a bucket's counters. None ever holds more than
// twice the capacity (a slot no more than the capacity; see addGroup for
// the groups), so the narrowest type that holds that suffices.
type counter interface{ ~uint8 | ~uint16 | ~uint32 }

// jmin returns the oldest slot that may hold a request inside the window
// (t-window, t]: slot j may while (j+1)*slot + window > t. sec is t in
// whole seconds, and cur its slot.
func (l *Limiter) jmin(sec, cur uint32) uint32 {
	if l.wslots != 0 {
		return cur - l.wslots
	}
	return l.slotDiv.div(sec - l.wsec)
}

// ceilSeconds rounds d up to whole seconds, with a minimum of one second.
func ceilSeconds(d time.Duration) time.Duration {
	s := (d + time.Second - 1) / time.Second
	return max(time.Second, s*time.Second)
}
