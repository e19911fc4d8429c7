package main

import (
	"context"
	"fmt"
	"io"

	"github.com/skelgen/skelgen/btfmin"
	"github.com/skelgen/skelgen/gen"
)

func cmdCheck(args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("skelgen check", stderr, "skelgen check [-committed] [-cc COMPILER] [PACKAGES]\n       skelgen check -kernels DIR [PACKAGES | OBJECT.o...]")
	committed := fs.Bool("committed", false, "compile no C source: trust the committed objects (and -header files) instead of rebuilding them")
	cc := fs.String("cc", "", "also trust the C `compiler` a go:generate line names with -cc COMPILER, as written (check compiles only with clang-19, clang and clang-N found on PATH outside the module otherwise)")
	kernels := fs.String("kernels", "", "instead: resolve the CO-RE relocations of the objects (those the packages embed) against every kernel BTF file in `DIR` (.btf, .btf.tar.xz, vmlinux ELF); exit 1 when a program fails on one")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if *kernels != "" {
		return checkKernels(*kernels, fs.Args(), stdout)
	}
	res, err := gen.Check(context.Background(), gen.CheckOptions{Patterns: fs.Args(), Out: stdout, Committed: *committed, CC: *cc})
	if err != nil {
		return err
	}
	if !res.OK() {
		return exitError(1)
	}
	return nil
}

// checkKernels prints the kernel matrix of the objects args names (object
// files, or package patterns whose embedded objects are taken).
func checkKernels(dir string, args []string, stdout io.Writer) error {
	ks, err := btfmin.ReadKernelDir(dir)
	if err != nil {
		return err
	}
	var objects, patterns []string
	for _, a := range args {
		if gen.IsObjectPath(a) {
			objects = append(objects, a)
		} else {
			patterns = append(patterns, a)
		}
	}
	if len(patterns) > 0 || len(objects) == 0 {
		if len(patterns) == 0 {
			patterns = []string{"."}
		}
		found, err := gen.EmbeddedObjects(context.Background(), "", patterns)
		if err != nil {
			return err
		}
		objects = append(objects, found...)
	}
	var checks []btfmin.KernelCheck
	for _, o := range objects {
		c, err := btfmin.CheckKernels(o, ks)
		if err != nil {
			return err
		}
		checks = append(checks, c...)
	}
	if failed := btfmin.WriteMatrix(stdout, checks); failed > 0 {
		fmt.Fprintf(stdout, "%d programs fail on some kernel\n", failed)
		return exitError(1)
	}
	return nil
}
