package main

import (
	"fmt"
	"io"

	"github.com/skelgen/skelgen/btfmin"
	"github.com/skelgen/skelgen/gen"
	"github.com/skelgen/skelgen/internal/cc"
)

func cmdBtfmin(args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("btfmin", stderr, "skelgen btfmin [flags] OBJECT.o...")
	var kernels, fields, decls stringList
	fs.Var(&kernels, "btf", "kernel BTF file (repeatable; default /sys/kernel/btf/vmlinux)")
	fs.Var(&fields, "field", "keep a kernel member path, e.g. task_struct.pid (repeatable)")
	fs.Var(&decls, "decl", "keep a whole kernel type, e.g. 'enum cgroup_subsys_id' (repeatable)")
	src := fs.String("src", "", "source of the object: compile it against the header and complete what clang reports missing; without objects, the header is made from the source and -btf alone (and verified)")
	var ccFlags cc.Flags
	ccFlags.Define(fs)
	mode := fs.String("mode", "compact", "compact (used members only) or exact (original offsets, identical instructions)")
	out := fs.String("o", "", "output header (default stdout); the source includes it by this base name")
	verify := fs.Bool("verify", false, "recompile -src with the header and compare every CO-RE relocation against each -btf; exit 1 on differences")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	m, err := btfmin.ParseMode(*mode)
	if err != nil {
		fmt.Fprintln(stderr, err)
		return errUsage
	}
	cflags, err := ccFlags.Split()
	if err != nil {
		fmt.Fprintln(stderr, "btfmin:", err)
		return errUsage
	}
	if len(kernels) == 0 {
		kernels = stringList{"/sys/kernel/btf/vmlinux"}
	}
	cfg := btfmin.Config{
		Objects:   fs.Args(),
		KernelBTF: kernels,
		Source:    *src,
		CFlags:    cflags,
		Clang:     ccFlags.CC,
		Fields:    fields,
		Decls:     decls,
		Mode:      m,
		Output:    *out,
	}
	if *verify && (*src == "" || len(cfg.Objects) > 1) {
		fmt.Fprintln(stderr, "btfmin: -verify needs -src and at most one object")
		return errUsage
	}
	var res *btfmin.Result
	var report *btfmin.Report
	if *src != "" && len(cfg.Objects) == 0 {
		// No object yet: the header comes from the source and the kernel
		// BTF alone, and is verified on the way.
		res, report, err = btfmin.FromSource(cfg)
	} else {
		res, err = btfmin.Generate(cfg)
	}
	if err != nil {
		return fmt.Errorf("btfmin: %w", err)
	}
	for _, w := range res.Warnings {
		fmt.Fprintf(stderr, "skelgen: warning: %s\n", w)
	}
	if *out == "" {
		if _, err := stdout.Write(res.Header); err != nil {
			return err
		}
	} else if err := gen.WriteFiles([]gen.File{{Path: *out, Data: res.Header}}); err != nil {
		return fmt.Errorf("btfmin: %w", err)
	}
	if !*verify && report == nil {
		return nil
	}
	if report == nil {
		if report, err = btfmin.Verify(cfg, res.Header); err != nil {
			return fmt.Errorf("btfmin: verify: %w", err)
		}
	}
	w := stdout
	if *out == "" {
		w = stderr
	}
	fmt.Fprint(w, report)
	if !report.OK() {
		return exitError(1)
	}
	return nil
}
