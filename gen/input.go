package gen

import (
	"bufio"
	"bytes"
	"debug/elf"
	"errors"
	"fmt"
	"go/build/constraint"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	goruntime "runtime"
	"sort"
	"strings"
)

// checkInput turns the mistakes of a first try into errors that say what to
// do, before a compiler is run: a missing input, an empty source. It warns
// (cfg.Warn) about a .bpf.c in a Go package directory without a
// //go:build ignore line, which the Go tool would try to build as cgo.
func checkInput(cfg Config) error {
	info, err := os.Stat(cfg.Input)
	if errors.Is(err, os.ErrNotExist) {
		what := "object"
		if IsCSource(cfg.Input) {
			what = "C source"
		}
		return fmt.Errorf("%s: no such file: the %s to generate from (paths are relative to the directory go generate runs in, the package's)", cfg.Input, what)
	} else if err != nil {
		return err
	}
	if info.IsDir() {
		return fmt.Errorf("%s is a directory: give a .bpf.c or .bpf.o file", cfg.Input)
	}
	if !IsCSource(cfg.Input) {
		return nil
	}
	src, err := os.ReadFile(cfg.Input)
	if err != nil {
		return err
	}
	if len(bytes.TrimSpace(src)) == 0 {
		return fmt.Errorf("%s: empty source: write at least one SEC(\"...\") program or map (see the README's recipe)", cfg.Input)
	}
	if cfg.Warn != nil && !hasBuildIgnore(src) && dirHasGoFiles(filepath.Dir(cfg.Input)) {
		cfg.Warn(fmt.Sprintf("%s:1: no //go:build ignore line: the Go tool will refuse to build this package (\"C source files not allowed when not using cgo\"); put //go:build ignore on the first line", cfg.Input))
	}
	return nil
}

// hasBuildIgnore reports whether C source starts (before any code) with a
// //go:build constraint that excludes it from this platform's build, e.g.
// //go:build ignore.
func hasBuildIgnore(src []byte) bool {
	sc := bufio.NewScanner(bytes.NewReader(src))
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		switch {
		case line == "":
			continue
		case constraint.IsGoBuild(line):
			expr, err := constraint.Parse(line)
			if err != nil {
				return false
			}
			return !expr.Eval(func(tag string) bool {
				return tag == goruntime.GOOS || tag == goruntime.GOARCH || tag == "gc" || (tag == "unix" && goruntime.GOOS != "windows")
			})
		case strings.HasPrefix(line, "//"):
			continue
		default:
			return false
		}
	}
	return false
}

func dirHasGoFiles(dir string) bool {
	m, _ := filepath.Glob(filepath.Join(dir, "*.go"))
	return len(m) > 0
}

// dirPackage returns the package name of the Go files already in dir
// (other than this stem's generated files and tests), else a name made
// from the directory's: the default when neither -pkg nor $GOPACKAGE says.
func dirPackage(dir, stem string) (string, error) {
	names, _ := filepath.Glob(filepath.Join(dir, "*.go"))
	sort.Strings(names)
	seen := map[string]string{}
	var first string
	for _, name := range names {
		base := filepath.Base(name)
		if strings.HasSuffix(base, "_test.go") || strings.HasPrefix(base, stem+"_bpfe") {
			continue
		}
		f, err := parser.ParseFile(token.NewFileSet(), name, nil, parser.PackageClauseOnly)
		if err != nil {
			continue
		}
		p := f.Name.Name
		if first == "" {
			first = p
		}
		if _, ok := seen[p]; !ok {
			seen[p] = base
		}
	}
	if len(seen) > 1 {
		var ps []string
		for p, f := range seen {
			ps = append(ps, p+" ("+f+")")
		}
		sort.Strings(ps)
		return "", fmt.Errorf("%s holds Go files of several packages: %s; give -pkg", dir, strings.Join(ps, ", "))
	}
	if first != "" {
		return first, nil
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		return "", err
	}
	return packageName(filepath.Base(abs)), nil
}

// hasSection reports whether an ELF object has the named section.
func hasSection(obj []byte, name string) bool {
	f, err := elf.NewFile(bytes.NewReader(obj))
	if err != nil {
		return true // ReadObject reports the malformed object
	}
	defer f.Close()
	return f.Section(name) != nil
}
