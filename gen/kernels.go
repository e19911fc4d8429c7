package gen

import (
	"context"
	"fmt"
	"path/filepath"
	"slices"
	"strings"

	"golang.org/x/tools/go/packages"

	"github.com/skelgen/skelgen/btfmin"
)

// EmbeddedObjects returns the BPF objects (.o files) the packages matching
// patterns embed, as their skeletons do, sorted; dir is where patterns are
// resolved (empty: the current directory). A pattern that matches no
// package is an error, as for go list.
func EmbeddedObjects(ctx context.Context, dir string, patterns []string) ([]string, error) {
	pkgs, err := packages.Load(&packages.Config{Context: ctx, Dir: dir, Mode: packages.NeedName | packages.NeedFiles | packages.NeedEmbedFiles}, patterns...)
	if err != nil {
		return nil, err
	}
	if err := loadErrors(pkgs); err != nil {
		return nil, err
	}
	if err := unmatchedPatterns(patterns, dir, pkgs); err != nil {
		return nil, err
	}
	var out []string
	for _, p := range pkgs {
		for _, f := range p.EmbedFiles {
			if strings.HasSuffix(f, ".o") {
				out = append(out, f)
			}
		}
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("%s: no package embeds a BPF object", strings.Join(patterns, " "))
	}
	slices.Sort(out)
	return slices.Compact(out), nil
}

// IsObjectPath reports whether an argument names an object file rather
// than a package pattern.
func IsObjectPath(arg string) bool {
	return filepath.Ext(arg) == ".o"
}

// checkKernelMatrix checks the objects (names[i] holds data[i]) against
// the kernels of dir and fails with the matrix when a program fails on
// one of them. read is told the kernel files.
func checkKernelMatrix(dir string, names []string, data [][]byte, read func(...string)) error {
	ks, err := btfmin.ReadKernelDir(dir)
	if err != nil {
		return fmt.Errorf("-kernels: %w", err)
	}
	for _, k := range ks {
		read(k.Path)
	}
	var checks []btfmin.KernelCheck
	for i, name := range names {
		c, err := btfmin.CheckKernelsData(name, data[i], ks)
		if err != nil {
			return fmt.Errorf("-kernels: %w", err)
		}
		checks = append(checks, c...)
	}
	var b strings.Builder
	if n := btfmin.WriteMatrix(&b, checks); n > 0 {
		return fmt.Errorf("-kernels %s: %d programs fail on some kernel:\n%s", dir, n, strings.TrimRight(b.String(), "\n"))
	}
	return nil
}
