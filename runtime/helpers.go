package runtime

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"math/bits"
	"math/rand/v2"
	"os"
	"sync/atomic"
)

// Func is a helper, an extern or a host function the program calls. It
// gets the program's r1..r5 and returns r0; an error stops the run.
type Func func(m *Machine, r1, r2, r3, r4, r5 uint64) (uint64, error)

type helper struct {
	name string
	fn   Func
	// builtin is the helper id of the runtime's own map_lookup_elem,
	// map_update_elem and map_delete_elem, whose common cases run
	// without the call (Machine.LookupAt, Lookup32, Update32, Delete32,
	// ...); 0 for every other helper.
	builtin int32
	// format marks the built-in snprintf, whose constant format Load
	// checks (see checkFormats).
	format bool
	// stackless says that a call of the helper writes no stack frame,
	// whatever its arguments point at: it writes no memory it is given,
	// or only memory of its own kind (a map's value, a ring buffer's
	// record). A program whose calls are all to such helpers needs no
	// more of its frames cleared between runs than its own stores reach
	// (see stackLow). Only the runtime's own helpers are; Register's are
	// not.
	stackless bool
}

// HelperSet maps kernel helper ids, and extern names the runtime binds
// itself, to Funcs.
type HelperSet struct {
	byID    map[int32]helper
	externs map[string]Func
}

// NewHelperSet returns an empty set.
func NewHelperSet() *HelperSet {
	return &HelperSet{byID: map[int32]helper{}, externs: map[string]Func{}}
}

// Register binds id to f, replacing any earlier binding.
func (s *HelperSet) Register(id int32, name string, f Func) {
	s.byID[id] = helper{name: name, fn: f}
}

// Wrap replaces the Func bound to id, if any, with w(Func). The wrapper
// keeps the helper's name and what the runtime knows of it, so w must
// write no guest memory but through the Func it wraps; the common cases
// of map lookups, updates and deletes that run without the call (see
// Machine.Lookup32) go through the wrapper once it is in place.
func (s *HelperSet) Wrap(id int32, w func(Func) Func) {
	h, ok := s.byID[id]
	if !ok {
		return
	}
	h.fn, h.builtin = w(h.fn), 0
	s.byID[id] = h
}

// RegisterExtern binds an extern name for every program loaded with s;
// Options.Externs takes precedence.
func (s *HelperSet) RegisterExtern(name string, f Func) { s.externs[name] = f }

func (s *HelperSet) lookup(id int32) (helper, bool) {
	h, ok := s.byID[id]
	return h, ok
}

func (s *HelperSet) extern(name string) Func { return s.externs[name] }

// Kernel helper ids (include/uapi/linux/bpf.h).
const (
	HelperMapLookupElem     = 1
	HelperMapUpdateElem     = 2
	HelperMapDeleteElem     = 3
	HelperKtimeGetNs        = 5
	HelperTracePrintk       = 6
	HelperGetPrandomU32     = 7
	HelperGetSmpProcessorID = 8
	HelperGetCurrentPidTgid = 14
	HelperKtimeGetBootNs    = 125
	HelperRingbufOutput     = 130
	HelperRingbufReserve    = 131
	HelperRingbufSubmit     = 132
	HelperRingbufDiscard    = 133
	HelperSnprintf          = 165
	HelperStrncmp           = 182
)

// Builtins returns a new set holding the helpers the runtime implements.
func Builtins() *HelperSet {
	s := NewHelperSet()
	s.byID[HelperMapLookupElem] = helper{name: "map_lookup_elem", fn: mapLookupElem, builtin: HelperMapLookupElem}
	s.byID[HelperMapUpdateElem] = helper{name: "map_update_elem", fn: mapUpdateElem, builtin: HelperMapUpdateElem}
	s.byID[HelperMapDeleteElem] = helper{name: "map_delete_elem", fn: mapDeleteElem, builtin: HelperMapDeleteElem}
	s.Register(HelperKtimeGetNs, "ktime_get_ns", func(*Machine, uint64, uint64, uint64, uint64, uint64) (uint64, error) {
		return monotonicNanos(), nil
	})
	s.Register(HelperTracePrintk, "trace_printk", tracePrintk)
	s.Register(HelperGetPrandomU32, "get_prandom_u32", func(*Machine, uint64, uint64, uint64, uint64, uint64) (uint64, error) {
		return uint64(rand.Uint32()), nil
	})
	s.Register(HelperGetSmpProcessorID, "get_smp_processor_id", func(*Machine, uint64, uint64, uint64, uint64, uint64) (uint64, error) {
		return 0, nil
	})
	s.Register(HelperGetCurrentPidTgid, "get_current_pid_tgid", func(*Machine, uint64, uint64, uint64, uint64, uint64) (uint64, error) {
		return uint64(os.Getpid())<<32 | uint64(threadID()), nil
	})
	s.Register(HelperKtimeGetBootNs, "ktime_get_boot_ns", func(*Machine, uint64, uint64, uint64, uint64, uint64) (uint64, error) {
		return bootNanos(), nil
	})
	s.Register(HelperRingbufOutput, "ringbuf_output", ringbufOutput)
	s.Register(HelperRingbufReserve, "ringbuf_reserve", ringbufReserve)
	s.Register(HelperRingbufSubmit, "ringbuf_submit", ringbufSubmit)
	s.Register(HelperRingbufDiscard, "ringbuf_discard", ringbufDiscard)
	s.Register(HelperStrncmp, "strncmp", strncmpHelper)
	// Every helper so far reads what its arguments point at and writes
	// only maps and ring buffers; snprintf, which writes its buffer, is
	// the one that follows.
	for id, h := range s.byID {
		h.stackless = true
		s.byID[id] = h
	}
	s.byID[HelperSnprintf] = helper{name: "snprintf", fn: snprintfHelper, format: true}
	return s
}

// mapAndKey resolves a map handle and reads its key; i is the map's index
// in the program.
func (m *Machine) mapAndKey(handle, keyAddr uint64) (mp Map, i int, key []byte, err error) {
	i, ok := m.mapIndex(handle)
	if !ok {
		return nil, 0, nil, fmt.Errorf("%#x is not a map handle", handle)
	}
	key, err = m.Bytes(keyAddr, uint64(m.prog.keySizes[i]))
	if err != nil {
		return nil, 0, nil, fmt.Errorf("key: %w", err)
	}
	return m.prog.maps[i], i, key, nil
}

// mapLookupElem returns the address of the live value, or NULL.
func mapLookupElem(m *Machine, r1, r2, _, _, _ uint64) (uint64, error) {
	if r0, ok, err := m.lookupHash(r1, r2); ok {
		return r0, err
	}
	mp, i, key, err := m.mapAndKey(r1, r2)
	if err != nil {
		return 0, err
	}
	// The key is hashed and compared; a map that is not the runtime's own
	// (a kernel map reached by system calls) also copies the value.
	work := 2 * len(key)
	if _, live := mp.(SharedMap); !live {
		work += int(mp.Spec().ValueSize)
	}
	if err := m.ChargeBytes(work); err != nil {
		return 0, err
	}
	val, err := mp.Lookup(key)
	if err != nil && !errors.Is(err, ErrKeyNotExist) {
		return 0, err
	}
	if val == nil {
		return 0, nil
	}
	if a, ok := mp.(*arrayMap); ok && m.values != nil {
		// An element's buffer is the array's for its life, as a hash
		// map slot's is: keep its region (see Memory.nkept).
		e := int32(binary.LittleEndian.Uint32(key))
		if r := m.values[i].region(e); r != 0 {
			return Addr(r, 0), nil
		}
		if r, ok := m.keep(i, e, val, int(a.spec.MaxEntries)); ok {
			return r, nil
		}
	}
	// The region name was built at load, so a lookup does not allocate.
	return m.AddRegion(m.prog.valueNames[i], val, !m.prog.readOnly[i])
}

// lookupHash is map_lookup_elem on a hash map of the program with its key
// in mapped memory, the common case, without the interface call, the
// error a missing key reports or a new region for a value this run state
// has already mapped. ok is false for every other case, which the general path
// decides and reports.
func (m *Machine) lookupHash(r1, r2 uint64) (r0 uint64, ok bool, err error) {
	i := r1>>32 - tagMap
	if r1&0xffffffff != 0 || i >= uint64(len(m.prog.hash)) {
		return 0, false, nil
	}
	h := m.prog.hash[i]
	ri, o := r2>>32, r2&0xffffffff
	if h == nil || ri >= uint64(len(m.rd)) {
		return 0, false, nil
	}
	k := m.rd[ri]
	n := uint64(h.ks)
	if o+n > uint64(len(k)) {
		return 0, false, nil
	}
	var s int32
	if h.ks == 4 {
		s = h.lookup4(binary.LittleEndian.Uint32(k[o:]))
	} else {
		// The key is hashed and compared (4-byte keys are neither).
		if err := m.ChargeBytes(2 * h.ks); err != nil {
			return 0, true, err
		}
		s = h.lookupSlot(k[o : o+n : o+n])
	}
	if s < 0 {
		return 0, true, nil
	}
	r0, err = m.valueAt(int(i), h, s)
	return r0, true, err
}

// valueAt returns the address of the value in slot s of h, the program's
// map i, mapping it if this Machine has not.
func (m *Machine) valueAt(i int, h *hashMap, s int32) (uint64, error) {
	if r := m.values[i].region(s); r != 0 {
		return Addr(r, 0), nil
	}
	return m.mapValue(i, h, s)
}

// keep maps val, the value of slot (or element) s of the program's map i,
// as a region kept for later runs, if the run has made no region of its
// own and the cap allows; n bounds the slots the map can have now.
func (m *Machine) keep(i int, s int32, val []byte, n int) (uint64, bool) {
	if len(m.rd) != m.nkept || m.nkept-m.nstatic >= maxKeptRegions {
		return 0, false
	}
	r := uint32(len(m.rd))
	m.rd = append(m.rd, val)
	w, own := val, val
	if m.prog.readOnly[i] {
		w, own = nil, nil
	}
	if _, ok := m.prog.maps[i].(SharedMap); !ok {
		own = nil
	}
	m.wr = append(m.wr, w)
	if own = ownable(own); own != nil {
		for len(m.own) < int(r) {
			m.own = append(m.own, nil)
		}
		m.own = append(m.own, own)
	}
	m.names = append(m.names, m.prog.valueNames[i])
	m.nkept++
	m.settle()
	m.values[i].remember(s, r, n)
	return Addr(r, 0), true
}

// mapValue maps the value of slot s. While the run has made no region of
// its own, the value's region is kept for later runs (see Memory.nkept);
// after that it is the run's, found again through the slot's hint.
func (m *Machine) mapValue(i int, h *hashMap, s int32) (uint64, error) {
	sl := &h.slots[s]
	if r, ok := m.keep(i, s, sl.val, len(h.slots)); ok {
		return r, nil
	}
	if r := atomic.LoadUint32(&sl.region); m.maps(r, sl.val) {
		return Addr(r, 0), nil
	}
	r0, err := m.AddRegion(m.prog.valueNames[i], sl.val, !m.prog.readOnly[i])
	atomic.StoreUint32(&sl.region, uint32(r0>>32))
	return r0, err
}

func mapUpdateElem(m *Machine, r1, r2, r3, r4, _ uint64) (uint64, error) {
	mp, i, key, err := m.mapAndKey(r1, r2)
	if err != nil {
		return 0, err
	}
	if m.prog.readOnly[i] {
		return errno(ErrReadOnly), nil
	}
	val, err := m.Bytes(r3, uint64(mp.Spec().ValueSize))
	if err != nil {
		return 0, fmt.Errorf("value: %w", err)
	}
	// The key is hashed and compared and the value copied; a hash map
	// also charges twice the memory a new entry makes it allocate (the
	// memory is zeroed and faulted in).
	if err := m.ChargeBytes(2*len(key) + len(val)); err != nil {
		return 0, err
	}
	h := m.prog.hash[i]
	if h == nil {
		return errno(mp.Update(key, val, r4)), nil
	}
	before := h.allocated
	err = h.Update(key, val, r4)
	if err := m.ChargeBytes(2 * int(h.allocated-before)); err != nil {
		return 0, err
	}
	return errno(err), nil
}

func mapDeleteElem(m *Machine, r1, r2, _, _, _ uint64) (uint64, error) {
	mp, i, key, err := m.mapAndKey(r1, r2)
	if err != nil {
		return 0, err
	}
	if m.prog.readOnly[i] {
		return errno(ErrReadOnly), nil
	}
	// The key is hashed and compared (a deleted value is left as it is).
	if err := m.ChargeBytes(2 * len(key)); err != nil {
		return 0, err
	}
	return errno(mp.Delete(key)), nil
}

// MapNextKey is skelgen_map_next_key(map, key, next): it writes the key
// after key (the first key when key is NULL or not in the map) to next and
// returns 0, or -ENOENT after the last key. It charges one unit for the step
// and the keys' bytes: key hashed and compared, the next one copied.
func MapNextKey(m *Machine, r1, r2, r3, _, _ uint64) (uint64, error) {
	mp, err := m.Map(r1)
	if err != nil {
		return 0, err
	}
	ks := uint64(mp.Spec().KeySize)
	var key []byte
	if r2 != 0 {
		if key, err = m.Bytes(r2, ks); err != nil {
			return 0, fmt.Errorf("key: %w", err)
		}
	}
	next, err := m.WritableBytes(r3, ks)
	if err != nil {
		return 0, fmt.Errorf("next key: %w", err)
	}
	if err := m.Charge(1 + int64(2*len(key)+len(next))/BytesPerUnit); err != nil {
		return 0, err
	}
	if err := mp.NextKey(key, next); err != nil {
		return negErrno(2), nil
	}
	return 0, nil
}

// tracePrintk formats like the kernel's bpf_trace_printk: at most three
// arguments, the format checked at the call (see format); a format the
// kernel refuses, or one without a NUL in its fmt_size bytes, is -EINVAL.
// It returns the length of the text, without the newline it may add,
// and writes at most 1023 bytes of it, as the kernel traces.
func tracePrintk(m *Machine, r1, r2, r3, r4, r5 uint64) (uint64, error) {
	f, err := m.Bytes(r1, r2)
	if err != nil {
		return 0, fmt.Errorf("format: %w", err)
	}
	i := bytes.IndexByte(f, 0)
	if i < 0 {
		return negErrno(22), nil
	}
	f = f[:i]
	args := [3]uint64{r3, r4, r5}
	out, err := m.format(m.scratch[:0], f, args[:])
	m.scratch = out[:0]
	if errors.Is(err, ErrFormat) {
		return negErrno(22), nil
	}
	if err != nil {
		return 0, err
	}
	if err := m.ChargeText(len(f) + len(out)); err != nil {
		return 0, err
	}
	// The kernel formats into a buffer of MAX_BPRINTF_BUF (1024) bytes and
	// traces what fits with its NUL, returning the whole text's length.
	// Its trace output shows each call as a line of its own.
	n := len(out)
	out = out[:min(n, 1023)]
	if len(out) == 0 || out[len(out)-1] != '\n' {
		out = append(out, '\n')
		m.scratch = out[:0]
	}
	m.Unlocked(func() { _, err = m.Output().Write(out) })
	if err != nil {
		return 0, fmt.Errorf("output: %w", err)
	}
	return uint64(n), nil
}

// snprintfHelper is bpf_snprintf(str, str_size, fmt, data, data_len): the
// arguments are an array of u64. It returns the length including the NUL,
// or -EINVAL for a data_len the kernel refuses. The kernel's verifier
// checks the format, a constant, at load, and so does Load where it finds
// the constant (see checkSnprintf); a format it did not find and the
// kernel would refuse fails the run.
func snprintfHelper(m *Machine, r1, r2, r3, r4, r5 uint64) (uint64, error) {
	f, err := m.CBytes(r3, 1<<16)
	if err != nil {
		return 0, fmt.Errorf("format: %w", err)
	}
	if r5%8 != 0 || r5 > 8*maxFormatArgs || r5 > 0 && r4 == 0 {
		return negErrno(22), nil
	}
	raw, err := m.Bytes(r4, r5)
	if err != nil && r5 > 0 {
		return 0, fmt.Errorf("data: %w", err)
	}
	var args [maxFormatArgs]uint64
	for i := range r5 / 8 {
		args[i] = binary.LittleEndian.Uint64(raw[i*8:])
	}
	out, err := m.format(m.scratch[:0], f, args[:r5/8])
	m.scratch = out[:0]
	if err != nil {
		return 0, fmt.Errorf("format %q: %w", f, err)
	}
	if err := m.ChargeText(len(f) + len(out)); err != nil {
		return 0, err
	}
	if r2 > 0 {
		dst, err := m.WritableBytes(r1, r2)
		if err != nil {
			return 0, fmt.Errorf("str: %w", err)
		}
		n := copy(dst[:len(dst)-1], out)
		dst[n] = 0
	}
	return uint64(len(out)) + 1, nil
}

// strncmpHelper is bpf_strncmp(s1, s1_sz, s2): strncmp(s1, s2, s1_sz),
// which is -1, 0 or 1 as the kernel's strncmp returns (the bytes compare
// unsigned), not the difference of the bytes. It charges the bytes of s2
// it scans for the NUL and those it compares.
func strncmpHelper(m *Machine, r1, r2, r3, _, _ uint64) (uint64, error) {
	s1, err := m.Bytes(r1, r2)
	if err != nil {
		return 0, fmt.Errorf("s1: %w", err)
	}
	s2, err := m.CBytes(r3, 1<<16)
	if err != nil {
		return 0, fmt.Errorf("s2: %w", err)
	}
	// s2 holds no NUL, so the strings agree up to their common prefix, and
	// the comparison ends there or one byte later.
	i := commonPrefix(s1, s2)
	if err := m.ChargeBytes(len(s2) + i); err != nil {
		return 0, err
	}
	if i == len(s1) {
		return 0, nil
	}
	var c2 byte
	if i < len(s2) {
		c2 = s2[i]
	}
	switch {
	case s1[i] < c2:
		return ^uint64(0), nil
	case s1[i] > c2:
		return 1, nil
	}
	return 0, nil // both strings end at i
}

// commonPrefix returns the length of the common prefix of a and b,
// comparing eight bytes at a time.
func commonPrefix(a, b []byte) int {
	n := min(len(a), len(b))
	i := 0
	for ; i+8 <= n; i += 8 {
		if x := binary.LittleEndian.Uint64(a[i:]) ^ binary.LittleEndian.Uint64(b[i:]); x != 0 {
			return i + bits.TrailingZeros64(x)/8
		}
	}
	for i < n && a[i] == b[i] {
		i++
	}
	return i
}
