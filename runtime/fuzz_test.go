package runtime

import (
	"encoding/binary"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/skelgen/skelgen/internal/testenv"
)

// fuzzMaps gives fuzzed programs something behind map indices 0 and 1.
func fuzzMaps(t testing.TB) []Map {
	h, err := NewMap(MapSpec{Name: "h", Type: Hash, KeySize: 4, ValueSize: 8, MaxEntries: 4})
	if err != nil {
		t.Fatal(err)
	}
	if err := h.Update(key32(0), val64(7), UpdateAny); err != nil {
		t.Fatal(err)
	}
	return []Map{h, global(t, ".data", make([]byte, 16))}
}

// checkRunError fails unless err is one of the errors a run may end with.
func checkRunError(t *testing.T, err error) {
	t.Helper()
	var me *MemoryError
	var re *RunError
	if err != nil && !errors.As(err, &me) && !errors.As(err, &re) {
		t.Fatalf("run failed with an untyped error: %v", err)
	}
}

// FuzzRun feeds arbitrary bytes through DecodeInstructions, Load and Run:
// nothing may panic or hang, and failures must be typed errors.
func FuzzRun(f *testing.F) {
	files, _ := filepath.Glob(filepath.Join(testenv.ConformanceSeeds(f), "tests", "*.data"))
	for _, file := range files {
		data, err := os.ReadFile(file)
		if err != nil {
			continue
		}
		insns, err := parseVector(string(data)).program()
		if err != nil {
			continue
		}
		var b []byte
		for _, in := range insns {
			b = in.Encode(b, binary.LittleEndian)
		}
		f.Add(b)
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		insns, err := DecodeInstructions(b, binary.LittleEndian)
		if err != nil {
			return
		}
		p, err := Load(&ProgramSpec{Instructions: insns, Maps: fuzzMaps(t)}, &Options{Budget: 1 << 14})
		if err != nil {
			var ve *ValidationError
			if !errors.As(err, &ve) {
				t.Fatalf("load failed with an untyped error: %v", err)
			}
			return
		}
		_, err = p.Run(make([]byte, 64))
		checkRunError(t, err)
	})
}

// gen builds a well-formed program from fuzz bytes: functions of ALU
// operations, stack, context, global and map-value accesses (some out of
// bounds on purpose), forward and backward jumps, bpf-to-bpf calls
// (recursion included), atomics and helper calls.
type gen struct {
	data []byte
	jcc  Instruction // the last conditional jump against an immediate
}

func (g *gen) byte() byte {
	if len(g.data) == 0 {
		return 0
	}
	b := g.data[0]
	g.data = g.data[1:]
	return b
}

func (g *gen) reg() uint8 { return g.byte() % 10 } // r0..r9, never r10

type item struct {
	insns    []Instruction
	jump     int // item index within the function, -1 for none
	jumpSlot int // which of insns is the jump
	call     int // function index, -1 for none
}

var genALU = []uint8{aluADD, aluSUB, aluMUL, aluDIV, aluOR, aluAND, aluLSH, aluRSH, aluMOD, aluXOR, aluMOV, aluARSH}
var genJmp = []uint8{0x10, 0x20, 0x30, 0x40, 0x50, 0x60, 0x70, 0xa0, 0xb0, 0xc0, 0xd0}
var genAtomic = []int32{atomicADD, atomicOR, atomicAND, atomicXOR, atomicADD | atomicFETCH, atomicOR | atomicFETCH,
	atomicAND | atomicFETCH, atomicXOR | atomicFETCH, atomicXCHG, atomicCMPXCHG}
var genSize = []uint8{sizeB, sizeH, sizeW, sizeDW}

func (g *gen) item(fn, nfuncs, nitems int) item {
	it := item{jump: -1, call: -1}
	one := func(i Instruction) item { it.insns = []Instruction{i}; return it }
	b := g.byte()
	class := uint8(classALU64)
	if b&0x80 != 0 {
		class = classALU
	}
	switch b % 13 {
	case 0:
		if class == classALU && g.byte()&3 == 0 {
			// A byte's range test as clang computes it in 32 bits.
			d := g.reg()
			it.insns = []Instruction{{Opcode: OpMov32Reg, Dst: d, Src: g.reg()},
				{Opcode: OpAdd32Imm, Dst: d, Imm: int32(int8(g.byte()))}, {Opcode: OpAnd32Imm, Dst: d, Imm: int32(int8(g.byte()))}}
			return it
		}
		op := genALU[int(g.byte())%len(genALU)]
		in := Instruction{Opcode: Opcode(class | op), Dst: g.reg(), Imm: int32(int8(g.byte()))}
		if (op == aluDIV || op == aluMOD) && g.byte()&1 == 1 {
			in.Offset = 1
		}
		return one(in)
	case 1:
		op := genALU[int(g.byte())%len(genALU)]
		in := Instruction{Opcode: Opcode(class | op | srcX), Dst: g.reg(), Src: g.reg()}
		if op == aluMOV && g.byte()&1 == 1 {
			in.Offset = []int16{8, 16, 32}[g.byte()%3]
			if class == classALU && in.Offset == 32 {
				in.Offset = 16
			}
		}
		return one(in)
	case 2: // stack load
		size := genSize[g.byte()%4]
		op := classLDX | modeMEM | size
		if g.byte()&1 == 1 && size != sizeDW {
			op = classLDX | modeMEMSX | size
		}
		return one(Instruction{Opcode: Opcode(op), Dst: g.reg(), Src: 10, Offset: -int16(g.byte()%66) * 8})
	case 3: // stack store
		size := genSize[g.byte()%4]
		if g.byte()&1 == 1 {
			return one(Instruction{Opcode: Opcode(classST | modeMEM | size), Dst: 10, Offset: -int16(g.byte()%66) * 8, Imm: int32(int8(g.byte()))})
		}
		return one(Instruction{Opcode: Opcode(classSTX | modeMEM | size), Dst: 10, Src: g.reg(), Offset: -int16(g.byte()%66) * 8})
	case 4: // context access through r9, saved at entry
		size := genSize[g.byte()%4]
		if g.byte()&1 == 1 {
			return one(Instruction{Opcode: Opcode(classSTX | modeMEM | size), Dst: 9, Src: g.reg(), Offset: int16(g.byte() % 72)})
		}
		return one(Instruction{Opcode: Opcode(classLDX | modeMEM | size), Dst: g.reg(), Src: 9, Offset: int16(g.byte() % 72)})
	case 5, 6: // conditional jump, either way
		op := genJmp[int(g.byte())%len(genJmp)]
		jc := uint8(classJMP)
		if b&0x40 != 0 {
			jc = classJMP32
		}
		in := Instruction{Opcode: Opcode(jc | op), Dst: g.reg(), Imm: int32(int8(g.byte()))}
		switch c := g.byte(); {
		case c&1 == 1:
			in.Opcode |= srcX
			in.Src, in.Imm = g.reg(), 0
		case c&6 != 0 && g.jcc.Opcode != 0:
			// Most often, the kind and register of the last one: a
			// chain of range tests, as fused pairs and triples run it.
			in.Opcode, in.Dst = g.jcc.Opcode, g.jcc.Dst
			g.jcc = in
		default:
			g.jcc = in
		}
		if in.Opcode&srcX == 0 && g.byte()&3 == 0 {
			// One or two more of the same kind first, jumping to the
			// next item.
			for k := 1 + int(g.byte()&1); k > 0; k-- {
				it.insns = append(it.insns, Instruction{Opcode: in.Opcode, Dst: in.Dst, Offset: int16(k), Imm: int32(int8(g.byte()))})
			}
		}
		it.jumpSlot = len(it.insns)
		it.insns = append(it.insns, in)
		it.jump = int(g.byte()) % nitems
		return it
	case 7: // call another function (or itself)
		it.insns = []Instruction{{Opcode: OpCall, Src: PseudoCall}}
		it.call = int(g.byte()) % nfuncs
		return it
	case 8: // atomic on the stack
		size := uint8(sizeDW)
		if g.byte()&1 == 1 {
			size = sizeW
		}
		return one(Instruction{Opcode: Opcode(classSTX | modeATOMIC | size), Dst: 10, Src: g.reg(), Offset: -8 * int16(1+g.byte()%64), Imm: genAtomic[int(g.byte())%len(genAtomic)]})
	case 9: // 64-bit immediate or a global's address
		if g.byte()&1 == 1 {
			it.insns = []Instruction{{Opcode: OpLddw, Dst: g.reg(), Src: PseudoMapIdxValue, Imm: 1}, {Imm: int32(g.byte() % 16)}}
			return it
		}
		it.insns = []Instruction{{Opcode: OpLddw, Dst: g.reg(), Imm: int32(g.byte()) << 24}, {Imm: int32(g.byte())}}
		return it
	case 10: // map lookup of a key on the stack, then use the value
		it.insns = []Instruction{
			{Opcode: OpStw, Dst: 10, Offset: -4, Imm: int32(g.byte() % 2)},
			{Opcode: OpLddw, Dst: 1, Src: PseudoMapIdx}, {},
			{Opcode: OpMovReg, Dst: 2, Src: 10},
			{Opcode: OpAddImm, Dst: 2, Imm: -4},
			{Opcode: OpCall, Imm: HelperMapLookupElem},
			{Opcode: Opcode(classLDX | modeMEM | genSize[g.byte()%4]), Dst: g.reg(), Src: 0, Offset: int16(g.byte() % 12)},
		}
		return it
	case 11: // a loop tail: increment, then test the same register
		d := g.reg()
		test := Instruction{Opcode: Opcode(classJMP | []uint8{0xa0, 0xb0, 0x50, 0xc0}[g.byte()%4]), Dst: d, Imm: int32(int8(g.byte()))}
		if g.byte()&1 == 1 {
			test.Opcode |= srcX
			test.Src, test.Imm = g.reg(), 0
		}
		it.insns = []Instruction{{Opcode: OpAddImm, Dst: d, Imm: int32(int8(g.byte()))}, test}
		it.jump, it.jumpSlot = int(g.byte())%nitems, 1
		if g.byte()&3 == 0 {
			// clang's i < len && i < MAX: a test against a register
			// leaving the loop (to the next item), then the back edge.
			test.Opcode, test.Src, test.Imm = OpJltImm, 0, int32(int8(g.byte()))
			it.insns = []Instruction{it.insns[0], {Opcode: OpJgeReg, Dst: d, Src: g.reg(), Offset: 1}, test}
			it.jumpSlot = 2
		}
		return it
	default:
		return one(Instruction{Opcode: OpCall, Imm: HelperGetSmpProcessorID})
	}
}

func (g *gen) program() []Instruction {
	nfuncs := 1 + int(g.byte()%3)
	type fn struct{ items []item }
	funcs := make([]fn, nfuncs)
	for f := range funcs {
		n := 1 + int(g.byte()%24)
		for range n {
			funcs[f].items = append(funcs[f].items, g.item(f, nfuncs, n+1))
		}
		exit := item{insns: []Instruction{{Opcode: Opcode(classJMP | jmpEXIT)}}, jump: -1, call: -1}
		funcs[f].items = append(funcs[f].items, exit)
	}
	// The entry saves the context pointer in r9 for context accesses.
	funcs[0].items = append([]item{{insns: []Instruction{{Opcode: OpMovReg, Dst: 9, Src: 1}}, jump: -1, call: -1}}, funcs[0].items...)
	for i := range funcs[0].items {
		if funcs[0].items[i].jump >= 0 {
			funcs[0].items[i].jump++
		}
	}
	// Lay out slots, then resolve jumps and calls.
	var starts [][]int
	var fstart []int
	slot := 0
	for _, f := range funcs {
		fstart = append(fstart, slot)
		var s []int
		for _, it := range f.items {
			s = append(s, slot)
			slot += len(it.insns)
		}
		starts = append(starts, s)
	}
	var out []Instruction
	for fi, f := range funcs {
		for ii, it := range f.items {
			ins := append([]Instruction(nil), it.insns...)
			here := starts[fi][ii]
			if it.jump >= 0 {
				target := starts[fi][min(it.jump, len(f.items)-1)]
				ins[it.jumpSlot].Offset = int16(target - here - it.jumpSlot - 1)
			}
			if it.call >= 0 {
				ins[0].Imm = int32(fstart[it.call] - here - 1)
			}
			out = append(out, ins...)
		}
	}
	return out
}

// FuzzWellFormed runs generated well-formed programs: Load must accept
// them, runs must end with r0 or a typed error, and a run with fused
// instructions must agree with one without on r0, error, context and the
// count of executed instructions.
func FuzzWellFormed(f *testing.F) {
	f.Add([]byte{2, 5, 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15})
	f.Add([]byte{1, 20, 5, 16, 3, 4, 0, 1, 2, 0, 7, 0, 8, 1, 0, 9, 10, 1, 3})
	f.Add([]byte{3, 3, 7, 1, 7, 2, 6, 0x10, 1, 0, 0, 4, 9, 1, 1, 10, 1, 2, 3, 4, 0, 7, 2})
	f.Add([]byte{1, 4, 0, 0, 3, 1, 5, 0, 3, 7, 0, 0})
	f.Fuzz(func(t *testing.T, data []byte) {
		g := gen{data: data}
		insns := g.program()
		run := func(opts *Options) (uint64, error, []byte, uint64) {
			p, err := Load(&ProgramSpec{Instructions: insns, Maps: fuzzMaps(t)}, opts)
			if err != nil {
				t.Fatalf("well-formed program rejected: %v\n%v", err, insns)
			}
			ctx := make([]byte, 64)
			r0, err := p.Run(ctx)
			checkRunError(t, err)
			return r0, err, ctx, p.Machine().Executed()
		}
		r1, err1, ctx1, n1 := run(&Options{Budget: 1 << 14})
		r2, err2, ctx2, n2 := run(&Options{Budget: 1 << 14, noFusion: true})
		if r1 != r2 || (err1 == nil) != (err2 == nil) || (err1 != nil && err1.Error() != err2.Error()) || string(ctx1) != string(ctx2) || (err1 == nil && n1 != n2) {
			t.Fatalf("fused and plain runs disagree: %#x %v %d / %#x %v %d", r1, err1, n1, r2, err2, n2)
		}
	})
}
