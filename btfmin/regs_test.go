package btfmin

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/cilium/ebpf/btf"

	"github.com/skelgen/skelgen/internal/testenv"
)

// regsSource reads registers the way bpf_tracing.h's macros do on every
// architecture (PT_REGS_SP, _FP and _RET are left out: some libbpf
// releases name members there that no kernel has).
const regsSource = `#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>

unsigned long sum;

SEC("kprobe/vfs_read")
int BPF_KPROBE(on_read, void *file, char *buf, unsigned long count, void *pos)
{
	sum += (unsigned long)file + (unsigned long)buf + count + (unsigned long)pos;
	sum += PT_REGS_PARM5(ctx) + PT_REGS_RC(ctx) + PT_REGS_IP(ctx);
	return 0;
}

char LICENSE[] SEC("license") = "GPL";
`

// TestRegisterSections: a header made for every architecture from an x86
// kernel BTF compiles the source for each of them, declares each
// architecture's registers once in its own section, takes x86's from the
// kernel BTF, and stands in for that kernel BTF (HeaderSpec) giving
// itself back.
func TestRegisterSections(t *testing.T) {
	clang := testenv.Clang(t)
	kernel := oldKernelBTF(t)
	dir := t.TempDir()
	src := filepath.Join(dir, "regs.bpf.c")
	if err := os.WriteFile(src, []byte(regsSource), 0o644); err != nil {
		t.Fatal(err)
	}
	// Made while compiling for arm64, whose registers the kernel lacks.
	cfg := Config{Source: src, KernelBTF: []string{kernel}, Clang: clang, CFlags: []string{"-D__TARGET_ARCH_arm64"}, Arches: Arches()}
	res, err := Generate(cfg)
	if err != nil {
		t.Fatal(err)
	}
	header := string(res.Header)
	if !strings.Contains(header, "#elif defined(__TARGET_ARCH_x86)"+kernelMark+"\n") {
		t.Errorf("the x86 section is not marked as the kernel BTF's:\n%s", header)
	}
	if n := len(reKernelSection.FindAllString(header, -1)); n != 1 {
		t.Errorf("%d sections marked as the kernel BTF's, want 1", n)
	}
	// x86's pt_regs is the kernel's: its members in the kernel's order.
	spec, err := btf.LoadSpec(kernel)
	if err != nil {
		t.Fatal(err)
	}
	var regs *btf.Struct
	if err := spec.TypeByName("pt_regs", &regs); err != nil {
		t.Fatal(err)
	}
	x86 := section(t, header, "x86")
	last := -1
	for _, m := range regs.Members {
		if m.Name == "" {
			continue // the unions of cs and ss
		}
		i := strings.Index(x86, " "+m.Name+";")
		if i < 0 || i < last {
			t.Errorf("x86 section: member %s of the kernel's pt_regs missing or out of order:\n%s", m.Name, x86)
		}
		last = i
	}
	for _, a := range Arches() {
		t.Run(a, func(t *testing.T) {
			s := section(t, header, a)
			for _, d := range regDecls[a] {
				if strings.Count(s, d.key+" {")+strings.Count(s, "} "+strings.TrimPrefix(d.key, "typedef ")+";") != 1 {
					t.Errorf("section %s does not define %s once:\n%s", a, d.key, s)
				}
			}
			diags, ok, err := compileSource(clang, src, []string{"-D__TARGET_ARCH_" + a}, t.TempDir(), "vmlinux.h", res.Header, filepath.Join(t.TempDir(), "o.o"))
			if err != nil {
				t.Fatal(err)
			}
			if !ok && strings.Contains(diags, "Must specify a BPF target arch") {
				t.Skipf("this libbpf's bpf_tracing.h does not know __TARGET_ARCH_%s", a)
			}
			if !ok {
				t.Fatalf("does not compile for %s:\n%s", a, diags)
			}
		})
	}

	// Without the kernel BTF, the header stands in for it.
	hspec, err := HeaderSpec(clang, res.Header, cfg.CFlags)
	if err != nil {
		t.Fatal(err)
	}
	if got := kernelArch([]*btf.Spec{hspec}); got != "x86" {
		t.Errorf("the header's BTF is of %q, want x86", got)
	}
	cfg.KernelSpecs = []*btf.Spec{hspec}
	again, err := Generate(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if string(again.Header) != header {
		t.Errorf("made from its own BTF, the header changes:\n%s", again.Header)
	}
}

// section returns the text of architecture a's register section.
func section(t *testing.T, header, a string) string {
	t.Helper()
	i := strings.Index(header, "defined(__TARGET_ARCH_"+a+")")
	if i < 0 {
		t.Fatalf("no section for %s:\n%s", a, header)
	}
	s := header[i:]
	end := len(s)
	for _, stop := range []string{"\n#elif", "\n#endif"} {
		if j := strings.Index(s, stop); j >= 0 && j < end {
			end = j
		}
	}
	return s[:end]
}

// TestRegisterSectionsOnlyWhenRead: a source that reads no registers gets
// no register sections, whatever the architectures.
func TestRegisterSectionsOnlyWhenRead(t *testing.T) {
	clang := testenv.Clang(t)
	kernel := oldKernelBTF(t)
	src := filepath.Join(t.TempDir(), "plain.bpf.c")
	text := "#include \"vmlinux.h\"\n#include <bpf/bpf_helpers.h>\n__u64 n;\nSEC(\"tracepoint/syscalls/sys_enter_read\")\nint on(void *ctx) { n++; return 0; }\nchar LICENSE[] SEC(\"license\") = \"GPL\";\n"
	if err := os.WriteFile(src, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	res, err := Generate(Config{Source: src, KernelBTF: []string{kernel}, Clang: clang, CFlags: []string{"-D__TARGET_ARCH_x86"}, Arches: []string{"x86", "arm64"}})
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(res.Header), "__TARGET_ARCH_") {
		t.Errorf("register sections for a source that reads none:\n%s", res.Header)
	}
}

// TestUnknownArch: an architecture without register declarations is an
// error naming the ones there are.
func TestUnknownArch(t *testing.T) {
	err := newChooser(nil).setArches([]string{"x86", "sparc"})
	if err == nil || !strings.Contains(err.Error(), `"sparc"`) || !strings.Contains(err.Error(), "arm64") {
		t.Errorf("got %v, want an error naming sparc and the known architectures", err)
	}
	if !slices.Contains(Arches(), "loongarch") {
		t.Errorf("Arches() = %v lacks loongarch", Arches())
	}
}

// TestPerfRegsEveryArch: every architecture a header serves names its
// bpf_user_pt_regs_t, as one of its own register declarations.
func TestPerfRegsEveryArch(t *testing.T) {
	for _, a := range Arches() {
		target, ok := perfRegs[a]
		if !ok {
			t.Errorf("%s: no bpf_user_pt_regs_t", a)
			continue
		}
		declared := false
		for _, d := range regDecls[a] {
			declared = declared || d.key == target || d.key == "typedef "+target
		}
		if !declared {
			t.Errorf("%s: bpf_user_pt_regs_t is %s, which its register section does not declare", a, target)
		}
	}
}
