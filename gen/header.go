package gen

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/cilium/ebpf/btf"

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
		obj, _, err := Compile(ctx, cfg.compileOptions(target, overlay))
		return obj, err
	}
	if absent := absentKernel(cfg); absent != "" {
		return headerWithoutKernel(ctx, cfg, path, name, target, absent)
	}
	var header []byte
	if old, err := readOutput(path); err == nil {
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
			return File{}, nil, fmt.Errorf("header %s from the source: %w%s", cfg.Header, err, targetArchHint(err.Error(), target))
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
	return btfmin.Config{
		KernelBTF: headerKernels(cfg),
		Source:    cfg.Input,
		CFlags:    append(append([]string(nil), cfg.CFlags...), target.Defines()...),
		Clang:     cc,
		Output:    path,
		Arches:    headerArches(cfg.Targets),
	}, nil
}

// headerKernels are the kernel BTF files the header is completed from.
func headerKernels(cfg Config) []string {
	if cfg.HeaderBTF == nil {
		return []string{DefaultKernelBTF}
	}
	return cfg.HeaderBTF
}

// DefaultKernelBTF is the running kernel's BTF, the -btf default.
const DefaultKernelBTF = "/sys/kernel/btf/vmlinux"

// absentKernel returns the first kernel BTF file of the header that does
// not exist, or "".
func absentKernel(cfg Config) string {
	for _, p := range headerKernels(cfg) {
		if _, err := os.Stat(p); errors.Is(err, os.ErrNotExist) {
			return p
		}
	}
	return ""
}

// headerWithoutKernel keeps the committed header when a kernel BTF file is
// missing (a machine without kernel BTF, macOS, a container): the header
// stands in for the kernel BTF it was made from (btfmin.HeaderSpec). If
// the source compiles against it and the header regenerated from that
// object with the header's own types is the header itself, the source
// asks for nothing new and the header is current. Anything else needs the
// kernel BTF, and the error says what the source asks for that the header
// lacks.
func headerWithoutKernel(ctx context.Context, cfg Config, path, name string, target Target, absent string) (File, map[string][]byte, error) {
	need := func(why string) error {
		return fmt.Errorf("header %s: kernel BTF %s does not exist, and the header needs it: %s\n"+
			"give -btf FILE, a kernel BTF such as /sys/kernel/btf/vmlinux copied from a Linux machine whose kernel has BTF", cfg.Header, absent, why)
	}
	old, err := readOutput(path)
	if errors.Is(err, os.ErrNotExist) {
		return File{}, nil, need("there is no " + cfg.Header + " yet to make it from")
	} else if err != nil {
		return File{}, nil, err
	}
	bcfg, err := headerConfig(cfg, path, target)
	if err != nil {
		return File{}, nil, err
	}
	spec, err := btfmin.HeaderSpec(bcfg.Clang, old, target.Defines())
	if err != nil {
		return File{}, nil, need(fmt.Sprintf("%s cannot stand in for it: %v", cfg.Header, err))
	}
	bcfg.KernelSpecs = make([]*btf.Spec, len(bcfg.KernelBTF))
	for i := range bcfg.KernelSpecs {
		bcfg.KernelSpecs[i] = spec
	}
	obj, _, compileErr := Compile(ctx, cfg.compileOptions(target, nil))
	if compileErr == nil {
		var objPath string
		if objPath, err = tempObject(cfg, obj); err != nil {
			return File{}, nil, err
		}
		defer os.RemoveAll(filepath.Dir(objPath))
		bcfg.Objects = []string{objPath}
	}
	// Without the object (the source does not compile against the
	// header), completing from the source alone says what it lacks.
	res, err := btfmin.Generate(bcfg)
	var me *btfmin.MissingError
	switch {
	case errors.As(err, &me):
		var lacks []string
		for _, m := range me.Missing {
			lacks = append(lacks, fmt.Sprintf("%s: %s is not in %s", m.Pos, strconv.Quote(m.Name), filepath.Base(cfg.Header)))
		}
		return File{}, nil, need("the source uses what the header lacks:\n" + strings.Join(lacks, "\n"))
	case err != nil:
		return File{}, nil, fmt.Errorf("header %s: %w", cfg.Header, err)
	case compileErr != nil:
		return File{}, nil, need(fmt.Sprintf("%s does not compile with it: %v", filepath.Base(cfg.Input), compileErr))
	case !bytes.Equal(res.Header, old):
		return File{}, nil, need("made from the source with only its own declarations, it would change, and only the kernel BTF tells how:\n" + shortDiff(old, res.Header, 12))
	}
	return File{Path: name, Data: old}, nil, nil
}

// tempObject writes obj into a new temporary directory under the name the
// header's comment gives it, and returns its path.
func tempObject(cfg Config, obj []byte) (string, error) {
	dir, err := os.MkdirTemp("", "skelgen-header-")
	if err != nil {
		return "", err
	}
	objPath := filepath.Join(dir, DefaultStem(cfg.Input)+".bpf.o")
	if err := os.WriteFile(objPath, obj, 0o644); err != nil {
		os.RemoveAll(dir)
		return "", err
	}
	return objPath, nil
}

// minimalHeader regenerates the header at path from the object just
// compiled and the kernel BTF.
func minimalHeader(cfg Config, path string, obj []byte, target Target) ([]byte, error) {
	// The header's comment names the object: give it a stable name.
	objPath, err := tempObject(cfg, obj)
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(filepath.Dir(objPath))
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
