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
