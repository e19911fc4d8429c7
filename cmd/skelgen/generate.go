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
	warn := func(msg string) { fmt.Fprintf(stderr, "skelgen: warning: %s\n", msg) }
	cfg.Warn = warn
	cache := gen.OpenCache().Run(cfg, args)
	if cache != nil {
		if warnings, n, ok := cache.Current(); ok {
			for _, w := range warnings {
				warn(w)
			}
			fmt.Fprintf(stdout, "%d files unchanged (inputs as the last run read them)\n", n)
			return nil
		}
		cfg.Reads = cache.Read
		cfg.Warn = func(msg string) {
			cache.Warn(msg)
			warn(msg)
		}
	}
	files, err := gen.Generate(context.Background(), cfg)
	if err != nil {
		return err
	}
	// WriteFiles leaves files whose contents are on disk already: say
	// which those are before it writes the others.
	unchanged := make([]bool, len(files))
	for i, f := range files {
		unchanged[i] = gen.Unchanged(f)
	}
	if err := gen.WriteFiles(files); err != nil {
		return err
	}
	if cache != nil {
		cache.Save(files)
	}
	vendored, same, copyDir := 0, 0, ""
	for i, f := range files {
		switch {
		case unchanged[i]:
			same++
		case gen.IsVendored(f.Path):
			vendored++
			copyDir = filepath.Dir(filepath.Dir(f.Path))
		case f.Remove:
			fmt.Fprintf(stdout, "removed %s\n", f.Path)
		default:
			fmt.Fprintf(stdout, "wrote %s\n", f.Path)
		}
	}
	if vendored > 0 {
		fmt.Fprintf(stdout, "wrote %d files of the module's runtime copy in %s\n", vendored, copyDir)
	}
	switch {
	case same == 1:
		fmt.Fprintln(stdout, "1 file unchanged")
	case same > 1:
		fmt.Fprintf(stdout, "%d files unchanged\n", same)
	}
	return nil
}

func cmdGenerateAll(args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("skelgen generate", stderr, "skelgen generate [PACKAGES]: run the skelgen go:generate lines of the packages (default .) in one process, as go generate would, several at once, with the cache")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	warn := func(msg string) { fmt.Fprintf(stderr, "skelgen: warning: %s\n", msg) }
	return gen.GenerateAll(context.Background(), gen.GenerateAllOptions{Patterns: fs.Args(), Out: stdout, Warn: warn, Cache: gen.OpenCache()})
}
