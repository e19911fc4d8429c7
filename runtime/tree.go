package runtime

import (
	"slices"
	"unsafe"
)

// A decision tree is a set of conditional jumps that compare one register
// with immediates, each reached from another by a forward jump or by
// falling through: what clang makes of a switch (a binary search on the
// value) and of an if/else-if chain over ranges (a classifier). The
// interpreter runs it as one instruction at its root: the register's value
// picks an interval between the immediates, and each interval has one path
// through the tree, found at load time, with the slot where it leaves the
// tree, the budget check its taken jumps would make and how far they move
// the budget's limit. So a path of five jumps costs one dispatch and one
// table lookup instead of five dispatches. When the check fails, the root
// runs as its own jump, and the nodes after it as theirs, so a run that
// exhausts its budget inside the tree fails exactly where it did before.
type tree struct {
	root   insn       // the root's own instruction, run when the check fails
	starts []uint64   // the first value of each interval, ascending; starts[0] = 0
	small  []uint8    // the interval of each value below len(small)
	leaves []treeLeaf // by interval
}

// treeLeaf is the path one interval takes through a tree.
type treeLeaf struct {
	exit int // bytes from the root's slot to the slot the path leaves at
	// need: the path's taken jumps all pass exec's budget check when the
	// limit minus the root's address is above need (math.MinInt when it
	// takes none).
	need  int
	delta int // bytes the path's taken jumps move the limit by
}

const (
	maxTreeNodes = 64   // nodes one tree may hold
	minTreeNodes = 3    // fewer are left to the fused pairs (see fuse)
	maxTreeSmall = 1024 // values looked up directly rather than searched
)

// leaf returns the path the value v takes.
func (t *tree) leaf(v uint64) *treeLeaf {
	if v < uint64(len(t.small)) {
		return &t.leaves[t.small[v]]
	}
	lo, hi := 0, len(t.starts) // t.starts[lo] <= v < t.starts[hi]
	for hi-lo > 1 {
		if mid := int(uint(lo+hi) >> 1); t.starts[mid] <= v {
			lo = mid
		} else {
			hi = mid
		}
	}
	return &t.leaves[lo]
}

// treeNode reports whether in can be a node of a tree on register r: a
// conditional jump of r against an immediate, except jset, whose outcome
// is not constant between immediates.
func treeNode(in insn, r uint8) bool {
	switch in.op {
	case OpJeqImm, OpJneImm, OpJgtImm, OpJgeImm, OpJltImm, OpJleImm, OpJsgtImm, OpJsgeImm, OpJsltImm, OpJsleImm:
		return in.dst == r
	}
	return false
}

// jumpTaken reports whether the conditional jump op of v against imm (a
// tree node) is taken.
func jumpTaken(op Opcode, v, imm uint64) bool {
	switch op {
	case OpJeqImm:
		return v == imm
	case OpJneImm:
		return v != imm
	case OpJgtImm:
		return v > imm
	case OpJgeImm:
		return v >= imm
	case OpJltImm:
		return v < imm
	case OpJleImm:
		return v <= imm
	case OpJsgtImm:
		return int64(v) > int64(imm)
	case OpJsgeImm:
		return int64(v) >= int64(imm)
	case OpJsltImm:
		return int64(v) < int64(imm)
	case OpJsleImm:
		return int64(v) <= int64(imm)
	}
	panic("jumpTaken: not a tree node")
}

// findTrees finds the decision trees of insns, before fusion, while a
// jump's off is still its target's index: one rooted at every node from
// which at least minTreeNodes nodes are reachable. It returns them with
// their roots.
func findTrees(insns []insn, tail []bool) (trees []tree, roots []int) {
	node := func(i int, r uint8) bool { return i < len(insns) && !tail[i] && treeNode(insns[i], r) }
	for root, in := range insns {
		if !node(root, in.dst) {
			continue
		}
		r := in.dst
		// The nodes reachable from the root, forward only, and the
		// immediates they compare with.
		nodes := []int{root}
		seen := map[int]bool{root: true}
		starts := []uint64{0, 1 << 63}
		for k := 0; k < len(nodes) && len(nodes) <= maxTreeNodes; k++ {
			i := nodes[k]
			c := uint64(insns[i].imm)
			starts = append(starts, c)
			if c != ^uint64(0) {
				starts = append(starts, c+1)
			}
			for _, next := range []int{i + 1, int(insns[i].off)} {
				if next > i && node(next, r) && !seen[next] {
					seen[next] = true
					nodes = append(nodes, next)
				}
			}
		}
		if len(nodes) < minTreeNodes || len(nodes) > maxTreeNodes {
			continue
		}
		slices.Sort(starts)
		starts = slices.Compact(starts)
		t := tree{root: in}
		for _, v := range starts {
			l := treePath(insns, root, v, node)
			if n := len(t.leaves); n > 0 && t.leaves[n-1] == l {
				continue // the same path as the interval before
			}
			t.starts = append(t.starts, v)
			t.leaves = append(t.leaves, l)
		}
		if len(t.leaves) > 255 {
			continue
		}
		// The direct table reaches past the last interval that starts
		// below maxTreeSmall.
		small := uint64(1)
		for _, v := range t.starts {
			if v < maxTreeSmall {
				small = v + 1
			}
		}
		t.small = make([]uint8, small)
		for v := range t.small {
			t.small[v] = uint8(sortedAtMost(t.starts, uint64(v)) - 1)
		}
		trees, roots = append(trees, t), append(roots, root)
	}
	return trees, roots
}

// sortedAtMost returns how many of the ascending values s are at most v.
func sortedAtMost(s []uint64, v uint64) int {
	n, _ := slices.BinarySearch(s, v+1)
	if v == ^uint64(0) {
		n = len(s)
	}
	return n
}

// treePath follows value v from the root through the nodes of its tree
// and returns where it leaves, and what its taken jumps check and move (in
// bytes, as exec's jump does with a jump's off).
func treePath(insns []insn, root int, v uint64, node func(int, uint8) bool) treeLeaf {
	const size = int(unsafe.Sizeof(insn{}))
	r := insns[root].dst
	need, moved := minInt, 0 // moved: slots the taken jumps so far skipped
	i := root
	for {
		in := insns[i]
		next := i + 1
		if jumpTaken(in.op, v, uint64(in.imm)) {
			// exec's jump checks the jump's address against the limit
			// as earlier jumps moved it.
			need = max(need, (i-root-moved)*size)
			target := int(in.off)
			moved += target - i - 1
			next = target
		}
		if next <= i || !node(next, r) {
			return treeLeaf{exit: (next - root) * size, need: need, delta: moved * size}
		}
		i = next
	}
}

const minInt = -1 << (8*unsafe.Sizeof(int(0)) - 1)
