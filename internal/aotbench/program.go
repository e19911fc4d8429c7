package aotbench

import (
	"encoding/binary"
	"fmt"
	"regexp"
	"strconv"

	"github.com/skelgen/skelgen/asm"
	"github.com/skelgen/skelgen/internal/workloads"
	"github.com/skelgen/skelgen/runtime"
)

// Workload is a benchmark workload of the runtime's table.
type Workload struct{ workloads.Workload }

// Workloads returns the runtime's benchmark workloads.
func Workloads() []Workload {
	var out []Workload
	for _, w := range workloads.Workloads() {
		out = append(out, Workload{w})
	}
	return out
}

// Overhead is the shortest program, "mov %r0, 1; exit", over a 64-byte
// context: its runs cost what every run costs before and after the
// program's own instructions (BenchmarkRunOverhead).
func Overhead() Workload {
	return Workload{workloads.Workload{Name: "Overhead", Asm: "mov %r0, 1\nexit", Ctx: make([]byte, 64), Want: 1}}
}

// mapRef is the "map:N" operand of lddw in the runtime's benchmark dialect,
// which package asm does not know.
var mapRef = regexp.MustCompile(`map:(\d+)`)

// mapSentinel marks an lddw that loaded map:N until it is rewritten.
const mapSentinel = 0x7ead0000

// Instructions assembles the workload, turning map:N into an lddw of the
// handle of map N (PseudoMapIdx).
func (w Workload) Instructions() ([]runtime.Instruction, error) {
	return w.assemble(w.Asm)
}

// KernelInstructions assembles the workload as the kernel runs it: a
// byte-buffer workload's XDP form, which reads data and data_end from the
// context, or else the same program as Instructions.
func (w Workload) KernelInstructions() ([]runtime.Instruction, error) {
	if w.Buffer {
		return w.assemble(w.KernelAsm)
	}
	return w.assemble(w.Asm)
}

func (w Workload) assemble(text string) ([]runtime.Instruction, error) {
	src := mapRef.ReplaceAllStringFunc(text, func(s string) string {
		n, _ := strconv.Atoi(s[len("map:"):])
		return fmt.Sprint(mapSentinel + n)
	})
	b, err := asm.Assemble(src)
	if err != nil {
		return nil, fmt.Errorf("workload %s: %w", w.Name, err)
	}
	insns, err := runtime.DecodeInstructions(b, binary.LittleEndian)
	if err != nil {
		return nil, fmt.Errorf("workload %s: %w", w.Name, err)
	}
	for i := range insns {
		in := &insns[i]
		if in.Opcode == 0x18 && in.Imm >= mapSentinel && in.Imm < mapSentinel+16 && i+1 < len(insns) && insns[i+1].Imm == 0 {
			in.Src, in.Imm = runtime.PseudoMapIdx, in.Imm-mapSentinel
		}
	}
	return insns, nil
}

// Spec returns the program with fresh user-space maps.
func (w Workload) Spec() (*runtime.ProgramSpec, error) {
	insns, err := w.Instructions()
	if err != nil {
		return nil, err
	}
	spec := &runtime.ProgramSpec{Name: w.Name, Instructions: insns}
	if w.HashMap {
		m, err := runtime.NewMap(runtime.MapSpec{Name: "counts", Type: runtime.Hash, KeySize: 4, ValueSize: 8, MaxEntries: 256})
		if err != nil {
			return nil, err
		}
		spec.Maps = []runtime.Map{m}
	}
	return spec, nil
}
