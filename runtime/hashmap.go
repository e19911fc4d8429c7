package runtime

import (
	"encoding/binary"
	"fmt"
	"math/bits"
	"math/rand/v2"
	"unsafe"
)

// hashMap is a hash, per-CPU hash or LRU hash. Entries live in slots that
// keep their value buffers after deletion, so steady-state updates do not
// allocate; the slots also form the recency list of the LRU variants and,
// in a second list, the order NextKey walks. An update of a key the map
// holds moves it to another slot, except in the per-CPU maps (see
// replace).
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
//
// Memory grows with the entries, in steps that at most double it and never
// past MaxEntries: the slot and key arrays, and one block of values per
// step, so a value never moves (a program's pointer to it stays valid)
// and each is 8-byte aligned. allocated counts these bytes; the map
// helpers charge a run for what an update adds, and mem (see MapMemory)
// bounds them.
type hashMap struct {
	sharedMap
	spec        MapSpec
	lru         bool
	perCPU      bool  // an update of a key the map holds writes its value in place
	spare       int32 // a preallocated hash map's slot for its next replacement (see replace), or -1
	maxSlots    int   // MaxEntries, and one more for a hash map's replacements
	seed        uint64
	ks          int
	stride      int // bytes between values in a block: ValueSize rounded up to 8
	keys        []byte
	slots       []slot
	values      []byte   // the unused rest of the newest block of values
	table       []uint64 // tag<<32 | slot+1; len is a power of two
	count       int
	free        []int32
	head, tail  int32 // most and least recently used; -1 when empty
	first, last int32 // NextKey's order (insertion order); -1 when empty
	mem         *MapMemory
	reserved    bool  // mem holds the map's largest size (see newHashMap)
	allocated   int64 // bytes of slots, keys, values, table and free list
}

type slot struct {
	val        []byte
	used       bool
	prev, next int32 // recency list
	// after and before link the live entries in insertion order, which
	// NextKey follows, so a step costs the same whatever the map has held.
	after, before int32
	// region is where a run last mapped val: a hint the map helper
	// checks against the run's region table before reusing it. It is
	// accessed atomically, so that runs sharing the map only to read it
	// stay free of data races, as they were before the hint.
	region uint32
}

const slotSize = int64(unsafe.Sizeof(slot{}))

// hashMapSize is the most memory a hash map of spec's sizes can allocate:
// its slots (see slotsOf) with their keys, values and free-list entries,
// and the table at its largest (a power of two at least twice
// MaxEntries).
func hashMapSize(spec MapSpec) uint64 {
	n := uint64(spec.MaxEntries)
	entry := uint64(slotSize) + uint64(spec.KeySize) + (uint64(spec.ValueSize)+7)&^7 + 4
	return uint64(slotsOf(spec))*entry + 8*tableLen(n)
}

// slotsOf is the most slots a hash map of spec has: MaxEntries, and one
// more for a hash map (not per-CPU, not LRU), which replaces an entry it
// holds when the key is updated and may do so when it is full, as the
// kernel's keeps a spare element for it (an LRU map evicts instead).
func slotsOf(spec MapSpec) int {
	if spec.Type == Hash {
		return int(spec.MaxEntries) + 1
	}
	return int(spec.MaxEntries)
}

// tableLen is the table length that n entries grow the table to.
func tableLen(n uint64) uint64 {
	l := uint64(8)
	for l < 2*n {
		l *= 2
	}
	return l
}

// newHashMap makes a hash map whose memory comes from mem. A map that the
// kernel would preallocate (any but BPF_F_NO_PREALLOC) takes its largest
// size from mem at once, so that a map the limit cannot hold fails here,
// at load, as a kernel map fails to be created; a BPF_F_NO_PREALLOC map
// takes memory as it grows, and an update that would pass the limit fails
// with ErrNoMemory, as the kernel's allocation would.
func newHashMap(spec MapSpec, mem *MapMemory) (*hashMap, error) {
	h := &hashMap{
		spec:     spec,
		lru:      spec.Type == LRUHash || spec.Type == LRUPerCPUHash,
		perCPU:   spec.Type == PerCPUHash || spec.Type == LRUPerCPUHash,
		spare:    -1,
		maxSlots: slotsOf(spec),
		// A random seed per map keeps keys a program chooses from being
		// steered into one probe run.
		seed:     rand.Uint64() | 1,
		ks:       int(spec.KeySize),
		stride:   (int(spec.ValueSize) + 7) &^ 7,
		head:     -1,
		tail:     -1,
		first:    -1,
		last:     -1,
		mem:      mem,
		reserved: spec.Flags&FlagNoPrealloc == 0,
	}
	if h.reserved {
		if err := mem.take(spec, hashMapSize(spec)); err != nil {
			return nil, err
		}
	}
	return h, nil
}

// grew records n more bytes of the map's memory, taking them from mem
// unless the map reserved its largest size at creation.
func (h *hashMap) grew(n int64) error {
	if !h.reserved {
		if err := h.mem.take(h.spec, uint64(n)); err != nil {
			return err
		}
	}
	h.allocated += n
	return nil
}

// Allocated returns the bytes the map has allocated for its entries.
func (h *hashMap) Allocated() int64 { return h.allocated }

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

// hashBytes mixes the key eight bytes at a time, in four independent
// lanes while 32 bytes remain, so that long keys hash near memory speed.
func (h *hashMap) hashBytes(k []byte) uint64 {
	const m1, m2 = 0x9e3779b97f4a7c15, 0xbf58476d1ce4e5b9
	x := h.seed ^ uint64(len(k))*m2
	if len(k) >= 32 {
		a, b, c, d := x, x^m1, x^m2, x+m1
		for len(k) >= 32 {
			a = fold(a^binary.LittleEndian.Uint64(k), m1)
			b = fold(b^binary.LittleEndian.Uint64(k[8:]), m1)
			c = fold(c^binary.LittleEndian.Uint64(k[16:]), m1)
			d = fold(d^binary.LittleEndian.Uint64(k[24:]), m1)
			k = k[32:]
		}
		x = fold(fold(fold(a^b, m2)^c, m2)^d, m2)
	}
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

// fold multiplies x by m and folds the 128-bit product to 64 bits.
func fold(x, m uint64) uint64 {
	hi, lo := bits.Mul64(x, m)
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
	switch len(key) {
	case 4:
		return h.lookup4(binary.LittleEndian.Uint32(key))
	case 8:
		return h.found(h.find8(binary.LittleEndian.Uint64(key)))
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

// lookup4 is lookupSlot for a map of 4-byte keys, given the key's value.
func (h *hashMap) lookup4(key uint32) int32 { return h.found(h.find4(key)) }

// found marks slot s used, for LRU, unless it is -1, and returns it.
func (h *hashMap) found(s int32) int32 {
	if s >= 0 {
		h.touch(s)
	}
	return s
}

// find4 returns the slot of key in a map of 4-byte keys, or -1. The tag is
// the key, so an entry matches without a look at the arena.
func (h *hashMap) find4(key uint32) int32 {
	t := h.table
	hi, lo := bits.Mul64(h.seed^uint64(key), 0x9e3779b97f4a7c15)
	for i := hi ^ lo; len(t) > 0; i++ {
		e := t[i&uint64(len(t)-1)]
		if e>>32 == uint64(key) && e != 0 {
			return int32(uint32(e)) - 1
		}
		if e == 0 {
			break
		}
	}
	return -1
}

// find8 is find4 for a map of 8-byte keys: the tag is the upper half of
// the key's hash, and a match compares the key in the arena.
func (h *hashMap) find8(key uint64) int32 {
	t := h.table
	hi, lo := bits.Mul64(h.seed^key, 0x9e3779b97f4a7c15)
	for i := hi ^ lo; len(t) > 0; i++ {
		e := t[i&uint64(len(t)-1)]
		if e == 0 {
			break
		}
		if s := int32(uint32(e)) - 1; e>>32 == (hi^lo)>>32 && binary.LittleEndian.Uint64(h.keys[8*int(s):]) == key {
			return s
		}
	}
	return -1
}

func (h *hashMap) Lookup(key []byte) ([]byte, error) {
	if v := h.lookup(key); v != nil {
		return v, nil
	}
	return nil, ErrKeyNotExist
}

func (h *hashMap) Update(key, value []byte, flags uint64) error {
	if err := checkHashFlags(flags); err != nil {
		return err
	}
	if err := h.checkKey(key); err != nil {
		return err
	}
	s, _ := h.find(key)
	return h.store(s, key, value, flags)
}

// checkHashFlags checks a hash map update's flags, BPF_F_LOCK before the
// key is looked up, as the kernel does.
func checkHashFlags(flags uint64) error {
	if err := checkFlags(flags); err != nil {
		return err
	}
	if flags&UpdateLock != 0 {
		return errLock
	}
	return nil
}

// store is Update once the key's slot s is found (-1: the key is not in
// the map) and flags checked.
func (h *hashMap) store(s int32, key, value []byte, flags uint64) error {
	if h.evicts(flags) {
		// The kernel's LRU maps take a free element before they look the
		// key up (the per-CPU one unless the flags are BPF_EXIST),
		// evicting when none is free, whether the update then succeeds
		// or not. The key itself may go: the update then inserts it.
		t := h.tail
		h.remove(t)
		if t == s {
			s = -1
		}
	}
	if s >= 0 {
		if flags == UpdateNoExist {
			return ErrKeyExist
		}
		if h.perCPU {
			copy(h.slots[s].val, value)
			h.touch(s)
			return nil
		}
		return h.replace(s, key, value)
	}
	if flags == UpdateExist {
		return ErrKeyNotExist
	}
	if h.count >= int(h.spec.MaxEntries) {
		return ErrMapFull
	}
	if (h.count+1)*2 > len(h.table) {
		if err := h.grow(); err != nil {
			return err
		}
	}
	s, err := h.take()
	if err != nil {
		return err
	}
	copy(h.keyOf(s), key)
	sl := &h.slots[s]
	sl.used = true
	// A reused slot holds the value deleted from it.
	clear(sl.val[copy(sl.val, value):])
	h.insert(s, key)
	h.count++
	h.pushFront(s)
	h.append(s)
	return nil
}

// replace gives key, which slot s holds, a new slot with value, as the
// kernel's hash and LRU hash maps put a new element in the old one's
// place: a program's pointer to the old value keeps reading it, and its
// writes no longer reach the map. The new slot takes the old one's place
// in NextKey's order and is the most recently used. The old slot is a
// preallocated hash map's spare, which its next replacement takes, as
// the kernel's extra element, and is free for any insert in the others,
// as the kernel's freed elements are.
func (h *hashMap) replace(s int32, key, value []byte) error {
	n := h.spare
	if n >= 0 {
		h.spare = -1
	} else {
		var err error
		if n, err = h.take(); err != nil {
			return err
		}
	}
	nl, sl := &h.slots[n], &h.slots[s]
	clear(nl.val[copy(nl.val, value):])
	copy(h.keyOf(n), key)
	nl.used, sl.used = true, false
	pos := h.entry(s)
	h.table[pos] = h.table[pos]&^0xffffffff | uint64(n+1)
	nl.before, nl.after = sl.before, sl.after
	if sl.before >= 0 {
		h.slots[sl.before].after = n
	} else {
		h.first = n
	}
	if sl.after >= 0 {
		h.slots[sl.after].before = n
	} else {
		h.last = n
	}
	sl.before, sl.after = -1, -1
	h.unlink(s)
	h.pushFront(n)
	if h.spec.Type == Hash && h.reserved {
		h.spare = s
	} else {
		h.free = append(h.free, s)
	}
	return nil
}

// evicts reports whether an update with flags evicts an LRU map's least
// recently used entry first (see store).
func (h *hashMap) evicts(flags uint64) bool {
	return h.lru && h.count == int(h.spec.MaxEntries) && (!h.perCPU || flags != UpdateExist)
}

// allocates reports whether store(s, ..., flags) may take memory: a
// larger table, or a new block of slots (see newSlot).
func (h *hashMap) allocates(s int32, flags uint64) bool {
	block := len(h.free) == 0 && len(h.slots) == cap(h.slots)
	switch {
	case h.evicts(flags):
		return false // the evicted entry's slot is the update's
	case s >= 0:
		return flags != UpdateNoExist && !h.perCPU && h.spare < 0 && block
	case flags == UpdateExist || h.count >= int(h.spec.MaxEntries):
		return false // refused
	}
	return (h.count+1)*2 > len(h.table) || block
}

// take returns a free slot, the last one freed, or a new one.
func (h *hashMap) take() (int32, error) {
	if n := len(h.free); n > 0 {
		s := h.free[n-1]
		h.free = h.free[:n-1]
		return s, nil
	}
	return h.newSlot()
}

// newSlot adds a slot with its key space and value, growing the arrays and
// taking a new block of values when the last one is used up.
func (h *hashMap) newSlot() (int32, error) {
	n := len(h.slots)
	if n == cap(h.slots) {
		// Start small when values are large, so that a first insert does
		// not allocate many of them; then double, up to maxSlots.
		grown := min(h.maxSlots, max(2*n, min(8, max(1, 1<<16/h.stride))))
		add := grown - n
		if err := h.grew(int64(add) * (slotSize + int64(h.ks) + int64(h.stride) + 4)); err != nil {
			return -1, err
		}
		h.slots = append(make([]slot, 0, grown), h.slots...)
		h.keys = append(make([]byte, 0, grown*h.ks), h.keys...)
		h.free = append(make([]int32, 0, grown), h.free...)
		h.values = make([]byte, add*h.stride)
	}
	vs := int(h.spec.ValueSize)
	h.slots = append(h.slots, slot{val: h.values[:vs:vs]})
	h.values = h.values[h.stride:]
	h.keys = h.keys[:len(h.keys)+h.ks]
	return int32(n), nil
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
func (h *hashMap) grow() error {
	old := h.table
	n := max(8, 2*len(old))
	if err := h.grew(8 * int64(n-len(old))); err != nil {
		return err
	}
	h.table = make([]uint64, n)
	for _, e := range old {
		if e != 0 {
			s := int32(uint32(e)) - 1
			h.insert(s, h.keyOf(s))
		}
	}
	return nil
}

func (h *hashMap) Delete(key []byte) error {
	s, _ := h.find(key)
	if s < 0 {
		return ErrKeyNotExist
	}
	h.remove(s)
	return nil
}

// removed is Delete once the key's slot s (-1: the key is not in the
// map) is found, returning the helper's r0: 0, or -ENOENT.
func (h *hashMap) removed(s int32) uint64 {
	if s < 0 {
		return errno(ErrKeyNotExist)
	}
	h.remove(s)
	return 0
}

// remove frees a slot. Its value buffer is neither released nor cleared:
// a program may still hold a pointer to it until its run ends, and reads
// the deleted value through it, as with the kernel's preallocated maps. A
// later insert or update may reuse the slot, in the same run too, so such a stale
// pointer then sees the new entry's value (again as in the kernel); it
// never sees memory of another type or size.
func (h *hashMap) remove(s int32) {
	h.unlinkTable(h.entry(s))
	h.count--
	h.unlink(s)
	h.detach(s)
	sl := &h.slots[s]
	sl.used = false
	h.free = append(h.free, s)
}

// entry returns the table position of the entry of slot s, which is live.
func (h *hashMap) entry(s int32) int {
	mask := len(h.table) - 1
	i := int(h.hashKey(h.keyOf(s))) & mask
	for uint32(h.table[i]) != uint32(s)+1 {
		i = (i + 1) & mask
	}
	return i
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

// NextKey follows the insertion order of the live entries, one step per
// call whatever the map held before. A key that is not in the map gives
// the first key, as the kernel's hash maps do.
func (h *hashMap) NextKey(key, next []byte) error {
	s := h.first
	if key != nil {
		if k, _ := h.find(key); k >= 0 {
			s = h.slots[k].after
		}
	}
	if s < 0 {
		return ErrKeyNotExist
	}
	copy(next, h.keyOf(s))
	return nil
}

// append puts slot s last in NextKey's order.
func (h *hashMap) append(s int32) {
	sl := &h.slots[s]
	sl.before, sl.after = h.last, -1
	if h.last >= 0 {
		h.slots[h.last].after = s
	} else {
		h.first = s
	}
	h.last = s
}

// detach takes slot s out of NextKey's order.
func (h *hashMap) detach(s int32) {
	sl := &h.slots[s]
	if sl.before >= 0 {
		h.slots[sl.before].after = sl.after
	} else {
		h.first = sl.after
	}
	if sl.after >= 0 {
		h.slots[sl.after].before = sl.before
	} else {
		h.last = sl.before
	}
	sl.before, sl.after = -1, -1
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
