package main

import (
	"context"
	"fmt"
	"io"
	"path/filepath"

	"github.com/skelgen/skelgen/gen"
)

func cmdGenerate(args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("skelgen", stderr, gen.Usage)
	flags := gen.NewFlags(fs)
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	cfg, err := flags.Config(fs.Args())
	if err != nil {
		return err
	}
	cfg.Warn = func(msg string) { fmt.Fprintf(stderr, "skelgen: warning: %s\n", msg) }
	files, err := gen.Generate(context.Background(), cfg)
	if err != nil {
		return err
	}
	if err := gen.WriteFiles(files); err != nil {
		return err
	}
	vendored, copyDir := 0, ""
	for _, f := range files {
		if gen.IsVendored(f.Path) {
			vendored++
			copyDir = filepath.Dir(filepath.Dir(f.Path))
			continue
		}
		if f.Remove {
			fmt.Fprintf(stdout, "removed %s\n", f.Path)
			continue
		}
		fmt.Fprintf(stdout, "wrote %s\n", f.Path)
	}
	if vendored > 0 {
		fmt.Fprintf(stdout, "wrote %d files of the module's runtime copy in %s\n", vendored, copyDir)
	}
	return nil
}
