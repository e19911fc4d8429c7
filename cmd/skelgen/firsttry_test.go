package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/skelgen/skelgen/internal/testenv"
)

// TestHelpListsGeneratorFlags: skelgen -h shows the generator's flags, not
// only the subcommands.
func TestHelpListsGeneratorFlags(t *testing.T) {
	code, out, _ := runCLI(t, "", "-h")
	if code != 0 {
		t.Fatalf("exit %d", code)
	}
	for _, want := range []string{"skelgen btfmin", "-header", "-type", "-runtime", "-cc", "-cflags", "-pkg"} {
		if !strings.Contains(out, want) {
			t.Errorf("-h output lacks %q:\n%s", want, out)
		}
	}
}

// TestFirstTryErrors: the mistakes of a first try get errors that say what
// to do, and nothing is written.
func TestFirstTryErrors(t *testing.T) {
	tests := []struct {
		name, file, code string
		clang            bool
		want             []string
	}{
		{"missing input", "", "", false, []string{"nope.bpf.c: no such file", "relative to the directory go generate runs in"}},
		{"empty source", "nope.bpf.c", "\n\n", false, []string{"nope.bpf.c: empty source", "SEC("}},
		{"only comments", "nope.bpf.c", "//go:build ignore\n// nothing yet\n", true, []string{"nope.bpf.c: compiles to an object without BTF", "defines no program"}},
		{"missing header", "nope.bpf.c", "//go:build ignore\n#include \"vmlinux.h\"\nint x;\n", true, []string{"'vmlinux.h' file not found", "hint: add -header vmlinux.h"}},
		{"missing libbpf header", "nope.bpf.c", "//go:build ignore\n#include <bpf/no_such.h>\n", true, []string{"hint: bpf/no_such.h comes with libbpf"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if tt.clang {
				testenv.Clang(t)
			}
			dir := t.TempDir()
			if tt.file != "" {
				writeFile(t, filepath.Join(dir, tt.file), tt.code)
			}
			out := filepath.Join(dir, "out")
			code, _, stderr := runCLI(t, "", "-runtime", "import", "-o", out, filepath.Join(dir, "nope.bpf.c"))
			if code != 1 {
				t.Fatalf("exit %d, want 1; stderr:\n%s", code, stderr)
			}
			for _, w := range tt.want {
				if !strings.Contains(stderr, w) {
					t.Errorf("stderr lacks %q:\n%s", w, stderr)
				}
			}
			if _, err := os.Stat(out); !os.IsNotExist(err) {
				t.Errorf("a failed run created %s", out)
			}
		})
	}
}

// TestBuildIgnoreWarningAndPackage: a .bpf.c beside Go files without
// //go:build ignore gets a warning, and the skeleton takes the package
// name of the Go files already there, not the directory's.
func TestBuildIgnoreWarningAndPackage(t *testing.T) {
	testenv.Clang(t)
	t.Setenv("GOPACKAGE", "")
	for _, ignore := range []bool{false, true} {
		dir := filepath.Join(t.TempDir(), "some-dir")
		src := "int counter = 1;\n"
		if ignore {
			src = "//go:build ignore\n\n" + src
		}
		writeFile(t, filepath.Join(dir, "tool.bpf.c"), src)
		writeFile(t, filepath.Join(dir, "main.go"), "package tracer\n")
		writeFile(t, filepath.Join(dir, "main_test.go"), "package tracer_test\n")
		code, _, stderr := runCLI(t, "", "-runtime", "import", "-target", "bpfel", filepath.Join(dir, "tool.bpf.c"))
		if code != 0 {
			t.Fatalf("exit %d:\n%s", code, stderr)
		}
		warned := strings.Contains(stderr, "tool.bpf.c:1: no //go:build ignore line")
		if warned == ignore {
			t.Errorf("ignore line %v: warned %v:\n%s", ignore, warned, stderr)
		}
		gen, err := os.ReadFile(filepath.Join(dir, "tool_bpfel.go"))
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(string(gen), "\npackage tracer\n") {
			t.Errorf("generated package clause is not tracer:\n%.300s", gen)
		}
	}
}

// TestBadObjectEverySubcommand: the generator, run and btfmin give the
// same one-line reason for an object that is not one, naming the file.
func TestBadObjectEverySubcommand(t *testing.T) {
	obj, err := os.ReadFile(filepath.Join(testenv.ModuleRoot(t), "examples/latency/latency_bpfel.o"))
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	files := []struct{ name, data, want string }{
		{"text.o", "hello\n", "text.o: not an ELF file"},
		{"cut.o", string(obj[:3000]), "cut.o: truncated or malformed ELF"},
	}
	for _, f := range files {
		writeFile(t, filepath.Join(dir, f.name), f.data)
		for _, args := range [][]string{
			{"-runtime", "import", "-o", filepath.Join(dir, "out")},
			{"run"},
			{"btfmin"},
		} {
			args := append(args, filepath.Join(dir, f.name))
			if args[0] == "run" {
				args = append(args, "ubpf/report")
			}
			code, _, stderr := runCLI(t, "", args...)
			if code != 1 || !strings.Contains(stderr, f.want) || strings.Count(stderr, "\n") != 1 {
				t.Errorf("skelgen %s: exit %d, stderr %q; want 1 line with %q", strings.Join(args, " "), code, stderr, f.want)
			}
		}
	}
}
