package gen

import (
	"strings"
	"testing"

	"github.com/cilium/ebpf"
	"github.com/cilium/ebpf/asm"
)

// TestRuntimeDifferences: a store or an atomic operation through a value
// a user program looked up in a kernel-shared map the runtime copies is
// named, with the program and the map; the same through an mmapable array,
// a data section, a map only user programs use, or memory not looked up is
// not; an LRU map of user programs is named once.
func TestRuntimeDifferences(t *testing.T) {
	lookupThen := func(m string, then ...asm.Instruction) asm.Instructions {
		insns := asm.Instructions{
			asm.StoreImm(asm.R10, -4, 1, asm.Word),
			asm.LoadMapPtr(asm.R1, 0).WithReference(m),
			asm.Mov.Reg(asm.R2, asm.R10),
			asm.Add.Imm(asm.R2, -4),
			asm.FnMapLookupElem.Call(),
			asm.JEq.Imm(asm.R0, 0, "out"),
			asm.Mov.Reg(asm.R6, asm.R0),
			asm.Add.Imm(asm.R6, 8),
		}
		insns = append(insns, then...)
		return append(insns, asm.Mov.Imm(asm.R0, 0).WithSymbol("out"), asm.Return())
	}
	atomicAdd := asm.StoreXAdd(asm.R6, asm.R1, asm.DWord)
	store := asm.StoreMem(asm.R6, 0, asm.R1, asm.DWord)
	stackStore := asm.StoreMem(asm.R10, -8, asm.R1, asm.DWord)
	maps := map[string]*ebpf.MapSpec{
		"hash":   {Name: "hash", Type: ebpf.Hash, KeySize: 4, ValueSize: 16, MaxEntries: 4},
		"array":  {Name: "array", Type: ebpf.Array, KeySize: 4, ValueSize: 16, MaxEntries: 4},
		"mmap":   {Name: "mmap", Type: ebpf.Array, KeySize: 4, ValueSize: 16, MaxEntries: 4, Flags: bpfFMmapable},
		".bss":   {Name: ".bss", Type: ebpf.Array, KeySize: 4, ValueSize: 16, MaxEntries: 1},
		"user":   {Name: "user", Type: ebpf.Hash, KeySize: 4, ValueSize: 16, MaxEntries: 4},
		"recent": {Name: "recent", Type: ebpf.LRUHash, KeySize: 4, ValueSize: 16, MaxEntries: 4},
	}
	var kernel asm.Instructions
	for _, m := range []string{"hash", "array", "mmap", ".bss", "recent"} {
		kernel = append(kernel, asm.LoadMapPtr(asm.R1, 0).WithReference(m))
	}
	kernel = append(kernel, asm.Mov.Imm(asm.R0, 0), asm.Return())
	for _, c := range []struct {
		name  string
		insns asm.Instructions
		want  []string // substrings of the one warning about the program, or none
	}{
		{"atomic", lookupThen("hash", atomicAdd), []string{"user program p: an atomic operation to a value of map hash (Hash"}},
		{"store", lookupThen("array", store), []string{"user program p: a store to a value of map array (Array"}},
		{"mmapable", lookupThen("mmap", atomicAdd), nil},
		{"data section", lookupThen(".bss", store), nil},
		{"user map", lookupThen("user", atomicAdd), nil},
		{"stack", lookupThen("hash", stackStore), nil},
		{"lru", lookupThen("recent"), []string{"map recent (LRUHash) used by user-space programs"}},
	} {
		spec := &ebpf.CollectionSpec{Maps: maps, Programs: map[string]*ebpf.ProgramSpec{
			"k": {Name: "k", SectionName: "tracepoint/syscalls/sys_enter_getppid", Type: ebpf.TracePoint, Instructions: kernel},
			"p": {Name: "p", SectionName: "ubpf/p", Instructions: c.insns},
		}}
		warns := runtimeDifferences("x.bpf.c", spec)
		if len(warns) != len(c.want) {
			t.Errorf("%s: warnings %q, want %d", c.name, warns, len(c.want))
			continue
		}
		for i, w := range c.want {
			if !strings.Contains(warns[i], w) || !strings.HasPrefix(warns[i], "x.bpf.c") {
				t.Errorf("%s: warning %q, want x.bpf.c... %q", c.name, warns[i], w)
			}
		}
	}
}

// TestHookNearMisses: a section that misspells a hook with an argument is
// an error naming the nearest hook; one without, a warning; plain program
// names and hooks pass.
func TestHookNearMisses(t *testing.T) {
	for _, c := range []struct {
		section string
		err     string // a substring of the error, or ""
		warn    string // a substring of the warning, or ""
	}{
		{"ubpf/intervall/1s", `no hook "intervall" (did you mean interval?)`, ""},
		{"ubpf/recrod/events", `no hook "recrod" (did you mean record?)`, ""},
		{"ubpf/whatever/x", `no hook "whatever": the hooks are`, ""},
		{"ubpf/begn", "", "did you mean ubpf/begin?"},
		{"ubpf/ned", "", "did you mean ubpf/end?"},
		{"ubpf/report", "", ""},
		{"ubpf/checksum", "", ""},
		{"ubpf/interval/1s", "", ""},
		{"ubpf/end", "", ""},
	} {
		spec := &ebpf.CollectionSpec{Programs: map[string]*ebpf.ProgramSpec{
			"p": {Name: "p", SectionName: c.section, Instructions: asm.Instructions{asm.Mov.Imm(asm.R0, 0), asm.Return()}},
		}}
		warns, err := hookNearMisses(spec)
		switch {
		case c.err != "" && (err == nil || !strings.Contains(err.Error(), c.err)):
			t.Errorf("%s: error %v, want %q", c.section, err, c.err)
		case c.err == "" && err != nil:
			t.Errorf("%s: %v", c.section, err)
		case c.warn == "" && len(warns) != 0:
			t.Errorf("%s: warnings %q, want none", c.section, warns)
		case c.warn != "" && (len(warns) != 1 || !strings.Contains(warns[0], c.warn)):
			t.Errorf("%s: warnings %q, want one saying %q", c.section, warns, c.warn)
		}
	}
}
