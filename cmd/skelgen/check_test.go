package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/skelgen/skelgen/internal/testenv"
)

// scratchModule copies a skeleton package of internal/skeltest (and the
// shared include directory) into a new module that requires skelgen through
// a replace directive, and returns the module directory.
func scratchModule(t *testing.T, pkg string) string {
	t.Helper()
	root := testenv.ModuleRoot(t)
	mod := t.TempDir()
	goMod := "module example.com/scratch\n\ngo 1.26\n\nrequire github.com/skelgen/skelgen v0.0.0-00010101000000-000000000000\n\nreplace github.com/skelgen/skelgen => " + root + "\n"
	write(t, filepath.Join(mod, "go.mod"), []byte(goMod))
	sum, err := os.ReadFile(filepath.Join(root, "go.sum"))
	if err != nil {
		t.Fatal(err)
	}
	write(t, filepath.Join(mod, "go.sum"), sum)
	for _, dir := range []string{pkg, "include"} {
		src := filepath.Join(root, "internal/skeltest", dir)
		entries, err := os.ReadDir(src)
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range entries {
			if strings.HasSuffix(e.Name(), "_test.go") {
				continue
			}
			data, err := os.ReadFile(filepath.Join(src, e.Name()))
			if err != nil {
				t.Fatal(err)
			}
			write(t, filepath.Join(mod, dir, e.Name()), data)
		}
	}
	return mod
}

func write(t *testing.T, path string, data []byte) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
}

func TestCheckReportsHandEdit(t *testing.T) {
	if testing.Short() {
		t.Skip("skipped in -short mode: loads packages")
	}
	mod := scratchModule(t, "uprobe")
	t.Chdir(mod)
	t.Setenv("GOFLAGS", "-mod=mod")

	var stdout, stderr bytes.Buffer
	if code := run([]string{"check", "./..."}, nil, &stdout, &stderr); code != 0 {
		t.Fatalf("check of a fresh copy: exit %d\n%s%s", code, stdout.String(), stderr.String())
	}
	if !strings.Contains(stdout.String(), "ok: 1 skelgen go:generate lines") {
		t.Errorf("check output: %s", stdout.String())
	}

	gofile := filepath.Join(mod, "uprobe", "uprobe_bpfel.go")
	src, err := os.ReadFile(gofile)
	if err != nil {
		t.Fatal(err)
	}
	edited := bytes.Replace(src, []byte("func LoadUprobe("), []byte("// hand edit\nfunc LoadUprobe("), 1)
	write(t, gofile, edited)
	stdout.Reset()
	stderr.Reset()
	if code := run([]string{"check", "./..."}, nil, &stdout, &stderr); code != 1 {
		t.Fatalf("check after a hand edit: exit %d, want 1\n%s%s", code, stdout.String(), stderr.String())
	}
	out := stdout.String()
	if !strings.Contains(out, "uprobe/uprobe_bpfel.go: stale") || !strings.Contains(out, "-// hand edit") {
		t.Errorf("check does not name the edited file with a diff:\n%s", out)
	}
	if strings.Contains(out, "uprobe_bpfeb.go") {
		t.Errorf("check reports an unedited file:\n%s", out)
	}
}

func TestGenerateBadInputExitStatus(t *testing.T) {
	dir := t.TempDir()
	in := filepath.Join(dir, "x.bpf.o")
	write(t, in, []byte("\x7fELF truncated"))
	var stdout, stderr bytes.Buffer
	code := run([]string{"-o", filepath.Join(dir, "out"), in}, nil, &stdout, &stderr)
	if code != 1 {
		t.Fatalf("exit %d, want 1", code)
	}
	msg := stderr.String()
	if strings.Count(msg, "\n") != 1 || !strings.Contains(msg, "x.bpf.o") {
		t.Errorf("want a one-line error naming the file, got %q", msg)
	}
	if _, err := os.Stat(filepath.Join(dir, "out")); !os.IsNotExist(err) {
		t.Error("output directory created by a failed run")
	}
}
