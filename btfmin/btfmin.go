package btfmin

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/cilium/ebpf/btf"

	"github.com/skelgen/skelgen/internal/cc"
)

// Config says what header to generate. The zero Mode is Compact.
type Config struct {
	// Objects are compiled BPF objects (.bpf.o); their CO-RE relocations,
	// maps, globals, externs and programs decide what the header keeps.
	Objects []string
	// KernelBTF are kernel BTF files (raw BTF or ELF), e.g.
	// /sys/kernel/btf/vmlinux. They tell kernel types from the source's
	// own, and complete what the objects cannot show. Without any, every
	// named type but ___flavors counts as a kernel type, and Source
	// cannot be used. The header's text depends on them: callers that
	// compare it with a file on disk (staleness checks) should pass the
	// same BTF files on every machine.
	KernelBTF []string
	// KernelSpecs, when set, are the kernel BTFs already loaded, one per
	// entry of KernelBTF, which then only names them (in the header's
	// comment and in messages) and is not read: the generator passes the
	// BTF of a committed header (HeaderSpec) when the kernel's is missing.
	KernelSpecs []*btf.Spec
	// Source, when set, is compiled against the header until it builds;
	// whatever clang reports missing is added from KernelBTF.
	Source string
	// CFlags are extra clang flags for compiling Source.
	CFlags []string
	// Clang is the compiler; empty means clang-19 if it is on PATH, else
	// clang (see internal/cc, shared with the skeleton generator).
	Clang string
	// Fields ("task_struct.pid", "sock.__sk_common.skc_family") and Decls
	// ("enum cgroup_subsys_id", "struct qstr", "u32") ask for kernel
	// types directly, with or without objects.
	Fields []string
	Decls  []string
	Mode   Mode
	// Output is the header's file name as the source includes it; its
	// base name gives the include guard. "vmlinux.h" when empty.
	Output string
	// Arches are the Linux architectures (the <arch> of
	// -D__TARGET_ARCH_<arch>: x86, arm64, ...; see Arches) the header
	// serves. When set and the source reads registers, each gets the
	// register declarations bpf_tracing.h reads, in a section of its own
	// guarded by its macro: the kernel BTF's architecture from the kernel
	// BTF, the others as their kernels declare them. CFlags still say
	// which one the source is compiled for while the header is made.
	Arches []string
}

// Result is a generated header.
type Result struct {
	Header   []byte
	Warnings []string
}

func (cfg *Config) clang() (string, error) {
	return cc.Find(cfg.Clang)
}

func (cfg *Config) output() string {
	if cfg.Output == "" {
		return "vmlinux.h"
	}
	return filepath.Base(cfg.Output)
}

// Generate builds the minimal header. It writes no files: the bytes are
// deterministic for the same inputs, so callers can compare them with a
// header on disk to detect staleness.
func Generate(cfg Config) (*Result, error) {
	if len(cfg.Objects) == 0 && len(cfg.Fields) == 0 && len(cfg.Decls) == 0 && cfg.Source == "" {
		return nil, errors.New("nothing to do: give objects, a source, -field or -decl")
	}
	kernels, err := cfg.loadKernels()
	if err != nil {
		return nil, err
	}
	objs := make([]*Object, 0, len(cfg.Objects))
	for _, path := range cfg.Objects {
		o, err := ReadObject(path)
		if err != nil {
			return nil, err
		}
		objs = append(objs, o)
	}
	c, warnings, err := choose(objs, kernels, sources(cfg.Objects, objs, cfg.KernelBTF, kernels), cfg.Fields, cfg.Decls)
	if err != nil {
		return nil, err
	}
	if err := c.setArches(cfg.Arches); err != nil {
		return nil, err
	}
	if cfg.Source != "" {
		if err := complete(c, &cfg); err != nil {
			return nil, err
		}
	}
	header, err := c.write(cfg.Mode, guardFor(cfg.output()), inputComment(&cfg))
	if err != nil {
		return nil, err
	}
	return &Result{Header: []byte(header), Warnings: warnings}, nil
}

// loadKernels returns cfg.KernelSpecs, or else reads cfg.KernelBTF. A
// file that is there but holds no BTF (empty, truncated, another format)
// is reported as such, naming it.
func (cfg *Config) loadKernels() ([]*btf.Spec, error) {
	if cfg.KernelSpecs != nil {
		if len(cfg.KernelSpecs) != len(cfg.KernelBTF) {
			return nil, fmt.Errorf("%d kernel BTF specs for %d names", len(cfg.KernelSpecs), len(cfg.KernelBTF))
		}
		return cfg.KernelSpecs, nil
	}
	var specs []*btf.Spec
	for _, p := range cfg.KernelBTF {
		data, err := os.ReadFile(p)
		if err != nil {
			return nil, fmt.Errorf("kernel BTF %s: %w", p, err)
		}
		s, err := loadBTF(data)
		if err != nil {
			return nil, fmt.Errorf("kernel BTF %s: %w", p, err)
		}
		specs = append(specs, s)
	}
	return specs, nil
}

// choose collects the declarations the objects and the requested fields
// and declarations need; srcs name the BTFs for errors.
func choose(objs []*Object, kernels []*btf.Spec, srcs []btfSource, fields, decls []string) (*chooser, []string, error) {
	c := newChooser(kernels)
	c.sources = srcs
	var warnings []string
	for _, o := range objs {
		warnings = append(warnings, o.Warnings...)
		for i := range o.Relocations {
			r := &o.Relocations[i]
			if err := c.addRelocation(r); err != nil {
				return nil, nil, fmt.Errorf("%s: %s relocation %q in %q: %w", o.Name, r.Kind, r.Path(), r.Section, err)
			}
		}
		c.addObjectTypes(o.Spec)
		for _, sec := range o.Sections {
			c.addHookPrototype(sec)
		}
	}
	for _, f := range fields {
		if err := c.addField(f); err != nil {
			return nil, nil, fmt.Errorf("field %s: %w", f, err)
		}
	}
	if len(kernels) > 0 {
		for _, name := range libbpfTypedefs {
			if t, err := c.kernelType("typedef " + name); err == nil {
				c.use(t, true)
			}
		}
	}
	for _, d := range decls {
		t, err := c.kernelType(d)
		if err != nil {
			return nil, nil, fmt.Errorf("decl %s: %w", d, err)
		}
		c.use(t, true)
	}
	if c.err != nil {
		return nil, nil, c.err
	}
	return c, warnings, nil
}

// libbpfTypedefs are the kernel typedefs libbpf's bpf_helper_defs.h uses
// without declaring them; vmlinux.h provides them, so the header does too.
var libbpfTypedefs = []string{"__u8", "__u16", "__u32", "__u64", "__s8", "__s16", "__s32", "__s64", "__be16", "__be32", "__wsum"}

// kernelType finds a named type: "struct x", "union x", "enum x",
// "typedef x" or a bare name (typedef first, then struct, union, enum).
func (c *chooser) kernelType(spec string) (btf.Type, error) {
	kind, name, ok := strings.Cut(strings.TrimSpace(spec), " ")
	if !ok {
		kind, name = "", kind
	}
	name = strings.TrimSpace(name)
	for _, want := range []string{"typedef", "struct", "union", "enum"} {
		if kind != "" && kind != want {
			continue
		}
		key := want + " " + name
		if t, ok := c.canon[key]; ok {
			return t, nil
		}
		for _, s := range c.kernels {
			ts, _ := s.AnyTypesByName(name)
			for _, t := range ts {
				if declKey(t) == key {
					return t, nil
				}
			}
		}
	}
	if kind != "" && kind != "typedef" && kind != "struct" && kind != "union" && kind != "enum" {
		return nil, fmt.Errorf("unknown kind %q (want struct, union, enum or typedef)", kind)
	}
	return nil, fmt.Errorf("not found in kernel BTF")
}

// addField keeps one member path of a kernel type: "task_struct.pid",
// "task_struct.signal" or "signal_struct.rlim[7].rlim_cur".
func (c *chooser) addField(f string) error {
	rootName, rest, ok := strings.Cut(f, ".")
	if !ok {
		return errors.New("want TYPE.MEMBER[.MEMBER...]")
	}
	root, err := c.kernelType(rootName)
	if err != nil {
		return fmt.Errorf("%s: %w", rootName, err)
	}
	var path []pathElem
	for _, part := range strings.Split(rest, ".") {
		name, idx, _ := strings.Cut(part, "[")
		if name == "" {
			return fmt.Errorf("empty member name in %q", f)
		}
		path = append(path, pathElem{name: name})
		for idx != "" {
			var n int
			if _, err := fmt.Sscanf(idx, "%d]", &n); err != nil {
				return fmt.Errorf("bad index in %q", part)
			}
			path = append(path, pathElem{index: n, isIndex: true})
			_, idx, _ = strings.Cut(idx, "[")
		}
	}
	return c.keepPath(root, path)
}

// guardFor makes an include guard from a file name: vmlinux.h → __VMLINUX_H__.
func guardFor(name string) string {
	var b strings.Builder
	b.WriteString("__")
	for _, r := range strings.ToUpper(name) {
		if (r >= 'A' && r <= 'Z') || (r >= '0' && r <= '9') {
			b.WriteRune(r)
		} else {
			b.WriteByte('_')
		}
	}
	b.WriteString("__")
	return b.String()
}

// inputComment names the inputs by base name only, so the header does not
// depend on where the build ran.
func inputComment(cfg *Config) []string {
	var lines []string
	base := func(ps []string) string {
		var bs []string
		for _, p := range ps {
			bs = append(bs, filepath.Base(p))
		}
		return strings.Join(bs, " ")
	}
	if len(cfg.Objects) > 0 {
		lines = append(lines, "objects: "+base(cfg.Objects))
	}
	if cfg.Source != "" {
		lines = append(lines, "source: "+filepath.Base(cfg.Source))
	}
	if len(cfg.KernelBTF) > 0 {
		lines = append(lines, "kernel BTF: "+base(cfg.KernelBTF))
	}
	for _, f := range cfg.Fields {
		lines = append(lines, "field: "+f)
	}
	for _, d := range cfg.Decls {
		lines = append(lines, "decl: "+d)
	}
	lines = append(lines, "mode: "+cfg.Mode.String())
	return lines
}
