package btfmin

import (
	"bytes"
	"debug/elf"
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/cilium/ebpf/btf"
	"github.com/skelgen/skelgen/internal/testenv"
	"github.com/skelgen/skelgen/internal/version"
)

// hostileNames are names a crafted BTF may hold: each must be refused
// wherever it would reach the header.
var hostileNames = []struct{ name, payload string }{
	{"include", "\n#include \"/etc/hostname\""},
	{"error directive", "#error x"},
	{"comment end", "*/"},
	{"control char", "pid\x07"},
	{"ANSI escape", "\x1b[2J"},
	{"right-to-left override", "a\u202eb"},
	{"keyword", "int"},
	{"_Pragma", "_Pragma"},
	{"predefined macro", "__LINE__"},
	{"bpf target macro", "__bpf__"},
	{"defined", "defined"},
	{"leading digit", "1abc"},
	{"empty", ""},
}

// oddNames are unusual names that are C identifiers all the same.
var oddNames = []string{"_", "__x", "a1_b2"}

// namePlacements put a name into a kernel-like BTF at one place where
// the header writes it: each builds struct T holding the name somewhere
// and says what to ask btfmin for (a -field or a -decl). anonOK is set
// where an empty name is legal C (anonymous types, unnamed parameters),
// baseOK where the name is an integer type's (keywords are its words).
var namePlacements = []struct {
	name           string
	anonOK, baseOK bool
	// context is what the error says before the name.
	context string
	build   func(p string) (btf.Type, Config)
}{
	{"struct name", true, false, `struct `, func(p string) (btf.Type, Config) {
		inner := &btf.Struct{Name: p, Size: 4, Members: []btf.Member{{Name: "x", Type: i32T()}}}
		return structT(inner), Config{Fields: []string{"T.f"}}
	}},
	{"union name", true, false, `union `, func(p string) (btf.Type, Config) {
		inner := &btf.Union{Name: p, Size: 4, Members: []btf.Member{{Name: "x", Type: i32T()}}}
		return structT(inner), Config{Fields: []string{"T.f"}}
	}},
	{"typedef name", false, false, `typedef `, func(p string) (btf.Type, Config) {
		return structT(&btf.Typedef{Name: p, Type: i32T()}), Config{Fields: []string{"T.f"}}
	}},
	{"enum name", true, false, `enum `, func(p string) (btf.Type, Config) {
		e := &btf.Enum{Name: p, Size: 4, Values: []btf.EnumValue{{Name: "E_A", Value: 1}}}
		return structT(e), Config{Fields: []string{"T.f"}}
	}},
	{"enumerator", false, false, `enum "e" enumerator `, func(p string) (btf.Type, Config) {
		e := &btf.Enum{Name: "e", Size: 4, Values: []btf.EnumValue{{Name: p, Value: 1}}}
		return structT(e), Config{Fields: []string{"T.f"}}
	}},
	{"member name", false, false, `struct "T" member `, func(p string) (btf.Type, Config) {
		s := &btf.Struct{Name: "T", Size: 8, Members: []btf.Member{{Name: "f", Type: i32T()}, {Name: p, Type: i32T(), Offset: 32}}}
		return s, Config{Decls: []string{"struct T"}}
	}},
	{"parameter", true, false, `struct "T" member "f" parameter `, func(p string) (btf.Type, Config) {
		fn := &btf.FuncProto{Return: i32T(), Params: []btf.FuncParam{{Name: "a", Type: i32T()}, {Name: p, Type: i32T()}}}
		return structT(&btf.Pointer{Target: fn}), Config{Fields: []string{"T.f"}}
	}},
	{"declared struct", true, false, `struct `, func(p string) (btf.Type, Config) {
		inner := &btf.Struct{Name: p, Size: 4, Members: []btf.Member{{Name: "x", Type: i32T()}}}
		return structT(&btf.Pointer{Target: inner}), Config{Fields: []string{"T.f"}}
	}},
	{"integer type name", false, true, `struct "T" member "f" int type `, func(p string) (btf.Type, Config) {
		return structT(&btf.Int{Name: p, Size: 4, Encoding: btf.Signed}), Config{Fields: []string{"T.f"}}
	}},
}

func i32T() btf.Type { return &btf.Int{Name: "int", Size: 4, Encoding: btf.Signed} }

// structT is struct T { int a; TYPE f; } with f 8 bytes in (big enough
// for every placement's member type).
func structT(f btf.Type) *btf.Struct {
	return &btf.Struct{Name: "T", Size: 16, Members: []btf.Member{{Name: "a", Type: i32T()}, {Name: "f", Type: f, Offset: 64}}}
}

// writeBTF marshals types into a raw BTF file, as a kernel's
// /sys/kernel/btf/vmlinux is.
func writeBTF(t testing.TB, types ...btf.Type) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "vmlinux.btf")
	if err := os.WriteFile(path, rawBTF(t, types...), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// checkMessage fails if an error message holds a raw control character
// or bidirectional override: names from BTF must be printed quoted.
func checkMessage(t *testing.T, msg string) {
	t.Helper()
	for _, r := range msg {
		if r < ' ' && r != '\n' || r == 0x7f || r >= 0x80 && r < 0xa0 || r >= 0x202a && r <= 0x202e || r >= 0x2066 && r <= 0x2069 {
			t.Errorf("message holds raw %U: %q", r, msg)
		}
	}
}

// TestHostileKernelNames builds a kernel BTF holding each hostile name at
// each place the header would write it and asks for it with -field or
// -decl: btfmin must refuse, naming the BTF file, the type and the name
// quoted, and return no header. An empty name is fine where C allows
// one (the type is written anonymous), a keyword where it is an integer
// type's name.
func TestHostileKernelNames(t *testing.T) {
	for _, pl := range namePlacements {
		for _, h := range hostileNames {
			t.Run(pl.name+"/"+h.name, func(t *testing.T) {
				root, cfg := pl.build(h.payload)
				cfg.KernelBTF = []string{writeBTF(t, root)}
				res, err := Generate(cfg)
				legal := h.payload == "" && pl.anonOK || h.payload == "int" && pl.baseOK
				if legal {
					if err != nil {
						t.Fatalf("%q is legal C here, got %v", h.payload, err)
					}
					if err := checkHeaderShape(string(res.Header)); err != nil {
						t.Fatalf("%v:\n%s", err, res.Header)
					}
					return
				}
				if err == nil {
					t.Fatalf("no error; header:\n%s", res.Header)
				}
				if res != nil {
					t.Errorf("a header came with the error")
				}
				msg := err.Error()
				for _, want := range []string{"kernel BTF " + cfg.KernelBTF[0] + ": ", pl.context + strconv.Quote(h.payload) + ": "} {
					if !strings.Contains(msg, want) {
						t.Errorf("error %q lacks %q", msg, want)
					}
				}
				checkMessage(t, msg)
			})
		}
	}
}

// TestPredefinedMacrosRefused: every macro clang predefines for the BPF
// target, whichever CPU version, byte order, standard or optimisation a
// build picks, is refused as a name: the preprocessor would replace it in
// the header (or reject it, as _Pragma and __has_include).
func TestPredefinedMacrosRefused(t *testing.T) {
	clang := testenv.Clang(t)
	for _, flags := range [][]string{
		{"-target", "bpf"},
		{"-target", "bpfeb", "-mcpu=v1", "-O0"},
		{"-target", "bpfel", "-mcpu=v4", "-O2", "-std=c23"},
		{"-target", "bpf", "-mcpu=v3", "-Os", "-std=c11", "-fPIC", "-ffast-math", "-funsigned-char"},
	} {
		out, err := exec.Command(clang, append(flags, "-dM", "-E", "-x", "c", os.DevNull)...).Output()
		if err != nil {
			t.Fatalf("%s %v: %v", clang, flags, err)
		}
		for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
			f := strings.Fields(line)
			if len(f) < 2 || f[0] != "#define" {
				t.Fatalf("%s %v: line %q", clang, flags, line)
			}
			name, _, _ := strings.Cut(f[1], "(")
			if err := checkIdent(name); !errors.Is(err, errMacro) {
				t.Errorf("%s (%v): %v, want %v", name, flags, err, errMacro)
			}
		}
	}
}

// TestOddNames: identifiers that look unusual are still written, and the
// header compiles. (An integer type's name is made of C's basic type
// words, not of any identifier.)
func TestOddNames(t *testing.T) {
	clang := testenv.Clang(t)
	for _, pl := range namePlacements {
		if pl.baseOK {
			continue
		}
		for _, name := range oddNames {
			t.Run(pl.name+"/"+name, func(t *testing.T) {
				root, cfg := pl.build(name)
				cfg.KernelBTF = []string{writeBTF(t, root)}
				cfg.Output = "odd.h"
				res, err := Generate(cfg)
				if err != nil {
					t.Fatal(err)
				}
				h := string(res.Header)
				if !regexp.MustCompile(`\b` + name + `\b`).MatchString(h) {
					t.Fatalf("header lacks %s:\n%s", name, h)
				}
				if err := checkHeaderShape(h); err != nil {
					t.Fatalf("%v:\n%s", err, h)
				}
				dir := t.TempDir()
				src := filepath.Join(dir, "odd.c")
				if err := os.WriteFile(src, []byte("#include \"odd.h\"\nint g(struct T *t) { return sizeof(t->f); }\n"), 0o644); err != nil {
					t.Fatal(err)
				}
				if diags, ok, err := compileSource(clang, src, nil, t.TempDir(), "odd.h", res.Header, filepath.Join(dir, "odd.o")); err != nil || !ok {
					t.Fatalf("%v\n%s\n%s", err, diags, h)
				}
			})
		}
	}
}

// withBTFName returns a copy of an object whose .BTF string old is
// replaced by name (cut at a NUL written after it), in place so that no
// offset moves.
func withBTFName(t testing.TB, data []byte, old, name string) []byte {
	t.Helper()
	if len(name) > len(old) {
		t.Fatalf("%q is longer than %q", name, old)
	}
	f, err := elf.NewFile(bytes.NewReader(data))
	if err != nil {
		t.Fatal(err)
	}
	sec := f.Section(".BTF")
	if sec == nil {
		t.Fatal("no .BTF")
	}
	le := binary.LittleEndian
	hdr := data[sec.Offset:]
	start := int(sec.Offset) + int(le.Uint32(hdr[4:])) + int(le.Uint32(hdr[16:]))
	strs := data[start : start+int(le.Uint32(hdr[20:]))]
	i := bytes.Index(strs, []byte("\x00"+old+"\x00"))
	if i < 0 {
		t.Fatalf("no string %q in .BTF", old)
	}
	out := bytes.Clone(data)
	copy(out[start+i+1:], name+"\x00")
	return out
}

// hostileObject is execsnoop.bpf.o with the name of a struct its header
// defines replaced by name.
func hostileObject(t testing.TB, name string) []byte {
	t.Helper()
	data, err := os.ReadFile(corpusObject("execsnoop"))
	if err != nil {
		t.Fatal(err)
	}
	return withBTFName(t, data, "trace_event_raw_sched_process_exec", name)
}

// TestHostileObjectNames: the same names in an object's own BTF (a struct
// its program reads, and a member of another) are refused the same way
// in the object-driven mode, naming the object.
func TestHostileObjectNames(t *testing.T) {
	data, err := os.ReadFile(corpusObject("execsnoop"))
	if err != nil {
		t.Fatal(err)
	}
	for _, h := range hostileNames {
		for _, place := range []struct{ name, old, context string }{
			{"struct name", "trace_event_raw_sched_process_exec", "struct "},
			{"member name", "pid_ns_for_children", `struct "nsproxy" member `},
		} {
			if len(h.payload) > len(place.old) {
				continue
			}
			t.Run(place.name+"/"+h.name, func(t *testing.T) {
				obj := filepath.Join(t.TempDir(), "hostile.bpf.o")
				if err := os.WriteFile(obj, withBTFName(t, data, place.old, h.payload), 0o644); err != nil {
					t.Fatal(err)
				}
				res, err := Generate(Config{Objects: []string{obj}})
				if h.payload == "" && place.name == "struct name" {
					// An anonymous struct: written inline where it is used.
					if err != nil {
						t.Fatal(err)
					}
					if err := checkHeaderShape(string(res.Header)); err != nil {
						t.Fatalf("%v:\n%s", err, res.Header)
					}
					return
				}
				if err == nil {
					t.Fatalf("no error; header:\n%s", res.Header)
				}
				msg := err.Error()
				if want := obj + ": " + place.context + strconv.Quote(h.payload); !strings.Contains(msg, want) {
					t.Errorf("error %q lacks %q", msg, want)
				}
				checkMessage(t, msg)
			})
		}
	}
}

// TestHostileHookPrototype: the kernel's prototype of an object's hook
// (runqlat's tp_btf/sched_switch is typed by btf_trace_sched_switch) is
// checked like any other kernel type.
func TestHostileHookPrototype(t *testing.T) {
	obj, err := ReadObject(corpusObject("runqlat"))
	if err != nil {
		t.Fatal(err)
	}
	var hook string
	for _, s := range obj.Sections {
		if prefix, name, ok := strings.Cut(s, "/"); ok && prefix == "tp_btf" {
			hook = name
		}
	}
	if hook == "" {
		t.Fatalf("runqlat has no tp_btf hook among %q", obj.Sections)
	}
	evil := &btf.Struct{Name: "x\n#include \"/etc/hostname\"", Size: 4, Members: []btf.Member{{Name: "x", Type: i32T()}}}
	proto := &btf.FuncProto{Return: i32T(), Params: []btf.FuncParam{
		{Name: "__data", Type: &btf.Pointer{Target: &btf.Void{}}},
		{Name: "p", Type: &btf.Pointer{Target: evil}},
	}}
	kernel := writeBTF(t, &btf.Typedef{Name: "btf_trace_" + hook, Type: &btf.Pointer{Target: proto}})
	_, err = Generate(Config{Objects: []string{corpusObject("runqlat")}, KernelBTF: []string{kernel}})
	if err == nil {
		t.Fatal("no error")
	}
	if want := "kernel BTF " + kernel + `: struct "x\n#include \"/etc/hostname\""`; !strings.Contains(err.Error(), want) {
		t.Errorf("error %q lacks %q", err, want)
	}
	checkMessage(t, err.Error())
}

// TestCommentLines: what the caller names in the header's comment cannot
// end the comment or start a line.
func TestCommentLines(t *testing.T) {
	for in, want := range map[string]string{
		"x.bpf.o":                     "x.bpf.o",
		"a*/b":                        "a* /b",
		"a\n#include \"/etc/passwd\"": `"a\n#include \"/etc/passwd\""`,
		"a\u202eb":                    `"a\u202eb"`,
	} {
		if got := commentLine(in); got != want {
			t.Errorf("commentLine(%q) = %q, want %q", in, got, want)
		}
	}
}

// Lines of a header as btfmin writes it, after the leading comment: the
// preprocessor lines it writes itself, or identifiers, numbers and C
// punctuation.
var (
	reCode       = regexp.MustCompile(`^(?:[A-Za-z_][A-Za-z0-9_]*|-?[0-9]+(?:ULL)?|\.\.\.|[{}()\[\];,*:=]|[ \t]+)*$`)
	reGuardStart = regexp.MustCompile(`^#(?:ifndef|define) __[A-Z0-9_]+__$`)
	reGuardEnd   = regexp.MustCompile(`^#endif /\* __[A-Z0-9_]+__ \*/$`)
	ownLines     = map[string]bool{
		"#ifndef BPF_NO_PRESERVE_ACCESS_INDEX":                                                     true,
		"#pragma clang attribute push (__attribute__((preserve_access_index)), apply_to = record)": true,
		"#pragma clang attribute pop":                                                              true,
		"#endif":                                                                                   true,
	}
)

// checkHeaderShape reports the first line of h that btfmin would not
// write from identifiers: a name from BTF that got through unchecked
// shows up as a stray character, a comment or a preprocessor line.
func checkHeaderShape(h string) error {
	const first = "/* Code generated by skelgen btfmin " + version.Version + ". DO NOT EDIT.\n"
	if !strings.HasPrefix(h, first) {
		return fmt.Errorf("header does not start with %q", first)
	}
	lines := strings.Split(h[len(first):], "\n")
	end := slices.Index(lines, " */")
	if end < 0 {
		return fmt.Errorf("leading comment does not end")
	}
	for _, line := range lines[:end] {
		if !strings.HasPrefix(line, " * ") || strings.Contains(line, "*/") || strings.ContainsFunc(line, func(r rune) bool { return r < ' ' || r > '~' }) {
			return fmt.Errorf("comment line %q", line)
		}
	}
	for i, line := range lines[end+1:] {
		switch {
		case ownLines[line], reGuardStart.MatchString(line), reGuardEnd.MatchString(line):
		case reCode.MatchString(line):
		default:
			return fmt.Errorf("line %d after the comment: %q", i+1, line)
		}
	}
	return nil
}

// FuzzKernelNames puts a fuzzed name at one of namePlacements in a kernel
// BTF and generates the header the placement asks for: it is refused
// with a message free of raw control characters, or written with
// nothing but identifiers where names go.
func FuzzKernelNames(f *testing.F) {
	for i := range namePlacements {
		for _, h := range hostileNames {
			f.Add(uint8(i), h.payload)
		}
		for _, name := range oddNames {
			f.Add(uint8(i), name)
		}
	}
	f.Fuzz(func(t *testing.T, place uint8, name string) {
		if strings.IndexByte(name, 0) >= 0 {
			return // BTF strings end at NUL: the name would be cut there
		}
		pl := namePlacements[int(place)%len(namePlacements)]
		root, cfg := pl.build(name)
		spec := specOf(t, root)
		c, _, err := choose(nil, []*btf.Spec{spec}, nil, cfg.Fields, cfg.Decls)
		if err != nil {
			// The name is one the placement uses itself (T, f):
			// -field finds something else.
			checkMessage(t, err.Error())
			return
		}
		c.sources = []btfSource{{"kernel BTF fuzz", spec}}
		h, err := c.write(Compact, "__F_H__", []string{"field: " + name})
		if err != nil {
			if !strings.HasPrefix(err.Error(), "kernel BTF fuzz: ") {
				t.Errorf("error %q does not name the BTF", err)
			}
			checkMessage(t, err.Error())
			return
		}
		if err := checkHeaderShape(h); err != nil {
			t.Fatalf("%v:\n%s", err, h)
		}
		if checkIdent(name) != nil && !(name == "" && pl.anonOK) && !(pl.baseOK && checkBaseType(name) == nil) {
			t.Fatalf("%s %q written:\n%s", pl.name, name, h)
		}
	})
}

// TestHostileCompletion: a name that only completion from the source
// asks for (clang reports T incomplete, then its member f missing) is
// refused before the header holding it is compiled.
func TestHostileCompletion(t *testing.T) {
	clang := testenv.Clang(t)
	const evil = "x\n#include \"/etc/hostname\"\nint"
	kernel := writeBTF(t, structT(&btf.Typedef{Name: evil, Type: i32T()}))
	src := filepath.Join(t.TempDir(), "prog.bpf.c")
	if err := os.WriteFile(src, []byte("#include \"vmlinux.h\"\nint g(struct T *t) { return t->f; }\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	res, rep, err := FromSource(Config{Source: src, KernelBTF: []string{kernel}, Clang: clang})
	if err == nil {
		t.Fatalf("no error; report %v, header:\n%s", rep, res.Header)
	}
	if want := "kernel BTF " + kernel + ": typedef " + strconv.Quote(evil) + ": not a C identifier"; err.Error() != want {
		t.Errorf("error %q, want %q", err, want)
	}
}

// TestMessagesQuoteNames: errors other than the writer's that name a
// type from BTF print it quoted too.
func TestMessagesQuoteNames(t *testing.T) {
	const evil = "x\n\x1b[2J#error"
	inner := &btf.Struct{Name: evil, Size: 4, Members: []btf.Member{{Name: "x", Type: i32T()}}}
	kernel := writeBTF(t, structT(inner))
	_, err := Generate(Config{KernelBTF: []string{kernel}, Fields: []string{"T.f.nope"}})
	if want := `field T.f.nope: ".f.nope" in struct ` + strconv.Quote(evil) + ": no such member"; err == nil || err.Error() != want {
		t.Errorf("error %v, want %q", err, want)
	}

	self := &btf.Struct{Name: evil, Size: 4}
	self.Members = []btf.Member{{Name: "me", Type: self}}
	err = checkContainment(specOf(t, self), nil)
	if want := "type struct " + strconv.Quote(evil) + " contains itself by value"; err == nil || err.Error() != want {
		t.Errorf("error %v, want %q", err, want)
	}
}
