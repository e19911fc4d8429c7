package aot

import "github.com/skelgen/skelgen/runtime"

// regset is a set of registers r0..r9 (r10 is a constant per function and
// never tracked).
type regset uint16

const (
	argRegs regset = 0b111110 // r1..r5
	allRegs regset = 0x3ff
)

func reg(r uint8) regset {
	if r >= 10 {
		return 0
	}
	return 1 << r
}

func (s regset) has(r uint8) bool { return r < 10 && s&(1<<r) != 0 }

// regs lists the members in ascending order.
func (s regset) regs() []uint8 {
	var out []uint8
	for r := uint8(0); r < 10; r++ {
		if s.has(r) {
			out = append(out, r)
		}
	}
	return out
}

// aotFunc is one BPF function: the instructions reachable from its entry
// without following calls.
type aotFunc struct {
	entry int
	body  []int        // instruction indices, ascending
	inFn  map[int]bool // membership of body
	// in are the registers the function reads before writing them: its
	// parameters. out are the registers of r1..r5 that some caller reads
	// after the call, returned besides r0.
	in, out regset
	liveOut map[int]regset
}

// findFunctions collects the functions reachable from instruction 0
// through calls and function addresses.
func (p *aotProgram) findFunctions() {
	p.funcs = map[int]*aotFunc{}
	queue := []int{0}
	for len(queue) > 0 {
		e := queue[0]
		queue = queue[1:]
		if p.funcs[e] != nil {
			continue
		}
		f := &aotFunc{entry: e, inFn: map[int]bool{}}
		p.funcs[e] = f
		work := []int{e}
		f.inFn[e] = true
		for len(work) > 0 {
			pc := work[len(work)-1]
			work = work[:len(work)-1]
			in := p.insns[pc]
			if (in.op == runtime.OpCall && in.src == 1) || (in.op == runtime.OpLddw && in.target >= 0) {
				queue = append(queue, in.target)
			}
			for _, s := range p.successors(in) {
				if !f.inFn[s] {
					f.inFn[s] = true
					work = append(work, s)
				}
			}
		}
		f.body = sortedKeys(f.inFn)
	}
	for _, e := range sortedKeys(p.funcs) {
		p.fnList = append(p.fnList, p.funcs[e])
	}
}

// callees are the functions a call instruction may enter: its target for a
// local call, every function for callx.
func (p *aotProgram) callees(in *aotInsn) []*aotFunc {
	switch {
	case in.op == runtime.OpCall && in.src == 1:
		return []*aotFunc{p.funcs[in.target]}
	case in.op == runtime.OpCallx:
		return p.fnList
	}
	return nil
}

// effect describes what an instruction reads and writes. pure
// instructions can be dropped when nothing reads their result; the others
// (memory, calls, control) always run, and their reads always count.
type effect struct {
	use, def regset
	pure     bool
}

func (p *aotProgram) effect(f *aotFunc, in *aotInsn) effect {
	d, s := reg(in.dst), reg(in.src)
	x := in.op&8 != 0
	switch in.class() {
	case runtime.ClassALU, runtime.ClassALU64: // ALU, ALU64
		e := effect{def: d, pure: true}
		switch aluOp(in.op) {
		case runtime.OpMovImm: // mov, movsx
			if x {
				e.use = s
			}
		case runtime.OpNeg, runtime.OpBswap: // neg, byte swaps
			e.use = d
		default:
			e.use = d
			if x {
				e.use |= s
			}
		}
		return e
	case runtime.ClassLD: // lddw
		return effect{def: d, pure: true}
	case runtime.ClassLDX: // ldx: a load can fault, so its address always counts
		return effect{use: s, def: d}
	case runtime.ClassST:
		return effect{use: d}
	case runtime.ClassSTX:
		if !isAtomic(in.op) {
			return effect{use: d | s}
		}
		e := effect{use: d | s}
		switch {
		case in.imm == 0xf1: // cmpxchg
			e.use |= reg(0)
			e.def = reg(0)
		case in.imm&1 != 0:
			e.def = s
		}
		return e
	}
	// JMP, JMP32.
	switch {
	case in.op == runtime.OpJa || in.op == runtime.OpJa32:
		return effect{}
	case in.op == runtime.OpExit:
		return effect{use: reg(0) | f.out}
	case in.op == runtime.OpCall && in.src == 1:
		g := p.funcs[in.target]
		return effect{use: g.in, def: reg(0) | g.out}
	case in.op == runtime.OpCall:
		return effect{use: argRegs, def: reg(0)}
	case in.op == runtime.OpCallx:
		// A helper leaves r1..r5 alone and a function returns the ones
		// read afterwards, so only r0 is certainly written.
		e := effect{use: d | argRegs, def: reg(0)}
		for _, g := range p.fnList {
			e.use |= g.in
		}
		return e
	}
	e := effect{use: d}
	if x {
		e.use |= s
	}
	return e
}

// liveness computes, for each instruction of f, the registers read later
// by instructions that must run (strong liveness: a pure instruction whose
// result is dead does not make its operands live), and returns the
// registers live at the entry.
func (p *aotProgram) liveness(f *aotFunc) regset {
	liveIn := make(map[int]regset, len(f.body))
	f.liveOut = make(map[int]regset, len(f.body))
	for changed := true; changed; {
		changed = false
		for i := len(f.body) - 1; i >= 0; i-- {
			pc := f.body[i]
			in := p.insns[pc]
			var out regset
			for _, s := range p.successors(in) {
				out |= liveIn[s]
			}
			e := p.effect(f, in)
			li := out &^ e.def
			if !e.pure || out&e.def != 0 {
				li |= e.use
			}
			if out != f.liveOut[pc] || li != liveIn[pc] {
				f.liveOut[pc], liveIn[pc] = out, li
				changed = true
			}
		}
	}
	return liveIn[f.entry]
}

// solveInterfaces finds each function's parameters and results: a
// fixpoint, since a caller's reads after a call make the callee return
// more, which makes the callee read more at its exits, and so on. Both
// sets only grow, so it ends.
func (p *aotProgram) solveInterfaces() {
	for changed := true; changed; {
		changed = false
		for _, f := range p.fnList {
			if in := f.in | p.liveness(f); in != f.in {
				f.in, changed = in, true
			}
		}
		for _, f := range p.fnList {
			for _, pc := range f.body {
				in := p.insns[pc]
				need := f.liveOut[pc] & argRegs
				for _, g := range p.callees(in) {
					if need&^g.out != 0 {
						g.out |= need
						changed = true
					}
				}
			}
		}
	}
	// The final liveness, with the final interfaces.
	for _, f := range p.fnList {
		p.liveness(f)
	}
}

// labels are the instructions of f that a jump within f reaches.
func (p *aotProgram) labels(f *aotFunc) map[int]bool {
	l := map[int]bool{}
	for _, pc := range f.body {
		in := p.insns[pc]
		if isJump(in.op) {
			l[in.target] = true
		}
	}
	return l
}
