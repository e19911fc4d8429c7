// Package aotbench measures skelgen's ahead-of-time translation against
// the interpreter, plain Go and the kernel's JIT on the runtime's
// benchmark workloads.
//
// The workloads are internal/workloads' (the programs the runtime's own
// benchmarks run), assembled with package asm (program.go); translated.go
// is their translation by gen/aot, committed and checked for staleness by
// TestTranslationUpToDate (regenerate with go test -update). The
// benchmarks run each workload four ways: "go" (the plain-Go twin),
// "interp" (runtime.Program.Run), "aot" (the translation through
// runtime.Compiled.Run) and "kernel" (the same instructions as an XDP
// program through BPF_PROG_TEST_RUN, where the verifier accepts them; the
// kernel's own per-run time is reported as ns/op), then "aot-vs-kernel":
// the translation and the kernel timed alternately in rounds of 1000 runs
// each, reporting the median of the rounds' ratios as aot/kernel (and the
// medians of both times per run). The table's two columns come from
// benchmarks seconds apart, on a machine whose speed may drift between
// them; the alternating rounds compare like with like. Its ns/op is the
// wall time of one translated and one kernel run, the latter including
// BPF_PROG_TEST_RUN's fixed cost per call (about 20 ms here, for XDP
// programs run more than once): read aot/kernel. The byte-buffer
// workloads (CsumBuf2K, ParseHdr2K, Classify1K) take their buffer in ubpf's
// (data, len) convention in user space and run in the kernel as XDP
// programs over a packet of the same bytes, reading data and data_end from
// the context; the rest of their instructions are the same.
package aotbench
