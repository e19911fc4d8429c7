package gen

import (
	"bytes"
	"context"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/skelgen/skelgen/internal/testenv"
)

// TestGenerateAllAsGoGenerate: GenerateAll over a module of two skeleton
// packages leaves the tree go generate's one line after the other leaves,
// byte for byte: the second line's input is the object the first writes,
// so the second, generated ahead before it exists, must be generated
// again once the first has written. A second GenerateAll writes nothing.
func TestGenerateAllAsGoGenerate(t *testing.T) {
	if testing.Short() {
		t.Skip("skipped in -short mode: loads packages")
	}
	root := testenv.ModuleRoot(t)
	objects := map[string]string{"a": "examples/latency/latency_bpfel.o"}
	module := func() string {
		dir := t.TempDir()
		write := func(name string, data []byte) {
			t.Helper()
			p := filepath.Join(dir, name)
			if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(p, data, 0o644); err != nil {
				t.Fatal(err)
			}
		}
		write("go.mod", []byte("module example.com/app\n\ngo 1.26\n\nrequire github.com/cilium/ebpf v0.22.0\n"))
		for pkg, obj := range objects {
			data, err := os.ReadFile(filepath.Join(root, obj))
			if err != nil {
				t.Fatal(err)
			}
			write(pkg+"/x.bpf.o", data)
			write(pkg+"/gen.go", []byte("package "+pkg+"\n\n//go:generate skelgen -pkg "+pkg+" x.bpf.o\n"))
		}
		write("b/gen.go", []byte("package b\n\n//go:generate skelgen -pkg b -stem y ../a/x_bpfel.o\n"))
		return dir
	}
	tree := func(dir string) map[string]string {
		out := map[string]string{}
		filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
			if err == nil && !d.IsDir() {
				data, _ := os.ReadFile(p)
				out[strings.TrimPrefix(p, dir)] = string(data)
			}
			return nil
		})
		return out
	}

	seq := module()
	for _, line := range [][2]string{{"a", "a/x.bpf.o"}, {"b", "a/x_bpfel.o"}} {
		pkg := line[0]
		files, err := Generate(context.Background(), Config{Input: filepath.Join(seq, line[1]), OutputDir: filepath.Join(seq, pkg), Stem: map[string]string{"a": "", "b": "y"}[pkg], Package: pkg, AOT: true})
		if err != nil {
			t.Fatal(err)
		}
		if err := WriteFiles(files); err != nil {
			t.Fatal(err)
		}
	}
	all := module()
	var out bytes.Buffer
	if err := GenerateAll(context.Background(), GenerateAllOptions{Patterns: []string{"./..."}, Dir: all, Out: &out}); err != nil {
		t.Fatal(err)
	}
	want, got := tree(seq), tree(all)
	if _, ok := want["/internal/skelgenrt/runtime/interp.go"]; !ok {
		t.Fatalf("the sequential runtime copy has no VM: %d files", len(want))
	}
	for p, w := range want {
		if g, ok := got[p]; !ok {
			t.Errorf("%s: missing after GenerateAll", p)
		} else if g != w {
			t.Errorf("%s: differs from go generate's", p)
		}
	}
	for p := range got {
		if _, ok := want[p]; !ok {
			t.Errorf("%s: written by GenerateAll, not by go generate", p)
		}
	}
	out.Reset()
	if err := GenerateAll(context.Background(), GenerateAllOptions{Patterns: []string{"./..."}, Dir: all, Out: &out}); err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(out.String(), ": 0 files written"); n != 3 || strings.Count(out.String(), " files written") != 3 {
		t.Errorf("a second GenerateAll wrote files:\n%s", out.String())
	}
}
