package gen

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/skelgen/skelgen/internal/testenv"
)

// TestCacheRuns: the generation cache serves only runs whose every input
// it can hash: not a prebuilt object, -committed, nor a package named by
// the directory's Go files. -kernels and -btf-for are cached, their
// directories read as lists of names (TestCacheDirectoryRead).
func TestCacheRuns(t *testing.T) {
	testenv.Clang(t)
	t.Setenv("GOPACKAGE", "")
	c := &Cache{dir: t.TempDir()}
	base := Config{Input: "x.bpf.c", Package: "p"}
	if c.Run(base, nil) == nil {
		t.Fatal("a C source with -pkg is not cached")
	}
	for name, cfg := range map[string]Config{
		"object":     {Input: "x.bpf.o", Package: "p"},
		"-committed": {Input: "x.bpf.c", Package: "p", Committed: true},
		"no package": {Input: "x.bpf.c"},
	} {
		if c.Run(cfg, nil) != nil {
			t.Errorf("%s: cached", name)
		}
	}
	for name, cfg := range map[string]Config{
		"-kernels": {Input: "x.bpf.c", Package: "p", Kernels: "kernels"},
		"-btf-for": {Input: "x.bpf.c", Package: "p", BTFFor: "kernels"},
	} {
		if c.Run(cfg, nil) == nil {
			t.Errorf("%s: not cached", name)
		}
	}
	var none *Cache
	if none.Run(base, nil) != nil {
		t.Errorf("SKELGEN_CACHE=off: cached")
	}
}

// TestCacheDirectoryRead: a run that read a directory (-btf-for's kernels)
// is current until a file is added to it or removed.
func TestCacheDirectoryRead(t *testing.T) {
	testenv.Clang(t)
	t.Setenv("GOPACKAGE", "")
	dir := t.TempDir()
	kernels := filepath.Join(dir, "kernels")
	if err := os.MkdirAll(kernels, 0o755); err != nil {
		t.Fatal(err)
	}
	k1 := filepath.Join(kernels, "6.1.btf")
	if err := os.WriteFile(k1, []byte("one"), 0o644); err != nil {
		t.Fatal(err)
	}
	c := &Cache{dir: filepath.Join(dir, "cache")}
	cfg := Config{Input: "x.bpf.c", Package: "p", BTFFor: kernels}
	r := c.Run(cfg, []string{"-btf-for", "kernels", "x.bpf.c"})
	r.Read(kernels)
	r.Read(k1)
	out := File{Path: filepath.Join(dir, "out.go"), Data: []byte("package p\n")}
	if err := os.WriteFile(out.Path, out.Data, 0o644); err != nil {
		t.Fatal(err)
	}
	r.Save([]File{out})
	again := c.Run(cfg, []string{"-btf-for", "kernels", "x.bpf.c"})
	if _, _, ok := again.Current(); !ok {
		t.Fatal("the run is not current with nothing changed")
	}
	if err := os.WriteFile(filepath.Join(kernels, "6.12.btf"), []byte("two"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, _, ok := again.Current(); ok {
		t.Error("the run is current after a kernel was added to the directory")
	}
}
