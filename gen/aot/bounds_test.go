package aot

import (
	"fmt"
	"strings"
	"testing"
)

// TestTailLoads runs byte-code-like loops that check each access against
// the end of the buffer they were given, as clang writes them for the
// verifier: p = data + (u32)pc; if (p + 3 > data + len) exit; then reads
// at p. Those whose loads the comparison proves inside the buffer read
// them from its tail (runtime.TailLoad8) in the copy without budget
// checks; those it does not prove (a load past the checked bytes or below
// the buffer, a comparison with the end plus a constant or in 32 bits, an
// index made again after the check, a length the program changed) stay
// checked. The buffer is 64 bytes, and the
// length passed 64, 40 or 100: past the region, the copy's guard sends
// the run to the checked code, which faults where the interpreter does.
// Every budget up to past the runs' needs; both engines must agree.
func TestTailLoads(t *testing.T) {
	// loop is the parser's body: r1 the buffer, r2 its length; r3 the
	// index, r4 the end, r8 the fuel. check, reads and step are its
	// parts; ptr makes r6, the pointer, from r5, the index.
	loop := func(ptr, check, reads string) string {
		return "mov %r0, 1\nmov32 %r3, 0\nmov %r4, %r1\nadd %r4, %r2\nmov %r8, 200\n" +
			"loop:\nmov32 %r5, %r3\n" + ptr + check + reads +
			"jgt32 %r9, 100, skip\nadd %r0, %r7\nskip:\nxor %r0, %r9\nmul %r0, 33\n" +
			"add32 %r3, %r9\nadd32 %r3, 1\nand32 %r3, 127\nsub %r8, 1\njsgt %r8, 0, loop\nout:\nexit"
	}
	const (
		ptr    = "mov %r6, %r1\nadd %r6, %r5\n"
		check3 = "mov %r7, %r6\nadd %r7, 3\njgt %r7, %r4, out\n"
		reads  = "ldxb %r9, [%r6]\nldxb %r7, [%r6+1]\nldxb %r5, [%r6+2]\nadd %r7, %r5\n"
	)
	progs := []struct {
		name, body string
		tail       int // the loads read from the tail
	}{
		{"checked", loop(ptr, check3, reads), 3},
		{"end_first", loop(ptr, "mov %r7, %r6\nadd %r7, 3\njlt %r4, %r7, out\n", reads), 3},
		{"jge_two", loop(ptr, "mov %r7, %r6\nadd %r7, 2\njge %r7, %r4, out\n", reads), 3},
		{"index_first", loop("mov %r6, %r5\nadd %r6, %r1\n", check3, reads), 3},
		{"wide_reads", loop(ptr, "mov %r7, %r6\nadd %r7, 6\njgt %r7, %r4, out\n", "ldxb %r9, [%r6]\nldxh %r7, [%r6+1]\nldxh %r5, [%r6+4]\nadd %r7, %r5\n"), 3},
		{"past_the_check", loop(ptr, check3, "ldxb %r9, [%r6]\nldxb %r7, [%r6+1]\nldxb %r5, [%r6+3]\nadd %r7, %r5\n"), 2},
		{"end_plus", loop(ptr, "mov %r7, %r6\nadd %r7, 3\nmov %r9, %r4\nadd %r9, 4\njgt %r7, %r9, out\n", reads), 0},
		{"jmp32", loop(ptr, "mov %r7, %r6\nadd %r7, 3\njgt32 %r7, %r4, out\n", reads), 0},
		{"below", loop(ptr+"add %r6, -1\n", check3, reads), 2},
		{"remade", loop(ptr, check3+"mov32 %r5, %r3\nadd32 %r5, 2\nmov %r6, %r1\nadd %r6, %r5\n", reads), 0},
		{"length_changed", strings.Replace(loop(ptr, check3, reads), "mov %r4, %r1\n", "mov %r2, 60\nmov %r4, %r1\n", 1), 0},
	}
	var cases []aotCase
	for _, p := range progs {
		for _, n := range []int{0, 40, 64, 100} {
			// n 0: the parser is the program, given the buffer and its
			// length; otherwise a function given the buffer and n.
			src := p.body
			if n > 0 {
				src = fmt.Sprintf("mov %%r2, %d\ncall local parse\nexit\nparse:\n%s", n, p.body)
			}
			name := fmt.Sprintf("%s/n=%d", p.name, n)
			insns := assembleInsns(t, name, src)
			code := translateSource(t, name, insns)
			if got := strings.Count(code, "TailLoad"); got != p.tail {
				t.Errorf("%s: %d loads read from the tail, want %d:\n%s", name, got, p.tail, code)
			}
			budgets := []uint64{1 << 20}
			for b := uint64(1); b <= 3000; b += 23 {
				budgets = append(budgets, b)
			}
			for _, budget := range budgets {
				// Bytes that send the index about, and zeros, which step
				// it by one up to the last place the check lets through.
				for k, mul := range []int{37, 0} {
					mem := make([]byte, 64)
					for i := range mem {
						mem[i] = byte((i*37 + 11) * mul)
					}
					cases = append(cases, aotCase{Name: fmt.Sprintf("%s/budget=%d/data=%d", name, budget, k), Insns: insns, Mem: mem, Setup: "fuzz", Budget: budget})
				}
			}
		}
	}
	agreeWithOutcomes(t, cases)
}
