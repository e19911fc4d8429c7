// Command skelgen generates typed Go skeletons, minimal CO-RE headers and an
// in-process runtime from eBPF objects. See the README for the commands.
//
// This package only parses flags and dispatches: the work is done by gen/,
// btfmin/ and runtime/.
package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"runtime/debug"

	"github.com/skelgen/skelgen/gen"
)

const usage = `usage:
  skelgen [flags] INPUT                 generate a skeleton from x.bpf.o or x.bpf.c
  skelgen btfmin [flags] OBJECT.o...    write a minimal preserve_access_index header
  skelgen generate [PACKAGES]           run the packages' skelgen go:generate lines in one process
  skelgen check [PACKAGES]              report stale generated files (exit 1 on drift)
  skelgen header [-o FILE]              write skelgen.h, the built-ins of ubpf/ programs
  skelgen run [flags] OBJECT.o SECTION  run a ubpf/ program in the interpreter
  skelgen vm test FILE.data...          run eBPF conformance test files
  skelgen vm plugin                     act as a bpf_conformance plugin
  skelgen version                       print skelgen's version and the module it was built from
Flags always come before positional arguments. "skelgen CMD -h" lists a command's flags.
`

// errUsage is returned by commands for bad command lines: the message has
// already been printed by the flag package.
var errUsage = errors.New("usage")

// exitError carries an exit status without a message of its own (the command
// printed its report already).
type exitError int

func (e exitError) Error() string { return fmt.Sprintf("exit status %d", int(e)) }

func main() {
	os.Exit(run(os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
}

func run(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	stderr = terminalWriter{stderr}
	var err error
	cmd := ""
	if len(args) > 0 {
		cmd = args[0]
	}
	switch cmd {
	case "btfmin":
		err = cmdBtfmin(args[1:], stdout, stderr)
	case "check":
		err = cmdCheck(args[1:], stdout, stderr)
	case "generate":
		err = cmdGenerateAll(args[1:], stdout, stderr)
	case "header":
		err = cmdHeader(args[1:], stdout, stderr)
	case "run":
		err = cmdRun(args[1:], stdout, stderr)
	case "vm":
		err = cmdVM(args[1:], stdin, stdout, stderr)
	case "version":
		fmt.Fprintln(stdout, versionText())
		return 0
	case "help", "-h", "-help", "--help":
		fmt.Fprint(stdout, usage)
		fmt.Fprintf(stdout, "\nflags of the generator (%s):\n", gen.Usage)
		fs := flag.NewFlagSet("skelgen", flag.ContinueOnError)
		fs.SetOutput(stdout)
		gen.NewFlags(fs)
		fs.PrintDefaults()
		return 0
	default:
		err = cmdGenerate(args, stdout, stderr)
	}
	var status exitError
	switch {
	case err == nil:
		return 0
	case errors.Is(err, errUsage), errors.Is(err, flag.ErrHelp):
		return 2
	case errors.As(err, &status):
		return int(status)
	default:
		fmt.Fprintf(stderr, "skelgen: %v\n", err)
		return 1
	}
}

// versionText is the version stamped into vendored runtime copies and,
// when the binary was built from a module (go tool, go install), the
// module's version and the Go that built it.
func versionText() string {
	text := "skelgen " + gen.Version
	if bi, ok := debug.ReadBuildInfo(); ok {
		text += " (module " + bi.Main.Path + " " + bi.Main.Version + ", " + bi.GoVersion + ")"
	}
	return text
}

// newFlagSet returns a flag set that reports errors instead of exiting.
func newFlagSet(name string, stderr io.Writer, help string) *flag.FlagSet {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() {
		fmt.Fprintf(stderr, "usage: %s\n", help)
		fs.PrintDefaults()
	}
	return fs
}

// parseFlags parses args, mapping flag errors to errUsage.
func parseFlags(fs *flag.FlagSet, args []string) error {
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return err
		}
		return errUsage
	}
	return nil
}

// stringList is a repeatable string flag.
type stringList = gen.StringList
