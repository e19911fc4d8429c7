// Package workloads holds the benchmark programs of skelgen's runtime, in
// the ubpf assembly dialect, each with a plain-Go twin computing the same
// value. The interpreter's benchmarks (runtime) and the translation table
// (internal/aotbench) both run them.
package workloads

import (
	"encoding/binary"
	"fmt"
	"strings"
)

const primesAsm = `
	mov %r0, 0
	mov %r1, 2
outer:
	mov %r2, 2
inner:
	mov %r3, %r2
	mul %r3, %r2
	jgt %r3, %r1, prime
	mov %r3, %r1
	mod %r3, %r2
	jeq %r3, 0, next
	add %r2, 1
	ja inner
prime:
	add %r0, 1
next:
	add %r1, 1
	jlt %r1, 10000, outer
	exit
`

func primesGo() uint64 {
	count := uint64(0)
	for n := uint64(2); n < 10000; n++ {
		prime := true
		for d := uint64(2); d*d <= n; d++ {
			if n%d == 0 {
				prime = false
				break
			}
		}
		if prime {
			count++
		}
	}
	return count
}

// checksumAsm sums the context as 32-bit words and folds the sum to a
// 16-bit ones' complement checksum.
const checksumAsm = `
	mov %r0, 0
	mov %r3, %r1
	add %r3, %r2
loop:
	ldxw %r4, [%r1]
	add %r0, %r4
	add %r1, 4
	jlt %r1, %r3, loop
fold:
	mov %r4, %r0
	rsh %r4, 16
	and %r0, 0xffff
	add %r0, %r4
	jgt %r0, 0xffff, fold
	xor %r0, 0xffff
	exit
`

func checksumGo(b []byte) uint64 {
	sum := uint64(0)
	for i := 0; i+4 <= len(b); i += 4 {
		sum += uint64(binary.LittleEndian.Uint32(b[i:]))
	}
	for sum > 0xffff {
		sum = sum&0xffff + sum>>16
	}
	return sum ^ 0xffff
}

// log2Asm sums floor(log2(i * golden)) for i in 1..1000 with the shift
// cascade clang emits for a 64-bit log2.
const log2Asm = `
	mov %r0, 0
	mov %r1, 1
	lddw %r5, 0x9E3779B97F4A7C15
loop:
	mov %r2, %r1
	mul %r2, %r5
	mov %r3, 0
	mov %r4, %r2
	rsh %r4, 32
	jeq %r4, 0, l16
	mov %r2, %r4
	add %r3, 32
l16:
	mov %r4, %r2
	rsh %r4, 16
	jeq %r4, 0, l8
	mov %r2, %r4
	add %r3, 16
l8:
	mov %r4, %r2
	rsh %r4, 8
	jeq %r4, 0, l4
	mov %r2, %r4
	add %r3, 8
l4:
	mov %r4, %r2
	rsh %r4, 4
	jeq %r4, 0, l2
	mov %r2, %r4
	add %r3, 4
l2:
	mov %r4, %r2
	rsh %r4, 2
	jeq %r4, 0, l1
	mov %r2, %r4
	add %r3, 2
l1:
	mov %r4, %r2
	rsh %r4, 1
	jeq %r4, 0, done
	add %r3, 1
done:
	add %r0, %r3
	add %r1, 1
	jle %r1, 1000, loop
	exit
`

func log2Go() uint64 {
	sum := uint64(0)
	for i := uint64(1); i <= 1000; i++ {
		v, r := i*0x9E3779B97F4A7C15, uint64(0)
		for _, s := range []uint64{32, 16, 8, 4, 2} {
			if v>>s != 0 {
				v >>= s
				r += s
			}
		}
		if v>>1 != 0 {
			r++
		}
		sum += r
	}
	return sum
}

// switchAsm dispatches k = (i*13) & 31 through a 32-way switch, compiled
// as clang compiles a dense switch without jump tables: a binary tree of
// comparisons.
func switchAsm() string {
	var b strings.Builder
	label := 0
	var gen func(lo, hi int)
	gen = func(lo, hi int) {
		if lo == hi {
			switch lo % 3 {
			case 0:
				fmt.Fprintf(&b, "\tadd %%r0, %d\n", lo*7+1)
			case 1:
				fmt.Fprintf(&b, "\txor %%r0, %d\n", lo*7+1)
			default:
				fmt.Fprintf(&b, "\tmul %%r0, 3\n")
			}
			b.WriteString("\tja next\n")
			return
		}
		mid := (lo + hi) / 2
		label++
		right := fmt.Sprintf("r%d", label)
		fmt.Fprintf(&b, "\tjgt %%r2, %d, %s\n", mid, right)
		gen(lo, mid)
		fmt.Fprintf(&b, "%s:\n", right)
		gen(mid+1, hi)
	}
	b.WriteString("\tmov %r0, 0\n\tmov %r1, 0\nloop:\n\tmov %r2, %r1\n\tmul %r2, 13\n\tand %r2, 31\n")
	gen(0, 31)
	b.WriteString("next:\n\tadd %r1, 1\n\tjlt %r1, 1000, loop\n\texit\n")
	return b.String()
}

func switchGo() uint64 {
	acc := uint64(0)
	for i := uint64(0); i < 1000; i++ {
		switch (i * 13) & 31 {
		case 0:
			acc += 1
		case 1:
			acc ^= 8
		case 2:
			acc *= 3
		case 3:
			acc += 22
		case 4:
			acc ^= 29
		case 5:
			acc *= 3
		case 6:
			acc += 43
		case 7:
			acc ^= 50
		case 8:
			acc *= 3
		case 9:
			acc += 64
		case 10:
			acc ^= 71
		case 11:
			acc *= 3
		case 12:
			acc += 85
		case 13:
			acc ^= 92
		case 14:
			acc *= 3
		case 15:
			acc += 106
		case 16:
			acc ^= 113
		case 17:
			acc *= 3
		case 18:
			acc += 127
		case 19:
			acc ^= 134
		case 20:
			acc *= 3
		case 21:
			acc += 148
		case 22:
			acc ^= 155
		case 23:
			acc *= 3
		case 24:
			acc += 169
		case 25:
			acc ^= 176
		case 26:
			acc *= 3
		case 27:
			acc += 190
		case 28:
			acc ^= 197
		case 29:
			acc *= 3
		case 30:
			acc += 211
		case 31:
			acc ^= 218
		}
	}
	return acc
}

const fnvAsm = `
	lddw %r0, 0xcbf29ce484222325
	lddw %r5, 0x100000001b3
	mov %r3, %r1
	add %r3, %r2
loop:
	ldxb %r4, [%r1]
	xor %r0, %r4
	mul %r0, %r5
	add %r1, 1
	jlt %r1, %r3, loop
	exit
`

func fnvGo(b []byte) uint64 {
	h := uint64(0xcbf29ce484222325)
	for _, c := range b {
		h ^= uint64(c)
		h *= 0x100000001b3
	}
	return h
}

// hashCountAsm counts (i*7) % 64 for i < 1000 in a hash map: lookup, then
// an atomic add on the live value or an insert.
const hashCountAsm = `
	mov %r6, 0
loop:
	mov %r1, %r6
	mul %r1, 7
	and %r1, 63
	stxw [%r10-4], %r1
	lddw %r1, map:0
	mov %r2, %r10
	add %r2, -4
	call 1
	jeq %r0, 0, insert
	mov %r1, 1
	lock add [%r0+0], %r1
	ja next
insert:
	stdw [%r10-16], 1
	lddw %r1, map:0
	mov %r2, %r10
	add %r2, -4
	mov %r3, %r10
	add %r3, -16
	mov %r4, 0
	call 2
next:
	add %r6, 1
	jlt %r6, 1000, loop
	mov %r0, 0
	stw [%r10-4], 7
	lddw %r1, map:0
	mov %r2, %r10
	add %r2, -4
	call 1
	jeq %r0, 0, missing
	ldxdw %r0, [%r0]
missing:
	exit
`

// hashCountGo returns the count of key 7, as the program does.
func hashCountGo(counts map[uint32]uint64) uint64 {
	for i := uint32(0); i < 1000; i++ {
		counts[(i*7)%64]++
	}
	return counts[7]
}

// atomicsAsm runs each kind of atomic 1000 times on cells of the context,
// which other goroutines or CPUs may share, and adds to a slot of its own
// stack, which nothing else can see: a plain add, a fetching add, a 32-bit
// exchange and a compare-and-exchange that succeeds.
const atomicsAsm = `
	mov %r6, %r1
	stdw [%r6+0], 0
	stdw [%r6+8], 0
	stdw [%r6+16], 0
	stdw [%r6+24], 0
	stdw [%r10-8], 0
	mov %r7, 0
	mov %r8, 0
loop:
	mov %r2, 1
	lock add [%r6], %r2
	mov %r3, %r7
	lock fetch add [%r6+8], %r3
	add %r8, %r3
	mov %r4, %r7
	lock xchg32 [%r6+16], %r4
	add %r8, %r4
	mov %r0, %r7
	mov %r5, %r7
	add %r5, 1
	lock cmpxchg [%r6+24], %r5
	add %r8, %r0
	lock add [%r10-8], %r7
	add %r7, 1
	jlt %r7, 1000, loop
	ldxdw %r0, [%r10-8]
	add %r0, %r8
	ldxdw %r1, [%r6]
	add %r0, %r1
	exit
`

func atomicsGo() uint64 {
	var add, fetch, cell, stack, acc uint64
	var xchg uint32
	for i := uint64(0); i < 1000; i++ {
		add++
		acc += fetch
		fetch += i
		acc += uint64(xchg)
		xchg = uint32(i)
		acc += cell
		if cell == i {
			cell = i + 1
		}
		stack += i
	}
	return stack + acc + add
}

func pattern(n int) []byte {
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(i*131 + i>>8)
	}
	return b
}

// Workload is one benchmark program with its plain-Go twin.
type Workload struct {
	Name string
	Asm  string
	// Ctx is the context the program runs over (nil for none).
	Ctx []byte
	// HashMap says the program takes one hash map (map:0) of 4-byte keys
	// and 8-byte values, as hashCountAsm does.
	HashMap bool
	// Buffer says the program takes a byte buffer in ubpf's convention
	// (r1 = data, r2 = length); KernelAsm is then the same program for the
	// kernel, an XDP program over a packet of the same bytes.
	Buffer    bool
	KernelAsm string
	// Want is the result of the plain-Go twin.
	Want uint64
	// Go runs the plain-Go twin once.
	Go func() uint64
}

// Workloads returns the benchmark workloads of the runtime's table.
func Workloads() []Workload {
	sum := pattern(64 << 10)
	fnv := pattern(2 << 10)
	counts := map[uint32]uint64{} // counted into across runs, as the program's map is
	return append([]Workload{
		{Name: "Primes", Asm: primesAsm, Want: primesGo(), Go: primesGo},
		{Name: "Checksum64K", Asm: checksumAsm, Ctx: sum, Want: checksumGo(sum), Go: func() uint64 { return checksumGo(sum) }},
		{Name: "Log2", Asm: log2Asm, Want: log2Go(), Go: log2Go},
		{Name: "Switch32", Asm: switchAsm(), Want: switchGo(), Go: switchGo},
		{Name: "FNV1a2K", Asm: fnvAsm, Ctx: fnv, Want: fnvGo(fnv), Go: func() uint64 { return fnvGo(fnv) }},
		{Name: "HashCount", Asm: hashCountAsm, HashMap: true, Want: hashCountGo(map[uint32]uint64{}), Go: func() uint64 { return hashCountGo(counts) }},
		{Name: "Atomics", Asm: atomicsAsm, Ctx: make([]byte, 64), Want: atomicsGo(), Go: atomicsGo},
	}, bufferWorkloads()...)
}
