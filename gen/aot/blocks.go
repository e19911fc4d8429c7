package aot

import (
	"github.com/skelgen/skelgen/runtime"
)

// A spanBlock is a run of straight-line code (no label inside, no jump,
// call or atomic) with at least two accesses through one base register
// that the run does not change: clang's unrolled loops and the reads of a
// header's fields. The translation emits the run twice: a copy whose
// accesses through the base index one span, checked once with
// runtime.Memory.BlockSpan before the run, and the checked run, entered when
// the span is not all in its region. Straight-line code charges no budget
// and holds no check of its own, so both copies end with the same state,
// and the checked copy faults exactly where the interpreter does.
type spanBlock struct {
	base        uint8
	first, last int   // the first and last access through base
	lo, hi      int64 // [lo, hi): the offsets from base its accesses reach
	write       bool  // some access stores: the span must be writable
	fast        map[int]bool
}

// findBlocks returns f's span blocks by first instruction, outside the
// hoisted loops (whose fast copies have windows of their own).
func (p *aotProgram) findBlocks(f *aotFunc, labels map[int]bool, loops map[int]*hoistLoop) map[int]*spanBlock {
	inLoop := func(pc int) bool {
		for _, l := range loops {
			if pc >= l.head && pc <= l.back {
				return true
			}
		}
		return false
	}
	out := map[int]*spanBlock{}
	var cur *spanBlock
	done := func() {
		if cur != nil && len(cur.fast) >= 2 && cur.hi-cur.lo >= 8 {
			out[cur.first] = cur
		}
		cur = nil
	}
	for _, pc := range f.body {
		in := p.insns[pc]
		if labels[pc] || inLoop(pc) {
			done()
		}
		if inLoop(pc) {
			continue
		}
		c := in.class()
		if c == runtime.ClassJMP || c == runtime.ClassJMP32 || (c == runtime.ClassSTX && isAtomic(in.op)) {
			done()
			continue
		}
		var base uint8
		access := false
		switch {
		case c == runtime.ClassLDX && f.liveOut[pc].has(in.dst):
			base, access = in.src, true
		case c == runtime.ClassST || c == runtime.ClassSTX:
			base, access = in.dst, true
		}
		size := int64(sizeOf(in.op))
		if access && (base == 10 || inFrame(base, in.off, int(size))) {
			access = false
		}
		if access {
			if cur != nil && cur.base != base {
				done()
			}
			if cur == nil {
				cur = &spanBlock{base: base, first: pc, lo: int64(in.off), hi: int64(in.off) + size, fast: map[int]bool{}}
			}
			cur.lo, cur.hi = min(cur.lo, int64(in.off)), max(cur.hi, int64(in.off)+size)
			cur.write = cur.write || c != runtime.ClassLDX
			cur.last = pc
			cur.fast[pc] = true
		}
		// A write of the base ends the block after this instruction.
		if cur != nil && p.effect(f, in).def.has(cur.base) {
			done()
		}
	}
	done()
	return out
}
