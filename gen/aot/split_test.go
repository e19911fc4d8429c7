package aot

import (
	"fmt"
	"regexp"
	"strings"
	"testing"

	"github.com/skelgen/skelgen/runtime"
)

// splitAll makes the translations a test makes split every BPF function
// into parts of about size instructions.
func splitAll(t *testing.T, size int) {
	above, part := splitAbove, partSize
	t.Cleanup(func() { splitAbove, partSize = above, part })
	splitAbove, partSize = 0, size
}

// TestSplitAgreement runs the random programs of FuzzAOTRandom's seeds,
// the conformance suite and TestBudgetAtForwardJumps's budget sweep with
// every function split into parts of a few instructions: control crosses
// between parts through the dispatcher at every few instructions, and
// every run must still agree with the interpreter, its errors naming the
// same instruction, its budget running out at the same one.
func TestSplitAgreement(t *testing.T) {
	splitAll(t, 3)
	var cases []aotCase
	for _, seed := range []uint64{1, 2} {
		for i := range 32 {
			cases = append(cases, randomProgram(seed, i))
		}
	}
	random := len(cases)
	cases = append(cases, loadConf(t)...)
	sweep := "mov %r0, 0\nmov %r7, 0\nloop:\nmov %r2, %r7\nand %r2, 3\njeq %r2, 0, zero\njeq %r2, 1, one\nadd %r0, 5\nja next\n" +
		"zero:\nadd %r0, 1\nja next\none:\nxor %r0, 3\nnext:\nadd %r7, 1\njlt %r7, 20, loop\nexit"
	insns := assembleInsns(t, "sweep", sweep)
	for budget := uint64(1); budget <= 140; budget++ {
		cases = append(cases, aotCase{Name: fmt.Sprintf("sweep/budget=%d", budget), Insns: insns, Mem: make([]byte, 8), Setup: "fuzz", Budget: budget})
	}
	res := runAgreement(t, cases, true)
	kinds := map[string]int{}
	for i, l := range res.Lines {
		kinds[errorClass(l.Interp.Err)]++
		if d := l.disagreement(i >= random); d != "" {
			t.Errorf("%s: %s\nprogram:\n%s", l.Name, d, disasmCase(cases[i]))
		}
	}
	t.Logf("outcomes: %s", summary(kinds))
	for _, k := range []string{"ok", "budget", "memory", "call depth"} {
		if kinds[k] == 0 {
			t.Errorf("outcomes %v: none %s", kinds, k)
		}
	}
	// The translations were split: dispatchers and their parts.
	src := string(res.Source)
	parts := len(regexp.MustCompile(`(?m)^func p\d+Fn\d+At\d+\(`).FindAllString(src, -1))
	if n := strings.Count(src, "instructions run in"); n < random || parts < 3*n {
		t.Errorf("%d functions split into %d parts, want at least %d functions of 3 parts each on average", n, parts, random)
	}
}

// TestSplitNote checks the note a split translation gives, in its doc
// and to Options.Note, and that a translation below the threshold is
// one Go function per BPF function with no note.
func TestSplitNote(t *testing.T) {
	insns := assembleInsns(t, "small", "mov %r0, 0\nadd %r0, 1\nadd %r0, 2\nadd %r0, 3\nexit")
	spec := &runtime.ProgramSpec{Name: "small", Instructions: insns}
	var notes []string
	whole, err := Translate(spec, Options{Name: "p", Note: func(msg string) { notes = append(notes, msg) }})
	if err != nil {
		t.Fatal(err)
	}
	if src := fmt.Sprintf("%#v", whole); len(notes) != 0 || strings.Contains(src, "translated as") || strings.Contains(src, "At") {
		t.Errorf("below the threshold: notes %q, source\n%s", notes, src)
	}
	splitAll(t, 2)
	split, err := Translate(spec, Options{Name: "p", Note: func(msg string) { notes = append(notes, msg) }})
	if err != nil {
		t.Fatal(err)
	}
	src := fmt.Sprintf("%#v", split)
	const want = "program small: 5 instructions, translated as 4 Go functions"
	if len(notes) != 1 || !strings.HasPrefix(notes[0], want) {
		t.Errorf("notes %q, want one starting %q", notes, want)
	}
	if !strings.Contains(src, "// Its 5 instructions are translated as 4 Go functions") || !strings.Contains(src, "func pFn0At4(") {
		t.Errorf("split source:\n%s", src)
	}
}

// largeProgram returns the assembly of a program of about n
// instructions in one BPF function, as clang writes a long function body:
// loads from the context, branches, stack slots, counted loops and calls;
// block 3999, when the context's last byte is 0xab, reads past the
// context.
func largeProgram(n int) string {
	var b strings.Builder
	b.WriteString("mov %r9, %r1\nmov %r0, 0\n")
	for s := 1; s <= 8; s++ {
		fmt.Fprintf(&b, "stxdw [%%r10-%d], %%r0\n", 8*s)
	}
	for k := 0; b.Len() < n*20; k++ {
		fmt.Fprintf(&b, "ldxdw %%r3, [%%r9+%d]\nxor %%r0, %%r3\nmul %%r0, 0x1b3\n", k*8%56)
		fmt.Fprintf(&b, "jset %%r3, %d, a%d\nadd %%r0, %d\nja b%d\n", 1<<(k%31), k, k, k)
		fmt.Fprintf(&b, "a%d:\nmov %%r2, %%r0\nrsh %%r2, %d\nsub %%r0, %%r2\n", k, k%13+1)
		fmt.Fprintf(&b, "b%d:\nstxdw [%%r10-%d], %%r0\nldxw %%r4, [%%r10-%d]\nadd %%r0, %%r4\n", k, 8*(k%8+1), 8*((k+3)%8+1))
		if k%4 == 0 {
			fmt.Fprintf(&b, "mov %%r7, %%r9\nmov %%r6, 0\nl%d:\nldxb %%r5, [%%r7+0]\nadd %%r0, %%r5\nadd %%r7, 1\nadd %%r6, 1\njlt %%r6, 8, l%d\n", k, k)
		}
		if k%16 == 0 {
			fmt.Fprintf(&b, "mov %%r1, %%r0\nmov %%r2, %d\ncall local fn\n", k)
		}
		if k%4000 == 3999 {
			// A context whose last byte is 0xab reads past it here.
			fmt.Fprintf(&b, "ldxb %%r8, [%%r9+63]\njne %%r8, 0xab, c%d\nldxb %%r8, [%%r9+64]\nc%d:\n", k, k)
		}
	}
	b.WriteString("exit\nfn:\nmov %r0, %r1\nmul %r0, 3\nadd %r0, %r2\nexit\n")
	return b.String()
}

// TestSplitLarge translates a program of 100,000 instructions with the
// default thresholds, which split it, and runs it to the end, out of
// budget and faulting, in both engines.
func TestSplitLarge(t *testing.T) {
	if testing.Short() {
		t.Skip("a build of 100,000 translated instructions")
	}
	insns := assembleInsns(t, "large", largeProgram(100000))
	if len(insns) < 100000 {
		t.Fatalf("%d instructions, want 100000", len(insns))
	}
	mem := make([]byte, 64)
	for i := range mem {
		mem[i] = byte(i*37 + 11)
	}
	cases := []aotCase{
		{Name: "large", Insns: insns, Mem: mem, Setup: "fuzz", Budget: 1 << 22},
		{Name: "large/budget", Insns: insns, Mem: mem, Setup: "fuzz", Budget: 77777},
		{Name: "large/fault", Insns: insns, Mem: append(mem[:63:63], 0xab), Setup: "fuzz", Budget: 1 << 22},
	}
	res := runAgreement(t, cases, false)
	for _, l := range res.Lines {
		if d := l.disagreement(true); d != "" {
			t.Errorf("%s: %s", l.Name, d)
		}
		t.Logf("%s: %+v", l.Name, l.AOT)
	}
	if !regexp.MustCompile(`Its \d+ instructions are translated as \d+ Go functions`).Match(res.Source) {
		t.Error("the translation is not split")
	}
	t.Logf("built in %v", res.BuildTime)
}
