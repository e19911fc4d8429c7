package runtime

// fuse merges common instruction pairs into one dispatch: an increment
// followed by a conditional jump on the incremented register (a loop tail),
// a register move followed by an operation on the moved-to register (the
// three-address form), a load whose value is accumulated into another
// register, an operation followed by ja (the end of an if branch), two
// conditional jumps of one kind on one register (a chain of range tests), a
// move beside an independent increment, a load followed by a byte swap
// of the loaded register (a network-order field), and the triple of a bit
// test.
// Only the first slot is rewritten: the second keeps its own instruction
// for code that jumps to it, and budget accounting still counts both.
func fuse(insns []insn, tail []bool) {
	for i := 0; i+1 < len(insns); i++ {
		if tail[i] || tail[i+1] {
			continue
		}
		if i+2 < len(insns) && !tail[i+2] {
			if f, ok := fuseTriple(insns[i], insns[i+1], insns[i+2]); ok {
				insns[i] = f
				continue
			}
		}
		if f, ok := fusePair(insns[i], insns[i+1]); ok {
			insns[i] = f
		}
	}
}

// fuseTriple returns the fused form of a, b, c if there is one: three
// conditional jumps of one kind on one register against immediates, a loop
// tail "add dst, imm; jge dst, src; jlt dst, imm2", a byte's range test
// "mov32 dst, src; add32 dst, imm; and32 dst, imm2", or a bit test
// "mov dst, src; rsh or and dst, k; jeq or jne dst, c".
func fuseTriple(a, b, c insn) (insn, bool) {
	if op := fusedJcc3(a.op); op != 0 && b.op == a.op && c.op == a.op && b.dst == a.dst && c.dst == a.dst {
		return insn{op: op, dst: a.dst, off: a.off, imm: int64(uint64(uint32(a.imm)) | uint64(b.imm)<<32)}, true
	}
	if a.op == OpAddImm && b.op == OpJgeReg && c.op == OpJltImm && b.dst == a.dst && c.dst == a.dst {
		return insn{op: opAddJgeRegJltImm, dst: a.dst, src: b.src, imm: int64(uint64(uint32(a.imm)) | uint64(c.imm)<<32)}, true
	}
	if a.op == OpMov32Reg && b.op == OpAdd32Imm && c.op == OpAnd32Imm && b.dst == a.dst && c.dst == a.dst {
		return insn{op: opMov32AddAnd, dst: a.dst, src: a.src, imm: int64(uint64(uint32(b.imm)) | uint64(c.imm)<<32)}, true
	}
	if a.op != OpMovReg || b.dst != a.dst || c.dst != a.dst {
		return insn{}, false
	}
	var op Opcode
	switch {
	case b.op == OpRshImm && c.op == OpJeqImm:
		op = opMovRshJeqImm
	case b.op == OpRshImm && c.op == OpJneImm:
		op = opMovRshJneImm
	case b.op == OpAndImm && c.op == OpJeqImm:
		op = opMovAndJeqImm
	case b.op == OpAndImm && c.op == OpJneImm:
		op = opMovAndJneImm
	default:
		return insn{}, false
	}
	return insn{op: op, dst: a.dst, src: a.src, imm: int64(uint64(uint32(b.imm)) | uint64(c.imm)<<32)}, true
}

// fusePair returns the fused form of a followed by b, if there is one.
func fusePair(a, b insn) (insn, bool) {
	switch {
	case a.op == OpAddImm && b.dst == a.dst && fusedAddJcc(b.op) != 0:
		return insn{op: fusedAddJcc(b.op), dst: a.dst, src: b.src, imm: int64(uint64(uint32(a.imm)) | uint64(b.imm)<<32)}, true
	case a.op == OpMovReg && b.dst == a.dst && fusedMovOp(b.op) != 0:
		x := b.src
		if x == a.dst {
			x = a.src
		}
		return insn{op: fusedMovOp(b.op), dst: a.dst, src: a.src, x: x, imm: b.imm}, true
	case a.op == OpMovReg && b.op == OpAddImm && b.dst != a.dst:
		return insn{op: opMovAddImmOther, dst: a.dst, src: a.src, x: b.dst, imm: b.imm}, true
	case b.op == OpJa && fusedOpJa(a.op) != 0:
		return insn{op: fusedOpJa(a.op), dst: a.dst, imm: a.imm}, true
	case a.op == b.op && a.dst == b.dst && fusedJccJcc(a.op) != 0:
		return insn{op: fusedJccJcc(a.op), dst: a.dst, off: a.off, imm: int64(uint64(uint32(a.imm)) | uint64(b.imm)<<32)}, true
	case a.op == OpLdxh && b.op == opSwap16 && b.dst == a.dst:
		return insn{op: opLdxhSwap16, dst: a.dst, src: a.src, off: a.off}, true
	case a.op == OpLdxw && b.op == opSwap32 && b.dst == a.dst:
		return insn{op: opLdxwSwap32, dst: a.dst, src: a.src, off: a.off}, true
	case a.op&7 == classLDX && a.op&0xe0 == modeMEM && b.src == a.dst && b.dst != a.dst && fusedLdxOp(a.op, b.op) != 0:
		return insn{op: fusedLdxOp(a.op, b.op), dst: a.dst, src: a.src, x: b.dst, off: a.off}, true
	}
	return insn{}, false
}

// fusedAddJcc is the fused form of "add dst, imm" and the jump op.
func fusedAddJcc(op Opcode) Opcode {
	switch op {
	case OpJltImm:
		return opAddJltImm
	case OpJltReg:
		return opAddJltReg
	case OpJleImm:
		return opAddJleImm
	case OpJleReg:
		return opAddJleReg
	case OpJneImm:
		return opAddJneImm
	case OpJneReg:
		return opAddJneReg
	case OpJsltImm:
		return opAddJsltImm
	case OpJsltReg:
		return opAddJsltReg
	}
	return 0
}

// fusedJccJcc is the fused form of two conditional jumps op on the same
// register against immediates.
func fusedJccJcc(op Opcode) Opcode {
	switch op {
	case OpJeqImm:
		return opJeqJeqImm
	case OpJneImm:
		return opJneJneImm
	case OpJgtImm:
		return opJgtJgtImm
	case OpJgeImm:
		return opJgeJgeImm
	case OpJltImm:
		return opJltJltImm
	case OpJleImm:
		return opJleJleImm
	}
	return 0
}

// fusedJcc3 is the fused form of three conditional jumps op.
func fusedJcc3(op Opcode) Opcode {
	switch op {
	case OpJeqImm:
		return opJeq3Imm
	case OpJneImm:
		return opJne3Imm
	case OpJgtImm:
		return opJgt3Imm
	case OpJgeImm:
		return opJge3Imm
	case OpJltImm:
		return opJlt3Imm
	case OpJleImm:
		return opJle3Imm
	}
	return 0
}

// fusedMovOp is the fused form of "mov dst, src" and the ALU64 op.
func fusedMovOp(op Opcode) Opcode {
	switch op {
	case OpAddImm:
		return opMovAddImm
	case OpSubImm:
		return opMovSubImm
	case OpMulImm:
		return opMovMulImm
	case OpAndImm:
		return opMovAndImm
	case OpOrImm:
		return opMovOrImm
	case OpXorImm:
		return opMovXorImm
	case OpLshImm:
		return opMovLshImm
	case OpRshImm:
		return opMovRshImm
	case OpArshImm:
		return opMovArshImm
	case OpAddReg:
		return opMovAddReg
	case OpSubReg:
		return opMovSubReg
	case OpMulReg:
		return opMovMulReg
	case OpDivReg:
		return opMovDivReg
	case OpModReg:
		return opMovModReg
	case OpAndReg:
		return opMovAndReg
	case OpOrReg:
		return opMovOrReg
	case OpXorReg:
		return opMovXorReg
	case OpLshReg:
		return opMovLshReg
	case OpRshReg:
		return opMovRshReg
	}
	return 0
}

// fusedOpJa is the fused form of the ALU64 op and "ja".
func fusedOpJa(op Opcode) Opcode {
	switch op {
	case OpAddImm:
		return opAddImmJa
	case OpSubImm:
		return opSubImmJa
	case OpMulImm:
		return opMulImmJa
	case OpAndImm:
		return opAndImmJa
	case OpOrImm:
		return opOrImmJa
	case OpXorImm:
		return opXorImmJa
	case OpMovImm:
		return opMovImmJa
	}
	return 0
}

// fusedLdxOp is the fused form of the load ld and the ALU64 register op.
func fusedLdxOp(ld, op Opcode) Opcode {
	var ops [4]Opcode // by load size: w, h, b, dw
	switch op {
	case OpAddReg:
		ops = [4]Opcode{opLdxwAdd, opLdxhAdd, opLdxbAdd, opLdxdwAdd}
	case OpXorReg:
		ops = [4]Opcode{opLdxwXor, opLdxhXor, opLdxbXor, opLdxdwXor}
	default:
		return 0
	}
	return ops[ld>>3&3]
}

// jumpsSecond reports whether op is a fused pair whose second slot is a
// jump the pair takes itself: an increment and loop test, or an operation
// and ja. It lists the results of fusedAddJcc and fusedOpJa: a pair added
// there must be added here (TestFusedPairs runs every one). The
// interpreter reads the distance from the first slot (exec's pairJump) so
// that a taken loop back edge does not load the second slot.
func jumpsSecond(op Opcode) bool {
	switch op {
	case opAddJltImm, opAddJltReg, opAddJleImm, opAddJleReg, opAddJneImm, opAddJneReg, opAddJsltImm, opAddJsltReg,
		opAddImmJa, opSubImmJa, opMulImmJa, opAndImmJa, opOrImmJa, opXorImmJa, opMovImmJa:
		return true
	}
	return false
}
