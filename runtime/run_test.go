package runtime

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	goruntime "runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/skelgen/skelgen/internal/testenv"
)

// global returns a one-entry array map holding data, the form a global
// section takes.
func global(t testing.TB, name string, data []byte) Map {
	t.Helper()
	m, err := NewMap(MapSpec{Name: name, Type: Array, KeySize: 4, ValueSize: uint32(len(data)), MaxEntries: 1})
	if err != nil {
		t.Fatal(err)
	}
	if err := m.Update(make([]byte, 4), data, UpdateAny); err != nil {
		t.Fatal(err)
	}
	return m
}

func TestMemoryErrors(t *testing.T) {
	tests := []struct {
		name   string
		src    string
		ctx    []byte
		maps   func(t *testing.T) []Map
		region string
		offset int64
		size   uint64
		insn   int
		write  bool
	}{
		{name: "context read past end", src: "ldxw %r0, [%r1+8]\nexit", ctx: make([]byte, 10),
			region: "context", offset: 8, size: 4, insn: 0},
		{name: "stack below frame", src: "mov %r0, 0\nldxdw %r0, [%r10-520]\nexit",
			region: "stack frame 0", offset: -8, size: 8, insn: 1},
		{name: "stack above frame", src: "stxb [%r10+0], %r1\nexit",
			region: "stack frame 0", offset: 512, size: 1, insn: 0, write: true},
		{name: "NULL store", src: "mov %r0, 0\nstw [%r0+16], 1\nexit",
			region: "NULL", offset: 16, size: 4, insn: 1, write: true},
		{name: "callee frame", src: "call local f\nexit\nf:\nldxh %r0, [%r10-513]\nexit",
			region: "stack frame 1", offset: -1, size: 2, insn: 2},
		{name: "read-only global", src: "lddw %r1, value:0+0\nstb [%r1+1], 7\nexit",
			maps:   func(t *testing.T) []Map { return []Map{global(t, ".rodata", []byte("abc\x00"))} },
			region: ".rodata (read-only)", offset: 1, size: 1, insn: 2, write: true},
		{name: "map value past end", src: `
			stw [%r10-4], 3
			lddw %r1, map:0
			mov %r2, %r10
			add %r2, -4
			call 1
			jeq %r0, 0, out
			ldxdw %r0, [%r0+8]
		out:
			exit`,
			maps: func(t *testing.T) []Map {
				m, err := NewMap(MapSpec{Name: "counts", Type: Array, KeySize: 4, ValueSize: 12, MaxEntries: 4})
				if err != nil {
					t.Fatal(err)
				}
				return []Map{m}
			},
			region: "map counts value", offset: 8, size: 8, insn: 7},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var maps []Map
			if tt.maps != nil {
				maps = tt.maps(t)
			}
			p := loadAsm(t, tt.src, maps, nil)
			_, err := p.Run(tt.ctx)
			var me *MemoryError
			if !errors.As(err, &me) {
				t.Fatalf("want *MemoryError, got %v", err)
			}
			if me.Region != tt.region || me.Offset != tt.offset || me.Size != tt.size || me.Insn != tt.insn || me.Write != tt.write {
				t.Fatalf("got %+v (%v)\nwant region %q offset %d size %d insn %d write %v", *me, err, tt.region, tt.offset, tt.size, tt.insn, tt.write)
			}
		})
	}
}

func TestArithmetic(t *testing.T) {
	tests := []struct {
		name string
		src  string
		want uint64
	}{
		{"div by zero register", "mov %r0, 7\nmov %r1, 0\ndiv %r0, %r1\nexit", 0},
		{"mod by zero keeps dividend", "mov %r0, 7\nmov %r1, 0\nmod %r0, %r1\nexit", 7},
		{"mod32 by zero truncates", "lddw %r0, 0x100000007\nmov %r1, 0\nmod32 %r0, %r1\nexit", 7},
		{"sdiv by zero", "mov %r0, -7\nsdiv %r0, 0\nexit", 0},
		{"smod by zero", "mov %r0, -7\nsmod %r0, 0\nexit", uint64(1<<64 - 7)},
		{"sdiv intmin by -1", "lddw %r0, 0x8000000000000000\nsdiv %r0, -1\nexit", 1 << 63},
		{"smod negative", "mov %r0, -7\nsmod %r0, 3\nexit", uint64(1<<64 - 1)},
		{"movsx 8 to 64", "mov %r1, 0x80\nmovsx864 %r0, %r1\nexit", uint64(1<<64 - 128)},
		{"movsx 16 to 32", "mov %r1, 0x8000\nmovsx1632 %r0, %r1\nexit", 0xffff8000},
		{"bswap16 clears high bits", "lddw %r0, 0x1122334455667788\nbswap16 %r0\nexit", 0x8877},
		{"le32 truncates", "lddw %r0, 0x1122334455667788\nle32 %r0\nexit", 0x55667788},
		{"arsh32", "mov32 %r0, 0x80000000\narsh32 %r0, 4\nexit", 0xf8000000},
		{"shift masked", "mov %r0, 1\nlsh %r0, 65\nexit", 2},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := loadAsm(t, tt.src, nil, nil).Run(nil)
			if err != nil {
				t.Fatal(err)
			}
			if got != tt.want {
				t.Fatalf("r0 = %#x, want %#x", got, tt.want)
			}
		})
	}
}

func TestBudgetAndDepth(t *testing.T) {
	loop := "mov %r0, 0\nloop:\nadd %r0, 1\njlt %r0, 10, loop\nexit"
	t.Run("exact count", func(t *testing.T) {
		p := loadAsm(t, loop, nil, nil)
		if _, err := p.Run(nil); err != nil {
			t.Fatal(err)
		}
		// mov, 10 x (add, jlt), exit
		if got := p.Machine().Executed(); got != 22 {
			t.Fatalf("executed %d instructions, want 22", got)
		}
	})
	t.Run("jump into a fused pair", func(t *testing.T) {
		src := "mov %r0, 0\nja check\nloop:\nadd %r0, 1\ncheck:\njlt %r0, 5, loop\nexit"
		for _, opts := range []*Options{{}, {noFusion: true}} {
			p := loadAsm(t, src, nil, opts)
			got, err := p.Run(nil)
			// mov, ja, jlt, 5 x (add, jlt), exit
			if err != nil || got != 5 || p.Machine().Executed() != 14 {
				t.Fatalf("fusion %v: r0=%d err=%v executed=%d; want 5, nil, 14", !opts.noFusion, got, err, p.Machine().Executed())
			}
		}
	})
	t.Run("budget one short", func(t *testing.T) {
		p := loadAsm(t, loop, nil, &Options{Budget: 21})
		_, err := p.Run(nil)
		var re *RunError
		// The 22nd instruction is the exit, where the last run is charged.
		if !errors.Is(err, ErrBudget) || !errors.As(err, &re) || re.Insn != 3 {
			t.Fatalf("want ErrBudget at instruction 3, got %v", err)
		}
		if _, err := loadAsm(t, loop, nil, &Options{Budget: 22}).Run(nil); err != nil {
			t.Fatalf("budget 22: %v", err)
		}
	})
	t.Run("budget held in reserve", func(t *testing.T) {
		// With a small limitCap the budget moves from reserve into the
		// limit address many times per run: errors, their instruction and
		// the executed count must not change, for every budget around the
		// run's length (34 slots), through jumps, fused jumps, calls and
		// returns.
		src := "mov %r0, 0\nmov %r6, 0\nloop:\ncall local f\nadd %r6, 1\njlt %r6, 3, loop\nja out\nout:\nexit\n" +
			"f:\nadd %r0, 2\njeq %r0, 100, skip\nadd %r0, 1\nskip:\nmov %r1, 1\nadd %r1, 1\nja back\nback:\nexit"
		type result struct {
			r0, executed uint64
			err          string
		}
		run := func(budget uint64) result {
			p := loadAsm(t, src, nil, &Options{Budget: budget})
			r0, err := p.Run(nil)
			res := result{r0: r0, err: fmt.Sprint(err)}
			if err == nil {
				res.executed = p.Machine().Executed()
			}
			return res
		}
		defer func(c int64) { limitCap = c }(limitCap)
		full := run(0)
		if full.err != "<nil>" || full.executed != 34 {
			t.Fatalf("run without budget limit: %+v, want 34 slots executed", full)
		}
		for budget := uint64(1); budget <= 36; budget++ {
			limitCap = 1 << 40
			want := run(budget)
			for _, c := range []int64{0, 1, 2, 3, 5, 8} {
				limitCap = c
				if got := run(budget); got != want {
					t.Fatalf("budget %d, limitCap %d: %+v, want %+v", budget, c, got, want)
				}
			}
		}
	})
	t.Run("endless loop", func(t *testing.T) {
		p := loadAsm(t, "mov %r0, 0\nja -1", nil, &Options{Budget: 1000})
		_, err := p.Run(nil)
		var re *RunError
		if !errors.Is(err, ErrBudget) || !errors.As(err, &re) || re.Insn != 1 {
			t.Fatalf("want ErrBudget at instruction 1, got %v", err)
		}
	})
	t.Run("endless loop default budget", func(t *testing.T) {
		_, err := loadAsm(t, "l:\nadd %r0, 1\nja l", nil, nil).Run(nil)
		if !errors.Is(err, ErrBudget) {
			t.Fatalf("want ErrBudget, got %v", err)
		}
	})
	t.Run("recursion", func(t *testing.T) {
		_, err := loadAsm(t, "call local f\nexit\nf:\ncall local f\nexit", nil, nil).Run(nil)
		var re *RunError
		if !errors.Is(err, ErrCallDepth) || !errors.As(err, &re) || re.Insn != 2 {
			t.Fatalf("want ErrCallDepth at instruction 2, got %v", err)
		}
	})
	t.Run("seven nested calls fit", func(t *testing.T) {
		src := "mov %r0, 0\n"
		for i := range 7 {
			src += "call local f" + string(rune('0'+i)) + "\nexit\nf" + string(rune('0'+i)) + ":\nadd %r0, 1\n"
		}
		src += "stdw [%r10-8], 5\nldxdw %r1, [%r10-8]\nadd %r0, %r1\nexit"
		got, err := loadAsm(t, src, nil, nil).Run(nil)
		if err != nil || got != 12 {
			t.Fatalf("got %d, %v; want 12", got, err)
		}
	})
}

func TestValidation(t *testing.T) {
	lddw := []Instruction{{Opcode: OpLddw, Dst: 1, Imm: 1}, {}}
	exit := Instruction{Opcode: Opcode(0x95)}
	tests := []struct {
		name  string
		insns []Instruction
		insn  int
		msg   string
	}{
		{"empty", nil, 0, "no instructions"},
		{"unknown opcode", []Instruction{{Opcode: Opcode(0x8f)}, exit}, 0, "unknown opcode"},
		{"legacy packet load", []Instruction{{Opcode: Opcode(0x20)}, exit}, 0, "unknown opcode"},
		{"bad register", []Instruction{{Opcode: Opcode(0xb7), Dst: 11}, exit}, 0, "invalid destination register"},
		{"write r10", []Instruction{exit, {Opcode: Opcode(0xb7), Dst: 10}, exit}, 1, "r10"},
		{"jump out", []Instruction{{Opcode: Opcode(0x05), Offset: 5}, exit}, 0, "outside the program"},
		{"jump into lddw", append(append([]Instruction{{Opcode: Opcode(0x05), Offset: 1}}, lddw...), exit), 0, "middle of an lddw"},
		{"falls off", []Instruction{{Opcode: Opcode(0xb7)}}, 0, "falls off"},
		{"lddw at end", lddw[:1], 0, "missing its second slot"},
		{"unknown helper", []Instruction{{Opcode: Opcode(0x85), Imm: 9999}, exit}, 0, "unknown helper 9999"},
		{"unbound extern", []Instruction{{Opcode: Opcode(0x85), Src: PseudoKfuncCall, Imm: 0}, exit}, 0, `unbound extern "host_fn"`},
		{"map out of range", []Instruction{{Opcode: OpLddw, Dst: 1, Src: PseudoMapIdx, Imm: 3}, {}, exit}, 0, "reference to map 3"},
		{"bad atomic", []Instruction{{Opcode: Opcode(0xdb), Dst: 10, Src: 1, Offset: -8, Imm: 0x10}, exit}, 0, "unknown atomic"},
		{"add with offset", []Instruction{{Opcode: Opcode(0x07), Offset: 1}, exit}, 0, "offset=0"},
		{"exit with imm", []Instruction{{Opcode: Opcode(0x95), Imm: 1}, exit}, 0, "imm=0"},
		{"or with r10", []Instruction{{Opcode: Opcode(0x4f), Src: 10}, exit}, 0, "frame pointer"},
		{"call local into lddw", append(append([]Instruction{{Opcode: Opcode(0x85), Src: PseudoCall, Imm: 1}}, lddw...), exit), 0, "middle of an lddw"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Load(&ProgramSpec{Name: "v", Instructions: tt.insns, Externs: []string{"host_fn"}}, nil)
			var ve *ValidationError
			if !errors.As(err, &ve) {
				t.Fatalf("want *ValidationError, got %v", err)
			}
			if ve.Insn != tt.insn || !strings.Contains(ve.Msg, tt.msg) {
				t.Fatalf("got %v; want instruction %d and %q", err, tt.insn, tt.msg)
			}
		})
	}
}

func TestDecodeBigEndian(t *testing.T) {
	want := []Instruction{{Opcode: Opcode(0xb7), Dst: 0, Imm: 42}, {Opcode: Opcode(0x0f), Dst: 0, Src: 3}, {Opcode: Opcode(0x95)}}
	for _, order := range []binary.ByteOrder{binary.LittleEndian, binary.BigEndian} {
		var b []byte
		for _, in := range want {
			b = in.Encode(b, order)
		}
		got, err := DecodeInstructions(b, order)
		if err != nil {
			t.Fatal(err)
		}
		for i := range want {
			if got[i] != want[i] {
				t.Fatalf("%v: slot %d = %v, want %v", order, i, got[i], want[i])
			}
		}
	}
	if _, err := DecodeInstructions(make([]byte, 12), binary.LittleEndian); err == nil {
		t.Fatal("12 bytes decoded without error")
	}
	// Big-endian puts dst in the high nibble.
	got, _ := DecodeInstructions([]byte{0xbf, 0x12, 0, 0, 0, 0, 0, 0}, binary.BigEndian)
	if got[0].Dst != 1 || got[0].Src != 2 {
		t.Fatalf("big-endian registers: %v", got[0])
	}
}

func TestExterns(t *testing.T) {
	insns, err := assemble("mov %r1, 40\nmov %r2, 2\ncall 0\nexit")
	if err != nil {
		t.Fatal(err)
	}
	insns[2].Src = PseudoKfuncCall
	spec := &ProgramSpec{Instructions: insns, Externs: []string{"host_add"}}
	if _, err := Load(spec, nil); err == nil {
		t.Fatal("unbound extern loaded")
	}
	add := func(_ *Machine, a, b, _, _, _ uint64) (uint64, error) { return a + b, nil }
	p, err := Load(spec, &Options{Externs: map[string]Func{"host_add": add}})
	if err != nil {
		t.Fatal(err)
	}
	if got, err := p.Run(nil); err != nil || got != 42 {
		t.Fatalf("got %d, %v; want 42", got, err)
	}
	fail := func(*Machine, uint64, uint64, uint64, uint64, uint64) (uint64, error) {
		return 0, errors.New("host says no")
	}
	p, _ = Load(spec, &Options{Externs: map[string]Func{"host_add": fail}})
	_, err = p.Run(nil)
	var re *RunError
	if !errors.As(err, &re) || re.Insn != 2 || !strings.Contains(err.Error(), "host_add: host says no") {
		t.Fatalf("got %v", err)
	}
}

func TestCallxFunctionAddress(t *testing.T) {
	insns, err := assemble("lddw %r2, 0\ncall %r2\nadd %r0, 1\nexit\nmov %r0, 41\nexit")
	if err != nil {
		t.Fatal(err)
	}
	insns[0].Src, insns[0].Imm = PseudoFunc, 4 // slot 5 = 0 + 1 + 4
	p, err := Load(&ProgramSpec{Instructions: insns}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if got, err := p.Run(nil); err != nil || got != 42 {
		t.Fatalf("got %d, %v; want 42", got, err)
	}
}

// TestStackClearedBetweenRuns: each run starts with zeroed frames, the
// frames of calls of earlier runs included (a run clears only the frames
// the previous one reached). The program takes a deeper path when the
// context is longer.
func TestStackClearedBetweenRuns(t *testing.T) {
	p := loadAsm(t, `
	jeq %r2, 0, shallow
	call local one
	exit
shallow:
	ldxdw %r0, [%r10-8]
	ldxdw %r1, [%r10-512]
	or %r0, %r1
	stdw [%r10-8], 7
	exit
one:
	call local two
	exit
two:
	ldxdw %r0, [%r10-8]
	stdw [%r10-8], 42
	stdw [%r10-512], 43
	exit`, nil, nil)
	for i, ctx := range [][]byte{make([]byte, 8), nil, make([]byte, 8), make([]byte, 8), nil} {
		if got, err := p.Run(ctx); err != nil || got != 0 {
			t.Fatalf("run %d (context of %d bytes): got %d, %v; want 0 (a cleared frame)", i, len(ctx), got, err)
		}
	}
}

// TestStackSlotsNotSeenByNextRun: a run never reads what an earlier run
// of the same run state wrote on the stack, however the program wrote it
// (through r10 at constant offsets, through a copy of r10, as an atomic,
// in a deeper frame, by a helper given a stack pointer) and however it
// reads it (through r10, through a forged address). Each program writes
// 0x5ec when its context is not empty and reads back what it wrote,
// then, with an empty context, only reads: the value must be gone. Begin
// clears only the part of a frame a program can write (stackLow), so
// these cover each way a program reaches the lowest bound.
func TestStackSlotsNotSeenByNextRun(t *testing.T) {
	writeStack := func(m *Machine, r1, _, _, _, _ uint64) (uint64, error) {
		b, err := m.WritableBytes(r1, 8)
		if err != nil {
			return 0, err
		}
		binary.LittleEndian.PutUint64(b, 0x5ec)
		return 0, nil
	}
	tests := []struct{ name, write, read string }{
		{"r10 slots", "stdw [%r10-8], 0x5ec", "ldxdw %r0, [%r10-8]"},
		{"r10 slot read wider", "stw [%r10-4], 0x5ec", "ldxdw %r0, [%r10-8]\nrsh %r0, 32"},
		{"forged read", "stdw [%r10-8], 0x5ec", "lddw %r1, 0x2000001f8\nldxdw %r0, [%r1]"},
		{"copied r10", "mov %r1, %r10\nadd %r1, -16\nstdw [%r1], 0x5ec", "ldxdw %r0, [%r10-16]"},
		{"forged write", "lddw %r1, 0x200000000\nstdw [%r1], 0x5ec", "ldxdw %r0, [%r10-512]"},
		{"atomic", "mov %r1, 0x5ec\nlock add [%r10-24], %r1", "ldxdw %r0, [%r10-24]"},
		{"helper", "mov %r1, %r10\nadd %r1, -32\ncall 9001", "ldxdw %r0, [%r10-32]"},
		// snprintf writes "\xec\x05" (a %s of the string at -8) and its
		// NUL, its format and argument stored above the buffer: the
		// program's own stores reach only -24.
		{"snprintf", "stw [%r10-8], 0x5ec\nstw [%r10-24], 0x7325\nmov %r1, %r10\nadd %r1, -8\nstxdw [%r10-16], %r1\nmov %r1, %r10\nadd %r1, -32\nmov %r2, 8\nmov %r3, %r10\nadd %r3, -24\nmov %r4, %r10\nadd %r4, -16\nmov %r5, 8\ncall 165", "ldxdw %r0, [%r10-32]"},
		{"extern", "mov %r1, %r10\nadd %r1, -32\ncall extern", "ldxdw %r0, [%r10-32]"},
		{"callee frame", "call local w", "call local r"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			src := "jeq %r2, 0, read\n" + tt.write + "\n" + tt.read + "\nexit\nread:\n" + tt.read + "\nexit"
			if tt.name == "callee frame" {
				src += "\nw:\nstdw [%r10-8], 0x5ec\nldxdw %r0, [%r10-8]\nexit\nr:\nldxdw %r0, [%r10-8]\nexit"
			}
			h := Builtins()
			h.Register(9001, "write_stack", writeStack)
			insns, err := assemble(strings.ReplaceAll(src, "call extern", "call 0"))
			if err != nil {
				t.Fatal(err)
			}
			spec := &ProgramSpec{Name: tt.name, Instructions: insns}
			if tt.name == "extern" {
				for i := range insns {
					if insns[i].Opcode == OpCall && insns[i].Src == 0 && insns[i].Imm == 0 {
						insns[i].Src = PseudoKfuncCall
					}
				}
				spec.Externs = []string{"write_stack"}
			}
			p, err := Load(spec, &Options{Helpers: h, Externs: map[string]Func{"write_stack": writeStack}})
			if err != nil {
				t.Fatal(err)
			}
			for i, ctx := range [][]byte{make([]byte, 8), nil, make([]byte, 8), nil} {
				want := uint64(0)
				if ctx != nil {
					want = 0x5ec
				}
				if got, err := p.Run(ctx); err != nil || got != want {
					t.Fatalf("run %d (context of %d bytes): got %#x, %v; want %#x", i, len(ctx), got, err, want)
				}
			}
		})
	}
}

// TestStackLow: the part of a frame a program can write, which begin
// clears, is the lowest slot of its stores through r10, and the whole
// frame when it stores through another register, calls callx, an extern,
// or a helper that may write what it is given (snprintf, or one the host
// registered). The runtime's other helpers write no frame, wrapped or not.
func TestStackLow(t *testing.T) {
	tests := []struct {
		asm  string
		want int
	}{
		{"mov %r0, 1\nexit", StackSize},
		{"ldxdw %r0, [%r10-8]\nexit", StackSize},
		{"call local f\nexit\nf:\nmov %r0, 1\nexit", StackSize},
		{"stdw [%r10-8], 1\nstw [%r10-20], 1\nexit", StackSize - 20},
		{"mov %r1, 1\nlock add [%r10-40], %r1\nexit", StackSize - 40},
		{"stdw [%r10-600], 1\nexit", 0},
		{"stdw [%r10+8], 1\nexit", StackSize},
		{"stdw [%r1], 1\nexit", 0},
		{"mov %r1, %r10\nstdw [%r1-8], 1\nexit", 0},
		{"call 5\nexit", StackSize},
		{"stdw [%r10-8], 1\nmov %r1, %r10\nadd %r1, -8\nlddw %r2, map:0\ncall 1\nexit", StackSize - 8},
		{"call 165\nexit", 0},
		{"call 9001\nexit", 0},
		{"call 5\ncall 9001\nexit", 0},
		{"mov %r1, 5\ncall 7777\nexit", 0}, // callx %r1, patched below
	}
	h := Builtins()
	h.Register(9001, "mine", func(*Machine, uint64, uint64, uint64, uint64, uint64) (uint64, error) { return 0, nil })
	h.Wrap(HelperKtimeGetNs, func(f Func) Func { return f })
	for _, tt := range tests {
		insns, err := assemble(tt.asm)
		if err != nil {
			t.Fatal(err)
		}
		for i := range insns {
			if insns[i].Opcode == OpCall && insns[i].Imm == 7777 {
				insns[i].Opcode, insns[i].Dst, insns[i].Imm = OpCall|srcX, 1, 0
			}
		}
		p, err := Load(&ProgramSpec{Name: "low", Instructions: insns, Maps: []Map{mustMap(t, MapSpec{Name: "m", Type: Hash, KeySize: 8, ValueSize: 8, MaxEntries: 1})}}, &Options{Helpers: h})
		if err != nil {
			t.Fatal(err)
		}
		if p.stackLow != tt.want {
			t.Errorf("%q: stackLow = %d, want %d", tt.asm, p.stackLow, tt.want)
		}
	}
}

// TestForgedFrameAddresses: a frame no call of the run has reached is not
// mapped, so a forged address into it faults (and cannot leave a value
// for a later run that reaches it); one a call reached is cleared for the
// next run, including what was written into it through a forged address
// after the call returned. A longer context takes the deeper path.
func TestForgedFrameAddresses(t *testing.T) {
	// Frame 2 is region regionStack+2 = 4.
	p := loadAsm(t, `
	lddw %r6, 0x400000000
	jeq %r2, 0, shallow
	call local one
	ldxdw %r0, [%r6]
	stdw [%r6], 42
	exit
shallow:
	stdw [%r6], 42
	exit
one:
	call local two
	exit
two:
	exit`, nil, nil)
	for i, ctx := range [][]byte{make([]byte, 8), make([]byte, 8), nil, make([]byte, 8)} {
		got, err := p.Run(ctx)
		if ctx == nil {
			var me *MemoryError
			if !errors.As(err, &me) || me.Region != "stack frame 2" || me.Offset != 0 || me.Insn != 7 || !me.Write {
				t.Fatalf("run %d: writing frame 2 before any call reached it: %d, %v; want a *MemoryError at stack frame 2+0", i, got, err)
			}
			continue
		}
		if err != nil || got != 0 {
			t.Fatalf("run %d: frame 2 held %d (%v) after the calls, want 0 (the last run's 42 cleared)", i, got, err)
		}
	}
}

func TestContextWritesLand(t *testing.T) {
	ctx := make([]byte, 8)
	p := loadAsm(t, "stdw [%r1+0], 0x1234\nmov %r0, %r2\nexit", nil, nil)
	n, err := p.Run(ctx)
	if err != nil || n != 8 {
		t.Fatalf("got %d, %v", n, err)
	}
	if binary.LittleEndian.Uint64(ctx) != 0x1234 {
		t.Fatalf("ctx = %x", ctx)
	}
}

func TestTracePrintk(t *testing.T) {
	rodata := []byte("a=%d b=%llx s=%s %u%%\n\x00hi\x00")
	var out bytes.Buffer
	p := loadAsm(t, `
		lddw %r1, value:0+0
		mov %r2, 23
		mov %r3, -5
		lddw %r4, 0xdeadbeef00
		lddw %r5, value:0+23
		call 6
		exit`, []Map{global(t, ".rodata", rodata)}, &Options{Output: &out})
	n, err := p.Run(nil)
	if err != nil {
		t.Fatal(err)
	}
	// %u has no argument left: the kernel rejects the format, so does the helper.
	if int64(n) != -22 || out.Len() != 0 {
		t.Fatalf("four conversions: r0=%d out=%q", int64(n), out.String())
	}
	rodata = []byte("a=%d b=%llx s=%s %%\n\x00hi\x00")
	p = loadAsm(t, `
		lddw %r1, value:0+0
		mov %r2, 21
		mov %r3, -5
		lddw %r4, 0xdeadbeef00
		lddw %r5, value:0+21
		call 6
		exit`, []Map{global(t, ".rodata", rodata)}, &Options{Output: &out})
	n, err = p.Run(nil)
	if err != nil {
		t.Fatal(err)
	}
	const want = "a=-5 b=deadbeef00 s=hi %\n"
	if out.String() != want || n != uint64(len(want)) {
		t.Fatalf("output %q (r0=%d), want %q", out.String(), n, want)
	}
}

// lockingWriter is an Output writer that uses a map on every Write, as Go
// code does: holding its lock.
type lockingWriter struct {
	m      SharedMap
	writes int
}

func (w *lockingWriter) Write(p []byte) (int, error) {
	w.m.Lock()
	defer w.m.Unlock()
	w.writes++
	return len(p), nil
}

// TestOutputUsesMaps: trace_printk calls the Output writer with the
// program's maps unlocked, so that the writer may use them.
func TestOutputUsesMaps(t *testing.T) {
	g := global(t, ".rodata", []byte("hi\x00"))
	w := &lockingWriter{m: g.(SharedMap)}
	p := loadAsm(t, `
		lddw %r1, value:0+0
		mov %r2, 3
		call 6
		exit`, []Map{g}, &Options{Output: w})
	testenv.NoHang(t, "a run whose Output writer uses its map", time.Minute, func() {
		if _, err := p.Run(nil); err != nil {
			t.Error(err)
		}
	})
	if w.writes != 1 {
		t.Errorf("%d writes, want 1", w.writes)
	}
}

func TestSnprintfStrncmp(t *testing.T) {
	rodata := []byte("%d-%s\x00ab\x00abc\x00")
	p := loadAsm(t, `
		stdw [%r10-16], 7
		lddw %r1, value:0+6
		stxdw [%r10-8], %r1
		mov %r1, %r10
		add %r1, -32
		mov %r2, 16
		lddw %r3, value:0+0
		mov %r4, %r10
		add %r4, -16
		mov %r5, 16
		call 165
		mov %r6, %r0
		mov %r1, %r10
		add %r1, -32
		mov %r2, 4
		lddw %r3, value:0+9
		call 182
		mov32 %r0, %r0
		lsh %r6, 32
		or %r0, %r6
		exit`, []Map{global(t, ".rodata", rodata)}, nil)
	got, err := p.Run(nil)
	if err != nil {
		t.Fatal(err)
	}
	// snprintf wrote "7-ab\0" (5 with NUL); strncmp("7-ab", "abc") < 0.
	if got>>32 != 5 || int32(got) >= 0 {
		t.Fatalf("got %#x", got)
	}
}

// TestSnprintfFormatAtLoad: a format the kernel's verifier refuses is a
// load error when it is a constant in read-only memory the load finds, and
// fails the run, naming it, when the load cannot find it.
func TestSnprintfFormatAtLoad(t *testing.T) {
	call := func(format, size string) string {
		return format + "\nmov %r1, %r10\nadd %r1, -32\nmov %r2, 16\nmov %r4, %r10\nadd %r4, -8\n" + size + "\ncall 165\nexit"
	}
	load := func(src string, rodata []byte) (*Program, error) {
		insns, err := assemble("stdw [%r10-8], 7\n" + src)
		if err != nil {
			t.Fatal(err)
		}
		name := ".rodata"
		if rodata[0] == 'w' {
			name = ".data"
		}
		return Load(&ProgramSpec{Name: "p", Instructions: insns, Maps: []Map{global(t, name, rodata)}}, nil)
	}
	for _, tt := range []struct {
		src    string
		rodata string
		want   string // in the load error; "" when the load accepts it
	}{
		{call("lddw %r3, value:0+0", "mov %r5, 8"), "%d\x00", ""},
		{call("lddw %r3, value:0+0", "mov %r5, 8"), "%lc\x00", `format "%lc"`},
		{call("lddw %r3, value:0+0", "mov %r5, 0"), "%d\x00", "no argument"},
		{call("lddw %r3, value:0+0", "mov %r5, 12"), "%d\x00", "data_len 12"},
		{call("lddw %r1, value:0+4\nmov %r3, %r1\nadd %r3, -4", "mov32 %r5, 8"), "%.2d\x00", `format "%.2d"`},
		{call("lddw %r3, value:0+0", "mov %r5, 8"), "%d", "no NUL"},
		{call("lddw %r3, value:0+0", "mov %r5, 8"), "w%d\x00", "not read-only"},
	} {
		_, err := load(tt.src, []byte(tt.rodata))
		if tt.want == "" && err != nil || tt.want != "" && (err == nil || !strings.Contains(err.Error(), tt.want)) {
			t.Errorf("%q with %q: load error %v, want %q", tt.src, tt.rodata, err, tt.want)
		}
	}
	// A format the load does not find (r3 set on one of two paths) is
	// checked when the call runs.
	p, err := load(call("lddw %r3, value:0+0\njeq %r1, 0, skip\nlddw %r3, value:0+0\nskip:", "mov %r5, 8"), []byte("%hd\x00"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := p.Run(nil); err == nil || !strings.Contains(err.Error(), `format "%hd"`) {
		t.Fatalf("run: %v", err)
	}
}

func TestPidAndCPU(t *testing.T) {
	got, err := loadAsm(t, "call 14\nmov %r6, %r0\ncall 8\nadd %r0, %r6\nexit", nil, nil).Run(nil)
	if err != nil {
		t.Fatal(err)
	}
	if got>>32 != uint64(os.Getpid()) {
		t.Fatalf("tgid %d, want %d", got>>32, os.Getpid())
	}
}

// TestTrappingAccessors drives the accessors translated code uses, as
// Compiled.Run does: begin, accesses, trapError on the recovered panic, end.
func TestTrappingAccessors(t *testing.T) {
	p := loadAsm(t, "call 8\nexit", nil, nil)
	m := p.Machine()
	ctx := make([]byte, 8)
	run := func() (v uint64, err error) {
		m.begin(ctx)
		defer m.end()
		defer func() {
			if r := recover(); r != nil {
				err = m.trapError(r)
			}
		}()
		m.Store32At(ContextAddr+4, 0xabcd, 5)
		m.Store64At(StackTop(0)-8, 5, 5)
		v = m.Load32At(ContextAddr+4, 6) + m.Load64At(StackTop(0)-8, 6)
		if cpu := m.CallAt(0, 0, 0, 0, 0, 0); cpu != 0 {
			t.Fatalf("CallAt: %d", cpu)
		}
		m.Load64At(ContextAddr+4, 7) // crosses the end of the context
		return v, nil
	}
	v, err := run()
	var me *MemoryError
	if !errors.As(err, &me) || me.Region != "context" || me.Offset != 4 || me.Size != 8 || me.Insn != 7 || me.Write {
		t.Fatalf("got %v, %v", v, err)
	}
	if binary.LittleEndian.Uint32(ctx[4:]) != 0xabcd {
		t.Fatalf("store did not land in the context: %x", ctx)
	}
	if _, name, ok := p.funcAt(0); !ok || name != "helper 8 (get_smp_processor_id)" {
		t.Fatalf("funcAt(0) = %v %q", ok, name)
	}
	if _, _, ok := p.funcAt(1); ok {
		t.Fatal("funcAt(1) found a call at an exit")
	}
}

func TestFormat(t *testing.T) {
	tests := []struct {
		f    string
		args []uint64
		want string
	}{
		{"%d|%u|%x", []uint64{uint64(1<<64 - 5), uint64(1<<64 - 1), 255}, "-5|4294967295|ff"},
		{"%ld|%lu|%llx", []uint64{uint64(1<<64 - 5), 1 << 40, 1 << 40}, "-5|1099511627776|10000000000"},
		{"[%5d][%-5d][%05d][%+d][% d]", []uint64{42, 42, uint64(1<<64 - 42), 7, 7}, "[   42][42   ][-0042][+7][ 7]"},
		{"[%4s][%-3c]%%", []uint64{0, 'z'}, "[  hi][z  ]%"},
		{"%p|%px|%5px|%pI4|%X", []uint64{0x1000, 0x1000, 0x1000, Addr(firstStaticRegion, 0), 0xab}, "0000000000001000|0000000000001000| 1000|104.105.0.7|AB"},
	}
	m := loadAsm(t, "lddw %r1, value:0+0\nexit", []Map{global(t, ".rodata", []byte("hi\x00\x07"))}, nil).Machine()
	m.begin(nil)
	defer m.end()
	for _, tt := range tests {
		args := tt.args
		if strings.Contains(tt.f, "%4s") {
			args = []uint64{Addr(firstStaticRegion, 0), args[1]}
		}
		got, err := m.format(nil, []byte(tt.f), args)
		if err != nil || string(got) != tt.want {
			t.Errorf("format(%q) = %q, %v; want %q", tt.f, got, err, tt.want)
		}
	}
	for _, bad := range []string{"%d %d", "%q", "%", "%lc", "%.2d", "%hd", "%o", "%sx", "%pa", "\x01"} {
		if _, err := m.format(nil, []byte(bad), []uint64{1}); err == nil {
			t.Errorf("format(%q) accepted", bad)
		}
	}
}

// TestDivideByImmediateZero covers the rewriting of division and modulo by
// an immediate zero at load (see validate): RFC 9669 gives dst = 0 for
// division, and dst unchanged for modulo, truncated to 32 bits in ALU32.
func TestDivideByImmediateZero(t *testing.T) {
	const x = "lddw %r0, 0x123456789abcdef0\n"
	for _, tt := range []struct {
		src  string
		want uint64
	}{
		{x + "div %r0, 0\nexit", 0},
		{x + "div32 %r0, 0\nexit", 0},
		{x + "mod %r0, 0\nexit", 0x123456789abcdef0},
		{x + "mod32 %r0, 0\nexit", 0x9abcdef0},
		{x + "div %r0, 16\nexit", 0x0123456789abcdef},
		{x + "mod32 %r0, 0x100\nexit", 0xf0},
	} {
		got, err := loadAsm(t, tt.src, nil, nil).Run(nil)
		if err != nil || got != tt.want {
			t.Errorf("%q: r0 = %#x, %v; want %#x", tt.src, got, err, tt.want)
		}
	}
}

// TestInternalOpcodesRejected: the interpreter's own opcodes (fused forms,
// decision helpers) reuse byte values that no real instruction has, so
// the validator must refuse each of them in input, where exec would run
// them as their fused meaning. Every byte the validator accepts is a real
// opcode, and none of the internal ones is.
func TestInternalOpcodesRejected(t *testing.T) {
	// Real opcodes that decoding rewrites, so that exec never sees their
	// byte: ja32 becomes ja (opMovMulImm reuses 0x06).
	rewritten := map[Opcode]bool{OpJa32: true}
	for name, op := range internalOpcodes(t) {
		if _, ok := opcodeNames[op]; ok && !rewritten[op] {
			t.Errorf("internal opcode %s (%#02x) is also the real opcode %s", name, uint8(op), opcodeNames[op])
		}
	}
	exit := Instruction{Opcode: OpExit}
	accepted := 0
	for b := range 256 {
		op := Opcode(b)
		if op == OpLddw || op == OpCall {
			continue
		}
		for _, in := range []Instruction{{Opcode: op}, {Opcode: op, Imm: 1}} {
			if _, err := Load(&ProgramSpec{Instructions: []Instruction{in, exit}}, nil); err == nil {
				accepted++
				if _, ok := opcodeNames[op]; !ok {
					t.Errorf("opcode %#02x is accepted but is no real instruction", b)
				}
			}
		}
	}
	if accepted < 100 {
		t.Fatalf("only %d of the probes loaded: the probe programs no longer reach the opcode check", accepted)
	}
}

// internalOpcodes reads the interpreter's own opcodes, by name, from the
// const block of insn.go that declares opInvalid, so that an opcode added
// there is checked without being listed again here.
func internalOpcodes(t *testing.T) map[string]Opcode {
	t.Helper()
	f, err := parser.ParseFile(token.NewFileSet(), "insn.go", nil, 0)
	if err != nil {
		t.Fatal(err)
	}
	ops := map[string]Opcode{}
	for _, d := range f.Decls {
		g, ok := d.(*ast.GenDecl)
		if !ok || g.Tok != token.CONST || len(g.Specs) == 0 || g.Specs[0].(*ast.ValueSpec).Names[0].Name != "opInvalid" {
			continue
		}
		for _, s := range g.Specs {
			v := s.(*ast.ValueSpec)
			lit, ok := v.Values[0].(*ast.BasicLit)
			if len(v.Names) != 1 || len(v.Values) != 1 || !ok {
				t.Fatalf("%s: internal opcodes are declared one per line with a literal value", v.Names[0].Name)
			}
			b, err := strconv.ParseUint(lit.Value, 0, 8)
			if err != nil {
				t.Fatalf("%s = %s: %v", v.Names[0].Name, lit.Value, err)
			}
			ops[v.Names[0].Name] = Opcode(b)
		}
	}
	// Cross-check the parse against the constants themselves.
	if len(ops) < 60 || ops["opJle3Imm"] != opJle3Imm || ops["opInvalid"] != opInvalid || ops["opLdxwSwap32"] != opLdxwSwap32 {
		t.Fatalf("read %d internal opcodes from insn.go; the const block changed shape", len(ops))
	}
	delete(ops, "opInvalid") // 0x00 is no real opcode either, but the probe below skips it as lddw's second slot
	return ops
}

// TestGoexitInRun: a host function that ends its goroutine in the middle
// of a run (runtime.Goexit, as t.FailNow does), or panics, ends the run,
// in the interpreter and in a translation: the locks of the maps it held
// are released, so a later run of a program sharing the map goes on, and
// a panic reaches the caller of Run unchanged.
func TestGoexitInRun(t *testing.T) {
	insns, err := assemble("lddw %r1, map:0\ncall 0\nexit")
	if err != nil {
		t.Fatal(err)
	}
	insns[2].Src = PseudoKfuncCall
	mp := mustMap(t, MapSpec{Name: "shared", Type: Hash, KeySize: 4, ValueSize: 8, MaxEntries: 4})
	type hostPanic struct{}
	ends := map[string]Func{
		"goexit": func(*Machine, uint64, uint64, uint64, uint64, uint64) (uint64, error) {
			goruntime.Goexit()
			return 0, nil
		},
		"panic": func(*Machine, uint64, uint64, uint64, uint64, uint64) (uint64, error) {
			panic(hostPanic{})
		},
	}
	other := loadAsm(t, "lddw %r1, map:0\nmov %r0, 7\nexit", []Map{mp}, nil)
	for _, c := range []struct {
		end        string
		translated bool
	}{{"goexit", false}, {"goexit", true}, {"panic", false}, {"panic", true}} {
		translated := c.translated
		spec := &ProgramSpec{Name: c.end, Instructions: insns, Maps: []Map{mp}, Externs: []string{"end"}}
		p, err := Load(spec, &Options{Externs: map[string]Func{"end": ends[c.end]}})
		if err != nil {
			t.Fatal(err)
		}
		// The abort function runs once, after the run has ended: the
		// map's lock is free by then.
		aborts, unlocked := 0, false
		p.SetAbort(func() {
			aborts++
			if l := mp.(SharedMap).shared(); l.TryLock() {
				l.Unlock()
				unlocked = true
			}
		})
		run := p.Run
		if translated {
			c, err := p.Bind(Translation{Insns: len(insns), Entry: func(m *Machine, r1, r2 uint64, b int64) (uint64, int64) {
				return m.CallAt(2, tagMap<<32, r2, 0, 0, 0), b - 3
			}})
			if err != nil {
				t.Fatal(err)
			}
			run = c.Run
		}
		done := make(chan any)
		go func() {
			defer func() { done <- recover() }()
			run(nil)
			t.Errorf("%s, translated %v: the run returned", c.end, translated)
		}()
		got := <-done
		if want := map[string]any{"goexit": nil, "panic": hostPanic{}}[c.end]; got != want {
			t.Errorf("%s, translated %v: recovered %v, want %v", c.end, translated, got, want)
		}
		if aborts != 1 || !unlocked {
			t.Errorf("%s, translated %v: the abort function ran %d times, after the run had ended: %v; want once, after", c.end, translated, aborts, unlocked)
		}
		testenv.NoHang(t, "a run after a run whose host function "+c.end+"ed", time.Minute, func() {
			if r0, err := other.Run(nil); err != nil || r0 != 7 {
				t.Errorf("%s, translated %v: the other run: %d, %v", c.end, translated, r0, err)
			}
		})
	}
}

// TestAbortOnlyWhenNotReturning: a run that returns, with its result or
// with its program's fault, calls no abort function, in either engine;
// SetAbort sets it once, and a clone has none.
func TestAbortOnlyWhenNotReturning(t *testing.T) {
	for i, src := range []string{"mov %r0, 1\nexit", "ldxdw %r0, [%r1+64]\nexit"} {
		faults := i == 1
		insns, err := assemble(src)
		if err != nil {
			t.Fatal(err)
		}
		p, err := Load(&ProgramSpec{Name: "returns", Instructions: insns}, nil)
		if err != nil {
			t.Fatal(err)
		}
		aborts := 0
		if !p.SetAbort(func() { aborts++ }) || p.SetAbort(func() {}) {
			t.Fatal("SetAbort: want it set by the first call only")
		}
		c, err := p.Bind(Translation{Insns: len(insns), Entry: func(m *Machine, r1, r2 uint64, b int64) (uint64, int64) {
			if faults {
				return m.Load64At(r1+64, 0), b - 2
			}
			return 1, b - 2
		}})
		if err != nil {
			t.Fatal(err)
		}
		for _, run := range []func([]byte) (uint64, error){p.Run, c.Run, p.Clone().Run} {
			r0, err := run(make([]byte, 8))
			if (err != nil) != faults || !faults && r0 != 1 {
				t.Errorf("%q: %d, %v", src, r0, err)
			}
		}
		if aborts != 0 {
			t.Errorf("%q: the abort function ran %d times; the runs returned", src, aborts)
		}
	}
}

// TestTag: a run state's tag is set once and reaches the functions its
// runs call; a clone starts without one.
func TestTag(t *testing.T) {
	insns, err := assemble("call 0\nexit")
	if err != nil {
		t.Fatal(err)
	}
	insns[0].Src = PseudoKfuncCall
	var seen any
	spec := &ProgramSpec{Name: "tagged", Instructions: insns, Externs: []string{"see"}}
	p, err := Load(spec, &Options{Externs: map[string]Func{"see": func(m *Machine, _, _, _, _, _ uint64) (uint64, error) {
		seen = m.Tag()
		return 0, nil
	}}})
	if err != nil {
		t.Fatal(err)
	}
	if !p.SetTag("owner") {
		t.Fatal("the first SetTag reported false")
	}
	if p.SetTag("other") {
		t.Error("a second SetTag reported true")
	}
	if _, err := p.Run(nil); err != nil || seen != "owner" {
		t.Errorf("the extern saw tag %v (%v), want the first one", seen, err)
	}
	if _, err := p.Clone().Run(nil); err != nil || seen != nil {
		t.Errorf("a clone's run saw tag %v (%v), want none", seen, err)
	}
}
