// Package atomiccases lists programs that run every BPF atomic operation,
// in both widths, on a cell in each kind of memory a program reaches, with
// what the kernel's semantics leave in the cell and the registers. The
// runtime's tests run them in the interpreter; gen/aot's run them in the
// interpreter and the translation.
//
// Each program takes a context of CtxSize bytes and map 0, an array of one
// GlobalSize-byte value (a .data global). It writes the source register
// after the operation at context offset 8, r0 at 16 and the cell's 8 bytes
// at 24, and returns 0; Want is the context afterwards.
package atomiccases

import (
	"encoding/binary"
	"fmt"
	"strings"
)

const (
	CtxSize    = 64
	GlobalSize = 64
)

// Case is one program.
type Case struct {
	Name string
	Asm  string
	Want []byte // the context after the run
}

// Op is an atomic operation as the instruction's immediate names it.
type Op struct {
	Name string // as package asm writes it, without "lock" and width
	Imm  int32
}

// Ops are the atomic operations of RFC 9669.
var Ops = []Op{
	{"add", 0x00}, {"or", 0x40}, {"and", 0x50}, {"xor", 0xa0},
	{"fetch add", 0x01}, {"fetch or", 0x41}, {"fetch and", 0x51}, {"fetch xor", 0xa1},
	{"xchg", 0xe1}, {"cmpxchg", 0xf1},
}

// places are where the cell lies: the text that points r6 at it, and the
// memory operand of the cell. r9 holds the context.
var places = []struct{ name, setup, mem string }{
	{"ctx", "mov %r6, %r9\nadd %r6, 32", "[%r6]"},
	{"ctx_off", "mov %r6, %r9", "[%r6+40]"},
	{"global", "lddw %r6, value:0+16", "[%r6]"},
	{"frame", "", "[%r10-16]"},
	{"stack_ptr", "mov %r6, %r10\nadd %r6, -24", "[%r6]"},
}

const (
	initial = 0x8123_4567_89ab_cdef
	src     = 0xf0f0_0f0f_ff00_00ff
)

// Model returns what atomic operation op of width bits (32 or 64) leaves
// in an 8-byte cell holding cell, in its source register holding src and
// in r0 holding r0. A 32-bit operation works on the low four bytes and
// zero-extends what it loads; cmpxchg compares the cell with r0 and loads
// the old value into r0.
func Model(op int32, bits int, cell, src, r0 uint64) (newCell, newSrc, newR0 uint64) {
	mask := ^uint64(0)
	if bits == 32 {
		mask = 0xffff_ffff
	}
	old := cell & mask
	val := old
	switch op &^ 1 {
	case 0x00:
		val = old + src
	case 0x40:
		val = old | src
	case 0x50:
		val = old & src
	case 0xa0:
		val = old ^ src
	case 0xe0:
		val = src
	case 0xf0:
		if old == r0&mask {
			val = src
		}
	}
	newCell, newSrc, newR0 = cell&^mask|val&mask, src, r0
	switch {
	case op == 0xf1:
		newR0 = old
	case op&1 != 0:
		newSrc = old
	}
	return newCell, newSrc, newR0
}

// Cases returns a program for each operation, width and place; cmpxchg
// runs once with r0 equal to the cell (it stores) and once not. For the
// 32-bit forms r0 differs from the cell in its upper half only when it
// should still compare equal.
func Cases() []Case {
	var out []Case
	for _, p := range places {
		for _, op := range Ops {
			for _, bits := range []int{64, 32} {
				r0s := []uint64{0x1111}
				if op.Imm == 0xf1 {
					r0s = []uint64{initial, 0x1234}
					if bits == 32 {
						r0s[0] = 0xdead_beef_0000_0000 | initial&0xffff_ffff
					}
				}
				for k, r0 := range r0s {
					out = append(out, build(p.name, p.setup, p.mem, op, bits, r0, k))
				}
			}
		}
	}
	return out
}

func build(place, setup, mem string, op Op, bits int, r0 uint64, k int) Case {
	width := ""
	if bits == 32 {
		width = "32"
	}
	asm := fmt.Sprintf(`mov %%r9, %%r1
%s
lddw %%r2, %#x
stxdw %s, %%r2
lddw %%r1, %#x
lddw %%r0, %#x
lock %s%s %s, %%r1
stxdw [%%r9+8], %%r1
stxdw [%%r9+16], %%r0
ldxdw %%r2, %s
stxdw [%%r9+24], %%r2
mov %%r0, 0
exit
`, setup, uint64(initial), mem, uint64(src), r0, op.Name, width, mem, mem)
	cell, s, r := Model(op.Imm, bits, initial, src, r0)
	want := make([]byte, CtxSize)
	binary.LittleEndian.PutUint64(want[8:], s)
	binary.LittleEndian.PutUint64(want[16:], r)
	binary.LittleEndian.PutUint64(want[24:], cell)
	switch place {
	case "ctx":
		binary.LittleEndian.PutUint64(want[32:], cell)
	case "ctx_off":
		binary.LittleEndian.PutUint64(want[40:], cell)
	}
	name := fmt.Sprintf("%s_%s%s", place, strings.ReplaceAll(op.Name, " ", "_"), width)
	if op.Imm == 0xf1 {
		name += []string{"_equal", "_differ"}[k]
	}
	return Case{Name: name, Asm: asm, Want: want}
}
