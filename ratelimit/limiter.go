package ratelimit

import (
	"fmt"
	"hash/maphash"
	"math"
	"math/bits"
	"sync"
	"time"
	"unsafe"
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
// Each key has a bucket of counters for sub-windows ("slots") of
// max(1s, window/60) rounded down to whole seconds. A slot is counted in
// full until its last instant has left the window, so the limiter never
// admits a request that an exact sliding log of its admissions would
// reject; it admits a request at most one slot later than that log would,
// and [Decision.RetryAfter] is at most one slot longer than the log's
// answer (rounded the same way), which is within max(1s, window/60). (For capacities above
// 65,535 with a window that is not a whole number of minutes, the slot is
// ceil(window/60) instead, to keep buckets within 256 bytes.)
//
// Time is passed in, and used with nanosecond precision, from 68 years
// before the limiter was created to 68 years after; earlier times (the zero
// time among them) count as the earliest, later ones as the latest. Within a
// bucket, a time earlier than one already seen is treated as that later
// time: the state is never reset and the window never moves backwards, and
// [Decision.RetryAfter] is still measured from the time passed in. Times are
// meant to come from one clock: a time far ahead of the others lets the
// limiter reclaim buckets that are idle at that time, and keys new to the
// shard afterwards start no earlier than it.
//
// Memory: a bucket costs 12 bytes plus one counter per slot (1, 2 or 4
// bytes depending on capacity), rounded up to 8 bytes and never more than
// 256, plus its key. Keys of any length are stored as a 128-bit hash (two
// independently seeded [maphash] hashes), so a key costs 16 bytes in the
// index; two keys share a bucket only if both hashes collide, and sharing
// could only make limiting stricter. A bucket with no admitted request left
// inside the window holds no information and is reclaimed: a few buckets
// are examined whenever a new bucket is created, and [Limiter.Sweep]
// reclaims all of them at once. A request for a reclaimed key (or any key
// new to its shard) is then treated as arriving no earlier than the latest
// reclamation in that shard, so never earlier than the sweep that reclaimed
// it: clamping a late-arriving time can only make limiting stricter.
//
// The number of live buckets is capped ([WithMaxBuckets]; the cap is divided
// evenly among the limiter's shards). When a shard is full, even after
// reclaiming what it can, requests for keys without a bucket share that
// shard's one overflow bucket: the limit still holds for every key, but
// those keys also limit each other until room is freed. A key that later
// gets a bucket of its own inherits what the overflow bucket still counts,
// so nothing it was admitted through the overflow bucket is forgotten.
// Existing buckets are never evicted early, so a flood of new keys cannot
// reset anyone's limit, and at the cap the shard is scanned for idle buckets
// at most once per second.
//
// A Limiter is safe for concurrent use by multiple goroutines; keys are
// spread over independently locked shards. The zero value is not usable;
// create one with [NewLimiter].
type Limiter struct {
	capacity  int64
	window    time.Duration
	wsec      uint32 // window in seconds
	ssec      uint32 // slot length in seconds
	wslots    uint32 // wsec/ssec when ssec divides wsec, else 0
	ring      uint32 // slots in a bucket's ring
	slotDiv   divider
	ringDiv   divider
	epoch     time.Time
	seed      maphash.Seed
	seed2     maphash.Seed
	shardMask uint64
	tmin      uint64 // the earliest time since the epoch AllowAt uses
	t         table
}

// table is the per-width implementation behind a Limiter.
type table interface {
	allow(l *Limiter, k hkey, t uint64) Decision
	sweep(l *Limiter, t uint64) int
	len() int
}

// NewLimiter returns a limiter that admits at most capacity requests per key
// in any window of length window. capacity must be from 1 to [MaxCapacity]
// and window a whole number of seconds, at least one. It uses the option
// [WithMaxBuckets].
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
	o := buildOptions(opts)
	return newLimiter(capacity, window, o.maxBuckets), nil
}

// maxWindow bounds windows so that every time computation fits in 32-bit
// seconds with room to spare.
const maxWindow = 366 * 24 * time.Hour

func newLimiter(capacity int64, window time.Duration, maxBuckets int) *Limiter {
	return newLimiterWidth(capacity, window, maxBuckets, 0)
}

// newLimiterWidth is newLimiter with the counter width in bytes forced to
// width (1, 2 or 4) unless width is 0, so tests can drive the wider
// counters, and the slot rule that comes with them, at small capacities.
func newLimiterWidth(capacity int64, window time.Duration, maxBuckets, width int) *Limiter {
	if width == 0 {
		switch {
		case capacity <= 1<<8-1:
			width = 1
		case capacity <= 1<<16-1:
			width = 2
		default:
			width = 4
		}
	}
	wsec := uint32(window / time.Second)
	ssec := max(1, wsec/60)
	if width == 4 && wsec%60 != 0 {
		// Four-byte counters: keep the ring at 61 slots or fewer.
		ssec = max(1, (wsec+59)/60)
	}
	ring := (wsec+ssec-1)/ssec + 1
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
	l := &Limiter{
		capacity:  capacity,
		window:    window,
		wsec:      wsec,
		ssec:      ssec,
		wslots:    wslots,
		ring:      ring,
		slotDiv:   newDivider(ssec),
		ringDiv:   newDivider(ring),
		epoch:     now.Add(-back),
		seed:      maphash.MakeSeed(),
		seed2:     maphash.MakeSeed(),
		shardMask: uint64(shards - 1),
	}
	// The earliest time the slot arithmetic below handles without
	// wrapping: a whole window and a whole ring after the epoch.
	l.tmin = uint64(wsec+ring*ssec) * uint64(time.Second)
	switch width {
	case 1:
		l.t = newShards[uint8](shards, perShard, ring)
	case 2:
		l.t = newShards[uint16](shards, perShard, ring)
	default:
		l.t = newShards[uint32](shards, perShard, ring)
	}
	return l
}

// Capacity returns the most requests the limiter admits per key in any
// window.
func (l *Limiter) Capacity() int64 { return l.capacity }

// Window returns the length of the sliding window.
func (l *Limiter) Window() time.Duration { return l.window }

// Allow is shorthand for AllowAt(key, time.Now()).
func (l *Limiter) Allow(key string) Decision {
	return l.AllowAt(key, time.Now())
}

// AllowAt reports whether a request for key arriving at now is admitted,
// and counts it if so. A rejected request is not counted; its Decision says
// how long to wait.
func (l *Limiter) AllowAt(key string, now time.Time) Decision {
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
	d := now.Sub(l.epoch)
	if d < 0 || uint64(d) < l.tmin {
		return l.tmin
	}
	return min(uint64(d), maxT)
}

// hkey is a key's 128-bit hash, the index key of its bucket.
type hkey struct{ a, b uint64 }

func (l *Limiter) hash(key string) hkey {
	return hkey{maphash.String(l.seed, key), maphash.String(l.seed2, key)}
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

// counter is the width of a slot counter. A slot never holds more than the
// capacity, so the narrowest type that holds the capacity suffices.
type counter interface{ ~uint8 | ~uint16 | ~uint32 }

// chunkBytes is the target size of one chunk: just under the largest
// small-object size class, so little is lost to rounding.
const chunkBytes = 32 << 10

// A bucket is a record of stride words in a chunk: the latest time seen
// (uint64 ns since the epoch), the sum of the ring (uint32), then ring
// counters; position p of the ring holds the slot whose index is congruent
// to p modulo ring. A bucket id is chunk<<16 | record.
type chunk struct {
	words []uint64
}

type shard[T counter] struct {
	mu         sync.Mutex
	ids        index
	cursor     int // next index slot sweepN examines
	chunks     []chunk
	stride     int // words per record
	perChunk   int32
	free       []int32
	next       int32 // records of the last chunk below next are in use
	live       int
	max        int
	ring       int
	horizon    uint64 // new buckets start no earlier than this
	full       uint32 // skip full sweeps at the cap before this second
	fullSweeps int    // full sweeps at the cap, for tests
	overflow   int32  // -1 until needed
	_          [64]byte
}

type shards[T counter] []shard[T]

func newShards[T counter](n, perShard int, ring uint32) *shards[T] {
	var zero T
	bytes := 12 + int(ring)*int(unsafe.Sizeof(zero))
	stride := (bytes + 7) / 8
	perChunk := int32(min(1<<16, max(1, chunkBytes/(8*stride))))
	s := make(shards[T], n)
	for i := range s {
		s[i] = shard[T]{
			stride:   stride,
			perChunk: perChunk,
			next:     perChunk,
			max:      perShard,
			ring:     int(ring),
			overflow: -1,
		}
	}
	return &s
}

// bucket is a view of one record.
type bucket[T counter] struct {
	last  *uint64
	total *uint32
	slots []T
}

func (sh *shard[T]) at(id int32) bucket[T] {
	p := unsafe.Pointer(&sh.chunks[id>>16].words[int(id&0xffff)*sh.stride])
	return bucket[T]{
		last:  (*uint64)(p),
		total: (*uint32)(unsafe.Add(p, 8)),
		slots: unsafe.Slice((*T)(unsafe.Add(p, 12)), sh.ring),
	}
}

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

func (s *shards[T]) allow(l *Limiter, k hkey, t uint64) Decision {
	sh := &(*s)[k.a&l.shardMask]
	sh.mu.Lock()
	id, ok := sh.ids.get(k)
	if !ok {
		id = sh.insert(l, k, t)
	}
	d := sh.update(l, sh.at(id), t)
	sh.mu.Unlock()
	return d
}

// insert creates a bucket for k, or returns the overflow bucket when the
// shard is full.
//
// At the cap, a full sweep runs at most once per second of t per shard:
// a bucket can only become idle when t reaches a later second, so a flood
// of new keys costs a few bucket examinations each, not a scan of the shard.
//
// A new bucket created while the overflow bucket still counts requests
// inside the window starts as a copy of it: the key may have been admitted
// through the overflow bucket, and those admissions must keep counting.
// Copying can only make limiting stricter.
func (sh *shard[T]) insert(l *Limiter, k hkey, t uint64) int32 {
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
				*sh.at(sh.overflow).last = max(t, sh.horizon)
			}
			return sh.overflow
		}
	}
	id := sh.alloc()
	b := sh.at(id)
	if sh.overflow >= 0 {
		o := sh.at(sh.overflow)
		if !sh.idle(l, o, max(t, *o.last)) {
			*b.last, *b.total = *o.last, *o.total
			copy(b.slots, o.slots)
		}
	}
	sh.advance(l, b, max(t, sh.horizon))
	sh.ids.put(k, id)
	sh.live++
	return id
}

func (sh *shard[T]) alloc() int32 {
	if n := len(sh.free); n > 0 {
		id := sh.free[n-1]
		sh.free = sh.free[:n-1]
		return id
	}
	if sh.next == sh.perChunk {
		sh.chunks = append(sh.chunks, chunk{words: make([]uint64, int(sh.perChunk)*sh.stride)})
		sh.next = 0
	}
	id := int32(len(sh.chunks)-1)<<16 | sh.next
	sh.next++
	return id
}

// sweepN examines up to n buckets, continuing round-robin where the last
// sweep stopped, and reclaims those that hold no admitted request inside the
// window at t.
func (sh *shard[T]) sweepN(l *Limiter, t uint64, n int) int {
	reclaimed := 0
	size := len(sh.ids.e)
	for steps := 0; n > 0 && sh.live > 0 && steps < size; {
		if sh.cursor >= size {
			sh.cursor = 0
		}
		_, id, ok := sh.ids.at(sh.cursor)
		if !ok {
			sh.cursor++
			steps++
			continue
		}
		n--
		b := sh.at(id)
		te := max(t, *b.last)
		if !sh.idle(l, b, te) {
			sh.cursor++
			steps++
			continue
		}
		// Deleting may move a later entry into this slot: examine it again.
		sh.ids.deleteAt(sh.cursor)
		*b.total, *b.last = 0, 0
		clear(b.slots)
		sh.free = append(sh.free, id)
		sh.live--
		// The key's next request must not see an earlier time than te,
		// when its bucket was known to be empty.
		sh.horizon = max(sh.horizon, te)
		reclaimed++
	}
	return reclaimed
}

// idle reports whether b counts no request at time t >= *b.last.
func (sh *shard[T]) idle(l *Limiter, b bucket[T], t uint64) bool {
	if *b.total == 0 {
		return true
	}
	head := l.slotOf(*b.last)
	jmin := max(l.jmin(t, l.slotOf(t)), head-l.ring+1)
	for j := jmin; j <= head; j++ {
		if b.slots[l.ringDiv.mod(j)] != 0 {
			return false
		}
	}
	return true
}

// jmin returns the oldest slot that may hold a request inside the window
// (t-window, t]: slot j may while (j+1)*slot + window > t. cur is t's slot.
func (l *Limiter) jmin(t uint64, cur uint32) uint32 {
	if l.wslots != 0 {
		return cur - l.wslots
	}
	return l.slotDiv.div(uint32(t/uint64(time.Second)) - l.wsec)
}

// slotOf returns the slot index of time t.
func (l *Limiter) slotOf(t uint64) uint32 {
	return l.slotDiv.div(uint32(t / uint64(time.Second)))
}

// advance moves b's latest time to t, when t is later, clearing the ring
// positions of the slots that time has pushed out of the ring, and returns
// b's latest time.
func (sh *shard[T]) advance(l *Limiter, b bucket[T], t uint64) uint64 {
	last := *b.last
	if t <= last {
		return last
	}
	*b.last = t
	cur, head := l.slotOf(t), l.slotOf(last)
	if cur != head {
		// Clear the positions of slots head+1..cur: they held slots that
		// are now older than the ring.
		ring, slots := l.ring, b.slots
		n := min(cur-head, ring)
		p := l.ringDiv.mod(head + 1)
		for range n {
			*b.total -= uint32(slots[p])
			slots[p] = 0
			if p++; p == ring {
				p = 0
			}
		}
	}
	return t
}

// update applies one request at time t to bucket b.
//
// A time earlier than the bucket's latest is treated as that latest time;
// the retry delay is still measured from the caller's time, so that
// waiting it out lands the retry where the bucket admits it.
func (sh *shard[T]) update(l *Limiter, b bucket[T], t uint64) Decision {
	caller := t
	t = sh.advance(l, b, t)
	cur := l.slotOf(t)
	ring := l.ring
	slots := b.slots
	// Slots jmin..cur may hold requests inside the window; the ring holds
	// cur-ring+1..cur, of which at most one is older than jmin.
	jmin := l.jmin(t, cur)
	counted := int64(*b.total)
	if old := cur - ring + 1; old < jmin {
		counted -= int64(slots[l.ringDiv.mod(old)])
	}
	if counted < l.capacity {
		slots[l.ringDiv.mod(cur)]++
		*b.total++
		return Decision{Allowed: true, Remaining: l.capacity - counted - 1}
	}
	// Walk the oldest counted slots until enough have left the window.
	need := counted - l.capacity + 1
	j := jmin
	for p := l.ringDiv.mod(jmin); ; j++ {
		need -= int64(slots[p])
		if need <= 0 {
			break
		}
		if p++; p == ring {
			p = 0
		}
	}
	free := (uint64(j+1)*uint64(l.ssec) + uint64(l.wsec)) * uint64(time.Second)
	return Decision{RetryAfter: ceilSeconds(time.Duration(free - caller))}
}

// ceilSeconds rounds d up to whole seconds, with a minimum of one second.
func ceilSeconds(d time.Duration) time.Duration {
	s := (d + time.Second - 1) / time.Second
	return max(time.Second, s*time.Second)
}
