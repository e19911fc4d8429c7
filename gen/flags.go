package gen

import (
	"flag"
	"fmt"
	"strings"

	clang "github.com/skelgen/skelgen/internal/cc"
)

// Flags binds the main command's flags to a Config. The CLI parses them from
// its arguments and Check from the go:generate lines it finds, so both read
// them the same way.
type Flags struct {
	cfg     Config
	target  string
	cc      clang.Flags
	runtime string
}

// StringList is a repeatable string flag (flag.Value), for the CLI's
// subcommands too.
type StringList []string

func (s *StringList) String() string     { return strings.Join(*s, ",") }
func (s *StringList) Set(v string) error { *s = append(*s, v); return nil }

// aotFlag is -aot: a boolean flag (-aot alone is -aot=true) that also
// takes auto, the default.
type aotFlag Config

func (a *aotFlag) IsBoolFlag() bool { return true }

func (a *aotFlag) String() string {
	switch {
	case a == nil || a.AOT && a.InterpretHooks:
		return "auto"
	case a.AOT:
		return "true"
	}
	return "false"
}

func (a *aotFlag) Set(v string) error {
	switch v {
	case "auto":
		a.AOT, a.InterpretHooks = true, true
	case "true", "1":
		a.AOT, a.InterpretHooks = true, false
	case "false", "0":
		a.AOT, a.InterpretHooks = false, false
	default:
		return fmt.Errorf("want true, false or auto")
	}
	return nil
}

// Usage is the main command's synopsis.
const Usage = "skelgen [flags] INPUT...  (INPUT is x.bpf.o or x.bpf.c, or several .bpf.c linked into one object; flags come first)"

// NewFlags defines the main command's flags on fs.
func NewFlags(fs *flag.FlagSet) *Flags {
	f := &Flags{}
	fs.StringVar(&f.cfg.OutputDir, "o", "", "output `dir`ectory (default: the input's directory)")
	fs.StringVar(&f.cfg.Package, "pkg", "", "Go package `name` (default: $GOPACKAGE, else the package of the directory's Go files, else the directory name)")
	fs.StringVar(&f.cfg.Stem, "stem", "", "`name` of the outputs and identifier prefix (default: the input's base name)")
	fs.StringVar(&f.target, "target", "bpfel,bpfeb", "comma-separated `targets` of a C input: bpfel, bpfeb or GOARCH names")
	f.cc.Define(fs)
	fs.Var((*StringList)(&f.cfg.Types), "type", "C `type` to generate even if unused; also types ring buffer and perf records (\"event\" or \"map=event\"); repeatable")
	fs.StringVar(&f.runtime, "runtime", "auto", "how the package gets skelgen's runtime: import (from skelgen's module), vendor (a copy in the module, under internal/skelgenrt) or auto (import when the module's go.mod requires skelgen's module, as go tool skelgen's does; else vendor)")
	f.cfg.AOT, f.cfg.InterpretHooks = true, true
	fs.Var((*aotFlag)(&f.cfg), "aot", "translate ubpf/ programs to Go ahead of time: true (all), false (none: interpret them) or auto (the programs that can run often: record hooks and those Go runs; begin, end, interval and lost hooks are interpreted)")
	fs.StringVar(&f.cfg.MakeBase, "makebase", "", "write make depfiles with paths relative to `dir`")
	fs.StringVar(&f.cfg.Header, "header", "", "regenerate the minimal CO-RE `file` (e.g. vmlinux.h) the C input includes, beside the skeleton")
	fs.StringVar(&f.cfg.Kernels, "kernels", "", "fail unless every kernel program loads on each kernel BTF file in `dir` (.btf, .btf.tar.xz, vmlinux ELF): the matrix of skelgen check -kernels")
	fs.StringVar(&f.cfg.Source, "src", "", "for an object INPUT, the C `file` it was built from, read as a C input is for its constants, record types and host parameter names")
	fs.StringVar(&f.cfg.BTFFor, "btf-for", "", "embed, per kernel BTF file in `dir`, the minimal BTF the kernel programs' CO-RE relocations need, for Load on kernels without BTF of their own")
	fs.Var((*StringList)(&f.cfg.HeaderBTF), "btf", "kernel BTF `file` for -header (repeatable; default /sys/kernel/btf/vmlinux)")
	return f
}

// Config completes the Config from the parsed flags and the positional
// arguments.
func (f *Flags) Config(args []string) (Config, error) {
	if len(args) == 0 {
		return Config{}, fmt.Errorf("no INPUT after the flags (usage: %s)", Usage)
	}
	if len(args) > 1 {
		for _, a := range args {
			if !IsCSource(a) {
				return Config{}, fmt.Errorf("%s: several inputs must all be C sources, linked into one object (link objects with bpftool gen object and give the result; usage: %s)", a, Usage)
			}
		}
	}
	cfg := f.cfg
	cfg.CC = f.cc.CC
	cfg.Input = args[0]
	cfg.MoreInputs = args[1:]
	if IsCSource(cfg.Input) {
		targets, err := ParseTargets(f.target)
		if err != nil {
			return cfg, err
		}
		cfg.Targets = targets
		if cfg.CFlags, err = f.cc.Split(); err != nil {
			return cfg, err
		}
	}
	switch f.runtime {
	case "auto":
		cfg.ImportRuntime, cfg.RuntimeAuto = false, true
	case "vendor":
		cfg.ImportRuntime, cfg.RuntimeAuto = false, false
	case "import":
		cfg.ImportRuntime, cfg.RuntimeAuto = true, false
	default:
		return cfg, fmt.Errorf("-runtime %q: want auto, vendor or import", f.runtime)
	}
	return cfg, nil
}
