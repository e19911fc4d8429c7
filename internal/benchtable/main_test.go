package main

import (
	"bytes"
	"strings"
	"testing"
)

// TestSummarize feeds benchmark lines of the shapes make bench prints and
// checks the table's rows, geometric means and marks.
func TestSummarize(t *testing.T) {
	lines := `BenchmarkAOT/Sum/interp-2  	 100	 500 ns/op	 1000 insns/op	 0.5000 ns/insn
BenchmarkAOT/Sum/aot-vs-kernel-2  	 1	 9 ns/op	 100 aot-ns/run	 0.5000 aot/kernel
BenchmarkRunOverhead/aot-2  	 100	 13.60 ns/op	 2 insns/op
BenchmarkRunOverhead/kernel-2  	 100	 5.000 ns/op
BenchmarkClang/count/interp-2  	 100	 500 ns/op	 1000 insns/op	 1.400 ns/insn
BenchmarkClang/count/aot-vs-kernel-2  	 1	 9 ns/op	 100 aot-ns/run	 2.000 aot/kernel
BenchmarkClang/switch32/aot-vs-kernel-2  	 1	 9 ns/op	 100 aot-ns/run	 1.050 aot/kernel
BenchmarkClang/ifelse/aot-vs-kernel-2  	 1	 9 ns/op	 100 aot-ns/run	 1.150 aot/kernel
BenchmarkRun/one-aot-2  	 100	 33.50 ns/op
BenchmarkRun/one-aot/parallel-2  	 100	 19.50 ns/op
BenchmarkLockedPair-2  	 100	 13.10 ns/op
BenchmarkSeatPair-2  	 100	 6.50 ns/op
not a benchmark line
`
	byName := map[string]result{}
	var order []string
	for _, l := range strings.Split(lines, "\n") {
		if r, ok := parse(l); ok {
			byName[r.name] = r
			order = append(order, r.name)
		}
	}
	if len(order) != 12 {
		t.Fatalf("parsed %d lines, want 12: %v", len(order), order)
	}
	var out bytes.Buffer
	summarize(&out, byName, order)
	got := out.String()
	for _, want := range []string{
		"asm Sum                              0.50                   0.50",
		"clang count                   2.00 (over)            1.40 (over)",
		"clang switch32                       1.05                      -",
		"clang ifelse                  1.15 (over)                      -",
		"geometric mean                1.05 (over)            0.84 (over)",
		"translation (Compiled.Run)       13.6 (over)",
		"kernel JIT (BPF_PROG_TEST_RUN)   5.0",
		"typed Run, translated            33.5 (over)",
		"typed Run, interpreted           -",
		"typed Run, translated, all cores 19.5",
		"a seat taken and given back      6.5",
		"two locked instructions          13.1",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("table lacks %q:\n%s", want, got)
		}
	}
}
