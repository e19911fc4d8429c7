package gen

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/skelgen/skelgen/btfmin"
	clang "github.com/skelgen/skelgen/internal/cc"
)

// minimalHeader regenerates the minimal CO-RE header the C input includes,
// from the object just compiled and the kernel BTF, so that it stays in step
// with the source.
func minimalHeader(cfg Config, outDir string, obj []byte, target Target) (File, error) {
	path := cfg.Header
	if !filepath.IsAbs(path) {
		path = filepath.Join(outDir, path)
	}
	// The header's comment names the object: give it a stable name.
	dir, err := os.MkdirTemp("", "skelgen-header-")
	if err != nil {
		return File{}, err
	}
	defer os.RemoveAll(dir)
	objPath := filepath.Join(dir, DefaultStem(cfg.Input)+".bpf.o")
	if err := os.WriteFile(objPath, obj, 0o644); err != nil {
		return File{}, err
	}
	kernels := cfg.HeaderBTF
	if kernels == nil {
		kernels = []string{"/sys/kernel/btf/vmlinux"}
	}
	cc, err := clang.Find(cfg.CC)
	if err != nil {
		return File{}, err
	}
	cflags := append(append([]string(nil), cfg.CFlags...), target.Defines()...)
	res, err := btfmin.Generate(btfmin.Config{
		Objects:   []string{objPath},
		KernelBTF: kernels,
		Source:    cfg.Input,
		CFlags:    cflags,
		Clang:     cc,
		Output:    path,
	})
	if err != nil {
		return File{}, fmt.Errorf("header %s: %w", cfg.Header, err)
	}
	return File{Path: path, Data: res.Header}, nil
}
