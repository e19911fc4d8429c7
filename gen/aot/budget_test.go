package aot

import (
	"fmt"
	"strings"
	"testing"
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
