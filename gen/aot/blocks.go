package aot

import (
	"fmt"

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

// view names the *[n]byte the fast copy of g indexes.
func (g *spanBlock) view() string { return fmt.Sprintf("v%d", g.first) }

// findBlocks returns f's span blocks by first instruction, outside the
// hoisted loops (whose fast copies have windows of their own).
func (p *aotProgram) findBlocks(f *aotFunc, labels map[int]bool, loops map[int]*hoistLoop) map[int]*spanBlock {
	inLoop := func(pc int) bool {
		for _, l := range loops {
			if l.contains(pc) {
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
		if inLoop(pc) {
			done()
			continue
		}
		if labels[pc] {
			done()
		}
		if c := in.class(); c == runtime.ClassJMP || c == runtime.ClassJMP32 || (c == runtime.ClassSTX && isAtomic(in.op)) {
			done()
			continue
		}
		if base, size, write, ok := spanAccess(f, in); ok {
			if cur != nil && cur.base != base {
				done()
			}
			if cur == nil {
				cur = &spanBlock{base: base, first: pc, lo: int64(in.off), hi: int64(in.off) + size, fast: map[int]bool{}}
			}
			cur.lo, cur.hi = min(cur.lo, int64(in.off)), max(cur.hi, int64(in.off)+size)
			cur.write = cur.write || write
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
