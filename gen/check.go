package gen

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"go/build"
	"go/parser"
	"go/token"
	"io"
	"maps"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"

	"golang.org/x/mod/modfile"
	"golang.org/x/tools/go/packages"

	clang "github.com/skelgen/skelgen/internal/cc"
)

// CheckOptions configure Check.
type CheckOptions struct {
	// Patterns are package patterns, as for go list; empty means ".".
	Patterns []string
	// Dir is the directory patterns are resolved in; empty means the
	// current directory.
	Dir string
	// Out receives the report.
	Out io.Writer
	// Committed compiles no C source: each line's objects (and -header
	// file) are read from the files a previous run wrote and trusted, as
	// the ok line then says. Without it, a line whose C source cannot be
	// compiled (no compiler) is reported unverified.
	Committed bool
	// CC is a compiler to trust besides clang-19, clang and clang-N on
	// PATH: the lines whose -cc is CC, literally, are compiled with it;
	// those naming any other are refused (refuseCompile).
	CC string
}

// CheckResult summarises a check.
type CheckResult struct {
	// Generators is the number of skelgen go:generate lines found.
	Generators int
	// Stale lists the generated files that differ from a fresh run.
	Stale []string
	// Broken lists generated packages that do not type-check.
	Broken []string
	// Orphans lists files skelgen generated that no go:generate line
	// produces any more: skeletons whose line was removed, runtime copies
	// no package uses, and stray files inside a copy.
	Orphans []string
	// Unverified lists the C sources that could not be compiled (no
	// compiler) without CheckOptions.Committed: their objects, and what
	// is made from them, were compared as committed, not rebuilt.
	Unverified []string
	// Trusted lists the C sources whose committed objects were used
	// because of CheckOptions.Committed.
	Trusted []string
	// Empty lists the packages named without a wildcard (not matched by
	// a pattern with ...) that have no skelgen go:generate line: nothing
	// of theirs was checked.
	Empty []string
}

// OK reports whether the check found nothing wrong and nothing it could
// not verify.
func (r *CheckResult) OK() bool {
	return len(r.Stale) == 0 && len(r.Broken) == 0 && len(r.Orphans) == 0 && len(r.Unverified) == 0 && len(r.Empty) == 0
}

// Check finds the packages whose go:generate lines run skelgen (read as
// go generate reads them, test files too: generateLines; a line running a
// program named skelgen that is not skelgen is an error: skelgenArgs),
// regenerates their files in memory (as many lines at once as there are
// processors, reported in the lines' order), reports every file that
// differs from what is on disk with a short diff or is missing, reports
// generated files no line produces any more (findOrphans), and
// type-checks the packages.
//
// A pattern that names no package is an error, as for go list; a package
// named without a wildcard that has no skelgen line is reported (Empty).
// A C source is compiled as go generate would, with a compiler and flags
// check trusts (refuseCompile, else an error); when its compiler is
// missing, the line is reported unverified and the rest of its files are
// compared against its committed objects, unless opts.Committed says to
// trust those.
func Check(ctx context.Context, opts CheckOptions) (*CheckResult, error) {
	out := opts.Out
	if out == nil {
		out = io.Discard
	}
	patterns := opts.Patterns
	if len(patterns) == 0 {
		patterns = []string{"."}
	}
	pkgs, err := packages.Load(&packages.Config{
		Context: ctx,
		Dir:     opts.Dir,
		// The checked packages are parsed and type-checked, their
		// dependencies read from export data (not from source).
		Mode:  packages.NeedName | packages.NeedFiles | packages.NeedTypes | packages.NeedSyntax | packages.NeedTypesInfo | packages.NeedImports | packages.NeedModule,
		Tests: false,
	}, patterns...)
	if err != nil {
		return nil, err
	}
	if err := loadErrors(pkgs); err != nil {
		return nil, err
	}
	if err := unmatchedPatterns(patterns, opts.Dir, pkgs); err != nil {
		return nil, err
	}
	// The lines' generates run ahead, several at once (aheadGenerates);
	// the loop below takes their results in the lines' order, so the
	// report is what one generate after the other would give.
	plan := planLines(pkgs, opts, true)
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	gens := aheadGenerates(ctx, plan, runtime.GOMAXPROCS(0))
	res := &CheckResult{}
	headers := false // a trusted line has a -header file
	// A file several lines generate (their module's go.mod): compare it
	// once.
	compared := map[string]bool{}
	// produced holds every file the go:generate lines make, written or not.
	produced := map[string]bool{}
	next := 0 // the plan's next line
	// The runtime copies the lines vendor, by directory: each is compared
	// once, after all lines, for what all of them generate (copyPlan), as
	// GenerateAll writes it; with the first line that vendors it.
	copies := copyPlans{}
	copyLines := map[string]generateLine{}
	compare := func(files []File, gl generateLine, committed bool, why string) error {
		for _, f := range files {
			if f.Remove {
				// Left over from an earlier run: the orphan check
				// reports it if it is still there.
				continue
			}
			produced[f.Path] = true
			if strings.HasSuffix(f.Path, ".d") {
				continue
			}
			if committed && strings.HasSuffix(f.Path, ".o") {
				continue
			}
			if compared[f.Path] {
				continue
			}
			compared[f.Path] = true
			old, err := readOutput(f.Path)
			if errors.Is(err, os.ErrNotExist) {
				res.Stale = append(res.Stale, f.Path)
				fmt.Fprintf(out, "%s: missing (generated by %s:%d; regenerate with go generate %s)\n", rel(opts.Dir, f.Path), rel(opts.Dir, gl.file), gl.line, rel(opts.Dir, gl.file))
				continue
			} else if err != nil {
				return err
			}
			if bytes.Equal(old, f.Data) {
				continue
			}
			res.Stale = append(res.Stale, f.Path)
			fmt.Fprintf(out, "%s: stale%s (regenerate with go generate %s)\n", rel(opts.Dir, f.Path), why, rel(opts.Dir, gl.file))
			fmt.Fprint(out, shortDiff(old, f.Data, 12))
		}
		return nil
	}
	for _, pkg := range pkgs {
		if next == len(plan) || plan[next].pkg != pkg {
			// No line of pkg planned: it has none.
			if !matchesWildcard(patterns, opts.Dir, pkg) {
				res.Empty = append(res.Empty, pkg.PkgPath)
				fmt.Fprintf(out, "%s: no skelgen go:generate line in its Go files: nothing to check (skelgen check ./... checks the packages below the current directory)\n", pkg.PkgPath)
			}
			continue
		}
		for ; next < len(plan) && plan[next].pkg == pkg; next++ {
			pl := plan[next]
			if pl.err != nil {
				return nil, pl.err
			}
			gl, cfg := pl.gl, pl.cfg
			res.Generators++
			if gl.note != "" {
				fmt.Fprintf(out, "%s:%d: %s\n", rel(opts.Dir, gl.file), gl.line, gl.note)
			}
			switch {
			case opts.Committed && IsCSource(cfg.Input):
				res.Trusted = append(res.Trusted, cfg.Input)
				headers = headers || cfg.Header != ""
			case pl.ccErr != nil:
				// Compared without it; the line stays unverified.
				res.Unverified = append(res.Unverified, cfg.Input)
				fmt.Fprintf(out, "%s:%d: %s not compiled: %v; its objects and the files made from them are unverified (install the compiler, or run skelgen check -committed to trust the committed objects)\n", rel(opts.Dir, gl.file), gl.line, rel(opts.Dir, cfg.Input), pl.ccErr)
			}
			files, rc, err := gens.take()
			if err != nil {
				return nil, fmt.Errorf("%s:%d: %w", gl.file, gl.line, err)
			}
			if rc != nil {
				if copies[rc.dir] == nil {
					copyLines[rc.dir] = gl
				}
				copies.add(*rc, files)
			}
			if err := compare(files, gl, cfg.Committed, ""); err != nil {
				return nil, err
			}
		}
		for _, e := range pkg.Errors {
			res.Broken = append(res.Broken, pkg.PkgPath)
			fmt.Fprintf(out, "%s: does not type-check: %v\n", pkg.PkgPath, e)
		}
	}
	for _, dir := range slices.Sorted(maps.Keys(copies)) {
		files, err := copies[dir].files(func(string) {})
		if err != nil {
			return nil, err
		}
		if err := compare(files, copyLines[dir], false, ": a runtime copy holds the declarations its module's Go files name and what those need, so a name added or dropped changes it"); err != nil {
			return nil, err
		}
	}
	if err := findOrphans(pkgs, produced, opts.Dir, out, res); err != nil {
		return nil, err
	}
	if res.OK() {
		fmt.Fprintf(out, "ok: %d skelgen go:generate lines, all generated files current", res.Generators)
		if n := len(res.Trusted); n > 0 {
			what := "C sources"
			if n == 1 {
				what = "C source"
			}
			trusted := "objects"
			if headers {
				trusted = "objects and headers"
			}
			fmt.Fprintf(out, " (-committed: %d %s not compiled, the committed %s trusted)", n, what, trusted)
		}
		fmt.Fprintln(out)
	}
	return res, nil
}

// plannedLine is a go:generate line of pkg with the Config Check runs it
// with; ccErr says why its C compiler cannot run (the line is then
// compared against its committed objects).
// A line with err is the plan's last: pkg's lines could not be read
// (gl is then zero), or the line's arguments are wrong.
type plannedLine struct {
	pkg   *packages.Package
	gl    generateLine
	cfg   Config
	ccErr error
	err   error
	skip  bool // not to be generated (aheadGenerates): GenerateAll's cache spares it
}

// planLines returns the skelgen lines of pkgs in order, each with its
// Config, up to the first line or package that cannot be read. With
// check set, a line whose compile the check does not trust is an error
// (refuseCompile); go generate, and GenerateAll, run the tree's lines as
// written.
func planLines(pkgs []*packages.Package, opts CheckOptions, check bool) (plan []plannedLine) {
	for _, pkg := range pkgs {
		lines, err := generateLines(pkg)
		if err != nil {
			return append(plan, plannedLine{pkg: pkg, err: err})
		}
		for _, gl := range lines {
			cfg, err := gl.config()
			if err != nil {
				return append(plan, plannedLine{pkg: pkg, gl: gl, err: fmt.Errorf("%s:%d: %w", gl.file, gl.line, err)})
			}
			if cfg.Package == "" {
				cfg.Package = gl.pkg
			}
			pl := plannedLine{pkg: pkg, gl: gl}
			if IsCSource(cfg.Input) {
				modDir := gl.dir
				if pkg.Module != nil {
					modDir = pkg.Module.Dir
				}
				switch {
				case opts.Committed:
					cfg.Committed = true
				case !check:
					// Run as written, as go generate would.
				default:
					if err := refuseCompile(cfg, opts.CC, modDir); err != nil {
						return append(plan, plannedLine{pkg: pkg, gl: gl, err: fmt.Errorf("%s:%d: %w", gl.file, gl.line, err)})
					}
					if pl.ccErr = compilerMissing(cfg.CC); pl.ccErr != nil {
						cfg.Committed = true
					}
				}
			}
			pl.cfg = cfg
			plan = append(plan, pl)
		}
	}
	return plan
}

// generates are the results of Generate for a plan's lines, which
// aheadGenerates runs ahead of the caller.
type generates struct {
	jobs  []*generateJob
	slots chan struct{}
	next  int
}

type generateJob struct {
	files []File
	rc    *runtimeCopy // the runtime copy the line's package imports, if it vendors one
	err   error
	done  chan struct{}
	slot  bool // it took a slot
}

// aheadGenerates starts generate for the plan's lines in order, n at a
// time: a line starts once fewer than n results are running or waiting to
// be taken, so that no more than n lines' files are held at once.
// Cancelling ctx stops what has not started. Generate writes nothing, so
// lines run at once cannot see each other's outputs, as in a sequential
// check.
func aheadGenerates(ctx context.Context, plan []plannedLine, n int) *generates {
	g := &generates{slots: make(chan struct{}, max(n, 1))}
	for range plan {
		g.jobs = append(g.jobs, &generateJob{done: make(chan struct{})})
	}
	go func() {
		for i, pl := range plan {
			if pl.err != nil {
				return // the last; Check stops there
			}
			if pl.skip {
				close(g.jobs[i].done)
				continue
			}
			select {
			case g.slots <- struct{}{}:
			case <-ctx.Done():
				for _, j := range g.jobs[i:] {
					j.err = ctx.Err()
					close(j.done)
				}
				return
			}
			go func() {
				j := g.jobs[i]
				j.slot = true
				j.files, j.rc, j.err = generate(ctx, pl.cfg)
				close(j.done)
			}()
		}
	}()
	return g
}

// take returns the next line's result, waiting for it, and frees its
// slot for a line further on: the files of generate, without the runtime
// copy, and the copy the line vendors.
func (g *generates) take() ([]File, *runtimeCopy, error) {
	j := g.jobs[g.next]
	g.next++
	<-j.done
	if j.slot { // not when skipped, or never started (ctx cancelled)
		<-g.slots
	}
	files, rc, err := j.files, j.rc, j.err
	j.files = nil
	return files, rc, err
}

// compilerMissing returns why the compiler of a line (its -cc, else
// clang-19 or clang) cannot be run, or nil.
func compilerMissing(cc string) error {
	if cc == "" {
		if _, err := clang.Find(""); err != nil {
			return errors.New("no C compiler: neither clang-19 nor clang is on PATH")
		}
		return nil
	}
	if _, err := exec.LookPath(cc); err != nil {
		return fmt.Errorf("no C compiler: -cc %s: %w", cc, err)
	}
	return nil
}

// loadErrors returns the errors of the packages that could not be
// loaded at all (a directory or import path that does not exist, a
// directory without Go files), as go list reports them.
func loadErrors(pkgs []*packages.Package) error {
	var msgs []string
	for _, pkg := range pkgs {
		if len(pkg.GoFiles) > 0 || len(pkg.Errors) == 0 {
			continue
		}
		for _, e := range pkg.Errors {
			msgs = append(msgs, fmt.Sprintf("%s: %s", pkg.ID, e.Msg))
		}
	}
	if len(msgs) > 0 {
		return errors.New(strings.Join(msgs, "\n"))
	}
	return nil
}

// isWildcard reports whether a package pattern may match any number of
// packages: it has ... or is one of go list's meta-patterns.
func isWildcard(pattern string) bool {
	switch pattern {
	case "all", "std", "cmd", "tool", "work":
		return true
	}
	return strings.Contains(pattern, "...")
}

// unmatchedPatterns returns an error naming the wildcard patterns that
// match none of pkgs (go list only warns of them).
func unmatchedPatterns(patterns []string, dir string, pkgs []*packages.Package) error {
	var bad []string
	for _, p := range patterns {
		if !strings.Contains(p, "...") {
			continue
		}
		matched := false
		for _, pkg := range pkgs {
			if matchPattern(p, dir, pkg) {
				matched = true
				break
			}
		}
		if !matched {
			bad = append(bad, p)
		}
	}
	if len(bad) > 0 {
		return fmt.Errorf("pattern %s: matched no packages", strings.Join(bad, ", "))
	}
	return nil
}

// matchesWildcard reports whether pkg is matched by one of the wildcard
// patterns.
func matchesWildcard(patterns []string, dir string, pkg *packages.Package) bool {
	for _, p := range patterns {
		if isWildcard(p) && (!strings.Contains(p, "...") || matchPattern(p, dir, pkg)) {
			return true
		}
	}
	return false
}

// matchPattern reports whether the pattern with ... matches pkg as go
// list matches it: a pattern starting with . or .. or / against the
// package's directory, any other against its import path; ... matches
// any string, and a trailing /... also the empty one.
func matchPattern(pattern, dir string, pkg *packages.Package) bool {
	name := pkg.PkgPath
	if isLocalPattern(pattern) {
		if len(pkg.GoFiles) == 0 {
			return false
		}
		if !filepath.IsAbs(pattern) {
			if dir == "" {
				dir, _ = os.Getwd()
			}
			pattern = filepath.Join(dir, pattern)
		}
		pattern = filepath.ToSlash(filepath.Clean(pattern))
		name = filepath.ToSlash(filepath.Dir(pkg.GoFiles[0]))
	}
	re := regexp.QuoteMeta(pattern)
	re = strings.ReplaceAll(re, `\.\.\.`, `.*`)
	if rest, ok := strings.CutSuffix(re, `/.*`); ok {
		re = rest + `(/.*)?`
	}
	ok, err := regexp.MatchString("^"+re+"$", name)
	return err == nil && ok
}

// isLocalPattern reports whether a package pattern names directories
// rather than import paths.
func isLocalPattern(p string) bool {
	return p == "." || p == ".." || strings.HasPrefix(p, "./") || strings.HasPrefix(p, "../") || filepath.IsAbs(p)
}

func rel(dir, path string) string {
	if dir == "" {
		dir, _ = os.Getwd()
	}
	if r, err := filepath.Rel(dir, path); err == nil && !strings.HasPrefix(r, "..") {
		return r
	}
	return path
}

// generateLine is one //go:generate line that runs skelgen.
type generateLine struct {
	file string
	line int
	dir  string
	pkg  string   // the package clause of the file: go generate's $GOPACKAGE
	args []string // skelgen's arguments
	note string   // what go generate runs that check does not
}

// config parses the line's arguments as the main command would, with paths
// made absolute against the package directory (go generate runs there).
func (gl generateLine) config() (Config, error) {
	fs := flag.NewFlagSet("skelgen", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	flags := NewFlags(fs)
	if err := fs.Parse(gl.args); err != nil {
		return Config{}, err
	}
	cfg, err := flags.Config(fs.Args())
	if err != nil {
		return cfg, err
	}
	abs := func(p string) string {
		if p == "" || filepath.IsAbs(p) {
			return p
		}
		return filepath.Join(gl.dir, p)
	}
	cfg.Input = abs(cfg.Input)
	for i, p := range cfg.MoreInputs {
		cfg.MoreInputs[i] = abs(p)
	}
	cfg.Source = abs(cfg.Source)
	cfg.OutputDir = abs(cfg.OutputDir)
	if cfg.OutputDir == "" {
		cfg.OutputDir = gl.dir
	}
	if cfg.MakeBase != "" {
		cfg.MakeBase = abs(cfg.MakeBase)
	}
	if cfg.Header != "" {
		cfg.Header = abs(cfg.Header)
	}
	for i, b := range cfg.HeaderBTF {
		cfg.HeaderBTF[i] = abs(b)
	}
	cfg.Kernels, cfg.BTFFor = abs(cfg.Kernels), abs(cfg.BTFFor)
	for i, f := range cfg.CFlags {
		// -I and -iquote paths are relative to the package directory too;
		// the compiler runs in the source's directory.
		for _, p := range []string{"-I", "-iquote", "-idirafter", "-isystem"} {
			if strings.HasPrefix(f, p) && len(f) > len(p) {
				cfg.CFlags[i] = p + abs(f[len(p):])
			}
		}
	}
	return cfg, nil
}

// goModule is what check knows of the module holding a go:generate line.
type goModule struct {
	path, dir string
	tools     []string // go.mod's tool directives
}

// generateLines returns the go:generate lines of pkg's directory that run
// skelgen, read as go generate reads them: from the files of the build
// with the "generate" tag, test files too, in go generate's order.
func generateLines(pkg *packages.Package) ([]generateLine, error) {
	dir := pkg.Dir
	if dir == "" && len(pkg.GoFiles) > 0 {
		dir = filepath.Dir(pkg.GoFiles[0])
	}
	ctxt := build.Default
	ctxt.BuildTags = append(slices.Clip(ctxt.BuildTags), "generate")
	bp, err := ctxt.ImportDir(dir, 0)
	if _, none := err.(*build.NoGoError); err != nil && !none {
		return nil, err
	}
	// The package's files in name order, then the external test's.
	files := slices.Sorted(slices.Values(slices.Concat(bp.GoFiles, bp.CgoFiles, bp.TestGoFiles)))
	files = append(files, bp.XTestGoFiles...)
	for i, f := range files {
		files[i] = filepath.Join(dir, f)
	}
	var mod *goModule
	if m := pkg.Module; m != nil {
		mod = &goModule{path: m.Path, dir: m.Dir}
		if m.GoMod != "" {
			data, err := os.ReadFile(m.GoMod)
			if err != nil {
				return nil, err
			}
			f, err := modfile.Parse(m.GoMod, data, nil)
			if err != nil {
				return nil, err
			}
			for _, t := range f.Tool {
				mod.tools = append(mod.tools, t.Path)
			}
		}
	}
	return generateLinesIn(files, mod)
}

// generateLinesIn returns the go:generate lines of files that run skelgen;
// mod is the module holding them, if known.
func generateLinesIn(files []string, mod *goModule) ([]generateLine, error) {
	var out []generateLine
	for _, file := range files {
		data, err := os.ReadFile(file)
		if err != nil {
			return nil, err
		}
		f, err := parser.ParseFile(token.NewFileSet(), file, data, parser.PackageClauseOnly)
		if err != nil {
			continue // go generate skips a file without a package clause
		}
		g := &generateFile{path: file, pkg: f.Name.Name, commands: map[string][]string{}}
		for i, line := range strings.SplitAfter(string(data), "\n") {
			if !strings.HasPrefix(line, "//go:generate ") && !strings.HasPrefix(line, "//go:generate\t") {
				continue
			}
			words, err := g.words(line, i+1)
			if err != nil {
				return nil, fmt.Errorf("%s:%d: %w", file, i+1, err)
			}
			if words == nil {
				continue
			}
			args, note, ok, err := skelgenArgs(words, filepath.Dir(file), mod)
			if err != nil {
				return nil, fmt.Errorf("%s:%d: %w", file, i+1, err)
			}
			if ok {
				out = append(out, generateLine{file: file, line: i + 1, dir: filepath.Dir(file), pkg: g.pkg, args: args, note: note})
			}
		}
	}
	return out, nil
}

// skelgenCmd is the package go generate lines run as skelgen.
const skelgenCmd = "github.com/skelgen/skelgen/cmd/skelgen"

// skelgenArgs recognises the words of a go:generate line (in dir, of the
// module mod) that run skelgen and returns skelgen's arguments: a skelgen
// on PATH, go run skelgenCmd[@version] (or of ./cmd/skelgen in skelgen's
// own module), go tool skelgen with go.mod's tool directive naming
// skelgenCmd, and a binary named skelgen run by its path, with a note that
// go generate runs that binary. ok is false for a line that runs something
// else; err says why a line running a program named skelgen is not taken
// for skelgen.
func skelgenArgs(words []string, dir string, mod *goModule) (args []string, note string, ok bool, err error) {
	named := func(p string) bool {
		p, _, _ = strings.Cut(p, "@")
		return strings.TrimSuffix(path.Base(filepath.ToSlash(p)), ".exe") == "skelgen"
	}
	if len(words) == 0 || !named(words[0]) && (words[0] != "go" || len(words) < 3 || words[1] != "run" && words[1] != "tool") {
		return nil, "", false, nil
	}
	if words[0] != "go" {
		if strings.ContainsAny(words[0], `/\`) {
			note = "go generate runs " + words[0] + ", a binary check cannot see into; the files were compared with what check's own skelgen makes"
		}
		return words[1:], note, true, nil
	}
	i := 2
	for i < len(words) && strings.HasPrefix(words[i], "-") {
		i++
	}
	if i == len(words) || !named(words[i]) {
		return nil, "", false, nil
	}
	run, target := words[1], words[i]
	for _, f := range words[2:i] {
		if !goRunFlag.MatchString(strings.TrimPrefix(f, "-")) {
			return nil, "", false, fmt.Errorf("go %s flag %s: check cannot tell what go %s runs with it, so the line is not taken for skelgen (skelgen check allows -mod=mod, -mod=readonly, -v, -x, -a, -race, -trimpath and -buildvcs there)", run, f, run)
		}
	}
	cmd := "go " + run + " " + target
	switch {
	case run == "tool" && (target == "skelgen" || target == skelgenCmd):
		if mod == nil {
			return nil, "", false, fmt.Errorf("%s: no go.mod, whose tool directive names the tool", cmd)
		}
		var tools []string
		for _, t := range mod.tools {
			if t == target || execName(t) == target {
				tools = append(tools, t)
			}
		}
		if len(tools) == 0 {
			return nil, "", false, fmt.Errorf("%s: go.mod has no tool directive for %s, so go generate cannot run it (go get -tool %s)", cmd, skelgenCmd, skelgenCmd)
		}
		if len(tools) > 1 || tools[0] != skelgenCmd {
			return nil, "", false, fmt.Errorf("%s runs %s (go.mod's tool directive), not %s", cmd, strings.Join(tools, " or "), skelgenCmd)
		}
	case run == "run" && strings.Split(target, "@")[0] == skelgenCmd:
	case run == "run" && (build.IsLocalImport(target) || filepath.IsAbs(target)):
		pkgDir := filepath.Join(dir, target)
		if filepath.IsAbs(target) {
			pkgDir = filepath.Clean(target)
		}
		if mod == nil || mod.path != "github.com/skelgen/skelgen" || pkgDir != filepath.Join(mod.dir, "cmd", "skelgen") {
			return nil, "", false, fmt.Errorf("%s runs the package in %s, not %s: check takes go run %s[@version] for skelgen, and ./cmd/skelgen in skelgen's own module", cmd, pkgDir, skelgenCmd, skelgenCmd)
		}
	default:
		return nil, "", false, fmt.Errorf("%s is not %s, which check takes for skelgen", cmd, skelgenCmd)
	}
	return words[i+1:], "", true, nil
}

// goRunFlag matches, without their first -, the go run and go tool flags
// skelgen check accepts before skelgen: those that change neither what is
// built nor how it runs.
var goRunFlag = regexp.MustCompile(`^-?(mod=(mod|readonly)|v|x|a|race|trimpath|buildvcs(=(true|false|auto))?)$`)

// execName returns the name go tool knows a tool's import path by: its
// last element, or the one before a major version suffix.
func execName(importPath string) string {
	dir, elem := path.Split(importPath)
	if dir != "" && len(elem) > 1 && elem[0] == 'v' && strings.Trim(elem[1:], "0123456789") == "" {
		elem = path.Base(dir)
	}
	return elem
}

// generateFile is what go generate keeps while it reads a file's lines: the
// file, its package name and the -command shorthands defined so far.
type generateFile struct {
	path, pkg string
	commands  map[string][]string
}

// words returns the words go generate runs for the line (with its
// newline) numbered n: split on spaces and tabs, with Go double-quoted
// strings, the first word replaced by its -command shorthand, and $NAME
// expanded in every word. A -command line defines a shorthand and returns
// nil.
func (g *generateFile) words(line string, n int) ([]string, error) {
	if len(line) > 4096 {
		return nil, errors.New("go:generate line longer than go generate reads (4096 bytes): go generate stops there")
	}
	text, ok := strings.CutSuffix(line, "\n")
	if !ok {
		return nil, errors.New("go:generate line at the end of the file without a newline: go generate stops there")
	}
	words, err := splitGenerate(strings.TrimSuffix(text[len("//go:generate "):], "\r"))
	if err != nil {
		return nil, err
	}
	if len(words) == 0 {
		return nil, errors.New("no arguments to go:generate")
	}
	if c, ok := g.commands[words[0]]; ok {
		words = append(slices.Clone(c), words[1:]...)
	}
	for i, w := range words {
		words[i] = os.Expand(w, func(name string) string { return g.expand(name, n) })
	}
	if words[0] != "-command" {
		return words, nil
	}
	if len(words) == 1 {
		return nil, errors.New("no command specified for -command")
	}
	if _, ok := g.commands[words[1]]; ok {
		return nil, fmt.Errorf("command %q multiply defined", words[1])
	}
	g.commands[words[1]] = words[2:]
	return nil, nil
}

// expand returns the value of $name on line n: the variables go generate
// sets, else the environment's.
func (g *generateFile) expand(name string, n int) string {
	switch name {
	case "GOFILE":
		return filepath.Base(g.path)
	case "GOLINE":
		return strconv.Itoa(n)
	case "GOPACKAGE":
		return g.pkg
	case "GOARCH":
		return build.Default.GOARCH
	case "GOOS":
		return build.Default.GOOS
	case "GOROOT":
		return goroot()
	case "PATH":
		return filepath.Join(goroot(), "bin") + string(filepath.ListSeparator) + os.Getenv("PATH")
	case "PWD":
		return filepath.Dir(g.path)
	case "DOLLAR":
		return "$"
	}
	return os.Getenv(name)
}

// goroot is the GOROOT of the go command, which go generate sets.
var goroot = sync.OnceValue(func() string {
	out, err := exec.Command("go", "env", "GOROOT").Output()
	if err != nil {
		return ""
	}
	return strings.TrimSpace(string(out))
})

// splitGenerate splits the text of a go:generate line into words as go
// generate does: separated by spaces and tabs, with Go double-quoted
// strings, each followed by a space, a tab or the end.
func splitGenerate(s string) ([]string, error) {
	var words []string
	for {
		s = strings.TrimLeft(s, " \t")
		if s == "" {
			return words, nil
		}
		if s[0] == '"' {
			end := 1
			for end < len(s) && s[end] != '"' {
				if s[end] == '\\' {
					end++
				}
				end++
			}
			if end >= len(s) {
				return nil, fmt.Errorf("unterminated quoted string in go:generate line: %s", s)
			}
			w, err := strconv.Unquote(s[:end+1])
			if err != nil {
				return nil, fmt.Errorf("bad quoted string %s in go:generate line: %w", s[:end+1], err)
			}
			words = append(words, w)
			s = s[end+1:]
			if s != "" && s[0] != ' ' && s[0] != '\t' {
				return nil, fmt.Errorf("no space after the quoted string in go:generate line: %s", s)
			}
			continue
		}
		i := strings.IndexAny(s, " \t")
		if i < 0 {
			i = len(s)
		}
		words = append(words, s[:i])
		s = s[i:]
	}
}

// shortDiff returns at most n changed lines between a (on disk) and b
// (generated), marked - and + in the order they occur.
func shortDiff(a, b []byte, n int) string {
	if bytes.IndexByte(a, 0) >= 0 || bytes.IndexByte(b, 0) >= 0 {
		return fmt.Sprintf("  binary files differ (%d bytes on disk, %d generated)\n", len(a), len(b))
	}
	al := strings.Split(string(a), "\n")
	bl := strings.Split(string(b), "\n")
	// Trim the common prefix and suffix; diff what remains.
	p := 0
	for p < len(al) && p < len(bl) && al[p] == bl[p] {
		p++
	}
	ea, eb := len(al), len(bl)
	for ea > p && eb > p && al[ea-1] == bl[eb-1] {
		ea--
		eb--
	}
	ma, mb := al[p:ea], bl[p:eb]
	var out strings.Builder
	fmt.Fprintf(&out, "  @@ line %d @@\n", p+1)
	lines := lineDiff(ma, mb)
	for i, l := range lines {
		if i == n {
			fmt.Fprintf(&out, "  ... %d more changed lines\n", len(lines)-n)
			break
		}
		out.WriteString("  " + l + "\n")
	}
	return out.String()
}

// lineDiff lists the lines only in a (as "-line") and only in b ("+line")
// along a longest common subsequence; inputs too large for that are shown
// as a whole replacement.
func lineDiff(a, b []string) []string {
	var out []string
	if len(a)*len(b) > 4_000_000 {
		for _, l := range a {
			out = append(out, "-"+l)
		}
		for _, l := range b {
			out = append(out, "+"+l)
		}
		return out
	}
	// lcs[i][j] is the length of the LCS of a[i:] and b[j:].
	lcs := make([][]int, len(a)+1)
	for i := range lcs {
		lcs[i] = make([]int, len(b)+1)
	}
	for i := len(a) - 1; i >= 0; i-- {
		for j := len(b) - 1; j >= 0; j-- {
			if a[i] == b[j] {
				lcs[i][j] = lcs[i+1][j+1] + 1
			} else {
				lcs[i][j] = max(lcs[i+1][j], lcs[i][j+1])
			}
		}
	}
	i, j := 0, 0
	for i < len(a) || j < len(b) {
		switch {
		case i < len(a) && j < len(b) && a[i] == b[j]:
			i++
			j++
		case j < len(b) && (i == len(a) || lcs[i][j+1] > lcs[i+1][j]):
			out = append(out, "+"+b[j])
			j++
		default:
			out = append(out, "-"+a[i])
			i++
		}
	}
	return out
}
