package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

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
