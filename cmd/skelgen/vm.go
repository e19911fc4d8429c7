package main

import (
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/skelgen/skelgen/internal/conformance"
)

const vmUsage = `usage:
  skelgen vm test [-rules auto|tests|negative] [-budget N] FILE.data...
  skelgen vm plugin [--elf] [--program HEX] [MEMORY-HEX]
`

func cmdVM(args []string, stdin io.Reader, stdout, stderr io.Writer) error {
	if len(args) == 0 {
		fmt.Fprint(stderr, vmUsage)
		return errUsage
	}
	switch args[0] {
	case "test":
		return cmdVMTest(args[1:], stdout, stderr)
	case "plugin":
		return cmdVMPlugin(args[1:], stdin, stdout, stderr)
	case "help", "-h", "-help", "--help":
		fmt.Fprint(stdout, vmUsage)
		return nil
	}
	fmt.Fprintf(stderr, "skelgen vm: unknown subcommand %q\n%s", args[0], vmUsage)
	return errUsage
}

// cmdVMTest prints one line per file and a summary; it exits 1 when a test
// failed.
func cmdVMTest(args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("vm test", stderr, "skelgen vm test [flags] FILE.data...")
	rules := fs.String("rules", "auto", "auto (negative rules for files in a directory named negative), tests or negative")
	budget := fs.Uint64("budget", 0, "instructions allowed per run (0: the runtime's default)")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if fs.NArg() == 0 {
		fs.Usage()
		return errUsage
	}
	if *rules != "auto" && *rules != "tests" && *rules != "negative" {
		fmt.Fprintf(stderr, "skelgen vm test: -rules %q: want auto, tests or negative\n", *rules)
		return errUsage
	}
	var sum conformance.Summary
	for _, path := range fs.Args() {
		negative := *rules == "negative" || *rules == "auto" && conformance.IsNegative(path)
		name, o := conformance.RunFile(path, conformance.Options{Negative: negative, Budget: *budget})
		sum.Add(o)
		if o.Status == conformance.Pass {
			fmt.Fprintf(stdout, "PASS %s\n", name)
		} else {
			fmt.Fprintf(stdout, "%s %s: %s\n", o.Status, name, oneLine(o.Reason))
		}
	}
	fmt.Fprintln(stdout, sum)
	if sum.Failed > 0 {
		return exitError(1)
	}
	return nil
}

func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }

// cmdVMPlugin speaks the bpf_conformance plugin protocol: the program arrives
// as hex on stdin (or as an ELF object with --elf, or as hex in --program),
// the input memory as the first positional argument in hex; r0 goes to
// stdout in hex. Errors go to stderr with exit status 1. The suite's runner
// passes its plugin options as one argument, so options are read anywhere
// on the command line and split on spaces.
func cmdVMPlugin(args []string, stdin io.Reader, stdout, stderr io.Writer) error {
	var (
		isELF   bool
		program string
		memHex  *string
	)
	var words []string
	for _, a := range args {
		if strings.HasPrefix(strings.TrimSpace(a), "-") {
			words = append(words, strings.Fields(a)...)
		} else {
			words = append(words, a)
		}
	}
	for i := 0; i < len(words); i++ {
		w := words[i]
		switch strings.TrimLeft(w, "-") {
		case "elf":
			isELF = true
			continue
		case "program":
			if i+1 >= len(words) {
				fmt.Fprintln(stderr, "skelgen vm plugin: --program needs a hex argument")
				return errUsage
			}
			i++
			program = words[i]
			continue
		case "interpret", "jit", "debug":
			// Accepted for compatibility with other plugins: skelgen has one engine.
			continue
		}
		if strings.HasPrefix(w, "-") {
			fmt.Fprintf(stderr, "skelgen vm plugin: unknown option %q\n%s", w, vmUsage)
			return errUsage
		}
		if memHex != nil {
			if strings.TrimSpace(w) == "" {
				continue
			}
			fmt.Fprintf(stderr, "skelgen vm plugin: unexpected argument %q\n", w)
			return errUsage
		}
		memHex = &words[i]
	}
	fail := func(err error) error {
		fmt.Fprintln(stderr, err)
		return exitError(1)
	}
	var mem []byte
	if memHex != nil {
		var err error
		if mem, err = conformance.DecodeHex(*memHex); err != nil {
			return fail(fmt.Errorf("memory: %w", err))
		}
	}
	input := []byte(program)
	if program == "" {
		var err error
		if input, err = io.ReadAll(stdin); err != nil {
			return fail(fmt.Errorf("reading program: %w", err))
		}
	}
	var prog []byte
	var err error
	if isELF {
		prog, err = conformance.ELFProgram(input)
	} else {
		prog, err = conformance.DecodeHex(string(input))
	}
	if err != nil {
		return fail(fmt.Errorf("program: %w", err))
	}
	if len(prog) == 0 {
		return fail(errors.New("program: empty"))
	}
	r0, err := conformance.Execute(prog, mem, 0)
	if err != nil {
		return fail(err)
	}
	fmt.Fprintf(stdout, "%x\n", r0)
	return nil
}
