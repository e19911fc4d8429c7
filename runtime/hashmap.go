package runtime

import (
	"encoding/binary"
	"fmt"
	"math/bits"
	"math/rand/v2"
)

// hashMap is a hash, per-CPU hash or LRU hash. Entries live in slots that
// keep their value buffers after deletion, so steady-state updates do not
// allocate; the slots also form the recency list of the LRU variants.
//
// Keys are stored back to back in one arena (slot s at s*KeySize) and found
// through an open-addressing table with linear probing: each entry holds a
// tag in its upper half and the slot number plus one (0 is empty). The tag
// is the key itself for 4-byte keys, so a match needs no look at the arena,
// and the upper half of the key's hash otherwise. Deletion shifts later entries of the probe run back instead of
// leaving tombstones, so lookups never slow down with churn. The table is
// kept at most half full: probe runs stay short, which matters more than
// the eight bytes per entry. This avoids
// the string conversion and general-purpose hashing of a Go map keyed by
// string, which dominated the cost of the map helpers.
type hashMap struct {
	sharedMap
	spec       MapSpec
	lru        bool
	seed       uint64
	ks         int
	keys       []byte
	slots      []slot
	table      []uint64 // tag<<32 | slot+1; len is a power of two
	count      int
	free       []int32
	head, tail int32 // most and least recently used; -1 when empty
}

type slot struct {
	val        []byte
	used       bool
	prev, next int32
	// region is where a run last mapped val: a hint the map helper
	// checks against the run's region table before reusing it. It is
	// accessed atomically, so that runs sharing the map only to read it
	// stay free of data races, as they were before the hint.
	region uint32
}

func newHashMap(spec MapSpec) *hashMap {
	return &hashMap{
		spec: spec,
		lru:  spec.Type == LRUHash || spec.Type == LRUPerCPUHash,
		// A random seed per map keeps keys a program chooses from being
		// steered into one probe run.
		seed: rand.Uint64() | 1,
		ks:   int(spec.KeySize),
		head: -1,
		tail: -1,
	}
}

func (h *hashMap) Spec() MapSpec { return h.spec }

func (h *hashMap) checkKey(key []byte) error {
	if len(key) != h.ks {
		return fmt.Errorf("key of %d bytes, want %d: %w", len(key), h.spec.KeySize, ErrInvalidArg)
	}
	return nil
}

// hashKey hashes a key. The common sizes take one 64x64->128 multiply
// folded to 64 bits, inline; others go through hashBytes.
func (h *hashMap) hashKey(k []byte) uint64 {
	var w uint64
	switch len(k) {
	case 4:
		w = uint64(binary.LittleEndian.Uint32(k))
	case 8:
		w = binary.LittleEndian.Uint64(k)
	default:
		return h.hashBytes(k)
	}
	hi, lo := bits.Mul64(h.seed^w, 0x9e3779b97f4a7c15)
	return hi ^ lo
}

// hashBytes mixes the key eight bytes at a time.
func (h *hashMap) hashBytes(k []byte) uint64 {
	const m1, m2 = 0x9e3779b97f4a7c15, 0xbf58476d1ce4e5b9
	x := h.seed ^ uint64(len(k))*m2
	for len(k) >= 8 {
		hi, lo := bits.Mul64(x^binary.LittleEndian.Uint64(k), m1)
		x = hi ^ lo
		k = k[8:]
	}
	if len(k) > 0 {
		var w uint64
		if len(k) >= 4 {
			w = uint64(binary.LittleEndian.Uint32(k)) | uint64(binary.LittleEndian.Uint32(k[len(k)-4:]))<<32
		} else {
			w = uint64(k[0]) | uint64(k[len(k)/2])<<8 | uint64(k[len(k)-1])<<16
		}
		hi, lo := bits.Mul64(x^w, m1)
		x = hi ^ lo
	}
	hi, lo := bits.Mul64(x, m2)
	return hi ^ lo
}

// tag is the upper half of key's table entry.
func (h *hashMap) tag(key []byte, hash uint64) uint64 {
	if len(key) == 4 {
		return uint64(binary.LittleEndian.Uint32(key))
	}
	return hash >> 32
}

// match reports whether the table entry e is key's, given key's tag.
func (h *hashMap) match(e, tag uint64, key []byte) bool {
	return e>>32 == tag && (len(key) == 4 || h.equal(int32(uint32(e))-1, key))
}

func (h *hashMap) keyOf(s int32) []byte {
	o := int(s) * h.ks
	return h.keys[o : o+h.ks : o+h.ks]
}

// find returns the slot holding key and the table position of its entry,
// or -1 and the position where key would be inserted.
func (h *hashMap) find(key []byte) (s int32, pos int) {
	if len(h.table) == 0 || len(key) != h.ks {
		return -1, 0
	}
	hash := h.hashKey(key)
	tag := h.tag(key, hash)
	mask := len(h.table) - 1
	for i := int(hash) & mask; ; i = (i + 1) & mask {
		e := h.table[i]
		if e == 0 {
			return -1, i
		}
		if h.match(e, tag, key) {
			return int32(uint32(e)) - 1, i
		}
	}
}

// equal reports whether slot s holds key, comparing words for the common
// key sizes instead of calling the general byte comparison.
func (h *hashMap) equal(s int32, key []byte) bool {
	k := h.keyOf(s)
	switch len(key) {
	case 4:
		return binary.LittleEndian.Uint32(k) == binary.LittleEndian.Uint32(key)
	case 8:
		return binary.LittleEndian.Uint64(k) == binary.LittleEndian.Uint64(key)
	}
	return string(k) == string(key)
}

// lookup returns the live value for key, or nil.
func (h *hashMap) lookup(key []byte) []byte {
	if s := h.lookupSlot(key); s >= 0 {
		return h.slots[s].val
	}
	return nil
}

// lookupSlot returns the slot of key, or -1, and marks it used for LRU. It
// is find written out for the map helper's hot path.
func (h *hashMap) lookupSlot(key []byte) int32 {
	if len(key) != h.ks {
		return -1
	}
	if len(key) == 4 {
		return h.lookup4(binary.LittleEndian.Uint32(key))
	}
	if len(h.table) == 0 {
		return -1
	}
	hash := h.hashKey(key)
	tag := hash >> 32
	mask := len(h.table) - 1
	for i := int(hash) & mask; ; i = (i + 1) & mask {
		e := h.table[i]
		if e == 0 {
			return -1
		}
		if s := int32(uint32(e)) - 1; e>>32 == tag && h.equal(s, key) {
			h.touch(s)
			return s
		}
	}
}

// lookup4 is lookupSlot for a map of 4-byte keys, given the key's value:
// the tag is the key, so an entry matches without a look at the arena, and
// the hash is inline.
func (h *hashMap) lookup4(key uint32) int32 {
	t := h.table
	if len(t) == 0 {
		return -1
	}
	hi, lo := bits.Mul64(h.seed^uint64(key), 0x9e3779b97f4a7c15)
	mask := len(t) - 1
	for i := int(hi^lo) & mask; ; i = (i + 1) & mask {
		e := t[i]
		if e>>32 == uint64(key) && e != 0 {
			s := int32(uint32(e)) - 1
			h.touch(s)
			return s
		}
		if e == 0 {
			return -1
		}
	}
}

func (h *hashMap) Lookup(key []byte) ([]byte, error) {
	if v := h.lookup(key); v != nil {
		return v, nil
	}
	return nil, ErrKeyNotExist
}

func (h *hashMap) Update(key, value []byte, flags uint64) error {
	if err := checkFlags(flags); err != nil {
		return err
	}
	if err := h.checkKey(key); err != nil {
		return err
	}
	if s, _ := h.find(key); s >= 0 {
		if flags == UpdateNoExist {
			return ErrKeyExist
		}
		copy(h.slots[s].val, value)
		h.touch(s)
		return nil
	}
	if flags == UpdateExist {
		return ErrKeyNotExist
	}
	if h.count >= int(h.spec.MaxEntries) {
		if !h.lru {
			return ErrMapFull
		}
		h.remove(h.tail)
	}
	if (h.count+1)*2 > len(h.table) {
		h.grow()
	}
	var s int32
	if n := len(h.free); n > 0 {
		s = h.free[n-1]
		h.free = h.free[:n-1]
	} else {
		// The capacity, a multiple of 8, makes the allocation 8-byte
		// aligned, so that atomics on the value are.
		vs := int(h.spec.ValueSize)
		h.slots = append(h.slots, slot{val: make([]byte, vs, (vs+7)&^7)})
		h.keys = append(h.keys, make([]byte, h.ks)...)
		s = int32(len(h.slots) - 1)
	}
	copy(h.keyOf(s), key)
	sl := &h.slots[s]
	sl.used = true
	copy(sl.val, value)
	h.insert(s, key)
	h.count++
	h.pushFront(s)
	return nil
}

// insert adds the table entry of slot s, whose key is not in the table.
func (h *hashMap) insert(s int32, key []byte) {
	hash := h.hashKey(key)
	mask := len(h.table) - 1
	i := int(hash) & mask
	for h.table[i] != 0 {
		i = (i + 1) & mask
	}
	h.table[i] = h.tag(key, hash)<<32 | uint64(s+1)
}

// grow doubles the table (8 entries at first) and reinserts every entry.
func (h *hashMap) grow() {
	old := h.table
	h.table = make([]uint64, max(8, 2*len(old)))
	for _, e := range old {
		if e != 0 {
			s := int32(uint32(e)) - 1
			h.insert(s, h.keyOf(s))
		}
	}
}

func (h *hashMap) Delete(key []byte) error {
	s, _ := h.find(key)
	if s < 0 {
		return ErrKeyNotExist
	}
	h.remove(s)
	return nil
}

// remove frees a slot. Its value buffer is cleared, not released: a
// program may still hold a pointer to it until its run ends, as with the
// kernel's preallocated maps. A later insert may reuse the slot, in the same
// run too, so such a stale pointer then sees the new entry's value (again as
// in the kernel); it never sees memory of another type or size.
func (h *hashMap) remove(s int32) {
	_, pos := h.find(h.keyOf(s))
	h.unlinkTable(pos)
	h.count--
	h.unlink(s)
	sl := &h.slots[s]
	sl.used = false
	clear(sl.val)
	h.free = append(h.free, s)
}

// unlinkTable empties table position i and moves later entries of its
// probe run back so that every entry stays reachable from its home position.
func (h *hashMap) unlinkTable(i int) {
	mask := len(h.table) - 1
	for j := (i + 1) & mask; h.table[j] != 0; j = (j + 1) & mask {
		e := h.table[j]
		home := int(h.hashKey(h.keyOf(int32(uint32(e))-1))) & mask
		// Move e into the hole when its home is not in (i, j] cyclically.
		if (j-home)&mask >= (j-i)&mask {
			h.table[i] = e
			i = j
		}
	}
	h.table[i] = 0
}

func (h *hashMap) NextKey(key, next []byte) error {
	start := int32(0)
	if key != nil {
		if s, _ := h.find(key); s >= 0 {
			start = s + 1
		}
	}
	for s := start; int(s) < len(h.slots); s++ {
		if h.slots[s].used {
			copy(next, h.keyOf(s))
			return nil
		}
	}
	return ErrKeyNotExist
}

func (h *hashMap) touch(s int32) {
	if h.lru && h.head != s {
		h.moveFront(s)
	}
}

func (h *hashMap) moveFront(s int32) {
	h.unlink(s)
	h.pushFront(s)
}

func (h *hashMap) pushFront(s int32) {
	sl := &h.slots[s]
	sl.prev, sl.next = -1, h.head
	if h.head >= 0 {
		h.slots[h.head].prev = s
	}
	h.head = s
	if h.tail < 0 {
		h.tail = s
	}
}

func (h *hashMap) unlink(s int32) {
	sl := &h.slots[s]
	if sl.prev >= 0 {
		h.slots[sl.prev].next = sl.next
	} else {
		h.head = sl.next
	}
	if sl.next >= 0 {
		h.slots[sl.next].prev = sl.prev
	} else {
		h.tail = sl.prev
	}
	sl.prev, sl.next = -1, -1
}
