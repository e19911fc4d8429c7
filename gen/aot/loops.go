package aot

import (
	"fmt"
	"slices"

	"github.com/skelgen/skelgen/runtime"
)

// A hoisted loop is an innermost loop whose memory accesses through some
// base registers are proven in range once, before it starts, from the
// number of iterations its counter allows. The translation then emits the
// loop twice: a copy whose accesses through those bases index a span of
// the region directly, entered when the proof holds, and the checked loop,
// entered otherwise. Both copies run the same operations in the same order
// and charge the same budget; the fast one merely cannot fault on the
// accesses it was proven for, and since it is entered only when the budget
// covers every iteration the counter allows, it checks no budget and
// charges its back edge once, when it leaves the loop, from how far the
// counter went (a loop with no base at all gets the copy for this alone).
// So results, errors, the instruction of a fault and the budget all stay
// the interpreter's.
//
// The loops recognised are those clang makes of a counted loop:
//
//   - one back edge, the last instruction: jlt, jle or jne (64-bit,
//     unsigned; or 32-bit against an immediate, the counter stepped by
//     its only write, an add32, see is32 in hoistable) of a counter against an immediate or a register the loop
//     does not write, or jgt or jge of such a register against the counter
//     (clang's i < len), back to the head, or "jeq counter, bound" out of the
//     loop followed by "ja head" (what clang-19 emits for a constant trip
//     count); a jne or jeq loop is hoisted only when the counter starts
//     below the bound and meets it exactly, when it runs as the jlt loop;
//   - entered by falling into the head, and perhaps by jumps from outside
//     to the head (clang jumps there past a bound's clamp, if (len > MAX)
//     len = MAX; those jumps take the fast copy too); no call inside (a
//     helper may unmap memory), no inner loop; or a loop clang rotated,
//     entered by a jump into its body, whose ways back jump to a latch
//     placed before it that steps and tests the counter (see rotated):
//     its iteration runs the body, then the latch, whose jump forward to
//     the body is the back edge; a loop that control falls into may have
//     arms: code past the loop that only the loop's jumps reach and that
//     control leaves only back into the loop, as clang places the arms of
//     an if-else chain (see withArms);
//   - the counter and each hoisted base written in the loop only by one
//     "add reg, imm" (none for a base that stays put) that every iteration
//     reaching the back edge runs: no jump inside the loop passes over it;
//     a negative immediate counts down, which a counter may only in a jne
//     or jeq loop (clang's while (len--)), from above its bound, and a
//     base's span then ends where the base starts; or a base computed in
//     the loop as "mov rb, rA; add rb, rB" (clang's data + i), both run
//     by every iteration and the last writes of rb before each access, one
//     of rA and rB stepping as above and the other not written in the
//     loop;
//   - or a counter carried through a copy, as clang-19 writes
//     for (i = 0; i < n && i < MAX; i++): "mov counter, R" first in the
//     loop, its only write, and "mov R, counter; add R, s" the last writes
//     of R, run by every iteration; it steps by s at the head, from R - s
//     (not for jne and jeq loops);
//   - or a back edge testing not the counter but "mov T, Y; add T, c"
//     computed in the loop (the last writes of T), Y the counter or a
//     shadow of it, as clang-19 writes for (; i + 8 <= len; i += 8): the
//     test is then the counter's, offset (hoistLoop.testOff). A shadow is
//     a register whose only write in the loop is "mov X, counter" after
//     the counter's add: it steps with the counter, at the mov, provided
//     it equals the counter when the loop starts, which the fast copy's
//     guard checks;
//   - and, within such a loop, a base computed as a register d the loop
//     does not write plus a masked index, as clang writes
//     data[(i & 255) * 8]: the last write of the base rb before the
//     access is "add rb, rS", run by every iteration that reaches it, one
//     of rS and rb's value before it (rb copied from d by "mov rb, d") is
//     d, and the other an index whose last writes are an "and" or "and32"
//     of an immediate M, then perhaps copies, shifts and multiplications
//     by immediates (maskBound), all run by every iteration that reaches
//     the access. Whatever the index held before the mask, it is then at
//     most their bound B (M, (M << s), M * k: M need not be 2^k-1), so the
//     access [rb+off, +size) lies in [d+off, d+off+B+size) in every
//     iteration (hoistBase.masked). A mask in a register bounds nothing,
//     nor a negative 64-bit one (it keeps the index's high bits).
//
// With the counter starting at c0 below the bound K (step s), at most
// J = (K-c0-1)/s iterations follow the first (counting down from above
// K, (c0-K-1)/s; runtime.LoopTrips; a jump out of the loop testing the
// counter against another bound after its add gives another such J, and
// the least counts), so an
// access [base+off, +size) before the base's add (step t) reaches
// base0+off .. base0+off+t*J+size, one after it t more; the span of all of
// them is checked with runtime.Memory.SpanAt. A masked base's span,
// d+off .. d+off+B+size, does not depend on J: when its region is
// shorter, the checked loop runs, even if the program's own guards keep
// the index lower than B.
type hoistLoop struct {
	head, back int
	// order is the loop's instructions in the order an iteration runs
	// them, head first and back edge last, and pos their places in it:
	// the instructions from head to back edge, or for a rotated loop
	// (see findLoops) its body and then its latch.
	order []int
	pos   map[int]int
	// entry is the jump that enters a rotated loop at its head, -1 for a
	// loop that control falls into; latch is where a rotated loop's latch
	// starts in order.
	entry, latch int
	counter      uint8
	bound        string // the bound's Go expression (register or constant)
	inclusive    bool   // jle: the bound is K+1
	// exact: the loop goes on while the counter differs from the bound
	// (jne, or "jeq; ja" with the jeq leaving the loop). It then runs as
	// the jlt loop would only when the counter meets the bound exactly,
	// starting below it, which the fast copy's guard also requires.
	exact bool
	step  int64 // the counter's
	// exits are further bounds from jumps out of the loop on the counter
	// (jge or jgt after its add, run by every iteration), as clang tests
	// i < len beside a constant bound.
	exits []hoistBound
	bases []*hoistBase
	// fast are the accesses the spans cover, by instruction: only these
	// go unchecked in the fast copy.
	fast map[int]bool
	// lag is, by fast access, how far its base's value lags behind the
	// stepping register's count: the step, when the register's add comes
	// between the base's "add rb, rB" and the access, else 0.
	lag map[int]int64
	// at is, by fast access, its offset from its base's value at the head
	// in the first iteration (hoistBase.lo is the least of them).
	at map[int]int64
	// addAt is the counter's add: an iteration that leaves the loop
	// before it has not stepped the counter.
	addAt int
	// The counter's value at the head, before it steps: register start
	// less startOff (the counter itself, or for a counter clang carries
	// through a copy, the register it is copied from less the step).
	start    uint8
	startOff int64
	// consts are the registers the loop reads and does not write that hold
	// a 64-bit constant (an lddw's, beyond 32 bits) set in the code that
	// falls into the head: the fast copy passes them through
	// runtime.Opaque, so that Go keeps them in registers.
	consts []uint8
	// testOff: the back edge tests the counter plus testOff (a register
	// the loop computes from it, see hoistable), so that the trip count is
	// runtime.LoopTrips's from the counter's start plus testOff.
	testOff int64
	// shadows are the shadow registers (see above) the fast copy relies
	// on: the guard checks that each starts equal to its counter.
	shadows map[uint8]shadow
	// single: the loop's only way out is its test of the counter against
	// the bound, so it runs exactly the iterations the counter allows and
	// the fast copy charges every back edge before it starts.
	single bool
}

// hoistBound is a bound of a loop counter: the loop goes on while the
// counter is below it (inclusive: not above it).
type hoistBound struct {
	bound     string
	inclusive bool
}

// hoistBase is one base register of a hoisted loop and the span its
// accesses reach in the first iteration, relative to its value at the head.
type hoistBase struct {
	reg uint8
	// from are the registers whose sum at the head is the base's value
	// there, less its first step: the base itself, or rA and rB for a base
	// the loop computes as "mov rb, rA; add rb, rB" (an index added to a
	// pointer, as clang writes data[i]).
	from   []uint8
	step   int64
	lo, hi int64 // [lo, hi) in the first iteration
	write  bool  // some access stores: the span must be writable
	// by is the register of from that steps (the base itself, or the
	// index of "mov rb, rA; add rb, rB"), -1 for a base that stays put:
	// the fast copy counts how far it went since the head in o<by>, so
	// that an access finds its place in the span from that count alone.
	// byAt is where by steps: its add, or its mov for a shadow.
	by, byAt int
	// masked: the base is a register d the loop does not write (from is
	// d alone) plus a masked index, computed in the loop before each
	// access (see maskBound); hi includes the index's bound, and the
	// fast copy finds an access's place in the span from the base less d.
	masked bool
}

// findLoops returns f's hoistable loops by head: those whose back edge is
// their last instruction, and those clang rotated (see rotated).
func (p *aotProgram) findLoops(f *aotFunc) map[int]*hoistLoop {
	out := map[int]*hoistLoop{}
	jumpsTo := map[int][]int{} // the jumps to each target
	for _, pc := range f.body {
		in := p.insns[pc]
		if isJump(in.op) {
			jumpsTo[in.target] = append(jumpsTo[in.target], pc)
		}
	}
	for i, pc := range f.body {
		in := p.insns[pc]
		if !(isCondJump(in.op) && (in.class() == runtime.ClassJMP || in.class() == runtime.ClassJMP32) || in.op == runtime.OpJa) || in.target > pc {
			continue
		}
		// Entered by falling into the head, and from inside the loop
		// jumped to only by the back edge (hoistable checks that); every
		// instruction between head and back edge belongs to f.
		head := in.target
		hi := slices.Index(f.body, head)
		if hi > 0 && f.body[hi-1]+p.insns[f.body[hi-1]].slots == head && falls(p.insns[f.body[hi-1]]) && head != f.entry {
			if loop := f.body[hi : i+1]; len(loop) == countInsns(p, loop) {
				if l := p.hoistable(f, p.withArms(f, loop, jumpsTo), -1, jumpsTo); l != nil {
					out[l.head] = l
				}
			}
		}
		if in.op == runtime.OpJa {
			if loop, entry, latch := p.rotated(f, i, jumpsTo); loop != nil {
				if l := p.hoistable(f, loop, entry, jumpsTo); l != nil {
					l.latch = latch
					out[l.head] = l
				}
			}
		}
	}
	return out
}

// rotated returns the instructions, in the order an iteration runs them,
// of the loop that ends with the "ja" at body[i], when clang rotated
// it: a jump before lo enters the loop in its middle, at E, and the
// iteration runs the body E..body[i], whose ways back all jump into the
// latch lo..B (to lo, or past it where clang merged the tails of a
// switch's cases into the latch), then the latch, where B is the loop's
// back edge, a conditional jump
// forward to E; between B and E lies code outside the loop (its exit),
// which does not fall into E. clang-19 writes a loop over a buffer whose
// body is an if-else chain this way, for (i = 0; i < len && i < MAX; i++).
// It also returns the entry jump and where the latch starts in loop.
func (p *aotProgram) rotated(f *aotFunc, i int, jumpsTo map[int][]int) (loop []int, entry, latch int) {
	// The ja may jump into the latch past its start, where clang merged
	// the tails of a switch's cases into it: the latch starts after the
	// entry jump, reached by walking back over instructions that fall
	// through and are no jumps.
	li := slices.Index(f.body, p.insns[f.body[i]].target)
	for li > 0 {
		in := p.insns[f.body[li-1]]
		if isJump(in.op) || !falls(in) || in.op == runtime.OpCall || f.body[li-1]+in.slots != f.body[li] {
			break
		}
		li--
	}
	if li <= 0 || f.body[li] == f.entry {
		return nil, -1, 0
	}
	lo := f.body[li]
	in := p.insns[f.body[li-1]]
	head := in.target
	ei := slices.Index(f.body, head)
	if in.op != runtime.OpJa || head <= lo || ei < 0 || ei > i || len(jumpsTo[head]) != 2 || head == f.entry || falls(p.insns[f.body[ei-1]]) {
		return nil, -1, 0
	}
	bi := -1
	for k := li; k < ei; k++ {
		if x := p.insns[f.body[k]]; x.target == head && isCondJump(x.op) && (x.class() == runtime.ClassJMP || x.class() == runtime.ClassJMP32) {
			if bi >= 0 {
				return nil, -1, 0
			}
			bi = k
		}
	}
	if bi < 0 {
		return nil, -1, 0
	}
	body, tail := f.body[ei:i+1], f.body[li:bi+1]
	if len(body) != countInsns(p, body) || len(tail) != countInsns(p, tail) {
		return nil, -1, 0
	}
	return append(slices.Clip(body), tail...), in.pc, len(body)
}

// withArms returns the loop whose instructions from head to back edge are
// core together with its arms, in an order an iteration can run them: the
// code outside core that jumps from core reach, that control leaves only
// back into core and that nothing else reaches (clang places the arms of
// an if-else chain in a loop past the loop's exit, jumping back into its
// latch). The order is topological (every jump and fall-through goes
// forward in it, but the back edge, which comes last), keeps a
// fall-through adjacent where it can, and places an instruction that falls
// elsewhere before a jump target only, whose label the fast copy's goto
// takes (see fastLoop). With no arms, or none that fit, it returns core.
func (p *aotProgram) withArms(f *aotFunc, core []int, jumpsTo map[int][]int) []int {
	head, back := core[0], core[len(core)-1]
	set := map[int]bool{}
	for _, pc := range core {
		set[pc] = true
	}
	// arm returns the instructions outside set that control reaches from
	// t before it comes back into set, or nil when it can go elsewhere.
	arm := func(t int) map[int]bool {
		out := map[int]bool{}
		for work := []int{t}; len(work) > 0; work = work[1:] {
			x := work[0]
			in, ok := p.insns[x]
			if set[x] || out[x] {
				continue
			}
			if !ok || !f.inFn[x] || x == f.entry || x == back+p.insns[back].slots || in.op == runtime.OpExit || in.op == runtime.OpCall || in.op == runtime.OpCallx {
				return nil
			}
			out[x] = true
			work = append(work, p.successors(in)...)
		}
		return out
	}
	arms := false
	for _, pc := range core {
		if in := p.insns[pc]; pc != back && isJump(in.op) && !set[in.target] {
			if a := arm(in.target); a != nil {
				for x := range a {
					set[x] = true
				}
				arms = true
			}
		}
	}
	if !arms {
		return core
	}
	// Nothing outside falls into an arm.
	for i, pc := range f.body[:len(f.body)-1] {
		if nx := f.body[i+1]; set[nx] && !set[pc] && nx != head && falls(p.insns[pc]) && pc+p.insns[pc].slots == nx {
			return core
		}
	}
	// Kahn's order over the jumps and fall-throughs within the loop but
	// the back edge: the instruction the last one falls into when it is
	// ready, else the first ready one, the back edge only when nothing
	// else is.
	preds, succs := map[int]int{}, map[int][]int{}
	for x := range set {
		if x == back {
			continue
		}
		for _, s := range p.successors(p.insns[x]) {
			if set[s] {
				succs[x] = append(succs[x], s)
				preds[s]++
			}
		}
	}
	var ready, order []int
	for x := range set {
		if preds[x] == 0 {
			ready = append(ready, x)
		}
	}
	for len(ready) > 0 {
		slices.Sort(ready)
		i := 0
		if len(order) > 0 {
			last := p.insns[order[len(order)-1]]
			if k := slices.Index(ready, last.pc+last.slots); falls(last) && k >= 0 {
				i = k
			}
		}
		if ready[i] == back && len(ready) > 1 {
			i = 0
			if ready[0] == back {
				i = 1
			}
		}
		x := ready[i]
		ready = slices.Delete(ready, i, i+1)
		order = append(order, x)
		for _, s := range succs[x] {
			if preds[s]--; preds[s] == 0 {
				ready = append(ready, s)
			}
		}
	}
	if len(order) != len(set) || order[0] != head || order[len(order)-1] != back {
		return core // a cycle other than the back edge's, or code no path runs
	}
	for i, x := range order[:len(order)-1] {
		if in := p.insns[x]; falls(in) && order[i+1] != x+in.slots && len(jumpsTo[x+in.slots]) == 0 {
			return core
		}
	}
	return order
}

// hoistable checks the loop whose instructions are loop, in the order an
// iteration runs them (head first, back edge last), entered by the jump
// at entry (-1: by falling into the head, which the caller checked).
func (p *aotProgram) hoistable(f *aotFunc, loop []int, entry int, jumpsTo map[int][]int) *hoistLoop {
	back := p.insns[loop[len(loop)-1]]
	head := loop[0]
	pos := make(map[int]int, len(loop))
	for i, pc := range loop {
		pos[pc] = i
	}
	inside := func(pc int) bool { _, ok := pos[pc]; return ok }
	// before reports whether a runs before b in an iteration.
	before := func(a, b int) bool { return pos[a] < pos[b] }
	// test is the instruction that tests the counter against the bound:
	// the back edge itself, or for "jeq; ja" the jeq before it.
	test := back
	// counter and bound are the test's dst and src (or imm), swapped for
	// "jgt bound, counter" and "jge bound, counter" (clang's i < len).
	counter, boundReg := back.dst, back.src
	var inclusive, exact bool
	switch jmpOp(back.op) {
	case runtime.OpJltImm:
	case runtime.OpJleImm:
		inclusive = true
	case runtime.OpJneImm:
		exact = true
	case runtime.OpJgtImm, runtime.OpJgeImm:
		if back.op&8 == 0 {
			return nil
		}
		counter, boundReg = back.src, back.dst
		inclusive = jmpOp(back.op) == runtime.OpJgeImm
	case runtime.OpJa:
		if len(loop) < 2 || entry >= 0 {
			return nil
		}
		test = p.insns[loop[len(loop)-2]]
		if jmpOp(test.op) != runtime.OpJeqImm || test.class() != runtime.ClassJMP && test.class() != runtime.ClassJMP32 || test.target != back.pc+back.slots {
			return nil
		}
		counter, boundReg = test.dst, test.src
		exact = true
	default:
		return nil
	}
	// A 32-bit test (jmp32) compares the counter's low half. Such a
	// counter is hoisted when an "add32 counter, s" is its only write in
	// the loop and the bound an immediate with bound + s <= 2^32 (below
	// for the inclusive test): from a start below the bound, which the
	// fast copy's guard requires, the counter then stays below 2^32 and
	// steps as a 64-bit one would, so the 64-bit trip count holds.
	is32 := test.class() == runtime.ClassJMP32
	if is32 && (test.op&8 != 0 || test.imm < 0) {
		return nil
	}
	// No jump from outside lands inside, but the entry, or for a loop
	// control falls into, jumps to its head (see emitter.jumpedTo).
	for _, pc := range loop {
		for _, from := range jumpsTo[pc] {
			if !inside(from) && from != entry && (entry >= 0 || pc != head) {
				return nil
			}
		}
	}
	// defs counts the writes of each register in the loop; adds records
	// the single "add reg, imm" of each, with its position.
	defs := map[uint8]int{}
	type add struct {
		pc   int
		step int64
	}
	adds := map[uint8]add{}
	var add32 *add // the counter's "add32 counter, s" (is32)
	for _, pc := range loop {
		in := p.insns[pc]
		switch {
		case in.op == runtime.OpCall || in.op == runtime.OpCallx || in.op == runtime.OpExit:
			return nil
		case pc != back.pc && (isJump(in.op)) && inside(in.target) && !before(pc, in.target):
			return nil // an inner loop
		}
		for _, r := range p.effect(f, in).def.regs() {
			defs[r]++
		}
		if in.op == runtime.OpAddImm {
			adds[in.dst] = add{pc, int64(in.imm)}
		}
		if is32 && in.op == runtime.OpAdd32Imm && in.dst == counter {
			add32 = &add{pc, int64(in.imm)}
		}
	}
	if is32 {
		// The counter's only write is its add32, by a positive step, and
		// the bound plus a step stays within 32 bits.
		limit := int64(test.imm) + 1
		if inclusive {
			limit++
		}
		if add32 == nil || defs[counter] != 1 || add32.step <= 0 || limit+add32.step > 1<<32 {
			return nil
		}
	}
	// adjacent reports whether a falls into b.
	adjacent := func(a, b int) bool { in := p.insns[a]; return falls(in) && a+in.slots == b }
	// skipped reports whether some jump in the loop passes over pc, or a
	// fall-through to an instruction placed later (see withArms).
	skipped := func(at int) bool {
		for i, pc := range loop {
			in := p.insns[pc]
			if pc != back.pc && in.target >= 0 && (isJump(in.op)) {
				// A jump out of the loop ends it; only one that goes on
				// within the loop past the add would skip it.
				if inside(in.target) && before(pc, at) && before(at, in.target) {
					return true
				}
			}
			if nx := pc + in.slots; pc != back.pc && falls(in) && i+1 < len(loop) && loop[i+1] != nx && inside(nx) && before(pc, at) && before(at, nx) {
				return true
			}
		}
		return false
	}
	// A counter clang carries through a copy: "mov counter, R" first in
	// the loop, and "mov R, counter; add R, s" the last writes of R, or
	// "add R, s" its only write (R still equals the counter there), so
	// that each iteration's counter is the last one's plus s (clang-19's
	// for (i = 0; i < n && i < MAX; i++), and its nested
	// for (i = 0; i < N; i += 8) whose test reads the copy). It steps at
	// the head, from R - s before the first iteration.
	copied, copyFrom := int64(0), uint8(0)
	if first := p.insns[loop[0]]; !is32 && !exact && first.op == runtime.OpMovReg && first.off == 0 && first.dst == counter && first.src != counter && first.src != 10 && defs[counter] == 1 {
		r := first.src
		for i := len(loop) - 2; i >= 2; i-- {
			in := p.insns[loop[i]]
			if !p.effect(f, in).def.has(r) {
				continue
			}
			mv := p.insns[loop[i-1]]
			if in.op == runtime.OpAddImm && in.dst == r && in.imm > 0 && !skipped(in.pc) &&
				(adjacent(mv.pc, in.pc) && mv.op == runtime.OpMovReg && mv.off == 0 && mv.dst == r && mv.src == counter && !skipped(mv.pc) || defs[r] == 1) {
				copied, copyFrom = int64(in.imm), r
			}
			break
		}
	}
	// Shadows: "mov X, C" the only write of X, after the only write of C,
	// "add C, s", both run by every iteration.
	shadows := map[uint8]shadow{}
	for _, pc := range loop {
		in := p.insns[pc]
		if in.op != runtime.OpMovReg || in.off != 0 || in.dst == in.src || in.src == 10 || defs[in.dst] != 1 || defs[in.src] != 1 || skipped(pc) {
			continue
		}
		if a, ok := adds[in.src]; ok && a.step > 0 && before(a.pc, pc) && !skipped(a.pc) {
			shadows[in.dst] = shadow{in.src, pc, a.step}
		}
	}
	// steady returns the step of a register the loop writes only by one
	// add every iteration runs (0 for one it never writes), and where.
	steady := func(r uint8) (int64, int, bool) {
		if copied != 0 && r == counter {
			return copied, head, true
		}
		if is32 && r == counter {
			if skipped(add32.pc) {
				return 0, 0, false
			}
			return add32.step, add32.pc, true
		}
		if sh, ok := shadows[r]; ok {
			return sh.step, sh.pc, true
		}
		switch defs[r] {
		case 0:
			return 0, -1, true
		case 1:
			if a, ok := adds[r]; ok && !skipped(a.pc) {
				return a.step, a.pc, true
			}
		}
		return 0, 0, false
	}
	// A derived test: the back edge tests T, "mov T, Y; add T, c" the
	// last writes of T (earlier ones, such as T used as a base in the
	// body, do not matter), Y the counter C or a shadow of it. T is then
	// C at the head, plus the step when Y stepped before the mov, plus c.
	testOff, derived, testReg := int64(0), false, uint8(0)
	if t := counter; !is32 && !exact && copied == 0 && test == back && defs[t] >= 2 {
		i := len(loop) - 2
		for i >= 1 && !p.effect(f, p.insns[loop[i]]).def.has(t) {
			i--
		}
		if i < 1 {
			return nil
		}
		mv, ad := p.insns[loop[i-1]], p.insns[loop[i]]
		if !adjacent(mv.pc, ad.pc) || ad.op != runtime.OpAddImm || ad.dst != t || mv.op != runtime.OpMovReg || mv.off != 0 || mv.dst != t || mv.src == t || mv.src == 10 || skipped(mv.pc) || skipped(ad.pc) {
			return nil
		}
		y := mv.src
		c := y
		if sh, ok := shadows[y]; ok {
			c = sh.of
		}
		a, ok := adds[c]
		if !ok || defs[c] != 1 || a.step <= 0 || skipped(a.pc) {
			return nil
		}
		_, yAt, _ := steady(y)
		testOff = int64(ad.imm) - a.step
		if before(yAt, mv.pc) {
			testOff += a.step
		}
		counter, derived, testReg = c, true, y
	}
	l := &hoistLoop{head: head, back: back.pc, order: loop, pos: pos, entry: entry, counter: counter, inclusive: inclusive, exact: exact, testOff: testOff, fast: map[int]bool{}, lag: map[int]int64{}, at: map[int]int64{}}
	step, addAt, ok := steady(counter)
	if !ok || step == 0 || step < 0 && !exact {
		return nil // a counter counting down meets its bound exactly
	}
	// useShadow records a shadow the fast copy relies on: its guard
	// checks that it starts equal to its counter.
	useShadow := func(x uint8) {
		if sh, ok := shadows[x]; ok {
			if l.shadows == nil {
				l.shadows = map[uint8]shadow{}
			}
			l.shadows[x] = sh
		}
	}
	if derived {
		useShadow(testReg)
	}
	l.step, l.addAt = step, addAt
	l.start, l.startOff = counter, 0
	if copied != 0 {
		l.start, l.startOff = copyFrom, copied
	}
	for _, pc := range loop {
		in := p.insns[pc]
		if l.step < 0 || pc == back.pc || pc == test.pc || before(pc, addAt) || !isCondJump(in.op) || in.class() != runtime.ClassJMP || in.dst != l.counter || inside(in.target) || skipped(pc) {
			continue
		}
		var e hoistBound
		switch jmpOp(in.op) {
		case runtime.OpJgeImm:
		case runtime.OpJgtImm:
			e.inclusive = true
		default:
			continue
		}
		switch {
		case in.op&8 == 0 && in.imm >= 0:
			e.bound = u64(in.imm)
		case in.op&8 != 0 && in.src != 10 && defs[in.src] == 0:
			e.bound = regName(in.src)
		default:
			continue
		}
		l.exits = append(l.exits, e)
	}
	from := slices.Index(f.body, head) - 1
	if entry >= 0 {
		from = slices.Index(f.body, entry)
	}
	l.consts = p.loopConsts(f, from, loop, defs, jumpsTo)
	l.single = len(l.exits) == 0
	for _, pc := range loop {
		in := p.insns[pc]
		if pc != back.pc && pc != test.pc && isJump(in.op) && !inside(in.target) {
			l.single = false
		}
	}
	if exact && skipped(test.pc) {
		return nil // an iteration could pass over the test
	}
	if test.op&8 != 0 { // register bound
		if defs[boundReg] != 0 || boundReg == 10 || boundReg == counter {
			return nil
		}
		l.bound = regName(boundReg)
	} else {
		if test.imm < 0 {
			return nil
		}
		l.bound = u64(test.imm)
	}
	// baseOf describes base r as the access at pc sees it: its value there
	// in iteration j is the sum of from at the head plus step*j plus extra;
	// by is the register of from that steps (-1: none), byAt where it
	// steps, and lag how far the base lags behind its count (see
	// hoistLoop.lag).
	baseOf := func(r uint8, pc int) (step, extra int64, from []uint8, by, byAt int, lag int64, ok bool) {
		if t, at, ok := steady(r); ok {
			if at >= 0 && before(at, pc) {
				extra = t
			}
			by = int(r)
			if t == 0 {
				by = -1
			}
			return t, extra, []uint8{r}, by, at, 0, true
		}
		// mov r, rA; add r, rB, adjacent, run by every iteration, the last
		// writes of r before the access (a later write, such as a load
		// into r itself, is redone by the next iteration's mov first), with
		// one of rA and rB steady and the other not written by the loop.
		k := slices.Index(loop, pc)
		for i := k - 1; i > 0; i-- {
			x := loop[i]
			if !p.effect(f, p.insns[x]).def.has(r) {
				continue
			}
			mv, ad := p.insns[loop[i-1]], p.insns[x]
			if !adjacent(mv.pc, x) || mv.op != runtime.OpMovReg || mv.off != 0 || mv.dst != r || ad.op != runtime.OpAddReg || ad.dst != r {
				return 0, 0, nil, 0, 0, 0, false
			}
			m := mv.pc
			ra, rb := mv.src, ad.src
			if ra == r || rb == r || ra == 10 || rb == 10 || skipped(m) || skipped(x) {
				return 0, 0, nil, 0, 0, 0, false
			}
			ta, qa, okA := steady(ra)
			tb, qb, okB := steady(rb)
			// The stepping register, where the base reads it and where
			// it steps.
			by, read, at := -1, 0, 0
			switch {
			case !okA || !okB || (ta != 0 && tb != 0):
				return 0, 0, nil, 0, 0, 0, false
			case ta != 0:
				by, read, at = int(ra), m, qa
			case tb != 0:
				by, read, at = int(rb), x, qb
			}
			if by >= 0 {
				if before(at, read) {
					extra = ta + tb
				} else if before(at, pc) {
					lag = ta + tb
				}
			}
			return ta + tb, extra, []uint8{ra, rb}, by, at, lag, true
		}
		return 0, 0, nil, 0, 0, 0, false
	}
	// lastWrite returns the position in loop of the last write of r
	// before position k, when every iteration that reaches k runs it: -1
	// when there is none (r then holds what an earlier iteration, or the
	// code before the loop, left) or a jump in the loop passes over it.
	lastWrite := func(r uint8, k int) int {
		for i := k - 1; i >= 0; i-- {
			if x := loop[i]; p.effect(f, p.insns[x]).def.has(r) {
				if skipped(x) {
					return -1
				}
				return i
			}
		}
		return -1
	}
	// maskedBase describes base r as the access at position k sees it
	// when its last write is "add r, rS" (run by every iteration) of a
	// register d the loop does not write and an index that the loop
	// bounds (see maskBound): r's value before the add or rS, the other
	// being d, or r copied from d by "mov r, d". The access then reaches
	// d+off .. d+off+bound+size, wherever the index is.
	maskedBase := func(r uint8, k int) (d uint8, bound int64, ok bool) {
		i := lastWrite(r, k)
		if i < 0 {
			return 0, 0, false
		}
		ad := p.insns[loop[i]]
		if ad.op != runtime.OpAddReg || ad.src == r || ad.src == 10 {
			return 0, 0, false
		}
		put := func(x uint8) bool { return x != 10 && defs[x] == 0 }
		if put(ad.src) {
			n, ok := p.maskBound(f, loop, lastWrite, r, i)
			return ad.src, n, ok
		}
		j := lastWrite(r, i)
		if j < 0 {
			return 0, 0, false
		}
		mv := p.insns[loop[j]]
		if mv.op != runtime.OpMovReg || mv.off != 0 || !put(mv.src) {
			return 0, 0, false
		}
		n, ok := p.maskBound(f, loop, lastWrite, ad.src, i)
		return mv.src, n, ok
	}
	bases := map[uint8]*hoistBase{}
	var order []uint8
	for _, pc := range loop {
		in := p.insns[pc]
		base, size, write, ok := spanAccess(f, in)
		if !ok {
			continue
		}
		t, extra, from, by, byAt, lag, ok := baseOf(base, pc)
		masked, bound := false, int64(0)
		if !ok {
			// A masked index added to a register the loop does not
			// write: the access reaches at most bound bytes past it.
			d, n, ok := maskedBase(base, pos[pc])
			if !ok {
				continue
			}
			t, extra, from, by, byAt, lag = 0, 0, []uint8{d}, -1, -1, 0
			masked, bound = true, n
		}
		lo := int64(in.off) + extra
		b := bases[base]
		if b == nil {
			b = &hoistBase{reg: base, from: from, step: t, lo: lo, hi: lo + size + bound, by: by, byAt: byAt, masked: masked}
			bases[base] = b
			order = append(order, base)
		} else if b.step != t || !slices.Equal(b.from, from) || b.by != by || b.masked != masked {
			continue // computed otherwise here: this access stays checked
		}
		b.lo, b.hi, b.write = min(b.lo, lo), max(b.hi, lo+size+bound), b.write || write
		l.fast[pc] = true
		l.lag[pc], l.at[pc] = lag, lo
	}
	// Each base's span, [lo, hi) plus its steps, is at least as long as
	// any access through it, which runtime.SpanLoad64 and friends rely on.
	for _, r := range order {
		l.bases = append(l.bases, bases[r])
		for _, x := range bases[r].from {
			useShadow(x)
		}
	}
	return l
}

// maxMaskBound bounds the indices maskBound accepts: a span lies in one
// region, of at most 4 GiB.
const maxMaskBound = 1 << 32

// maskBound returns a bound on the value of register r just before
// position k of loop (the instructions in the order an iteration runs
// them), from the last writes of the registers it is computed from, as
// lastWrite finds them (-1: not run by every iteration that reaches k, or
// none in the iteration): an "and" or "and32" with an immediate (not
// negative for the 64-bit and, which sign-extends it), after which the
// value is at most the immediate whatever it was before, then any of
// copies (mov, mov32), shifts by an immediate (lsh, rsh and their 32-bit
// forms) and multiplications by an immediate (mul, mul32), when the bound
// they give does not wrap (below 2^32 for the 32-bit forms, which
// zero-extend their result, and at most maxMaskBound). A mask in a
// register bounds nothing here.
func (p *aotProgram) maskBound(f *aotFunc, loop []int, lastWrite func(r uint8, k int) int, r uint8, k int) (int64, bool) {
	i := lastWrite(r, k)
	if i < 0 {
		return 0, false
	}
	in := p.insns[loop[i]]
	if in.off != 0 || in.dst != r {
		return 0, false
	}
	const max32 = 1<<32 - 1
	// from is the bound of the instruction's input: r's, or mov's source.
	from := func(x uint8) (int64, bool) { return p.maskBound(f, loop, lastWrite, x, i) }
	var n int64
	switch in.op {
	case runtime.OpAndImm:
		if in.imm < 0 {
			return 0, false
		}
		return int64(in.imm), true
	case runtime.OpAnd32Imm:
		return int64(uint32(in.imm)), true
	case runtime.OpMovReg, runtime.OpMov32Reg:
		if in.src == 10 {
			return 0, false
		}
		b, ok := from(in.src)
		if !ok {
			return 0, false
		}
		if in.op == runtime.OpMov32Reg {
			b = min(b, max32)
		}
		return b, true
	case runtime.OpLshImm, runtime.OpRshImm, runtime.OpMulImm, runtime.OpLsh32Imm, runtime.OpRsh32Imm, runtime.OpMul32Imm:
		// The 32-bit forms take the low halves of the index and the
		// immediate, and their result must fit in 32 bits.
		b, ok := from(r)
		k, width, limit := int64(in.imm), int64(64), int64(maxMaskBound)
		if in.class() == runtime.ClassALU {
			k, width, limit = int64(uint32(in.imm)), 32, max32
			b = min(b, max32)
		}
		if !ok || k < 0 {
			return 0, false
		}
		switch aluOp(in.op) {
		case runtime.OpLshImm:
			if k >= width || b > limit>>k {
				return 0, false
			}
			n = b << k
		case runtime.OpRshImm:
			if k >= width {
				return 0, false
			}
			n = b >> k
		default:
			if k != 0 && b > limit/k {
				return 0, false
			}
			n = b * k
		}
	default:
		return 0, false
	}
	if n > maxMaskBound {
		return 0, false
	}
	return n, true
}

// A shadow is a register whose only write in a loop is "mov X, C" after
// C's add (see hoistLoop): it steps by step at pc, the mov.
type shadow struct {
	of   uint8
	pc   int
	step int64
}

// contains reports whether the instruction at pc belongs to the loop.
func (l *hoistLoop) contains(pc int) bool {
	_, ok := l.pos[pc]
	return ok
}

// arms returns the first and last instruction of l outside its head to
// back edge (see withArms), -1 when there are none.
func (l *hoistLoop) arms() (lo, hi int) {
	lo, hi = -1, -1
	for _, pc := range l.order {
		if l.entry < 0 && (pc < l.head || pc > l.back) {
			if lo < 0 || pc < lo {
				lo = pc
			}
			hi = max(hi, pc)
		}
	}
	return lo, hi
}

// base returns the hoisted base of register r.
func (l *hoistLoop) base(r uint8) *hoistBase {
	for _, b := range l.bases {
		if b.reg == r {
			return b
		}
	}
	panic(fmt.Sprintf("aot: r%d is no hoisted base", r))
}

// loopConsts returns the registers the loop (instructions loop) reads and
// does not write whose value at the head is a 64-bit constant beyond 32
// bits, set by an lddw in the straight-line code that leads into the head,
// body[from] and before it (the walk back stops at a jump target).
func (p *aotProgram) loopConsts(f *aotFunc, from int, loop []int, defs map[uint8]int, jumpsTo map[int][]int) []uint8 {
	var read regset
	for _, pc := range loop {
		read |= p.effect(f, p.insns[pc]).use
	}
	var out []uint8
	var seen regset
	for i := from; i >= 0; i-- {
		in := p.insns[f.body[i]]
		for _, r := range p.effect(f, in).def.regs() {
			if seen.has(r) {
				continue
			}
			seen |= reg(r)
			if in.class() == runtime.ClassLD && !in.pseudo && int64(in.imm64) != int64(int32(in.imm64)) && read.has(r) && defs[r] == 0 {
				out = append(out, r)
			}
		}
		if len(jumpsTo[in.pc]) > 0 || in.pc == f.entry || i > 0 && !falls(p.insns[f.body[i-1]]) {
			break
		}
	}
	slices.Sort(out)
	return out
}

// countsByCounter reports whether some base of l other than views finds
// its place from the counter's distance from c0 (see hoistBase.by).
func (l *hoistLoop) countsByCounter(views map[uint8]bool) bool {
	for _, b := range l.bases {
		if b.by >= 0 && uint8(b.by) == l.counter && !views[b.reg] {
			return true
		}
	}
	return false
}

// countInsns counts the instructions from the first to the last of pcs,
// so that comparing with len(pcs) tells whether pcs is every instruction
// between them.
func countInsns(p *aotProgram, pcs []int) int {
	n := 0
	for pc := pcs[0]; pc <= pcs[len(pcs)-1]; pc += p.insns[pc].slots {
		n++
	}
	return n
}

func regName(r uint8) string { return "r" + string(rune('0'+r)) }

// spanAccess reports whether in is an access a span can cover: a load whose
// value is used or a plain store, through a base other than r10 and
// outside the frame's constant slots (those index the frame directly),
// with its base, size and whether it writes.
func spanAccess(f *aotFunc, in *aotInsn) (base uint8, size int64, write, ok bool) {
	switch c := in.class(); {
	case c == runtime.ClassLDX && f.liveOut[in.pc].has(in.dst):
		base = in.src
	case (c == runtime.ClassST || c == runtime.ClassSTX) && !isAtomic(in.op):
		base, write = in.dst, true
	default:
		return 0, 0, false, false
	}
	size = int64(sizeOf(in.op))
	if base == 10 || inFrame(base, in.off, int(size)) {
		return 0, 0, false, false
	}
	return base, size, write, true
}
