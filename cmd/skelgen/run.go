package main

import (
	"fmt"
	"io"
	"os"
	"time"

	"github.com/skelgen/skelgen/runtime/bridge"
)

const runHelp = "skelgen run [-mem FILE] [-n N] [-budget N] OBJECT.o SECTION"

// cmdRun runs one ubpf/ program of an object in process: r1 points at the
// memory, r2 holds its length, as in the conformance files.
func cmdRun(args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("skelgen run", stderr, runHelp)
	memFile := fs.String("mem", "", "`file` whose bytes are the program's memory (r1, r2); default none")
	n := fs.Int("n", 0, "also run `N` times and print the mean time per run")
	budget := fs.Uint64("budget", 0, "instructions allowed per run (0: the runtime's default)")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if fs.NArg() != 2 {
		fs.Usage()
		return errUsage
	}
	objPath, section := fs.Arg(0), fs.Arg(1)
	var mem []byte
	if *memFile != "" {
		var err error
		if mem, err = os.ReadFile(*memFile); err != nil {
			return err
		}
	}
	data, err := os.ReadFile(objPath)
	if err != nil {
		return err
	}
	spec, err := bridge.LoadSpec(data)
	if err != nil {
		return fmt.Errorf("%s: %w", objPath, err)
	}
	name, err := bridge.FindUserProgram(spec, section)
	if err != nil {
		return fmt.Errorf("%s: %w", objPath, err)
	}
	set, err := bridge.Load(spec, nil, &bridge.LoadOptions{InProcess: true, Output: stdout, Budget: *budget, Programs: []string{name}})
	if err != nil {
		return fmt.Errorf("%s: %w", objPath, err)
	}
	defer set.Close()
	prog := bridge.RawProgram(set, name)

	input := append([]byte(nil), mem...)
	r0, err := prog.Run(input)
	if err != nil {
		return fmt.Errorf("%s: %s: %w", objPath, section, err)
	}
	fmt.Fprintf(stdout, "r0 = %d\n", r0)
	if *n > 0 {
		start := time.Now()
		for range *n {
			copy(input, mem)
			if _, err := prog.Run(input); err != nil {
				return fmt.Errorf("%s: %s: %w", objPath, section, err)
			}
		}
		fmt.Fprintf(stdout, "%d ns/run\n", time.Since(start).Nanoseconds()/int64(*n))
	}
	return nil
}
