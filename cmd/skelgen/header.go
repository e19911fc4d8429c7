package main

import (
	"fmt"
	"io"

	"github.com/skelgen/skelgen/gen"
	"github.com/skelgen/skelgen/templates"
)

// cmdHeader writes skelgen.h, the built-ins of user-space programs. skelgen
// puts it on the include path when it compiles; a copy on disk serves
// editors and other build systems.
func cmdHeader(args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("skelgen header", stderr, "skelgen header [-o FILE]")
	out := fs.String("o", "", "write to `file` (default: standard output)")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if *out == "" {
		_, err := stdout.Write(templates.SkelgenH)
		return err
	}
	if err := gen.WriteFiles([]gen.File{{Path: *out, Data: templates.SkelgenH}}); err != nil {
		return err
	}
	fmt.Fprintf(stdout, "wrote %s\n", *out)
	return nil
}
