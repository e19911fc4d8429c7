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
BenchmarkClang/switch32/varied-vs-kernel-2  	 1	 9 ns/op	 100 aot-ns/run	 0.5000 aot/kernel
BenchmarkClang/count/varied-vs-kernel-2  	 1	 9 ns/op	 100 aot-ns/run	 1.200 aot/kernel
BenchmarkClang/ifelse/aot-vs-kernel-2  	 1	 9 ns/op	 100 aot-ns/run	 1.150 aot/kernel
BenchmarkClang/bytecode/aot-vs-kernel-2  	 1	 9 ns/op	 100 aot-ns/run	 1.080 aot/kernel
BenchmarkRun/one-aot-2  	 100	 33.50 ns/op
BenchmarkRun/one-aot/parallel-2  	 100	 19.50 ns/op
BenchmarkLockedPair-2  	 100	 13.10 ns/op
BenchmarkSeatPair-2  	 100	 6.50 ns/op
BenchmarkDrain/64B/serve-hook-2  	 1	 0 lost	 150.0 ns/record	 0.9500 x-cilium-Read	 0.2000 x-cilium-ReadInto
BenchmarkDrain/64B/typed-ReadInto-2  	 1	 0 lost	 25.00 ns/record	 5.700 x-cilium-Read	 1.200 x-cilium-ReadInto
BenchmarkDrain/16B/serve-hook-2  	 1	 0 lost	 150.0 ns/record	 0.9000 x-cilium-Read	 0.2000 x-cilium-ReadInto
BenchmarkSustained-2  	 1	 0 ns/op	 320 lost-past	 2000000 records/s-lossy	 1500000 records/s-no-loss
not a benchmark line
`
	got, n := table(lines)
	if n != 19 {
		t.Fatalf("parsed %d lines, want 19", n)
	}
	for _, want := range []string{
		"asm Sum                              0.50              -                   0.50",
		"clang count                   2.00 (over)    1.20 (over)            1.40 (over)",
		"clang switch32                       1.05           0.50                      -",
		"clang ifelse                  1.15 (over)              -                      -",
		"clang bytecode                       1.08              -                      -",
		"geometric mean                1.05 (over)           0.77            0.84 (over)",
		"translation (Compiled.Run)       13.6 (over)",
		"kernel JIT (BPF_PROG_TEST_RUN)   5.0",
		"typed Run, translated            33.5 (over)",
		"typed Run, interpreted           -",
		"typed Run, translated, all cores 19.5",
		"a seat taken and given back      6.5",
		"two locked instructions          13.1",
		"64B    serve-hook            150.0     0.95 (under)               0.20      0",
		"64B    typed-ReadInto         25.0             5.70               1.20      0",
		"16B    serve-hook            150.0             0.90               0.20      0",
		"1500000 records/s with no loss; 320 lost at 2000000 records/s",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("table lacks %q:\n%s", want, got)
		}
	}
}

// TestWeight: BenchmarkWeight's lines, as the benchmark prints them, give
// the generated code's rows, marked against their targets.
func TestWeight(t *testing.T) {
	lines := `BenchmarkWeight/ex.execsnoop-2         	       1	 879806943 ns/op	        26.30 bpf2go-cpu-ms	       149.0 bpf2go-lines	        24.11 bpf2go-rss-MiB	        11.25 cpu-ms-ratio	         2.013 lines-ratio	         2.471 rss-MiB-ratio	       296.0 skelgen-cpu-ms	       300.0 skelgen-lines	        59.58 skelgen-rss-MiB
BenchmarkWeight/total-2                         	       1	       361.0 ns/op	       974.7 bpf2go-cpu-ms	      3560 bpf2go-lines	         1.542 cpu-ms-ratio	         5.000 left-out	         1.812 kernel-only-cpu-ratio	         1.384 kernel-only-lines-ratio	         2.854 lines-ratio	        27.00 objects	      5402 skelgen-cpu-ms	     10162 skelgen-lines	        19.49 worst-cpu-ratio
BenchmarkWeight/runtime-kernel-only-2           	       1	1016137858 ns/op	      1135 cpu-ms	        60.00 files	      8173 lines	       114.4 rss-MiB
BenchmarkWeight/binary-2                        	       1	47625874109 ns/op	   5709495 bpf2go-bytes	         1.094 bytes-ratio	   6248140 skelgen-bytes
BenchmarkWeight/noop-regen-2                    	       1	1048321594 ns/op	         1.648 s/regen
`
	got, _ := table(lines)
	for _, want := range []string{
		"no-op regeneration of 50 packages <= 1.5 s), over 27 objects, 5 left out:",
		"compile CPU, summed              1.54\n",
		"compile CPU, worst object        19.49\n",
		"compile CPU, kernel-only         1.81\n",
		"non-blank lines, kernel-only     1.38\n",
		"non-blank lines, summed          2.85 (over)",
		"execsnoop tool's binary          1.094\n",
		"no-op regeneration, s            1.65 (over)",
		"runtime copy, kernel-only        8173 lines, 60 files, 1135 ms compile CPU",
		"runtime copy, with the VM        - lines, - files, - ms compile CPU",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("table lacks %q:\n%s", want, got)
		}
	}
}

// table is the summary of the benchmark lines, and how many it parsed.
func table(lines string) (string, int) {
	byName := map[string]result{}
	var order []string
	n := 0
	for _, l := range strings.Split(lines, "\n") {
		if r, ok := parse(l); ok {
			order = keep(byName, order, r)
			n++
		}
	}
	var out bytes.Buffer
	summarize(&out, byName, order)
	return out.String(), n
}

// TestPlacements: the runs of a workload at several placements give their
// geometric mean, their range, and a warning when every run's
// translation started in the same half of a 64-byte line.
func TestPlacements(t *testing.T) {
	lines := `BenchmarkClang/checksum/aot-vs-kernel-2  	 1	 9 ns/op	 0.5000 aot/kernel	 160.0 entry%256
BenchmarkClang/words/aot-vs-kernel-2  	 1	 9 ns/op	 0.9000 aot/kernel	 0 entry%256
BenchmarkClang/checksum/aot-vs-kernel-2  	 1	 9 ns/op	 2.000 aot/kernel	 192.0 entry%256
BenchmarkClang/words/aot-vs-kernel-2  	 1	 9 ns/op	 0.8000 aot/kernel	 64.00 entry%256
`
	got, n := table(lines)
	if n != 4 {
		t.Fatalf("parsed %d lines, want 4", n)
	}
	for _, want := range []string{
		"clang checksum                       1.00              -                      -   2: 0.50-2.00\n",
		"clang words                          0.85              -                      -   2: 0.80-0.90, one half\n",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("table lacks %q:\n%s", want, got)
		}
	}
}
