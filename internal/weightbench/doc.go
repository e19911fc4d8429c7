// Package weightbench measures the weight of what skelgen writes beside
// what cilium/ebpf's bpf2go writes for the same objects: the compile CPU
// and peak memory of each generated package, its non-blank lines, the
// binary of a tracing tool built on each, and a no-op regeneration of a
// module of 50 skeleton packages.
//
// The objects are the examples' bpfel builds, testdata/corpus, and the
// committed objects of cilium/ebpf's own examples (from the module cache).
// BenchmarkWeight generates both packages of each object into scratch
// modules, builds every dependency once, then compiles just the two
// generated packages with go build -toolexec, the test binary itself being
// the wrapper: it runs the compiler and records the compiler process's
// user+system CPU and maximum resident set size (rusage). A nonce file
// rewritten in each measured package before every build makes the go
// command compile it again while everything it imports stays cached; each
// package is compiled three times, one compile at a time, and the figures
// are the medians. The module's runtime copy (internal/skelgenrt) is
// compiled once per module, not per package, and is reported apart, for a
// module of kernel-only objects and for one whose objects have ubpf/
// programs. The scratch modules' go.mod does not require skelgen, so the
// default -runtime auto carries a copy there; a module that requires it,
// as go tool skelgen's does, imports the runtime and carries none.
//
// bpf2go is given each object's stem as it is, lower case for every
// object here, so its identifiers are unexported, as in package main, and
// its package writes almost no export data (9 KB for cilium/ebpf's kprobe
// example, against 166 KB for skelgen's, whose API is exported for
// importers). A package others import needs an upper-case stem, which
// costs bpf2go that export data too (94 KB for kprobe, and 22 ms of
// compiler time against 19, the medians of nine compiles in one run):
// the figures here spare bpf2go it.
//
// make bench runs it with -benchtime 1x (under a minute of CPU on two
// cores once the build cache is warm); internal/benchtable prints the
// ratios against their targets. An object that either generator refuses
// is left out, with the reason, in the log of BenchmarkWeight/total.
package weightbench
