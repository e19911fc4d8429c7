package btfmin

import (
	"github.com/cilium/ebpf/asm"
)

// liveInstructions reports which instructions of a program can run on a
// kernel, the way the verifier prunes dead branches: registers holding
// constants are followed through moves and arithmetic, a conditional jump
// whose operands are both known takes one way only, and consts gives the
// value a CO-RE relocated instruction loads on that kernel (a
// bpf_core_field_exists that loads 0 there). A poisoned instruction
// (poisoned) ends its path, as the verifier's rejection would.
//
// It is a constant propagation over registers only: a guard whose value
// goes through the stack or a map is taken as unknown, so both ways count
// as live. That errs towards reporting a failure the verifier would
// accept, never the other way. Subprograms are entered with unknown
// arguments, and a call returns unknown values in r0-r5.
func liveInstructions(insns asm.Instructions, consts map[int]uint64, poisoned map[int]int) []bool {
	n := len(insns)
	byOffset := make(map[int]int, n) // raw offset (8-byte slots) → index
	offsets := make([]int, n)
	entries := map[string]int{}
	off := 0
	for i := range insns {
		byOffset[off] = i
		offsets[i] = off
		off += int(insns[i].Size() / asm.InstructionSize)
		if sym := insns[i].Symbol(); sym != "" {
			entries[sym] = i
		}
	}
	type value struct {
		known bool
		v     uint64
	}
	type state [11]value
	states := make([]*state, n)
	live := make([]bool, n)
	var work []int
	flow := func(to int, s state) {
		if to < 0 || to >= n {
			return
		}
		if states[to] == nil {
			c := s
			states[to] = &c
			live[to] = true
			work = append(work, to)
			return
		}
		changed := false
		for r := range s {
			old := &states[to][r]
			if old.known && (!s[r].known || s[r].v != old.v) {
				*old = value{}
				changed = true
			}
		}
		if changed {
			work = append(work, to)
		}
	}
	jump := func(i int, delta int64, s state) {
		if j, ok := byOffset[offsets[i]+int(insns[i].Size()/asm.InstructionSize)+int(delta)]; ok {
			flow(j, s)
		}
	}
	callee := func(ref string) {
		if j, ok := entries[ref]; ok {
			flow(j, state{})
		}
	}
	flow(0, state{})
	for len(work) > 0 {
		i := work[len(work)-1]
		work = work[:len(work)-1]
		s := *states[i]
		ins := insns[i]
		if _, bad := poisoned[i]; bad {
			continue
		}
		op := ins.OpCode
		reg := func(r asm.Register) *value {
			if int(r) < len(s) {
				return &s[r]
			}
			return &value{}
		}
		if ins.IsFunctionReference() {
			callee(ins.Reference())
		}
		switch cls := op.Class(); {
		case cls.IsALU():
			dst, src := reg(ins.Dst), value{known: true, v: uint64(ins.Constant)}
			if op.Source() == asm.RegSource {
				src = *reg(ins.Src)
			}
			if c, ok := consts[i]; ok {
				src = value{known: true, v: c}
			}
			if op.ALUOp() == asm.Mov && ins.Offset == 0 {
				*dst = src
			} else if v, ok := alu(op.ALUOp(), dst.v, src.v, cls == asm.ALUClass); ok && dst.known && src.known && ins.Offset == 0 {
				*dst = value{known: true, v: v}
			} else {
				*dst = value{}
			}
			if cls == asm.ALUClass && dst.known {
				dst.v = uint64(uint32(dst.v))
			}
			flow(i+1, s)
		case cls.IsJump():
			switch op.JumpOp() {
			case asm.Exit:
				continue
			case asm.Call:
				if ins.IsFunctionCall() {
					callee(ins.Reference())
				}
				for r := asm.R0; r <= asm.R5; r++ {
					s[r] = value{}
				}
				flow(i+1, s)
				continue
			case asm.Ja:
				delta := int64(ins.Offset)
				if cls == asm.Jump32Class {
					delta = ins.Constant
				}
				jump(i, delta, s)
				continue
			}
			dst, src := *reg(ins.Dst), value{known: true, v: uint64(ins.Constant)}
			if op.Source() == asm.RegSource {
				src = *reg(ins.Src)
			}
			taken, known := false, dst.known && src.known
			if known {
				a, b := dst.v, src.v
				if cls == asm.Jump32Class {
					a, b = uint64(int64(int32(a))), uint64(int64(int32(b)))
				}
				taken, known = compare(op.JumpOp(), a, b, cls == asm.Jump32Class)
			}
			if !known || taken {
				jump(i, int64(ins.Offset), s)
			}
			if !known || !taken {
				flow(i+1, s)
			}
		default:
			if c, ok := consts[i]; ok && op.IsDWordLoad() {
				*reg(ins.Dst) = value{known: true, v: c}
			} else if op.IsDWordLoad() && ins.Reference() == "" && !ins.IsFunctionReference() {
				*reg(ins.Dst) = value{known: true, v: uint64(ins.Constant)}
			} else if cls == asm.LdXClass || op.IsDWordLoad() {
				*reg(ins.Dst) = value{}
			} else if cls == asm.LdClass {
				s[asm.R0] = value{} // legacy packet loads
			} else if cls == asm.StXClass && op.Mode() == asm.AtomicMode {
				// Fetching atomics write the source register (r0 for
				// cmpxchg).
				*reg(ins.Src) = value{}
				s[asm.R0] = value{}
			}
			flow(i+1, s)
		}
	}
	return live
}

func alu(op asm.ALUOp, a, b uint64, is32 bool) (uint64, bool) {
	shift := uint64(63)
	if is32 {
		a, b, shift = uint64(uint32(a)), uint64(uint32(b)), 31
		if op == asm.ArSh {
			return uint64(uint32(int32(a) >> (b & shift))), true
		}
	}
	switch op {
	case asm.Add:
		return a + b, true
	case asm.Sub:
		return a - b, true
	case asm.Mul:
		return a * b, true
	case asm.Or:
		return a | b, true
	case asm.And:
		return a & b, true
	case asm.Xor:
		return a ^ b, true
	case asm.LSh:
		return a << (b & shift), true
	case asm.RSh:
		return a >> (b & shift), true
	case asm.ArSh:
		return uint64(int64(a) >> (b & shift)), true
	case asm.Neg:
		return -a, true
	}
	return 0, false
}

// compare evaluates a conditional jump on known operands (sign-extended
// from 32 bits for JMP32, so the signed comparisons work on both).
func compare(op asm.JumpOp, a, b uint64, is32 bool) (taken, known bool) {
	ua, ub := a, b
	if is32 {
		ua, ub = uint64(uint32(a)), uint64(uint32(b))
	}
	sa, sb := int64(a), int64(b)
	switch op {
	case asm.JEq:
		return ua == ub, true
	case asm.JNE:
		return ua != ub, true
	case asm.JGT:
		return ua > ub, true
	case asm.JGE:
		return ua >= ub, true
	case asm.JLT:
		return ua < ub, true
	case asm.JLE:
		return ua <= ub, true
	case asm.JSGT:
		return sa > sb, true
	case asm.JSGE:
		return sa >= sb, true
	case asm.JSLT:
		return sa < sb, true
	case asm.JSLE:
		return sa <= sb, true
	case asm.JSet:
		return ua&ub != 0, true
	}
	return false, false
}
