package ratelimit

// index maps key hashes to bucket ids in four bytes an entry: open
// addressing with linear probing over the hash's own bits (they come from
// a seeded hash, so no rehashing), and backward-shift deletion, so there
// are no tombstones. An entry holds the id plus one (0 marks it empty) and
// a tag of the hash's top bits; the full hash lives in the bucket, which a
// lookup reads anyway, so a tag match is confirmed there. Growing and
// deleting read hashes back through hashOf. The zero value is an empty
// index. It is not safe for concurrent use; shards lock around it.
type index struct {
	e    []uint32
	n    int
	mask uint64
}

const (
	// Ids stay below 1<<idBits - 1: at most 1<<21 buckets a shard (64
	// shards), numbered with up to twice that many ids (see newShards).
	idBits   = 23
	idMask   = 1<<idBits - 1
	tagShift = 64 - (32 - idBits)
)

// home returns h's preferred slot. The low bits of h choose the shard, so
// the slot uses the bits above them.
func (x *index) home(h uint64) uint64 { return (h >> 6) & x.mask }

// put adds h, which must not be present, with bucket id.
func (x *index) put(h uint64, id int32, hashOf func(int32) uint64) {
	// At most 7/8 full: linear probing's expected cost of a hit at that
	// load is 4.5 entries, within one or two cache lines of four-byte
	// entries; 3/4 cost 4 bytes a key more on ratelimit/bench's
	// BytesPerKey (100,000 keys: about 1,563 a shard, just past 3/4 of
	// 2,048 entries).
	if 8*(x.n+1) > 7*len(x.e) {
		x.grow(hashOf)
	}
	i := x.home(h)
	for x.e[i] != 0 {
		i = (i + 1) & x.mask
	}
	x.e[i] = uint32(h>>tagShift)<<idBits | uint32(id+1)
	x.n++
}

func (x *index) grow(hashOf func(int32) uint64) {
	old := x.e
	size := max(16, 2*len(old))
	x.e = make([]uint32, size)
	x.mask = uint64(size - 1)
	x.n = 0
	for _, e := range old {
		if e != 0 {
			id := int32(e&idMask) - 1
			x.put(hashOf(id), id, hashOf)
		}
	}
}

// at returns the bucket id in slot i, if any.
func (x *index) at(i int) (int32, bool) {
	e := x.e[i]
	return int32(e&idMask) - 1, e != 0
}

// deleteAt empties slot i and shifts later entries of its probe run back,
// so lookups never stop early. An entry from after i may move into i.
func (x *index) deleteAt(i int, hashOf func(int32) uint64) {
	j := uint64(i)
	for {
		x.e[j] = 0
		k := j
		for {
			k = (k + 1) & x.mask
			if x.e[k] == 0 {
				x.n--
				return
			}
			h := x.home(hashOf(int32(x.e[k]&idMask) - 1))
			// Move e[k] to j unless its home lies cyclically in (j, k].
			if (j < k && (h <= j || h > k)) || (j > k && h <= j && h > k) {
				break
			}
		}
		x.e[j] = x.e[k]
		j = k
	}
}
