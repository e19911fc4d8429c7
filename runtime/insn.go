package runtime

import (
	"encoding/binary"
	"fmt"
)

// Instruction is one 8-byte instruction slot as RFC 9669 lays it out. A
// 64-bit immediate load (lddw) occupies two slots; the second carries the
// upper half of the immediate in Imm and zero everywhere else.
type Instruction struct {
	Opcode uint8
	Dst    uint8
	Src    uint8
	Offset int16
	Imm    int32
}

// String prints the raw fields, enough to identify an instruction in an error.
func (i Instruction) String() string {
	return fmt.Sprintf("op=%#02x dst=r%d src=r%d off=%d imm=%d", i.Opcode, i.Dst, i.Src, i.Offset, i.Imm)
}

// Encode appends the slot in the given byte order. The register nibbles are
// swapped for big-endian, as the kernel's struct bpf_insn bitfields are.
func (i Instruction) Encode(b []byte, order binary.ByteOrder) []byte {
	regs := i.Dst&0xf | i.Src<<4
	if order == binary.BigEndian {
		regs = i.Src&0xf | i.Dst<<4
	}
	var s [8]byte
	s[0], s[1] = i.Opcode, regs
	order.PutUint16(s[2:], uint16(i.Offset))
	order.PutUint32(s[4:], uint32(i.Imm))
	return append(b, s[:]...)
}

// DecodeInstructions splits raw instruction bytes into slots.
func DecodeInstructions(b []byte, order binary.ByteOrder) ([]Instruction, error) {
	if len(b)%8 != 0 {
		return nil, fmt.Errorf("instruction bytes: length %d is not a multiple of 8", len(b))
	}
	out := make([]Instruction, len(b)/8)
	for n := range out {
		s := b[n*8 : n*8+8]
		dst, src := s[1]&0xf, s[1]>>4
		if order == binary.BigEndian {
			dst, src = s[1]>>4, s[1]&0xf
		}
		out[n] = Instruction{
			Opcode: s[0],
			Dst:    dst,
			Src:    src,
			Offset: int16(order.Uint16(s[2:])),
			Imm:    int32(order.Uint32(s[4:])),
		}
	}
	return out, nil
}

// Instruction classes and fields (RFC 9669 section 3).
const (
	classLD    = 0x00
	classLDX   = 0x01
	classST    = 0x02
	classSTX   = 0x03
	classALU   = 0x04
	classJMP   = 0x05
	classJMP32 = 0x06
	classALU64 = 0x07

	srcX = 0x08

	modeIMM    = 0x00
	modeMEM    = 0x60
	modeMEMSX  = 0x80
	modeATOMIC = 0xc0

	sizeW  = 0x00
	sizeH  = 0x08
	sizeB  = 0x10
	sizeDW = 0x18
)

// ALU operations (the upper nibble of the opcode).
const (
	aluADD  = 0x00
	aluSUB  = 0x10
	aluMUL  = 0x20
	aluDIV  = 0x30
	aluOR   = 0x40
	aluAND  = 0x50
	aluLSH  = 0x60
	aluRSH  = 0x70
	aluNEG  = 0x80
	aluMOD  = 0x90
	aluXOR  = 0xa0
	aluMOV  = 0xb0
	aluARSH = 0xc0
	aluEND  = 0xd0
)

// Jump operations.
const (
	jmpJA   = 0x00
	jmpCALL = 0x80
	jmpEXIT = 0x90
)

// Atomic operations, carried in the immediate of a STX|ATOMIC instruction.
const (
	atomicADD     = 0x00
	atomicOR      = 0x40
	atomicAND     = 0x50
	atomicXOR     = 0xa0
	atomicFETCH   = 0x01
	atomicXCHG    = 0xe0 | atomicFETCH
	atomicCMPXCHG = 0xf0 | atomicFETCH
)

// Pseudo sources of lddw and call, as the kernel's uapi defines them.
const (
	PseudoMapFD       = 1
	PseudoMapValue    = 2
	PseudoBTFID       = 3
	PseudoFunc        = 4
	PseudoMapIdx      = 5
	PseudoMapIdxValue = 6

	PseudoCall      = 1
	PseudoKfuncCall = 2
)

// insn is the pre-decoded form the interpreter executes: 16 bytes, with
// lddw's two halves merged into imm and jump targets made absolute. The op
// byte is the RFC opcode except for the variants that RFC 9669 distinguishes
// by offset or immediate; those get opcode values the ISA leaves unused, so
// the interpreter's single switch needs no second look at the fields.
type insn struct {
	op  uint8
	dst uint8
	src uint8
	x   uint8 // second source register of a fused pair
	off int32 // memory offset, or absolute jump target
	imm int64
}

// Internal opcodes. They reuse byte values of the legacy packet-access
// (BPF_ABS/BPF_IND) and unassigned ALU encodings, which the validator
// rejects in input, so they never collide with a real instruction.
const (
	opInvalid   = 0x00 // second slot of lddw: never executed
	opSdiv32Imm = 0xe4
	opSdiv32Reg = 0xec
	opSdiv64Imm = 0xe7
	opSdiv64Reg = 0xef
	opSmod32Imm = 0xf4
	opSmod32Reg = 0xfc
	opSmod64Imm = 0xf7
	opSmod64Reg = 0xff
	opMovsx32   = 0x20 // off = 8 or 16
	opMovsx64   = 0x28 // off = 8, 16 or 32
	opTrunc16   = 0x30 // le16 on a little-endian guest
	opTrunc32   = 0x38 // le32
	opNop       = 0x40 // le64
	opSwap16    = 0x48 // be16, bswap16
	opSwap32    = 0x50 // be32, bswap32
	opSwap64    = 0x58 // be64, bswap64
	opCallLocal = 0x01 // imm = absolute target

	// Fused loop tails: "add dst, imm" followed by a conditional jump on
	// dst. imm holds the addend in its low and the jump's immediate in its
	// high 32 bits; off is the jump's target. The jump stays in the next
	// slot unchanged, for code that jumps to it directly.
	opAddJltImm  = 0x60
	opAddJltReg  = 0x68
	opAddJleImm  = 0x70
	opAddJleReg  = 0x78
	opAddJneImm  = 0x80
	opAddJneReg  = 0x88
	opAddJsltImm = 0x90
	opAddJsltReg = 0x98
	opCallFunc   = 0x09 // imm = index into Program.funcs

	// Fused "mov dst, src; op dst, imm" (the three-address form clang
	// builds from two-address BPF): dst = src op imm.
	opMovAddImm  = 0x02
	opMovSubImm  = 0x03
	opMovMulImm  = 0x06
	opMovAndImm  = 0x0a
	opMovOrImm   = 0x0b
	opMovXorImm  = 0x0d
	opMovLshImm  = 0x0e
	opMovRshImm  = 0x10
	opMovArshImm = 0x11

	// Fused "mov dst, src; op dst, x": dst = src op x. When the second
	// instruction's source is dst itself, x is src, which dst then holds.
	opMovAddReg = 0x12
	opMovSubReg = 0x13
	opMovMulReg = 0x19
	opMovDivReg = 0x1a
	opMovModReg = 0x1b
	opMovAndReg = 0x21
	opMovOrReg  = 0x22
	opMovXorReg = 0x23
	opMovLshReg = 0x29
	opMovRshReg = 0x2a

	// Fused "ldx dst, [src+off]; op x, dst" (accumulating a loaded value,
	// x != dst): both registers are written, as the pair writes them.
	opLdxbAdd  = 0x2b
	opLdxhAdd  = 0x31
	opLdxwAdd  = 0x32
	opLdxdwAdd = 0x33
	opLdxbXor  = 0x39
	opLdxhXor  = 0x3a
	opLdxwXor  = 0x3b
	opLdxdwXor = 0x41
	opLdxbOr   = 0x42
	opLdxhOr   = 0x43
	opLdxwOr   = 0x49
	opLdxdwOr  = 0x4a

	// Fused "op dst, imm; ja target", the end of an if branch: off is the
	// jump's target, the jump keeps its own slot.
	opAddImmJa = 0x4b
	opSubImmJa = 0x51
	opMulImmJa = 0x52
	opAndImmJa = 0x53
	opOrImmJa  = 0x59
	opXorImmJa = 0x5a
	opMovImmJa = 0x5b
)
