package runtime

import (
	"encoding/binary"
	"fmt"
)

// Opcode is an instruction's opcode byte (RFC 9669 section 3):
//
//	  7   6   5   4   3   2   1   0
//	+---------------+---+-----------+
//	|   operation   |src|   class   |   ALU, ALU64, JMP, JMP32
//	+-----------+-------+-----------+
//	|    mode   |  size |   class   |   LD, LDX, ST, STX
//	+-----------+-------+-----------+
//
// src selects the immediate (0) or the source register (1) as operand.
//
// The constants below name every opcode the runtime accepts; the
// interpreter, the validator, the ahead-of-time translator and the
// disassembler (Instruction.String) all speak them. ALU and jump names
// without a width are the 64-bit forms, as in the assembly dialect.
type Opcode uint8

// Every valid opcode.
const (
	OpAddImm    Opcode = 0x07
	OpAddReg    Opcode = 0x0f
	OpSubImm    Opcode = 0x17
	OpSubReg    Opcode = 0x1f
	OpMulImm    Opcode = 0x27
	OpMulReg    Opcode = 0x2f
	OpDivImm    Opcode = 0x37
	OpDivReg    Opcode = 0x3f
	OpOrImm     Opcode = 0x47
	OpOrReg     Opcode = 0x4f
	OpAndImm    Opcode = 0x57
	OpAndReg    Opcode = 0x5f
	OpLshImm    Opcode = 0x67
	OpLshReg    Opcode = 0x6f
	OpRshImm    Opcode = 0x77
	OpRshReg    Opcode = 0x7f
	OpModImm    Opcode = 0x97
	OpModReg    Opcode = 0x9f
	OpXorImm    Opcode = 0xa7
	OpXorReg    Opcode = 0xaf
	OpMovImm    Opcode = 0xb7
	OpMovReg    Opcode = 0xbf
	OpArshImm   Opcode = 0xc7
	OpArshReg   Opcode = 0xcf
	OpNeg       Opcode = 0x87
	OpBswap     Opcode = 0xd7
	OpAdd32Imm  Opcode = 0x04
	OpAdd32Reg  Opcode = 0x0c
	OpSub32Imm  Opcode = 0x14
	OpSub32Reg  Opcode = 0x1c
	OpMul32Imm  Opcode = 0x24
	OpMul32Reg  Opcode = 0x2c
	OpDiv32Imm  Opcode = 0x34
	OpDiv32Reg  Opcode = 0x3c
	OpOr32Imm   Opcode = 0x44
	OpOr32Reg   Opcode = 0x4c
	OpAnd32Imm  Opcode = 0x54
	OpAnd32Reg  Opcode = 0x5c
	OpLsh32Imm  Opcode = 0x64
	OpLsh32Reg  Opcode = 0x6c
	OpRsh32Imm  Opcode = 0x74
	OpRsh32Reg  Opcode = 0x7c
	OpMod32Imm  Opcode = 0x94
	OpMod32Reg  Opcode = 0x9c
	OpXor32Imm  Opcode = 0xa4
	OpXor32Reg  Opcode = 0xac
	OpMov32Imm  Opcode = 0xb4
	OpMov32Reg  Opcode = 0xbc
	OpArsh32Imm Opcode = 0xc4
	OpArsh32Reg Opcode = 0xcc
	OpNeg32     Opcode = 0x84
	OpLe        Opcode = 0xd4
	OpBe        Opcode = 0xdc
	OpLddw      Opcode = 0x18
	OpLdxw      Opcode = 0x61
	OpLdxh      Opcode = 0x69
	OpLdxb      Opcode = 0x71
	OpLdxdw     Opcode = 0x79
	OpLdxsw     Opcode = 0x81
	OpLdxsh     Opcode = 0x89
	OpLdxsb     Opcode = 0x91
	OpStw       Opcode = 0x62
	OpSth       Opcode = 0x6a
	OpStb       Opcode = 0x72
	OpStdw      Opcode = 0x7a
	OpStxw      Opcode = 0x63
	OpStxh      Opcode = 0x6b
	OpStxb      Opcode = 0x73
	OpStxdw     Opcode = 0x7b
	OpAtomicW   Opcode = 0xc3
	OpAtomicDW  Opcode = 0xdb
	OpJa        Opcode = 0x05
	OpJeqImm    Opcode = 0x15
	OpJeqReg    Opcode = 0x1d
	OpJgtImm    Opcode = 0x25
	OpJgtReg    Opcode = 0x2d
	OpJgeImm    Opcode = 0x35
	OpJgeReg    Opcode = 0x3d
	OpJsetImm   Opcode = 0x45
	OpJsetReg   Opcode = 0x4d
	OpJneImm    Opcode = 0x55
	OpJneReg    Opcode = 0x5d
	OpJsgtImm   Opcode = 0x65
	OpJsgtReg   Opcode = 0x6d
	OpJsgeImm   Opcode = 0x75
	OpJsgeReg   Opcode = 0x7d
	OpJltImm    Opcode = 0xa5
	OpJltReg    Opcode = 0xad
	OpJleImm    Opcode = 0xb5
	OpJleReg    Opcode = 0xbd
	OpJsltImm   Opcode = 0xc5
	OpJsltReg   Opcode = 0xcd
	OpJsleImm   Opcode = 0xd5
	OpJsleReg   Opcode = 0xdd
	OpCall      Opcode = 0x85
	OpCallx     Opcode = 0x8d
	OpExit      Opcode = 0x95
	OpJa32      Opcode = 0x06
	OpJeq32Imm  Opcode = 0x16
	OpJeq32Reg  Opcode = 0x1e
	OpJgt32Imm  Opcode = 0x26
	OpJgt32Reg  Opcode = 0x2e
	OpJge32Imm  Opcode = 0x36
	OpJge32Reg  Opcode = 0x3e
	OpJset32Imm Opcode = 0x46
	OpJset32Reg Opcode = 0x4e
	OpJne32Imm  Opcode = 0x56
	OpJne32Reg  Opcode = 0x5e
	OpJsgt32Imm Opcode = 0x66
	OpJsgt32Reg Opcode = 0x6e
	OpJsge32Imm Opcode = 0x76
	OpJsge32Reg Opcode = 0x7e
	OpJlt32Imm  Opcode = 0xa6
	OpJlt32Reg  Opcode = 0xae
	OpJle32Imm  Opcode = 0xb6
	OpJle32Reg  Opcode = 0xbe
	OpJslt32Imm Opcode = 0xc6
	OpJslt32Reg Opcode = 0xce
	OpJsle32Imm Opcode = 0xd6
	OpJsle32Reg Opcode = 0xde
)

var opcodeNames = map[Opcode]string{
	OpAddImm:    "add imm",
	OpAddReg:    "add reg",
	OpSubImm:    "sub imm",
	OpSubReg:    "sub reg",
	OpMulImm:    "mul imm",
	OpMulReg:    "mul reg",
	OpDivImm:    "div imm",
	OpDivReg:    "div reg",
	OpOrImm:     "or imm",
	OpOrReg:     "or reg",
	OpAndImm:    "and imm",
	OpAndReg:    "and reg",
	OpLshImm:    "lsh imm",
	OpLshReg:    "lsh reg",
	OpRshImm:    "rsh imm",
	OpRshReg:    "rsh reg",
	OpModImm:    "mod imm",
	OpModReg:    "mod reg",
	OpXorImm:    "xor imm",
	OpXorReg:    "xor reg",
	OpMovImm:    "mov imm",
	OpMovReg:    "mov reg",
	OpArshImm:   "arsh imm",
	OpArshReg:   "arsh reg",
	OpNeg:       "neg",
	OpBswap:     "bswap",
	OpAdd32Imm:  "add32 imm",
	OpAdd32Reg:  "add32 reg",
	OpSub32Imm:  "sub32 imm",
	OpSub32Reg:  "sub32 reg",
	OpMul32Imm:  "mul32 imm",
	OpMul32Reg:  "mul32 reg",
	OpDiv32Imm:  "div32 imm",
	OpDiv32Reg:  "div32 reg",
	OpOr32Imm:   "or32 imm",
	OpOr32Reg:   "or32 reg",
	OpAnd32Imm:  "and32 imm",
	OpAnd32Reg:  "and32 reg",
	OpLsh32Imm:  "lsh32 imm",
	OpLsh32Reg:  "lsh32 reg",
	OpRsh32Imm:  "rsh32 imm",
	OpRsh32Reg:  "rsh32 reg",
	OpMod32Imm:  "mod32 imm",
	OpMod32Reg:  "mod32 reg",
	OpXor32Imm:  "xor32 imm",
	OpXor32Reg:  "xor32 reg",
	OpMov32Imm:  "mov32 imm",
	OpMov32Reg:  "mov32 reg",
	OpArsh32Imm: "arsh32 imm",
	OpArsh32Reg: "arsh32 reg",
	OpNeg32:     "neg32",
	OpLe:        "le",
	OpBe:        "be",
	OpLddw:      "lddw",
	OpLdxw:      "ldxw",
	OpLdxh:      "ldxh",
	OpLdxb:      "ldxb",
	OpLdxdw:     "ldxdw",
	OpLdxsw:     "ldxsw",
	OpLdxsh:     "ldxsh",
	OpLdxsb:     "ldxsb",
	OpStw:       "stw",
	OpSth:       "sth",
	OpStb:       "stb",
	OpStdw:      "stdw",
	OpStxw:      "stxw",
	OpStxh:      "stxh",
	OpStxb:      "stxb",
	OpStxdw:     "stxdw",
	OpAtomicW:   "lock32",
	OpAtomicDW:  "lock",
	OpJa:        "ja",
	OpJeqImm:    "jeq imm",
	OpJeqReg:    "jeq reg",
	OpJgtImm:    "jgt imm",
	OpJgtReg:    "jgt reg",
	OpJgeImm:    "jge imm",
	OpJgeReg:    "jge reg",
	OpJsetImm:   "jset imm",
	OpJsetReg:   "jset reg",
	OpJneImm:    "jne imm",
	OpJneReg:    "jne reg",
	OpJsgtImm:   "jsgt imm",
	OpJsgtReg:   "jsgt reg",
	OpJsgeImm:   "jsge imm",
	OpJsgeReg:   "jsge reg",
	OpJltImm:    "jlt imm",
	OpJltReg:    "jlt reg",
	OpJleImm:    "jle imm",
	OpJleReg:    "jle reg",
	OpJsltImm:   "jslt imm",
	OpJsltReg:   "jslt reg",
	OpJsleImm:   "jsle imm",
	OpJsleReg:   "jsle reg",
	OpCall:      "call",
	OpCallx:     "callx",
	OpExit:      "exit",
	OpJa32:      "ja32",
	OpJeq32Imm:  "jeq32 imm",
	OpJeq32Reg:  "jeq32 reg",
	OpJgt32Imm:  "jgt32 imm",
	OpJgt32Reg:  "jgt32 reg",
	OpJge32Imm:  "jge32 imm",
	OpJge32Reg:  "jge32 reg",
	OpJset32Imm: "jset32 imm",
	OpJset32Reg: "jset32 reg",
	OpJne32Imm:  "jne32 imm",
	OpJne32Reg:  "jne32 reg",
	OpJsgt32Imm: "jsgt32 imm",
	OpJsgt32Reg: "jsgt32 reg",
	OpJsge32Imm: "jsge32 imm",
	OpJsge32Reg: "jsge32 reg",
	OpJlt32Imm:  "jlt32 imm",
	OpJlt32Reg:  "jlt32 reg",
	OpJle32Imm:  "jle32 imm",
	OpJle32Reg:  "jle32 reg",
	OpJslt32Imm: "jslt32 imm",
	OpJslt32Reg: "jslt32 reg",
	OpJsle32Imm: "jsle32 imm",
	OpJsle32Reg: "jsle32 reg",
}

// String returns the opcode's mnemonic, with the source kind for ALU and
// jump opcodes ("add32 imm", "jeq reg").
func (op Opcode) String() string {
	if s, ok := opcodeNames[op]; ok {
		return s
	}
	return fmt.Sprintf("Opcode(%#02x)", uint8(op))
}

// Class returns the instruction class, the low three bits.
func (op Opcode) Class() Class { return Class(op & 7) }

// Class is an instruction class (RFC 9669 section 3.1).
type Class uint8

// The instruction classes.
const (
	ClassLD    Class = classLD
	ClassLDX   Class = classLDX
	ClassST    Class = classST
	ClassSTX   Class = classSTX
	ClassALU   Class = classALU
	ClassJMP   Class = classJMP
	ClassJMP32 Class = classJMP32
	ClassALU64 Class = classALU64
)

func (c Class) String() string {
	return [...]string{"ld", "ldx", "st", "stx", "alu", "jmp", "jmp32", "alu64"}[c&7]
}

// Instruction is one 8-byte instruction slot as RFC 9669 lays it out. A
// 64-bit immediate load (lddw) occupies two slots; the second carries the
// upper half of the immediate in Imm and zero everywhere else.
type Instruction struct {
	Opcode Opcode
	Dst    uint8
	Src    uint8
	Offset int16
	Imm    int32
}

// Encode appends the slot in the given byte order. The register nibbles are
// swapped for big-endian, as the kernel's struct bpf_insn bitfields are.
func (i Instruction) Encode(b []byte, order binary.ByteOrder) []byte {
	regs := i.Dst&0xf | i.Src<<4
	if order == binary.BigEndian {
		regs = i.Src&0xf | i.Dst<<4
	}
	var s [8]byte
	s[0], s[1] = uint8(i.Opcode), regs
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
			Opcode: Opcode(s[0]),
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
// lddw's two halves merged into imm and jump targets made distances in bytes. The op
// byte is the RFC opcode except for the variants that RFC 9669 distinguishes
// by offset or immediate; those get opcode values the ISA leaves unused, so
// the interpreter's single switch needs no second look at the fields.
type insn struct {
	op  Opcode
	dst uint8
	src uint8
	x   uint8 // second source register of a fused pair; a direct lookup's key size (see callFunc)
	off int32 // memory offset, or jump distance in bytes from the next slot
	imm int64
}

// Internal opcodes. They reuse byte values of the legacy packet-access
// (BPF_ABS/BPF_IND) and unassigned ALU encodings, which the validator
// rejects in input, so they never collide with a real instruction.
const (
	opInvalid   Opcode = 0x00 // second slot of lddw: never executed
	opSdiv32Imm Opcode = 0xe4
	opSdiv32Reg Opcode = 0xec
	opSdiv64Imm Opcode = 0xe7
	opSdiv64Reg Opcode = 0xef
	opSmod32Imm Opcode = 0xf4
	opSmod32Reg Opcode = 0xfc
	opSmod64Imm Opcode = 0xf7
	opSmod64Reg Opcode = 0xff
	opMovsx32   Opcode = 0x20 // off = 8 or 16
	opMovsx64   Opcode = 0x28 // off = 8, 16 or 32
	opTrunc16   Opcode = 0x30 // le16 on a little-endian guest
	opTrunc32   Opcode = 0x38 // le32
	opNop       Opcode = 0x40 // le64
	opSwap16    Opcode = 0x48 // be16, bswap16
	opSwap32    Opcode = 0x50 // be32, bswap32
	opSwap64    Opcode = 0x58 // be64, bswap64
	opCallLocal Opcode = 0x01 // imm = absolute target

	// Fused loop tails: "add dst, imm" followed by a conditional jump on
	// dst. imm holds the addend in its low and the jump's immediate in its
	// high 32 bits; off is the jump's distance from the slot after the
	// pair. The jump stays in the next slot unchanged, for code that jumps
	// to it directly.
	opAddJltImm  Opcode = 0x60
	opAddJltReg  Opcode = 0x68
	opAddJleImm  Opcode = 0x70
	opAddJleReg  Opcode = 0x78
	opAddJneImm  Opcode = 0x80
	opAddJneReg  Opcode = 0x88
	opAddJsltImm Opcode = 0x90
	opAddJsltReg Opcode = 0x98
	opCallFunc   Opcode = 0x09 // imm = index into Program.funcs

	// Fused "mov dst, src; op dst, imm" (the three-address form clang
	// builds from two-address BPF): dst = src op imm.
	opMovAddImm  Opcode = 0x02
	opMovSubImm  Opcode = 0x03
	opMovMulImm  Opcode = 0x06
	opMovAndImm  Opcode = 0x0a
	opMovOrImm   Opcode = 0x0b
	opMovXorImm  Opcode = 0x0d
	opMovLshImm  Opcode = 0x0e
	opMovRshImm  Opcode = 0x10
	opMovArshImm Opcode = 0x11

	// Fused "mov dst, src; op dst, x": dst = src op x. When the second
	// instruction's source is dst itself, x is src, which dst then holds.
	opMovAddReg Opcode = 0x12
	opMovSubReg Opcode = 0x13
	opMovMulReg Opcode = 0x19
	opMovDivReg Opcode = 0x1a
	opMovModReg Opcode = 0x1b
	opMovAndReg Opcode = 0x21
	opMovOrReg  Opcode = 0x22
	opMovXorReg Opcode = 0x23
	opMovLshReg Opcode = 0x29
	opMovRshReg Opcode = 0x2a

	// Fused "ldx dst, [src+off]; op x, dst" (accumulating a loaded value,
	// x != dst): both registers are written, as the pair writes them.
	opLdxbAdd  Opcode = 0x2b
	opLdxhAdd  Opcode = 0x31
	opLdxwAdd  Opcode = 0x32
	opLdxdwAdd Opcode = 0x33
	opLdxbXor  Opcode = 0x39
	opLdxhXor  Opcode = 0x3a
	opLdxwXor  Opcode = 0x3b
	opLdxdwXor Opcode = 0x41

	// Fused "op dst, imm; ja target", the end of an if branch: off is the
	// jump's distance from the slot after the pair; the jump keeps its own
	// slot.
	opAddImmJa Opcode = 0x4b
	opSubImmJa Opcode = 0x51
	opMulImmJa Opcode = 0x52
	opAndImmJa Opcode = 0x53
	opOrImmJa  Opcode = 0x59
	opXorImmJa Opcode = 0x5a
	opMovImmJa Opcode = 0x5b

	// Fused pairs of conditional jumps of the same kind on the same
	// register against immediates (a chain of range tests, a search tree
	// built from a switch): imm holds the first immediate in its low and the
	// second in its high 32 bits, off the first jump's distance; the
	// second jump keeps its own slot, with its distance. They use the jump codes 0xe0 and
	// 0xf0, which no jump has.
	opJeqJeqImm Opcode = 0xe5
	opJneJneImm Opcode = 0xed
	opJgtJgtImm Opcode = 0xf5
	opJgeJgeImm Opcode = 0xfd
	opJltJltImm Opcode = 0xe6
	opJleJleImm Opcode = 0xee

	// Fused "mov dst, src; op dst, k; jcc dst, c", a test of some bits of
	// src (if (x >> k) == 0, if (x & mask) != 0): imm holds k in its low and
	// c in its high 32 bits; the jump keeps its own slot, two on. They use
	// the jump codes 0xe0 and 0xf0, and ST with mode MEMSX, which no
	// instruction has.
	opMovRshJeqImm Opcode = 0xf6
	opMovRshJneImm Opcode = 0xfe
	opMovAndJeqImm Opcode = 0x82
	opMovAndJneImm Opcode = 0x8a

	// Fused "mov dst, src; add x, imm" with x != dst: two independent
	// updates (STX with mode MEMSX, which no instruction has).
	opMovAddImmOther Opcode = 0x92

	// Fused "ldxh dst, [src+off]; be16 dst" and "ldxw ...; be32 dst", a
	// network-order field read (STX with mode MEMSX, which no instruction
	// has): the load, then its bytes swapped; the swap keeps its own slot.
	opLdxhSwap16 Opcode = 0x8b
	opLdxwSwap32 Opcode = 0x9b

	// Fused "add dst, imm; jge dst, src; jlt dst, imm2", the tail of
	// clang's for (i = 0; i < len && i < MAX; i++): imm holds the addend
	// in its low and imm2 in its high 32 bits, src is the jge's; both
	// jumps keep their slots. It uses JMP32 with the code of call, which
	// no instruction has.
	opAddJgeRegJltImm Opcode = 0x86

	// Fused "mov32 dst, src; add32 dst, imm; and32 dst, imm2" (STX with
	// mode MEMSX, which no instruction has): imm holds imm in its low and
	// imm2 in its high 32 bits.
	opMov32AddAnd Opcode = 0x93

	// Fused triples of conditional jumps of the same kind on the same
	// register against immediates (a longer chain of range tests, or of
	// the equality tests clang makes of a short switch): imm and off as in
	// the fused pairs; the third immediate is read from the third slot,
	// which keeps its own instruction, as the second does. They use ST
	// and STX with mode IND, STX with mode MEMSX, and JMP32 with the codes
	// of call and exit, which no instruction has.
	opJeq3Imm Opcode = 0x42
	opJne3Imm Opcode = 0x43
	opJgt3Imm Opcode = 0x4a
	opJge3Imm Opcode = 0x83
	opJlt3Imm Opcode = 0x8e
	opJle3Imm Opcode = 0x9e
)
