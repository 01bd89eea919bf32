package ratelimit

// index maps key hashes to bucket ids: open addressing with linear probing
// over the hash's own bits (they come from a seeded hash, so no rehashing),
// and backward-shift deletion, so there are no tombstones. The zero value is
// an empty index. It is not safe for concurrent use; shards lock around it.
type index struct {
	e    []entry
	n    int
	mask uint64
}

// entry is one slot of an index; id 0 marks it empty, so ids are stored
// plus one.
type entry struct {
	k  hkey
	id int32
}

// home returns k's preferred slot. The low bits of k.a choose the shard, so
// the slot uses the high bits.
func (x *index) home(k hkey) uint64 { return (k.a >> 20) & x.mask }

func (x *index) get(k hkey) (int32, bool) {
	if x.n == 0 {
		return 0, false
	}
	for i := x.home(k); ; i = (i + 1) & x.mask {
		e := &x.e[i]
		if e.id == 0 {
			return 0, false
		}
		if e.k == k {
			return e.id - 1, true
		}
	}
}

// put adds k, which must not be present.
func (x *index) put(k hkey, id int32) {
	if 4*(x.n+1) > 3*len(x.e) {
		x.grow()
	}
	i := x.home(k)
	for x.e[i].id != 0 {
		i = (i + 1) & x.mask
	}
	x.e[i] = entry{k: k, id: id + 1}
	x.n++
}

func (x *index) grow() {
	old := x.e
	size := max(16, 2*len(old))
	x.e = make([]entry, size)
	x.mask = uint64(size - 1)
	x.n = 0
	for _, e := range old {
		if e.id != 0 {
			x.put(e.k, e.id-1)
		}
	}
}

// at returns the entry in slot i, if any.
func (x *index) at(i int) (hkey, int32, bool) {
	e := &x.e[i]
	return e.k, e.id - 1, e.id != 0
}

// deleteAt empties slot i and shifts later entries of its probe run back,
// so lookups never stop early. An entry from after i may move into i.
func (x *index) deleteAt(i int) {
	j := uint64(i)
	for {
		x.e[j] = entry{}
		k := j
		for {
			k = (k + 1) & x.mask
			if x.e[k].id == 0 {
				x.n--
				return
			}
			h := x.home(x.e[k].k)
			// Move e[k] to j unless its home lies cyclically in (j, k].
			if (j < k && (h <= j || h > k)) || (j > k && h <= j && h > k) {
				break
			}
		}
		x.e[j] = x.e[k]
		j = k
	}
}
