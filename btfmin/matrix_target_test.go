package btfmin

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cilium/ebpf/btf"

	"github.com/skelgen/skelgen/internal/testenv"
)

// targetSections are sections naming attach targets: those BTF tells
// (a function, an LSM hook, an iterator, a tracepoint), and those it
// does not (a syscall's tracepoint, a kprobe, a module's function).
var targetSections = []string{
	"fexit/vfs_read", "fentry.s/vfs_read", "lsm/file_open", "iter/task",
	"tp_btf/sched_switch", "raw_tp/sched_switch", "tracepoint/sched/sched_switch",
	"tracepoint/syscalls/sys_enter_getppid", "kprobe/vfs_read", "fexit/bpf_testmod:bpf_testmod_test_read",
	"fexit/skelgen_no_such_function",
}

// noSuchFunction is what every kernel lacks of the last section.
const noSuchFunction = "the kernel has no function skelgen_no_such_function"

// compileTargets builds an object with a program per targetSections,
// program pI for section I.
func compileTargets(t *testing.T) string {
	t.Helper()
	var src strings.Builder
	for i, sec := range targetSections {
		src.WriteString(`__attribute__((section("` + sec + `"), used)) int p` + string(rune('a'+i)) + "(void *ctx) { return 0; }\n")
	}
	src.WriteString(`char LICENSE[] __attribute__((section("license"), used)) = "GPL";` + "\n")
	path := filepath.Join(t.TempDir(), "targets.bpf.c")
	if err := os.WriteFile(path, []byte(src.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	return compileBPF(t, path)
}

// TestCheckKernelsTargets: a kernel whose BTF lacks a program's attach
// target fails the program, saying which target and that the target check
// failed; one that has them all passes every program; the targets BTF
// cannot tell are not checked.
func TestCheckKernelsTargets(t *testing.T) {
	obj := compileTargets(t)
	i32 := &btf.Int{Name: "int", Size: 4, Encoding: btf.Signed}
	fn := func(name string) *btf.Func {
		return &btf.Func{Name: name, Type: &btf.FuncProto{Return: i32}, Linkage: btf.StaticFunc}
	}
	has := specOf(t, fn("vfs_read"), fn("bpf_lsm_file_open"), fn("bpf_iter_task"),
		&btf.Typedef{Name: "btf_trace_sched_switch", Type: &btf.Pointer{Target: &btf.FuncProto{Return: &btf.Void{}}}},
		// A function named as the tracepoint's typedef is not it.
		fn("btf_trace_sched_other"))
	lacks := specOf(t, i32, &btf.Typedef{Name: "vfs_read", Type: i32})
	checks, err := CheckKernels(obj, []Kernel{{Name: "has", Spec: has}, {Name: "lacks", Spec: lacks}})
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{
		"fexit/vfs_read":                "the kernel has no function vfs_read",
		"fentry.s/vfs_read":             "the kernel has no function vfs_read",
		"lsm/file_open":                 "the kernel has no LSM hook file_open (function bpf_lsm_file_open)",
		"iter/task":                     "the kernel has no iterator task (function bpf_iter_task)",
		"tp_btf/sched_switch":           "the kernel has no tracepoint sched_switch (typedef btf_trace_sched_switch)",
		"raw_tp/sched_switch":           "the kernel has no tracepoint sched_switch (typedef btf_trace_sched_switch)",
		"tracepoint/sched/sched_switch": "the kernel has no tracepoint sched_switch (typedef btf_trace_sched_switch)",
	}
	for _, kc := range checks {
		if len(kc.Programs) != len(targetSections) {
			t.Fatalf("%s: %d programs checked, want %d", kc.Kernel, len(kc.Programs), len(targetSections))
		}
		for _, p := range kc.Programs {
			w := ""
			if kc.Kernel == "lacks" {
				w = want[p.Section]
			}
			if p.Section == "fexit/skelgen_no_such_function" {
				w = noSuchFunction
			}
			if p.Target != w {
				t.Errorf("%s %s: target %q, want %q", kc.Kernel, p.Section, p.Target, w)
			}
			if st := p.Status(); (st == Failed) != (w != "") {
				t.Errorf("%s %s: %s", kc.Kernel, p.Section, st)
			}
		}
	}
	var b strings.Builder
	if n := WriteMatrix(&b, checks); n != len(want)+1 {
		t.Errorf("WriteMatrix counted %d failing programs, want %d", n, len(want)+1)
	}
	out := b.String()
	for _, s := range []string{
		"FAILS (target)",
		"targets.bpf.o pa on lacks: attach target of section fexit/vfs_read: the kernel has no function vfs_read",
	} {
		if !strings.Contains(out, s) {
			t.Errorf("matrix lacks %q:\n%s", s, out)
		}
	}
	t.Logf("\n%s", out)
}

// TestCheckKernelsTargetsRealKernel: against a real kernel's BTF
// (cilium/ebpf's test vmlinux), the targets it has pass (no false
// failure) and a function it lacks fails.
func TestCheckKernelsTargetsRealKernel(t *testing.T) {
	obj := compileTargets(t)
	kernels, err := ReadKernelDir(filepath.Dir(testenv.OldKernelBTF(t)))
	if err != nil {
		t.Fatal(err)
	}
	checks, err := CheckKernels(obj, kernels)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range checks[0].Programs {
		w := ""
		if p.Section == "fexit/skelgen_no_such_function" {
			w = noSuchFunction
		}
		if p.Target != w {
			t.Errorf("%s: target %q, want %q", p.Section, p.Target, w)
		}
	}
}
