package runtime

import (
	"encoding/binary"
	"unsafe"
)

// BPF_ATOMIC instructions are atomic against every other writer of their
// memory: other runs, Go code, and kernel programs on other CPUs writing
// memory mapped from a kernel map. Both engines therefore run them as
// sync/atomic operations on the cell (atomic_le.go, atomic_be.go), except
// on memory no other writer can reach while the run executes: the stack
// frames, and the values of the program's SharedMaps, whose locks the run
// holds (Memory.own). There a plain read-modify-write does.
//
// A cell must be aligned to its width, both as an offset in its region (the
// kernel's verifier refuses a misaligned atomic) and in host memory (where
// sync/atomic needs it). The regions the runtime makes are aligned; a
// context passed to Run must be too, or its atomics fault.
//
// Memory holds little-endian values whatever the host. On a little-endian
// host the operations are the processor's own; on a big-endian host each is
// a compare-and-swap loop on the byte-swapped value, still atomic against
// other users of the same sync/atomic operations, and against writers that
// store little-endian values.

// Atomic32At and Atomic64At return the cell an atomic instruction at insn
// reads and modifies, for translated code. An access outside a writable
// region or a misaligned one ends the run with a *MemoryError.
func (m *Memory) Atomic32At(addr uint64, insn int) *uint32 {
	if p := m.cell32(addr); p != nil {
		return p
	}
	panic(cellFault{addr, int32(insn), 4, true})
}

func (m *Memory) Atomic64At(addr uint64, insn int) *uint64 {
	if p := m.cell64(addr); p != nil {
		return p
	}
	panic(cellFault{addr, int32(insn), 8, true})
}

// cell32 and cell64 are Atomic32At and Atomic64At returning nil where
// those fault, for the interpreter.
func (m *Memory) cell32(addr uint64) *uint32 {
	i, o := addr>>32, addr&0xffffffff
	if i < uint64(len(m.wr)) && o+4 <= uint64(len(m.wr[i])) {
		p := unsafe.Add(unsafe.Pointer(unsafe.SliceData(m.wr[i])), o)
		if (uintptr(p)|uintptr(o))&3 == 0 {
			return (*uint32)(p)
		}
	}
	return nil
}

func (m *Memory) cell64(addr uint64) *uint64 {
	i, o := addr>>32, addr&0xffffffff
	if i < uint64(len(m.wr)) && o+8 <= uint64(len(m.wr[i])) {
		p := unsafe.Add(unsafe.Pointer(unsafe.SliceData(m.wr[i])), o)
		if (uintptr(p)|uintptr(o))&7 == 0 {
			return (*uint64)(p)
		}
	}
	return nil
}

// owned returns the cell of size bytes at addr when it lies in a region
// the run holds alone (Memory.own) and is aligned to its width, else nil:
// then cell32, cell64 or cell decide, and fault where they must. The own
// regions start 8-byte aligned in host memory (ownable), so the offset's
// alignment is the cell's.
func (m *Memory) owned(addr, size uint64) unsafe.Pointer {
	i, o := addr>>32, addr&0xffffffff
	if i < uint64(len(m.own)) && o+size <= uint64(len(m.own[i])) && o&(size-1) == 0 {
		return unsafe.Add(unsafe.Pointer(unsafe.SliceData(m.own[i])), o)
	}
	return nil
}

// ownable returns buf for Memory.own when its host address is 8-byte
// aligned (the runtime's maps allocate values so), else nil.
func ownable(buf []byte) []byte {
	if len(buf) == 0 || uintptr(unsafe.Pointer(unsafe.SliceData(buf)))&7 != 0 {
		return nil
	}
	return buf
}

// Owned64 and Owned32 return the cell an atomic add of translated code
// at addr may change with PlainAdd64 or PlainAdd32, without a locked
// instruction: one that only the run can write (Memory.own), as counters
// in the program's own maps are. They return nil for every other cell,
// which the add then gets from Atomic64At or Atomic32At.
func (m *Memory) Owned64(addr uint64) *uint64 { return (*uint64)(m.owned(addr, 8)) }
func (m *Memory) Owned32(addr uint64) *uint32 { return (*uint32)(m.owned(addr, 4)) }

// cellFault is the panic value of Atomic32At and Atomic64At.
type cellFault fault

// cell is the interpreter's form of Atomic32At and Atomic64At: the size
// bytes at addr, or ok false.
func (m *Memory) cell(addr, size uint64) (b []byte, ok bool) {
	i, o := addr>>32, addr&0xffffffff
	if i < uint64(len(m.wr)) && o+size <= uint64(len(m.wr[i])) {
		b = m.wr[i][o : o+size : o+size]
		if (uint64(uintptr(unsafe.Pointer(&b[0])))|o)&(size-1) == 0 {
			return b, true
		}
	}
	return nil, false
}

// atomicFault is the error of a write by an atomic instruction that
// Atomic32At, Atomic64At or cell refused: a *MemoryError, marked
// Misaligned when the cell lies inside a writable region.
func (m *Memory) atomicFault(addr, size uint64, insn int) *MemoryError {
	e := m.Fault(addr, size, true, insn)
	i, o := addr>>32, addr&0xffffffff
	e.Misaligned = i < uint64(len(m.wr)) && o+size <= uint64(len(m.wr[i]))
	return e
}

// isStack reports whether addr lies in a stack frame's region, which only
// the run itself can reach.
func isStack(addr uint64) bool { return addr>>32-regionStack < MaxFrames }

// atomic executes the STX|ATOMIC instruction at index pc.
func (m *Machine) atomic(pc int) error {
	in, r := at(m.base, pc), &m.regs
	addr := r[in.dst] + uint64(in.off)
	size := uint64(8)
	if in.op == OpAtomicW {
		size = 4
	}
	// Adds of 8 bytes, the common atomic, first: a plain read-modify-write
	// on a cell only the run can write, else a locked one (stack cells
	// included: the operation is atomic there too, only not needed).
	if in.op == OpAtomicDW && in.imm&^atomicFETCH == atomicADD {
		if p := m.owned(addr, 8); p != nil {
			if old := PlainAdd64((*uint64)(p), r[in.src]); in.imm != atomicADD {
				r[in.src] = old
			}
			return nil
		}
		if p := m.cell64(addr); p != nil {
			if old := FetchAdd64(p, r[in.src]); in.imm != atomicADD {
				r[in.src] = old
			}
			return nil
		}
	}
	b, ok := m.cell(addr, size)
	if !ok {
		return m.atomicFault(addr, size, pc)
	}
	src, cmp := r[in.src], r[0]
	var old uint64
	switch {
	case isStack(addr) || m.owned(addr, size) != nil:
		old = plainAtomic(b, in.imm, src, cmp)
	case size == 8:
		old = atomic64((*uint64)(unsafe.Pointer(&b[0])), in.imm, src, cmp)
	default:
		old = uint64(atomic32((*uint32)(unsafe.Pointer(&b[0])), in.imm, uint32(src), uint32(cmp)))
	}
	switch {
	case in.imm == atomicCMPXCHG:
		r[0] = old
	case in.imm&atomicFETCH != 0:
		r[in.src] = old
	}
	return nil
}

// plainAtomic runs atomic operation op on the little-endian cell b (4 or 8
// bytes) as a plain read-modify-write and returns the old value,
// zero-extended. cmp is r0, which cmpxchg compares with the cell.
func plainAtomic(b []byte, op int64, src, cmp uint64) uint64 {
	var old uint64
	if len(b) == 4 {
		old, cmp = uint64(binary.LittleEndian.Uint32(b)), uint64(uint32(cmp))
	} else {
		old = binary.LittleEndian.Uint64(b)
	}
	val := old
	switch op &^ atomicFETCH {
	case atomicADD:
		val += src
	case atomicOR:
		val |= src
	case atomicAND:
		val &= src
	case atomicXOR:
		val ^= src
	case atomicXCHG &^ atomicFETCH:
		val = src
	case atomicCMPXCHG &^ atomicFETCH:
		if old == cmp {
			val = src
		}
	}
	if len(b) == 4 {
		PutLE32(b, val)
	} else {
		PutLE64(b, val)
	}
	return old
}

// atomic64 and atomic32 run atomic operation op on *p and return the old
// value (0 for the operations that do not fetch it).
func atomic64(p *uint64, op int64, src, cmp uint64) uint64 {
	switch op {
	case atomicADD:
		Add64(p, src)
	case atomicADD | atomicFETCH:
		return FetchAdd64(p, src)
	case atomicOR:
		Or64(p, src)
	case atomicOR | atomicFETCH:
		return FetchOr64(p, src)
	case atomicAND:
		And64(p, src)
	case atomicAND | atomicFETCH:
		return FetchAnd64(p, src)
	case atomicXOR, atomicXOR | atomicFETCH:
		return FetchXor64(p, src)
	case atomicXCHG:
		return Swap64(p, src)
	case atomicCMPXCHG:
		return CmpXchg64(p, cmp, src)
	}
	return 0
}

func atomic32(p *uint32, op int64, src, cmp uint32) uint32 {
	switch op {
	case atomicADD:
		Add32(p, src)
	case atomicADD | atomicFETCH:
		return FetchAdd32(p, src)
	case atomicOR:
		Or32(p, src)
	case atomicOR | atomicFETCH:
		return FetchOr32(p, src)
	case atomicAND:
		And32(p, src)
	case atomicAND | atomicFETCH:
		return FetchAnd32(p, src)
	case atomicXOR, atomicXOR | atomicFETCH:
		return FetchXor32(p, src)
	case atomicXCHG:
		return Swap32(p, src)
	case atomicCMPXCHG:
		return CmpXchg32(p, cmp, src)
	}
	return 0
}

// FetchXor64 and FetchXor32 xor v into *p and return the old value;
// Xor64 and Xor32 do the same without it. sync/atomic has no xor.
func FetchXor64(p *uint64, v uint64) uint64 {
	for {
		old := load64(p)
		if cas64(p, old, old^v) {
			return old
		}
	}
}

func FetchXor32(p *uint32, v uint32) uint32 {
	for {
		old := load32(p)
		if cas32(p, old, old^v) {
			return old
		}
	}
}

func Xor64(p *uint64, v uint64) { FetchXor64(p, v) }

func Xor32(p *uint32, v uint32) { FetchXor32(p, v) }

// CmpXchg64 and CmpXchg32 store v in *p if it holds cmp and return the old
// value in either case, as BPF_CMPXCHG does.
func CmpXchg64(p *uint64, cmp, v uint64) uint64 {
	for {
		old := load64(p)
		if old != cmp || cas64(p, old, v) {
			return old
		}
	}
}

func CmpXchg32(p *uint32, cmp, v uint32) uint32 {
	for {
		old := load32(p)
		if old != cmp || cas32(p, old, v) {
			return old
		}
	}
}
