package gen

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/skelgen/skelgen/internal/testenv"
)

// TestWriteFilesAsASet makes the second rename fail (its target is a
// non-empty directory) and checks that the first file keeps its old
// contents and that no directory or temporary file is left behind.
func TestWriteFilesAsASet(t *testing.T) {
	dir := t.TempDir()
	first := filepath.Join(dir, "a.go")
	if err := os.WriteFile(first, []byte("old"), 0o644); err != nil {
		t.Fatal(err)
	}
	blocked := filepath.Join(dir, "b.go")
	if err := os.MkdirAll(filepath.Join(blocked, "x"), 0o755); err != nil {
		t.Fatal(err)
	}
	newDir := filepath.Join(dir, "internal", "skelgenrt")
	err := WriteFiles([]File{
		{Path: first, Data: []byte("new")},
		{Path: filepath.Join(newDir, "c.go"), Data: []byte("c")},
		{Path: blocked, Data: []byte("b")},
	})
	if err == nil {
		t.Fatal("WriteFiles succeeded with a directory in the way")
	}
	if b, _ := os.ReadFile(first); string(b) != "old" {
		t.Errorf("a.go = %q after the failed write, want the old contents", b)
	}
	if _, err := os.Stat(filepath.Join(dir, "internal")); !os.IsNotExist(err) {
		t.Errorf("the directory the failed write created is still there (%v)", err)
	}
	ents, _ := os.ReadDir(dir)
	if len(ents) != 2 {
		var names []string
		for _, e := range ents {
			names = append(names, e.Name())
		}
		t.Errorf("left behind: %q, want only a.go and b.go", names)
	}

	if err := os.RemoveAll(blocked); err != nil {
		t.Fatal(err)
	}
	if err := WriteFiles([]File{{Path: first, Data: []byte("new")}, {Path: blocked, Data: []byte("b")}}); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(first); string(b) != "new" {
		t.Errorf("a.go = %q, want the new contents", b)
	}
}

// TestAOTOffStubsTranslation: generating with -aot=false where an
// earlier run wrote the translation replaces that file with a stub (go
// generate fails on a package file removed while it runs), which the
// next run keeps, and with -aot the translation comes back.
func TestAOTOffStubsTranslation(t *testing.T) {
	dir := t.TempDir()
	data, err := os.ReadFile(filepath.Join(testenv.ModuleRoot(t), "internal/skeltest/ubpf/ubpf_bpfel.o"))
	if err != nil {
		t.Fatal(err)
	}
	in := filepath.Join(dir, "ubpf.bpf.o")
	if err := os.WriteFile(in, data, 0o644); err != nil {
		t.Fatal(err)
	}
	aot := filepath.Join(dir, "ubpf_bpfel_aot.go")
	for _, on := range []bool{true, false, false, true} {
		files, err := Generate(context.Background(), Config{Input: in, Package: "ubpf", ImportRuntime: true, AOT: on})
		if err != nil {
			t.Fatal(err)
		}
		if err := WriteFiles(files); err != nil {
			t.Fatal(err)
		}
		data, err := os.ReadFile(aot)
		if err != nil {
			t.Fatalf("-aot=%v: %v", on, err)
		}
		if stub := string(aotStub("ubpf")); (string(data) == stub) == on {
			t.Errorf("-aot=%v: the file is the stub: %v", on, !on)
		}
		if !on && !strings.Contains(string(data), "\npackage ubpf\n") {
			t.Errorf("-aot=false: the stub is not of package ubpf:\n%s", data)
		}
	}
	// A package whose translation was never written gets no stub.
	os.Remove(aot)
	files, err := Generate(context.Background(), Config{Input: in, Package: "ubpf", ImportRuntime: true, AOT: false})
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range files {
		if f.Path == aot {
			t.Errorf("-aot=false with no translation file writes %s", f.Path)
		}
	}
}
