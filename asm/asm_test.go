package asm

import (
	"bytes"
	"encoding/binary"
	"errors"
	"strings"
	"testing"

	ebpf "github.com/cilium/ebpf/asm"
)

// decode decodes instruction bytes with cilium/ebpf, a decoder nobody here
// wrote, so the table below checks our opcodes and field layout against it.
// (Decoding rather than encoding with cilium/ebpf: v0.22.0's Marshal writes
// imm 0 for atomics built with AtomicOp.Mem, so xchg would encode as add.)
func decode(t *testing.T, b []byte, order binary.ByteOrder) ebpf.Instructions {
	t.Helper()
	insns, err := ebpf.AppendInstructions(nil, bytes.NewReader(b), order, "linux")
	if err != nil {
		t.Fatalf("cilium/ebpf cannot decode % x: %v", b, err)
	}
	return insns
}

// sameInstruction compares what the encoding determines. For atomics the
// operation sits in the opcode (cilium/ebpf folds imm into it on decode),
// so Constant is not compared there.
func sameInstruction(got, want ebpf.Instruction) bool {
	if got.OpCode != want.OpCode || got.Dst != want.Dst || got.Src != want.Src || got.Offset != want.Offset {
		return false
	}
	return got.OpCode.AtomicOp() != ebpf.InvalidAtomic || got.Constant == want.Constant
}

func TestEncodingAgainstCilium(t *testing.T) {
	jmp := func(op ebpf.JumpOp, class ebpf.Class, src ebpf.Source) ebpf.OpCode {
		return ebpf.OpCode(class).SetJumpOp(op).SetSource(src)
	}
	call := func(src ebpf.Register, imm int64) ebpf.Instruction {
		return ebpf.Instruction{OpCode: jmp(ebpf.Call, ebpf.JumpClass, ebpf.ImmSource), Src: src, Constant: imm}
	}
	tests := []struct {
		src  string
		want []ebpf.Instruction
	}{
		{"mov %r0, %r2", []ebpf.Instruction{ebpf.Mov.Reg(ebpf.R0, ebpf.R2)}},
		{"mov64 %r0, 7", []ebpf.Instruction{ebpf.Mov.Imm(ebpf.R0, 7)}},
		{"mov32 %r1, -1", []ebpf.Instruction{ebpf.Mov.Imm32(ebpf.R1, -1)}},
		{"mov32 %r0, 0x80000000", []ebpf.Instruction{ebpf.Mov.Imm32(ebpf.R0, -0x80000000)}},
		{"add %r3, %r4", []ebpf.Instruction{ebpf.Add.Reg(ebpf.R3, ebpf.R4)}},
		{"add32 %r3, 0xffffffff", []ebpf.Instruction{ebpf.Add.Imm32(ebpf.R3, -1)}},
		{"sub %r1, 3", []ebpf.Instruction{ebpf.Sub.Imm(ebpf.R1, 3)}},
		{"mul32 %r1, %r9", []ebpf.Instruction{ebpf.Mul.Reg32(ebpf.R1, ebpf.R9)}},
		{"div %r1, 10", []ebpf.Instruction{ebpf.Div.Imm(ebpf.R1, 10)}},
		{"sdiv %r1, -10", []ebpf.Instruction{ebpf.SDiv.Imm(ebpf.R1, -10)}},
		{"sdiv32 %r1, %r2", []ebpf.Instruction{ebpf.SDiv.Reg32(ebpf.R1, ebpf.R2)}},
		{"smod %r1, %r2", []ebpf.Instruction{ebpf.SMod.Reg(ebpf.R1, ebpf.R2)}},
		{"smod32 %r1, 3", []ebpf.Instruction{ebpf.SMod.Imm32(ebpf.R1, 3)}},
		{"mod %r1, 3", []ebpf.Instruction{ebpf.Mod.Imm(ebpf.R1, 3)}},
		{"or %r0, %r10", []ebpf.Instruction{ebpf.Or.Reg(ebpf.R0, ebpf.R10)}},
		{"and32 %r0, 0xf", []ebpf.Instruction{ebpf.And.Imm32(ebpf.R0, 15)}},
		{"lsh %r0, 32", []ebpf.Instruction{ebpf.LSh.Imm(ebpf.R0, 32)}},
		{"rsh32 %r0, %r1", []ebpf.Instruction{ebpf.RSh.Reg32(ebpf.R0, ebpf.R1)}},
		{"arsh %r0, -4", []ebpf.Instruction{ebpf.ArSh.Imm(ebpf.R0, -4)}},
		{"xor %r0, %r1", []ebpf.Instruction{ebpf.Xor.Reg(ebpf.R0, ebpf.R1)}},
		{"neg %r2", []ebpf.Instruction{ebpf.Neg.Imm(ebpf.R2, 0)}},
		{"neg32 %r2", []ebpf.Instruction{ebpf.Neg.Imm32(ebpf.R2, 0)}},
		{"movsx864 %r0, %r1", []ebpf.Instruction{ebpf.MovSX8.Reg(ebpf.R0, ebpf.R1)}},
		{"movsx1664 %r0, %r1", []ebpf.Instruction{ebpf.MovSX16.Reg(ebpf.R0, ebpf.R1)}},
		{"movsx3264 %r0, %r1", []ebpf.Instruction{ebpf.MovSX32.Reg(ebpf.R0, ebpf.R1)}},
		{"movsx832 %r0, %r1", []ebpf.Instruction{ebpf.MovSX8.Reg32(ebpf.R0, ebpf.R1)}},
		{"movsx1632 %r0, %r1", []ebpf.Instruction{ebpf.MovSX16.Reg32(ebpf.R0, ebpf.R1)}},
		{"le16 %r3", []ebpf.Instruction{ebpf.HostTo(ebpf.LE, ebpf.R3, ebpf.Half)}},
		{"le64 %r3", []ebpf.Instruction{ebpf.HostTo(ebpf.LE, ebpf.R3, ebpf.DWord)}},
		{"be32 %r3", []ebpf.Instruction{ebpf.HostTo(ebpf.BE, ebpf.R3, ebpf.Word)}},
		{"bswap16 %r0", []ebpf.Instruction{ebpf.BSwap(ebpf.R0, ebpf.Half)}},
		{"swap64 %r0", []ebpf.Instruction{ebpf.BSwap(ebpf.R0, ebpf.DWord)}},
		{"lddw %r0, 0x123456789abcdef0", []ebpf.Instruction{ebpf.LoadImm(ebpf.R0, 0x123456789abcdef0, ebpf.DWord)}},
		{"lddw %r1, 0xFFFFFFFFFFFFFFFF", []ebpf.Instruction{ebpf.LoadImm(ebpf.R1, -1, ebpf.DWord)}},
		{"lddw %r1, -2", []ebpf.Instruction{ebpf.LoadImm(ebpf.R1, -2, ebpf.DWord)}},
		{"ldxdw %r0, [%r1+8]", []ebpf.Instruction{ebpf.LoadMem(ebpf.R0, ebpf.R1, 8, ebpf.DWord)}},
		{"ldxb %r0, [%r1]", []ebpf.Instruction{ebpf.LoadMem(ebpf.R0, ebpf.R1, 0, ebpf.Byte)}},
		{"ldxh %r0, [%r10-2]", []ebpf.Instruction{ebpf.LoadMem(ebpf.R0, ebpf.R10, -2, ebpf.Half)}},
		{"ldxw %r0, [%r1+0x2]", []ebpf.Instruction{ebpf.LoadMem(ebpf.R0, ebpf.R1, 2, ebpf.Word)}},
		{"ldxsb %r0, [%r10-1]", []ebpf.Instruction{ebpf.LoadMemSX(ebpf.R0, ebpf.R10, -1, ebpf.Byte)}},
		{"ldxsh %r0, [%r10-2]", []ebpf.Instruction{ebpf.LoadMemSX(ebpf.R0, ebpf.R10, -2, ebpf.Half)}},
		{"ldxsw %r0, [%r10-4]", []ebpf.Instruction{ebpf.LoadMemSX(ebpf.R0, ebpf.R10, -4, ebpf.Word)}},
		{"stxw [%r10-4], %r1", []ebpf.Instruction{ebpf.StoreMem(ebpf.R10, -4, ebpf.R1, ebpf.Word)}},
		{"stxdw [%r10-8], %r1", []ebpf.Instruction{ebpf.StoreMem(ebpf.R10, -8, ebpf.R1, ebpf.DWord)}},
		{"stb [%r1+2], 0x11", []ebpf.Instruction{ebpf.StoreImm(ebpf.R1, 2, 0x11, ebpf.Byte)}},
		{"stdw [%r1+2], -1", []ebpf.Instruction{{OpCode: ebpf.StoreImmOp(ebpf.DWord), Dst: ebpf.R1, Offset: 2, Constant: -1}}},
		{"lock add [%r10-8], %r1", []ebpf.Instruction{ebpf.AddAtomic.Mem(ebpf.R10, ebpf.R1, ebpf.DWord, -8)}},
		{"lock add32 [%r10-4], %r1", []ebpf.Instruction{ebpf.AddAtomic.Mem(ebpf.R10, ebpf.R1, ebpf.Word, -4)}},
		{"lock fetch add [%r10-8], %r1", []ebpf.Instruction{ebpf.FetchAdd.Mem(ebpf.R10, ebpf.R1, ebpf.DWord, -8)}},
		{"lock fetch and32 [%r10-4], %r3", []ebpf.Instruction{ebpf.FetchAnd.Mem(ebpf.R10, ebpf.R3, ebpf.Word, -4)}},
		{"lock or [%r10-8], %r1", []ebpf.Instruction{ebpf.OrAtomic.Mem(ebpf.R10, ebpf.R1, ebpf.DWord, -8)}},
		{"lock fetch xor [%r10-8], %r1", []ebpf.Instruction{ebpf.FetchXor.Mem(ebpf.R10, ebpf.R1, ebpf.DWord, -8)}},
		{"lock xchg [%r10-8], %r1", []ebpf.Instruction{ebpf.Xchg.Mem(ebpf.R10, ebpf.R1, ebpf.DWord, -8)}},
		{"lock xchg32 [%r10-8], %r1", []ebpf.Instruction{ebpf.Xchg.Mem(ebpf.R10, ebpf.R1, ebpf.Word, -8)}},
		{"lock cmpxchg [%r10-8], %r1", []ebpf.Instruction{ebpf.CmpXchg.Mem(ebpf.R10, ebpf.R1, ebpf.DWord, -8)}},
		{"lock cmpxchg32 [%r10-8], %r1", []ebpf.Instruction{ebpf.CmpXchg.Mem(ebpf.R10, ebpf.R1, ebpf.Word, -8)}},
		{"exit", []ebpf.Instruction{ebpf.Return()}},
		{"ja +3", []ebpf.Instruction{{OpCode: jmp(ebpf.Ja, ebpf.JumpClass, ebpf.ImmSource), Offset: 3}}},
		{"ja -1", []ebpf.Instruction{{OpCode: jmp(ebpf.Ja, ebpf.JumpClass, ebpf.ImmSource), Offset: -1}}},
		{"ja32 +70000", []ebpf.Instruction{{OpCode: jmp(ebpf.Ja, ebpf.Jump32Class, ebpf.ImmSource), Constant: 70000}}},
		{"jeq %r1, 5, +2", []ebpf.Instruction{{OpCode: jmp(ebpf.JEq, ebpf.JumpClass, ebpf.ImmSource), Dst: ebpf.R1, Constant: 5, Offset: 2}}},
		{"jne32 %r1, %r2, -4", []ebpf.Instruction{{OpCode: jmp(ebpf.JNE, ebpf.Jump32Class, ebpf.RegSource), Dst: ebpf.R1, Src: ebpf.R2, Offset: -4}}},
		{"jsge %r1, 0xffffffff, +1", []ebpf.Instruction{{OpCode: jmp(ebpf.JSGE, ebpf.JumpClass, ebpf.ImmSource), Dst: ebpf.R1, Constant: -1, Offset: 1}}},
		{"jset %r1, %r2, +1", []ebpf.Instruction{{OpCode: jmp(ebpf.JSet, ebpf.JumpClass, ebpf.RegSource), Dst: ebpf.R1, Src: ebpf.R2, Offset: 1}}},
		{"jlt %r1, 6, +1", []ebpf.Instruction{{OpCode: jmp(ebpf.JLT, ebpf.JumpClass, ebpf.ImmSource), Dst: ebpf.R1, Constant: 6, Offset: 1}}},
		{"jsle32 %r1, -1, +1", []ebpf.Instruction{{OpCode: jmp(ebpf.JSLE, ebpf.Jump32Class, ebpf.ImmSource), Dst: ebpf.R1, Constant: -1, Offset: 1}}},
		{"call 5", []ebpf.Instruction{call(0, 5)}},
		{"call %r2", []ebpf.Instruction{{OpCode: jmp(ebpf.Call, ebpf.JumpClass, ebpf.RegSource), Dst: ebpf.R2}}},
		{"call local f\nexit\nf:\nexit", []ebpf.Instruction{call(ebpf.PseudoCall, 1), ebpf.Return(), ebpf.Return()}},
		{"l: jne %r0, %r1, l\nja l\nja32 l", []ebpf.Instruction{
			{OpCode: jmp(ebpf.JNE, ebpf.JumpClass, ebpf.RegSource), Src: ebpf.R1, Offset: -1},
			{OpCode: jmp(ebpf.Ja, ebpf.JumpClass, ebpf.ImmSource), Offset: -2},
			{OpCode: jmp(ebpf.Ja, ebpf.Jump32Class, ebpf.ImmSource), Constant: -3},
		}},
		// "exit" names the first exit instruction unless defined.
		{"jeq %r0, 0, exit\nmov %r0, 1\nexit\nexit", []ebpf.Instruction{
			{OpCode: jmp(ebpf.JEq, ebpf.JumpClass, ebpf.ImmSource), Offset: 1},
			ebpf.Mov.Imm(ebpf.R0, 1), ebpf.Return(), ebpf.Return(),
		}},
		{"# comment only\n\n  mov %r0, 1 ; trailing\nexit # done", []ebpf.Instruction{ebpf.Mov.Imm(ebpf.R0, 1), ebpf.Return()}},
	}
	for _, tt := range tests {
		for _, order := range []binary.ByteOrder{binary.LittleEndian, binary.BigEndian} {
			t.Run(strings.ReplaceAll(tt.src, "\n", ";")+"/"+order.String(), func(t *testing.T) {
				got, err := AssembleOrder(tt.src, order)
				if err != nil {
					t.Fatal(err)
				}
				insns := decode(t, got, order)
				if len(insns) != len(tt.want) {
					t.Fatalf("got %d instructions %v, want %v", len(insns), insns, tt.want)
				}
				for i := range insns {
					if !sameInstruction(insns[i], tt.want[i]) {
						t.Errorf("instruction %d: got %v (% x), want %v", i, insns[i], got, tt.want[i])
					}
				}
			})
		}
	}
}

func TestErrors(t *testing.T) {
	tests := []struct {
		src  string
		want string // substring of the message
		line int
	}{
		{"ldxq %r0, %r1", "line 1 col 1: invalid mnemonic: \"ldxq\"", 1},
		{"mov %r0, 1\nor %r0, %r50", "line 2 col 9: invalid register: \"%r50\"", 2},
		{"or %r0, %r11", "invalid register", 1},
		{"mov32 %r0, 2147483648", "immediate out of 32-bit range", 1},
		{"mov32 %r0, -2147483649", "immediate out of 32-bit range", 1},
		{"mov32 %r0, 0x100000000", "immediate out of 32-bit range", 1},
		{"mov32 %r0, 12z", "invalid immediate", 1},
		{"ja NOT_A_LABEL\nexit", "invalid label: \"NOT_A_LABEL\"", 1},
		{"ja +32768", "offset out of 16-bit range", 1},
		{"ldxb %r0, %r1", "invalid memory operand", 1},
		{"ldxb %r0, [%r1+0x10000]", "offset out of 16-bit range", 1},
		{"ldxb %r0, [%r1-32769]", "offset out of 16-bit range", 1},
		{"ldxb %r0, [%r1", "unterminated memory operand", 1},
		{"lddw %r0", "invalid number of operands: want 2, have 1: \"lddw\"", 1},
		{"exit %r0", "invalid number of operands: want 0, have 1", 1},
		{"lock", "invalid number of operands for lock", 1},
		{"lock or [%r10-8]", "invalid number of operands for lock or", 1},
		{"lock nand [%r10-8], %r1", "invalid atomic operation", 1},
		{"lock add %r1, %r1", "invalid memory operand", 1},
		{"mov %r0 %r1", "missing comma", 1},
		{"mov %r0, %r1,", "trailing comma", 1},
		{"mov %r0,, %r1", "empty operand", 1},
		{"a:\na:\nexit", "line 2 col 1: duplicate label", 2},
		{"movsx864 %r0, 5", "movsx takes a register source", 1},
		{"call local %r1", "expected an immediate", 1},
		{"mov 5, %r0", "invalid register", 1},
	}
	for _, tt := range tests {
		t.Run(tt.src, func(t *testing.T) {
			_, err := Assemble(tt.src)
			var ae *Error
			if !errors.As(err, &ae) {
				t.Fatalf("got %v, want *Error", err)
			}
			if !strings.Contains(err.Error(), tt.want) || ae.Line != tt.line {
				t.Errorf("got %q (line %d), want %q on line %d", err, ae.Line, tt.want, tt.line)
			}
		})
	}
}

// FuzzAssemble checks that no input panics and that every accepted program
// is whole slots that cilium/ebpf can decode.
func FuzzAssemble(f *testing.F) {
	for _, s := range []string{
		"mov %r0, 1\nexit", "lock fetch add [%r10-8], %r1", "l: ja l", "call local f\nf: exit",
		"lddw %r1, 0xffffffffffffffff", "jne32 %r1, 0x80000000, -1", "ldxsw %r0, [%r10 - 4]", "[", "%r", "-0x",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, src string) {
		b, err := Assemble(src)
		if err != nil {
			var ae *Error
			if !errors.As(err, &ae) || ae.Line < 1 {
				t.Fatalf("error %v is not an *Error with a line", err)
			}
			return
		}
		if len(b)%8 != 0 {
			t.Fatalf("%d bytes", len(b))
		}
		if hasTaggedHelper(b) {
			// cilium/ebpf reads the top bits of a helper number as a
			// platform tag and refuses numbers of 1<<28 and above; the
			// encoding itself is well formed.
			return
		}
		if _, err := ebpf.AppendInstructions(nil, bytes.NewReader(b), binary.LittleEndian, "linux"); err != nil && len(b) > 0 {
			// An lddw is always followed by its second slot, so a
			// decode error means a malformed encoding.
			t.Fatalf("cilium/ebpf cannot decode % x: %v", b, err)
		}
	})
}

// hasTaggedHelper reports whether b calls a helper whose number cilium/ebpf
// would read as platform-tagged (1<<28 and above).
func hasTaggedHelper(b []byte) bool {
	for i := 0; i+8 <= len(b); i += 8 {
		if b[i] == 0x85 && b[i+1]>>4 == 0 && binary.LittleEndian.Uint32(b[i+4:]) >= 1<<28 {
			return true
		}
	}
	return false
}
