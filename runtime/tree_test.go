package runtime

import (
	"encoding/binary"
	"fmt"
	"strings"
	"testing"
)

// treeValues are the values the tree tests feed their trees, from the
// context: small ones the direct table looks up, ones past it that the
// search finds, and the ends of the signed and unsigned ranges.
var treeValues = []uint64{0, 1, 5, 15, 16, 31, 32, 0x20, 0x2f, 0x39, 0x61, 0x7e, 0x7f, 0x80, 1023, 1024, 5000, 1<<63 - 1, 1 << 63, 1<<64 - 2, 1<<64 - 1}

// TestDecisionTrees runs programs with decision trees (see tree) with and
// without them, over every value of treeValues and under every budget up
// to what the program needs: r0, error and executed count must agree, and
// the program must hold a tree, so that a pattern findTrees stops
// recognising fails here instead of passing unexercised.
func TestDecisionTrees(t *testing.T) {
	// r2 runs over the values in the context (r9), r0 sums what each
	// leaf adds.
	const loop = "mov %r9, %r1\nmov %r0, 0\nmov %r8, 0\nloop:\nmov %r3, %r9\nadd %r3, %r8\nldxdw %r2, [%r3]\n"
	const next = "next:\nmul %%r0, 3\nadd %%r8, 8\njlt %%r8, %d, loop\nexit"
	var search strings.Builder // a switch over 0..15 as a binary search
	label := 0
	var gen func(lo, hi int)
	gen = func(lo, hi int) {
		if lo == hi {
			fmt.Fprintf(&search, "add %%r0, %d\nja next\n", lo*7+1)
			return
		}
		mid := (lo + hi) / 2
		label++
		right := fmt.Sprintf("r%d", label)
		fmt.Fprintf(&search, "jgt %%r2, %d, %s\n", mid, right)
		gen(lo, mid)
		fmt.Fprintf(&search, "%s:\n", right)
		gen(mid+1, hi)
	}
	gen(0, 15)
	progs := []struct{ name, body string }{
		{"binary_search", search.String()},
		// A classifier's chain, with a second chain at a jump target.
		{"range_chain", "jlt %r2, 0x30, low\njlt %r2, 0x3a, digit\njlt %r2, 0x61, punct\njle %r2, 0x7e, lower\nadd %r0, 0x55\nja next\n" +
			"low:\njeq %r2, 0x20, space\njgt %r2, 0x20, punct\nadd %r0, 1\nja next\nspace:\nadd %r0, 3\nja next\npunct:\nadd %r0, 5\nja next\n" +
			"digit:\nadd %r0, 0x100\nja next\nlower:\nadd %r0, 0x1000\nja next\n"},
		// Signed and unsigned comparisons mixed, jne and jge.
		{"signed", "jslt %r2, 0, neg\njsgt %r2, 1000, big\njne %r2, 5, notfive\nadd %r0, 5\nja next\nnotfive:\njge %r2, 16, mid\nadd %r0, 16\nja next\n" +
			"mid:\nadd %r0, 17\nja next\nneg:\njsle %r2, -2, veryneg\nadd %r0, 2\nja next\nveryneg:\nadd %r0, 4\nja next\nbig:\njgt %r2, 4096, huge\nadd %r0, 9\nja next\nhuge:\nadd %r0, 11\nja next\n"},
		// A node jumping back to an earlier one leaves the tree there; the
		// second node is also reached from outside the tree.
		{"backward", "ja first\nagain:\nadd %r0, 1\nmov %r2, 31\njeq %r2, 31, next\nfirst:\njgt %r2, 100, other\nsecond:\njlt %r2, 16, again\njeq %r2, 32, next\nadd %r0, 7\nja next\nother:\nmov %r2, 31\nja second\n"},
	}
	ctx := make([]byte, 8*len(treeValues))
	for i, v := range treeValues {
		binary.LittleEndian.PutUint64(ctx[8*i:], v)
	}
	for _, p := range progs {
		t.Run(p.name, func(t *testing.T) {
			insns, err := assemble(loop + p.body + fmt.Sprintf(next, len(ctx)))
			if err != nil {
				t.Fatal(err)
			}
			type result struct {
				r0, executed uint64
				err          string
			}
			run := func(noFusion bool, budget uint64) (result, *Program) {
				prog, err := Load(&ProgramSpec{Name: p.name, Instructions: insns}, &Options{noFusion: noFusion, Budget: budget})
				if err != nil {
					t.Fatal(err)
				}
				r0, err := prog.Run(append([]byte(nil), ctx...))
				return result{r0, prog.Machine().Executed(), fmt.Sprint(err)}, prog
			}
			full, prog := run(false, 0)
			if !hasOp(prog, opTree) {
				t.Fatal("no decision tree found")
			}
			if full.err != "<nil>" {
				t.Fatalf("run: %s", full.err)
			}
			for budget := uint64(1); budget <= full.executed+1; budget++ {
				fused, _ := run(false, budget)
				plain, _ := run(true, budget)
				if fused != plain {
					t.Fatalf("budget %d: with trees %+v, without %+v", budget, fused, plain)
				}
			}
			t.Logf("%d trees, %d instructions executed", len(prog.trees), full.executed)
		})
	}
}
