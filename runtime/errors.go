package runtime

import (
	"errors"
	"fmt"
)

// ErrBudget reports that a run used up Options.Budget. The error returned by
// Run wraps it together with the instruction index where the budget ran out.
var ErrBudget = errors.New("instruction budget exhausted")

// ErrClosed reports a run of a program after Program.Close.
var ErrClosed = errors.New("program is closed")

// ErrCallDepth reports a bpf-to-bpf call beyond MaxFrames frames.
var ErrCallDepth = errors.New("call depth exceeded")

// Errors a Map returns; the built-in map helpers turn them into the kernel's
// negative errno values for the program.
var (
	ErrKeyNotExist  = errors.New("key does not exist")       // -ENOENT
	ErrKeyExist     = errors.New("key already exists")       // -EEXIST
	ErrMapFull      = errors.New("map is full")              // -E2BIG
	ErrInvalidArg   = errors.New("invalid argument")         // -EINVAL
	ErrNotSupported = errors.New("operation not supported")  // -EOPNOTSUPP
	ErrReadOnly     = errors.New("map is read-only")         // -EPERM
	ErrNoMemory     = errors.New("map memory limit reached") // -ENOMEM
)

// errno returns the negative errno the kernel would return for err.
func errno(err error) uint64 {
	switch {
	case err == nil:
		return 0
	case errors.Is(err, ErrKeyNotExist):
		return negErrno(2)
	case errors.Is(err, ErrKeyExist):
		return negErrno(17)
	case errors.Is(err, ErrMapFull):
		return negErrno(7)
	case errors.Is(err, ErrNotSupported):
		return negErrno(95)
	case errors.Is(err, ErrReadOnly):
		return negErrno(1)
	case errors.Is(err, ErrNoMemory):
		return negErrno(12)
	default:
		return negErrno(22)
	}
}

func negErrno(n int64) uint64 { return uint64(-n) }

// MemoryError is an out-of-bounds, unmapped or read-only access by the
// program. Offset is relative to the start of Region and may be negative when
// the program stepped below it.
type MemoryError struct {
	Region string // "context", "stack frame 0", ".rodata", "map counts value", ...
	Offset int64
	Size   uint64
	Insn   int // instruction index, -1 when unknown
	Write  bool
	Addr   uint64 // the tagged address as the program computed it
	// Misaligned marks an atomic instruction whose cell lies inside a
	// writable region but is not aligned to its width.
	Misaligned bool
}

func (e *MemoryError) Error() string {
	kind := "read"
	if e.Write {
		kind = "write"
	}
	what := "invalid " + kind
	if e.Misaligned {
		what = "misaligned atomic " + kind
	}
	where := ""
	if e.Insn >= 0 {
		where = fmt.Sprintf("instruction %d: ", e.Insn)
	}
	return fmt.Sprintf("%s%s of %d bytes at %s%+d (address %#x)", where, what, e.Size, e.Region, e.Offset, e.Addr)
}

// ValidationError is a program Load rejects, naming the instruction.
type ValidationError struct {
	Program string
	Insn    int
	Msg     string
}

func (e *ValidationError) Error() string {
	if e.Program != "" {
		return fmt.Sprintf("program %s: instruction %d: %s", e.Program, e.Insn, e.Msg)
	}
	return fmt.Sprintf("instruction %d: %s", e.Insn, e.Msg)
}

// RunError wraps a failure during a run (budget, call depth, a helper's
// error) with the instruction index where it happened.
type RunError struct {
	Insn int
	Err  error
}

func (e *RunError) Error() string { return fmt.Sprintf("instruction %d: %v", e.Insn, e.Err) }
func (e *RunError) Unwrap() error { return e.Err }
