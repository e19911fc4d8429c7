package runtime

import (
	"fmt"
	"strings"
)

// String prints the instruction in the assembly dialect that package asm
// reads (the bpf_conformance suite's), so that a listing assembles back to
// the same slots: registers %r0..%r10, memory [%rN+off], jump and local
// call targets as signed slot offsets ("+3"), 64-bit ALU and jump
// mnemonics without suffix and the 32-bit ones with "32". An lddw needs
// both its slots to be printed whole: alone, its first slot shows the
// constant's lower half only (Disassemble joins the pair). A slot that is
// no valid instruction prints its raw fields.
func (i Instruction) String() string {
	return i.format(0)
}

// Disassemble prints insns one instruction a line, an lddw's two slots on
// one line.
func Disassemble(insns []Instruction) string {
	var b strings.Builder
	for pc := 0; pc < len(insns); pc++ {
		in := insns[pc]
		if in.Opcode == OpLddw && pc+1 < len(insns) {
			b.WriteString(in.format(insns[pc+1].Imm))
			pc++
		} else {
			b.WriteString(in.String())
		}
		b.WriteByte('\n')
	}
	return b.String()
}

// format prints i; hi is the second slot's immediate of an lddw.
func (i Instruction) format(hi int32) string {
	op := i.Opcode
	name, ok := opcodeNames[op]
	if !ok {
		return i.raw()
	}
	name, _, _ = strings.Cut(name, " ") // the mnemonic, without "imm"/"reg"
	reg := func(n uint8) string { return fmt.Sprintf("%%r%d", n) }
	src := func() string {
		if op&srcX != 0 {
			return reg(i.Src)
		}
		return fmt.Sprint(i.Imm)
	}
	switch op.Class() {
	case ClassALU, ClassALU64:
		code := op & 0xf0
		width := ""
		if op.Class() == ClassALU {
			width = "32"
		}
		switch {
		case code == aluNEG:
			return name + " " + reg(i.Dst)
		case code == aluEND:
			return fmt.Sprintf("%s%d %s", name, i.Imm, reg(i.Dst))
		case code == aluMOV && i.Offset != 0:
			// movsx<from><to>: the source width is in the offset.
			to := "64"
			if width != "" {
				to = "32"
			}
			name = fmt.Sprintf("movsx%d%s", i.Offset, to)
		case (code == aluDIV || code == aluMOD) && i.Offset == 1:
			name = "s" + name
		}
		return fmt.Sprintf("%s %s, %s", name, reg(i.Dst), src())
	case ClassLD:
		return i.lddw(hi)
	case ClassLDX:
		return fmt.Sprintf("%s %s, %s", name, reg(i.Dst), mem(i.Src, i.Offset))
	case ClassST:
		return fmt.Sprintf("%s %s, %d", name, mem(i.Dst, i.Offset), i.Imm)
	case ClassSTX:
		if op&0xe0 == modeATOMIC {
			return i.atomic()
		}
		return fmt.Sprintf("%s %s, %s", name, mem(i.Dst, i.Offset), reg(i.Src))
	}
	switch op {
	case OpExit:
		return "exit"
	case OpJa:
		return "ja " + rel(int64(i.Offset))
	case OpJa32:
		return "ja32 " + rel(int64(i.Imm))
	case OpCallx:
		return "call " + reg(i.Dst)
	case OpCall:
		switch i.Src {
		case PseudoCall:
			return "call local " + rel(int64(i.Imm))
		case PseudoKfuncCall:
			return fmt.Sprintf("call runtime %d", i.Imm)
		}
		return fmt.Sprintf("call %d", i.Imm)
	}
	return fmt.Sprintf("%s %s, %s, %s", name, reg(i.Dst), src(), rel(int64(i.Offset)))
}

func (i Instruction) lddw(hi int32) string {
	dst := fmt.Sprintf("%%r%d", i.Dst)
	switch i.Src {
	case 0:
		v := uint64(uint32(i.Imm)) | uint64(uint32(hi))<<32
		return fmt.Sprintf("lddw %s, %#x", dst, v)
	case PseudoMapIdx:
		return fmt.Sprintf("lddw %s, map:%d", dst, i.Imm)
	case PseudoMapIdxValue:
		if hi == 0 {
			return fmt.Sprintf("lddw %s, value:%d", dst, i.Imm)
		}
		return fmt.Sprintf("lddw %s, value:%d+%d", dst, i.Imm, hi)
	case PseudoFunc:
		return fmt.Sprintf("lddw %s, func %s", dst, rel(int64(i.Imm)))
	}
	return fmt.Sprintf("lddw %s, pseudo(%d) %d %d", dst, i.Src, i.Imm, hi)
}

func (i Instruction) atomic() string {
	width := ""
	if i.Opcode == OpAtomicW {
		width = "32"
	}
	names := map[int32]string{atomicADD: "add", atomicOR: "or", atomicAND: "and", atomicXOR: "xor", atomicXCHG: "xchg", atomicCMPXCHG: "cmpxchg"}
	fetch := ""
	name, ok := names[i.Imm]
	if !ok {
		if name, ok = names[i.Imm&^atomicFETCH]; !ok {
			return i.raw()
		}
		fetch = "fetch "
	}
	return fmt.Sprintf("lock %s%s%s %s, %%r%d", fetch, name, width, mem(i.Dst, i.Offset), i.Src)
}

// raw prints the fields of a slot that is no instruction.
func (i Instruction) raw() string {
	return fmt.Sprintf(".insn op=%#02x dst=r%d src=r%d off=%d imm=%d", uint8(i.Opcode), i.Dst, i.Src, i.Offset, i.Imm)
}

func mem(base uint8, off int16) string {
	if off == 0 {
		return fmt.Sprintf("[%%r%d]", base)
	}
	return fmt.Sprintf("[%%r%d%+d]", base, off)
}

// rel prints a relative jump or call target.
func rel(off int64) string { return fmt.Sprintf("%+d", off) }
