package aot

import (
	"fmt"

	"github.com/skelgen/skelgen/runtime"
)

// A budget region is a piece of a function that control enters only at
// its first instruction, its entry, and in which it only goes forward: the
// function is cut at its loops' heads (the targets of a depth-first
// search's back edges, whatever the loop's shape), after bpf-to-bpf calls
// (which return the budget their callee left) and where control comes
// from two regions. Every path from the entry stays within the region
// until it leaves it for another region's entry, so its length in slots
// is bounded by the region's longest path. At a loop head, one comparison
// tells whether the budget left covers that path: then no check inside
// can fail, and a copy of the region that checks none runs (it still
// counts b, which leaves it exact); otherwise the checked code runs and
// fails where the interpreter does. Loops come back to their head, and so
// to the comparison, every iteration. So a switch's or an if-else chain's
// arms in a loop hold no call (a check's fault path), and Go can keep
// their values in registers and pick them with conditional moves.
type budgetRegion struct {
	entry   int
	pcs     []int // its instructions, ascending
	longest int   // slots on its longest path, the entry's included
}

// Bounds on the regions copied. A region's copy doubles its code, which
// every user's build compiles: regions longer than maxRegionCopy (a small
// dispatch loop is shorter; a loop that prints a histogram is not) keep
// their one checked copy, unless at least one instruction in
// dispatchDensity is a check, as in a switch's compare tree, whose paths
// are short and check at almost every step (a 32-way switch of a
// byte-code interpreter: 164 instructions, 63 checks; syslat's histogram
// loops: 157, 28), up to maxDispatchCopy. A function's copies together
// stay within what makes it no longer than splitAbove instructions.
const (
	maxRegionCopy   = 96
	maxDispatchCopy = 256
	dispatchDensity = 4
)

// budgetRegions returns the regions of f that get a copy with no budget
// check, by entry, and every instruction's region by instruction. Only a
// region entered at a loop's head gets one, the code that runs again and
// again: code outside loops runs its few checks once a run, which its copy
// would spare at the cost of its size. A function split into parts, and a
// region holding a hoisted loop (whose fast copy checks nothing already)
// or too few checks on a pass through its loop to gain from a copy (one
// costs what the comparison does), gets none.
func (p *aotProgram) budgetRegions(f *aotFunc, loops map[int]*hoistLoop, split bool) (map[int]*budgetRegion, map[int]int) {
	// A depth-first search from the entry: back edges and a reverse
	// postorder, in which every other edge goes forward.
	state := make(map[int]int, len(f.body)) // 1 on the stack, 2 done
	back := map[[2]int]bool{}
	heads := map[int]bool{f.entry: true}
	loopHeads := map[int]bool{}
	post := make([]int, 0, len(f.body))
	type frame struct {
		pc    int
		succs []int
	}
	stack := []frame{{f.entry, p.successors(p.insns[f.entry])}}
	state[f.entry] = 1
	for len(stack) > 0 {
		top := &stack[len(stack)-1]
		if len(top.succs) == 0 {
			state[top.pc] = 2
			post = append(post, top.pc)
			stack = stack[:len(stack)-1]
			continue
		}
		s := top.succs[0]
		top.succs = top.succs[1:]
		switch state[s] {
		case 1:
			back[[2]int{top.pc, s}] = true
			heads[s], loopHeads[s] = true, true
		case 0:
			state[s] = 1
			stack = append(stack, frame{s, p.successors(p.insns[s])})
		}
	}
	// The regions, in reverse postorder: an instruction is in the region
	// of its predecessors when they share one.
	preds := map[int][]int{}
	for _, pc := range post {
		in := p.insns[pc]
		for _, s := range p.successors(in) {
			if !back[[2]int{pc, s}] {
				preds[s] = append(preds[s], pc)
			}
		}
		if in.op == runtime.OpCall && in.src == runtime.PseudoCall || in.op == runtime.OpCallx {
			heads[pc+in.slots] = true
		}
	}
	of := make(map[int]int, len(f.body))
	for i := len(post) - 1; i >= 0; i-- {
		pc := post[i]
		of[pc] = pc
		if heads[pc] {
			continue
		}
		r := of[preds[pc][0]]
		for _, q := range preds[pc][1:] {
			if of[q] != r {
				r = pc
			}
		}
		of[pc] = r
	}
	// Each instruction's longest path within its region, in postorder.
	longest := make(map[int]int, len(f.body))
	for _, pc := range post {
		in := p.insns[pc]
		n := 0
		for _, s := range p.successors(in) {
			if !back[[2]int{pc, s}] && of[s] == of[pc] && s != of[pc] {
				n = max(n, longest[s])
			}
		}
		longest[pc] = in.slots + n
	}
	regions := map[int]*budgetRegion{}
	// checks counts a region's checks (taken jumps, exits and calls);
	// passes those a pass through its loop may take: its jumps that stay
	// in it or go back to its entry (of[entry] is entry). A pass that
	// takes one check costs what the copy's comparison at the entry does,
	// so a region gains from a copy when passes may take two (a jump out
	// of the loop is taken once a run; a loop that falls back to its head
	// takes none there).
	checks, passes := map[int]int{}, map[int]int{}
	for _, pc := range f.body {
		r := regions[of[pc]]
		if r == nil {
			r = &budgetRegion{entry: of[pc], longest: longest[of[pc]]}
			regions[of[pc]] = r
		}
		r.pcs = append(r.pcs, pc)
		if in := p.insns[pc]; isJump(in.op) || in.op == runtime.OpExit || in.op == runtime.OpCallx || in.op == runtime.OpCall && in.src == runtime.PseudoCall {
			checks[r.entry]++
			if isJump(in.op) && of[in.target] == r.entry {
				passes[r.entry]++
			}
		}
	}
	copied := map[int]*budgetRegion{}
	if split {
		return copied, of
	}
	room := splitAbove - len(f.body)
	for _, e := range sortedKeys(regions) {
		r := regions[e]
		limit := maxRegionCopy
		if len(r.pcs) <= dispatchDensity*checks[e] {
			limit = maxDispatchCopy
		}
		ok := loopHeads[e] && passes[e] >= 2 && len(r.pcs) <= min(limit, room)
		for _, pc := range r.pcs {
			for _, l := range loops {
				if l.contains(pc) || l.entry == pc {
					ok = false
				}
			}
		}
		if ok {
			copied[e] = r
			room -= len(r.pcs)
		}
	}
	return copied, of
}

// proven names the label of instruction pc in the copy of its region
// that checks no budget.
func proven(pc int) string { return fmt.Sprintf("U%d", pc) }

// reentry names where a region's copy jumps back to its entry, deciding
// again between the copy and the checked code.
func reentry(pc int) string { return fmt.Sprintf("R%d", pc) }
