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
// the translation, the kernel and the Go twin timed alternately in at
// least 300 rounds of 1000 runs each, reporting the median of the rounds'
// ratios as aot/kernel, the fastest translated round over the fastest
// kernel round as aot/kernel-fastest, and the Go twin's median ratio as
// go/kernel, a control (see versus). The table's two columns come from
// benchmarks seconds apart, on a machine whose speed may drift between
// them; the alternating rounds compare like with like. Its ns/op means
// nothing (the rounds run whatever b.N asks, and BPF_PROG_TEST_RUN costs
// about 20 ms per call here outside the program, for XDP programs run more
// than once): read the ratios; the aot benchmark reports allocations. The byte-buffer
// workloads (CsumBuf2K, ParseHdr2K, Classify1K) take their buffer in ubpf's
// (data, len) convention in user space and run in the kernel as XDP
// programs over a packet of the same bytes, reading data and data_end from
// the context; the rest of their instructions are the same.
//
// Code placement moves these figures on both sides. The kernel's time
// depends on where the JIT put the program's image: over eight loads,
// CsumBuf2K's fastest rounds took about 2.8 µs or 5.6 µs, Switch32's from
// 2.2 to 2.55 µs, so the rounds take five loads in turn. The translation's
// time depends on where the linker put its function: on an AMD EPYC host,
// Switch32's translated compare tree, the same machine code in two builds,
// ran in 1.2–1.3 µs starting at a 64-byte boundary and in 2.0–2.9 µs
// starting 32 bytes past one (Go aligns functions to 32 bytes); emitted as
// a switch, it runs in 1.25–1.33 µs at both. So make bench runs the
// aot-vs-kernel benchmarks again in builds with the skelgen_align tags,
// whose align files shift the translations by 32, 64 and 96 bytes, and
// internal/benchtable reports the geometric mean of the four placements;
// each run reports where its translation starts (entry%256). For the same reason the
// runtime's BenchmarkWorkloads gives the interpreter's ns/insn, the mean
// over all runs, beside ns/insn-median and ns/insn-fastest, its median and
// fastest rounds of 100 runs.
//
// make bench ends with the table of internal/benchtable, which reads these
// benchmarks' lines and internal/clangbench's.
package aotbench
