package main

import (
	"context"
	"io"

	"github.com/skelgen/skelgen/gen"
)

func cmdCheck(args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("skelgen check", stderr, "skelgen check [PACKAGES]")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	res, err := gen.Check(context.Background(), gen.CheckOptions{Patterns: fs.Args(), Out: stdout})
	if err != nil {
		return err
	}
	if len(res.Stale) > 0 || len(res.Broken) > 0 || len(res.Orphans) > 0 {
		return exitError(1)
	}
	return nil
}
