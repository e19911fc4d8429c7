package gen

import (
	"errors"
	"fmt"
	"sort"

	"github.com/dave/jennifer/jen"

	"github.com/skelgen/skelgen/runtime"
)

// Ahead-of-time translation of user-space programs into Go.
//
// Translate turns one program into Go source that the Go compiler makes
// native code of. Each BPF function (the entry at instruction 0, every
// bpf-to-bpf call target, every function whose address lddw takes) becomes
// one Go function:
//
//   - registers are local uint64 variables; a liveness analysis decides
//     which ones a function declares, takes as parameters (those it reads
//     before writing: r1–r5 and anything else the caller's value shows
//     through, as in the interpreter, where registers are shared) and
//     returns (r0, and the r1–r5 a caller reads after the call); writes
//     nobody reads are dropped unless they can fault;
//   - jumps are labels and goto, in instruction order, so fall-through stays
//     fall-through;
//   - memory goes through the runtime's inlinable trapping accessors
//     (Machine.Load32At and friends), which carry the instruction index into
//     the error; loads and stores relative to r10 with a constant offset
//     inside the frame index the frame's array directly, with no check;
//   - helpers and externs are called through Machine.CallAt with the call's
//     instruction index, so they resolve exactly as the interpreter resolves
//     them, and callx through Machine.CallX and a switch over the functions;
//   - the budget lives in a local: each straight-line run subtracts its
//     length where the interpreter charges it (taken jumps, bpf-to-bpf calls,
//     exits) and checks it there, so ErrBudget comes at the same instruction
//     with the same memory effects; call depth is checked before each call;
//   - division and modulo by zero, shifts and sign extension follow RFC 9669
//     as the interpreter does.
//
// The generated code is gofmt'd (when rendered through a jen.File),
// vet-clean and deterministic; above each instruction a comment gives its
// index, its assembly and, when TranslateOptions.Lines has it, the C source
// line.
//
// To run a translation, load the same ProgramSpec with runtime.Load (which
// resolves maps, globals, helpers and externs) and bind the generated
// <Name>Translation() to it:
//
//	p, err := runtime.Load(spec, opts)
//	c, err := p.Bind(xTranslation())
//	r0, err := c.Run(ctx)
//
// Bind checks every constant the translation compiled in (map handles and
// global addresses) against the loaded program.

// TranslateOptions configure Translate.
type TranslateOptions struct {
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
	// code calls; empty means skelgen's runtime.
	RuntimePath string
}

// DefaultRuntimePath is the import path of skelgen's runtime package.
const DefaultRuntimePath = "github.com/skelgen/skelgen/runtime"

// TranslateError is a program Translate cannot translate.
type TranslateError struct {
	Program string
	Insn    int // -1 when the error concerns the whole program
	Err     error
}

func (e *TranslateError) Error() string {
	if e.Insn < 0 {
		return fmt.Sprintf("translate program %s: %v", e.Program, e.Err)
	}
	return fmt.Sprintf("translate program %s: instruction %d: %v", e.Program, e.Insn, e.Err)
}

func (e *TranslateError) Unwrap() error { return e.Err }

// Translate returns the Go declarations of spec's translation as one
// statement for jen.File.Add. The spec is validated with runtime.Load first (helper ids
// and externs are accepted whatever they are, since they bind when the
// program is loaded for real), so a program the runtime rejects is
// rejected here with the same *runtime.ValidationError.
func Translate(spec *runtime.ProgramSpec, opts TranslateOptions) (*jen.Statement, error) {
	if opts.Name == "" {
		opts.Name = "bpf"
	}
	if !isIdent(opts.Name) {
		return nil, &TranslateError{Program: spec.Name, Insn: -1, Err: fmt.Errorf("name %q is not a Go identifier", opts.Name)}
	}
	if opts.RuntimePath == "" {
		opts.RuntimePath = DefaultRuntimePath
	}
	if err := validateForTranslation(spec); err != nil {
		return nil, &TranslateError{Program: spec.Name, Insn: -1, Err: err}
	}
	prog, err := decodeProgram(spec)
	if err != nil {
		return nil, err
	}
	prog.findFunctions()
	prog.solveInterfaces()
	e := &emitter{prog: prog, opts: opts}
	return e.program(), nil
}

func isIdent(s string) bool {
	for i, c := range s {
		letter := c == '_' || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z')
		if !letter && !(i > 0 && c >= '0' && c <= '9') {
			return false
		}
	}
	return s != ""
}

// validateForTranslation runs the runtime's validator on spec with every
// helper id and extern bound to a placeholder.
func validateForTranslation(spec *runtime.ProgramSpec) error {
	helpers := runtime.NewHelperSet()
	externs := map[string]runtime.Func{}
	placeholder := func(*runtime.Machine, uint64, uint64, uint64, uint64, uint64) (uint64, error) {
		return 0, errors.New("placeholder")
	}
	for _, in := range spec.Instructions {
		if in.Opcode == 0x85 && in.Src == 0 {
			helpers.Register(in.Imm, fmt.Sprintf("helper %d", in.Imm), placeholder)
		}
	}
	for _, name := range spec.Externs {
		externs[name] = placeholder
	}
	_, err := runtime.Load(spec, &runtime.Options{Helpers: helpers, Externs: externs})
	return err
}

// aotInsn is one decoded instruction (lddw merged).
type aotInsn struct {
	pc     int
	op     uint8
	dst    uint8
	src    uint8
	off    int16
	imm    int32
	imm64  uint64 // lddw: the value as Load resolves it
	pseudo bool   // lddw with a pseudo source: imm64 is checked by Bind
	slots  int    // 2 for lddw
	target int    // jump, local call or function-address target; -1 if none
}

func (in *aotInsn) class() uint8 { return in.op & 7 }

// Address tags and region numbering as runtime.Load assigns them: map
// handles and function addresses are tagged values, map values (globals)
// get regions after the stack frames in order of first reference.
const (
	tagMap  = 0x8000_0000
	tagFunc = 0xc000_0000
)

type aotProgram struct {
	name   string
	insns  map[int]*aotInsn
	order  []int // instruction indices in order (lddw tails left out)
	nslots int
	funcs  map[int]*aotFunc // by entry index
	fnList []*aotFunc       // by entry index, ascending
	syms   map[int]string
}

func decodeProgram(spec *runtime.ProgramSpec) (*aotProgram, error) {
	p := &aotProgram{name: spec.Name, insns: map[int]*aotInsn{}, nslots: len(spec.Instructions), syms: spec.Symbols}
	firstValueRegion := uint32(runtime.StackTop(0)>>32) + runtime.MaxFrames
	valueRegion := map[int32]uint32{}
	raw := spec.Instructions
	for i := 0; i < len(raw); i++ {
		r := raw[i]
		in := &aotInsn{pc: i, op: r.Opcode, dst: r.Dst, src: r.Src, off: r.Offset, imm: r.Imm, slots: 1, target: -1}
		switch {
		case r.Opcode == 0x18:
			in.slots = 2
			hi := uint64(uint32(raw[i+1].Imm))
			in.imm64 = uint64(uint32(r.Imm)) | hi<<32
			switch r.Src {
			case 0:
			case runtime.PseudoMapFD, runtime.PseudoMapIdx:
				in.pseudo, in.imm64 = true, runtime.Addr(tagMap|uint32(r.Imm), 0)
			case runtime.PseudoMapValue, runtime.PseudoMapIdxValue:
				reg, ok := valueRegion[r.Imm]
				if !ok {
					reg = firstValueRegion + uint32(len(valueRegion))
					valueRegion[r.Imm] = reg
				}
				in.pseudo, in.imm64 = true, runtime.Addr(reg, uint32(raw[i+1].Imm))
			case runtime.PseudoFunc:
				in.target = i + 1 + int(r.Imm)
				in.pseudo, in.imm64 = true, runtime.Addr(tagFunc, uint32(in.target))
			default:
				return nil, &TranslateError{Program: spec.Name, Insn: i, Err: fmt.Errorf("lddw with unsupported source %d", r.Src)}
			}
		case r.Opcode == 0x06: // gotol: JMP32 ja with a 32-bit offset in imm
			in.target = i + 1 + int(r.Imm)
		case r.Opcode == 0x85 && r.Src == runtime.PseudoCall:
			in.target = i + 1 + int(r.Imm)
		case r.Opcode == 0x8d:
			if r.Dst == 0 {
				in.dst = uint8(r.Imm) // the register in imm, as some assemblers put it
			}
		case isCondJump(r.Opcode) || r.Opcode == 0x05:
			in.target = i + 1 + int(r.Offset)
		}
		p.insns[i] = in
		p.order = append(p.order, i)
		if in.slots == 2 {
			i++
		}
	}
	return p, nil
}

// isCondJump reports a conditional jump of class JMP or JMP32.
func isCondJump(op uint8) bool {
	c := op & 7
	if c != 5 && c != 6 {
		return false
	}
	switch op & 0xf0 {
	case 0x00, 0x80, 0x90:
		return false
	}
	return true
}

// successors are the instructions control can reach next within the same
// function.
func (p *aotProgram) successors(in *aotInsn) []int {
	next := in.pc + in.slots
	switch {
	case in.op == 0x05 || in.op == 0x06:
		return []int{in.target}
	case in.op == 0x95:
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
