package asm

import (
	"encoding/binary"
	"fmt"
	"strings"
)

// Instruction is one 8-byte slot as RFC 9669 lays it out. An lddw is two
// Instructions: the second carries the upper 32 bits in Imm.
type Instruction struct {
	Opcode uint8
	Dst    uint8
	Src    uint8
	Offset int16
	Imm    int32
}

// Error is an assembly error at a place in the source.
type Error struct {
	Line   int    // 1-based line in the source given to Assemble
	Column int    // 1-based column of Token, 0 when the whole line is meant
	Token  string // the offending token, "" when none
	Msg    string
}

func (e *Error) Error() string {
	switch {
	case e.Token != "" && e.Column > 0:
		return fmt.Sprintf("line %d col %d: %s: %q", e.Line, e.Column, e.Msg, e.Token)
	case e.Token != "":
		return fmt.Sprintf("line %d: %s: %q", e.Line, e.Msg, e.Token)
	default:
		return fmt.Sprintf("line %d: %s", e.Line, e.Msg)
	}
}

// Assemble assembles src into little-endian instruction bytes.
func Assemble(src string) ([]byte, error) {
	return AssembleOrder(src, binary.LittleEndian)
}

// AssembleOrder assembles src into instruction bytes in the given byte order.
func AssembleOrder(src string, order binary.ByteOrder) ([]byte, error) {
	insns, err := Parse(src)
	if err != nil {
		return nil, err
	}
	return Encode(insns, order), nil
}

// Encode writes instructions as 8-byte slots. In big-endian order the
// register nibbles swap places, as the kernel's struct bpf_insn bitfields do.
func Encode(insns []Instruction, order binary.ByteOrder) []byte {
	out := make([]byte, 8*len(insns))
	for i, ins := range insns {
		b := out[8*i : 8*i+8]
		b[0] = ins.Opcode
		if order == binary.BigEndian {
			b[1] = ins.Dst<<4 | ins.Src&0xf
		} else {
			b[1] = ins.Src<<4 | ins.Dst&0xf
		}
		order.PutUint16(b[2:], uint16(ins.Offset))
		order.PutUint32(b[4:], uint32(ins.Imm))
	}
	return out
}

// fixup is a jump or local call whose target is a label, resolved once all
// labels are known.
type fixup struct {
	slot  int
	label token
	imm   bool // the target goes in Imm (ja32, call local) instead of Offset
}

// assembler holds the state of one Parse call.
type assembler struct {
	out    []Instruction
	labels map[string]int
	fixups []fixup
}

// Parse assembles src into instructions.
func Parse(src string) ([]Instruction, error) {
	a := &assembler{labels: map[string]int{}}
	implicitExit := -1
	for i, line := range strings.Split(src, "\n") {
		toks, err := tokenize(line, i+1)
		if err != nil {
			return nil, err
		}
		for len(toks) > 0 && toks[0].kind == tokLabel {
			name := toks[0].text
			if _, dup := a.labels[name]; dup {
				return nil, toks[0].errorf("duplicate label")
			}
			a.labels[name] = len(a.out)
			toks = toks[1:]
		}
		if len(toks) == 0 {
			continue
		}
		if toks[0].text == "exit" && implicitExit < 0 {
			implicitExit = len(a.out)
		}
		if err := a.instruction(toks); err != nil {
			return nil, err
		}
	}
	if _, ok := a.labels["exit"]; !ok && implicitExit >= 0 {
		a.labels["exit"] = implicitExit
	}
	for _, f := range a.fixups {
		target, ok := a.labels[f.label.text]
		if !ok {
			return nil, f.label.errorf("invalid label")
		}
		rel := int64(target) - int64(f.slot) - 1
		if f.imm {
			a.out[f.slot].Imm = int32(rel)
			continue
		}
		if rel < -1<<15 || rel >= 1<<15 {
			return nil, f.label.errorf("jump offset %d out of 16-bit range for label", rel)
		}
		a.out[f.slot].Offset = int16(rel)
	}
	return a.out, nil
}

// Opcode building blocks (RFC 9669 section 3).
const (
	classLD    = 0x00
	classLDX   = 0x01
	classST    = 0x02
	classSTX   = 0x03
	classALU   = 0x04
	classJMP   = 0x05
	classJMP32 = 0x06
	classALU64 = 0x07

	srcK = 0x00
	srcX = 0x08

	modeIMM    = 0x00
	modeMEM    = 0x60
	modeMEMSX  = 0x80
	modeATOMIC = 0xc0

	sizeW  = 0x00
	sizeH  = 0x08
	sizeB  = 0x10
	sizeDW = 0x18

	opEND  = 0xd0
	opCALL = 0x80
	opEXIT = 0x90

	atomicFetch   = 0x01
	atomicXchg    = 0xe0 | atomicFetch
	atomicCmpxchg = 0xf0 | atomicFetch

	pseudoCall    = 1
	pseudoRuntime = 2

	pseudoMapIdx      = 5
	pseudoMapIdxValue = 6
)

var aluOps = map[string]uint8{
	"add": 0x00, "sub": 0x10, "mul": 0x20, "div": 0x30, "sdiv": 0x30,
	"or": 0x40, "and": 0x50, "lsh": 0x60, "rsh": 0x70, "neg": 0x80,
	"mod": 0x90, "smod": 0x90, "xor": 0xa0, "mov": 0xb0, "arsh": 0xc0,
	"movsx8": 0xb0, "movsx16": 0xb0, "movsx32": 0xb0,
}

var jmpOps = map[string]uint8{
	"jeq": 0x10, "jgt": 0x20, "jge": 0x30, "jset": 0x40, "jne": 0x50,
	"jsgt": 0x60, "jsge": 0x70, "jlt": 0xa0, "jle": 0xb0, "jslt": 0xc0, "jsle": 0xd0,
}

var memSizes = map[string]uint8{"b": sizeB, "h": sizeH, "w": sizeW, "dw": sizeDW}

var atomicOps = map[string]int32{
	"add": 0x00, "or": 0x40, "and": 0x50, "xor": 0xa0, "xchg": atomicXchg, "cmpxchg": atomicCmpxchg,
}

func (a *assembler) emit(ins Instruction) { a.out = append(a.out, ins) }

// instruction assembles one instruction from its tokens; toks[0] is the
// mnemonic.
func (a *assembler) instruction(toks []token) error {
	mn := toks[0]
	if mn.kind != tokWord {
		return mn.errorf("expected a mnemonic")
	}
	name := strings.ToLower(mn.text)
	if name == "lock" {
		return a.atomic(toks)
	}
	if name == "call" {
		return a.call(toks)
	}
	ops, err := operands(toks[1:], mn)
	if err != nil {
		return err
	}
	switch {
	case name == "exit":
		if err := wantOperands(mn, ops, 0); err != nil {
			return err
		}
		a.emit(Instruction{Opcode: classJMP | opEXIT})
		return nil
	case name == "ja", name == "ja32", name == "gotol":
		if err := wantOperands(mn, ops, 1); err != nil {
			return err
		}
		wide := name != "ja"
		class := uint8(classJMP)
		if wide {
			class = classJMP32
		}
		ins := Instruction{Opcode: class}
		return a.jumpTarget(ins, ops[0], wide)
	case name == "lddw":
		return a.lddw(mn, ops)
	case strings.HasPrefix(name, "ldxs") && memSizes[name[4:]] != sizeDW && hasKey(memSizes, name[4:]):
		return a.load(mn, ops, modeMEMSX|memSizes[name[4:]])
	case strings.HasPrefix(name, "ldx") && hasKey(memSizes, name[3:]):
		return a.load(mn, ops, modeMEM|memSizes[name[3:]])
	case strings.HasPrefix(name, "stx") && hasKey(memSizes, name[3:]):
		return a.store(mn, ops, classSTX|modeMEM|memSizes[name[3:]], true)
	case strings.HasPrefix(name, "st") && hasKey(memSizes, name[2:]):
		return a.store(mn, ops, classST|modeMEM|memSizes[name[2:]], false)
	}
	if op, class, ok := splitWidth(name, jmpOps, classJMP, classJMP32); ok {
		return a.condJump(mn, ops, class|op)
	}
	if bits, ok := endianWidth(name); ok {
		var opc uint8
		switch {
		case strings.HasPrefix(name, "le"):
			opc = classALU | opEND | srcK
		case strings.HasPrefix(name, "be"):
			opc = classALU | opEND | srcX
		default: // swap, bswap: unconditional byte swap, ALU64 class
			opc = classALU64 | opEND
		}
		if err := wantOperands(mn, ops, 1); err != nil {
			return err
		}
		dst, err := ops[0].register()
		if err != nil {
			return err
		}
		a.emit(Instruction{Opcode: opc, Dst: dst, Imm: bits})
		return nil
	}
	if op, class, ok := splitWidth(name, aluOps, classALU64, classALU); ok {
		return a.alu(mn, name, ops, class|op)
	}
	return mn.errorf("invalid mnemonic")
}

func hasKey[V any](m map[string]V, k string) bool {
	_, ok := m[k]
	return ok
}

// splitWidth looks name up in ops with an optional "32" or "64" suffix and
// returns the class the suffix selects.
func splitWidth(name string, ops map[string]uint8, plain, c32 uint8) (op, class uint8, ok bool) {
	if op, ok := ops[name]; ok && !strings.HasPrefix(name, "movsx") {
		return op, plain, true
	}
	if base, found := strings.CutSuffix(name, "32"); found {
		if op, ok := ops[base]; ok {
			return op, c32, true
		}
	}
	if base, found := strings.CutSuffix(name, "64"); found {
		if op, ok := ops[base]; ok {
			return op, plain, true
		}
	}
	return 0, 0, false
}

// endianWidth recognises le16..le64, be16..be64, swap16..swap64 and
// bswap16..bswap64 and returns the width.
func endianWidth(name string) (int32, bool) {
	for _, p := range []string{"le", "be", "swap", "bswap"} {
		if rest, ok := strings.CutPrefix(name, p); ok {
			switch rest {
			case "16":
				return 16, true
			case "32":
				return 32, true
			case "64":
				return 64, true
			}
		}
	}
	return 0, false
}

func wantOperands(mn token, ops []operand, n int) error {
	if len(ops) != n {
		return mn.errorf("invalid number of operands: want %d, have %d", n, len(ops))
	}
	return nil
}

func (a *assembler) alu(mn token, name string, ops []operand, opc uint8) error {
	base := strings.TrimSuffix(strings.TrimSuffix(name, "32"), "64")
	if aluOps[base] == 0x80 { // neg
		if err := wantOperands(mn, ops, 1); err != nil {
			return err
		}
		dst, err := ops[0].register()
		if err != nil {
			return err
		}
		a.emit(Instruction{Opcode: opc, Dst: dst})
		return nil
	}
	if err := wantOperands(mn, ops, 2); err != nil {
		return err
	}
	dst, err := ops[0].register()
	if err != nil {
		return err
	}
	ins := Instruction{Opcode: opc, Dst: dst}
	switch {
	case strings.HasPrefix(base, "movsx"):
		// The suffix of "movsx8" etc. is the source width, kept in Offset.
		var w int16
		fmt.Sscan(base[len("movsx"):], &w)
		ins.Offset = w
		if !ops[1].isRegister() {
			return ops[1].tok.errorf("movsx takes a register source, not")
		}
	case base == "sdiv", base == "smod":
		ins.Offset = 1
	}
	if err := setSource(&ins, ops[1]); err != nil {
		return err
	}
	a.emit(ins)
	return nil
}

// setSource puts a register or immediate source operand into ins.
func setSource(ins *Instruction, op operand) error {
	if !op.isRegister() {
		imm, err := op.imm32()
		ins.Imm = imm
		return err
	}
	src, err := op.register()
	ins.Opcode |= srcX
	ins.Src = src
	return err
}

func (a *assembler) condJump(mn token, ops []operand, opc uint8) error {
	if err := wantOperands(mn, ops, 3); err != nil {
		return err
	}
	dst, err := ops[0].register()
	if err != nil {
		return err
	}
	ins := Instruction{Opcode: opc, Dst: dst}
	if err := setSource(&ins, ops[1]); err != nil {
		return err
	}
	return a.jumpTarget(ins, ops[2], false)
}

// jumpTarget emits ins with its target taken from op: a signed number is a
// slot offset, a name is a label resolved at the end.
func (a *assembler) jumpTarget(ins Instruction, op operand, wide bool) error {
	if op.isLabel() {
		a.fixups = append(a.fixups, fixup{slot: len(a.out), label: op.tok, imm: wide})
		a.emit(ins)
		return nil
	}
	if wide {
		v, err := op.imm32()
		if err != nil {
			return err
		}
		ins.Imm = v
	} else {
		v, err := op.offset16()
		if err != nil {
			return err
		}
		ins.Offset = v
	}
	a.emit(ins)
	return nil
}

func (a *assembler) lddw(mn token, ops []operand) error {
	if err := wantOperands(mn, ops, 2); err != nil {
		return err
	}
	dst, err := ops[0].register()
	if err != nil {
		return err
	}
	if ref, ok, err := ops[1].mapRef(); ok || err != nil {
		if err != nil {
			return err
		}
		a.emit(Instruction{Opcode: classLD | modeIMM | sizeDW, Dst: dst, Src: ref.src, Imm: ref.index})
		a.emit(Instruction{Imm: ref.off})
		return nil
	}
	v, err := ops[1].imm64()
	if err != nil {
		return err
	}
	a.emit(Instruction{Opcode: classLD | modeIMM | sizeDW, Dst: dst, Imm: int32(uint32(v))})
	a.emit(Instruction{Imm: int32(uint32(v >> 32))})
	return nil
}

func (a *assembler) load(mn token, ops []operand, modeSize uint8) error {
	if err := wantOperands(mn, ops, 2); err != nil {
		return err
	}
	dst, err := ops[0].register()
	if err != nil {
		return err
	}
	src, off, err := ops[1].memory()
	if err != nil {
		return err
	}
	a.emit(Instruction{Opcode: classLDX | modeSize, Dst: dst, Src: src, Offset: off})
	return nil
}

func (a *assembler) store(mn token, ops []operand, opc uint8, fromReg bool) error {
	if err := wantOperands(mn, ops, 2); err != nil {
		return err
	}
	dst, off, err := ops[0].memory()
	if err != nil {
		return err
	}
	ins := Instruction{Opcode: opc, Dst: dst, Offset: off}
	if fromReg {
		if ins.Src, err = ops[1].register(); err != nil {
			return err
		}
	} else if ins.Imm, err = ops[1].imm32(); err != nil {
		return err
	}
	a.emit(ins)
	return nil
}

// call handles "call N" (helper), "call %rN" (callx), "call local LABEL",
// "call helper N" and "call runtime N".
func (a *assembler) call(toks []token) error {
	mn := toks[0]
	mode := "helper"
	rest := toks[1:]
	if len(rest) > 0 && rest[0].kind == tokWord {
		switch strings.ToLower(rest[0].text) {
		case "local", "helper", "runtime":
			mode = strings.ToLower(rest[0].text)
			rest = rest[1:]
		}
	}
	ops, err := operands(rest, mn)
	if err != nil {
		return err
	}
	if err := wantOperands(mn, ops, 1); err != nil {
		return err
	}
	ins := Instruction{Opcode: classJMP | opCALL}
	switch mode {
	case "local":
		ins.Src = pseudoCall
		return a.jumpTarget(ins, ops[0], true)
	case "runtime":
		ins.Src = pseudoRuntime
	}
	if ops[0].isRegister() {
		if mode != "helper" {
			return ops[0].tok.errorf("a register target is only valid for a plain call:")
		}
		dst, err := ops[0].register()
		if err != nil {
			return err
		}
		ins.Opcode |= srcX
		ins.Dst = dst
		a.emit(ins)
		return nil
	}
	if ins.Imm, err = ops[0].imm32(); err != nil {
		return err
	}
	a.emit(ins)
	return nil
}

// atomic handles "lock [fetch] OP[32] [%rD+off], %rS".
func (a *assembler) atomic(toks []token) error {
	mn := toks[0]
	rest := toks[1:]
	fetch := false
	if len(rest) > 0 && rest[0].kind == tokWord && strings.EqualFold(rest[0].text, "fetch") {
		fetch = true
		rest = rest[1:]
	}
	if len(rest) == 0 {
		return mn.errorf("invalid number of operands for lock: want [fetch] OP [mem], %%reg")
	}
	opTok := rest[0]
	if opTok.kind != tokWord {
		return opTok.errorf("invalid atomic operation")
	}
	name := strings.ToLower(opTok.text)
	size := uint8(sizeDW)
	if base, ok := strings.CutSuffix(name, "32"); ok {
		name, size = base, sizeW
	} else if base, ok := strings.CutSuffix(name, "64"); ok {
		name = base
	}
	imm, ok := atomicOps[name]
	if !ok {
		return opTok.errorf("invalid atomic operation")
	}
	if fetch {
		imm |= atomicFetch
	}
	ops, err := operands(rest[1:], opTok)
	if err != nil {
		return err
	}
	if len(ops) != 2 {
		return mn.errorf("invalid number of operands for lock %s (want 2, have %d)", opTok.text, len(ops))
	}
	dst, off, err := ops[0].memory()
	if err != nil {
		return err
	}
	src, err := ops[1].register()
	if err != nil {
		return err
	}
	a.emit(Instruction{Opcode: classSTX | modeATOMIC | size, Dst: dst, Src: src, Offset: off, Imm: imm})
	return nil
}
