package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"strings"

	"github.com/skelgen/skelgen/gen"
)

// stringList is a repeatable flag.
type stringList []string

func (s *stringList) String() string     { return strings.Join(*s, ",") }
func (s *stringList) Set(v string) error { *s = append(*s, v); return nil }

const generateHelp = "skelgen [flags] INPUT  (INPUT is x.bpf.o or x.bpf.c; flags come first)"

// generateFlags are the main command's flags; check re-parses go:generate
// lines with the same definitions.
type generateFlags struct {
	cfg     gen.Config
	target  string
	cflags  string
	runtime string
	aot     bool
}

func newGenerateFlagSet(stderr io.Writer) (*generateFlags, *flag.FlagSet) {
	gf := &generateFlags{}
	fs := newFlagSet("skelgen", stderr, generateHelp)
	fs.StringVar(&gf.cfg.OutputDir, "o", "", "output `dir`ectory (default: the input's directory)")
	fs.StringVar(&gf.cfg.Package, "pkg", "", "Go package `name` (default: $GOPACKAGE, else the directory name)")
	fs.StringVar(&gf.cfg.Stem, "stem", "", "`name` of the outputs and identifier prefix (default: the input's base name)")
	fs.StringVar(&gf.target, "target", "bpfel,bpfeb", "comma-separated `targets` of a C input: bpfel, bpfeb or GOARCH names")
	fs.StringVar(&gf.cfg.CC, "cc", "", "C `compiler` (default: clang-19, else clang)")
	fs.StringVar(&gf.cflags, "cflags", gen.DefaultCFlags, "C compiler `flags`")
	fs.Var((*stringList)(&gf.cfg.Types), "type", "C `type` to generate even if unused; also types ring buffer and perf records (\"event\" or \"map=event\"); repeatable")
	fs.StringVar(&gf.runtime, "runtime", "vendor", "how the package gets the runtime: vendor (carry a copy) or import")
	fs.BoolVar(&gf.aot, "aot", true, "translate ubpf/ programs to Go ahead of time")
	fs.StringVar(&gf.cfg.MakeBase, "makebase", "", "write make depfiles with paths relative to `dir`")
	return gf, fs
}

// config completes the Config from the parsed flags and positional args.
func (gf *generateFlags) config(args []string) (gen.Config, error) {
	if len(args) != 1 {
		return gen.Config{}, fmt.Errorf("want exactly one INPUT after the flags, got %d arguments (%s)", len(args), generateHelp)
	}
	cfg := gf.cfg
	cfg.Input = args[0]
	if gen.IsCSource(cfg.Input) {
		targets, err := gen.ParseTargets(gf.target)
		if err != nil {
			return cfg, err
		}
		cfg.Targets = targets
		if cfg.CFlags, err = gen.SplitFlags(gf.cflags); err != nil {
			return cfg, fmt.Errorf("-cflags: %w", err)
		}
	}
	switch gf.runtime {
	case "vendor", "import":
	default:
		return cfg, fmt.Errorf("-runtime %q: want vendor or import", gf.runtime)
	}
	return cfg, nil
}

func cmdGenerate(args []string, stdout, stderr io.Writer) error {
	gf, fs := newGenerateFlagSet(stderr)
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	cfg, err := gf.config(fs.Args())
	if err != nil {
		return err
	}
	files, err := gen.Generate(context.Background(), cfg)
	if err != nil {
		return err
	}
	if err := gen.WriteFiles(files); err != nil {
		return err
	}
	for _, f := range files {
		fmt.Fprintf(stdout, "wrote %s\n", f.Path)
	}
	return nil
}
