package runtime

import (
	"fmt"
	"os/exec"
	goruntime "runtime"
	"strconv"
	"strings"
	"testing"
)

// TestFusedPairs runs one program per fused pair with and without fusion:
// r0, error, context and executed count must agree, and the fused load must
// contain the fused opcode, so that a pattern fuse stops recognising fails
// here instead of passing unexercised.
func TestFusedPairs(t *testing.T) {
	// r1 holds a value with the sign bit set, r3 a small divisor, r6 zero;
	// the context holds bytes 0x11, 0x22, ... so that loads of every size
	// differ.
	const prologue = "lddw %r1, 0x8000000000012345\nmov %r3, 7\nmov %r6, 0\nmov %r0, 0x5a\n"
	type tc struct {
		name string
		body string
		op   Opcode
	}
	var tests []tc
	for _, o := range []struct {
		mn      string
		imm, rg Opcode
	}{
		{"add", opMovAddImm, opMovAddReg}, {"sub", opMovSubImm, opMovSubReg},
		{"mul", opMovMulImm, opMovMulReg}, {"and", opMovAndImm, opMovAndReg},
		{"or", opMovOrImm, opMovOrReg}, {"xor", opMovXorImm, opMovXorReg},
		{"lsh", opMovLshImm, opMovLshReg}, {"rsh", opMovRshImm, opMovRshReg},
		{"arsh", opMovArshImm, 0}, {"div", 0, opMovDivReg}, {"mod", 0, opMovModReg},
	} {
		if o.imm != 0 {
			tests = append(tests, tc{"mov+" + o.mn + " imm", fmt.Sprintf("mov %%r2, %%r1\n%s %%r2, 5\nmov %%r0, %%r2\nexit", o.mn), o.imm})
		}
		if o.rg != 0 {
			tests = append(tests,
				tc{"mov+" + o.mn + " reg", fmt.Sprintf("mov %%r2, %%r1\n%s %%r2, %%r3\nmov %%r0, %%r2\nexit", o.mn), o.rg},
				// The second source is the moved-to register itself.
				tc{"mov+" + o.mn + " self", fmt.Sprintf("mov %%r2, %%r3\n%s %%r2, %%r2\nmov %%r0, %%r2\nexit", o.mn), o.rg},
				// Division and modulo by zero.
				tc{"mov+" + o.mn + " zero", fmt.Sprintf("mov %%r2, %%r1\n%s %%r2, %%r6\nmov %%r0, %%r2\nexit", o.mn), o.rg})
		}
	}
	for _, l := range []struct {
		size string
		ops  [2]Opcode // add, xor
	}{
		{"b", [2]Opcode{opLdxbAdd, opLdxbXor}}, {"h", [2]Opcode{opLdxhAdd, opLdxhXor}},
		{"w", [2]Opcode{opLdxwAdd, opLdxwXor}}, {"dw", [2]Opcode{opLdxdwAdd, opLdxdwXor}},
	} {
		for i, mn := range []string{"add", "xor"} {
			name := "ldx" + l.size + "+" + mn
			tests = append(tests,
				tc{name, fmt.Sprintf("ldx%s %%r4, [%%r9+3]\n%s %%r0, %%r4\nadd %%r0, %%r4\nexit", l.size, mn), l.ops[i]},
				// Past the end of the context: the load faults at its own slot.
				tc{name + " fault", fmt.Sprintf("ldx%s %%r4, [%%r9+64]\n%s %%r0, %%r4\nexit", l.size, mn), l.ops[i]})
		}
	}
	for _, l := range []struct {
		size, swap string
		op         Opcode
	}{{"h", "be16", opLdxhSwap16}, {"w", "be32", opLdxwSwap32}} {
		name := "ldx" + l.size + "+" + l.swap
		tests = append(tests,
			tc{name, fmt.Sprintf("ldx%s %%r4, [%%r9+3]\n%s %%r4\nmov %%r0, %%r4\nexit", l.size, l.swap), l.op},
			// The swap is also reached directly, as a jump target.
			tc{name + " target", fmt.Sprintf("mov %%r4, 0x1234\njeq %%r6, 0, swap\nldx%s %%r4, [%%r9+3]\nswap:\n%s %%r4\nmov %%r0, %%r4\nexit", l.size, l.swap), l.op},
			// Past the end of the context: the load faults at its own slot.
			tc{name + " fault", fmt.Sprintf("ldx%s %%r4, [%%r9+63]\n%s %%r4\nexit", l.size, l.swap), l.op})
	}
	for _, o := range []struct {
		mn string
		op Opcode
	}{{"add", opAddImmJa}, {"sub", opSubImmJa}, {"mul", opMulImmJa}, {"and", opAndImmJa}, {"or", opOrImmJa}, {"xor", opXorImmJa}, {"mov", opMovImmJa}} {
		// The jump slot is also reached directly, as a jump target.
		tests = append(tests, tc{o.mn + "+ja", fmt.Sprintf("jeq %%r6, 1, skip\n%s %%r0, 9\nskip:\nja out\nmov %%r0, 1\nout:\nadd %%r0, %%r3\njne %%r6, 0, done\nmov %%r6, 1\nja skip\ndone:\nexit", o.mn), o.op})
	}
	for _, j := range []struct {
		mn   string
		op   Opcode
		a, b []int // immediate pairs; r6 runs 0..3
	}{
		{"jeq", opJeqJeqImm, []int{1, 0}, []int{2, -1}}, {"jne", opJneJneImm, []int{1, -1}, []int{2, 2}},
		{"jgt", opJgtJgtImm, []int{2, -5}, []int{0, 1}}, {"jge", opJgeJgeImm, []int{3, -5}, []int{1, 2}},
		{"jlt", opJltJltImm, []int{1, 1}, []int{3, -2}}, {"jle", opJleJleImm, []int{0, 2}, []int{2, -1}},
	} {
		for k := range j.a {
			// Each run takes the first jump, the second, and neither; the
			// second is also reached directly, as a jump target.
			tests = append(tests, tc{fmt.Sprintf("%s+%s %d,%d", j.mn, j.mn, j.a[k], j.b[k]), fmt.Sprintf(
				"mov %%r6, 0\nloop:\njeq %%r6, 2, second\n%s %%r6, %d, one\nsecond:\n%s %%r6, %d, two\nadd %%r0, 1\nja next\n"+
					"one:\nadd %%r0, 10\nja next\ntwo:\nadd %%r0, 100\nnext:\nmul %%r0, 3\nadd %%r6, 1\njlt %%r6, 4, loop\nexit",
				j.mn, j.a[k], j.mn, j.b[k]), j.op})
		}
	}
	for _, b := range []struct {
		op, jcc string
		fused   Opcode
		k, c    []int
	}{
		{"rsh", "jeq", opMovRshJeqImm, []int{1, 64}, []int{0, 1}}, {"rsh", "jne", opMovRshJneImm, []int{1, 0}, []int{1, -1}},
		{"and", "jeq", opMovAndJeqImm, []int{1, -2}, []int{0, 2}}, {"and", "jne", opMovAndJneImm, []int{6, -1}, []int{2, 3}},
	} {
		for k := range b.k {
			// r6 runs 0..3, r1 is r6 shifted into the high bits; the
			// second and third slots are also reached directly.
			tests = append(tests, tc{fmt.Sprintf("mov+%s+%s %d,%d", b.op, b.jcc, b.k[k], b.c[k]), fmt.Sprintf(
				"mov %%r6, 0\nloop:\nmov %%r1, %%r6\nlsh %%r1, 62\nor %%r1, %%r6\njeq %%r6, 1, mid\njeq %%r6, 2, last\n"+
					"mov %%r2, %%r1\nmid:\n%s %%r2, %d\nlast:\n%s %%r2, %d, hit\nadd %%r0, %%r2\nja next\n"+
					"hit:\nadd %%r0, 10\nnext:\nmul %%r0, 3\nadd %%r6, 1\njlt %%r6, 4, loop\nexit",
				b.op, b.k[k], b.jcc, b.c[k]), b.fused})
		}
	}
	for _, j := range []struct {
		mn  string
		op  Opcode
		imm []int // r6 runs 0..5
	}{
		{"jeq", opJeq3Imm, []int{1, 3, 5}}, {"jeq", opJeq3Imm, []int{0, -1, 4, 2}},
		{"jne", opJne3Imm, []int{1, 1, 0}}, {"jne", opJne3Imm, []int{-3, 2, 5, 1}},
		{"jgt", opJgt3Imm, []int{3, 2, 0}}, {"jgt", opJgt3Imm, []int{-5, 1, 2}}, {"jgt", opJgt3Imm, []int{4, 3, 1, 0}},
		{"jge", opJge3Imm, []int{3, 2, 1}}, {"jge", opJge3Imm, []int{4, -1, 0}}, {"jge", opJge3Imm, []int{5, 3, 2, 1}},
		{"jlt", opJlt3Imm, []int{1, 2, 4}}, {"jlt", opJlt3Imm, []int{0, 3, -2}}, {"jlt", opJlt3Imm, []int{1, 2, 3, 5}},
		{"jle", opJle3Imm, []int{0, 1, 2}}, {"jle", opJle3Imm, []int{2, 1, -1}}, {"jle", opJle3Imm, []int{0, 1, 3, 4}},
	} {
		// Runs take each jump and none. The jumps after the first are also
		// reached directly, as jump targets; with four, the third slot of
		// the first triple is itself the first of a fused pair.
		var b strings.Builder
		b.WriteString("mov %r6, 0\nloop:\n")
		for k := 1; k < len(j.imm); k++ {
			fmt.Fprintf(&b, "jeq %%r6, %d, at%d\n", 2*k, k)
		}
		for k, imm := range j.imm {
			fmt.Fprintf(&b, "at%d:\n%s %%r6, %d, hit%d\n", k, j.mn, imm, k)
		}
		b.WriteString("add %r0, 1\nja next\n")
		for k := range j.imm {
			fmt.Fprintf(&b, "hit%d:\nadd %%r0, %d\nja next\n", k, 10<<k)
		}
		b.WriteString("next:\nmul %r0, 3\nadd %r6, 1\njlt %r6, 6, loop\nexit")
		tests = append(tests, tc{fmt.Sprintf("%s*%d %v", j.mn, len(j.imm), j.imm), b.String(), j.op})
	}
	for _, l := range []struct{ n, max int }{{5, 9}, {6, 9}, {9, 5}, {0, 3}, {7, 7}} {
		// The loop tail of for (i = 0; i < n && i < max; i++): it leaves
		// through either test; the tests are also reached directly.
		tests = append(tests, tc{fmt.Sprintf("add+jge+jlt %d,%d", l.n, l.max), fmt.Sprintf(
			"mov %%r4, %d\nmov %%r6, 0\nloop:\nadd %%r0, %%r6\nmul %%r0, 3\njeq %%r6, 2, pre2\njeq %%r6, 4, pre3\n"+
				"add %%r6, 1\nsecond:\njge %%r6, %%r4, out\nthird:\njlt %%r6, %d, loop\nadd %%r0, 1000\nout:\nexit\n"+
				"pre2:\nadd %%r6, 1\nja second\npre3:\nadd %%r6, 1\nja third",
			l.n, l.max), opAddJgeRegJltImm})
	}
	for _, c := range []struct{ add, and int }{{-0x61, 0xff}, {5, -1}, {0x7fffffff, 0xffff}, {-0x30, 0xff}} {
		// A byte's range test, (u8)(c - 'a') < 26, in 32 bits; r1's high
		// bits must not leak in. The second and third slots are also
		// reached directly.
		name := fmt.Sprintf("mov32+add32+and32 %d,%d", c.add, c.and)
		body := fmt.Sprintf("mov32 %%r2, %%r1\nadd32 %%r2, %d\nand32 %%r2, %d\nmov %%r0, %%r2\nexit", c.add, c.and)
		tests = append(tests, tc{name, body, opMov32AddAnd},
			tc{name + " target", fmt.Sprintf("mov %%r2, %%r1\njeq %%r6, 0, mid\nmov32 %%r2, %%r1\nmid:\nadd32 %%r2, %d\nlast:\nand32 %%r2, %d\nmov %%r0, %%r2\n"+
				"jeq %%r6, 1, out\nmov %%r6, 1\nlsh %%r2, 32\nja last\nout:\nexit", c.add, c.and), opMov32AddAnd})
	}
	// A move beside an independent increment, also of the moved-from
	// register.
	tests = append(tests,
		tc{"mov+add other", "mov %r2, %r1\nadd %r3, 9\nmov %r0, %r2\nadd %r0, %r3\nexit", opMovAddImmOther},
		tc{"mov+add source", "mov %r2, %r1\nadd %r1, -9\nmov %r0, %r2\nxor %r0, %r1\nexit", opMovAddImmOther})
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			// r9 keeps the context address, since r1 is overwritten.
			insns, err := assemble("mov %r9, %r1\n" + prologue + tt.body)
			if err != nil {
				t.Fatal(err)
			}
			type result struct {
				r0, executed uint64
				err, ctx     string
			}
			// Budgets from 7 up run out in the middle of each program, at
			// different instructions.
			budgets := []uint64{0, 7, 12, 19, 26, 33}
			var res [2][6]result
			for i, noFusion := range []bool{false, true} {
				for j, budget := range budgets {
					p, err := Load(&ProgramSpec{Name: "fuse", Instructions: insns}, &Options{noFusion: noFusion, Budget: budget})
					if err != nil {
						t.Fatal(err)
					}
					if !noFusion && !hasOp(p, tt.op) {
						t.Fatalf("fused program lacks opcode %#02x", tt.op)
					}
					ctx := make([]byte, 64)
					for k := range ctx {
						ctx[k] = byte(0x11 * (k + 1))
					}
					r0, err := p.Run(ctx)
					res[i][j] = result{r0: r0, executed: p.Machine().Executed(), err: fmt.Sprint(err), ctx: string(ctx)}
				}
			}
			for j, budget := range budgets {
				if res[0][j] != res[1][j] {
					t.Fatalf("budget %d: fused run %+v differs from plain run %+v", budget, res[0][j], res[1][j])
				}
			}
		})
	}
}

func hasOp(p *Program, op Opcode) bool {
	for _, in := range p.insns {
		if in.op == op {
			return true
		}
	}
	return false
}

// TestExecNotBig guards the interpreter's speed: once exec passes the
// compiler's "big function" size, the memory accessors stop being inlined
// into it (see exec). It asks the compiler, so it needs the go command.
func TestExecNotBig(t *testing.T) {
	out := compilerOutput(t, "-m=2")
	inlined := false
	for _, l := range strings.Split(out, "\n") {
		if strings.Contains(l, "(*Machine).exec considered 'big'") {
			t.Fatalf("exec is too big for its memory accessors to inline: %s", l)
		}
		inlined = inlined || strings.Contains(l, "interp.go") && strings.Contains(l, "inlining call to (*Memory).Read32")
	}
	if !inlined {
		t.Fatal("compiler output does not mention inlining Read32 into interp.go: the check above may be stale")
	}
}

// TestRunStartAndEndInline guards the fixed cost of a run: begin and end
// must inline into Compiled.RunLen and the interpreter's run (see begin).
// Each sits at the inliner's budget, so a field more in either breaks it.
func TestRunStartAndEndInline(t *testing.T) {
	out := compilerOutput(t, "-m")
	for _, want := range []string{
		"compiled.go: inlining call to (*Machine).begin",
		"compiled.go: inlining call to (*Machine).end",
		"machine.go: inlining call to (*Machine).begin",
		"machine.go: inlining call to (*Machine).end",
	} {
		file, call, _ := strings.Cut(want, ": ")
		found := false
		for _, l := range strings.Split(out, "\n") {
			found = found || strings.Contains(l, file+":") && strings.Contains(l, call)
		}
		if !found {
			t.Errorf("the compiler does not report %q in %s", call, file)
		}
	}
}

// compilerOutput builds this package with the given compiler flags and
// returns what the compiler printed. It skips in -short mode and where
// the go command is missing.
func compilerOutput(t *testing.T, gcflags string) string {
	t.Helper()
	if testing.Short() {
		t.Skip("compiles the package; skipped in -short mode")
	}
	goCmd, err := exec.LookPath("go")
	if err != nil {
		t.Skip("go command not found: cannot ask the compiler")
	}
	out, err := exec.Command(goCmd, "build", "-gcflags="+gcflags, "-o", "/dev/null", ".").CombinedOutput()
	if err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	return string(out)
}

// TestDispatchInOneBlock guards exec's code layout on amd64: the dispatch
// sequence every instruction passes through must lie inside one 32-byte
// block of the function, so that it never straddles a 64-byte line
// whichever 32-byte boundary the linker starts exec on (see the padding in
// exec). It reads the compiler's assembly listing, so it needs the go
// command. When it fails after a change to exec's prologue, adjust the
// padding there.
func TestDispatchInOneBlock(t *testing.T) {
	if goruntime.GOARCH != "amd64" || goruntime.Compiler != "gc" {
		t.Skipf("layout is checked for gc on amd64; this is %s on %s", goruntime.Compiler, goruntime.GOARCH)
	}
	out := compilerOutput(t, "-S")
	type line struct {
		off  int64
		text string
	}
	var code []line
	in := false
	for _, l := range strings.Split(out, "\n") {
		if strings.Contains(l, "runtime.(*Machine).exec STEXT") {
			in = true
			continue
		}
		if !in {
			continue
		}
		if !strings.HasPrefix(l, "\t0x") {
			break // the next symbol
		}
		// "0x00b7 00183 (file:line)", then the opcode and its operands.
		f := strings.SplitN(strings.TrimSpace(l), "\t", 2)
		if len(f) < 2 || strings.HasPrefix(f[1], "PCDATA") || strings.HasPrefix(f[1], "FUNCDATA") {
			continue
		}
		off, err := strconv.ParseInt(strings.Fields(f[0])[0], 0, 64)
		if err != nil {
			t.Fatalf("listing line %q: %v", l, err)
		}
		code = append(code, line{off, f[1]})
	}
	for i, c := range code {
		if !strings.HasPrefix(c.text, "JMP\t(") {
			continue
		}
		if i < 2 || i+1 >= len(code) || !strings.HasPrefix(code[i-2].text, "MOVBLZX") ||
			!strings.Contains(code[i-1].text, "exec.jump") {
			t.Fatalf("the first table jump in exec is not the dispatch (load opcode, load table, jump) this test knows: %q", c.text)
		}
		start, end := code[i-2].off, code[i+1].off
		t.Logf("dispatch at bytes %#x..%#x of exec", start, end)
		if start/32 != (end-1)/32 {
			t.Fatalf("exec's dispatch at bytes %#x..%#x straddles a 32-byte block: adjust the padding in exec's prologue", start, end)
		}
		return
	}
	t.Fatal("no table jump found in exec's listing: the check is stale")
}
