//go:build 386 || amd64 || arm || arm64 || loong64 || mips64le || mipsle || ppc64le || riscv64 || wasm

package runtime

import "sync/atomic"

// The atomic operations of BPF_ATOMIC on a little-endian host, where a
// cell's bytes are the host's own value (see atomic.go). Add64 .. Swap32
// are what translated code calls; they inline to the sync/atomic
// operation. The Fetch forms return the old value, the others nothing, so
// that the compiler can use the processor's instruction that discards it.

func Add64(p *uint64, v uint64)             { atomic.AddUint64(p, v) }
func FetchAdd64(p *uint64, v uint64) uint64 { return atomic.AddUint64(p, v) - v }
func Or64(p *uint64, v uint64)              { atomic.OrUint64(p, v) }
func FetchOr64(p *uint64, v uint64) uint64  { return atomic.OrUint64(p, v) }
func And64(p *uint64, v uint64)             { atomic.AndUint64(p, v) }
func FetchAnd64(p *uint64, v uint64) uint64 { return atomic.AndUint64(p, v) }
func Swap64(p *uint64, v uint64) uint64     { return atomic.SwapUint64(p, v) }
func Add32(p *uint32, v uint32)             { atomic.AddUint32(p, v) }
func FetchAdd32(p *uint32, v uint32) uint32 { return atomic.AddUint32(p, v) - v }
func Or32(p *uint32, v uint32)              { atomic.OrUint32(p, v) }
func FetchOr32(p *uint32, v uint32) uint32  { return atomic.OrUint32(p, v) }
func And32(p *uint32, v uint32)             { atomic.AndUint32(p, v) }
func FetchAnd32(p *uint32, v uint32) uint32 { return atomic.AndUint32(p, v) }
func Swap32(p *uint32, v uint32) uint32     { return atomic.SwapUint32(p, v) }
func load64(p *uint64) uint64               { return atomic.LoadUint64(p) }
func load32(p *uint32) uint32               { return atomic.LoadUint32(p) }
func cas64(p *uint64, old, v uint64) bool   { return atomic.CompareAndSwapUint64(p, old, v) }
func cas32(p *uint32, old, v uint32) bool   { return atomic.CompareAndSwapUint32(p, old, v) }

// PlainAdd64 and PlainAdd32 add v to the cell *p without a locked
// instruction and return the old value, for cells only the run can write
// (Memory.owned).
func PlainAdd64(p *uint64, v uint64) uint64 { old := *p; *p = old + v; return old }
func PlainAdd32(p *uint32, v uint32) uint32 { old := *p; *p = old + v; return old }
