package gen

import (
	"bytes"
	"context"
	"debug/elf"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cilium/ebpf"

	compiler "github.com/skelgen/skelgen/internal/cc"
	"github.com/skelgen/skelgen/internal/testenv"
	"github.com/skelgen/skelgen/templates"
)

// debugBytes is the size of the DWARF sections of an object.
func debugBytes(t *testing.T, obj []byte) (n uint64) {
	t.Helper()
	f, err := elf.NewFile(bytes.NewReader(obj))
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range f.Sections {
		if strings.HasPrefix(s.Name, ".debug_") || strings.HasPrefix(s.Name, ".rel.debug_") {
			n += s.Size
		}
	}
	return n
}

// specDump prints what loading uses from an object: each program's
// instructions with their BTF line info and CO-RE relocations, and the
// maps.
func specDump(t *testing.T, obj []byte) string {
	t.Helper()
	spec, err := ebpf.LoadCollectionSpecFromReader(bytes.NewReader(obj))
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	for _, name := range sortedNames(spec.Programs) {
		p := spec.Programs[name]
		fmt.Fprintf(&b, "program %s %s %v\n", name, p.SectionName, p.Type)
		for _, ins := range p.Instructions {
			src := ""
			if s := ins.Source(); s != nil {
				src = s.String()
			}
			fmt.Fprintf(&b, "  %v ; %s\n", ins, src)
		}
	}
	for _, name := range sortedNames(spec.Maps) {
		m := spec.Maps[name]
		fmt.Fprintf(&b, "map %s %v %d %d %d %v\n", name, m.Type, m.KeySize, m.ValueSize, m.MaxEntries, m.Value)
	}
	return b.String()
}

// strippedSources are the repository's BPF sources built in
// TestStripDWARF, with their include directories relative to the module.
var strippedSources = []struct{ src, inc string }{
	{"internal/skeltest/maps/maps.bpf.c", "internal/skeltest/include"},
	{"internal/skeltest/globals/globals.bpf.c", "internal/skeltest/include"},
	{"internal/skeltest/progs/progs.bpf.c", "internal/skeltest/include"},
	{"internal/skeltest/records/records.bpf.c", "internal/skeltest/include"},
	{"gen/testdata/types/types.bpf.c", "gen/testdata/types"},
	{"examples/latency/latency.bpf.c", "examples/latency"},
	{"testdata/corpus/execsnoop.bpf.c", ""},
	{"testdata/corpus/runqlat.bpf.c", ""},
	{"testdata/corpus/corekinds.bpf.c", ""},
	{"testdata/corpus/netpeek.bpf.c", ""},
}

// TestStripDWARF builds objects with DWARF (a sample of strippedSources
// unless SKELGEN_LONG is set), strips them, and requires that
// cilium/ebpf reads the same programs (instructions, line info, CO-RE
// relocations) and maps from the stripped object, with no DWARF left. It
// logs the sizes: with DWARF, stripped here, and by llvm-strip -g.
func TestStripDWARF(t *testing.T) {
	cc := testenv.Clang(t)
	root := testenv.ModuleRoot(t)
	tmp := t.TempDir()
	vmlinux := ""
	if bpftool, err := exec.LookPath("bpftool"); err == nil {
		if h, err := exec.Command(bpftool, "btf", "dump", "file", "/sys/kernel/btf/vmlinux", "format", "c").Output(); err == nil {
			vmlinux = filepath.Join(tmp, "vmlinux")
			os.MkdirAll(vmlinux, 0o755)
			if err := os.WriteFile(filepath.Join(vmlinux, "vmlinux.h"), h, 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
	skelgenInc := filepath.Join(tmp, "include")
	os.MkdirAll(skelgenInc, 0o755)
	if err := os.WriteFile(filepath.Join(skelgenInc, "skelgen.h"), templates.SkelgenH, 0o644); err != nil {
		t.Fatal(err)
	}
	strip := stripFor(cc)
	var total [3]int
	for _, s := range testenv.Sample(strippedSources, 4) {
		inc := s.inc
		if inc == "" {
			if vmlinux == "" {
				t.Logf("%s: skipped: no bpftool or kernel BTF for its vmlinux.h", s.src)
				continue
			}
			inc = vmlinux
		} else {
			inc = filepath.Join(root, inc)
		}
		full := filepath.Join(tmp, filepath.Base(s.src)+".o")
		args := append(hostIncludes(t), "-g", "-O2", "-mcpu=v3", "-target", "bpfel", "-D__TARGET_ARCH_x86", "-I", inc, "-idirafter", skelgenInc, "-c", filepath.Join(root, s.src), "-o", full)
		if out, err := exec.Command(cc, args...).CombinedOutput(); err != nil {
			t.Fatalf("%s: %v\n%s", s.src, err, out)
		}
		withDWARF, err := os.ReadFile(full)
		if err != nil {
			t.Fatal(err)
		}
		if debugBytes(t, withDWARF) == 0 {
			t.Fatalf("%s: clang -g wrote no DWARF", s.src)
		}
		stripped, err := StripDWARF(s.src, withDWARF)
		if err != nil {
			t.Fatalf("%s: %v", s.src, err)
		}
		if strip != "" {
			// llvm-objdump checks the ELF structure: symbols, relocations.
			objdump := strings.Replace(strip, "llvm-strip", "llvm-objdump", 1)
			sp := filepath.Join(tmp, "stripped.o")
			os.WriteFile(sp, stripped, 0o644)
			if b, err := exec.Command(objdump, "-d", "-r", "-t", sp).CombinedOutput(); err != nil || strings.Contains(string(b), "warning") {
				t.Errorf("%s: llvm-objdump on the stripped object: %v\n%s", s.src, err, b)
			}
		}
		if n := debugBytes(t, stripped); n != 0 {
			t.Errorf("%s: %d bytes of DWARF left", s.src, n)
		}
		if a, b := specDump(t, withDWARF), specDump(t, stripped); a != b {
			t.Errorf("%s: the stripped object reads differently:\n%s", s.src, shortDiff([]byte(a), []byte(b), 10))
		}
		again, err := StripDWARF(s.src, stripped)
		if err != nil || !bytes.Equal(again, stripped) {
			t.Errorf("%s: stripping twice changes the object (%v)", s.src, err)
		}
		llvm := 0
		if strip != "" {
			out := full + ".llvm"
			if b, err := exec.Command(strip, "-g", full, "-o", out).CombinedOutput(); err != nil {
				t.Fatalf("llvm-strip: %v\n%s", err, b)
			}
			b, _ := os.ReadFile(out)
			llvm = len(b)
		}
		total[0] += len(withDWARF)
		total[1] += len(stripped)
		total[2] += llvm
		t.Logf("%-42s with DWARF %7d  stripped %6d  llvm-strip -g %6d", s.src, len(withDWARF), len(stripped), llvm)
	}
	t.Logf("%-42s with DWARF %7d  stripped %6d  llvm-strip -g %6d", "total", total[0], total[1], total[2])
}

// hostIncludes puts skelgen.h and <asm/types.h> on the include path, as
// the generator's compiles do.
func hostIncludes(t *testing.T) []string {
	args, err := compiler.IncludeArgs(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	return args
}

// A prebuilt object with DWARF is embedded without it.
func TestGenerateStripsObjectInput(t *testing.T) {
	cc := testenv.Clang(t)
	root := testenv.ModuleRoot(t)
	dir := t.TempDir()
	in := filepath.Join(dir, "maps.bpf.o")
	args := append(hostIncludes(t), "-g", "-O2", "-mcpu=v3", "-target", "bpfel", "-I", filepath.Join(root, "internal/skeltest/include"), "-c", filepath.Join(root, "internal/skeltest/maps/maps.bpf.c"), "-o", in)
	if out, err := exec.Command(cc, args...).CombinedOutput(); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	orig, err := os.ReadFile(in)
	if err != nil {
		t.Fatal(err)
	}
	files, err := Generate(context.Background(), Config{Input: in, Package: "maps", ImportRuntime: true})
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range files {
		if strings.HasSuffix(f.Path, ".o") {
			if n := debugBytes(t, f.Data); n != 0 {
				t.Errorf("%s embeds %d bytes of DWARF", f.Path, n)
			}
			t.Logf("input %d bytes, embedded %d", len(orig), len(f.Data))
			want, err := StripDWARF("maps", orig)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(f.Data, want) || len(f.Data) >= len(orig) {
				t.Errorf("embedded object of %d bytes from an input of %d is not the input stripped", len(f.Data), len(orig))
			}
		}
	}
}

// Truncated and damaged objects are errors, never panics.
func TestStripDWARFDamaged(t *testing.T) {
	obj := readSkeltestObject(t, "maps")
	for _, n := range []int{0, 10, 63, 64, len(obj) / 2, len(obj) - 1} {
		// The section headers are at the end: every cut loses some.
		if _, err := StripDWARF("maps", obj[:n]); err == nil {
			t.Errorf("truncated to %d bytes: no error", n)
		}
	}
}

// The committed type-generator objects carry DWARF, in both byte orders:
// stripping them needs no compiler.
func TestStripDWARFCommitted(t *testing.T) {
	root := testenv.ModuleRoot(t)
	for _, name := range []string{"types_bpfel.o", "types_bpfeb.o"} {
		obj, err := os.ReadFile(filepath.Join(root, "gen/testdata/types", name))
		if err != nil {
			t.Fatal(err)
		}
		if debugBytes(t, obj) == 0 {
			t.Fatalf("%s has no DWARF to strip", name)
		}
		stripped, err := StripDWARF(name, obj)
		if err != nil {
			t.Fatal(err)
		}
		if n := debugBytes(t, stripped); n != 0 {
			t.Errorf("%s: %d bytes of DWARF left", name, n)
		}
		if a, b := specDump(t, obj), specDump(t, stripped); a != b {
			t.Errorf("%s: the stripped object reads differently:\n%s", name, shortDiff([]byte(a), []byte(b), 10))
		}
		if _, err := ReadObject(name, stripped); err != nil {
			t.Errorf("%s stripped: %v", name, err)
		}
		t.Logf("%s: %d bytes, %d without DWARF", name, len(obj), len(stripped))
	}
}
