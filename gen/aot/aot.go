package aot

import (
	"errors"
	"fmt"
	"go/token"
	"sort"

	"github.com/dave/jennifer/jen"

	"github.com/skelgen/skelgen/runtime"
)

// Options configure Translate.
type Options struct {
	// Name prefixes every generated identifier and must be a Go
	// identifier; empty means "bpf". The generated declarations are
	// <Name>Translation (returns the runtime.Translation to Bind),
	// <Name>Entry and <Name>Fn<index> (one per BPF function).
	Name string
	// Lines optionally maps instruction indices to source text, such as
	// "probe.bpf.c:42: count++" from BTF line info, printed above the
	// instruction.
	Lines map[int]string
	// RuntimePath is the import path of the runtime package the generated
	// code calls; empty means RuntimeImport.
	RuntimePath string
	// Note, when set, receives a sentence worth telling whoever
	// generates the translation: that the program is large enough to be
	// split into more Go functions than its BPF functions.
	Note func(msg string)
}

// RuntimeImport is the import path of skelgen's runtime package.
const RuntimeImport = "github.com/skelgen/skelgen/runtime"

// Error is a program Translate cannot translate.
type Error struct {
	Program string
	Insn    int // -1 when the error concerns the whole program
	Err     error
}

func (e *Error) Error() string {
	if e.Insn < 0 {
		return fmt.Sprintf("translate program %s: %v", e.Program, e.Err)
	}
	return fmt.Sprintf("translate program %s: instruction %d: %v", e.Program, e.Insn, e.Err)
}

func (e *Error) Unwrap() error { return e.Err }

// Translate returns the Go declarations of spec's translation as one
// statement for jen.File.Add. The spec is loaded with runtime.Load first
// (helper ids and externs are accepted whatever they are, since they bind
// when the program is loaded for real), so a program the runtime rejects
// is rejected here with the same *runtime.ValidationError, and every
// resolved immediate (map handles, global and function addresses) is the
// value the loaded program holds.
func Translate(spec *runtime.ProgramSpec, opts Options) (*jen.Statement, error) {
	if opts.Name == "" {
		opts.Name = "bpf"
	}
	if !token.IsIdentifier(opts.Name) {
		return nil, &Error{Program: spec.Name, Insn: -1, Err: fmt.Errorf("name %q is not a Go identifier", opts.Name)}
	}
	if opts.RuntimePath == "" {
		opts.RuntimePath = RuntimeImport
	}
	loaded, err := load(spec)
	if err != nil {
		return nil, &Error{Program: spec.Name, Insn: -1, Err: err}
	}
	prog := decodeProgram(spec, loaded)
	prog.findFunctions()
	prog.solveInterfaces()
	e := &emitter{prog: prog, opts: opts}
	return e.program(), nil
}

// load runs runtime.Load on spec with every helper id and extern bound to
// a placeholder.
func load(spec *runtime.ProgramSpec) (*runtime.Program, error) {
	helpers := runtime.NewHelperSet()
	externs := map[string]runtime.Func{}
	placeholder := func(*runtime.Machine, uint64, uint64, uint64, uint64, uint64) (uint64, error) {
		return 0, errors.New("placeholder")
	}
	for _, in := range spec.Instructions {
		if in.Opcode == runtime.OpCall && in.Src == 0 {
			helpers.Register(in.Imm, fmt.Sprintf("helper %d", in.Imm), placeholder)
		}
	}
	for _, name := range spec.Externs {
		externs[name] = placeholder
	}
	return runtime.Load(spec, &runtime.Options{Helpers: helpers, Externs: externs})
}

// aotInsn is one decoded instruction (lddw merged).
type aotInsn struct {
	pc     int
	op     runtime.Opcode
	dst    uint8
	src    uint8
	off    int16
	imm    int32
	imm64  uint64 // lddw: the value the loaded program resolved
	pseudo bool   // lddw with a pseudo source: imm64 is checked by Bind
	slots  int    // 2 for lddw
	target int    // jump, local call or function-address target; -1 if none
}

func (in *aotInsn) class() runtime.Class { return in.op.Class() }

// aluOp names an ALU or ALU64 instruction's operation by the ALU64
// immediate opcode of the same operation (runtime.OpAddImm for add and
// add32, reg or imm; runtime.OpNeg, runtime.OpBswap for neg and the byte
// swaps).
func aluOp(op runtime.Opcode) runtime.Opcode { return op&0xf0 | runtime.OpAddImm&0x0f }

// isAtomic reports the atomic read-modify-write instructions.
func isAtomic(op runtime.Opcode) bool { return op == runtime.OpAtomicW || op == runtime.OpAtomicDW }

// jmpOp names a conditional jump's comparison by the JMP immediate opcode
// of the same comparison (runtime.OpJeqImm for jeq and jeq32, reg or imm).
func jmpOp(op runtime.Opcode) runtime.Opcode { return op&0xf0 | runtime.OpJa&0x0f }

type aotProgram struct {
	name   string
	insns  map[int]*aotInsn
	order  []int // instruction indices in order (lddw tails left out)
	nslots int
	funcs  map[int]*aotFunc // by entry index
	fnList []*aotFunc       // by entry index, ascending
	syms   map[int]string
	loaded *runtime.Program // the program as runtime.Load made it, with the maps the translation is made for
}

// decodeProgram decodes spec's instructions, which loaded has validated:
// every jump and call target is inside the program, every lddw complete.
func decodeProgram(spec *runtime.ProgramSpec, loaded *runtime.Program) *aotProgram {
	p := &aotProgram{name: spec.Name, insns: map[int]*aotInsn{}, nslots: len(spec.Instructions), syms: spec.Symbols, loaded: loaded}
	raw := spec.Instructions
	for i := 0; i < len(raw); i++ {
		r := raw[i]
		in := &aotInsn{pc: i, op: r.Opcode, dst: r.Dst, src: r.Src, off: r.Offset, imm: r.Imm, slots: 1, target: -1}
		switch {
		case r.Opcode == runtime.OpLddw:
			in.slots = 2
			in.imm64, _ = loaded.Imm64(i)
			in.pseudo = r.Src != 0
			if r.Src == runtime.PseudoFunc {
				in.target = i + 1 + int(r.Imm)
			}
		case r.Opcode == runtime.OpJa32: // gotol: a 32-bit offset in imm
			in.target = i + 1 + int(r.Imm)
		case r.Opcode == runtime.OpCall && r.Src == runtime.PseudoCall:
			in.target = i + 1 + int(r.Imm)
		case r.Opcode == runtime.OpCallx:
			if r.Dst == 0 {
				in.dst = uint8(r.Imm) // the register in imm, as some assemblers put it
			}
		case isCondJump(r.Opcode) || r.Opcode == runtime.OpJa:
			in.target = i + 1 + int(r.Offset)
		}
		p.insns[i] = in
		p.order = append(p.order, i)
		if in.slots == 2 {
			i++
		}
	}
	return p
}

// isCondJump reports a conditional jump of class JMP or JMP32.
func isCondJump(op runtime.Opcode) bool {
	if c := op.Class(); c != runtime.ClassJMP && c != runtime.ClassJMP32 {
		return false
	}
	switch jmpOp(op) {
	case runtime.OpJa, runtime.OpCall, runtime.OpExit:
		return false
	}
	return true
}

// isJump reports a jump, conditional or not (ja, ja32 or isCondJump).
func isJump(op runtime.Opcode) bool {
	return op == runtime.OpJa || op == runtime.OpJa32 || isCondJump(op)
}

// successors are the instructions control can reach next within the same
// function.
func (p *aotProgram) successors(in *aotInsn) []int {
	next := in.pc + in.slots
	switch {
	case in.op == runtime.OpJa || in.op == runtime.OpJa32:
		return []int{in.target}
	case in.op == runtime.OpExit:
		return nil
	case isCondJump(in.op):
		if in.target == next {
			return []int{next}
		}
		return []int{in.target, next}
	}
	return []int{next}
}

// sortedKeys returns the keys of m in ascending order.
func sortedKeys[V any](m map[int]V) []int {
	keys := make([]int, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Ints(keys)
	return keys
}
