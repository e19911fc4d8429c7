package runtime

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"unsafe"
)

// Fixed region indices. Region 0 stays unmapped so that NULL faults.
const (
	regionContext     = 1
	regionStack       = 2 // frames 0..MaxFrames-1 follow
	firstStaticRegion = regionStack + MaxFrames

	// MaxFrames is the deepest bpf-to-bpf call chain, entry function included.
	MaxFrames = 8
	// StackSize is the stack of each frame in bytes.
	StackSize = 512

	// maxRegionSize keeps every offset below 2 GiB, so that a negative
	// offset added to an address borrows into the region bits and lands in
	// an offset no region has, instead of in the neighbouring region.
	maxRegionSize = 1 << 31
	// maxDynamicRegions bounds the regions one run may create (map lookups,
	// ring buffer reservations).
	maxDynamicRegions = 1 << 20
	// maxKeptRegions bounds the hash map values a Machine keeps mapped
	// from run to run (see Memory.nkept): about 95 bytes of tables each.
	maxKeptRegions = 1 << 14
)

// Address tags for values that are not memory: map handles and function
// addresses. Their region indices are far beyond any region table, so
// dereferencing one faults.
const (
	tagMap  = 0x8000_0000
	tagFunc = 0xc000_0000
)

// Addr builds a tagged address from a region index and an offset.
func Addr(region uint32, off uint32) uint64 { return uint64(region)<<32 | uint64(off) }

// Memory is the address space of one run: a table of byte regions indexed
// by the upper 32 bits of an address. Reads go through rd, writes through
// wr; a read-only region has a nil entry in wr, so a store to it fails the
// same bounds check as an out-of-range store and costs nothing extra.
type Memory struct {
	rd      [][]byte
	wr      [][]byte
	names   []string
	nstatic int
	// Regions from nstatic to nkept map values of the program's hash maps
	// and stay from run to run: a value's buffer belongs to its slot for
	// the map's life (see hashMap), so a lookup of the same slot in a later
	// run finds its region mapped (mapValues.kept) instead of adding one.
	// Only the regions after nkept are the run's own.
	nkept int
	// own is, for the static and kept regions (below nkept), the
	// writable buffer of each that nothing but this run can write while
	// the run executes its instructions, else nil: the values of the
	// program's SharedMaps, whose locks every run holds from its start
	// to its end and Go code holds around each access (see SharedMap).
	// Atomic instructions on them need no locked instruction (see
	// owned). Regions a run adds are never in it; neither is the stack,
	// which the atomics treat on their own (isStack). It ends at its last
	// own region, and is nil when there is none.
	own [][]byte
	// seen remembers, by buffer address, regions this run created, so
	// that looking up the same map values again and again (a counting
	// loop) reuses their regions instead of growing the table. An entry
	// counts only if its run number is run and the region still maps
	// exactly that buffer under that name.
	// It sits behind a pointer, made on first use, to keep Memory small.
	seen *[regionCacheSize]seenRegion
	run  uint32
}

const (
	regionCacheBits = 7
	regionCacheSize = 1 << regionCacheBits
)

type seenRegion struct {
	buf    uintptr // an address only: the cache must not keep buffers alive
	name   uintptr // the name's bytes: names built once compare by address
	region uint32
	run    uint32 // run number << 1 | writable
}

// Read8 .. Read64 are the checked loads of the interpreter: ok is false when
// [addr, addr+size) is not inside one region.
func (m *Memory) Read8(addr uint64) (uint64, bool) {
	i, o := addr>>32, addr&0xffffffff
	if i < uint64(len(m.rd)) && o < uint64(len(m.rd[i])) {
		return uint64(m.rd[i][o]), true
	}
	return 0, false
}

func (m *Memory) Read16(addr uint64) (uint64, bool) {
	i, o := addr>>32, addr&0xffffffff
	if i < uint64(len(m.rd)) && o+2 <= uint64(len(m.rd[i])) {
		return uint64(binary.LittleEndian.Uint16(m.rd[i][o : o+2 : o+2])), true
	}
	return 0, false
}

func (m *Memory) Read32(addr uint64) (uint64, bool) {
	i, o := addr>>32, addr&0xffffffff
	if i < uint64(len(m.rd)) && o+4 <= uint64(len(m.rd[i])) {
		return uint64(binary.LittleEndian.Uint32(m.rd[i][o : o+4 : o+4])), true
	}
	return 0, false
}

func (m *Memory) Read64(addr uint64) (uint64, bool) {
	i, o := addr>>32, addr&0xffffffff
	if i < uint64(len(m.rd)) && o+8 <= uint64(len(m.rd[i])) {
		return binary.LittleEndian.Uint64(m.rd[i][o : o+8 : o+8]), true
	}
	return 0, false
}

// Write8 .. Write64 are the checked stores; ok is false when the range is not
// inside one writable region.
func (m *Memory) Write8(addr, v uint64) bool {
	i, o := addr>>32, addr&0xffffffff
	if i < uint64(len(m.wr)) && o < uint64(len(m.wr[i])) {
		m.wr[i][o] = byte(v)
		return true
	}
	return false
}

func (m *Memory) Write16(addr, v uint64) bool {
	i, o := addr>>32, addr&0xffffffff
	if i < uint64(len(m.wr)) && o+2 <= uint64(len(m.wr[i])) {
		binary.LittleEndian.PutUint16(m.wr[i][o:o+2:o+2], uint16(v))
		return true
	}
	return false
}

func (m *Memory) Write32(addr, v uint64) bool {
	i, o := addr>>32, addr&0xffffffff
	if i < uint64(len(m.wr)) && o+4 <= uint64(len(m.wr[i])) {
		binary.LittleEndian.PutUint32(m.wr[i][o:o+4:o+4], uint32(v))
		return true
	}
	return false
}

func (m *Memory) Write64(addr, v uint64) bool {
	i, o := addr>>32, addr&0xffffffff
	if i < uint64(len(m.wr)) && o+8 <= uint64(len(m.wr[i])) {
		binary.LittleEndian.PutUint64(m.wr[i][o:o+8:o+8], v)
		return true
	}
	return false
}

// Fault describes a failed access of size bytes at addr. An offset with the
// top bit set is read as a step below the start of the next region, which
// is how a negative offset from a region's base shows up in a tagged address.
func (m *Memory) Fault(addr, size uint64, write bool, insn int) *MemoryError {
	i, o := addr>>32, int64(addr&0xffffffff)
	if o >= maxRegionSize {
		// The region index wraps too: NULL minus a little is NULL-n.
		i = (i + 1) & 0xffffffff
		o -= 1 << 32
	}
	e := &MemoryError{Region: m.RegionName(i), Offset: o, Size: size, Insn: insn, Write: write, Addr: addr}
	if write && i < uint64(len(m.rd)) && m.wr[i] == nil && o >= 0 && uint64(o)+size <= uint64(len(m.rd[i])) {
		e.Region += " (read-only)"
	}
	return e
}

// RegionName names the region with index i for error messages.
func (m *Memory) RegionName(i uint64) string {
	switch {
	case i == 0:
		return "NULL"
	case i < uint64(len(m.names)):
		return m.names[i]
	case i >= tagFunc:
		return "function address"
	case i >= tagMap:
		return "map handle"
	}
	return fmt.Sprintf("unmapped region %d", i)
}

// Bytes returns the n bytes at addr for reading; the slice aliases guest
// memory and is valid until the run ends.
func (m *Memory) Bytes(addr, n uint64) ([]byte, error) {
	i, o := addr>>32, addr&0xffffffff
	if i < uint64(len(m.rd)) && n <= maxRegionSize && o+n <= uint64(len(m.rd[i])) {
		return m.rd[i][o : o+n : o+n], nil
	}
	return nil, m.Fault(addr, n, false, -1)
}

// WritableBytes is Bytes for a range the caller will write.
func (m *Memory) WritableBytes(addr, n uint64) ([]byte, error) {
	i, o := addr>>32, addr&0xffffffff
	if i < uint64(len(m.wr)) && n <= maxRegionSize && o+n <= uint64(len(m.wr[i])) {
		return m.wr[i][o : o+n : o+n], nil
	}
	return nil, m.Fault(addr, n, true, -1)
}

// CBytes returns the NUL-terminated string at addr without its NUL, looking
// at most max bytes ahead. A string that runs off its region or is longer
// than max is an error.
func (m *Memory) CBytes(addr, max uint64) ([]byte, error) {
	i, o := addr>>32, addr&0xffffffff
	if i >= uint64(len(m.rd)) || o >= uint64(len(m.rd[i])) {
		return nil, m.Fault(addr, 1, false, -1)
	}
	b := m.rd[i][o:]
	if uint64(len(b)) > max {
		b = b[:max]
	}
	if n := bytes.IndexByte(b, 0); n >= 0 {
		return b[:n:n], nil
	}
	return nil, fmt.Errorf("string at %s%+d: no NUL within %d bytes", m.RegionName(i), o, len(b))
}

// CString is CBytes as a Go string.
func (m *Memory) CString(addr, max uint64) (string, error) {
	b, err := m.CBytes(addr, max)
	return string(b), err
}

// errTooManyRegions stops a run that creates regions without bound.
var errTooManyRegions = errors.New("too many memory regions in one run")

// AddRegion maps buf as a new region until the run ends and returns its
// address. Helpers use it for memory they hand to the program.
func (m *Memory) AddRegion(name string, buf []byte, writable bool) (uint64, error) {
	var c *seenRegion
	if len(buf) > 0 {
		p := uintptr(unsafe.Pointer(&buf[0]))
		if m.seen == nil {
			m.seen = new([regionCacheSize]seenRegion)
		}
		c = &m.seen[uint64(p)*0x9e3779b97f4a7c15>>(64-regionCacheBits)]
		// Only AddRegion fills the entry and only reset (which changes
		// run) or a ring buffer submit (which empties the region) drop
		// regions, so a matching entry whose region still has the
		// buffer's length is that very mapping. The cache is small so
		// that it stays in the first-level cache next to the maps.
		if i := c.region; c.buf == p && c.run == m.run<<1|b2u(writable) &&
			c.name == uintptr(unsafe.Pointer(unsafe.StringData(name))) && uint64(i) < uint64(len(m.rd)) && len(m.rd[i]) == len(buf) {
			return Addr(i, 0), nil
		}
	}
	return m.addRegion(name, buf, writable, c)
}

func (m *Memory) addRegion(name string, buf []byte, writable bool, c *seenRegion) (uint64, error) {
	if len(m.rd)-m.nkept >= maxDynamicRegions {
		return 0, errTooManyRegions
	}
	if uint64(len(buf)) >= maxRegionSize {
		return 0, fmt.Errorf("region %s: %d bytes is too large", name, len(buf))
	}
	m.rd = append(m.rd, buf)
	if writable {
		m.wr = append(m.wr, buf)
	} else {
		m.wr = append(m.wr, nil)
	}
	m.names = append(m.names, name)
	i := uint32(len(m.rd) - 1)
	if c != nil {
		*c = seenRegion{
			buf:    uintptr(unsafe.Pointer(&buf[0])),
			name:   uintptr(unsafe.Pointer(unsafe.StringData(name))),
			region: i,
			run:    m.run<<1 | b2u(writable),
		}
	}
	return Addr(i, 0), nil
}

// maps reports whether region r is one this run created, or a kept one,
// for exactly buf, writable. The name is not compared: only a helper mapping the same
// buffer under another name could differ, and then faults would name that
// region; reading the names table on every lookup costs more.
func (m *Memory) maps(r uint32, buf []byte) bool {
	if int(r) < m.nstatic || int(r) >= len(m.wr) {
		return false
	}
	w := m.wr[r]
	return len(w) == len(buf) && len(w) > 0 && &w[0] == &buf[0]
}

// reset drops the regions the last run created but the kept ones, keeping the capacity, and
// starts a new run number so that the region cache forgets them.
func (m *Memory) reset() {
	if len(m.rd) == m.nkept {
		return
	}
	for i := m.nkept; i < len(m.rd); i++ {
		m.rd[i], m.wr[i] = nil, nil
	}
	m.rd, m.wr, m.names = m.rd[:m.nkept], m.wr[:m.nkept], m.names[:m.nkept]
	m.run++
	if m.run == 1<<31 {
		// After 2^31 runs a stale entry could carry the current number.
		m.run = 0
		m.seen = nil
	}
}

func b2u(b bool) uint32 {
	if b {
		return 1
	}
	return 0
}
