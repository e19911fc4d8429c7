package btfmin

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/cilium/ebpf/btf"
)

// FromSource writes the header for cfg.Source from the source and the
// kernel BTFs alone, for a program that has no header yet (or whose header
// no longer compiles): a full vmlinux.h is never needed, at any step.
//
// It runs in three steps. First a draft: starting from an empty header,
// the source is compiled and every declaration clang's diagnostics ask for
// (types, members, enumerators, typedefs, hook prototypes) is added from
// the kernel BTF until it compiles; declarations the source's own includes
// (UAPI headers such as <linux/bpf.h>) make are excluded when clang
// reports them redefined. Then the source is compiled against the draft
// and the header is minimised from that object, as Generate does for any
// object. Last, the report compares every CO-RE relocation of the draft's
// object with the final header's against each of cfg.KernelBTF (Verify).
//
// cfg.Objects must be empty; the caller decides what a report with
// differences means (the CLI and the generator fail).
func FromSource(cfg Config) (*Result, *Report, error) {
	if cfg.Source == "" {
		return nil, nil, errors.New("a header from the source needs the source")
	}
	if len(cfg.Objects) > 0 {
		return nil, nil, errors.New("a header from the source takes no objects")
	}
	if len(cfg.KernelBTF) == 0 {
		return nil, nil, errors.New("a header from the source needs a kernel BTF (-btf)")
	}
	draft, err := Generate(cfg)
	if err != nil {
		return nil, nil, err
	}
	clang, err := cfg.clang()
	if err != nil {
		return nil, nil, err
	}
	dir, err := os.MkdirTemp("", "skelgen-btfmin-src-")
	if err != nil {
		return nil, nil, err
	}
	defer os.RemoveAll(dir)
	// The header's comment names the object: name it after the source.
	obj := filepath.Join(dir, strings.TrimSuffix(filepath.Base(cfg.Source), ".c")+".o")
	for round := 0; ; round++ {
		diags, ok, err := compileSource(clang, cfg.Source, cfg.CFlags, dir, cfg.output(), draft.Header, obj)
		if err != nil {
			return nil, nil, err
		}
		if !ok {
			return nil, nil, fmt.Errorf("%s%s does not compile with the header completed from the kernel BTF", clangSays(clang, diags), filepath.Base(cfg.Source))
		}
		// bpf_core_type_exists(struct x) and its kin compile with x only
		// declared, and a declaration never exists on the target: clang
		// cannot ask for the definition, so the object's relocations do.
		fwds, err := forwardRoots(obj, &cfg)
		if err != nil {
			return nil, nil, err
		}
		if len(fwds) == 0 || round > 0 {
			break
		}
		cfg.Decls = append(slices.Clip(cfg.Decls), fwds...)
		if draft, err = Generate(cfg); err != nil {
			return nil, nil, err
		}
	}
	final := cfg
	final.Objects = []string{obj}
	res, err := Generate(final)
	if err != nil {
		return nil, nil, err
	}
	res.Warnings = append(draft.Warnings, res.Warnings...)
	rep, err := Verify(final, res.Header)
	if err != nil {
		return nil, nil, err
	}
	return res, rep, nil
}

// forwardRoots returns "struct x" for every type-based CO-RE relocation
// of the object whose root is only a forward declaration and that a kernel
// BTF defines.
func forwardRoots(path string, cfg *Config) ([]string, error) {
	o, err := ReadObject(path)
	if err != nil {
		return nil, err
	}
	var c *chooser
	var out []string
	for _, r := range o.Relocations {
		if fwd, ok := r.Root.(*btf.Fwd); ok {
			d := fwd.Kind.String() + " " + fwd.Name
			if c == nil {
				kernels, err := cfg.loadKernels()
				if err != nil {
					return nil, err
				}
				c = newChooser(kernels)
			}
			if _, err := c.kernelType(d); err != nil {
				continue // the kernel lacks it too: the relocation is right
			}
			if !slices.Contains(out, d) {
				out = append(out, d)
			}
		}
	}
	return out, nil
}
