package aot

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/skelgen/skelgen/runtime"
)

// TestBudgetAtForwardJumps runs programs whose taken forward jumps go on
// through register operations only before the next jump, call or exit
// (nothing observable in between), with every budget from 1 up to what
// the program needs: an unconditional jump, a conditional one, two in a
// row, jumps out of an if-else chain in a loop, a compare tree emitted as
// a switch, and an early exit from a hoisted loop. The interpreter fails
// at the first control transfer the budget does not cover; the
// translation must name the same instruction, as well as leave the same
// r0 and memory.
func TestBudgetAtForwardJumps(t *testing.T) {
	progs := []struct{ name, asm string }{
		{"ja", "mov %r0, 1\nja over\nmov %r0, 2\nover:\nadd %r0, 3\nexit"},
		{"jgt", "mov %r0, 1\nldxb %r2, [%r1]\njgt %r2, 7, over\nmov %r0, 2\nover:\nadd %r0, 3\nexit"},
		{"two_in_a_row", "mov %r0, 1\nja a\nmov %r0, 2\na:\nadd %r0, 3\nja b\nmov %r0, 4\nb:\nmul %r0, 5\nstxdw [%r1], %r0\nexit"},
		{"if_else_loop", "mov %r0, 0\nmov %r7, 0\nloop:\nmov %r2, %r7\nand %r2, 3\njeq %r2, 0, zero\njeq %r2, 1, one\nadd %r0, 5\nja next\n" +
			"zero:\nadd %r0, 1\nja next\none:\nxor %r0, 3\nnext:\nadd %r7, 1\njlt %r7, 20, loop\nexit"},
		{"tree", "mov %r0, 0\nmov %r7, 0\nloop:\nmov %r2, %r7\nand %r2, 15\njgt %r2, 7, hi\njgt %r2, 3, m1\njgt %r2, 1, m2\nadd %r0, 1\nja next\n" +
			"m2:\nadd %r0, 2\nja next\nm1:\njgt %r2, 5, m3\nadd %r0, 3\nja next\nm3:\nadd %r0, 4\nja next\n" +
			"hi:\njgt %r2, 11, h1\njgt %r2, 9, h2\nadd %r0, 5\nja next\nh2:\nmul %r0, 3\nja next\nh1:\njgt %r2, 13, h3\nadd %r0, 7\nja next\nh3:\nxor %r0, 9\nnext:\nadd %r7, 1\njlt %r7, 12, loop\nexit"},
		{"loop_exit", "mov %r0, 0\nmov %r3, 0\nloop:\nmov %r5, %r1\nadd %r5, %r3\nldxb %r4, [%r5]\njeq %r4, 0, out\nadd %r0, %r4\nadd %r3, 1\njlt %r3, 32, loop\nout:\nadd %r0, 1\nexit"},
	}
	var cases []aotCase
	for _, p := range progs {
		insns := assembleInsns(t, p.name, p.asm)
		if p.name == "tree" && !strings.Contains(translateSource(t, p.name, insns), "as a switch") {
			t.Errorf("%s: the tree is not emitted as a switch", p.name)
		}
		mem := make([]byte, 64)
		for i := range mem {
			mem[i] = byte(i*37 + 11)
		}
		mem[20] = 0 // loop_exit leaves at byte 20
		for budget := uint64(1); budget <= 160; budget++ {
			cases = append(cases, aotCase{Name: fmt.Sprintf("%s/budget=%d", p.name, budget), Insns: insns, Mem: mem, Setup: "fuzz", Budget: budget})
		}
	}
	res := runAgreement(t, cases, true)
	budget := 0
	for _, l := range res.Lines {
		if d := l.disagreement(true); d != "" {
			t.Errorf("%s: %s", l.Name, d)
			continue
		}
		if strings.Contains(l.Interp.Err, "budget") {
			budget++
		}
		if l.Interp.Err != l.AOT.Err {
			t.Errorf("%s: interpreter %q, translation %q", l.Name, l.Interp.Err, l.AOT.Err)
		}
	}
	if budget == 0 {
		t.Error("no run ran out of budget")
	}
}

// dispatchProgram is random program i of seed: a loop of a few
// iterations around a compare tree (a switch) or an if-else chain on a
// register loaded from the context, whose arms do random arithmetic and
// memory accesses, some calling a function, inside another loop now and
// then; the counter steps by one or two, so that the hoister takes none of
// them and the budget regions alone decide where the budget is checked.
func dispatchProgram(seed uint64, i int) aotCase {
	g := &progGen{rnd: rand.New(rand.NewPCG(seed, uint64(i))), nfuncs: 2, funcs: make([]int, 2)}
	g.emit(runtime.Instruction{Opcode: runtime.OpMovReg, Dst: 6, Src: 1})
	g.emit(runtime.Instruction{Opcode: runtime.OpMovImm, Dst: 8, Imm: int32(2 + g.rnd.IntN(10))})
	outer := g.rnd.IntN(3) == 0
	if outer {
		g.emit(runtime.Instruction{Opcode: runtime.OpMovImm, Dst: 9, Imm: 2})
	}
	top, inner, next := g.newLabel(), g.newLabel(), g.newLabel()
	g.place(top)
	g.place(inner)
	g.inLoop = true
	g.emit(runtime.Instruction{Opcode: runtime.OpLdxb, Dst: 2, Src: 6, Offset: int16(g.rnd.IntN(genCtxSize))})
	g.emit(runtime.Instruction{Opcode: runtime.OpAddReg, Dst: 2, Src: 8})
	arm := func() {
		for range 1 + g.rnd.IntN(3) {
			switch k := g.rnd.IntN(10); {
			case k < 6:
				g.alu()
			case k < 9:
				g.memory()
			default:
				g.items = append(g.items, genItem{in: runtime.Instruction{Opcode: runtime.OpCall, Src: runtime.PseudoCall}, jumpTo: -1, callTo: 1, funcAt: -1})
			}
		}
	}
	if g.rnd.IntN(2) == 0 {
		g.emit(runtime.Instruction{Opcode: runtime.OpAndImm, Dst: 2, Imm: 31})
		g.treeSplit(2, runtime.Opcode(runtime.ClassJMP), 0, 20+g.rnd.IntN(12), next)
	} else {
		for k := range 3 + g.rnd.IntN(6) {
			other := g.newLabel()
			g.jump(runtime.Instruction{Opcode: runtime.OpJgtImm, Dst: 2, Imm: int32(8*k + g.rnd.IntN(8))}, other)
			arm()
			g.jump(runtime.Instruction{Opcode: runtime.OpJa}, next)
			g.place(other)
		}
		arm()
	}
	g.place(next)
	g.emit(runtime.Instruction{Opcode: runtime.OpSubImm, Dst: 8, Imm: int32(1 + g.rnd.IntN(2))})
	g.jump(runtime.Instruction{Opcode: runtime.OpJsgtImm, Dst: 8}, inner)
	if outer {
		g.emit(runtime.Instruction{Opcode: runtime.OpMovImm, Dst: 8, Imm: 3})
		g.emit(runtime.Instruction{Opcode: runtime.OpSubImm, Dst: 9, Imm: 1})
		g.jump(runtime.Instruction{Opcode: runtime.OpJneImm, Dst: 9}, top)
	}
	g.emit(runtime.Instruction{Opcode: runtime.OpExit})
	// The function the arms call: a few statements, forward jumps
	// included.
	g.inLoop, g.fn, g.funcs[1] = false, 1, len(g.items)
	end := g.newLabel()
	for range 2 + g.rnd.IntN(3) {
		g.statement(func() int { return end })
	}
	g.place(end)
	g.emit(runtime.Instruction{Opcode: runtime.OpMovImm, Dst: 0, Imm: g.imm()})
	g.emit(runtime.Instruction{Opcode: runtime.OpExit})
	mem := make([]byte, genCtxSize)
	for j := range mem {
		mem[j] = byte(g.rnd.Uint32())
	}
	return aotCase{Name: fmt.Sprintf("dispatch_%d_%d", seed, i), Insns: g.resolve(), Mem: mem, Setup: "fuzz"}
}

// TestBudgetSweepDispatch runs random loops around a switch or an if-else
// chain (dispatchProgram) with every budget from 1 to past what they need:
// whether a region's proven copy or its checked code runs, the translation
// must fail at the instruction the interpreter fails at, with the same r0
// and memory, and leave the same budget when it does not fail.
func TestBudgetSweepDispatch(t *testing.T) {
	const programs, budgets = 24, 400
	var cases []aotCase
	for i := range programs {
		c := dispatchProgram(7, i)
		for b := uint64(1); b <= budgets; b++ {
			c.Budget = b
			c.Name = fmt.Sprintf("dispatch_7_%d/budget=%d", i, b)
			cases = append(cases, c)
		}
	}
	proven := 0
	res := runEdited(t, cases, false, func(src []byte) []byte {
		proven = strings.Count(string(src), "run their copy that checks none")
		return src
	})
	if proven < programs/2 {
		t.Errorf("%d proven copies in %d programs", proven, programs)
	}
	classes := map[string]int{}
	for i, l := range res.Lines {
		classes[errorClass(l.Interp.Err)]++
		if d := l.disagreement(false); d != "" {
			t.Errorf("%s: %s\nprogram:\n%s", l.Name, d, disasmCase(cases[i]))
		}
	}
	if classes["budget"] == 0 || classes["ok"] == 0 {
		t.Errorf("the budgets do not sweep across the programs' needs: %s", summary(classes))
	}
	t.Logf("%d proven copies; %s", proven, summary(classes))
}

// TestProvenCopyChecksNothing: in a loop the hoister does not take (its
// counter steps by a register) around a compare tree or an if-else chain,
// the copy that runs when the budget covers the loop's body checks the
// budget nowhere, neither at the forward jumps of its arms nor at its back
// edge; the guard before it compares once. A 32-way switch, longer than
// maxRegionCopy but dense in checks, gets its copy; a loop as long that
// checks at only a few places does not, nor does a loop whose passes take
// one check only.
func TestProvenCopyChecksNothing(t *testing.T) {
	// rotated is a loop entered at its test, body in its body.
	rotated := func(body string) string {
		return "mov %r0, 0\nmov %r7, 0\nja test\nloop:\nmov %r3, %r1\nadd %r3, %r7\nldxb %r2, [%r3]\n" + body +
			"add %r0, %r2\nand %r2, 1\nadd %r7, %r2\ntest:\nadd %r7, 1\njlt %r7, 60, loop\nexit"
	}
	const head = "mov %r0, 0\nmov %r7, 0\nloop:\nmov %r3, %r1\nadd %r3, %r7\nldxb %r2, [%r3]\n"
	const tail = "next:\nand %r2, 1\nadd %r7, %r2\nadd %r7, 1\njlt %r7, 60, loop\nexit"
	// tree is a compare tree on r2 over lo..hi whose leaves do arithmetic.
	var tree func(lo, hi int) string
	tree = func(lo, hi int) string {
		if lo == hi {
			return fmt.Sprintf("mul %%r0, %d\nadd %%r0, %d\nja next\n", lo+3, lo)
		}
		mid := (lo + hi) / 2
		return fmt.Sprintf("jgt %%r2, %d, t%d\n", mid, mid+1) + tree(lo, mid) + fmt.Sprintf("t%d:\n", mid+1) + tree(mid+1, hi)
	}
	progs := []struct {
		name, asm    string
		long, copied bool // longer than maxRegionCopy; copied
	}{
		{"if_else", head + "jgt %r2, 15, a\nadd %r0, %r2\nja next\n" +
			"a:\njgt %r2, 63, b\nxor %r0, 7\nja next\nb:\njgt %r2, 127, c\nmul %r0, 3\nja next\nc:\nsub %r0, %r2\n" + tail, false, true},
		{"switch", head + "and %r2, 15\njgt %r2, 7, hi\njgt %r2, 3, m1\njgt %r2, 1, m2\nadd %r0, 1\nja next\n" +
			"m2:\nadd %r0, 2\nja next\nm1:\njgt %r2, 5, m3\nadd %r0, 3\nja next\nm3:\nadd %r0, 4\nja next\n" +
			"hi:\njgt %r2, 11, h1\njgt %r2, 9, h2\nadd %r0, 5\nja next\nh2:\nmul %r0, 3\nja next\nh1:\njgt %r2, 13, h3\nadd %r0, 7\nja next\nh3:\nxor %r0, 9\n" + tail, false, true},
		{"switch32", head + "and %r2, 31\n" + tree(0, 31) + tail, true, true},
		{"long_sparse", head + "jgt %r2, 15, a\n" + strings.Repeat("add %r0, %r2\nxor %r0, 5\n", 60) + "a:\nmul %r0, 3\n" + tail, true, false},
		// Rotated loops: control enters at the test, and the body falls
		// back into it. One taken jump a pass (the test's) costs what the
		// copy's comparison does; with an if in the body, two may.
		{"rotated_one_check", rotated(""), false, false},
		{"rotated_two_checks", rotated("jgt %r2, 15, big\nadd %r0, %r2\nbig:\n"), false, true},
	}
	for _, p := range progs {
		insns := assembleInsns(t, p.name, p.asm)
		if p.long != (len(insns) > maxRegionCopy) {
			t.Fatalf("%s: %d instructions against maxRegionCopy %d", p.name, len(insns), maxRegionCopy)
		}
		src := translateSource(t, p.name, insns)
		if strings.Contains(src, "LoopTrips") {
			t.Fatalf("%s: the hoister takes the loop:\n%s", p.name, src)
		}
		guard := strings.Index(src, "run their copy that checks none")
		copyAt := strings.Index(src, "\nU")
		if !p.copied {
			if guard >= 0 || copyAt >= 0 {
				t.Errorf("%s: a proven copy of a loop that checks too few times to gain from it:\n%s", p.name, src)
			}
			continue
		}
		if guard < 0 || copyAt < 0 {
			t.Errorf("%s: no proven copy:\n%s", p.name, src)
			continue
		}
		if n := strings.Count(src[copyAt:], "CheckBudget"); n != 0 {
			t.Errorf("%s: the proven copy checks the budget %d times:\n%s", p.name, n, src[copyAt:])
		}
	}
}

// armsProgram is random program i of seed: a loop counted by r8 over
// data + r8 (r5) whose body branches to arms placed past the loop's exit,
// as clang places the arms of an if-else chain; the arms do random
// arithmetic and accesses and jump back into the latch, at its start or
// past it, or into the tail of an earlier arm. The accesses through r5
// stay within the context unless an arm moved r5. Now and then an arm
// leaves the program instead, and the loop is no loop with arms.
func armsProgram(seed uint64, i int) aotCase {
	g := &progGen{rnd: rand.New(rand.NewPCG(seed, uint64(i))), nfuncs: 1, funcs: make([]int, 1), inLoop: true}
	g.emit(runtime.Instruction{Opcode: runtime.OpMovReg, Dst: 6, Src: 1})
	g.emit(runtime.Instruction{Opcode: runtime.OpMovImm, Dst: 8, Imm: int32(g.rnd.IntN(4))})
	back := runtime.Instruction{Opcode: []runtime.Opcode{runtime.OpJltImm, runtime.OpJleImm, runtime.OpJneImm}[g.rnd.IntN(3)], Dst: 8, Imm: int32(40 + g.rnd.IntN(20))}
	loop, latch, mid := g.newLabel(), g.newLabel(), g.newLabel()
	g.place(loop)
	g.emit(runtime.Instruction{Opcode: runtime.OpMovReg, Dst: 5, Src: 6})
	g.emit(runtime.Instruction{Opcode: runtime.OpAddReg, Dst: 5, Src: 8})
	g.emit(runtime.Instruction{Opcode: runtime.OpLdxb, Dst: 2, Src: 5, Offset: int16(g.rnd.IntN(4))})
	arms := make([]int, 2+g.rnd.IntN(5))
	for k := range arms {
		arms[k] = g.newLabel()
		g.jump(runtime.Instruction{Opcode: runtime.OpJgtImm, Dst: 2, Imm: int32(255 - 256*(k+1)/(len(arms)+1))}, arms[k])
		if g.rnd.IntN(2) == 0 {
			g.alu()
		}
	}
	g.place(latch)
	g.alu()
	g.place(mid)
	g.emit(runtime.Instruction{Opcode: runtime.OpAddImm, Dst: 8, Imm: 1})
	g.jump(back, loop)
	g.emit(runtime.Instruction{Opcode: runtime.OpExit})
	var tails []int
	for k := range arms {
		g.place(arms[k])
		g.alu()
		tail := g.newLabel()
		g.place(tail)
		tails = append(tails, tail)
		for range 1 + g.rnd.IntN(3) {
			if g.rnd.IntN(2) == 0 {
				g.alu()
			} else {
				g.access(5, int16(g.rnd.IntN(4)))
			}
		}
		switch r := g.rnd.IntN(12); {
		case r == 0:
			g.emit(runtime.Instruction{Opcode: runtime.OpExit})
		case r < 5 && k > 0:
			g.jump(runtime.Instruction{Opcode: runtime.OpJa}, tails[g.rnd.IntN(k)])
		default:
			g.jump(runtime.Instruction{Opcode: runtime.OpJa}, []int{latch, mid}[g.rnd.IntN(2)])
		}
	}
	mem := make([]byte, genCtxSize)
	for j := range mem {
		mem[j] = byte(g.rnd.Uint32())
	}
	return aotCase{Name: fmt.Sprintf("arms_%d_%d", seed, i), Insns: g.resolve(), Mem: mem, Setup: "fuzz"}
}

// TestBudgetSweepArms runs random loops with arms (armsProgram) with
// budgets from 1 to past what they need: whether the fast copy of a loop with its arms runs or the
// checked loop, the translation must fail at the instruction the
// interpreter fails at, with the same r0 and memory, and leave the same
// budget when it does not fail. Most loops must be hoisted with their
// arms.
func TestBudgetSweepArms(t *testing.T) {
	const programs = 24
	var cases []aotCase
	for i := range programs {
		c := armsProgram(3, i)
		for b := uint64(1); b <= 4000; b += 11 {
			c.Budget = b
			c.Name = fmt.Sprintf("arms_3_%d/budget=%d", i, b)
			cases = append(cases, c)
		}
	}
	hoisted := 0
	res := runEdited(t, cases, false, func(src []byte) []byte {
		hoisted = strings.Count(string(src), "with their arms at")
		return src
	})
	if hoisted < programs/2 {
		t.Errorf("%d of %d loops hoisted with their arms", hoisted, programs)
	}
	classes := map[string]int{}
	for i, l := range res.Lines {
		classes[errorClass(l.Interp.Err)]++
		if d := l.disagreement(false); d != "" {
			t.Errorf("%s: %s\nprogram:\n%s", l.Name, d, disasmCase(cases[i]))
		}
	}
	if classes["budget"] == 0 || classes["ok"] == 0 || classes["memory"] == 0 {
		t.Errorf("the runs do not reach every outcome: %s", summary(classes))
	}
	t.Logf("%d loops hoisted with their arms; %s", hoisted, summary(classes))
}
