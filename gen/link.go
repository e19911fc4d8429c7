package gen

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"strings"
	"sync"
)

// compileLinked compiles cfg's sources for target t and, when there are
// several, links their objects into one with libbpf's static linking
// (bpftool gen object): globals resolved across the sources, static
// functions and variables kept apart. deps are every file the compiles
// read.
func compileLinked(ctx context.Context, cfg Config, t Target, overlay map[string][]byte, warn func(string)) (obj []byte, deps []string, err error) {
	sources := append([]string{cfg.Input}, cfg.MoreInputs...)
	var objs [][]byte
	for _, src := range sources {
		opts := cfg.compileOptions(t, overlay)
		opts.Source, opts.Warn = src, warn
		o, d, err := Compile(ctx, opts)
		if err != nil {
			return nil, nil, err
		}
		objs, deps = append(objs, o), append(deps, d...)
	}
	if len(objs) == 1 {
		return objs[0], deps, nil
	}
	obj, err = linkObjects(ctx, sources, objs)
	return obj, deps, err
}

// compiledTarget is what compileLinked made of one target, with the
// warnings it gave in their order, and the sources' constants for the
// target (targetConstants), with theirs.
type compiledTarget struct {
	obj      []byte
	deps     []string
	warnings []string
	err      error

	consts     []cConst
	constWarns []string
	constErr   error
}

// compileTargets compiles cfg's sources for each target, and evaluates
// their constants for it, as many at once as there are processors: each
// is a clang run of its own, so a generate for bpfel and bpfeb takes
// about the time of one on two. What it
// returns is in the targets' order, whatever order the runs end in, so
// that the caller reports warnings and the first error as a sequential
// run would.
func compileTargets(ctx context.Context, cfg Config, targets []Target, overlay map[string][]byte) []compiledTarget {
	out := make([]compiledTarget, len(targets))
	slots := make(chan struct{}, max(runtime.GOMAXPROCS(0), 1))
	var wg sync.WaitGroup
	sources := append([]string{cfg.Input}, cfg.MoreInputs...)
	for i, t := range targets {
		c := &out[i]
		wg.Go(func() {
			slots <- struct{}{}
			defer func() { <-slots }()
			c.obj, c.deps, c.err = compileLinked(ctx, cfg, t, overlay, func(w string) { c.warnings = append(c.warnings, w) })
		})
		wg.Go(func() {
			slots <- struct{}{}
			defer func() { <-slots }()
			c.consts, c.constErr = targetConstants(ctx, cfg, t, overlay, sources, func(w string) { c.constWarns = append(c.constWarns, w) })
		})
	}
	wg.Wait()
	return out
}

// linkObjects links the objects compiled from sources with bpftool gen
// object, the linker libbpf's skeletons are made with.
func linkObjects(ctx context.Context, sources []string, objs [][]byte) ([]byte, error) {
	what := "linking " + strings.Join(sources, ", ")
	bpftool, err := exec.LookPath("bpftool")
	if err != nil {
		return nil, fmt.Errorf("%s: several sources are linked with bpftool gen object, and bpftool is not on PATH (install bpftool, or give one source)", what)
	}
	dir, err := os.MkdirTemp("", "skelgen-link-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(dir)
	out := filepath.Join(dir, "linked.o")
	args := []string{"gen", "object", out}
	for i, o := range objs {
		// bpftool's messages name the inputs: name them after the sources.
		p := filepath.Join(dir, fmt.Sprintf("%d-%s.o", i, DefaultStem(sources[i])))
		if err := os.WriteFile(p, o, 0o644); err != nil {
			return nil, err
		}
		args = append(args, p)
	}
	cmd := exec.CommandContext(ctx, bpftool, args...)
	var stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stderr, &stderr
	if err := cmd.Run(); err != nil {
		msg := strings.ReplaceAll(stderr.String(), dir+string(filepath.Separator), "")
		if strings.Contains(msg, "unsupported byte order") {
			msg += "hint: this bpftool's libbpf links only objects of the host's byte order (libbpf 1.5 links both): give -target with targets of that order, e.g. -target bpfel or -target amd64,arm64\n"
		}
		return nil, fmt.Errorf("%s: bpftool gen object: %w\n%s", what, err, msg)
	}
	return os.ReadFile(out)
}

// readSources reads what the skeleton takes from the C sources' text:
// record types, host parameter names and enums (the constants are
// clang's, targetConstants). With several sources the first to say
// something of a map or function wins.
func readSources(sc *SkeletonConfig, sources []string) error {
	var bases []string
	for _, p := range sources {
		bases = append(bases, filepath.Base(p))
	}
	sc.Source = strings.Join(bases, ", ")
	sc.Records, sc.ExternParams = map[string]RecordGuess{}, map[string][]string{}
	enums := map[string]bool{}
	for _, path := range sources {
		src, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		for k, v := range recordsFromSource(filepath.Base(path), src) {
			if _, ok := sc.Records[k]; !ok {
				sc.Records[k] = v
			}
		}
		for k, v := range externParamNames(src) {
			if _, ok := sc.ExternParams[k]; !ok {
				sc.ExternParams[k] = v
			}
		}
		_, es := sourceConstants(string(src))
		for _, e := range es {
			if !enums[e] {
				enums[e] = true
				sc.SourceEnums = append(sc.SourceEnums, e)
			}
		}
	}
	return nil
}

// typesSource is the source to compile for the types names, declared only
// in a source (a record struct defined inside a function): with several
// sources, the first whose text names them all.
func typesSource(cfg Config, names []string) string {
	if len(cfg.MoreInputs) == 0 {
		return cfg.Input
	}
	for _, path := range append([]string{cfg.Input}, cfg.MoreInputs...) {
		src, err := os.ReadFile(path)
		if err != nil {
			continue
		}
		all := true
		for _, n := range names {
			if _, tag, ok := strings.Cut(n, " "); ok {
				n = tag
			}
			if !regexp.MustCompile(`\b` + regexp.QuoteMeta(n) + `\b`).Match(src) {
				all = false
				break
			}
		}
		if all {
			return path
		}
	}
	return cfg.Input
}
