package conformance

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"path/filepath"
	"strings"

	"github.com/skelgen/skelgen/asm"
	"github.com/skelgen/skelgen/runtime"
)

// Status classifies an Outcome.
type Status int

const (
	Pass     Status = iota // a test met its expectation
	Fail                   // a test did not, or a negative file was accepted
	Skip                   // a test uses a section this runner does not know
	Rejected               // a negative file was rejected, as it must be
)

func (s Status) String() string {
	switch s {
	case Pass:
		return "PASS"
	case Fail:
		return "FAIL"
	case Skip:
		return "SKIP"
	case Rejected:
		return "REJECTED"
	}
	return fmt.Sprintf("Status(%d)", int(s))
}

// Passed reports whether s counts as passed in a summary.
func (s Status) Passed() bool { return s == Pass || s == Rejected }

// Outcome is the result of running one Case.
type Outcome struct {
	Status Status
	// Reason says why the test failed, was skipped or was rejected; for a
	// passing test with "-- error" it is the error the program produced.
	Reason string
	// R0 is the program's result when it ran to completion.
	R0  uint64
	Ran bool
}

// Options configure Run.
type Options struct {
	// Negative selects the rules of the suite's negative/ directory: the
	// file must be rejected.
	Negative bool
	// Budget bounds the instructions of one run; 0 means the runtime's
	// default.
	Budget uint64
}

// UnwindHelper is the helper number the suite calls "unwind".
const UnwindHelper = 5

// IsNegative reports whether path lies in a directory named "negative".
func IsNegative(path string) bool {
	return filepath.Base(filepath.Dir(path)) == "negative"
}

// Program returns the case's program bytes (little endian): the assembled
// "-- asm" section when there is one, else "-- raw". When both are present
// they must agree.
func (c *Case) Program() ([]byte, error) {
	if !c.HasAsm {
		if !c.HasRaw {
			return nil, errors.New("no asm or raw section")
		}
		return c.Raw, nil
	}
	b, err := asm.Assemble(c.Asm)
	if err != nil {
		var ae *asm.Error
		if errors.As(err, &ae) {
			// Name the line in the file, not in the section.
			e := *ae
			e.Line += c.AsmLine - 1
			return nil, fmt.Errorf("assemble: %w", &e)
		}
		return nil, fmt.Errorf("assemble: %w", err)
	}
	if c.HasRaw && !bytes.Equal(b, c.Raw) {
		return nil, fmt.Errorf("assembled asm (% x) differs from raw (% x)", b, c.Raw)
	}
	return b, nil
}

// Load decodes prog and loads it with the conformance helpers.
func Load(name string, prog []byte, budget uint64) (*runtime.Program, error) {
	insns, err := runtime.DecodeInstructions(prog, binary.LittleEndian)
	if err != nil {
		return nil, fmt.Errorf("decode: %w", err)
	}
	if len(insns) == 0 {
		return nil, errors.New("empty program")
	}
	helpers := runtime.NewHelperSet()
	helpers.Register(UnwindHelper, "unwind", func(_ *runtime.Machine, r1, _, _, _, _ uint64) (uint64, error) {
		return r1, nil
	})
	p, err := runtime.Load(&runtime.ProgramSpec{Name: name, Instructions: insns}, &runtime.Options{Helpers: helpers, Budget: budget})
	if err != nil {
		return nil, fmt.Errorf("load: %w", err)
	}
	return p, nil
}

// Run runs c and classifies the result.
func Run(c *Case, opts Options) Outcome {
	if opts.Negative {
		return runNegative(c, opts)
	}
	if len(c.Unknown) > 0 {
		return Outcome{Status: Skip, Reason: fmt.Sprintf("unknown section %q", c.Unknown[0])}
	}
	if !c.HasAsm && !c.HasRaw {
		return Outcome{Status: Skip, Reason: "no program (no asm or raw section)"}
	}
	if !c.HasResult && !c.HasError {
		return Outcome{Status: Fail, Reason: "no result or error section"}
	}
	r0, err := execute(c, opts)
	switch {
	case err != nil && c.HasError:
		return Outcome{Status: Pass, Reason: err.Error()}
	case err != nil:
		return Outcome{Status: Fail, Reason: err.Error()}
	case c.HasError:
		return Outcome{Status: Fail, Reason: fmt.Sprintf("expected error %q, got r0=%#x", c.Error, r0), R0: r0, Ran: true}
	case r0 != c.Result:
		return Outcome{Status: Fail, Reason: fmt.Sprintf("r0=%#x, want %#x", r0, c.Result), R0: r0, Ran: true}
	}
	return Outcome{Status: Pass, R0: r0, Ran: true}
}

// runNegative applies the rules of negative/: everything must be rejected.
func runNegative(c *Case, opts Options) Outcome {
	if len(c.Unknown) > 0 {
		return Outcome{Status: Rejected, Reason: fmt.Sprintf("unknown section %q", c.Unknown[0])}
	}
	if !c.HasAsm && !c.HasRaw {
		return Outcome{Status: Rejected, Reason: "no program (no asm or raw section)"}
	}
	r0, err := execute(c, opts)
	switch {
	case err != nil:
		return Outcome{Status: Rejected, Reason: err.Error()}
	case c.HasResult && r0 != c.Result:
		return Outcome{Status: Rejected, Reason: fmt.Sprintf("r0=%#x differs from the stated %#x", r0, c.Result), R0: r0, Ran: true}
	}
	return Outcome{Status: Fail, Reason: fmt.Sprintf("not rejected: program ran and returned r0=%#x", r0), R0: r0, Ran: true}
}

// execute assembles, loads and runs c; the error names the stage.
func execute(c *Case, opts Options) (uint64, error) {
	prog, err := c.Program()
	if err != nil {
		return 0, err
	}
	p, err := Load(c.Name, prog, opts.Budget)
	if err != nil {
		return 0, err
	}
	mem := c.Mem
	if mem == nil {
		mem = []byte{}
	}
	r0, err := p.Run(mem)
	if err != nil {
		return 0, fmt.Errorf("run: %w", err)
	}
	return r0, nil
}

// Summary counts outcomes.
type Summary struct{ Passed, Failed, Skipped int }

// Add counts o.
func (s *Summary) Add(o Outcome) {
	switch {
	case o.Status.Passed():
		s.Passed++
	case o.Status == Skip:
		s.Skipped++
	default:
		s.Failed++
	}
}

func (s Summary) String() string {
	return fmt.Sprintf("%d passed, %d failed, %d skipped", s.Passed, s.Failed, s.Skipped)
}

// RunFile parses and runs one file; a parse error is a failure, or a
// rejection for a negative file.
func RunFile(path string, opts Options) (name string, o Outcome) {
	name = strings.TrimSuffix(filepath.Base(path), ".data")
	c, err := ParseFile(path)
	if err != nil {
		if opts.Negative {
			return name, Outcome{Status: Rejected, Reason: err.Error()}
		}
		return name, Outcome{Status: Fail, Reason: err.Error()}
	}
	return name, Run(c, opts)
}
