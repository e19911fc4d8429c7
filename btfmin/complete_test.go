package btfmin

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cilium/ebpf/btf"
	"github.com/skelgen/skelgen/internal/testenv"
)

// TestFixFromDiagnostics feeds clang-19 diagnostics (as clang prints
// them) to the completion step with the older kernel's BTF, and checks
// what the header gains. No clang needed.
func TestFixFromDiagnostics(t *testing.T) {
	kernel, err := btf.LoadSpec(oldKernelBTF(t))
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name    string
		diag    string
		want    []string
		missing []string
	}{
		{"typedef", "x.bpf.c:3:1: error: unknown type name 'u32'", []string{"typedef __u32 u32;"}, nil},
		{"enumerator", "x.bpf.c:9:12: error: use of undeclared identifier 'BPF_ANY'", []string{"BPF_ANY = 0,"}, nil},
		{"typedef as identifier", "x.bpf.c:9:12: error: use of undeclared identifier 'u64'", []string{"typedef __u64 u64;"}, nil},
		{"member", "x.bpf.c:5:20: error: no member named 'tgid' in 'struct task_struct'",
			[]string{"struct task_struct {\n\tpid_t tgid;\n};"}, nil},
		{"member in anonymous union", "x.bpf.c:5:20: error: no member named 'skc_daddr' in 'const struct sock_common'",
			[]string{"struct sock_common {\n\tunion {\n\t\tstruct {\n\t\t\t__be32 skc_daddr;\n\t\t};\n\t};\n};"}, nil},
		{"incomplete", "x.bpf.c:5:20: error: variable has incomplete type 'struct qstr'", []string{"struct qstr {", "const unsigned char *name;"}, nil},
		{"sizeof incomplete", "x.bpf.c:5:20: error: invalid application of 'sizeof' to an incomplete type 'struct list_head'",
			[]string{"struct list_head {\n\tstruct list_head *next;\n\tstruct list_head *prev;\n};"}, nil},
		{"incomplete definition", "x.bpf.c:5:20: error: incomplete definition of type 'struct rq'", []string{"struct rq {\n};"}, nil},
		{"not visible", "x.bpf.c:5:20: warning: declaration of 'struct linux_binprm' will not be visible outside of this function [-Wvisibility]",
			[]string{"struct linux_binprm;"}, nil},
		{"unknown", "x.bpf.c:3:1: error: unknown type name 'no_such_t'\nx.bpf.c:4:1: error: use of undeclared identifier 'NO_SUCH'",
			nil, []string{"x.bpf.c:3:1 no_such_t", "x.bpf.c:4:1 NO_SUCH"}},
		// The source line and caret clang prints after a diagnostic are
		// not diagnostics, whatever they say.
		{"caret lines", "x.bpf.c:3:1: error: unknown type name 'no_such_t'\n    3 | no_such_t x; // error: unknown type name 'other_t'\n      | ^",
			nil, []string{"x.bpf.c:3:1 no_such_t"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := newChooser([]*btf.Spec{kernel})
			missing := c.fix(tt.diag)
			h := mustWrite(t, c, Compact, "__X_H__")
			for _, w := range tt.want {
				if !strings.Contains(h, w) {
					t.Errorf("header lacks %q:\n%s", w, h)
				}
			}
			var got []string
			for _, m := range missing {
				got = append(got, m.Pos+" "+m.Name)
			}
			if strings.Join(got, ",") != strings.Join(tt.missing, ",") {
				t.Errorf("missing %q, want %q", got, tt.missing)
			}
		})
	}
}

// TestRedefinitionExcludes: a type the source defines itself leaves the
// header once clang reports the redefinition.
func TestRedefinitionExcludes(t *testing.T) {
	kernel, err := btf.LoadSpec(oldKernelBTF(t))
	if err != nil {
		t.Fatal(err)
	}
	c := newChooser([]*btf.Spec{kernel})
	c.fix("x.bpf.c:5:20: error: variable has incomplete type 'struct qstr'")
	if !strings.Contains(mustWrite(t, c, Compact, "__X_H__"), "struct qstr {") {
		t.Fatal("qstr not added")
	}
	c.fix("x.bpf.c:5:20: error: unknown type name 'u32'\nx.bpf.c:6:1: error: use of undeclared identifier 'BPF_ANY'")
	c.fix("x.bpf.c:7:8: error: redefinition of 'qstr'\nx.bpf.c:8:14: error: redefinition of 'u32'\nx.bpf.c:9:3: error: redefinition of enumerator 'BPF_EXIST'")
	h := mustWrite(t, c, Compact, "__X_H__")
	for _, gone := range []string{"struct qstr", "typedef __u32 u32;", "BPF_ANY"} {
		if strings.Contains(h, gone) {
			t.Errorf("%q still in header:\n%s", gone, h)
		}
	}
}

// TestMergeMember: when the object's copy of a kernel struct lacks a
// member clang asks for, the kernel's definition replaces it and the
// members already chosen stay.
func TestMergeMember(t *testing.T) {
	kernel, err := btf.LoadSpec(oldKernelBTF(t))
	if err != nil {
		t.Fatal(err)
	}
	var kt *btf.Struct
	if err := kernel.TypeByName("task_struct", &kt); err != nil {
		t.Fatal(err)
	}
	pid := kt.Members[findMember(kt, "pid")[0].Member]
	local := &btf.Struct{Name: "task_struct", Size: 8, Members: []btf.Member{{Name: "pid", Type: pid.Type}}}
	c := newChooser([]*btf.Spec{kernel})
	if err := c.keepPath(local, []pathElem{{name: "pid"}}); err != nil {
		t.Fatal(err)
	}
	if missing := c.fix("x.bpf.c:5:20: error: no member named 'tgid' in 'struct task_struct'"); len(missing) > 0 {
		t.Fatalf("missing %q", missing)
	}
	h := mustWrite(t, c, Compact, "__X_H__")
	if !strings.Contains(h, "struct task_struct {\n\tpid_t pid;\n\tpid_t tgid;\n};") {
		t.Errorf("header:\n%s", h)
	}
}

// TestLayoutUseKeepsWhole: sizeof, offsetof and local copies of a kernel
// struct the programs also read through CO-RE must see the whole struct,
// not the compact one.
func TestLayoutUseKeepsWhole(t *testing.T) {
	clang := testenv.Clang(t)
	kernel := runningKernelBTF(t)
	src := filepath.Join(t.TempDir(), "size.bpf.c")
	code := `#include "vmlinux.h"
unsigned long size, off;
int f(struct task_struct *t, struct nsproxy *p) {
	struct pid_namespace ns;
	size = sizeof(struct task_struct);
	off = __builtin_offsetof(struct mm_struct, mmap_base);
	__builtin_memcpy(&ns, p->pid_ns_for_children, sizeof(ns));
	return t->pid + ns.level;
}
`
	if err := os.WriteFile(src, []byte(code), 0o644); err != nil {
		t.Fatal(err)
	}
	res, err := Generate(Config{Source: src, KernelBTF: []string{kernel}, Clang: clang, Fields: []string{"task_struct.pid", "mm_struct.mmap_base", "pid_namespace.level"}})
	if err != nil {
		t.Fatal(err)
	}
	spec, err := btf.LoadSpec(kernel)
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"task_struct", "mm_struct", "pid_namespace"} {
		var kt *btf.Struct
		if err := spec.TypeByName(name, &kt); err != nil {
			t.Fatal(err)
		}
		h := string(res.Header)
		start := strings.Index(h, "\nstruct "+name+" {\n")
		if start < 0 {
			t.Fatalf("no struct %s in header", name)
		}
		body := h[start : start+strings.Index(h[start:], "\n};")]
		if n := strings.Count(body, ";\n"); n < len(kt.Members)/2 {
			t.Errorf("struct %s has %d members in the header, kernel has %d", name, n, len(kt.Members))
		}
	}
}
