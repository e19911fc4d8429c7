package gen

import (
	"testing"

	"github.com/skelgen/skelgen/internal/testenv"
)

// TestCacheRuns: the generation cache serves only runs whose every input
// it can hash: not a prebuilt object, -committed, -kernels or -btf-for
// (whose directory may gain a kernel), nor a package named by the directory's
// Go files.
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
		"-kernels":   {Input: "x.bpf.c", Package: "p", Kernels: "kernels"},
		"-btf-for":   {Input: "x.bpf.c", Package: "p", BTFFor: "kernels"},
		"no package": {Input: "x.bpf.c"},
	} {
		if c.Run(cfg, nil) != nil {
			t.Errorf("%s: cached", name)
		}
	}
	var none *Cache
	if none.Run(base, nil) != nil {
		t.Errorf("SKELGEN_CACHE=off: cached")
	}
}
