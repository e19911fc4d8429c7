package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cilium/ebpf/btf"

	"github.com/skelgen/skelgen/internal/testenv"
)

// corpusFile is a file of the top-level testdata/corpus.
func corpusFile(name string) string {
	return filepath.Join("..", "..", "testdata", "corpus", name)
}

func TestBtfminCommandLine(t *testing.T) {
	tests := []struct {
		name     string
		args     []string
		code     int
		inStderr string
	}{
		{"bad mode", []string{"btfmin", "-mode", "tiny", "x.o"}, 2, "unknown mode"},
		{"verify without source", []string{"btfmin", "-verify", "x.o"}, 2, "-verify needs -src"},
		{"nothing to do", []string{"btfmin"}, 1, "nothing to do"},
		{"missing object", []string{"btfmin", "-btf", "no-such.btf", "x.o"}, 1, "no-such.btf"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, _, stderr := runCLI(t, "", tt.args...)
			if code != tt.code || !strings.Contains(stderr, tt.inStderr) {
				t.Errorf("exit %d, stderr %q; want exit %d and %q", code, stderr, tt.code, tt.inStderr)
			}
		})
	}
}

func TestBtfminKernelOnly(t *testing.T) {
	kernel := testenv.KernelBTF(t)
	dir := t.TempDir()
	out := filepath.Join(dir, "min.h")
	code, _, stderr := runCLI(t, "", "btfmin", "-btf", kernel, "-field", "task_struct.pid", "-field", "task_struct.tgid",
		"-decl", "enum cgroup_subsys_id", "-o", out)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	data, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"#ifndef __MIN_H__", "pid_t pid;", "pid_t tgid;", "enum cgroup_subsys_id {"} {
		if !strings.Contains(string(data), want) {
			t.Errorf("min.h lacks %q", want)
		}
	}
	entries, _ := os.ReadDir(dir)
	if len(entries) != 1 {
		t.Errorf("output directory holds %d files, want only min.h", len(entries))
	}
}

func TestBtfminWarningsAndErrors(t *testing.T) {
	code, stdout, stderr := runCLI(t, "", "btfmin", "-btf", testenv.KernelBTF(t), corpusFile("noext.bpf.o"))
	if code != 0 || !strings.Contains(stderr, "warning: noext.bpf.o: no .BTF.ext") || !strings.Contains(stdout, "#define __VMLINUX_H__") {
		t.Errorf("no .BTF.ext: exit %d, stderr %q", code, stderr)
	}
	bad := filepath.Join(t.TempDir(), "bad.bpf.o")
	if err := os.WriteFile(bad, []byte("\x7fELF not really"), 0o644); err != nil {
		t.Fatal(err)
	}
	code, _, stderr = runCLI(t, "", "btfmin", bad)
	if code != 1 || !strings.Contains(stderr, "bad.bpf.o") {
		t.Errorf("bad object: exit %d, stderr %q", code, stderr)
	}
}

func TestBtfminVerify(t *testing.T) {
	clang := testenv.Clang(t)
	kernel := testenv.KernelBTF(t)
	out := filepath.Join(t.TempDir(), "vmlinux.h")
	code, stdout, stderr := runCLI(t, "", "btfmin", "-clang", clang, "-btf", kernel, "-src", corpusFile("execsnoop.bpf.c"),
		"-cflags", "-D__TARGET_ARCH_x86", "-mode", "exact", "-verify", "-o", out, corpusFile("execsnoop.bpf.o"))
	if code != 0 {
		t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", code, stdout, stderr)
	}
	if !strings.Contains(stdout, "execsnoop.bpf.o against vmlinux: ") || !strings.Contains(stdout, " relocations, ok") || !strings.Contains(stdout, "instructions identical") {
		t.Errorf("report:\n%s", stdout)
	}
}

// TestBtfminFromSource: -src without objects writes the header from the
// source and the kernel BTF alone and prints the relocation check.
func TestBtfminFromSource(t *testing.T) {
	clang := testenv.Clang(t)
	kernel := testenv.KernelBTF(t)
	out := filepath.Join(t.TempDir(), "vmlinux.h")
	code, stdout, stderr := runCLI(t, "", "btfmin", "-cc", clang, "-cflags", "-O2 -D__TARGET_ARCH_x86", "-btf", kernel,
		"-src", corpusFile("execsnoop.bpf.c"), "-o", out)
	if code != 0 {
		t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", code, stdout, stderr)
	}
	if !strings.Contains(stdout, "execsnoop.bpf.o against vmlinux: ") || !strings.Contains(stdout, " relocations, ok") {
		t.Errorf("report:\n%s", stdout)
	}
	h, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(h), "struct task_struct {") {
		t.Errorf("header lacks task_struct:\n%s", h)
	}
}

// TestBtfminHostileBTF: a -btf file whose names would put preprocessor
// lines into the header makes btfmin fail naming the file, the type and
// the name quoted, without writing -o (an existing file stays as it was)
// and without raw control characters on stderr.
func TestBtfminHostileBTF(t *testing.T) {
	i32 := &btf.Int{Name: "int", Size: 4, Encoding: btf.Signed}
	evil := &btf.Typedef{Name: "u32\n#include \"/etc/hostname\"\n\x1b[2J", Type: i32}
	s := &btf.Struct{Name: "T", Size: 4, Members: []btf.Member{{Name: "f", Type: evil}}}
	u := &btf.Struct{Name: "U", Size: 8, Members: []btf.Member{{Name: "h", Type: i32}, {Name: "g\n#error x", Type: i32, Offset: 32}}}
	b, err := btf.NewBuilder([]btf.Type{s, u}, nil)
	if err != nil {
		t.Fatal(err)
	}
	raw, err := b.Marshal(nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	kernel := filepath.Join(dir, "vmlinux.btf")
	if err := os.WriteFile(kernel, raw, 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		name string
		args []string
		want string
	}{
		{"typedef", []string{"-field", "T.f"}, `: typedef "u32\n#include \"/etc/hostname\"\n\x1b[2J": not a C identifier`},
		{"member", []string{"-decl", "struct U"}, `: struct "U" member "g\n#error x": not a C identifier`},
	} {
		t.Run(tt.name, func(t *testing.T) {
			for _, existing := range []bool{false, true} {
				out := filepath.Join(t.TempDir(), "vmlinux.h")
				if existing {
					writeFile(t, out, "old\n")
				}
				args := append([]string{"btfmin", "-btf", kernel, "-o", out}, tt.args...)
				code, stdout, stderr := runCLI(t, "", args...)
				if want := "skelgen: btfmin: kernel BTF " + kernel + tt.want; code != 1 || !strings.Contains(stderr, want) {
					t.Errorf("exit %d, stderr %q; want exit 1 and %q", code, stderr, want)
				}
				if strings.ContainsAny(stderr+stdout, "\x1b\x00") || strings.Contains(stderr, "\n#") {
					t.Errorf("raw name on the terminal: %q", stderr)
				}
				data, err := os.ReadFile(out)
				switch {
				case !existing && !os.IsNotExist(err):
					t.Errorf("%s written: %q, %v", out, data, err)
				case existing && string(data) != "old\n":
					t.Errorf("%s changed: %q, %v", out, data, err)
				}
			}
		})
	}
}
