package aot

import (
	"bytes"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/dave/jennifer/jen"

	"github.com/skelgen/skelgen/asm"
	"github.com/skelgen/skelgen/internal/atomiccases"
	"github.com/skelgen/skelgen/internal/conformance"
	"github.com/skelgen/skelgen/runtime"

	"github.com/skelgen/skelgen/internal/testenv"
)

// TestAOTConformance translates every program of the conformance suite
// into one Go package, builds and runs it, and compares r0, the memory the
// program was given and the error with the interpreter's.
func TestAOTConformance(t *testing.T) {
	cases := loadConf(t)
	res := runAgreement(t, cases, true)
	ran, rejected := 0, 0
	for _, l := range res.Lines {
		if d := l.disagreement(true); d != "" {
			t.Errorf("%s: %s", l.Name, d)
			continue
		}
		if _, ok := res.TranslateFails[l.Name]; ok {
			rejected++
		} else {
			ran++
		}
	}
	t.Logf("%d programs: %d agree when run, %d rejected by both; one build of all translations took %v", len(res.Lines), ran, rejected, res.BuildTime)
}

// TestAOTAtomics runs every atomic operation, both widths, on a cell in
// the context, a global, the frame and the stack through a pointer, in the
// interpreter and translated, and compares both with the kernel's
// semantics (package atomiccases).
func TestAOTAtomics(t *testing.T) {
	var cases []aotCase
	all := atomiccases.Cases()
	for _, c := range all {
		cases = append(cases, aotCase{Name: c.Name, Insns: assembleInsns(t, c.Name, c.Asm), Mem: make([]byte, atomiccases.CtxSize), Setup: "fuzz", Budget: 1000})
	}
	res := runAgreement(t, cases, true)
	for i, l := range res.Lines {
		if d := l.disagreement(true); d != "" {
			t.Errorf("%s: %s", l.Name, d)
		}
		want := hex.EncodeToString(all[i].Want)
		if l.AOT.Err != "" || l.AOT.Mem != want {
			t.Errorf("%s: translation left context %s (%s), want %s", l.Name, l.AOT.Mem, l.AOT.Err, want)
		}
	}
}

// loadConf reads the conformance suite's programs.
func loadConf(t *testing.T) []aotCase {
	dir := filepath.Join(testenv.Conformance(t), "tests")
	files, err := filepath.Glob(filepath.Join(dir, "*.data"))
	if err != nil {
		t.Fatal(err)
	}
	if len(files) == 0 {
		t.Fatalf("no .data files in %s", dir)
	}
	var cases []aotCase
	for _, path := range files {
		c, err := conformance.ParseFile(path)
		if err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		prog, err := c.Program()
		if err != nil {
			t.Logf("%s: not assembled: %v", c.Name, err)
			continue
		}
		insns, err := runtime.DecodeInstructions(prog, binary.LittleEndian)
		if err != nil {
			t.Fatalf("%s: %v", c.Name, err)
		}
		cases = append(cases, aotCase{Name: c.Name, Insns: insns, Mem: c.Mem, Setup: "conformance"})
	}
	return cases
}

// TestAOTErrors runs programs that fail, in the interpreter and
// translated: each must fail with the same error (the translation's
// second run shows that the failure left nothing behind), and the error
// must be the expected one.
func TestAOTErrors(t *testing.T) {
	tests := []struct {
		name, asm, want string
	}{
		{"read_out_of_bounds", "ldxdw %r0, [%r1+60]\nexit", "instruction 0: invalid read of 8 bytes at context+60"},
		{"write_below_stack", "stdw [%r10-520], 1\nexit", "instruction 0: invalid write of 8 bytes at stack frame 0-8"},
		{"null", "mov %r1, 0\nldxw %r0, [%r1]\nexit", "instruction 1: invalid read of 4 bytes at NULL+0"},
		{"null_minus_one", "mov %r1, -1\nldxb %r0, [%r1]\nexit", "instruction 1: invalid read of 1 bytes at NULL-1"},
		{"loop_forever", "mov %r0, 0\nloop:\nadd %r0, 1\nja loop\nexit", "instruction budget exhausted"},
		{"recurse_forever", "call local self\nexit\nself:\ncall local self\nexit", "instruction 2: call depth exceeded"},
		{"helper_fails", "mov %r1, 3\ncall 100\nexit", "instruction 1: helper 100 (fail): helper asked to fail with 3"},
		{"divide_by_zero", "mov %r0, 7\nmov %r1, 0\ndiv %r0, %r1\nmod32 %r1, %r1\nexit", ""},
		// A callee reads its frame before writing it: the second run
		// (compared with the first) sees a cleared frame too.
		{"stack_cleared_between_runs", "call local f\nexit\nf:\nldxdw %r0, [%r10-8]\nstdw [%r10-8], 42\nexit", ""},
		// A frame no call has reached is unmapped; one a call reached is
		// cleared for the next run (compared with the first), even where
		// a forged address wrote into it after the call.
		{"forged_frame_unreached", "lddw %r1, 0x400000000\nstdw [%r1], 42\nexit", "instruction 2: invalid write of 8 bytes at stack frame 2+0"},
		{"forged_frame_cleared", "call local one\nlddw %r1, 0x400000000\nldxdw %r0, [%r1]\nstdw [%r1], 42\nexit\none:\ncall local two\nexit\ntwo:\nexit", ""},
		// A run clears only the part of a frame its program can write
		// (from its lowest store through r10, or all of it): each program
		// reads a slot before writing it, through r10, a forged address
		// or a copy of r10, so the second run (compared with the first)
		// would see the first's 42 if it stayed.
		{"stack_slot_cleared", "ldxdw %r0, [%r10-8]\nstdw [%r10-8], 42\nexit", ""},
		{"stack_slot_forged_read", "lddw %r1, 0x2000001f8\nldxdw %r0, [%r1]\nstdw [%r10-8], 42\nexit", ""},
		{"stack_copied_r10_cleared", "mov %r1, %r10\nadd %r1, -16\nldxdw %r0, [%r10-16]\nstdw [%r1], 42\nexit", ""},
		{"stack_atomic_cleared", "ldxdw %r0, [%r10-24]\nmov %r1, 42\nlock add [%r10-24], %r1\nexit", ""},
		// Atomics must be aligned, in the frame's constant slots too, and
		// stay inside a writable region.
		{"atomic_misaligned", "mov %r2, 1\nlock add [%r1+4], %r2\nexit", "instruction 1: misaligned atomic write of 8 bytes at context+4"},
		{"atomic_misaligned_frame", "mov %r2, 1\nlock fetch add32 [%r10-6], %r2\nexit", "instruction 1: misaligned atomic write of 4 bytes at stack frame 0+506"},
		{"atomic_misaligned_global", "lddw %r1, value:0+12\nmov %r2, 1\nlock xchg [%r1], %r2\nexit", "instruction 3: misaligned atomic write of 8 bytes at .data+12"},
		{"atomic_past_context", "mov %r2, 1\nlock cmpxchg32 [%r1+64], %r2\nexit", "instruction 1: invalid write of 4 bytes at context+64"},
	}
	var cases []aotCase
	for _, tt := range tests {
		insns := assembleInsns(t, tt.name, tt.asm)
		cases = append(cases, aotCase{Name: tt.name, Insns: insns, Mem: make([]byte, 64), Setup: "fuzz", Budget: 1000})
	}
	// map_lookup_elem, which translations call directly for hash maps
	// (Machine.LookupAt), in the cases that leave that path. Map 0 is an
	// array, map 1 a hash map of 4-byte keys.
	lookups := []struct{ name, setup, asm, want string }{
		{"lookup_null_key", "fuzz", "lddw %r1, map:1\nmov %r2, 0\ncall 1\nexit", "instruction 3: helper 1 (map_lookup_elem): key: invalid read of 4 bytes at NULL+0"},
		{"lookup_key_past_frame", "fuzz", "lddw %r1, map:1\nmov %r2, %r10\nadd %r2, -2\ncall 1\nexit", "instruction 4: helper 1 (map_lookup_elem): key: invalid read of 4 bytes at stack frame 0+510"},
		{"lookup_not_a_map", "fuzz", "mov %r1, 1\nmov %r2, %r10\nadd %r2, -4\ncall 1\nexit", "instruction 3: helper 1 (map_lookup_elem): 0x1 is not a map handle"},
		{"lookup_array", "fuzz", "stw [%r10-4], 0\nlddw %r1, map:0\nmov %r2, %r10\nadd %r2, -4\ncall 1\njeq %r0, 0, out\nldxdw %r0, [%r0+56]\nout:\nexit", ""},
		{"lookup_array_past_end", "fuzz", "stw [%r10-4], 1\nlddw %r1, map:0\nmov %r2, %r10\nadd %r2, -4\ncall 1\nexit", ""},
		{"lookup_array_past_value", "fuzz", "stw [%r10-4], 0\nlddw %r1, map:0\nmov %r2, %r10\nadd %r2, -4\ncall 1\nldxdw %r0, [%r0+60]\nexit", "instruction 6: invalid read of 8 bytes at .data+60"},
		{"lookup_missing", "fuzz", "mov %r3, 9\nstxw [%r10-4], %r3\nlddw %r1, map:1\nmov %r2, %r10\nadd %r2, -4\ncall 1\nexit", ""},
		// BPF_NOEXIST, so that a second run leaves key 9's value in its
		// slot (an update of the key would move it to another).
		{"lookup_found", "fuzz", "mov %r3, 9\nstxw [%r10-4], %r3\nstdw [%r10-16], 5\nlddw %r1, map:1\nmov %r2, %r10\nadd %r2, -4\nmov %r3, %r10\nadd %r3, -16\nmov %r4, 1\ncall 2\nlddw %r1, map:1\nmov %r2, %r10\nadd %r2, -4\ncall 1\nldxdw %r1, [%r0]\nldxdw %r1, [%r0+8]\nexit", "instruction 17: invalid read of 8 bytes at map counts value+8"},
		{"lookup_by_host", "hostlookup", "lddw %r1, map:1\nmov %r2, %r10\nadd %r2, -4\nmov %r3, 5\nmov %r4, 7\nmov %r5, 11\ncall 1\nexit", ""},
		{"lookup8_by_host", "hostlookup", "lddw %r1, map:2\nmov %r2, %r10\nadd %r2, -8\nmov %r3, 5\nmov %r4, 7\nmov %r5, 11\ncall 1\nexit", ""},
		// Maps 2 and 3 are a hash map and an LRU hash map of 8-byte keys
		// and two entries each.
		{"lookup8", "fuzz", lookup8Asm, ""},
		{"lookup8_lru", "fuzz", strings.ReplaceAll(lookup8Asm, "map:2", "map:3"), ""},
		{"lookup8_misses", "fuzz", lookup8MissesAsm, ""},
		{"lookup8_key_past_frame", "fuzz", "lddw %r1, map:2\nmov %r2, %r10\nadd %r2, -4\ncall 1\nexit", "instruction 4: helper 1 (map_lookup_elem): key: invalid read of 8 bytes at stack frame 0+508"},
		{"lookup_key_at_frame_bottom", "fuzz", "stw [%r10-512], 3\nlddw %r1, map:1\nmov %r2, %r10\nadd %r2, -500\nadd %r2, -12\ncall 1\nexit", ""},
		// r2 is set on both sides of a join: not specialised, still right.
		{"lookup_key_joined", "fuzz", "stw [%r10-8], 3\nstw [%r10-4], 4\nlddw %r1, map:1\nmov %r2, %r10\nadd %r2, -8\njeq %r0, 0, j\nadd %r2, 4\nj:\ncall 1\nexit", ""},
		// map_update_elem and map_delete_elem, which translations call
		// directly too (Machine.Update32, Delete64, ...): each program
		// collects the low bytes of their results in r6 and leaves the
		// maps as it found them after its first run, so that a second
		// run gives the same outcome.
		{"update_cases", "fuzz", "mov %r6, 0\nstw [%r10-4], 3\nstdw [%r10-16], 11\n" + updateAsm(1, -4, -16, 0) + updateAsm(1, -4, -16, 1) +
			deleteAsm(1, -4) + deleteAsm(1, -4) + updateAsm(1, -4, -16, 2) + updateAsm(1, -4, -16, 4) + updateAsm(1, -4, -16, 1) +
			"stdw [%r10-16], 12\n" + updateAsm(1, -4, -16, 0) + "lddw %r1, map:1\nmov %r2, %r10\nadd %r2, -4\ncall 1\nldxdw %r0, [%r0]\nadd %r0, %r6\nexit", ""},
		{"update8_full", "fuzz", "mov %r6, 0\nstdw [%r10-32], 5\nstdw [%r10-8], 1\n" + updateAsm(2, -8, -32, 0) + "stdw [%r10-8], 2\n" + updateAsm(2, -8, -32, 0) +
			"stdw [%r10-8], 3\n" + updateAsm(2, -8, -32, 0) + "stdw [%r10-8], 2\n" + deleteAsm(2, -8) + "stdw [%r10-8], 3\n" + updateAsm(2, -8, -32, 0) +
			deleteAsm(2, -8) + "stdw [%r10-8], 9\n" + deleteAsm(2, -8) + "mov %r0, %r6\nexit", ""},
		{"update8_lru", "fuzz", "mov %r6, 0\nstdw [%r10-32], 5\nstdw [%r10-8], 1\n" + updateAsm(3, -8, -32, 0) + "stdw [%r10-8], 2\n" + updateAsm(3, -8, -32, 0) +
			"stdw [%r10-8], 3\n" + updateAsm(3, -8, -32, 0) + "stdw [%r10-8], 1\n" + updateAsm(3, -8, -32, 1) + "stdw [%r10-8], 2\n" + updateAsm(3, -8, -32, 2) +
			"stdw [%r10-8], 3\n" + deleteAsm(3, -8) + deleteAsm(3, -8) + "mov %r0, %r6\nexit", ""},
		{"update_array", "fuzz", "mov %r6, 0\nstdw [%r10-80], 0x1234\nstdw [%r10-24], 0x5678\nstw [%r10-4], 0\n" + updateAsm(0, -4, -80, 0) + "stw [%r10-4], 1\n" + updateAsm(0, -4, -80, 0) +
			"stw [%r10-4], 0\n" + updateAsm(0, -4, -80, 1) + updateAsm(0, -4, -80, 2) + deleteAsm(0, -4) + "mov %r0, %r6\nexit", ""},
		// A value looked up (its region kept by the run state), deleted,
		// read through the old pointer (cleared), its slot taken by the
		// key inserted again (the old pointer sees the new value), and
		// looked up again: the same address, in both engines.
		{"delete_kept", "fuzz", "stw [%r10-4], 9\nstdw [%r10-16], 5\n" + updateAsm(1, -4, -16, 0) +
			"lddw %r1, map:1\nmov %r2, %r10\nadd %r2, -4\ncall 1\nmov %r9, %r0\n" + deleteAsm(1, -4) + "ldxdw %r7, [%r9]\nstdw [%r10-16], 6\n" + updateAsm(1, -4, -16, 0) +
			"ldxdw %r8, [%r9]\nlddw %r1, map:1\nmov %r2, %r10\nadd %r2, -4\ncall 1\nmov %r6, 0\njne %r0, %r9, other\nmov %r6, 1\nother:\nlsh %r6, 16\nlsh %r7, 8\nadd %r6, %r7\nadd %r6, %r8\nmov %r0, %r6\nexit", ""},
		{"update_by_host", "hostmaps", "lddw %r1, map:1\nmov %r2, %r10\nadd %r2, -4\nmov %r3, %r10\nadd %r3, -16\nmov %r4, 0\nmov %r5, 11\ncall 2\nexit", ""},
		{"delete_by_host", "hostmaps", "lddw %r1, map:2\nmov %r2, %r10\nadd %r2, -8\nmov %r3, 5\nmov %r4, 7\nmov %r5, 11\ncall 3\nexit", ""},
		{"update_value_past_frame", "fuzz", "lddw %r1, map:2\nmov %r2, %r10\nadd %r2, -16\nmov %r3, %r10\nadd %r3, -8\nmov %r4, 0\ncall 2\nexit", "instruction 7: helper 2 (map_update_elem): value: invalid read of 16 bytes at stack frame 0+504"},
		// r3 is set on both sides of a join: not specialised, still right.
		{"update_value_joined", "fuzz", "stw [%r10-4], 3\nlddw %r1, map:1\nmov %r2, %r10\nadd %r2, -4\nmov %r4, 0\nmov %r3, %r10\nadd %r3, -16\njeq %r0, 0, j\nadd %r3, -8\nj:\ncall 2\nexit", ""},
	}
	for _, tt := range lookups {
		tests = append(tests, struct{ name, asm, want string }{tt.name, tt.asm, tt.want})
		cases = append(cases, aotCase{Name: tt.name, Insns: assembleInsns(t, tt.name, tt.asm), Mem: make([]byte, 64), Setup: tt.setup, Budget: 1000})
	}
	// Lookups of 8-byte keys are charged for hashing and comparing the
	// key: at every budget up to the run's need, the translation must stop
	// where the interpreter does. (A second run finds the keys inserted,
	// which costs less, so only the first is compared.)
	for b := uint64(1); b <= 250; b++ {
		name := fmt.Sprintf("lookup8_budget_%d", b)
		want := "?"
		if b == 250 {
			want = "" // enough for the whole run
		}
		tests = append(tests, struct{ name, asm, want string }{name, lookup8Asm, want})
		cases = append(cases, aotCase{Name: name, Insns: assembleInsns(t, name, lookup8Asm), Mem: make([]byte, 64), Setup: "fuzz", Budget: b})
	}
	// Updates and deletes charge for the key and value bytes: a loop of
	// array updates and deletes (9 units each, more than the instructions
	// of each) runs out of work first, and at every budget the
	// translation must stop where the interpreter does.
	for b := uint64(1); b <= 200; b++ {
		name := fmt.Sprintf("update_budget_%d", b)
		want := "?"
		if b == 200 {
			want = ""
		}
		tests = append(tests, struct{ name, asm, want string }{name, updateBudgetAsm, want})
		cases = append(cases, aotCase{Name: name, Insns: assembleInsns(t, name, updateBudgetAsm), Mem: make([]byte, 64), Setup: "fuzz", Budget: b})
	}
	// callx to one past a function's entry: both engines refuse it (the
	// assembler has no syntax for function addresses, so it is written
	// out). 0: lddw r1, function at 5; 2: r1 += 1; 3: callx r1; 4: exit;
	// 5: the function.
	tests = append(tests, struct{ name, asm, want string }{"callx_non_entry", "", "instruction 3: callx to invalid function address"})
	cases = append(cases, aotCase{Name: "callx_non_entry", Insns: []runtime.Instruction{
		{Opcode: 0x18, Dst: 1, Src: runtime.PseudoFunc, Imm: 4}, {},
		{Opcode: 0x07, Dst: 1, Imm: 1},
		{Opcode: 0x8d, Dst: 1},
		{Opcode: 0x95},
		{Opcode: 0xb7, Dst: 0, Imm: 1},
		{Opcode: 0x95},
	}, Mem: make([]byte, 64), Setup: "fuzz", Budget: 1000})
	res := runAgreement(t, cases, true)
	// Which map calls the translation specialised, by the direct
	// functions each program's function calls ("" for none).
	calls := map[string]string{"lookup_found": "Lookup32 Update32", "lookup_key_at_frame_bottom": "Lookup32", "lookup8": "Lookup64 Update64", "lookup8_lru": "Lookup64 Update64",
		"lookup8_misses": "Lookup64", "lookup8_by_host": "Lookup64", "lookup8_key_past_frame": "", "lookup_key_joined": "", "lookup_array": "Lookup32", "lookup_array_past_end": "Lookup32",
		"update_cases": "Delete32 Lookup32 Update32", "update8_full": "Delete64 Update64", "update8_lru": "Delete64 Update64", "update_array": "Delete32 Update32",
		"delete_kept": "Delete32 Lookup32 Update32", "update_by_host": "Update32", "delete_by_host": "Delete64", "update_value_past_frame": "", "update_value_joined": "",
		"update_budget_1": "Delete32 Update32"}
	for i, c := range cases {
		want, ok := calls[c.Name]
		if !ok {
			continue
		}
		_, fn, found := strings.Cut(string(res.Source), fmt.Sprintf("func p%dFn0(", i))
		fn, _, _ = strings.Cut(fn, "\n}\n")
		if !found {
			t.Fatalf("%s: no translated function p%dFn0", c.Name, i)
		}
		var got []string
		for _, call := range []string{"Delete32", "Delete64", "Lookup32", "Lookup64", "Update32", "Update64"} {
			if strings.Contains(fn, "m."+call+"(") {
				got = append(got, call)
			}
		}
		if strings.Join(got, " ") != want {
			t.Errorf("%s: calls %v, want %q", c.Name, got, want)
		}
	}
	for i, l := range res.Lines {
		if d := l.disagreement(tests[i].want != "?"); d != "" {
			t.Errorf("%s: %s", l.Name, d)
		}
		want := tests[i].want
		switch {
		case want == "?": // agreement is all that is asked
		case want == "" && l.AOT.Err != "":
			t.Errorf("%s: translation failed: %s", l.Name, l.AOT.Err)
		case !strings.Contains(l.AOT.Err, want):
			t.Errorf("%s: translation's error %q does not contain %q", l.Name, l.AOT.Err, want)
		}
	}
}

// updateAsm is a call of map_update_elem of map m, the key at r10+key,
// the value at r10+val, with flags, that collects the low byte of r0 in
// r6.
func updateAsm(m, key, val, flags int) string {
	return fmt.Sprintf("lddw %%r1, map:%d\nmov %%r2, %%r10\nadd %%r2, %d\nmov %%r3, %%r10\nadd %%r3, %d\nmov %%r4, %d\ncall 2\n", m, key, val, flags) + collectAsm
}

// deleteAsm is updateAsm for map_delete_elem.
func deleteAsm(m, key int) string {
	return fmt.Sprintf("lddw %%r1, map:%d\nmov %%r2, %%r10\nadd %%r2, %d\ncall 3\n", m, key) + collectAsm
}

const collectAsm = "and %r0, 255\nlsh %r6, 8\nor %r6, %r0\n"

// updateBudgetAsm updates element 0 of map 0, the 64-byte global array,
// and deletes it (which fails) ten times.
const updateBudgetAsm = `
	mov %r6, 0
	mov %r7, 0
	stw [%r10-4], 0
loop:
	lddw %r1, map:0
	mov %r2, %r10
	add %r2, -4
	mov %r3, %r10
	add %r3, -72
	mov %r4, 0
	call 2
	lddw %r1, map:0
	mov %r2, %r10
	add %r2, -4
	call 3
	add %r7, 1
	jlt %r7, 10, loop
	mov %r0, %r7
	exit
`

// lookup8Asm inserts three 8-byte keys into map 2, a hash map of two
// entries, and looks up each, the key's address built in two steps once;
// it writes one value it finds and returns what it read.
const lookup8Asm = `
	stdw [%r10-24], 5
	stdw [%r10-16], 6
	mov %r6, 1
ins:
	stxdw [%r10-8], %r6
	lddw %r1, map:2
	mov %r2, %r10
	add %r2, -8
	mov %r3, %r10
	add %r3, -24
	mov %r4, 0
	call 2
	add %r6, 1
	jle %r6, 3, ins
	mov %r7, 0
	stdw [%r10-8], 3
	lddw %r1, map:2
	mov %r2, %r10
	add %r2, -8
	call 1
	jeq %r0, 0, miss3
	ldxdw %r7, [%r0+8]
	stdw [%r0], 7
miss3:
	stdw [%r10-8], 1
	lddw %r1, map:2
	mov %r2, %r10
	add %r2, -8
	call 1
	lsh %r7, 8
	jne %r0, 0, miss1
	add %r7, 1
miss1:
	stdw [%r10-8], 3
	lddw %r1, map:2
	mov %r2, %r10
	add %r2, -4
	add %r2, -4
	call 1
	lsh %r7, 8
	jeq %r0, 0, out
	ldxdw %r1, [%r0]
	add %r7, %r1
out:
	mov %r0, %r7
	exit
`

// lookup8MissesAsm looks up a missing 8-byte key in map 2 30 times,
// leaving r0 unread: the lookups are specialised all the same, and charged
// as the helper charges (see the runtime's TestDirectLookups for the
// charges themselves).
const lookup8MissesAsm = `
	stdw [%r10-8], 2
	mov %r6, 30
miss:
	lddw %r1, map:2
	mov %r2, %r10
	add %r2, -8
	call 1
	sub %r6, 1
	jne %r6, 0, miss
	mov %r0, 0
	exit
`

// goldenAsm is a small program touching most of what the translation
// emits: frame slots, context memory, an atomic, a loop, a helper call and
// a bpf-to-bpf call whose caller reads r1 afterwards.
const goldenAsm = `
	mov %r6, %r1
	stdw [%r10-8], 0
	mov %r2, 0
loop:
	ldxb %r3, [%r6]
	add %r6, 1
	ldxdw %r4, [%r10-8]
	add %r4, %r3
	stxdw [%r10-8], %r4
	add %r2, 1
	jlt %r2, 4, loop
	mov %r3, 1
	lock add [%r10-8], %r3
	mov %r1, %r4
	call local double
	add %r0, %r1
	call 5
	exit
double:
	mov %r0, %r1
	lsh %r0, 1
	mov %r1, 7
	exit
`

// TestAOTGolden pins the generated code of goldenAsm, source-line comments
// included (go test -run TestAOTGolden -update rewrites it).
func TestAOTGolden(t *testing.T) {
	insns := assembleInsns(t, "golden", goldenAsm)
	spec := &runtime.ProgramSpec{Name: "golden", Instructions: insns, Symbols: map[int]string{0: "sum4", 17: "double"}}
	opts := Options{Name: "golden", Lines: map[int]string{
		0:  "golden.bpf.c:5: const __u8 *p = ctx;",
		3:  "golden.bpf.c:7: sum += p[i];",
		14: "golden.bpf.c:9: return double(sum) + bpf_unwind(...);",
	}}
	render := func() []byte {
		code, err := Translate(spec, opts)
		if err != nil {
			t.Fatal(err)
		}
		f := jen.NewFile("golden")
		f.Add(code)
		var out bytes.Buffer
		if err := f.Render(&out); err != nil {
			t.Fatal(err)
		}
		return out.Bytes()
	}
	got := render()
	if !bytes.Equal(got, render()) {
		t.Fatal("translation is not deterministic")
	}
	path := filepath.Join("testdata", "golden.go.golden")
	if *update {
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("translation differs from %s (run with -update to accept):\n%s", path, got)
	}
}

// TestTranslateRejects checks that a program the runtime rejects is
// rejected with the runtime's error, naming the instruction.
func TestTranslateRejects(t *testing.T) {
	insns := []runtime.Instruction{{Opcode: 0xb7, Dst: 10}, {Opcode: 0x95}} // mov r10, 0
	_, err := Translate(&runtime.ProgramSpec{Name: "bad", Instructions: insns}, Options{})
	var ve *runtime.ValidationError
	if !errors.As(err, &ve) || ve.Insn != 0 {
		t.Fatalf("got %v, want a validation error at instruction 0", err)
	}
	if _, err := Translate(&runtime.ProgramSpec{Name: "x", Instructions: insns[1:]}, Options{Name: "not an identifier"}); err == nil {
		t.Fatal("a name with spaces was accepted")
	}
}

// TestExactLoops runs loops of the forms clang emits: ended as clang-19
// ends a constant trip count (jeq out, ja back), with jne, and with the
// bound register tested against the counter (jgt, jge: i < len). Each runs
// under every budget from one instruction to past the whole run, within the
// context and running off it (a counter stepping over its bound or
// starting past it, an inclusive bound one step too far); both engines
// must agree on result, error, the failing instruction and the executed
// count.
func TestExactLoops(t *testing.T) {
	const body = "mov %%r0, 0\nmov %%r3, 0\nmov %%r4, %d\nloop:\nmov %%r5, %%r1\nadd %%r5, %%r4\nldxdw %%r0, [%%r5]\nadd %%r0, %%r3\nadd %%r4, 8\nmov %%r3, %%r0\n"
	progs := []struct {
		name, asm string
		exact     bool
	}{
		{"jeq_ja", fmt.Sprintf(body, 0) + "jeq %r4, 64, out\nja loop\nout:\nexit", true},
		{"jne", fmt.Sprintf(body, 0) + "jne %r4, 64, loop\nexit", true},
		{"jeq_ja_steps_over", fmt.Sprintf(body, 0) + "jeq %r4, 60, out\nja loop\nout:\nexit", true},
		{"jne_starts_past", fmt.Sprintf(body, 72) + "jne %r4, 64, loop\nexit", true},
		// The bound against the counter, as clang tests i < len, with
		// len in r2: within the context, and past it.
		{"jgt_len", "mov %r2, 64\n" + fmt.Sprintf(body, 0) + "jgt %r2, %r4, loop\nexit", false},
		{"jge_len_past", "mov %r2, 64\n" + fmt.Sprintf(body, 0) + "jge %r2, %r4, loop\nexit", false},
	}
	var cases []aotCase
	for _, p := range progs {
		insns := assembleInsns(t, p.name, p.asm)
		src := translateSource(t, p.name, insns)
		if !strings.Contains(src, "SpanAt") {
			t.Errorf("%s: the loop is not hoisted", p.name)
		}
		if strings.Contains(src, "%8 == 0") != p.exact {
			t.Errorf("%s: the exactness guard is there: %v, want %v", p.name, !p.exact, p.exact)
		}
		for budget := uint64(1); budget <= 80; budget++ {
			mem := make([]byte, 64)
			for i := range mem {
				mem[i] = byte(i*7 + 1)
			}
			cases = append(cases, aotCase{Name: fmt.Sprintf("%s/budget=%d", p.name, budget), Insns: insns, Mem: mem, Setup: "fuzz", Budget: budget})
		}
	}
	agreeWithOutcomes(t, cases)
}

// TestHoistedPlaces runs hoisted loops whose accesses find their place in
// the span from how far a register stepped since the head: the index of
// data + i stepping between the base's computation and the access (the
// base lags one step behind the count), a base stepping after its access,
// range loops with other ways out, a counter carried through a copy, and
// bases that stay put, loops clang rotated. Each over the context and past
// it, every budget from 1 to 100 and some larger; both engines must agree.
func TestHoistedPlaces(t *testing.T) {
	progs := []struct{ name, asm string }{
		{"index_steps_before_access", "mov %r0, 0\nmov %r4, 0\nloop:\nmov %r5, %r1\nadd %r5, %r4\nadd %r4, 8\nldxdw %r3, [%r5]\nadd %r0, %r3\nstxb [%r5+7], %r4\njlt %r4, %r2, loop\nexit"},
		{"base_steps_after_access", "mov %r0, 0\nmov %r4, 0\nloop:\nldxw %r3, [%r1+4]\nadd %r1, 8\nldxw %r5, [%r1-8]\nxor %r3, %r5\nadd %r0, %r3\nadd %r4, 1\njlt %r4, %r2, loop\nexit"},
		// Range loops whose other ways out stay in their body: a second
		// bound on the counter in the middle of the body, and a byte
		// that ends the loop early (at context+5) or never.
		{"exit_in_body", "mov %r0, 0\nmov %r4, 0\nloop:\nldxdw %r3, [%r1]\nadd %r3, 3\nstxdw [%r1], %r3\nadd %r4, 1\njge %r4, %r2, out\nadd %r1, 8\njlt %r4, 8, loop\nout:\nmov %r0, %r4\nexit"},
		{"byte_ends_it", "mov %r0, 0\nmov %r4, 0\nloop:\nldxb %r3, [%r1]\njeq %r3, 58, out\nadd %r0, %r3\nadd %r1, 1\nadd %r4, 8\njlt %r4, %r2, loop\nout:\nexit"},
		{"byte_never_ends_it", "mov %r0, 0\nmov %r4, 0\nloop:\nldxb %r3, [%r1]\njeq %r3, 1, out\nadd %r0, %r3\nadd %r1, 1\nadd %r4, 1\njlt %r4, %r2, loop\nout:\nexit"},
		// The counter carried through a copy, as clang-19 writes
		// for (i = 0; i < n && i < 100; i++) sum += w[i].
		{"copied_counter", "mov %r3, 0\nmov %r5, 1\nloop:\nmov %r4, %r5\nldxdw %r5, [%r1]\nadd %r3, %r5\njge %r4, %r2, out\nadd %r1, 8\nmov %r5, %r4\nadd %r5, 1\njlt %r4, 100, loop\nout:\nmov %r0, %r3\nexit"},
		// The copy stepped by its only write, "add R, s", the counter
		// indexing the data, as clang-19 writes the inner loop of
		// for (pass...) for (i = 0; i < N; i += 8) sum += *(u64 *)(data + i):
		// a register bound (r2 - 8) and a constant one from 8 bytes in.
		{"copied_counter_add_only", "mul %r2, 8\nmov %r6, %r2\nadd %r6, -8\nmov %r0, 0\nmov %r3, 0\nmov %r4, 0\nloop:\nmov %r5, %r4\nmov %r0, %r1\nadd %r0, %r5\nldxdw %r0, [%r0]\nadd %r0, %r3\nadd %r4, 8\nmov %r3, %r0\njlt %r5, %r6, loop\nexit"},
		{"copied_counter_add_only_past", "add %r1, 8\nmov %r0, 0\nmov %r3, 0\nmov %r4, 0\nloop:\nmov %r5, %r4\nmov %r0, %r1\nadd %r0, %r5\nldxdw %r0, [%r0]\nxor %r0, %r2\nadd %r0, %r3\nadd %r4, 8\nmov %r3, %r0\njlt %r5, 56, loop\nexit"},
		// 32-bit counters (add32, jmp32), as clang writes for an int i:
		// within the context and past it, counting by two to an exact
		// bound, starting with its high half set (the first add32 clears
		// it: the guard sends the loop to its checked copy), and a
		// rotated loop whose latch tests the counter with jne32.
		{"counter32", "mov %r0, 0\nmov32 %r4, 0\nloop:\nldxb %r3, [%r1]\nadd %r0, %r3\nadd %r1, 1\nadd32 %r4, 1\njlt32 %r4, 64, loop\nexit"},
		{"counter32_past", "mov %r0, 0\nmov32 %r4, 0\nloop:\nldxb %r3, [%r1]\nadd %r0, %r3\nadd %r1, 1\nadd32 %r4, 1\njlt32 %r4, 72, loop\nexit"},
		{"counter32_exact", "mov %r0, 0\nmov32 %r4, 0\nloop:\nmov %r5, %r1\nadd %r5, %r4\nldxh %r3, [%r5]\nadd %r0, %r3\nadd32 %r4, 2\njne32 %r4, 64, loop\nexit"},
		{"counter32_high", "mov %r0, 0\nmov %r4, 1\nlsh %r4, 32\nor %r4, 3\nloop:\nldxb %r3, [%r1]\nadd %r0, %r3\nadd %r1, 1\nadd32 %r4, 1\njlt32 %r4, 40, loop\nadd %r0, %r4\nexit"},
		{"rotated32", "mov %r0, 0\nmov32 %r3, 0\nja body\nlatch:\nadd %r0, %r4\nadd32 %r3, 1\njne32 %r3, 40, body\nexit\nbody:\nmov %r4, %r1\nadd %r4, %r3\nldxb %r5, [%r4]\nmov32 %r4, 1\njeq32 %r5, 58, latch\nmov32 %r4, 0\nja latch"},
		// The same with the counter indexing the data (data + i), its
		// register set before the loop by an instruction the translation
		// drops (the loop overwrites it before reading it). Found by the
		// soak: the span started where that dropped value pointed.
		{"copied_counter_index", "mov %r9, %r1\nmov %r8, 3\nmov %r4, 4\nloop:\nmov %r8, %r4\nmov %r5, %r9\nadd %r5, %r8\nstdw [%r5+2], -856305142\nldxsh %r0, [%r5+12]\nmov %r4, %r8\nadd %r4, 1\njlt %r8, %r2, loop\nexit"},
		// Back edges testing a register computed from the counter, as
		// clang-19 writes for (; i + 8 <= len; i += 8) (r2 is the trip
		// count times 8): from a shadow of the counter (a copy made after
		// its add) with a second bound in the body, as clang writes
		// checksum; from the counter after its add; before its add; less
		// a constant.
		{"derived_shadow", "mul %r2, 8\nmov %r0, 0\nmov %r3, 0\njlt %r2, 8, out\nmov %r4, 0\nmov %r5, 0\nloop:\nmov %r0, %r1\nadd %r0, %r4\nldxdw %r0, [%r0]\nadd %r0, %r5\nadd %r3, 8\njgt %r3, 1000, out\nmov %r6, %r4\nadd %r6, 16\nmov %r4, %r3\nmov %r5, %r0\njle %r6, %r2, loop\nout:\nexit"},
		{"derived_shadow_bound_fires", "mul %r2, 8\nmov %r0, 0\nmov %r3, 0\nmov %r4, 0\nmov %r5, 0\nloop:\nmov %r0, %r1\nadd %r0, %r4\nldxdw %r0, [%r0]\nadd %r0, %r5\nadd %r3, 8\njgt %r3, 39, out\nmov %r6, %r4\nadd %r6, 16\nmov %r4, %r3\nmov %r5, %r0\njle %r6, %r2, loop\nout:\nexit"},
		// The shadow does not start equal to the counter: the guard
		// sends the loop to its checked copy.
		{"derived_shadow_unequal", "mul %r2, 8\nmov %r0, 0\nmov %r3, 8\nmov %r4, 0\nmov %r5, 0\nloop:\nmov %r0, %r1\nadd %r0, %r4\nldxdw %r0, [%r0]\nadd %r0, %r5\nadd %r3, 8\nmov %r6, %r4\nadd %r6, 16\nmov %r4, %r3\nmov %r5, %r0\njle %r6, %r2, loop\nexit"},
		// The derived register is also the base of the body's loads,
		// and one of them overwrites it (clang reuses registers).
		{"derived_reused_base", "mul %r2, 4\nmov %r0, 0\nmov %r3, 0\nmov %r4, 0\nmov %r5, 0\nloop:\nmov %r6, %r1\nadd %r6, %r4\nldxb %r7, [%r6]\nlsh %r7, 8\nldxb %r6, [%r6+3]\nor %r0, %r7\nor %r0, %r6\nadd %r0, %r5\nadd %r3, 4\nmov %r6, %r4\nadd %r6, 8\nmov %r4, %r3\nmov %r5, %r0\njle %r6, %r2, loop\nexit"},
		{"derived_after_add", "mul %r2, 8\nmov %r0, 0\nmov %r3, 0\nloop:\nmov %r5, %r1\nadd %r5, %r3\nldxdw %r4, [%r5]\nadd %r0, %r4\nadd %r3, 8\nmov %r6, %r3\nadd %r6, 8\njle %r6, %r2, loop\nexit"},
		{"derived_before_add", "mul %r2, 8\nmov %r0, 0\nmov %r3, 0\nloop:\nmov %r6, %r3\nadd %r6, 16\nldxdw %r4, [%r1]\nadd %r0, %r4\nadd %r1, 8\nadd %r3, 8\njle %r6, %r2, loop\nexit"},
		{"derived_less", "mul %r2, 8\nmov %r0, 0\nmov %r3, 0\nloop:\nldxdw %r4, [%r1]\nadd %r0, %r4\nadd %r1, 8\nadd %r3, 8\nmov %r6, %r3\nadd %r6, -8\njgt %r2, %r6, loop\nexit"},
		// A shadow read only after its mov (data + i with i copied from
		// the stepped counter); its value before the loop is dead, and
		// once not equal to the counter.
		{"shadow_read_after_mov", "mul %r2, 8\nmov %r0, 0\nmov %r3, 0\nmov %r4, 0\nloop:\nadd %r3, 8\nmov %r4, %r3\nmov %r5, %r1\nadd %r5, %r4\nldxdw %r6, [%r5-8]\nadd %r0, %r6\njlt %r3, %r2, loop\nexit"},
		{"shadow_read_after_mov_unequal", "mul %r2, 8\nmov %r0, 0\nmov %r3, 0\nmov %r4, 5\nloop:\nadd %r3, 8\nmov %r4, %r3\nmov %r5, %r1\nadd %r5, %r4\nldxdw %r6, [%r5-8]\nadd %r0, %r6\njlt %r3, %r2, loop\nexit"},
		// Loops clang rotated: entered by a jump into the middle, the
		// body's ways back jumping to a latch placed before it, whose
		// conditional jump forward to the body is the back edge; the exit
		// lies between latch and body. A byte count (the constant bound or
		// r2 ends it), a classifier with several ways to the latch and a
		// store, and one that also leaves from its body.
		{"rotated_count", "mul %r2, 8\nmov %r0, 0\njeq %r2, 0, out\nmov %r3, 0\nja body\nlatch:\nadd %r0, %r4\nadd %r3, 1\njge %r3, %r2, out\njlt %r3, 100, body\nout:\nexit\nbody:\nmov %r4, %r1\nadd %r4, %r3\nldxb %r5, [%r4]\nmov32 %r4, 1\njeq32 %r5, 58, latch\nmov32 %r4, 0\nja latch"},
		{"rotated_count_bound", "mul %r2, 8\nmov %r0, 0\njeq %r2, 0, out\nmov %r3, 0\nja body\nlatch:\nadd %r0, %r4\nadd %r3, 1\njge %r3, %r2, out\njlt %r3, 40, body\nout:\nexit\nbody:\nmov %r4, %r1\nadd %r4, %r3\nldxb %r5, [%r4]\nmov32 %r4, 1\njeq32 %r5, 58, latch\nmov32 %r4, 0\nja latch"},
		{"rotated_classify", "mul %r2, 8\nmov %r0, 0\njeq %r2, 0, out\nmov %r3, 0\nja body\nlatch:\nadd %r0, %r6\nadd %r3, 1\njge %r3, %r2, out\njlt %r3, 100, body\nout:\nexit\nbody:\nmov %r5, %r1\nadd %r5, %r3\nldxb %r4, [%r5]\nmov %r6, 1\njlt32 %r4, 50, latch\nmov %r6, 3\njlt32 %r4, 120, latch\nstb [%r5], 7\nmov %r6, 5\njgt32 %r4, 200, latch\nmov %r6, 9\nja latch"},
		// A switch whose cases' tails clang merged into the latch: the
		// ways back jump to the latch's start or past it.
		{"rotated_merged_tails", "mul %r2, 8\nmov %r0, 0\njeq %r2, 0, out\nmov %r3, 0\nja body\nlatch:\nxor %r0, -1\ntail:\nadd %r0, %r4\nadd %r3, 1\njge %r3, %r2, out\njlt %r3, 100, body\nout:\nexit\nbody:\nmov %r4, %r1\nadd %r4, %r3\nldxb %r5, [%r4]\nmov32 %r4, 1\njeq32 %r5, 58, latch\nmov32 %r4, %r5\njgt32 %r5, 120, tail\nstb [%r1], 7\nmov32 %r4, 0\nja tail"},
		{"rotated_breaks", "mul %r2, 8\nmov %r0, 0\njeq %r2, 0, out\nmov %r3, 0\nja body\nlatch:\nadd %r0, %r6\nadd %r3, 1\njge %r3, %r2, out\njlt %r3, 100, body\nout:\nexit\nbody:\nmov %r5, %r1\nadd %r5, %r3\nldxb %r4, [%r5]\njeq32 %r4, 113, out\nmov %r6, 1\njlt32 %r4, 120, latch\nstb [%r5], 7\nmov %r6, 5\nja latch"},
		// Counters counting down to their bound (exact loops), as clang
		// writes while (len--) and for (i = len; i > 0; i--): with a base
		// counting up (a range loop); with data + i counting down, the
		// back edge a jne or a "jeq; ja", one leaving at a byte (data[5]
		// is 58); a base whose words go below the context's start in the
		// last iteration; a step of two that meets the bound or steps
		// over it; a register bound.
		{"down_count", "mul %r2, 8\nmov %r0, 0\njeq %r2, 0, out\nloop:\nldxb %r3, [%r1]\nadd %r0, %r3\nadd %r1, 1\nadd %r2, -1\njne %r2, 0, loop\nout:\nexit"},
		{"down_index", "mul %r2, 8\nmov %r0, 0\njeq %r2, 0, out\nadd %r1, -1\nloop:\nmov %r3, %r1\nadd %r3, %r2\nldxb %r3, [%r3]\nmul %r0, 31\nadd %r0, %r3\nadd %r2, -1\njeq %r2, 0, out\nja loop\nout:\nexit"},
		{"down_trim", "mul %r2, 8\nmov %r0, 0\njeq %r2, 0, out\nadd %r1, -1\nloop:\nmov %r3, %r1\nadd %r3, %r2\nldxb %r3, [%r3]\nmov %r0, %r2\njeq32 %r3, 58, out\nadd %r2, -1\nmov %r0, 0\njne %r2, 0, loop\nout:\nexit"},
		{"down_words", "mov %r0, 0\nmov %r4, %r2\nmul %r4, 8\nadd %r4, %r1\nloop:\nadd %r4, -8\nldxdw %r3, [%r4]\nadd %r0, %r3\nadd %r2, -1\njne %r2, 0, loop\nexit"},
		{"down_words_below", "mov %r0, 0\nmov %r4, %r2\nmul %r4, 8\nadd %r4, %r1\nadd %r4, -8\nloop:\nadd %r4, -8\nldxdw %r3, [%r4]\nadd %r0, %r3\nadd %r2, -1\njne %r2, 0, loop\nexit"},
		{"down_by_two", "mul %r2, 4\nmov %r0, 0\nmov %r5, %r2\nloop:\nldxb %r3, [%r1]\nadd %r0, %r3\nadd %r1, 1\nadd %r5, -2\njne %r5, 0, loop\nexit"},
		{"down_by_two_over", "mul %r2, 4\nadd %r2, 1\nmov %r0, 0\nmov %r5, %r2\nloop:\nldxb %r3, [%r1]\nadd %r0, %r3\nadd %r1, 1\nadd %r5, -2\njne %r5, 0, loop\nexit"},
		{"down_to_register", "mul %r2, 8\nmov %r6, 3\nmov %r0, 0\nloop:\nmov %r3, %r1\nadd %r3, %r2\nldxw %r4, [%r3-4]\nstb [%r3-1], 9\nadd %r0, %r4\nadd %r2, -1\njne %r2, %r6, loop\nexit"},
		// A rotated loop counting down: i from len down to 1 reading
		// data[i-1], its latch ending in jne.
		{"rotated_down", "mul %r2, 8\nmov %r0, 0\njeq %r2, 0, out\nmov %r3, %r2\nja body\nlatch:\nadd %r0, %r4\nadd %r3, -1\njne %r3, 0, body\nout:\nexit\nbody:\nmov %r4, %r1\nadd %r4, %r3\nldxb %r5, [%r4-1]\nmov32 %r4, 1\njeq32 %r5, 58, latch\nmov32 %r4, 0\nja latch"},
		// Loops also entered by jumps to their head from outside: past a
		// clamp of the bound (if (len > MAX) len = MAX), the loop within
		// the context or past it, counting up or down; and the back edge
		// of an outer loop.
		{"clamp_jump_in", "mul %r2, 4\nmov %r0, 0\nmov %r4, 0\njlt %r2, 34, loop\nmov %r2, 34\nloop:\nldxb %r3, [%r1]\nadd %r0, %r3\nadd %r1, 1\nadd %r4, 1\njlt %r4, %r2, loop\nexit"},
		{"clamp_jump_in_far", "mul %r2, 4\nadd %r1, 36\nmov %r0, 0\nmov %r4, 0\njlt %r2, 34, loop\nmov %r2, 34\nloop:\nldxb %r3, [%r1]\nadd %r0, %r3\nadd %r1, 1\nadd %r4, 1\njlt %r4, %r2, loop\nexit"},
		{"clamp_jump_in_down", "mul %r2, 7\nmov %r0, 0\njeq %r2, 0, out\njlt %r2, 60, loop\nmov %r2, 60\nloop:\nldxb %r3, [%r1]\nadd %r0, %r3\nadd %r1, 1\nadd %r2, -1\njne %r2, 0, loop\nout:\nexit"},
		{"outer_enters_head", "mov %r0, 0\nmov %r6, 0\nmov %r4, 0\ninner:\nldxb %r3, [%r1]\nadd %r0, %r3\nadd %r1, 1\nadd %r4, 1\njlt %r4, 8, inner\nmov %r4, 0\nadd %r6, 1\njlt %r6, %r2, inner\nexit"},
		{"bases_stay", "mov %r0, 0\nmov %r4, 0\nmov %r6, 16\nloop:\nmov %r5, %r1\nadd %r5, %r6\nldxdw %r3, [%r5+8]\nadd %r0, %r3\nldxh %r3, [%r1+2]\nadd %r0, %r3\nadd %r4, 1\njlt %r4, %r2, loop\nexit"},
	}
	var cases []aotCase
	for _, p := range progs {
		for _, n := range []int{8, 9} {
			// r2 is the trip count: within the 64-byte context, and past it.
			text := fmt.Sprintf("mov %%r2, %d\n%s", n, p.asm)
			insns := assembleInsns(t, p.name, text)
			src := translateSource(t, p.name, insns)
			if !strings.Contains(src, "SpanAt") {
				t.Errorf("%s: the loop is not hoisted", p.name)
			}
			if (strings.HasPrefix(p.name, "clamp_") || strings.HasPrefix(p.name, "outer_")) && !strings.Contains(src, "goto H") {
				t.Errorf("%s: the jump into the loop's head does not take its fast copy", p.name)
			}
			// Budgets 1 to 100 cover the short loops' ends; longer ones
			// (byte loops over 64 or 72 bytes) run their fast copies
			// only with more.
			budgets := []uint64{150, 300, 500, 700, 750, 800, 1000, 1 << 20}
			for b := uint64(1); b <= 100; b++ {
				budgets = append(budgets, b)
			}
			for _, budget := range budgets {
				mem := make([]byte, 64)
				for i := range mem {
					mem[i] = byte(i*11 + 3)
				}
				cases = append(cases, aotCase{Name: fmt.Sprintf("%s/n=%d/budget=%d", p.name, n, budget), Insns: insns, Mem: mem, Setup: "fuzz", Budget: budget})
			}
		}
	}
	agreeWithOutcomes(t, cases)
}

// TestRotatedWayBackPastStep: a way back of a rotated loop that jumps
// into its latch past the counter's step skips the step in that
// iteration, so the counter no longer bounds the trips and the loop must
// not be hoisted; both engines still agree.
func TestRotatedWayBackPastStep(t *testing.T) {
	var cases []aotCase
	for _, n := range []int{8, 9} {
		text := fmt.Sprintf("mov %%r2, %d\n", n) + "mul %r2, 8\nmov %r0, 0\njeq %r2, 0, out\nmov %r3, 0\nja body\nlatch:\nadd %r0, %r4\nadd %r3, 1\nstep:\njge %r3, %r2, out\njlt %r3, 100, body\nout:\nexit\nbody:\nmov %r4, %r1\nadd %r4, %r3\nldxb %r5, [%r4]\nmov32 %r4, 1\njeq32 %r5, 58, step\nmov32 %r4, 0\nja latch"
		insns := assembleInsns(t, "past_step", text)
		if src := translateSource(t, "past_step", insns); strings.Contains(src, "SpanAt") {
			t.Error("a loop whose way back skips the counter's step is hoisted")
		}
		for _, budget := range []uint64{10, 100, 1000, 1 << 20} {
			for _, colon := range []int{-1, 3, 63} {
				mem := make([]byte, 64)
				if colon >= 0 {
					mem[colon] = 58
				}
				cases = append(cases, aotCase{Name: fmt.Sprintf("past_step/n=%d/colon=%d/budget=%d", n, colon, budget), Insns: insns, Mem: mem, Setup: "fuzz", Budget: budget})
			}
		}
	}
	agreeWithOutcomes(t, cases)
}

// TestLoopArms runs counted loops over data[i] laid out as clang lays out
// a loop around an if-else chain: the arms lie past the loop's exit and
// jump back into its latch, at its start or past it, one arm into the
// tail of another, a chain of eight as a compare tree, one storing to the
// context. The loop with its arms is hoisted: the load reads its view and
// the fast copy checks no budget. An arm that leaves the program makes the
// code past the exit no arm, and the loop stays checked. Each over the
// context and past it, budgets from 1 to past the runs' needs; both
// engines must agree.
func TestLoopArms(t *testing.T) {
	const head = "mov %r0, 1\nmov %r4, 0\nloop:\nmov %r3, %r1\nadd %r3, %r4\nldxb %r3, [%r3]\njgt %r3, 15, arms\n" +
		"latch:\nadd %r0, %r3\nnext:\nadd %r4, 1\njlt %r4, %r2, loop\nexit\narms:\n"
	chain := ""
	for k, v := range []int{39, 63, 89, 119, 149, 179, 209, 239} {
		chain += fmt.Sprintf("jgt32 %%r3, %d, c%d\nmul %%r0, %d\nja %s\nc%d:\n", v, k, k+3, []string{"latch", "next"}[k%2], k)
	}
	progs := []struct {
		name, asm string
		hoisted   bool
	}{
		{"arms", head + "jgt32 %r3, 39, a2\nmov %r5, %r0\nlsh %r5, 7\ntail:\nxor %r5, %r0\nmov %r0, %r5\nja next\n" +
			"a2:\njgt32 %r3, 63, a3\nmul %r0, 33\nja latch\na3:\njgt32 %r3, 119, a4\nmov %r5, %r0\nrsh %r5, 9\nja tail\n" +
			"a4:\njgt32 %r3, 200, a5\nstb [%r1+1], 7\nxor %r0, %r3\nja next\na5:\nsub %r0, %r3\nja next", true},
		{"arms_tree", head + chain + "xor %r0, %r3\nja next", true},
		{"arm_exits", head + "jgt32 %r3, 39, a2\nmul %r0, 33\nja latch\na2:\njgt32 %r3, 250, a3\nxor %r0, %r3\nja next\na3:\nmov %r0, 99\nexit", false},
	}
	var cases []aotCase
	for _, p := range progs {
		for _, n := range []int{64, 72} {
			// r2 is the trip count: the 64-byte context, and past it.
			insns := assembleInsns(t, p.name, fmt.Sprintf("mov %%r2, %d\n%s", n, p.asm))
			src := translateSource(t, p.name, insns)
			if !p.hoisted {
				if strings.Contains(src, "SpanAt") {
					t.Errorf("%s: a loop with an arm that exits is hoisted:\n%s", p.name, src)
				}
			} else if fast, _, ok := strings.Cut(src[strings.Index(src, "SpanAt")+1:], "\nL"); !ok || !strings.Contains(src, "with their arms at") {
				t.Errorf("%s: the loop with its arms is not hoisted:\n%s", p.name, src)
			} else if !strings.Contains(fast, "= uint64(vv3[k][0])") || strings.Contains(fast, "CheckBudget") || strings.Contains(fast, "Load8At") {
				t.Errorf("%s: the fast copy checks its load or the budget:\n%s", p.name, fast)
			}
			budgets := []uint64{1 << 20}
			for b := uint64(1); b <= 1500; b += 7 {
				budgets = append(budgets, b)
			}
			for _, budget := range budgets {
				mem := make([]byte, 64)
				for i := range mem {
					mem[i] = byte(i*37 + 11)
				}
				cases = append(cases, aotCase{Name: fmt.Sprintf("%s/n=%d/budget=%d", p.name, n, budget), Insns: insns, Mem: mem, Setup: "fuzz", Budget: budget})
			}
		}
	}
	agreeWithOutcomes(t, cases)
}

// TestMaskedIndex runs hoisted loops whose accesses go through a register
// the loop does not write plus a masked index, as clang writes
// data[(i & 255) * 8]: clang-19's and32 of a stepped index, 64-bit and32
// masks scaled by lsh, mul or lsh32 and rsh32, a mask that is no power of
// two less one with accesses on both sides of the base, the index added
// to the base or the base to the index, and a masked base beside a base
// that steps. Each over 64 bytes of context, where the masked span fits,
// and 48, where the checked copy runs and faults where the interpreter
// does; every budget up to past the run's need. Loops whose index is not
// bounded (a mask in a register, a negative 64-bit mask, a mask a jump
// passes over, a base the loop writes) keep their accesses checked; a mask
// wider than the context gets the fast copy, which its guard never enters.
// An edited build (a mark returned as the fast copy starts) shows which
// runs enter the fast copy: over 64 bytes those whose span fits, over 48
// none.
func TestMaskedIndex(t *testing.T) {
	progs := []struct {
		name, asm string
		// at is how the fast copy finds the masked base's place in its
		// span ("" when the access stays checked); fits: the span lies
		// in 64 bytes of context.
		at   string
		fits bool
	}{
		{"clang_and32", "mov %r0, 0\nmov32 %r2, 0\nmov32 %r5, 0\nloop:\nmov32 %r3, %r2\nand32 %r3, 56\nmov %r4, %r1\nadd %r4, %r3\nldxdw %r3, [%r4]\nadd %r0, %r3\nadd32 %r2, 8\nadd32 %r5, 1\njne32 %r5, 20, loop\nexit", "r4 - r1", true},
		{"and_lsh", "mov %r0, 0\nmov %r4, 0\nloop:\nmov %r3, %r4\nand %r3, 7\nlsh %r3, 3\nmov %r5, %r1\nadd %r5, %r3\nldxdw %r6, [%r5]\nxor %r0, %r6\nadd %r4, 1\njlt %r4, 20, loop\nexit", "r5 - r1", true},
		{"and_mul_store", "mov %r0, 0\nmov %r4, 0\nloop:\nmov %r3, %r4\nand %r3, 15\nmul %r3, 4\nadd %r3, %r1\nldxw %r6, [%r3]\nadd %r6, 1\nstxw [%r3], %r6\nadd %r0, %r6\nadd %r4, 3\njlt %r4, 60, loop\nexit", "r3 - r1", true},
		{"odd_mask_both_sides", "add %r1, 8\nmov %r0, 0\nmov %r4, 0\nloop:\nmov32 %r3, %r4\nand32 %r3, 41\nmov %r5, %r3\nadd %r5, %r1\nldxb %r6, [%r5-8]\nldxh %r7, [%r5+13]\nadd %r0, %r6\nadd %r0, %r7\nadd %r4, 5\njlt %r4, 100, loop\nexit", "r5 - r1", true},
		{"lsh32_rsh32", "mov %r0, 0\nmov %r4, 0\nloop:\nmov32 %r3, %r4\nand32 %r3, 15\nlsh32 %r3, 3\nrsh32 %r3, 1\nmov %r5, %r1\nadd %r5, %r3\nldxw %r6, [%r5]\nadd %r0, %r6\nadd %r4, 1\njlt %r4, 40, loop\nexit", "r5 - r1", true},
		{"beside_stepping_base", "mov %r0, 0\nmov %r4, 0\nmov %r9, %r1\nadd %r9, 32\nloop:\nmov32 %r3, %r4\nand32 %r3, 7\nlsh32 %r3, 2\nmov %r5, %r1\nadd %r5, %r3\nldxw %r6, [%r5]\nstxb [%r9], %r6\nadd %r9, 1\nadd %r4, 1\njlt %r4, 32, loop\nexit", "r5 - r1", true},
		{"mask_too_wide", "mov %r0, 0\nmov %r4, 0\nloop:\nmov %r3, %r4\nlsh %r3, 3\nand %r3, 63\nmov %r5, %r1\nadd %r5, %r3\nldxdw %r6, [%r5]\nadd %r0, %r6\nadd %r4, 1\njlt %r4, 20, loop\nexit", "r5 - r1", false},
		{"mask_in_register", "mov %r0, 0\nmov %r4, 0\nmov %r7, 56\nloop:\nmov %r3, %r4\nlsh %r3, 3\nand %r3, %r7\nmov %r5, %r1\nadd %r5, %r3\nldxdw %r6, [%r5]\nadd %r0, %r6\nadd %r4, 1\njlt %r4, 20, loop\nexit", "", false},
		{"negative_mask64", "mov %r0, 0\nmov %r4, 0\nloop:\nmov %r3, %r4\nlsh %r3, 3\nand %r3, -8\nmov %r5, %r1\nadd %r5, %r3\nldxdw %r6, [%r5]\nadd %r0, %r6\nadd %r4, 1\njlt %r4, 8, loop\nexit", "", false},
		{"mask_passed_over", "mov %r0, 0\nmov %r4, 0\nloop:\nmov %r3, %r4\njeq %r4, 9, skip\nand %r3, 7\nskip:\nlsh %r3, 3\nmov %r5, %r1\nadd %r5, %r3\nldxdw %r6, [%r5]\nadd %r0, %r6\nadd %r4, 1\njlt %r4, 12, loop\nexit", "", false},
		{"base_written", "mov %r0, 0\nmov %r4, 0\nloop:\nmov %r3, %r4\nand %r3, 7\nmov %r5, %r1\nadd %r5, %r3\nldxb %r6, [%r5]\nadd %r0, %r6\nadd %r1, 1\nadd %r4, 1\njlt %r4, 20, loop\nexit", "", false},
	}
	var cases []aotCase
	probe := map[string]bool{} // by case: the run must enter the fast copy
	var probes []aotCase
	for _, p := range progs {
		insns := assembleInsns(t, p.name, p.asm)
		src := translateSource(t, p.name, insns)
		switch {
		case p.at != "" && !strings.Contains(src, ".At("+p.at):
			t.Errorf("%s: the masked access is not in the fast copy (no view at %s)", p.name, p.at)
		case p.at == "" && strings.Contains(src, "m.SpanAt("):
			t.Errorf("%s: a span is hoisted, want the access checked", p.name)
		}
		for _, size := range []int{64, 48} {
			mem := make([]byte, size)
			for i := range mem {
				mem[i] = byte(i*29 + 7)
			}
			for budget := uint64(1); budget <= 260; budget++ {
				cases = append(cases, aotCase{Name: fmt.Sprintf("%s/%d/budget=%d", p.name, size, budget), Insns: insns, Mem: mem, Setup: "fuzz", Budget: budget})
			}
			c := aotCase{Name: fmt.Sprintf("%s/%d", p.name, size), Insns: insns, Mem: mem, Setup: "fuzz", Budget: 1 << 20}
			cases = append(cases, c)
			probes = append(probes, c)
			probe[c.Name] = p.fits && size == 64
		}
	}
	agreeWithOutcomes(t, cases)
	// The fast copy returns a mark before its first instruction.
	const mark = 0xfa57
	window := regexp.MustCompile(`(\n\s*)(v\d+x\d+ := runtime\.WindowOf\[)`)
	entered := func(src []byte) []byte {
		return window.ReplaceAll(src, []byte(fmt.Sprintf("${1}return %#x, b$1$2", mark)))
	}
	for _, l := range runEdited(t, probes, false, entered).Lines {
		switch {
		case probe[l.Name] && l.AOT.R0 != mark:
			t.Errorf("%s: the fast copy did not run (r0 %#x, %q)", l.Name, l.AOT.R0, l.AOT.Err)
		case !probe[l.Name]:
			if d := l.disagreement(true); d != "" {
				t.Errorf("%s: the fast copy ran, or: %s", l.Name, d)
			}
		}
	}
}

// translateSource returns the Go source of the translation of insns.
func translateSource(t *testing.T, name string, insns []runtime.Instruction) string {
	t.Helper()
	code, err := Translate(&runtime.ProgramSpec{Name: name, Instructions: insns}, Options{Name: "p"})
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	return fmt.Sprintf("%#v", code)
}

// assembleInsns assembles the program name in ubpf's assembly dialect.
func assembleInsns(t *testing.T, name, src string) []runtime.Instruction {
	t.Helper()
	b, err := asm.Assemble(src)
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	insns, err := runtime.DecodeInstructions(b, binary.LittleEndian)
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	return insns
}

// TestSpanBlocks runs straight-line runs of accesses through one base,
// whose span the translation checks once: within the context, reaching
// past it (the checked copy stores, then faults at the right
// instruction), and with the base moved in between (two runs). Every
// budget from 1 to 12; both engines must agree.
func TestSpanBlocks(t *testing.T) {
	progs := []struct{ name, asm string }{
		{"in_range", "ldxdw %r2, [%r1]\nadd %r2, 1\nldxw %r3, [%r1+8]\nstxdw [%r1+16], %r2\nldxb %r0, [%r1+63]\nadd %r0, %r3\nexit"},
		{"past_end", "ldxdw %r2, [%r1]\nldxw %r3, [%r1+8]\nstxdw [%r1+16], %r2\nldxdw %r0, [%r1+60]\nexit"},
		{"base_moved", "ldxdw %r2, [%r1]\nldxdw %r3, [%r1+8]\nadd %r1, 8\nstxdw [%r1+8], %r2\nldxdw %r0, [%r1+56]\nexit"},
	}
	var cases []aotCase
	for _, p := range progs {
		insns := assembleInsns(t, p.name, p.asm)
		src := translateSource(t, p.name, insns)
		if !strings.Contains(src, "run a copy that checks it once") {
			t.Errorf("%s: no span block", p.name)
		}
		for budget := uint64(1); budget <= 12; budget++ {
			mem := make([]byte, 64)
			for i := range mem {
				mem[i] = byte(i*13 + 5)
			}
			cases = append(cases, aotCase{Name: fmt.Sprintf("%s/budget=%d", p.name, budget), Insns: insns, Mem: mem, Setup: "fuzz", Budget: budget})
		}
	}
	agreeWithOutcomes(t, cases)
}

// agreeWithOutcomes runs cases in both engines, requires them to agree,
// and requires the outcomes to include successes, budget errors and
// memory faults, so that the cases reach all three.
func agreeWithOutcomes(t *testing.T, cases []aotCase) {
	t.Helper()
	kinds := map[string]int{}
	for _, l := range runAgreement(t, cases, true).Lines {
		if d := l.disagreement(true); d != "" {
			t.Errorf("%s: %s", l.Name, d)
		}
		switch {
		case l.AOT.Err == "":
			kinds["ok"]++
		case strings.Contains(l.AOT.Err, "budget exhausted"):
			kinds["budget"]++
		case strings.Contains(l.AOT.Err, "invalid read"), strings.Contains(l.AOT.Err, "invalid write"):
			kinds["fault"]++
		}
	}
	t.Logf("outcomes: %v", kinds)
	if kinds["ok"] == 0 || kinds["budget"] == 0 || kinds["fault"] == 0 {
		t.Errorf("outcomes %v: want successes, budget errors and faults", kinds)
	}
}

// TestLoopConsts checks which registers a hoisted loop passes through
// runtime.Opaque: a 64-bit constant set by an lddw in the code falling
// into the loop, read and not written by it; not a constant that fits in
// 32 bits, one the loop writes, or one set before a jump target (another
// path may bring another value). Each program must also agree in both
// engines.
func TestLoopConsts(t *testing.T) {
	const loop = "mov %r0, 0\nmov %r1, 0\nloop:\nxor %r0, %r1\nmul %r0, %r5\nadd %r1, 1\njlt %r1, 100, loop\nexit"
	progs := []struct {
		name, asm string
		opaque    bool
	}{
		{"lddw_before", "lddw %r5, 0x100000001b3\n" + loop, true},
		{"small_constant", "lddw %r5, 0x1b3\n" + loop, false},
		{"negative_32_bits", "lddw %r5, 0xffffffffffffff00\n" + loop, false},
		{"behind_a_jump_target", "mov %r5, 7\njeq %r2, 0, next\nlddw %r5, 0x100000001b3\nnext:\n" + loop, false},
		{"written_in_loop", "lddw %r5, 0x100000001b3\nmov %r0, 0\nmov %r1, 0\nloop:\nxor %r0, %r1\nmul %r0, %r5\nadd %r5, 1\nadd %r1, 1\njlt %r1, 100, loop\nexit", false},
	}
	var cases []aotCase
	for _, p := range progs {
		insns := assembleInsns(t, p.name, p.asm)
		src := translateSource(t, p.name, insns)
		if got := strings.Contains(src, "runtime.Opaque(r5)"); got != p.opaque {
			t.Errorf("%s: r5 passed through Opaque: %v, want %v", p.name, got, p.opaque)
		}
		cases = append(cases, aotCase{Name: p.name, Insns: insns, Mem: make([]byte, 64), Setup: "fuzz"})
	}
	for _, l := range runAgreement(t, cases, true).Lines {
		if d := l.disagreement(true); d != "" {
			t.Errorf("%s: %s", l.Name, d)
		}
	}
}
