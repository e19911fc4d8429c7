package main

import (
	"context"
	"io"

	"github.com/skelgen/skelgen/gen"
)

func cmdCheck(args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("skelgen check", stderr, "skelgen check [-committed] [PACKAGES]")
	committed := fs.Bool("committed", false, "compile no C source: trust the committed objects (and -header files) instead of rebuilding them")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	res, err := gen.Check(context.Background(), gen.CheckOptions{Patterns: fs.Args(), Out: stdout, Committed: *committed})
	if err != nil {
		return err
	}
	if !res.OK() {
		return exitError(1)
	}
	return nil
}
