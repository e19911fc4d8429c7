//go:build !(386 || amd64 || arm || arm64 || loong64 || mips64le || mipsle || ppc64le || riscv64 || wasm)

package runtime

import (
	"math/bits"
	"sync/atomic"
)

// The atomic operations of BPF_ATOMIC on a big-endian host (see atomic.go
// and atomic_le.go): a cell holds a little-endian value, so each operation
// is a compare-and-swap loop on the byte-swapped value.

func load64(p *uint64) uint64 { return bits.ReverseBytes64(atomic.LoadUint64(p)) }
func load32(p *uint32) uint32 { return bits.ReverseBytes32(atomic.LoadUint32(p)) }

func cas64(p *uint64, old, v uint64) bool {
	return atomic.CompareAndSwapUint64(p, bits.ReverseBytes64(old), bits.ReverseBytes64(v))
}

func cas32(p *uint32, old, v uint32) bool {
	return atomic.CompareAndSwapUint32(p, bits.ReverseBytes32(old), bits.ReverseBytes32(v))
}

// update64 and update32 replace *p by f(old) atomically and return old.
func update64(p *uint64, f func(uint64) uint64) uint64 {
	for {
		old := load64(p)
		if cas64(p, old, f(old)) {
			return old
		}
	}
}

func update32(p *uint32, f func(uint32) uint32) uint32 {
	for {
		old := load32(p)
		if cas32(p, old, f(old)) {
			return old
		}
	}
}

func FetchAdd64(p *uint64, v uint64) uint64 {
	return update64(p, func(x uint64) uint64 { return x + v })
}
func FetchOr64(p *uint64, v uint64) uint64 {
	return update64(p, func(x uint64) uint64 { return x | v })
}
func FetchAnd64(p *uint64, v uint64) uint64 {
	return update64(p, func(x uint64) uint64 { return x & v })
}
func Swap64(p *uint64, v uint64) uint64 { return update64(p, func(uint64) uint64 { return v }) }
func FetchAdd32(p *uint32, v uint32) uint32 {
	return update32(p, func(x uint32) uint32 { return x + v })
}
func FetchOr32(p *uint32, v uint32) uint32 {
	return update32(p, func(x uint32) uint32 { return x | v })
}
func FetchAnd32(p *uint32, v uint32) uint32 {
	return update32(p, func(x uint32) uint32 { return x & v })
}
func Swap32(p *uint32, v uint32) uint32 { return update32(p, func(uint32) uint32 { return v }) }
func Add64(p *uint64, v uint64)         { FetchAdd64(p, v) }
func Or64(p *uint64, v uint64)          { FetchOr64(p, v) }
func And64(p *uint64, v uint64)         { FetchAnd64(p, v) }
func Add32(p *uint32, v uint32)         { FetchAdd32(p, v) }
func Or32(p *uint32, v uint32)          { FetchOr32(p, v) }
func And32(p *uint32, v uint32)         { FetchAnd32(p, v) }

// PlainAdd64 and PlainAdd32 add v to the little-endian cell *p without a
// locked instruction and return the old value (see atomic_le.go).
func PlainAdd64(p *uint64, v uint64) uint64 {
	old := bits.ReverseBytes64(*p)
	*p = bits.ReverseBytes64(old + v)
	return old
}

func PlainAdd32(p *uint32, v uint32) uint32 {
	old := bits.ReverseBytes32(*p)
	*p = bits.ReverseBytes32(old + v)
	return old
}
