// Package conformance runs the bpf_conformance suite's .data files against
// skelgen's runtime.
//
// A .data file is a program (an "-- asm" section in the suite's assembly
// dialect, assembled by package asm, or an "-- raw" section of instruction
// words), optional input memory ("-- mem") and the expectation: "-- result"
// (r0 in hex) or "-- error" (the program must be rejected or fail).
// ParseFile reads one file into a Case; Run assembles, decodes, loads
// (runtime.Load) and runs (Program.Run) it with r1 pointing at the memory and
// r2 holding its length, and classifies the Outcome.
//
// Two kinds of files exist. Ordinary tests (the suite's tests/ directory)
// pass when r0 equals the result, or when a program with "-- error" is
// rejected; a section this runner does not know makes the test skipped,
// never passed. Negative files (negative/) must all be rejected: an
// assembler error, a validation error, a run-time error, a result that
// differs from "-- result", or an unknown section is a rejection; a program
// that runs and matches is a failure. Results are compared on all 64 bits.
//
// Helper 5 is "unwind" here, as in the suite's own runner: it returns its
// first argument. No other helper is registered, so the suite sees only the
// bare ISA.
//
// The kernel differential test (kernel_test.go) runs the same programs
// through BPF_PROG_TEST_RUN and compares r0 with the interpreter.
package conformance
