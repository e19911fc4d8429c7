package gen

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/skelgen/skelgen/internal/testenv"
)

const headerTestSource = `//go:build ignore
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_core_read.h>
#include "skelgen.h"

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u64);
} seen SEC(".maps");

struct sample { __u64 ppid; };	/* used only inside a function */

SEC("tracepoint/sched/sched_process_exec")
int on_exec(void *ctx)
{
	struct task_struct *task = (struct task_struct *)bpf_get_current_task();
	__u32 zero = 0;
	struct sample s = { .ppid = BPF_CORE_READ(task, real_parent, tgid) };
	bpf_map_update_elem(&seen, &zero, &s.ppid, BPF_ANY);
	return 0;
}

SEC("ubpf/report")
int report(void *ctx)
{
	__u32 zero = 0;
	__u64 *v = bpf_map_lookup_elem(&seen, &zero);
	if (v)
		skelgen_printf("%llu\n", *v);
	return 0;
}
char LICENSE[] SEC("license") = "GPL";
`

// TestHeaderFromSource: with -header naming a file that does not exist,
// the generator makes it from the source and the kernel BTF alone (the
// source includes skelgen.h too); when the source later needs more than
// the header has, the header is made again instead of failing.
func TestHeaderFromSource(t *testing.T) {
	t.Parallel()
	testenv.Clang(t)
	testenv.KernelBTF(t)
	dir := t.TempDir()
	src := filepath.Join(dir, "exec.bpf.c")
	if err := os.WriteFile(src, []byte(headerTestSource), 0o644); err != nil {
		t.Fatal(err)
	}
	// -type names a type the object's BTF lacks: it is found by compiling
	// the source again, which needs the header not yet written.
	cfg := Config{Input: src, Package: "exec", ImportRuntime: true, Header: "vmlinux.h", AOT: true, Types: []string{"sample"}}
	hdr := filepath.Join(dir, "vmlinux.h")
	gen := func() []byte {
		t.Helper()
		files, err := Generate(context.Background(), cfg)
		if err != nil {
			t.Fatal(err)
		}
		for _, f := range files {
			if strings.HasSuffix(f.Path, "_bpfel.go") && !bytes.Contains(f.Data, []byte("type ExecSample struct")) {
				t.Errorf("%s lacks the -type struct", f.Path)
			}
		}
		if err := WriteFiles(files); err != nil {
			t.Fatal(err)
		}
		data, err := os.ReadFile(hdr)
		if err != nil {
			t.Fatal(err)
		}
		return data
	}
	first := gen()
	if !bytes.Contains(first, []byte("struct task_struct {")) || !bytes.Contains(first, []byte("real_parent")) {
		t.Fatalf("header lacks task_struct.real_parent:\n%s", first)
	}
	if len(first) > 64<<10 {
		t.Errorf("header of %d bytes is not minimal", len(first))
	}
	if again := gen(); !bytes.Equal(again, first) {
		t.Errorf("second run changed the header:\n%s", again)
	}

	// The source now reads a member the header lacks: it no longer
	// compiles against it, so the header is made again.
	more := strings.Replace(headerTestSource, "BPF_CORE_READ(task, real_parent, tgid) }", "BPF_CORE_READ(task, real_parent, tgid) + BPF_CORE_READ(task, prio) }", 1)
	if err := os.WriteFile(src, []byte(more), 0o644); err != nil {
		t.Fatal(err)
	}
	if bytes.Contains(first, []byte(" prio;")) {
		t.Fatal("test premise: the first header already has prio")
	}
	if third := gen(); !bytes.Contains(third, []byte(" prio;")) {
		t.Errorf("header not remade with prio:\n%s", third)
	}
}

// corehdrCopy copies internal/skeltest/corehdr's source and committed
// header into a new directory and returns the source's path there.
func corehdrCopy(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	for _, name := range []string{"corehdr.bpf.c", "vmlinux.h"} {
		data, err := os.ReadFile(filepath.Join(testenv.ModuleRoot(t), "internal/skeltest/corehdr", name))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, name), data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return filepath.Join(dir, "corehdr.bpf.c")
}

// editSource replaces old by new in the source at src, which must hold old.
func editSource(t *testing.T, src, old, new string) {
	t.Helper()
	data, err := os.ReadFile(src)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Contains(data, []byte(old)) {
		t.Fatalf("%s no longer holds %q", src, old)
	}
	if err := os.WriteFile(src, bytes.Replace(data, []byte(old), []byte(new), 1), 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestHeaderWithoutKernelBTF: where the kernel BTF file does not exist
// (the -btf default on a machine without kernel BTF), a committed current
// header is kept and the skeleton generated; a source that needs a
// kernel member the header lacks fails naming -btf, the member and where
// the source uses it; a file that is no BTF is named as such.
func TestHeaderWithoutKernelBTF(t *testing.T) {
	testenv.Clang(t)
	src := corehdrCopy(t)
	dir := filepath.Dir(src)
	committed, err := os.ReadFile(filepath.Join(dir, "vmlinux.h"))
	if err != nil {
		t.Fatal(err)
	}
	cfg := Config{Input: src, Package: "corehdr", ImportRuntime: true, Header: "vmlinux.h",
		HeaderBTF: []string{filepath.Join(dir, "no-btf", "vmlinux")}}
	files, err := Generate(context.Background(), cfg)
	if err != nil {
		t.Fatalf("generate with a current header and no kernel BTF: %v", err)
	}
	found := false
	for _, f := range files {
		if filepath.Base(f.Path) == "vmlinux.h" {
			found = true
			if !bytes.Equal(f.Data, committed) {
				t.Errorf("header changed without kernel BTF:\n%s", f.Data)
			}
		}
	}
	if !found {
		t.Error("no header among the generated files")
	}

	editSource(t, src, "BPF_CORE_READ(task, tgid)", "BPF_CORE_READ(task, pid)")
	_, err = Generate(context.Background(), cfg)
	if err == nil {
		t.Fatal("a source reading task_struct.pid, which the header lacks, generated without kernel BTF")
	}
	for _, want := range []string{"-btf FILE", "no-btf/vmlinux does not exist", `corehdr.bpf.c:29:33: "struct task_struct.pid" is not in vmlinux.h`} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error lacks %q:\n%v", want, err)
		}
	}

	empty := filepath.Join(dir, "empty.btf")
	if err := os.WriteFile(empty, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	cfg.HeaderBTF = []string{empty}
	if _, err := Generate(context.Background(), cfg); err == nil || !strings.Contains(err.Error(), empty+": not a BTF file") {
		t.Errorf("empty BTF file: %v", err)
	}
}

// TestClangDiagnosticsShown: clang's warnings reach Warn with their
// source line and caret, once for both targets; a syntax error's message
// holds clang's diagnostic and caret, and a misspelt member's names the
// place of its use.
func TestClangDiagnosticsShown(t *testing.T) {
	t.Parallel()
	testenv.Clang(t)
	testenv.KernelBTF(t)
	src := corehdrCopy(t)
	var warnings []string
	cfg := Config{Input: src, Package: "corehdr", ImportRuntime: true, Header: "vmlinux.h",
		CFlags: []string{"-O2", "-Wall"}, Warn: func(msg string) { warnings = append(warnings, msg) }}
	editSource(t, src, "struct exec_info info = {};", "struct exec_info info = {}; int unused_var;")
	if _, err := Generate(context.Background(), cfg); err != nil {
		t.Fatal(err)
	}
	if len(warnings) != 1 || !strings.Contains(warnings[0], "corehdr.bpf.c:27:34: warning: unused variable 'unused_var'") ||
		!strings.Contains(warnings[0], "int unused_var;\n      |                                         ^~~~~~~~~~") {
		t.Errorf("warnings = %q, want clang's unused-variable warning with its caret line, once", warnings)
	}

	editSource(t, src, "return 0;", "return 0")
	_, err := Generate(context.Background(), cfg)
	if err == nil {
		t.Fatal("a syntax error generated")
	}
	for _, want := range []string{"corehdr.bpf.c:34:10: error: expected ';' after return statement", "   34 |         return 0\n      |                 ^"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("syntax error's message lacks %q:\n%v", want, err)
		}
	}

	editSource(t, src, "return 0\n", "return 0;\n")
	editSource(t, src, "BPF_CORE_READ(task, tgid)", "BPF_CORE_READ(task, tgdi)")
	_, err = Generate(context.Background(), cfg)
	if err == nil || !strings.Contains(err.Error(), `corehdr.bpf.c:29:33: "struct task_struct" has no member "tgdi", in the source or in the kernel BTF`) {
		t.Errorf("misspelt member: %v", err)
	}
}

// TestHeaderWithoutRecordsIsQuiet: a source that declares no kernel
// struct gets a header without the preserve_access_index pragma, which
// clang would warn of as unused on every generate.
func TestHeaderWithoutRecordsIsQuiet(t *testing.T) {
	testenv.Clang(t)
	kernel := testenv.OldKernelBTF(t)
	dir := t.TempDir()
	src := filepath.Join(dir, "quiet.bpf.c")
	text := "//go:build ignore\n#include \"vmlinux.h\"\n#include <bpf/bpf_helpers.h>\n__u64 total;\nSEC(\"tracepoint/syscalls/sys_enter_getppid\")\nint prog(void *ctx)\n{\n\ttotal += 1;\n\treturn 0;\n}\nchar LICENSE[] SEC(\"license\") = \"GPL\";\n"
	if err := os.WriteFile(src, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	var warns []string
	cfg := Config{Input: src, Package: "quiet", ImportRuntime: true, Header: "vmlinux.h", HeaderBTF: []string{kernel}, Warn: func(w string) { warns = append(warns, w) }}
	if _, err := Generate(context.Background(), cfg); err != nil {
		t.Fatal(err)
	}
	if len(warns) > 0 {
		t.Errorf("warnings: %q", warns)
	}
}

// TestCompileErrorSaidOnce: a source that does not compile fails with
// clang's error, and no warning repeats it (the constants' compile fails
// alike).
func TestCompileErrorSaidOnce(t *testing.T) {
	testenv.Clang(t)
	dir := t.TempDir()
	src := filepath.Join(dir, "broken.bpf.c")
	text := "//go:build ignore\n#include <linux/bpf.h>\n#include <bpf/bpf_helpers.h>\n#define LIMIT 4\n__u64 total;\nSEC(\"tracepoint/syscalls/sys_enter_getppid\")\nint prog(void *ctx)\n{\n\ttotal += undeclared_name;\n\treturn 0;\n}\nchar LICENSE[] SEC(\"license\") = \"GPL\";\n"
	if err := os.WriteFile(src, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	var warns []string
	_, err := Generate(context.Background(), Config{Input: src, Package: "broken", ImportRuntime: true, Warn: func(w string) { warns = append(warns, w) }})
	if err == nil || !strings.Contains(err.Error(), "undeclared_name") {
		t.Fatalf("got %v, want clang's error naming undeclared_name", err)
	}
	if len(warns) > 0 {
		t.Errorf("warnings beside the error: %q", warns)
	}
}
