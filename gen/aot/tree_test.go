package aot

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
)

// treeGen writes compare trees in the assembly dialect: a register split
// into ranges by jumps of every unsigned kind, in the layouts clang uses
// (the lower half falling through, the upper half at a label), with leaves
// that change r0, read the context (observable, so that the plan checks
// the budget on the way), fault, leave the program, or fall into the code
// after the tree.
type treeGen struct {
	rnd    *rand.Rand
	b      strings.Builder
	reg    string
	suffix string // "32" for jmp32 trees
	signed bool   // some tests are signed (jsgt and its kin)
	label  int
}

func (g *treeGen) newLabel() string {
	g.label++
	return fmt.Sprintf("t%d", g.label)
}

func (g *treeGen) printf(format string, args ...any) { fmt.Fprintf(&g.b, format+"\n", args...) }

// leaf writes the code of one range; last says it is the tree's last
// code, which may fall into what follows.
func (g *treeGen) leaf(lo int, last bool) {
	switch g.rnd.IntN(10) {
	case 0, 1, 2:
		g.printf("add %%r0, %d", lo*7+1)
	case 3, 4:
		g.printf("xor %%r0, %d", lo*5+3)
	case 5, 6:
		g.printf("ldxb %%r3, [%%r1+%d]", g.rnd.IntN(64))
		g.printf("add %%r0, %%r3")
	case 7:
		// A read that reaches past the 64-byte context now and then.
		g.printf("ldxdw %%r3, [%%r1+%d]", 48+g.rnd.IntN(12))
		g.printf("add %%r0, %%r3")
	case 8:
		g.printf("mov %%r0, %d", lo)
		g.printf("exit")
		return
	default:
		g.printf("mul %%r0, 3")
	}
	if !last || g.rnd.IntN(2) == 0 {
		g.printf("ja next")
	}
}

// tree splits [lo, hi] (hi == top stands for every larger value too).
func (g *treeGen) tree(lo, hi, top int, last bool) {
	if lo == hi || (hi-lo < 3 && g.rnd.IntN(4) == 0) {
		g.leaf(lo, last)
		return
	}
	mid := lo + g.rnd.IntN(hi-lo)
	// The test sends [lo, mid] one way and [mid+1, hi] the other.
	r, s := g.reg, g.suffix
	if mid == lo && g.rnd.IntN(2) == 0 {
		// A single value split off: jeq to it or jne away from it.
		other := g.newLabel()
		if g.rnd.IntN(2) == 0 {
			g.printf("jeq%s %s, %d, %s", s, r, lo, other)
			g.tree(mid+1, hi, top, false)
			g.printf("%s:", other)
			g.tree(lo, mid, top, last)
		} else {
			g.printf("jne%s %s, %d, %s", s, r, lo, other)
			g.tree(lo, mid, top, false)
			g.printf("%s:", other)
			g.tree(mid+1, hi, top, last)
		}
		return
	}
	other := g.newLabel()
	sg := ""
	if g.signed && g.rnd.IntN(2) == 0 {
		sg = "s"
	}
	switch g.rnd.IntN(4) {
	case 0:
		g.printf("j%sgt%s %s, %d, %s", sg, s, r, mid, other)
	case 1:
		g.printf("j%sge%s %s, %d, %s", sg, s, r, mid+1, other)
	case 2:
		// The upper half falls through.
		g.printf("j%sle%s %s, %d, %s", sg, s, r, mid, other)
		g.tree(mid+1, hi, top, false)
		g.printf("%s:", other)
		g.tree(lo, mid, top, last)
		return
	default:
		g.printf("j%slt%s %s, %d, %s", sg, s, r, mid+1, other)
		g.tree(mid+1, hi, top, false)
		g.printf("%s:", other)
		g.tree(lo, mid, top, last)
		return
	}
	g.tree(lo, mid, top, false)
	g.printf("%s:", other)
	g.tree(mid+1, hi, top, last)
}

// treeBudgets run out in the first iterations, where the trees are, and
// later.
var treeBudgets = []uint64{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 22, 25, 30, 40, 50, 60}

// TestCompareTrees runs programs whose compare trees the translation
// emits as switches: over a counter in a counted loop (its fast copy and
// its checked loop), over context bytes (ranges up to 255), at 32 bits,
// over values that go negative with signed and unsigned tests mixed, and
// outside any loop; with budgets from 1 to 60 and a large one.
// Both engines must agree on r0, memory, the error and its instruction.
func TestCompareTrees(t *testing.T) {
	rnd := rand.New(rand.NewPCG(13, 0))
	var cases []aotCase
	trees := 0
	for i := range 30 {
		g := &treeGen{rnd: rnd, reg: "%r2", signed: i%5 >= 3}
		var pre, post string
		top := 31
		switch i % 5 {
		case 0: // a counter's residues, as Switch32
			pre = "mov %r0, 0\nmov %r7, 0\nloop:\nmov %r2, %r7\nmul %r2, 13\nand %r2, 31\n"
			post = "next:\nadd %r7, 1\njlt %r7, 40, loop\nexit\n"
		case 1: // context bytes, as a classifier
			top = 40 + rnd.IntN(200)
			pre = "mov %r0, 0\nmov %r7, 0\nmov %r6, %r1\nloop:\nldxb %r2, [%r6]\nadd %r6, 1\n"
			post = "next:\nadd %r7, 1\njlt %r7, 64, loop\nexit\n"
		case 2: // 32-bit tests of a value whose upper half is set
			g.suffix = "32"
			pre = "mov %r0, 0\nmov %r7, 0\nloop:\nlddw %r2, 0x500000000\nadd %r2, %r7\nmul32 %r2, 1\nlddw %r4, 0x700000000\nor %r2, %r4\n"
			post = "next:\nadd %r7, 1\njlt %r7, 40, loop\nexit\n"
		case 3: // context bytes less 100: negative too, signed tests
			top = 40 + rnd.IntN(100)
			if i%2 == 0 {
				g.suffix = "32"
			}
			pre = "mov %r0, 0\nmov %r7, 0\nmov %r6, %r1\nloop:\nldxb %r2, [%r6]\nadd %r6, 1\nadd" + g.suffix + " %r2, -100\n"
			post = "next:\nadd %r7, 1\njlt %r7, 64, loop\nexit\n"
		default: // once, on the first context byte, no loop
			top = 20 + rnd.IntN(40)
			pre = "mov %r0, 0\nldxb %r2, [%r1]\n"
			post = "next:\nexit\n"
		}
		g.tree(0, top, top, true)
		src := pre + g.b.String() + post
		name := fmt.Sprintf("tree%d", i)
		insns := assembleInsns(t, name, src)
		if strings.Contains(translateSource(t, name, insns), "as a switch") {
			trees++
		}
		mem := make([]byte, 64)
		for k := range mem {
			mem[k] = byte(rnd.IntN(top + 8))
		}
		for _, budget := range treeBudgets {
			cases = append(cases, aotCase{Name: fmt.Sprintf("%s/budget=%d", name, budget), Insns: insns, Mem: mem, Setup: "fuzz", Budget: budget})
		}
		cases = append(cases, aotCase{Name: name, Insns: insns, Mem: mem, Setup: "fuzz", Budget: 1 << 20})
	}
	t.Logf("%d of 30 programs have a tree emitted as a switch", trees)
	// A test no value passes (r2 <= 1 there) leaves a leaf no value
	// reaches: that tree stays branches, and the program still builds.
	dead := "mov %r0, 0\nldxb %r2, [%r1]\njgt %r2, 15, hi\njgt %r2, 7, m1\njgt %r2, 3, m2\njgt %r2, 1, m3\n" +
		"jgt %r2, 30, dead\nadd %r0, 1\nja next\ndead:\nadd %r0, 99\nja next\nm3:\nadd %r0, 2\nja next\n" +
		"m2:\nadd %r0, 3\nja next\nm1:\nadd %r0, 4\nja next\nhi:\njgt %r2, 23, h2\njgt %r2, 19, h3\n" +
		"add %r0, 5\nja next\nh3:\nadd %r0, 6\nja next\nh2:\nadd %r0, 7\nnext:\nexit"
	insns := assembleInsns(t, "dead_leaf", dead)
	if strings.Contains(translateSource(t, "dead_leaf", insns), "as a switch") {
		t.Error("dead_leaf: a tree with a leaf no value reaches is emitted as a switch")
	}
	for _, b := range []byte{0, 1, 2, 5, 9, 16, 20, 30, 31, 200} {
		mem := make([]byte, 64)
		mem[0] = b
		cases = append(cases, aotCase{Name: fmt.Sprintf("dead_leaf/%d", b), Insns: insns, Mem: mem, Setup: "fuzz", Budget: 1000})
	}
	if trees < 20 {
		t.Errorf("only %d of 30 programs have a tree emitted as a switch", trees)
	}
	agreeWithOutcomes(t, cases)
}
