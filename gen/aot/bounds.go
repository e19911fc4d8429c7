package aot

import (
	"maps"
	"math"

	"github.com/skelgen/skelgen/runtime"
)

// Loads the kernel's verifier would prove in bounds. A program that reads
// a buffer it was given as (data, len) checks each access against the
// buffer's end first, as the verifier asks of a packet:
//
//	p = data + (u32)pc;           // data is r1 at entry
//	if (p + 3 > data + len) exit; // len is r2 at entry
//	... p[0], p[1], p[2] ...
//
// tailLoads finds such loads: through a register holding a1 + x + c (a1
// and a2 are r1 and r2 at the function's entry, x a value below 2^32 that
// one instruction made, c a constant) where a comparison every path to the
// load passes has shown x + k <= a2 with c + off + size <= k, and x has
// not been made again since. Such a load reads the bytes at offset
// x + c + off of the a2 bytes from a1, and the translation reads them
// from the tail of a1's region (runtime.Memory.ReadTail) with one bounds
// check, as the kernel's JIT reads the packet with none, instead of
// looking the address up among the regions. The reasoning holds when
// those a2 bytes lie in a1's region, which the copies that use it check
// at their entry (a2 <= len of the tail): then a1 + a2 cannot wrap, nor
// can the pointer, which stays within 2^32 + 2^31 of a1.
//
// The facts are gathered by a forward dataflow over the function, joined
// where control meets (a fact holds where it holds on every way in).

// symKind is what a register is known to hold.
type symKind uint8

const (
	symUnknown symKind = iota
	symX               // x, the value instruction def made, below 2^32
	symPtr             // a1 + x + c (def -1: a1 + c)
	symEnd             // a1 + a2 + c
	symLen             // a2
)

type sym struct {
	kind symKind
	def  int   // symX, symPtr: the instruction that made x, or -1
	c    int64 // symPtr, symEnd: the constant
}

// boundState is what holds before an instruction: the registers' values
// and, by the instruction that made x, the largest k with x + k <= a2
// shown (def -1: x = 0).
type boundState struct {
	regs  [11]sym
	bound map[int]int64
}

func (s *boundState) clone() *boundState {
	return &boundState{regs: s.regs, bound: maps.Clone(s.bound)}
}

// join keeps in s what also holds in t, and reports whether s changed.
func (s *boundState) join(t *boundState) bool {
	changed := false
	for r := range s.regs {
		if s.regs[r] != t.regs[r] && s.regs[r].kind != symUnknown {
			s.regs[r] = sym{}
			changed = true
		}
	}
	for d, k := range s.bound {
		tk, ok := t.bound[d]
		if !ok {
			delete(s.bound, d)
			changed = true
		} else if tk < k {
			s.bound[d] = tk
			changed = true
		}
	}
	return changed
}

// maxConst bounds the constants followed, so that sums of them stay far
// from overflow.
const maxConst = 1 << 30

// tailLoads returns the loads of f proven to read within the a2 bytes
// from a1 (see above), by instruction.
func (p *aotProgram) tailLoads(f *aotFunc) map[int]bool {
	if !f.in.has(1) || !f.in.has(2) {
		return nil
	}
	in := make(map[int]*boundState, len(f.body))
	start := &boundState{bound: map[int]int64{}}
	start.regs[1] = sym{kind: symPtr, def: -1}
	start.regs[2] = sym{kind: symLen}
	in[f.entry] = start
	work := []int{f.entry}
	queued := map[int]bool{f.entry: true}
	proven := map[int]bool{}
	// Each join only removes facts or lowers bounds, but a bound a
	// comparison raises may come round a loop again: bound the work.
	for steps := 0; len(work) > 0; steps++ {
		if steps > 64*len(f.body) {
			return nil
		}
		pc := work[0]
		work = work[1:]
		queued[pc] = false
		insn := p.insns[pc]
		s := in[pc]
		if base, size, ok := loadThrough(insn); ok {
			v := s.regs[base]
			lo := v.c + int64(insn.off)
			k, shown := s.bound[v.def]
			proven[pc] = v.kind == symPtr && lo >= 0 && shown && lo+size <= k
		}
		for _, e := range p.boundEdges(f, insn, s) {
			if !f.inFn[e.to] {
				continue
			}
			if old := in[e.to]; old == nil {
				in[e.to] = e.state
			} else if !old.join(e.state) {
				continue
			}
			if !queued[e.to] {
				queued[e.to] = true
				work = append(work, e.to)
			}
		}
	}
	// A load reached again with fewer facts was re-checked when its state
	// changed, so proven holds the last word on each.
	out := map[int]bool{}
	for pc, ok := range proven {
		if ok {
			out[pc] = true
		}
	}
	return out
}

// loadThrough returns the base register and size of a plain (zero-
// extending) load.
func loadThrough(in *aotInsn) (base uint8, size int64, ok bool) {
	switch in.op {
	case runtime.OpLdxb, runtime.OpLdxh, runtime.OpLdxw, runtime.OpLdxdw:
		return in.src, int64(sizeOf(in.op)), true
	}
	return 0, 0, false
}

type boundEdge struct {
	to    int
	state *boundState
}

// boundEdges returns the states insn leaves on each way out of it.
func (p *aotProgram) boundEdges(f *aotFunc, insn *aotInsn, s *boundState) []boundEdge {
	out := s.clone()
	next := insn.pc + insn.slots
	if isCondJump(insn.op) {
		taken, fall := out, out.clone()
		compare(insn, taken, fall)
		if insn.target == next {
			// Both ways reach next: what holds on both.
			taken.join(fall)
			return []boundEdge{{next, taken}}
		}
		return []boundEdge{{insn.target, taken}, {next, fall}}
	}
	p.step(f, insn, out)
	var edges []boundEdge
	for _, to := range p.successors(insn) {
		edges = append(edges, boundEdge{to, out})
	}
	return edges
}

// step applies a non-branching instruction to s.
func (p *aotProgram) step(f *aotFunc, insn *aotInsn, s *boundState) {
	if insn.op == runtime.OpCall || insn.op == runtime.OpCallx {
		for r := 0; r <= 5; r++ {
			s.regs[r] = sym{}
		}
		return
	}
	def := p.effect(f, insn).def
	if def == 0 {
		return
	}
	d := insn.dst
	src, dst := s.regs[insn.src], s.regs[d]
	var v sym
	switch c := insn.class(); {
	case c == runtime.ClassALU && insn.op != runtime.OpLe && insn.op != runtime.OpBe,
		insn.op == runtime.OpLdxb || insn.op == runtime.OpLdxh || insn.op == runtime.OpLdxw,
		insn.op == runtime.OpAndImm && insn.imm >= 0:
		// A 32-bit result, a zero-extended load, a mask: a new x.
		v = sym{kind: symX, def: insn.pc}
	case insn.op == runtime.OpMovReg && insn.off == 0:
		v = src
	case insn.op == runtime.OpAddImm || insn.op == runtime.OpSubImm:
		imm := int64(insn.imm)
		if insn.op == runtime.OpSubImm {
			imm = -imm
		}
		if (dst.kind == symPtr || dst.kind == symEnd) && abs(dst.c+imm) < maxConst {
			v = dst
			v.c += imm
		}
	case insn.op == runtime.OpAddReg:
		switch {
		case dst.kind == symPtr && dst.def == -1 && src.kind == symX:
			v = sym{kind: symPtr, def: src.def, c: dst.c}
		case src.kind == symPtr && src.def == -1 && dst.kind == symX:
			v = sym{kind: symPtr, def: dst.def, c: src.c}
		case dst.kind == symPtr && dst.def == -1 && src.kind == symLen:
			v = sym{kind: symEnd, c: dst.c}
		case src.kind == symPtr && src.def == -1 && dst.kind == symLen:
			v = sym{kind: symEnd, c: src.c}
		}
	}
	// This instruction makes its x again: what was known of the last one
	// no longer holds of it.
	delete(s.bound, insn.pc)
	for r := range s.regs {
		if (s.regs[r].kind == symX || s.regs[r].kind == symPtr) && s.regs[r].def == insn.pc || def.has(uint8(r)) {
			s.regs[r] = sym{}
		}
	}
	if def.has(d) {
		s.regs[d] = v
	}
}

// compare records in taken and fall what a 64-bit unsigned comparison of
// a pointer a1 + x + c with the end a1 + a2 shows on each way.
func compare(insn *aotInsn, taken, fall *boundState) {
	if insn.class() != runtime.ClassJMP || insn.op&8 == 0 {
		return
	}
	a, b := taken.regs[insn.dst], taken.regs[insn.src]
	// ptrFirst: the comparison is ptr OP end; otherwise end OP ptr.
	var ptr sym
	ptrFirst := false
	switch {
	case a.kind == symPtr && b.kind == symEnd && b.c == 0:
		ptr, ptrFirst = a, true
	case b.kind == symPtr && a.kind == symEnd && a.c == 0:
		ptr = b
	default:
		return
	}
	if ptr.c < 0 {
		return
	}
	// le: the way on which ptr <= end holds; lt: ptr < end.
	var le, lt *boundState
	switch op := insn.op; {
	case op == runtime.OpJgtReg && ptrFirst, op == runtime.OpJltReg && !ptrFirst:
		le = fall // !(ptr > end)
	case op == runtime.OpJgeReg && ptrFirst, op == runtime.OpJleReg && !ptrFirst:
		lt = fall // !(ptr >= end)
	case op == runtime.OpJleReg && ptrFirst, op == runtime.OpJgeReg && !ptrFirst:
		le = taken
	case op == runtime.OpJltReg && ptrFirst, op == runtime.OpJgtReg && !ptrFirst:
		lt = taken
	}
	raise := func(s *boundState, k int64) {
		if s != nil && k > s.bound[ptr.def] {
			s.bound[ptr.def] = k
		}
	}
	raise(le, ptr.c)
	raise(lt, ptr.c+1)
}

func abs(v int64) int64 {
	if v < 0 {
		if v == math.MinInt64 {
			return math.MaxInt64
		}
		return -v
	}
	return v
}
