package aot

import (
	"fmt"
	"slices"
	"strings"

	"github.com/dave/jennifer/jen"

	"github.com/skelgen/skelgen/internal/gocomment"

	"github.com/skelgen/skelgen/runtime"
)

// A cmpTree is a decision tree of conditional jumps that compare one
// register with small constants, as clang lowers a switch for BPF, which
// has no jump tables: "jgt r2, 15, right; jgt r2, 7, ...". The translation
// emits it as one Go switch over the register's values, which Go compiles
// into a jump table: one indirect jump instead of a compare and a branch
// per level. A tree of densely packed branches also runs at speeds that
// vary with where the linker happens to place it; the table does not.
// The same tree as a binary search of Go ifs over the ranges of values
// (one compare a level, as the kernel's JIT runs clang's tree) ran
// clangbench's switch32 in 21-24 µs against the table's 11 µs, and
// bytecode in 3.9-4.2 µs against 2.4-2.7, on inputs that differ from run
// to run: a level's branch is a coin toss there, the table's one indirect
// jump mispredicts once. On one input repeated, the predictor learns
// either; which it learns better changes from process to process.
//
// Each value gets the statements its path through the tree would run: the
// budget subtracted and checked where the tree's own jumps would, then the
// jump to the leaf it reaches. Values above the largest constant all take
// one path (every test is against a constant), and so do negative ones,
// for signed and unsigned tests alike: the switch's default tells the two
// apart when their paths differ. clang writes signed tests (jsgt) on a
// byte it loaded, where the two kinds agree.
type cmpTree struct {
	root  int
	reg   uint8
	is32  bool
	max   uint64       // the largest constant compared with
	inner map[int]bool // the tree's jumps but the root
}

// minTreeJumps is the smallest tree emitted as a switch: three levels of a
// balanced tree. Smaller ones stay branches.
const minTreeJumps = 7

// maxTreeConst bounds the constants of a tree, and so its switch's cases.
const maxTreeConst = 255

// treeOp reports whether in can be a node of a tree: a conditional jump
// comparing a register, signed or not, with a constant in [0,
// maxTreeConst].
func treeOp(in *aotInsn) bool {
	if !isCondJump(in.op) || in.op&8 != 0 || in.imm < 0 || in.imm > maxTreeConst {
		return false
	}
	switch jmpOp(in.op) {
	case runtime.OpJeqImm, runtime.OpJneImm, runtime.OpJgtImm, runtime.OpJgeImm, runtime.OpJltImm, runtime.OpJleImm,
		runtime.OpJsgtImm, runtime.OpJsgeImm, runtime.OpJsltImm, runtime.OpJsleImm:
		return true
	}
	return false
}

// The values a tree tells apart: each of 0..max, every larger
// non-negative value (max+1 stands for them) and every negative one (all
// ones, at the tree's width): against constants in [0, max], all values of
// one class compare alike, signed or unsigned.
func (t *cmpTree) neg() uint64 {
	if t.is32 {
		return 1<<32 - 1
	}
	return 1<<64 - 1
}

// values lists a representative of each class of values.
func (t *cmpTree) values() []uint64 {
	vs := make([]uint64, 0, t.max+3)
	for v := uint64(0); v <= t.max+1; v++ {
		vs = append(vs, v)
	}
	return append(vs, t.neg())
}

// taken reports whether the tree jump in is taken when its register holds
// v at the jump's width.
func taken(in *aotInsn, v uint64) bool {
	k := uint64(in.imm)
	sv := int64(v)
	if in.class() == runtime.ClassJMP32 {
		sv = int64(int32(uint32(v)))
	}
	sk := int64(k)
	switch jmpOp(in.op) {
	case runtime.OpJeqImm:
		return v == k
	case runtime.OpJneImm:
		return v != k
	case runtime.OpJgtImm:
		return v > k
	case runtime.OpJgeImm:
		return v >= k
	case runtime.OpJltImm:
		return v < k
	case runtime.OpJleImm:
		return v <= k
	case runtime.OpJsgtImm:
		return sv > sk
	case runtime.OpJsgeImm:
		return sv >= sk
	case runtime.OpJsltImm:
		return sv < sk
	}
	return sv <= sk // OpJsleImm
}

// findTrees finds f's compare trees, by root. A jump other than the root
// belongs to a tree when control reaches it only from a jump of the tree,
// forward, and it tests the root's register at the root's width; it must
// not be a loop's back edge, and it lies inside the same loops as the
// root. Leaves that the tree reaches by falling through become labels,
// since the switch jumps to them.
func (p *aotProgram) findTrees(f *aotFunc, labels map[int]bool, loops map[int]*hoistLoop) map[int]*cmpTree {
	preds := map[int]int{}
	for _, pc := range f.body {
		in := p.insns[pc]
		if falls(in) {
			preds[pc+in.slots]++
		}
		if isJump(in.op) {
			preds[in.target]++
		}
	}
	special := map[int]bool{f.entry: true}
	for _, l := range loops {
		special[l.head], special[l.back] = true, true
		if l.entry >= 0 {
			special[l.entry] = true
		}
	}
	sameLoops := func(a, b int) bool {
		for _, l := range loops {
			if l.contains(a) != l.contains(b) {
				return false
			}
		}
		return true
	}
	trees := map[int]*cmpTree{}
	claimed := map[int]bool{}
	for _, root := range f.body {
		in := p.insns[root]
		if claimed[root] || special[root] || !treeOp(in) {
			continue
		}
		t := &cmpTree{root: root, reg: in.dst, is32: in.class() == runtime.ClassJMP32, inner: map[int]bool{}}
		leaves, fellTo := map[int]bool{}, map[int]bool{}
		work := []int{root}
		for len(work) > 0 {
			n := p.insns[work[0]]
			work = work[1:]
			t.max = max(t.max, uint64(n.imm))
			for _, s := range []int{n.pc + n.slots, n.target} {
				c, ok := p.insns[s]
				if ok && s > n.pc && f.inFn[s] && !special[s] && preds[s] == 1 && !claimed[s] && !t.inner[s] && s != root &&
					treeOp(c) && c.dst == t.reg && (c.class() == runtime.ClassJMP32) == t.is32 && sameLoops(root, s) {
					t.inner[s] = true
					work = append(work, s)
					continue
				}
				leaves[s] = true
				if s == n.pc+n.slots {
					fellTo[s] = true
				}
			}
		}
		if len(t.inner)+1 < minTreeJumps {
			continue
		}
		// Every leaf must be some value's: a leaf no value reaches
		// (a range an earlier test already excluded) would leave its
		// label unused.
		for _, v := range t.values() {
			delete(leaves, p.treeLeaf(t, v))
		}
		ok := len(leaves) == 0
		for s := range fellTo {
			// A fall-through leaf becomes a jump's target: it must be
			// one the fast copies and the loops can take as such.
			if loops[s] != nil || !sameLoops(root, s) || !f.inFn[s] {
				ok = false
			}
		}
		if !ok {
			continue
		}
		for s := range fellTo {
			labels[s] = true
		}
		for s := range t.inner {
			claimed[s] = true
		}
		trees[root] = t
	}
	return trees
}

// treeLeaf is where value v leaves the tree t.
func (p *aotProgram) treeLeaf(t *cmpTree, v uint64) int {
	n := p.insns[t.root]
	for {
		s := n.pc + n.slots
		if taken(n, v) {
			s = n.target
		}
		if !t.inner[s] {
			return s
		}
		n = p.insns[s]
	}
}

// treeSwitch is the Go switch of the tree rooted at in, whose slot
// e.pending already counts.
func (e *emitter) treeSwitch(in *aotInsn) []jen.Code {
	t := e.trees[in.pc]
	x := e.r(t.reg)
	if t.is32 {
		x = fmt.Sprintf("uint32(%s)", x)
	}
	// Values that run the same statements share a case; the classes of
	// larger and of negative values are the default.
	var keys []string
	vals := map[string][]uint64{}
	bodies := map[string][]jen.Code{}
	for v := uint64(0); v <= t.max; v++ {
		body, key := e.treePath(t, v)
		if _, ok := bodies[key]; !ok {
			keys = append(keys, key)
			bodies[key] = body
		}
		vals[key] = append(vals[key], v)
	}
	var cases []jen.Code
	for _, k := range keys {
		var lits []jen.Code
		for _, v := range vals[k] {
			lits = append(lits, jen.Lit(int(v)))
		}
		cases = append(cases, jen.Case(lits...).Block(bodies[k]...))
	}
	above, aboveKey := e.treePath(t, t.max+1)
	neg, negKey := e.treePath(t, t.neg())
	if negKey == aboveKey {
		cases = append(cases, jen.Default().Block(above...))
	} else {
		signed := fmt.Sprintf("int64(%s) < 0", e.r(t.reg))
		if t.is32 {
			signed = fmt.Sprintf("int32(%s) < 0", e.r(t.reg))
		}
		cases = append(cases, jen.Default().Block(jen.If(code(signed)).Block(neg...).Else().Block(above...)))
	}
	nodes := append([]int{t.root}, sortedKeys(t.inner)...)
	return []jen.Code{
		gocomment.Linef("Instructions %s: a tree of %d jumps on %s, as a switch.", joinInts(nodes), len(nodes), e.r(t.reg)),
		jen.Switch(code(x)).Block(cases...),
	}
}

// treePath is what value v runs from the root of t: the budget charged
// and checked where the tree's jumps would, then the jump to its leaf. key
// names the path's effect, so that values with the same share a case.
func (e *emitter) treePath(t *cmpTree, v uint64) ([]jen.Code, string) {
	p := e.prog
	var out []jen.Code
	var key strings.Builder
	pending := e.pending
	n := p.insns[t.root]
	for {
		next := n.pc + n.slots
		s, jumped := next, taken(n, v)
		if jumped {
			s = n.target
		}
		if !t.inner[s] {
			fmt.Fprintf(&key, "%d>%d", n.pc, s)
			if jumped {
				saved := e.pending
				e.pending = pending
				out = append(out, e.jumpTo(n.pc, s)...)
				e.pending = saved
			} else {
				out = append(out, e.adjust(pending-e.phi[s])...)
				out = append(out, e.goTo(s, e.labelOf(s)))
			}
			return out, key.String()
		}
		if jumped && e.fast == nil && e.copying < 0 {
			// A taken jump checks the budget.
			fmt.Fprintf(&key, "%d!", n.pc)
			out = append(out, e.adjust(pending)...)
			out = append(out, e.checkAt(n.pc, 0))
			pending = 0
		}
		n = p.insns[s]
		pending += n.slots
	}
}

// joinInts lists pcs, runs of consecutive ones as ranges.
func joinInts(pcs []int) string {
	slices.Sort(pcs)
	var parts []string
	for i := 0; i < len(pcs); {
		j := i
		for j+1 < len(pcs) && pcs[j+1] == pcs[j]+1 {
			j++
		}
		if j == i {
			parts = append(parts, fmt.Sprint(pcs[i]))
		} else {
			parts = append(parts, fmt.Sprintf("%d-%d", pcs[i], pcs[j]))
		}
		i = j + 1
	}
	return strings.Join(parts, ", ")
}
