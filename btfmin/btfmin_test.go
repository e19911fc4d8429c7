package btfmin

import (
	"bytes"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/skelgen/skelgen/internal/testenv"
)

// TestCorpusRelocationKinds checks the reader against the corpus: every
// one of the 13 relocation kinds occurs, each resolves to a named root.
func TestCorpusRelocationKinds(t *testing.T) {
	seen := map[Kind]int{}
	for _, name := range corpus {
		obj, err := ReadObject(corpusObject(name))
		if err != nil {
			t.Fatal(err)
		}
		if len(obj.Relocations) == 0 {
			t.Errorf("%s: no relocations", name)
		}
		for _, r := range obj.Relocations {
			seen[r.Kind]++
			if r.Root == nil || strings.Contains(r.Path(), "<anon>") {
				t.Errorf("%s: relocation %s at %s+%d has path %q", name, r.Kind, r.Section, r.InsnOff, r.Path())
			}
		}
	}
	for k := Kind(0); k < numKinds; k++ {
		if seen[k] == 0 {
			t.Errorf("corpus has no %s relocation", k)
		}
	}
}

// TestGolden writes each corpus object's header from the object and
// cilium/ebpf's test kernel BTF (a fixed file, so the result does not
// depend on the machine) and compares it with testdata/golden. Run with
// -update to regenerate.
func TestGolden(t *testing.T) {
	kernel := oldKernelBTF(t)
	for _, name := range corpus {
		for _, mode := range []Mode{Compact, Exact} {
			t.Run(name+"/"+mode.String(), func(t *testing.T) {
				cfg := Config{Objects: []string{corpusObject(name)}, KernelBTF: []string{kernel}, Mode: mode}
				res, err := Generate(cfg)
				if err != nil {
					t.Fatal(err)
				}
				again, err := Generate(cfg)
				if err != nil {
					t.Fatal(err)
				}
				if !bytes.Equal(res.Header, again.Header) {
					t.Fatal("two runs gave different headers")
				}
				golden := filepath.Join("testdata", "golden", name+"."+mode.String()+".h")
				if *update {
					if err := os.MkdirAll(filepath.Dir(golden), 0o755); err != nil {
						t.Fatal(err)
					}
					if err := os.WriteFile(golden, res.Header, 0o644); err != nil {
						t.Fatal(err)
					}
				}
				want, err := os.ReadFile(golden)
				if err != nil {
					t.Fatalf("%v (run go test -update)", err)
				}
				if !bytes.Equal(res.Header, want) {
					t.Errorf("header differs from %s (run go test -update and review the diff)", golden)
				}
			})
		}
	}
}

// TestCorpusVerify completes each tool's header from its source, then
// proves it: the source compiles against it, every CO-RE relocation
// resolves as the original's against the running kernel and an older one,
// and exact mode reproduces the original instructions.
func TestCorpusVerify(t *testing.T) {
	clang := testenv.Clang(t)
	kernels := []string{runningKernelBTF(t), oldKernelBTF(t)}
	for _, name := range testenv.Sample(corpus, 3) {
		for _, mode := range []Mode{Compact, Exact} {
			t.Run(name+"/"+mode.String(), func(t *testing.T) {
				cfg := Config{
					Objects: []string{corpusObject(name)}, Source: corpusSource(name), CFlags: corpusCFlags,
					KernelBTF: kernels, Clang: clang, Mode: mode,
				}
				res, err := Generate(cfg)
				if err != nil {
					t.Fatal(err)
				}
				rep, err := Verify(cfg, res.Header)
				if err != nil {
					t.Fatal(err)
				}
				t.Logf("%d lines\n%s", bytes.Count(res.Header, []byte("\n")), rep)
				if len(rep.Targets) != 2 || rep.Targets[0].Relocations == 0 {
					t.Fatalf("report covers %d targets: %s", len(rep.Targets), rep)
				}
				if !rep.OK() {
					t.Errorf("relocations differ:\n%s", rep)
				}
				if mode == Exact && !rep.IdenticalInstructions {
					t.Errorf("exact mode: instructions differ from the original")
				}
			})
		}
	}
}

// TestUnion writes one header for the whole corpus and checks that every
// tool verifies against it.
func TestUnion(t *testing.T) {
	clang := testenv.Clang(t)
	kernel := runningKernelBTF(t)
	var objs []string
	for _, name := range corpus {
		objs = append(objs, corpusObject(name))
	}
	res, err := Generate(Config{Objects: objs, KernelBTF: []string{kernel}})
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"struct task_struct {", "struct sock_common {", "struct qstr {", "enum pid_type {"} {
		if !bytes.Contains(res.Header, []byte(want)) {
			t.Errorf("union header lacks %q", want)
		}
	}
	for _, name := range testenv.Sample(corpus, 2) {
		for _, mode := range []Mode{Compact, Exact} {
			cfg := Config{Objects: []string{corpusObject(name)}, Source: corpusSource(name), CFlags: corpusCFlags, KernelBTF: []string{kernel}, Clang: clang, Mode: mode}
			// Complete the union with what each source alone needs,
			// then verify that source against it.
			full, err := Generate(Config{Objects: objs, Source: cfg.Source, CFlags: corpusCFlags, KernelBTF: cfg.KernelBTF, Clang: clang, Mode: mode})
			if err != nil {
				t.Fatal(err)
			}
			rep, err := Verify(cfg, full.Header)
			if err != nil {
				t.Fatal(err)
			}
			if !rep.OK() {
				t.Errorf("%s against the %s union header:\n%s", name, mode, rep)
			}
			if mode == Exact && !rep.IdenticalInstructions {
				t.Errorf("%s: exact union header changes the instructions", name)
			}
		}
	}
}

// TestKernelOnly asks for fields and declarations of the older kernel's
// BTF directly, as when writing a new program without any vmlinux.h.
func TestKernelOnly(t *testing.T) {
	old := oldKernelBTF(t)
	res, err := Generate(Config{
		KernelBTF: []string{old},
		Fields:    []string{"task_struct.pid", "task_struct.tgid", "sock.__sk_common.skc_family", "signal_struct.rlim[7].rlim_cur"},
		Decls:     []string{"enum pid_type", "u32"},
		Output:    "min.h",
	})
	if err != nil {
		t.Fatal(err)
	}
	h := string(res.Header)
	for _, want := range []string{
		"#ifndef __MIN_H__",
		"struct task_struct {\n\tpid_t pid;\n\tpid_t tgid;\n};",
		"struct sock {\n\tstruct sock_common __sk_common;\n};",
		"enum pid_type {\n\tPIDTYPE_PID = 0,",
		"typedef __u32 u32;",
		"struct rlimit {\n\t__kernel_ulong_t rlim_cur;\n};",
		"struct signal_struct {\n\tstruct rlimit rlim[16];\n};",
	} {
		if !strings.Contains(h, want) {
			t.Errorf("header lacks %q:\n%s", want, h)
		}
	}
	for _, bad := range []struct{ fields, decls []string }{
		{fields: []string{"task_struct.no_such_member"}},
		{fields: []string{"no_such_struct.x"}},
		{decls: []string{"struct no_such_struct"}},
		{decls: []string{"class task_struct"}},
	} {
		if _, err := Generate(Config{KernelBTF: []string{old}, Fields: bad.fields, Decls: bad.decls}); err == nil {
			t.Errorf("%v %v: no error", bad.fields, bad.decls)
		}
	}

	clang := testenv.Clang(t)
	dir := t.TempDir()
	src := filepath.Join(dir, "prog.bpf.c")
	code := "#include \"min.h\"\nint f(struct task_struct *t, struct sock *s) { return t->pid + t->tgid + s->__sk_common.skc_family + PIDTYPE_TGID; }\n"
	if err := os.WriteFile(src, []byte(code), 0o644); err != nil {
		t.Fatal(err)
	}
	if diags, ok, err := compileSource(clang, src, nil, t.TempDir(), "min.h", res.Header, filepath.Join(dir, "prog.o")); err != nil || !ok {
		t.Fatalf("%v\n%s", err, diags)
	}
}

// btfExtOffset returns the file offset of an object's .BTF.ext section.
func btfExtOffset(t *testing.T, data []byte) int {
	t.Helper()
	i := bytes.Index(data, []byte{0x9f, 0xeb, 1, 0, 32, 0, 0, 0})
	if i < 0 {
		t.Fatal("no .BTF.ext header found")
	}
	// .BTF starts with the same magic but a 24-byte header; .BTF.ext's
	// is 32 bytes long, which the pattern above includes.
	return i
}

// TestBadObjects feeds broken objects: each must give a clear error (or
// a warning) naming the place, never a panic.
func TestBadObjects(t *testing.T) {
	orig, err := os.ReadFile(corpusObject("execsnoop"))
	if err != nil {
		t.Fatal(err)
	}
	ext := btfExtOffset(t, orig)
	le := func(b []byte, off int, v uint32) {
		b[off], b[off+1], b[off+2], b[off+3] = byte(v), byte(v>>8), byte(v>>16), byte(v>>24)
	}
	u32 := func(off int) int {
		return int(orig[off]) | int(orig[off+1])<<8 | int(orig[off+2])<<16 | int(orig[off+3])<<24
	}
	coreStart := ext + u32(ext+4) + u32(ext+24) // header length + core_relo_off
	firstRecord := coreStart + 4 + 8            // record size, then section name and count
	tests := []struct {
		name  string
		patch func(b []byte)
		want  string
	}{
		{"core_relo length past end", func(b []byte) { le(b, ext+28, 1<<30) }, "section .BTF.ext: offset 0x18: core_relo subsection"},
		{"record count past end", func(b []byte) { le(b, coreStart+8, 1<<20) }, "records of 16 bytes"},
		{"unknown kind", func(b []byte) { le(b, firstRecord+12, 99) }, "unknown CO-RE relocation kind 99"},
		{"access string outside strings", func(b []byte) { le(b, firstRecord+8, 1<<30) }, "access string offset"},
		{"bad record size", func(b []byte) { le(b, coreStart, 4) }, "record size 4"},
		{"bad magic", func(b []byte) { b[ext] = 0 }, "bad magic"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b := slices.Clone(orig)
			tt.patch(b)
			_, err := ParseObject("bad.bpf.o", b)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("error %v, want one containing %q", err, tt.want)
			}
			if !strings.Contains(err.Error(), "offset 0x") {
				t.Errorf("error %q does not name an offset", err)
			}
		})
	}
}

// TestNoBTFExt: an object stripped of .BTF.ext still yields the types of
// its maps and globals, with a warning.
func TestNoBTFExt(t *testing.T) {
	res, err := Generate(Config{Objects: []string{corpusObject("noext")}})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Warnings) != 1 || !strings.Contains(res.Warnings[0], "no .BTF.ext") {
		t.Errorf("warnings %q, want one about .BTF.ext", res.Warnings)
	}
	h := string(res.Header)
	if !strings.Contains(h, "typedef unsigned int __u32;") || !strings.Contains(h, "typedef unsigned long long __u64;") {
		t.Errorf("header lacks the globals' types:\n%s", h)
	}
	if strings.Contains(h, "struct task_struct {") {
		t.Errorf("header defines task_struct without relocations:\n%s", h)
	}
}

// TestSourceErrors: a source that cannot compile even with the kernel's
// BTF gives an error naming what is missing, or quoting clang.
func TestSourceErrors(t *testing.T) {
	clang := testenv.Clang(t)
	kernel := runningKernelBTF(t)
	tests := []struct {
		name, code string
		want       []string
	}{
		{"unknown names", "#include \"vmlinux.h\"\nno_such_type_t x;\nint f(void) { return NO_SUCH_CONSTANT; }\n",
			[]string{"is declared neither by the source and its headers nor in the kernel BTF", "no_such_type_t", "NO_SUCH_CONSTANT"}},
		{"syntax error", "#include \"vmlinux.h\"\nint f(void) { return 1 +; }\n",
			[]string{"does not compile", "prog.bpf.c:2:", "error: expected expression"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			src := filepath.Join(t.TempDir(), "prog.bpf.c")
			if err := os.WriteFile(src, []byte(tt.code), 0o644); err != nil {
				t.Fatal(err)
			}
			_, err := Generate(Config{Source: src, KernelBTF: []string{kernel}, Clang: clang})
			if err == nil {
				t.Fatal("no error")
			}
			for _, w := range tt.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q lacks %q", err, w)
				}
			}
		})
	}
}

// FuzzParseCORERelocations: the .BTF.ext reader never panics and never
// returns records it did not bounds-check.
func FuzzParseCORERelocations(f *testing.F) {
	strs := []byte("\x00tp/x\x000:1\x000\x00")
	for _, name := range corpus {
		data, err := os.ReadFile(corpusObject(name))
		if err != nil {
			f.Fatal(err)
		}
		if i := bytes.Index(data, []byte{0x9f, 0xeb, 1, 0, 32, 0, 0, 0}); i >= 0 {
			f.Add(data[i:min(len(data), i+2048)])
		}
	}
	f.Fuzz(func(t *testing.T, ext []byte) {
		relos, err := ParseCORERelocations(ext, strs, binaryLE)
		if err != nil {
			return
		}
		for _, r := range relos {
			if r.Kind >= numKinds || r.Offset+16 > len(ext) {
				t.Fatalf("record %+v not checked", r)
			}
		}
	})
}

// TestVerifyFindsDifferences breaks a correct header in a way that still
// compiles (bpf_iter_num only forward-declared, so type_exists resolves to
// nothing) and expects Verify to report exactly that relocation.
func TestVerifyFindsDifferences(t *testing.T) {
	clang := testenv.Clang(t)
	cfg := Config{
		Objects: []string{corpusObject("corekinds")}, Source: corpusSource("corekinds"), CFlags: corpusCFlags,
		KernelBTF: []string{runningKernelBTF(t)}, Clang: clang,
	}
	res, err := Generate(cfg)
	if err != nil {
		t.Fatal(err)
	}
	const def = "struct bpf_iter_num {\n};\n"
	if !bytes.Contains(res.Header, []byte(def)) {
		t.Fatalf("header lacks %q", def)
	}
	broken := bytes.Replace(res.Header, []byte(def), nil, 1)
	rep, err := Verify(cfg, broken)
	if err != nil {
		t.Fatal(err)
	}
	if rep.OK() || len(rep.Targets[0].Diffs) != 1 || rep.Targets[0].Diffs[0].Key != "type_exists struct bpf_iter_num" {
		t.Errorf("want one difference on type_exists struct bpf_iter_num, got:\n%s", rep)
	}
}

// TestHookPrototypes: BPF_PROG arguments leave no trace in the object's
// BTF, so their types come from the kernel's prototype of the hook the
// section names.
func TestHookPrototypes(t *testing.T) {
	kernel := oldKernelBTF(t)
	tests := []struct{ tool, want string }{
		{"runqlat", "typedef _Bool bool;"}, // tp_btf/sched_switch: bool preempt
		{"corekinds", "struct pt_regs;"},   // raw_tp/sys_enter: struct pt_regs *regs
		{"netpeek", "\nstruct sock;\n"},    // tp_btf/inet_sock_set_state: const struct sock *sk
	}
	for _, tt := range tests {
		res, err := Generate(Config{Objects: []string{corpusObject(tt.tool)}, KernelBTF: []string{kernel}})
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Contains(res.Header, []byte(tt.want)) {
			t.Errorf("%s: header lacks %q:\n%s", tt.tool, tt.want, res.Header)
		}
	}
}

// FuzzParseObject mutates whole objects (btfmin's corpus, the
// generator's test objects, and execsnoop with hostile names in its BTF)
// and writes a header from each that parses: malformed BTF must give an
// error, never a crash or an endless walk, and a header written must
// hold nothing but identifiers where names go (checkHeaderShape).
func FuzzParseObject(f *testing.F) {
	paths := []string{}
	for _, name := range corpus {
		paths = append(paths, corpusObject(name))
	}
	more, _ := filepath.Glob(filepath.Join(testenv.ModuleRoot(f), "internal/skeltest/*/*_bpfel.o"))
	for _, p := range append(paths, more...) {
		data, err := os.ReadFile(p)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data)
	}
	for _, h := range hostileNames {
		f.Add(hostileObject(f, h.payload))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		obj, err := ParseObject("fuzz.bpf.o", data)
		if err != nil {
			return
		}
		for i := range obj.Relocations {
			_ = obj.Relocations[i].Path()
		}
		c := newChooser(nil)
		for i := range obj.Relocations {
			_ = c.addRelocation(&obj.Relocations[i])
		}
		c.addObjectTypes(obj.Spec)
		c.sources = []btfSource{{"fuzz.bpf.o", obj.Spec}}
		h, err := c.write(Exact, "__F_H__", nil)
		if err != nil {
			checkMessage(t, err.Error())
			return
		}
		if err := checkHeaderShape(h); err != nil {
			t.Fatalf("%v:\n%s", err, h)
		}
	})
}

// TestSourceFindsSkelgenH: completing from a source that includes
// skelgen.h finds it, as the skeleton's own compile does.
func TestSourceFindsSkelgenH(t *testing.T) {
	clang := testenv.Clang(t)
	kernel := runningKernelBTF(t)
	src := filepath.Join(t.TempDir(), "prog.bpf.c")
	code := "#include \"vmlinux.h\"\n#include <bpf/bpf_helpers.h>\n#include \"skelgen.h\"\n" +
		"SEC(\"ubpf/x\") int x(struct task_struct *t) { skelgen_printf(\"%d\\n\", t->pid); return 0; }\n"
	if err := os.WriteFile(src, []byte(code), 0o644); err != nil {
		t.Fatal(err)
	}
	res, err := Generate(Config{Source: src, KernelBTF: []string{kernel}, Clang: clang})
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Contains(res.Header, []byte("struct task_struct {")) {
		t.Errorf("header lacks task_struct:\n%s", res.Header)
	}
}
