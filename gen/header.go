package gen

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"

	"github.com/skelgen/skelgen/btfmin"
	clang "github.com/skelgen/skelgen/internal/cc"
)

// headerPath returns the absolute path of the -header file.
func headerPath(cfg Config, outDir string) (string, error) {
	path := cfg.Header
	if !filepath.IsAbs(path) {
		path = filepath.Join(outDir, path)
	}
	return filepath.Abs(path)
}

// maxHeaderRounds bounds the compile-and-minimise loop of a header made
// from the source: the minimised header compiled again gives itself back,
// normally at the first round.
const maxHeaderRounds = 3

// prepareHeader decides the minimal CO-RE header the C input includes
// (-header) and returns it with the overlay the skeleton's compiles use.
//
// When the header exists and the source compiles with it, it is
// regenerated from that object and the kernel BTF, so that it stays in
// step with the source. When it is missing or no longer compiles, it is
// made from the source and the kernel BTF alone (btfmin.FromSource,
// verified against every -btf). Either way, the object is compiled again
// against the new header until the header regenerated from the object is
// the one it was compiled against: the object's BTF describes the types
// as the header declares them, so an object compiled against the old
// header (a field the source no longer reads still declared) would not
// be the one the next run makes. The skeleton's compiles read the header
// through an overlay when it differs from the file on disk.
func prepareHeader(ctx context.Context, cfg Config, outDir string, target Target) (File, map[string][]byte, error) {
	path, err := headerPath(cfg, outDir)
	if err != nil {
		return File{}, nil, err
	}
	// The file keeps the path as given; the overlay needs it absolute.
	name := cfg.Header
	if !filepath.IsAbs(name) {
		name = filepath.Join(outDir, name)
	}
	compile := func(overlay map[string][]byte) ([]byte, error) {
		obj, _, err := Compile(ctx, CompileOptions{CC: cfg.CC, CFlags: cfg.CFlags, Source: cfg.Input, Target: target, Overlay: overlay})
		return obj, err
	}
	var header []byte
	if old, err := os.ReadFile(path); err == nil {
		if obj, err := compile(nil); err == nil {
			if header, err = minimalHeader(cfg, path, obj, target); err != nil {
				return File{}, nil, err
			}
			if bytes.Equal(header, old) {
				return File{Path: name, Data: header}, nil, nil
			}
		}
	}
	what := "header " + cfg.Header
	if header == nil {
		bcfg, err := headerConfig(cfg, path, target)
		if err != nil {
			return File{}, nil, err
		}
		res, report, err := btfmin.FromSource(bcfg)
		if err != nil {
			return File{}, nil, fmt.Errorf("header %s from the source: %w", cfg.Header, err)
		}
		if !report.OK() {
			return File{}, nil, fmt.Errorf("header %s from the source: CO-RE relocations differ:\n%s", cfg.Header, report)
		}
		header, what = res.Header, what+" from the source"
	}
	for range maxHeaderRounds {
		overlay := map[string][]byte{path: header}
		obj, err := compile(overlay)
		if err != nil {
			return File{}, nil, fmt.Errorf("%s: %w", what, err)
		}
		again, err := minimalHeader(cfg, path, obj, target)
		if err != nil {
			return File{}, nil, err
		}
		if bytes.Equal(again, header) {
			return File{Path: name, Data: header}, overlay, nil
		}
		header = again
	}
	return File{}, nil, fmt.Errorf("%s: still changing after %d compiles", what, maxHeaderRounds)
}

// headerConfig is the btfmin configuration of the -header file at path.
func headerConfig(cfg Config, path string, target Target) (btfmin.Config, error) {
	cc, err := clang.Find(cfg.CC)
	if err != nil {
		return btfmin.Config{}, err
	}
	kernels := cfg.HeaderBTF
	if kernels == nil {
		kernels = []string{"/sys/kernel/btf/vmlinux"}
	}
	return btfmin.Config{
		KernelBTF: kernels,
		Source:    cfg.Input,
		CFlags:    append(append([]string(nil), cfg.CFlags...), target.Defines()...),
		Clang:     cc,
		Output:    path,
	}, nil
}

// minimalHeader regenerates the header at path from the object just
// compiled and the kernel BTF.
func minimalHeader(cfg Config, path string, obj []byte, target Target) ([]byte, error) {
	// The header's comment names the object: give it a stable name.
	dir, err := os.MkdirTemp("", "skelgen-header-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(dir)
	objPath := filepath.Join(dir, DefaultStem(cfg.Input)+".bpf.o")
	if err := os.WriteFile(objPath, obj, 0o644); err != nil {
		return nil, err
	}
	bcfg, err := headerConfig(cfg, path, target)
	if err != nil {
		return nil, err
	}
	bcfg.Objects = []string{objPath}
	res, err := btfmin.Generate(bcfg)
	if err != nil {
		return nil, fmt.Errorf("header %s: %w", cfg.Header, err)
	}
	return res.Header, nil
}
