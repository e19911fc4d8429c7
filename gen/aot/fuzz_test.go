package aot

import (
	"flag"
	"fmt"
	"math/rand/v2"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/skelgen/skelgen/internal/testenv"
	"github.com/skelgen/skelgen/runtime"
)

// The random programs are well-formed (they pass validation) and use the
// whole ISA: 32- and 64-bit ALU including division, sign extension and
// byte swaps, loads and stores of every size on the context, the stack
// (directly through r10 and through copies), a global and map values,
// atomics, forward and backward jumps of both widths, bpf-to-bpf calls
// (recursion included, so call depth runs out), callx of functions and
// helpers, and helpers that fail. Offsets stray out of bounds and loops
// lose their counter now and then, so every error class turns up.

// genItem is one instruction before jump and call offsets are known.
type genItem struct {
	in     runtime.Instruction
	hi     int32 // lddw: the second slot's immediate
	lddw   bool
	jumpTo int // index of the target label, or -1
	callTo int // index of the target function, or -1
	funcAt int // lddw of a function address: index of the function, or -1
}

type progGen struct {
	rnd    *rand.Rand
	items  []genItem
	labels []int // label -> item index
	funcs  []int // function -> item index of its first instruction
	nfuncs int
	fn     int // function being generated
	inLoop bool
}

const (
	genCtxSize  = 64
	genDataSize = 64 // the .data global of the fuzz setup
)

// randomProgram returns program i of the batch for seed.
func randomProgram(seed uint64, i int) aotCase {
	g := &progGen{rnd: rand.New(rand.NewPCG(seed, uint64(i)))}
	g.nfuncs = 1 + g.rnd.IntN(4)
	g.funcs = make([]int, g.nfuncs)
	for f := 0; f < g.nfuncs; f++ {
		g.fn = f
		g.funcs[f] = len(g.items)
		g.function()
	}
	mem := make([]byte, genCtxSize)
	for j := range mem {
		mem[j] = byte(g.rnd.Uint32())
	}
	return aotCase{Name: fmt.Sprintf("rand_%d_%d", seed, i), Insns: g.resolve(), Mem: mem, Setup: "fuzz", Budget: 4000}
}

func (g *progGen) emit(in runtime.Instruction) {
	g.items = append(g.items, genItem{in: in, jumpTo: -1, callTo: -1, funcAt: -1})
}

func (g *progGen) newLabel() int { g.labels = append(g.labels, -1); return len(g.labels) - 1 }

func (g *progGen) place(l int) { g.labels[l] = len(g.items) }

func (g *progGen) lddw(dst, src uint8, lo, hi int32) {
	g.items = append(g.items, genItem{in: runtime.Instruction{Opcode: runtime.OpLddw, Dst: dst, Src: src, Imm: lo}, hi: hi, lddw: true, jumpTo: -1, callTo: -1, funcAt: -1})
}

func (g *progGen) jump(in runtime.Instruction, l int) {
	g.items = append(g.items, genItem{in: in, jumpTo: l, callTo: -1, funcAt: -1})
}

// resolve lays out the slots and fills in jump, call and function offsets.
func (g *progGen) resolve() []runtime.Instruction {
	slot := make([]int, len(g.items)+1)
	for i, it := range g.items {
		slot[i+1] = slot[i] + 1
		if it.lddw {
			slot[i+1]++
		}
	}
	var out []runtime.Instruction
	for i, it := range g.items {
		in := it.in
		rel := func(target int) int32 { return int32(slot[target] - slot[i] - 1) }
		switch {
		case it.jumpTo >= 0 && in.Opcode == runtime.OpJa32:
			in.Imm = rel(g.labels[it.jumpTo])
		case it.jumpTo >= 0:
			in.Offset = int16(rel(g.labels[it.jumpTo]))
		case it.callTo >= 0:
			in.Imm = rel(g.funcs[it.callTo])
		case it.funcAt >= 0:
			in.Imm = rel(g.funcs[it.funcAt])
		}
		out = append(out, in)
		if it.lddw {
			out = append(out, runtime.Instruction{Imm: it.hi})
		}
	}
	return out
}

// Register roles: r6 keeps the context in the entry function, r8 counts
// loops, r9 computes addresses; random arithmetic writes the others (and
// r6 too in called functions, whose r6..r9 the call must restore).
func (g *progGen) dst() uint8 {
	regs := []uint8{0, 1, 2, 3, 4, 5, 7}
	if g.fn > 0 {
		regs = append(regs, 6)
	}
	return regs[g.rnd.IntN(len(regs))]
}

func (g *progGen) src() uint8 { return uint8(g.rnd.IntN(10)) }

func (g *progGen) imm() int32 {
	switch g.rnd.IntN(6) {
	case 0:
		return 0
	case 1:
		return -1
	case 2:
		return int32(g.rnd.IntN(64))
	case 3:
		return -int32(g.rnd.IntN(64))
	case 4:
		return int32(g.rnd.Uint32()) | -1<<31
	}
	return int32(g.rnd.Uint32())
}

func (g *progGen) function() {
	if g.fn == 0 {
		g.emit(runtime.Instruction{Opcode: runtime.OpMovReg, Dst: 6, Src: 1}) // mov r6, r1
	}
	n := 4 + g.rnd.IntN(20)
	pending := map[int][]int{} // statement index -> labels to place there
	end := g.newLabel()
	for s := 0; s < n; s++ {
		for _, l := range pending[s] {
			g.place(l)
		}
		g.statement(func() int {
			t := s + 1 + g.rnd.IntN(6)
			if t >= n {
				return end
			}
			l := g.newLabel()
			pending[t] = append(pending[t], l)
			return l
		})
	}
	for s, ls := range pending {
		if s >= n {
			for _, l := range ls {
				g.labels[l] = len(g.items)
			}
		}
	}
	g.place(end)
	if g.rnd.IntN(2) == 0 {
		g.emit(runtime.Instruction{Opcode: runtime.OpMovImm, Dst: 0, Imm: g.imm()})
	}
	g.emit(runtime.Instruction{Opcode: runtime.OpExit})
}

// statement emits one random construct; forward returns a label further
// on in the function.
func (g *progGen) statement(forward func() int) {
	switch k := g.rnd.IntN(100); {
	case k < 35:
		g.alu()
	case k < 55:
		g.memory()
	case k < 62:
		g.atomic()
	case k < 73:
		g.condJump(forward())
	case k < 75:
		g.tree(forward())
	case k < 77 && !g.inLoop:
		g.loop()
	case k < 80 && !g.inLoop:
		g.countedLoop()
	case k < 84:
		g.helper()
	case k < 90:
		g.call()
	case k < 93:
		g.callx()
	case k < 95:
		// A backward jump with a random condition: may loop until the
		// budget runs out.
		l := g.newLabel()
		g.labels[l] = g.funcs[g.fn] + g.rnd.IntN(len(g.items)-g.funcs[g.fn]+1)
		g.condJump(l)
	case k < 97:
		g.jump(runtime.Instruction{Opcode: runtime.OpJa}, forward())
	default:
		g.jump(runtime.Instruction{Opcode: runtime.OpJa32}, forward()) // gotol
	}
}

// tree emits a compare tree on one register, as clang lowers a switch,
// which the translation may turn into a Go switch; its leaves go on to
// out or fall into the next leaf.
func (g *progGen) tree(out int) {
	r := g.dst()
	if g.rnd.IntN(2) == 0 {
		g.emit(runtime.Instruction{Opcode: runtime.OpAndImm, Dst: r, Imm: 31})
	}
	class := runtime.Opcode(runtime.ClassJMP)
	if g.rnd.IntN(4) == 0 {
		class = runtime.Opcode(runtime.ClassJMP32)
	}
	g.treeSplit(r, class, 0, 20+g.rnd.IntN(20), out)
}

// treeSplit sends [lo, mid] and [mid+1, hi] of r's values their ways,
// through unsigned and signed tests.
func (g *progGen) treeSplit(r uint8, class runtime.Opcode, lo, hi, out int) {
	if lo == hi || (hi-lo < 3 && g.rnd.IntN(3) == 0) {
		if g.rnd.IntN(2) == 0 {
			g.alu()
		} else {
			g.memory()
		}
		if g.rnd.IntN(6) != 0 {
			g.jump(runtime.Instruction{Opcode: runtime.OpJa}, out)
		}
		return
	}
	mid := lo + g.rnd.IntN(hi-lo)
	other := g.newLabel()
	ops := []struct {
		op    runtime.Opcode
		k     int
		upper bool // the jump takes [mid+1, hi]
	}{{runtime.OpJgtImm, mid, true}, {runtime.OpJgeImm, mid + 1, true}, {runtime.OpJleImm, mid, false}, {runtime.OpJltImm, mid + 1, false},
		{runtime.OpJsgtImm, mid, true}, {runtime.OpJsgeImm, mid + 1, true}, {runtime.OpJsleImm, mid, false}, {runtime.OpJsltImm, mid + 1, false}}
	o := ops[g.rnd.IntN(len(ops))]
	g.jump(runtime.Instruction{Opcode: o.op&0xf8 | class, Dst: r, Imm: int32(o.k)}, other)
	first, second := [2]int{lo, mid}, [2]int{mid + 1, hi}
	if !o.upper {
		first, second = second, first
	}
	g.treeSplit(r, class, first[0], first[1], out)
	g.place(other)
	g.treeSplit(r, class, second[0], second[1], out)
}

func (g *progGen) alu() {
	class := runtime.Opcode(runtime.ClassALU64)
	if g.rnd.IntN(2) == 0 {
		class = 0x04
	}
	codes := []runtime.Opcode{0x00, 0x10, 0x20, 0x30, 0x40, 0x50, 0x60, 0x70, 0x80, 0x90, 0xa0, 0xb0, 0xc0, 0xd0}
	code := codes[g.rnd.IntN(len(codes))]
	in := runtime.Instruction{Dst: g.dst()}
	x := g.rnd.IntN(2) == 0
	switch code {
	case 0x80:
		x = false
	case 0xd0:
		in.Imm = []int32{16, 32, 64}[g.rnd.IntN(3)]
		if class == 0x07 {
			x = false
		}
	case 0x30, 0x90:
		if g.rnd.IntN(2) == 0 {
			in.Offset = 1 // signed
		}
	case 0xb0:
		if x && g.rnd.IntN(3) == 0 {
			in.Offset = []int16{8, 16, 32}[g.rnd.IntN(3)]
			if class == 0x04 && in.Offset == 32 {
				in.Offset = 16
			}
		}
	}
	if x {
		in.Opcode = class | 0x08 | code
		if code != 0xd0 { // be carries no source register
			in.Src = g.src()
		}
		if in.Src == 10 && !(class == 0x07 && in.Offset == 0 && (code == 0xb0 || code == 0x00 || code == 0x10)) {
			in.Src = 9
		}
	} else {
		in.Opcode = class | code
		if code != 0xd0 {
			in.Imm = g.imm()
		}
		if code == 0x80 {
			in.Imm = 0
		}
	}
	if code == 0xb0 && x && g.rnd.IntN(4) == 0 {
		g.lddw(in.Dst, 0, int32(g.rnd.Uint32()), int32(g.rnd.Uint32()))
		return
	}
	g.emit(in)
}

// base loads r9 with an address in a random region and returns the
// region's size (0 for a map value looked up at run time).
func (g *progGen) base() {
	switch g.rnd.IntN(5) {
	case 0:
		g.emit(runtime.Instruction{Opcode: runtime.OpMovReg, Dst: 9, Src: 10}) // mov r9, r10
		g.emit(runtime.Instruction{Opcode: runtime.OpAddImm, Dst: 9, Imm: -int32(16 + g.rnd.IntN(480))})
	case 1:
		if g.fn == 0 {
			g.emit(runtime.Instruction{Opcode: runtime.OpMovReg, Dst: 9, Src: 6}) // mov r9, r6 (the context)
			g.emit(runtime.Instruction{Opcode: runtime.OpAddImm, Dst: 9, Imm: 8})
		} else {
			g.lddw(9, runtime.PseudoMapIdxValue, 0, 16)
		}
	case 2:
		g.lddw(9, runtime.PseudoMapIdxValue, 0, int32(8+g.rnd.IntN(genDataSize-24)))
	case 3:
		// Indexed: r9 = (rX & 0x38) + the context or the frame pointer.
		g.emit(runtime.Instruction{Opcode: runtime.OpMovReg, Dst: 9, Src: g.src() % 8})
		g.emit(runtime.Instruction{Opcode: runtime.OpAndImm, Dst: 9, Imm: 0x38})
		if g.fn == 0 && g.rnd.IntN(2) == 0 {
			g.emit(runtime.Instruction{Opcode: runtime.OpAddReg, Dst: 9, Src: 6})
			g.emit(runtime.Instruction{Opcode: runtime.OpAddImm, Dst: 9, Imm: 8})
		} else {
			g.emit(runtime.Instruction{Opcode: runtime.OpAddReg, Dst: 9, Src: 10})
			g.emit(runtime.Instruction{Opcode: runtime.OpAddImm, Dst: 9, Imm: -64})
		}
	default:
		g.lddw(9, runtime.PseudoMapIdxValue, 0, 0)
		g.emit(runtime.Instruction{Opcode: runtime.OpAddImm, Dst: 9, Imm: int32(8 + g.rnd.IntN(genDataSize-16))})
	}
}

func (g *progGen) offset() int16 {
	if g.rnd.IntN(12) == 0 {
		return int16(g.rnd.IntN(200) - 100)
	}
	return int16(g.rnd.IntN(16) - 8)
}

func (g *progGen) memory() {
	base, off := uint8(9), g.offset()
	if g.rnd.IntN(3) == 0 {
		// r10-relative: most inside the frame, some not.
		base, off = 10, -int16(g.rnd.IntN(72))
		if g.rnd.IntN(10) == 0 {
			off = int16(g.rnd.IntN(1100) - 1000)
		}
	} else {
		g.base()
		if g.rnd.IntN(3) == 0 {
			// A run of accesses through r9 at constant offsets, as a
			// header's fields are read (the translation checks their
			// span once), with arithmetic between, which may write r9.
			for n := 2 + g.rnd.IntN(4); n > 0; n-- {
				g.access(base, g.offset())
				if g.rnd.IntN(2) == 0 {
					g.alu()
				}
			}
			return
		}
	}
	g.access(base, off)
}

// access emits a random load or store at base+off.
func (g *progGen) access(base uint8, off int16) {
	sizes := []runtime.Opcode{0x00, 0x08, 0x10, 0x18}
	g.accessSized(base, off, sizes[g.rnd.IntN(4)])
}

// accessSized loads or stores through base at off, of the size of size
// (a load or store opcode's size bits).
func (g *progGen) accessSized(base uint8, off int16, size runtime.Opcode) {
	switch g.rnd.IntN(4) {
	case 0, 1:
		op := runtime.OpLdxw | size
		if size != 0x18 && g.rnd.IntN(3) == 0 {
			op = 0x81 | size // sign-extending load
		}
		g.emit(runtime.Instruction{Opcode: op, Dst: g.dst(), Src: base, Offset: off})
	case 2:
		g.emit(runtime.Instruction{Opcode: runtime.OpStxw | size, Dst: base, Src: g.src(), Offset: off})
	default:
		g.emit(runtime.Instruction{Opcode: runtime.OpStw | size, Dst: base, Offset: off, Imm: g.imm()})
	}
}

func (g *progGen) atomic() {
	g.base()
	// Most bases are aligned for the atomic, as the kernel's verifier
	// demands; the others test the fault. The choice takes nothing from
	// the random stream, which the rest of the program depends on.
	if len(g.items)%4 != 0 {
		g.emit(runtime.Instruction{Opcode: runtime.OpAndImm, Dst: 9, Imm: -8})
	}
	op := []int32{0x00, 0x40, 0x50, 0xa0, 0x01, 0x41, 0x51, 0xa1, 0xe1, 0xf1}[g.rnd.IntN(10)]
	width := runtime.OpAtomicDW
	if g.rnd.IntN(2) == 0 {
		width = 0xc3
	}
	src := g.dst()
	g.emit(runtime.Instruction{Opcode: width, Dst: 9, Src: src, Offset: g.offset() &^ 7, Imm: op})
}

func (g *progGen) condJump(l int) {
	codes := []runtime.Opcode{0x10, 0x20, 0x30, 0x40, 0x50, 0x60, 0x70, 0xa0, 0xb0, 0xc0, 0xd0}
	class := runtime.Opcode(runtime.ClassJMP)
	if g.rnd.IntN(3) == 0 {
		class = 0x06
	}
	in := runtime.Instruction{Opcode: class | codes[g.rnd.IntN(len(codes))], Dst: g.src() % 10}
	if g.rnd.IntN(2) == 0 {
		in.Opcode |= 0x08
		in.Src = g.src()
	} else {
		in.Imm = g.imm()
	}
	g.jump(in, l)
}

// loop is a counted loop around a few statements; the body may clobber
// nothing that counts, except through a random backward jump.
func (g *progGen) loop() {
	g.inLoop = true
	defer func() { g.inLoop = false }()
	g.emit(runtime.Instruction{Opcode: runtime.OpMovImm, Dst: 8, Imm: int32(1 + g.rnd.IntN(20))})
	top := g.newLabel()
	g.place(top)
	n := 1 + g.rnd.IntN(4)
	after := g.newLabel()
	for s := 0; s < n; s++ {
		g.statement(func() int { return after })
	}
	g.place(after)
	g.emit(runtime.Instruction{Opcode: runtime.OpSubImm, Dst: 8, Imm: 1})
	g.jump(runtime.Instruction{Opcode: runtime.OpJneImm, Dst: 8}, top) // jne r8, 0, top
}

// countedLoop is a loop of the shape the translation hoists bounds checks
// out of: r8 counts up by a constant to a bound (jlt, jle, jne, or jeq out
// of the loop and ja back; an immediate or r7, which the body may write,
// and then also jgt or jge of r7 against r8), r9 steps through a region by a
// constant added once per iteration, and the body loads and stores through
// r9 at small offsets, with forward jumps inside the loop and out of it
// (the counter steps after the body or inside it). Some loops index instead: r5 = r9 + r8 at the top of the body, or
// r9 plus a masked index (maskedIndex), and the accesses go through r5; some test r8 against a second bound on the way
// out; some test r6 (or r5, the index register), computed from the
// counter or from r4, a copy of it, in place of the counter. Starts at or past the bound, spans running off
// their region, read-only memory and budgets running out inside the loop
// all turn up.
func (g *progGen) countedLoop() {
	g.inLoop = true
	defer func() { g.inLoop = false }()
	if g.rnd.IntN(5) == 0 {
		g.rotatedLoop()
		return
	}
	g.base()
	start := int32(g.rnd.IntN(6))
	if g.rnd.IntN(6) == 0 {
		start = 30
	}
	g.emit(runtime.Instruction{Opcode: runtime.OpMovImm, Dst: 8, Imm: start})
	bound, reg := int32(1+g.rnd.IntN(24)), g.rnd.IntN(4) == 0
	if reg {
		g.emit(runtime.Instruction{Opcode: runtime.OpMovImm, Dst: 7, Imm: bound})
	}
	// Copied: the counter is carried through r4 as clang-19 writes it:
	// "mov r8, r4" first in the loop, "mov r4, r8; add r4, step" last.
	copied, copyStep := g.rnd.IntN(5) == 0, int32(1+g.rnd.IntN(3))
	if copied {
		g.emit(runtime.Instruction{Opcode: runtime.OpMovImm, Dst: 4, Imm: start + copyStep})
	}
	// Derived: the back edge tests r6 = Y + c instead of the counter, as
	// clang-19 tests i + 8 <= len; Y is the counter or r4, a shadow of
	// it ("mov r4, r8" after the counter's add, r4 equal to r8 before the
	// loop, or not), and r6 is computed at the top of the body or at its
	// end.
	derived := !copied && g.rnd.IntN(4) == 0
	shadow := derived && g.rnd.IntN(2) == 0
	derivedTop, derivedOff := g.rnd.IntN(2) == 0, int32(g.rnd.IntN(25)-8)
	if shadow {
		s := start
		if g.rnd.IntN(6) == 0 {
			s += int32(1 + g.rnd.IntN(3))
		}
		g.emit(runtime.Instruction{Opcode: runtime.OpMovImm, Dst: 4, Imm: s})
	}
	// Down: the counter counts down to the bound by downStep, as clang
	// writes while (len--), from downStart's start. The back edge is then
	// jne, or jeq out and ja back.
	down, downStep := !copied && !derived && g.rnd.IntN(4) == 0, int32(1+g.rnd.IntN(3))
	if down {
		g.downStart(bound, downStep)
	}
	y := uint8(8)
	if shadow {
		y = 4
	}
	tReg := uint8(6)
	derive := func() {
		g.emit(runtime.Instruction{Opcode: runtime.OpMovReg, Dst: tReg, Src: y})
		g.emit(runtime.Instruction{Opcode: runtime.OpAddImm, Dst: tReg, Imm: derivedOff})
	}
	top := g.newLabel()
	if !copied && !shadow && g.rnd.IntN(4) == 0 {
		// A jump into the head past a change of the counter's start,
		// as clang jumps past a clamp of the bound.
		g.condJump(top)
		g.emit(runtime.Instruction{Opcode: runtime.OpAddImm, Dst: 8, Imm: int32(g.rnd.IntN(5) - 2)})
	}
	g.place(top)
	if copied {
		g.emit(runtime.Instruction{Opcode: runtime.OpMovReg, Dst: 8, Src: 4})
	}
	if derived && derivedTop {
		derive()
	}
	after := g.newLabel()
	n := 1 + g.rnd.IntN(5)
	step := int32(g.rnd.IntN(9))
	addAt := g.rnd.IntN(n + 1)
	// Indexed: r5 = r9 + r8 at the top, as clang computes data + i, and
	// the accesses go through r5 (which random arithmetic may clobber).
	base, maskAt := uint8(9), -1
	if g.rnd.IntN(3) == 0 {
		base = 5
		if g.rnd.IntN(4) != 0 {
			step = 0
		}
		if g.rnd.IntN(3) == 0 {
			// Masked: r5 = r9 + a masked, scaled index, at the top or
			// further on in the body (where a jump may pass over it).
			maskAt = 0
			if g.rnd.IntN(4) == 0 {
				maskAt = g.rnd.IntN(n)
			}
		} else {
			g.emit(runtime.Instruction{Opcode: runtime.OpMovReg, Dst: 5, Src: 9})
			g.emit(runtime.Instruction{Opcode: runtime.OpAddReg, Dst: 5, Src: y})
		}
		if derived && !derivedTop && g.rnd.IntN(2) == 0 {
			// The index register computed at the end is also the
			// derived test's, as clang reuses a register.
			tReg = 5
		}
	}
	// The counter steps after the body, or in it, between the index's
	// use in r5 and accesses through r5.
	counterAt, counterStep := n, int32(1+g.rnd.IntN(3))
	if g.rnd.IntN(3) == 0 {
		counterAt = g.rnd.IntN(n + 1)
	}
	// Packed: every access through r9 covers exactly its step, at one
	// offset, as a loop over an array of words does (the translation reads
	// it through a view, one element per iteration).
	packed := base == 9 && g.rnd.IntN(3) == 0
	if !packed && g.rnd.IntN(4) == 0 {
		step = -step // r9 counts down
	}
	var packedSize runtime.Opcode
	packedOff := int16(g.rnd.IntN(5))
	if packed {
		k := g.rnd.IntN(4)
		step = int32(1) << k
		packedSize = []runtime.Opcode{0x10, 0x08, 0x00, 0x18}[k] // b, h, w, dw
	}
	pending := map[int][]int{}
	for k := 0; k <= n; k++ {
		for _, l := range pending[k] {
			g.place(l)
		}
		if k == maskAt {
			g.maskedIndex(y)
		}
		if k == addAt && step != 0 {
			g.emit(runtime.Instruction{Opcode: runtime.OpAddImm, Dst: 9, Imm: step})
		}
		if k == counterAt && !copied {
			st := counterStep
			if down {
				st = -downStep
			}
			g.emit(runtime.Instruction{Opcode: runtime.OpAddImm, Dst: 8, Imm: st})
			if shadow {
				g.emit(runtime.Instruction{Opcode: runtime.OpMovReg, Dst: 4, Src: 8})
			}
		}
		if k == n {
			if copied {
				g.emit(runtime.Instruction{Opcode: runtime.OpMovReg, Dst: 4, Src: 8})
				g.emit(runtime.Instruction{Opcode: runtime.OpAddImm, Dst: 4, Imm: copyStep})
			}
			if derived && !derivedTop {
				derive()
			}
			break
		}
		switch r := g.rnd.IntN(10); {
		case r < 5 && packed:
			g.accessSized(base, packedOff, packedSize)
		case r < 5:
			off := int16(g.rnd.IntN(24) - 4)
			if g.rnd.IntN(8) == 0 {
				off = g.offset()
			}
			g.access(base, off)
		case r < 8:
			g.alu()
		default:
			l := after
			if t := k + 1 + g.rnd.IntN(n); t < n {
				l = g.newLabel()
				pending[t] = append(pending[t], l)
			}
			g.condJump(l)
		}
	}
	if g.rnd.IntN(3) == 0 {
		// A second bound, as clang tests i < len beside a constant.
		exit := runtime.Instruction{Opcode: runtime.OpJgeImm, Dst: 8, Imm: int32(g.rnd.IntN(30))}
		if g.rnd.IntN(2) == 0 {
			exit.Opcode = runtime.OpJgtImm
		}
		g.jump(exit, after)
	}
	back := runtime.Instruction{Opcode: runtime.OpJltImm, Dst: 8, Imm: bound}
	// jeq out and ja back, as clang-19 ends a loop with a constant trip
	// count; it and jne run as jlt only when the counter meets the bound.
	jeqJa := false
	switch g.rnd.IntN(6) {
	case 0, 1:
		back.Opcode = runtime.OpJleImm
	case 2:
		back.Opcode = runtime.OpJneImm
	case 3:
		back.Opcode, jeqJa = runtime.OpJeqImm, true
	}
	if down && !jeqJa {
		back.Opcode = runtime.OpJneImm
	}
	if derived {
		// A derived test is hoisted only with jlt and jle (or their
		// swapped forms).
		back.Dst = tReg
		if jeqJa || back.Opcode == runtime.OpJneImm {
			back.Opcode, jeqJa = runtime.OpJltImm, false
		}
	}
	if reg {
		back.Opcode |= 0x08
		back.Src, back.Imm = 7, 0
		if op := back.Opcode; (op == runtime.OpJltReg || op == runtime.OpJleReg) && g.rnd.IntN(2) == 0 {
			// The bound against the counter, as clang writes i < len.
			back.Opcode = map[runtime.Opcode]runtime.Opcode{runtime.OpJltReg: runtime.OpJgtReg, runtime.OpJleReg: runtime.OpJgeReg}[op]
			back.Dst, back.Src = 7, back.Dst
		}
	}
	if jeqJa {
		g.jump(back, after)
		g.jump(runtime.Instruction{Opcode: runtime.OpJa}, top)
	} else {
		g.jump(back, top)
	}
	g.place(after)
}

// maskedIndex sets r5 to r9 plus an index masked from x (now and then
// another register) and scaled, as clang writes data[(i & 255) * 8]: a
// mov and an and with an immediate mask, 32- or 64-bit, perhaps a shift or
// a multiplication by an immediate, then the add, into r5 itself or
// through r3. Some masks (-8) bound nothing the translation takes.
func (g *progGen) maskedIndex(x uint8) {
	if g.rnd.IntN(4) == 0 {
		x = g.src()
	}
	class := runtime.Opcode(runtime.ClassALU64)
	if g.rnd.IntN(2) == 0 {
		class = runtime.Opcode(runtime.ClassALU)
		if x == 10 {
			x = 9 // mov32 takes no r10
		}
	}
	idx := []uint8{3, 5}[g.rnd.IntN(2)]
	mask := []int32{7, 15, 0x29, 0x38, 0x3f, 0xff, -8}[g.rnd.IntN(7)]
	g.emit(runtime.Instruction{Opcode: class | 0xb8, Dst: idx, Src: x})    // mov idx, x
	g.emit(runtime.Instruction{Opcode: class | 0x50, Dst: idx, Imm: mask}) // and idx, mask
	switch g.rnd.IntN(3) {
	case 0:
		g.emit(runtime.Instruction{Opcode: class | 0x60, Dst: idx, Imm: int32(g.rnd.IntN(4))}) // lsh
	case 1:
		g.emit(runtime.Instruction{Opcode: class | 0x20, Dst: idx, Imm: []int32{1, 2, 3, 8}[g.rnd.IntN(4)]}) // mul
	}
	switch {
	case idx == 5:
		g.emit(runtime.Instruction{Opcode: runtime.OpAddReg, Dst: 5, Src: 9})
	case g.rnd.IntN(2) == 0:
		g.emit(runtime.Instruction{Opcode: runtime.OpMovReg, Dst: 5, Src: 9})
		g.emit(runtime.Instruction{Opcode: runtime.OpAddReg, Dst: 5, Src: 3})
	default:
		g.emit(runtime.Instruction{Opcode: runtime.OpMovReg, Dst: 5, Src: 3})
		g.emit(runtime.Instruction{Opcode: runtime.OpAddReg, Dst: 5, Src: 9})
	}
}

// downStart sets r8 for a counter counting down to bound by step: a
// multiple of the step above it, or now and then one more (it then steps
// over the bound, and the loop runs on until something stops it).
func (g *progGen) downStart(bound, step int32) {
	s := bound + step*int32(g.rnd.IntN(12))
	if g.rnd.IntN(6) == 0 {
		s++
	}
	g.emit(runtime.Instruction{Opcode: runtime.OpMovImm, Dst: 8, Imm: s})
}

// rotatedLoop is a counted loop as clang rotates a loop whose body is an
// if-else chain: a jump enters the body, whose ways back (several) jump to
// the latch placed before it; the latch steps r8 (and r9) and its
// conditional jump forward to the body is the back edge. Between latch
// and body, where exits land, a jump passes over the body. The body reads
// and writes through r9, or through r5 = r9 + r8, and may leave the loop.
func (g *progGen) rotatedLoop() {
	g.base()
	start := int32(g.rnd.IntN(6))
	g.emit(runtime.Instruction{Opcode: runtime.OpMovImm, Dst: 8, Imm: start})
	bound, reg := int32(1+g.rnd.IntN(24)), g.rnd.IntN(3) == 0
	if reg {
		g.emit(runtime.Instruction{Opcode: runtime.OpMovImm, Dst: 7, Imm: bound})
	}
	// Down: r8 counts down to the bound from downStart's start, the back
	// edge a jne; r9 may count down too.
	down, counterStep := g.rnd.IntN(4) == 0, int32(1+g.rnd.IntN(3))
	if down {
		g.downStart(bound, counterStep)
		counterStep = -counterStep
	}
	body, latch, after, done := g.newLabel(), g.newLabel(), g.newLabel(), g.newLabel()
	g.jump(runtime.Instruction{Opcode: runtime.OpJa}, body)
	g.place(latch)
	// The tail of some ways back, merged into the latch as clang merges a
	// switch's cases: the others jump past it, to mid.
	mid := latch
	if g.rnd.IntN(2) == 0 {
		g.emit(runtime.Instruction{Opcode: runtime.OpAddImm, Dst: []uint8{0, 2, 3, 4, 6}[g.rnd.IntN(5)], Imm: g.imm()})
		mid = g.newLabel()
		g.place(mid)
	}
	wayBack := func() int {
		if g.rnd.IntN(2) == 0 {
			return mid
		}
		return latch
	}
	step := int32(g.rnd.IntN(9))
	if down && g.rnd.IntN(2) == 0 {
		step = -step
	}
	if step != 0 {
		g.emit(runtime.Instruction{Opcode: runtime.OpAddImm, Dst: 9, Imm: step})
	}
	g.emit(runtime.Instruction{Opcode: runtime.OpAddImm, Dst: 8, Imm: counterStep})
	if g.rnd.IntN(2) == 0 {
		// A second bound, as clang tests i < len beside a constant.
		g.jump(runtime.Instruction{Opcode: runtime.OpJgeImm, Dst: 8, Imm: int32(g.rnd.IntN(30))}, after)
	}
	back := runtime.Instruction{Opcode: runtime.OpJltImm, Dst: 8, Imm: bound}
	switch {
	case down:
		back.Opcode = runtime.OpJneImm
	case g.rnd.IntN(3) == 0:
		back.Opcode = runtime.OpJleImm
	}
	if reg {
		back.Opcode |= 0x08
		back.Src, back.Imm = 7, 0
	}
	g.jump(back, body)
	g.place(after)
	g.jump(runtime.Instruction{Opcode: runtime.OpJa}, done)
	g.place(body)
	base := uint8(9)
	if g.rnd.IntN(2) == 0 {
		base = 5
		g.emit(runtime.Instruction{Opcode: runtime.OpMovReg, Dst: 5, Src: 9})
		g.emit(runtime.Instruction{Opcode: runtime.OpAddReg, Dst: 5, Src: 8})
	}
	for range 1 + g.rnd.IntN(5) {
		switch r := g.rnd.IntN(10); {
		case r < 4:
			g.access(base, int16(g.rnd.IntN(16)-2))
		case r < 6:
			g.alu()
		case r < 9:
			g.condJump(wayBack())
		default:
			g.condJump(after)
		}
	}
	g.jump(runtime.Instruction{Opcode: runtime.OpJa}, wayBack())
	g.place(done)
}

func (g *progGen) helper() {
	switch g.rnd.IntN(6) {
	case 0, 1:
		g.emit(runtime.Instruction{Opcode: runtime.OpCall, Imm: 5}) // unwind: r0 = r1
	case 2:
		// m[key] = value, key and value on the stack, with BPF_ANY,
		// BPF_NOEXIST, BPF_EXIST or now and then flags the helper refuses.
		g.mapKey()
		g.emit(runtime.Instruction{Opcode: runtime.OpStdw, Dst: 10, Offset: -24, Imm: g.imm()})
		g.emit(runtime.Instruction{Opcode: runtime.OpStdw, Dst: 10, Offset: -16, Imm: g.imm()})
		g.emit(runtime.Instruction{Opcode: runtime.OpMovReg, Dst: 3, Src: 10})
		g.emit(runtime.Instruction{Opcode: runtime.OpAddImm, Dst: 3, Imm: -24})
		g.emit(runtime.Instruction{Opcode: runtime.OpMovImm, Dst: 4, Imm: int32(g.rnd.IntN(7) % 4)})
		g.emit(runtime.Instruction{Opcode: runtime.OpCall, Imm: runtime.HelperMapUpdateElem})
	case 3, 4:
		// v = lookup(counts, key); if v != NULL, use it.
		g.emit(runtime.Instruction{Opcode: runtime.OpStw, Dst: 10, Offset: -8, Imm: int32(g.rnd.IntN(8))})
		g.lddw(1, runtime.PseudoMapIdx, 1, 0)
		g.emit(runtime.Instruction{Opcode: runtime.OpMovReg, Dst: 2, Src: 10})
		g.emit(runtime.Instruction{Opcode: runtime.OpAddImm, Dst: 2, Imm: -8})
		g.emit(runtime.Instruction{Opcode: runtime.OpCall, Imm: runtime.HelperMapLookupElem})
		skip := g.newLabel()
		g.jump(runtime.Instruction{Opcode: runtime.OpJeqImm}, skip) // jeq r0, 0, skip
		if g.rnd.IntN(2) == 0 {
			g.emit(runtime.Instruction{Opcode: runtime.OpAtomicDW, Dst: 0, Src: 3, Imm: 0x01}) // lock fetch add [r0], r3
		} else {
			g.emit(runtime.Instruction{Opcode: runtime.OpLdxdw, Dst: 4, Src: 0, Offset: int16(g.rnd.IntN(12) / 10 * 8)})
		}
		g.place(skip)
	default:
		switch g.rnd.IntN(4) {
		case 0:
			g.emit(runtime.Instruction{Opcode: runtime.OpCall, Imm: 100}) // fails the run
		case 1, 2:
			g.mapKey()
			g.emit(runtime.Instruction{Opcode: runtime.OpCall, Imm: runtime.HelperMapDeleteElem})
		default:
			g.emit(runtime.Instruction{Opcode: runtime.OpCall, Imm: 5})
		}
	}
}

// mapKey sets r1 and r2 for a map call: the handle of counts (4-byte
// keys), wide (8-byte keys, two entries, so that it fills) or recent (the
// same, LRU), and the address of a key on the stack, one of a few.
func (g *progGen) mapKey() {
	mi := []int32{1, 1, 2, 3}[g.rnd.IntN(4)]
	if mi == 1 {
		g.emit(runtime.Instruction{Opcode: runtime.OpStw, Dst: 10, Offset: -8, Imm: int32(g.rnd.IntN(8))})
	} else {
		g.emit(runtime.Instruction{Opcode: runtime.OpStdw, Dst: 10, Offset: -8, Imm: int32(g.rnd.IntN(4))})
	}
	g.lddw(1, runtime.PseudoMapIdx, mi, 0)
	g.emit(runtime.Instruction{Opcode: runtime.OpMovReg, Dst: 2, Src: 10})
	g.emit(runtime.Instruction{Opcode: runtime.OpAddImm, Dst: 2, Imm: -8})
}

// call calls a later function, or now and then an earlier one or itself,
// which can recurse until the call depth runs out.
func (g *progGen) call() {
	if g.fn+1 == g.nfuncs && g.rnd.IntN(6) != 0 {
		g.alu() // the last function calls back only now and then
		return
	}
	target := g.rnd.IntN(g.nfuncs)
	if target <= g.fn && g.rnd.IntN(8) != 0 && g.fn+1 < g.nfuncs {
		target = g.fn + 1 + g.rnd.IntN(g.nfuncs-g.fn-1)
	}
	g.emit(runtime.Instruction{Opcode: runtime.OpMovImm, Dst: 1 + uint8(g.rnd.IntN(5)), Imm: g.imm()})
	g.items = append(g.items, genItem{in: runtime.Instruction{Opcode: runtime.OpCall, Src: runtime.PseudoCall}, jumpTo: -1, callTo: target, funcAt: -1})
}

func (g *progGen) callx() {
	if g.rnd.IntN(3) == 0 {
		g.emit(runtime.Instruction{Opcode: runtime.OpMovImm, Dst: 9, Imm: 5}) // a helper id
	} else {
		target := g.rnd.IntN(g.nfuncs)
		if target <= g.fn && g.fn+1 < g.nfuncs {
			target = g.fn + 1
		}
		g.items = append(g.items, genItem{in: runtime.Instruction{Opcode: runtime.OpLddw, Dst: 9, Src: runtime.PseudoFunc}, lddw: true, jumpTo: -1, callTo: -1, funcAt: target})
	}
	g.emit(runtime.Instruction{Opcode: runtime.OpCallx, Dst: 9})
}

// errorClass sorts an outcome for the summary.
func errorClass(err string) string {
	switch {
	case err == "":
		return "ok"
	case strings.Contains(err, "instruction budget"):
		return "budget"
	case strings.Contains(err, "call depth"):
		return "call depth"
	case strings.Contains(err, "invalid read") || strings.Contains(err, "invalid write") || strings.Contains(err, "misaligned atomic"):
		return "memory"
	case strings.HasPrefix(err, "load: "):
		return "rejected"
	}
	return "other run error"
}

// checkRandomBatch runs programs 0..n-1 of seed and fails on any
// disagreement; it returns how many programs ended in each class.
func checkRandomBatch(t testing.TB, seed uint64, n int, vet bool) map[string]int {
	cases := make([]aotCase, n)
	for i := range cases {
		cases[i] = randomProgram(seed, i)
	}
	res := runAgreement(t, cases, vet)
	classes := map[string]int{}
	for i, l := range res.Lines {
		classes[errorClass(l.Interp.Err)]++
		if d := l.disagreement(false); d != "" {
			t.Errorf("%s: %s\nprogram:\n%s", l.Name, d, disasmCase(cases[i]))
		}
	}
	return classes
}

func disasmCase(c aotCase) string {
	var b strings.Builder
	for pc := 0; pc < len(c.Insns); pc++ {
		n := 1
		if c.Insns[pc].Opcode == runtime.OpLddw && pc+1 < len(c.Insns) {
			n = 2
		}
		fmt.Fprintf(&b, "%4d: %s", pc, runtime.Disassemble(c.Insns[pc:pc+n]))
		pc += n - 1
	}
	return b.String()
}

// FuzzAOTRandom compares interpreter and translation on a batch of random
// well-formed programs per input, since each input costs a Go build. go
// test runs the seeds. go test -fuzz works on a quiet machine, but Go's
// fuzzing gives an input 10 seconds before calling it a hang, which a build
// can take under load; TestAOTRandomSoak runs larger batches for as long
// as -aot.soak says.
func FuzzAOTRandom(f *testing.F) {
	f.Add(uint64(1))
	if testenv.IsLong() {
		f.Add(uint64(2))
	}
	f.Fuzz(func(t *testing.T, seed uint64) {
		classes := checkRandomBatch(t, seed, 32, !fuzzing())
		t.Logf("seed %d: %s", seed, summary(classes))
	})
}

// fuzzing reports whether the test binary runs under go test -fuzz.
func fuzzing() bool {
	f := flag.Lookup("test.fuzz")
	return f != nil && f.Value.String() != ""
}

func summary(classes map[string]int) string {
	var keys []string
	for k := range classes {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var parts []string
	for _, k := range keys {
		parts = append(parts, fmt.Sprintf("%s %d", k, classes[k]))
	}
	return strings.Join(parts, ", ")
}

var (
	soak      = flag.Duration("aot.soak", 0, "compare random programs in batches for this long (TestAOTRandomSoak)")
	soakBatch = flag.Int("aot.batch", 128, "random programs per build in TestAOTRandomSoak (a build's link is its fixed cost)")
)

// TestAOTRandomSoak is the long run of FuzzAOTRandom's comparison: batches
// of -aot.batch random programs from consecutive seeds, one build each,
// until -aot.soak has passed. It logs the running totals every ten builds,
// so that a run stopped early still tells how far it got.
func TestAOTRandomSoak(t *testing.T) {
	if *soak == 0 {
		t.Skip("set -aot.soak=10m to compare random programs for that long")
	}
	deadline := time.Now().Add(*soak)
	seed := uint64(time.Now().UnixNano())
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("failed in the batch of seed %d: randomProgram(%d, i) for i < %d", seed, seed, *soakBatch)
		}
	})
	total := map[string]int{}
	programs, builds := 0, 0
	for time.Now().Before(deadline) && !t.Failed() {
		for k, n := range checkRandomBatch(t, seed, *soakBatch, false) {
			total[k] += n
			programs += n
		}
		builds++
		seed++
		if builds%10 == 0 {
			t.Logf("%s: %d random programs in %d builds compared: %s", time.Now().Format(time.TimeOnly), programs, builds, summary(total))
		}
	}
	t.Logf("%d random programs in %d builds compared: %s", programs, builds, summary(total))
}

// TestRandomProgramsHoist makes sure the random programs exercise hoisted
// loops: some of their translations must run a loop's fast copy, some
// through views, some with a back edge testing a register derived from
// the counter, some guarded by a shadow of it, some rotated, some with a
// masked index; and some must emit a compare tree as a switch.
func TestRandomProgramsHoist(t *testing.T) {
	hoisted, windows, views, blocks, derived, shadows, rotated, down, downBases, jumpedTo := 0, 0, 0, 0, 0, 0, 0, 0, 0, 0
	rot := regexp.MustCompile(`Instructions \d+ to \d+, then (\d+) to (\d+), are`)
	fastGoto := regexp.MustCompile(`goto F(\d+)`)
	// A counter counting down gets its trip count from the bound up to
	// it; a base counting down, a span starting j steps below it.
	downCounter := regexp.MustCompile(`LoopTrips\([^,]+, r8, `)
	downBase := regexp.MustCompile(`SpanAt\([^,]*-\d+\*j, `)
	// A rotated loop counting down: its doc comment, then its trip count
	// up to r8.
	rotDown := regexp.MustCompile(`then \d+ to \d+, are[^\n]*\n(\s*//[^\n]*\n)*\s*if j, ok := runtime\.LoopTrips\([^,]+, r8, `)
	rotatedDown, trees, merged, masked := 0, 0, 0, 0
	for _, src := range randomTranslations(t, 256) {
		// A hoisted loop's span is fvN, a span block's sN.
		if strings.Contains(src, ", ok := m.SpanAt(") && strings.Contains(src, "fv") {
			hoisted++
		}
		if strings.Contains(src, "WindowOf[") && strings.Contains(src, "](fv") {
			windows++
		}
		if strings.Contains(src, "runtime.Views[") {
			views++
		}
		if strings.Contains(src, "run a copy that checks it once") {
			blocks++
		}
		// The generator's counter is r8, its derived test r6 = Y + c
		// (the trip count from r8 plus an offset), its shadow r4.
		if strings.Contains(src, "LoopTrips(r8+") || strings.Contains(src, "LoopTrips(r8-") {
			derived++
		}
		if strings.Contains(src, "&& r4 == r8") {
			shadows++
		}
		if m := rot.FindStringSubmatch(src); m != nil {
			rotated++
			// A way back jumping past the latch's start, in the fast copy.
			lo, _ := strconv.Atoi(m[1])
			hi, _ := strconv.Atoi(m[2])
			for _, g := range fastGoto.FindAllStringSubmatch(src, -1) {
				if x, _ := strconv.Atoi(g[1]); lo < x && x <= hi {
					merged++
					break
				}
			}
		}
		if downCounter.MatchString(src) {
			down++
			if rotDown.MatchString(src) {
				rotatedDown++
			}
		}
		if downBase.MatchString(src) {
			downBases++
		}
		if strings.Contains(src, "goto H") {
			jumpedTo++
		}
		// A masked index's place: r5 less r9 (see maskedIndex).
		if strings.Contains(src, ".At(r5 - r9") {
			masked++
		}
		if strings.Contains(src, "as a switch.") {
			trees++
		}
	}
	t.Logf("%d of 256 random programs have a compare tree emitted as a switch", trees)
	if trees < 8 {
		t.Errorf("%d random programs have a compare tree emitted as a switch, want at least 8", trees)
	}
	t.Logf("%d of 256 random programs have a hoisted loop, %d a window, %d a range loop's view, %d a span block, %d a derived test, %d a shadow, %d a rotated loop, %d a counter counting down, %d a base counting down, %d a jump from outside into a hoisted loop's head, %d a rotated loop counting down, %d a rotated loop entering its latch past the start, %d a masked index", hoisted, windows, views, blocks, derived, shadows, rotated, down, downBases, jumpedTo, rotatedDown, merged, masked)
	if hoisted < 16 || windows < 8 || views < 8 || blocks < 16 || derived < 6 || shadows < 3 || rotated < 8 || down < 6 || downBases < 6 || jumpedTo < 6 || rotatedDown < 1 || merged < 3 || masked < 3 {
		t.Errorf("too few: want at least 16 hoisted loops, 8 windows, 8 views, 16 span blocks, 6 derived tests, 3 shadows, 8 rotated loops, 6 counters and 6 bases counting down, 6 jumps into a loop's head, 1 rotated loop counting down, 3 entering their latch past the start, 3 masked indices")
	}
}

// TestRandomProgramsMapCalls makes sure the random programs call every
// direct map function, so that the comparison covers them against the
// interpreter's.
func TestRandomProgramsMapCalls(t *testing.T) {
	calls := map[string]int{}
	for _, src := range randomTranslations(t, 256) {
		for _, fn := range []string{"Lookup32", "Update32", "Update64", "Delete32", "Delete64"} {
			if strings.Contains(src, "m."+fn+"(") {
				calls[fn]++
			}
		}
	}
	t.Logf("of 256 random programs, by the direct map function they call: %v", calls)
	for _, fn := range []string{"Lookup32", "Update32", "Update64", "Delete32", "Delete64"} {
		if calls[fn] < 4 {
			t.Errorf("%d random programs call %s, want at least 4", calls[fn], fn)
		}
	}
}

// randomTranslations returns the Go source of the translations of
// randomProgram(1, i) for i < n, but those that fail to translate.
func randomTranslations(t *testing.T, n int) []string {
	var srcs []string
	for i := range n {
		c := randomProgram(1, i)
		code, err := Translate(&runtime.ProgramSpec{Name: c.Name, Instructions: c.Insns, Maps: placeholderMaps(t, c.Setup, nil)}, Options{Name: "p"})
		if err == nil {
			srcs = append(srcs, fmt.Sprintf("%#v", code))
		}
	}
	return srcs
}
