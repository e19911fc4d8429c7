package runtime

import (
	"fmt"
	"strconv"
	"strings"
)

// assemble is a small assembler for the ubpf dialect the conformance
// vectors use, enough to feed their "-- asm" sections to the interpreter
// without depending on another package.
func assemble(src string) ([]Instruction, error) {
	type line struct {
		no     int
		mn     string
		ops    []string
		label  string // pending label reference for jumps and local calls
		insIdx int
	}
	var lines []line
	labels := map[string]int{}
	slot := 0
	for no, l := range strings.Split(src, "\n") {
		if i := strings.IndexByte(l, '#'); i >= 0 {
			l = l[:i]
		}
		l = strings.TrimSpace(l)
		if l == "" {
			continue
		}
		if strings.HasSuffix(l, ":") {
			labels[strings.TrimSuffix(l, ":")] = slot
			continue
		}
		mn, rest, _ := strings.Cut(l, " ")
		if mn == "lock" {
			m2, r2, _ := strings.Cut(strings.TrimSpace(rest), " ")
			mn, rest = "lock "+m2, r2
			if m2 == "fetch" {
				m3, r3, _ := strings.Cut(strings.TrimSpace(rest), " ")
				mn, rest = "lock fetch "+m3, r3
			}
		}
		var ops []string
		if rest = strings.TrimSpace(rest); rest != "" {
			for _, o := range strings.Split(rest, ",") {
				ops = append(ops, strings.TrimSpace(o))
			}
		}
		lines = append(lines, line{no: no + 1, mn: mn, ops: ops, insIdx: slot})
		slot++
		if mn == "lddw" {
			slot++
		}
	}
	if _, ok := labels["exit"]; !ok {
		// The dialect lets jumps name "exit" for the final exit.
		labels["exit"] = slot - 1
	}
	var out []Instruction
	for _, ln := range lines {
		ins, err := asmLine(ln.mn, ln.ops, ln.insIdx, labels)
		if err != nil {
			return nil, fmt.Errorf("line %d: %s: %w", ln.no, ln.mn, err)
		}
		out = append(out, ins...)
	}
	return out, nil
}

func asmReg(s string) (uint8, error) {
	if !strings.HasPrefix(s, "%r") {
		return 0, fmt.Errorf("want register, got %q", s)
	}
	n, err := strconv.Atoi(s[2:])
	if err != nil || n < 0 || n > 10 {
		return 0, fmt.Errorf("bad register %q", s)
	}
	return uint8(n), nil
}

func asmImm(s string) (int64, error) {
	neg := strings.HasPrefix(s, "-")
	s = strings.TrimPrefix(strings.TrimPrefix(s, "-"), "+")
	v, err := strconv.ParseUint(s, 0, 64)
	if err != nil {
		return 0, fmt.Errorf("bad immediate %q", s)
	}
	if neg {
		return -int64(v), nil
	}
	return int64(v), nil
}

// asmMem parses [%rN+off].
func asmMem(s string) (uint8, int16, error) {
	if !strings.HasPrefix(s, "[") || !strings.HasSuffix(s, "]") {
		return 0, 0, fmt.Errorf("want memory operand, got %q", s)
	}
	s = s[1 : len(s)-1]
	i := strings.IndexAny(s, "+-")
	off := int64(0)
	regS := s
	if i > 0 {
		regS = s[:i]
		var err error
		if off, err = asmImm(s[i:]); err != nil {
			return 0, 0, err
		}
	}
	r, err := asmReg(regS)
	return r, int16(off), err
}

func asmTarget(s string, pc int, labels map[string]int) (int64, error) {
	if t, ok := labels[s]; ok {
		return int64(t - pc - 1), nil
	}
	return asmImm(s)
}

var aluOps = map[string]uint8{
	"add": aluADD, "sub": aluSUB, "mul": aluMUL, "div": aluDIV, "or": aluOR, "and": aluAND,
	"lsh": aluLSH, "rsh": aluRSH, "mod": aluMOD, "xor": aluXOR, "mov": aluMOV, "arsh": aluARSH,
	"sdiv": aluDIV, "smod": aluMOD,
}

var jmpOps = map[string]uint8{
	"jeq": 0x10, "jgt": 0x20, "jge": 0x30, "jset": 0x40, "jne": 0x50, "jsgt": 0x60, "jsge": 0x70,
	"jlt": 0xa0, "jle": 0xb0, "jslt": 0xc0, "jsle": 0xd0,
}

var sizes = map[string]uint8{"b": sizeB, "h": sizeH, "w": sizeW, "dw": sizeDW}

var atomicOps = map[string]int32{"add": atomicADD, "or": atomicOR, "and": atomicAND, "xor": atomicXOR}

func asmLine(mn string, ops []string, pc int, labels map[string]int) ([]Instruction, error) {
	one := func(i Instruction) ([]Instruction, error) { return []Instruction{i}, nil }
	want := func(n int) error {
		if len(ops) != n {
			return fmt.Errorf("want %d operands, got %d", n, len(ops))
		}
		return nil
	}
	switch {
	case mn == "exit":
		return one(Instruction{Opcode: classJMP | jmpEXIT})
	case mn == "lddw":
		if err := want(2); err != nil {
			return nil, err
		}
		d, err := asmReg(ops[0])
		if err != nil {
			return nil, err
		}
		if idx, ok := strings.CutPrefix(ops[1], "map:"); ok {
			// lddw %rN, map:I loads the handle of ProgramSpec.Maps[I].
			n, err := strconv.Atoi(idx)
			return []Instruction{{Opcode: 0x18, Dst: d, Src: PseudoMapIdx, Imm: int32(n)}, {}}, err
		}
		if idx, ok := strings.CutPrefix(ops[1], "value:"); ok {
			// lddw %rN, value:I+OFF loads the address of map I's value
			// at key 0, plus OFF: a global variable.
			is, offs, _ := strings.Cut(idx, "+")
			n, err := strconv.Atoi(is)
			if err != nil {
				return nil, err
			}
			off, _ := strconv.Atoi(offs)
			return []Instruction{{Opcode: 0x18, Dst: d, Src: PseudoMapIdxValue, Imm: int32(n)}, {Imm: int32(off)}}, nil
		}
		v, err := asmImm(ops[1])
		if err != nil {
			return nil, err
		}
		return []Instruction{{Opcode: 0x18, Dst: d, Imm: int32(uint32(v))}, {Imm: int32(uint64(v) >> 32)}}, nil
	case mn == "call":
		if len(ops) == 1 && strings.HasPrefix(ops[0], "%r") {
			r, err := asmReg(ops[0])
			return []Instruction{{Opcode: classJMP | jmpCALL | srcX, Dst: r}}, err
		}
		if len(ops) == 1 && strings.HasPrefix(ops[0], "local ") {
			t, err := asmTarget(strings.TrimSpace(strings.TrimPrefix(ops[0], "local ")), pc, labels)
			return []Instruction{{Opcode: classJMP | jmpCALL, Src: PseudoCall, Imm: int32(t)}}, err
		}
		if err := want(1); err != nil {
			return nil, err
		}
		v, err := asmImm(ops[0])
		return []Instruction{{Opcode: classJMP | jmpCALL, Imm: int32(v)}}, err
	case mn == "ja" || mn == "ja32":
		if err := want(1); err != nil {
			return nil, err
		}
		t, err := asmTarget(ops[0], pc, labels)
		if mn == "ja32" {
			return []Instruction{{Opcode: classJMP32 | jmpJA, Imm: int32(t)}}, err
		}
		return []Instruction{{Opcode: classJMP | jmpJA, Offset: int16(t)}}, err
	case strings.HasPrefix(mn, "lock "):
		f := strings.Fields(mn)
		name := f[len(f)-1]
		size := uint8(sizeDW)
		if strings.HasSuffix(name, "32") {
			size, name = sizeW, strings.TrimSuffix(name, "32")
		}
		var imm int32
		switch name {
		case "xchg":
			imm = atomicXCHG
		case "cmpxchg":
			imm = atomicCMPXCHG
		default:
			v, ok := atomicOps[name]
			if !ok {
				return nil, fmt.Errorf("unknown atomic %q", name)
			}
			imm = v
			if f[1] == "fetch" {
				imm |= atomicFETCH
			}
		}
		if err := want(2); err != nil {
			return nil, err
		}
		d, off, err := asmMem(ops[0])
		if err != nil {
			return nil, err
		}
		s, err := asmReg(ops[1])
		return []Instruction{{Opcode: classSTX | modeATOMIC | size, Dst: d, Src: s, Offset: off, Imm: imm}}, err
	}
	// Byte swaps.
	for _, p := range []struct {
		prefix string
		op     uint8
	}{{"le", classALU | aluEND}, {"be", classALU | aluEND | srcX}, {"bswap", classALU64 | aluEND}, {"swap", classALU64 | aluEND}} {
		if w, ok := strings.CutPrefix(mn, p.prefix); ok {
			if n, err := strconv.Atoi(w); err == nil {
				if err := want(1); err != nil {
					return nil, err
				}
				d, err := asmReg(ops[0])
				return []Instruction{{Opcode: p.op, Dst: d, Imm: int32(n)}}, err
			}
		}
	}
	// Loads and stores.
	if s, ok := strings.CutPrefix(mn, "ldxs"); ok && sizes[s] != 0 || ok && s == "w" {
		if err := want(2); err != nil {
			return nil, err
		}
		d, err := asmReg(ops[0])
		if err != nil {
			return nil, err
		}
		b, off, err := asmMem(ops[1])
		return []Instruction{{Opcode: classLDX | modeMEMSX | sizes[s], Dst: d, Src: b, Offset: off}}, err
	}
	if s, ok := strings.CutPrefix(mn, "ldx"); ok {
		if err := want(2); err != nil {
			return nil, err
		}
		sz, ok := sizes[s]
		if !ok {
			return nil, fmt.Errorf("unknown size")
		}
		d, err := asmReg(ops[0])
		if err != nil {
			return nil, err
		}
		b, off, err := asmMem(ops[1])
		return []Instruction{{Opcode: classLDX | modeMEM | sz, Dst: d, Src: b, Offset: off}}, err
	}
	if s, ok := strings.CutPrefix(mn, "stx"); ok {
		if err := want(2); err != nil {
			return nil, err
		}
		sz, ok := sizes[s]
		if !ok {
			return nil, fmt.Errorf("unknown size")
		}
		d, off, err := asmMem(ops[0])
		if err != nil {
			return nil, err
		}
		r, err := asmReg(ops[1])
		return []Instruction{{Opcode: classSTX | modeMEM | sz, Dst: d, Src: r, Offset: off}}, err
	}
	if s, ok := strings.CutPrefix(mn, "st"); ok {
		if sz, ok := sizes[s]; ok {
			if err := want(2); err != nil {
				return nil, err
			}
			d, off, err := asmMem(ops[0])
			if err != nil {
				return nil, err
			}
			v, err := asmImm(ops[1])
			return []Instruction{{Opcode: classST | modeMEM | sz, Dst: d, Offset: off, Imm: int32(v)}}, err
		}
	}
	// movsx<from><to>.
	if s, ok := strings.CutPrefix(mn, "movsx"); ok && len(s) >= 3 {
		from, _ := strconv.Atoi(s[:len(s)-2])
		class := uint8(classALU64)
		if s[len(s)-2:] == "32" {
			class = classALU
		}
		if err := want(2); err != nil {
			return nil, err
		}
		d, err := asmReg(ops[0])
		if err != nil {
			return nil, err
		}
		r, err := asmReg(ops[1])
		return []Instruction{{Opcode: class | aluMOV | srcX, Dst: d, Src: r, Offset: int16(from)}}, err
	}
	// Jumps.
	base, is32 := mn, false
	if b, ok := strings.CutSuffix(mn, "32"); ok {
		base, is32 = b, true
	} else if b, ok := strings.CutSuffix(mn, "64"); ok {
		base = b
	}
	if code, ok := jmpOps[base]; ok {
		if err := want(3); err != nil {
			return nil, err
		}
		class := uint8(classJMP)
		if is32 {
			class = classJMP32
		}
		d, err := asmReg(ops[0])
		if err != nil {
			return nil, err
		}
		t, err := asmTarget(ops[2], pc, labels)
		if err != nil {
			return nil, err
		}
		if strings.HasPrefix(ops[1], "%r") {
			s, err := asmReg(ops[1])
			return []Instruction{{Opcode: class | code | srcX, Dst: d, Src: s, Offset: int16(t)}}, err
		}
		v, err := asmImm(ops[1])
		return []Instruction{{Opcode: class | code, Dst: d, Offset: int16(t), Imm: int32(v)}}, err
	}
	// ALU.
	class := uint8(classALU64)
	if is32 {
		class = classALU
	}
	if base == "neg" {
		if err := want(1); err != nil {
			return nil, err
		}
		d, err := asmReg(ops[0])
		return []Instruction{{Opcode: class | aluNEG, Dst: d}}, err
	}
	code, ok := aluOps[base]
	if !ok {
		return nil, fmt.Errorf("unknown mnemonic")
	}
	var off int16
	if base == "sdiv" || base == "smod" {
		off = 1
	}
	if err := want(2); err != nil {
		return nil, err
	}
	d, err := asmReg(ops[0])
	if err != nil {
		return nil, err
	}
	if strings.HasPrefix(ops[1], "%r") {
		s, err := asmReg(ops[1])
		return []Instruction{{Opcode: class | code | srcX, Dst: d, Src: s, Offset: off}}, err
	}
	v, err := asmImm(ops[1])
	return []Instruction{{Opcode: class | code, Dst: d, Offset: off, Imm: int32(v)}}, err
}
