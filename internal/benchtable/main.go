// Command benchtable reads the output of make bench's go test -bench run
// on its standard input, copies it to its standard output as it comes,
// and ends with one table of the figures the runtime's targets are about:
// per workload, the translation's time against the kernel JIT's
// (aot-vs-kernel, both the hand-written workloads of internal/aotbench
// and the clang-compiled ones of internal/clangbench; for the latter also
// on inputs that differ from run to run, varied-vs-kernel) and the
// interpreter's ns per instruction; their geometric means; and the fixed
// cost of a run through the translation, the interpreter, a skeleton's
// typed Run and the kernel, with what counting a typed Run for Close
// costs (a seat taken and given back) and what two locked instructions
// would; then internal/ringbench's ring buffer drain: each consumer's ns
// a record and rate against cilium/ebpf's readers, and the rate Serve
// sustains with no loss; then the weight of the generated code against
// bpf2go's (internal/weightbench): compile CPU and lines of the generated
// packages, a tracing tool's binary, a no-op regeneration of 50 packages,
// and the runtime copy apart. Each figure is marked against its target. It
// exits 1 when the input reports a failure.
package main

import (
	"bufio"
	"fmt"
	"io"
	"math"
	"os"
	"regexp"
	"slices"
	"strconv"
	"strings"
)

// Targets.
const (
	aotPerWorkload = 1.0 // translation / kernel JIT, every workload
	aotGeomean     = 0.9 // and their geometric mean
	interpPerInsn  = 0.8 // ns per instruction, every workload
	fixedAOT       = 5   // ns, translation
	fixedTyped     = 15  // ns, a skeleton's typed Run
	drainServe     = 1.0 // Serve with its record hook / cilium/ebpf's Read, records a second
	drainReadInto  = 1.0 // the typed reader's ReadInto / cilium/ebpf's ReadInto

	// What skelgen writes against what bpf2go writes for the same
	// objects (internal/weightbench).
	weightCPU    = 2.0 // compile CPU of the generated packages, summed
	weightLines  = 1.5 // their non-blank lines, summed
	weightBinary = 1.1 // a tracing tool's binary
	weightRegen  = 1.5 // s, a no-op regeneration of 50 skeleton packages
)

// ratioTarget is the translation/kernel target of a workload: 1.1 for the
// clang-compiled switch and if-else dispatch loops and the byte-code
// interpreter, aotPerWorkload for the rest.
func ratioTarget(workload string) float64 {
	switch workload {
	case "clang switch32", "clang ifelse", "clang bytecode":
		return 1.1
	}
	return aotPerWorkload
}

// result is one benchmark line: its name without the -N suffix and its
// metrics by unit; runs holds the metrics of every line of that name, in
// order, when the input repeats it (make bench runs the aot-vs-kernel
// benchmarks at several placements).
type result struct {
	name    string
	metrics map[string]float64
	runs    []map[string]float64
}

var procs = regexp.MustCompile(`-\d+$`)

// parse reads a benchmark line ("BenchmarkX/y-2  N  v unit  v unit ...").
func parse(line string) (result, bool) {
	f := strings.Fields(line)
	if len(f) < 4 || !strings.HasPrefix(f[0], "Benchmark") {
		return result{}, false
	}
	r := result{name: procs.ReplaceAllString(f[0], ""), metrics: map[string]float64{}}
	for i := 2; i+1 < len(f); i += 2 {
		v, err := strconv.ParseFloat(f[i], 64)
		if err != nil {
			return result{}, false
		}
		r.metrics[f[i+1]] = v
	}
	return r, true
}

type row struct {
	workload       string
	ratio, perInsn float64 // 0: not measured
	// varied is the translation/kernel ratio on inputs that differ from
	// run to run (clangbench's varied-vs-kernel), averaged as ratio is.
	varied float64
	// placements is how the ratio was averaged: "-" for one run, else
	// the number of runs and their range, and "one half" when the runs'
	// translations all started in the same half of a 64-byte line.
	placements string
}

// placed averages the aot/kernel ratios of a workload's runs at several
// placements of its translation: their geometric mean, and what row's
// placements says of them.
func placed(runs []map[string]float64) (float64, string) {
	var ratios []float64
	halves := map[bool]bool{}
	for _, m := range runs {
		if v, ok := m["aot/kernel"]; ok {
			ratios = append(ratios, v)
			if e, ok := m["entry%256"]; ok {
				halves[math.Mod(e, 64) >= 32] = true
			}
		}
	}
	switch len(ratios) {
	case 0:
		return 0, "-"
	case 1:
		return ratios[0], "-"
	}
	desc := fmt.Sprintf("%d: %.2f-%.2f", len(ratios), slices.Min(ratios), slices.Max(ratios))
	if len(halves) < 2 {
		desc += ", one half"
	}
	return geomean(ratios), desc
}

func main() {
	failed := false
	byName := map[string]result{}
	var order []string
	in := bufio.NewScanner(os.Stdin)
	in.Buffer(make([]byte, 1<<20), 1<<20)
	for in.Scan() {
		line := in.Text()
		fmt.Println(line)
		if strings.HasPrefix(line, "FAIL") || strings.HasPrefix(line, "--- FAIL") {
			failed = true
		}
		if r, ok := parse(line); ok {
			order = keep(byName, order, r)
		}
	}
	if err := in.Err(); err != nil {
		fmt.Fprintln(os.Stderr, "benchtable:", err)
		os.Exit(1)
	}
	summarize(os.Stdout, byName, order)
	if failed {
		os.Exit(1)
	}
}

// keep adds r to byName, its runs to those of earlier lines of its name,
// and returns order with r's name appended if it is new.
func keep(byName map[string]result, order []string, r result) []string {
	prev, seen := byName[r.name]
	if !seen {
		order = append(order, r.name)
	}
	r.runs = append(prev.runs, r.metrics)
	byName[r.name] = r
	return order
}

// summarize prints the table from the results, in the order the workloads
// first appeared.
func summarize(w io.Writer, byName map[string]result, order []string) {
	rows := map[string]*row{}
	var names []string
	add := func(workload string) *row {
		if rows[workload] == nil {
			rows[workload] = &row{workload: workload}
			names = append(names, workload)
		}
		return rows[workload]
	}
	for _, name := range order {
		r := byName[name]
		parts := strings.Split(name, "/")
		if len(parts) != 3 {
			continue
		}
		var suite string
		switch parts[0] {
		case "BenchmarkAOT":
			suite = "asm "
		case "BenchmarkClang":
			suite = "clang "
		default:
			continue
		}
		workload := suite + parts[1]
		switch parts[2] {
		case "aot-vs-kernel":
			if v, desc := placed(r.runs); v > 0 {
				add(workload).ratio, add(workload).placements = v, desc
			}
		case "varied-vs-kernel":
			if v, _ := placed(r.runs); v > 0 {
				add(workload).varied = v
			}
		case "interp":
			if v, ok := r.metrics["ns/insn"]; ok {
				add(workload).perInsn = v
			}
		}
	}
	fmt.Fprintln(w)
	fmt.Fprintln(w, "Summary (targets: translation/kernel <= 1.0 per workload, 1.1 for clang's switch32, ifelse")
	fmt.Fprintln(w, "and bytecode, and <= 0.9 geometric mean;")
	fmt.Fprintln(w, "interpreter <= 0.8 ns per instruction; fixed cost <= 5 ns translated, <= 15 ns typed Run;")
	fmt.Fprintln(w, "varied input: the same ratio on inputs that differ from run to run, so that no branch predictor learns them)")
	fmt.Fprintln(w)
	fmt.Fprintf(w, "%-22s %18s %14s %22s   %s\n", "workload", "translation/kernel", "varied input", "interpreter ns/insn", "placements: runs, range")
	var ratios, varied, perInsn []float64
	for _, n := range names {
		r := rows[n]
		fmt.Fprintf(w, "%-22s %18s %14s %22s   %s\n", n, mark(r.ratio, ratioTarget(n), "%.2f"), mark(r.varied, ratioTarget(n), "%.2f"), mark(r.perInsn, interpPerInsn, "%.2f"), r.placements)
		if r.ratio > 0 {
			ratios = append(ratios, r.ratio)
		}
		if r.varied > 0 {
			varied = append(varied, r.varied)
		}
		if r.perInsn > 0 {
			perInsn = append(perInsn, r.perInsn)
		}
	}
	fmt.Fprintf(w, "%-22s %18s %14s %22s\n", "geometric mean", mark(geomean(ratios), aotGeomean, "%.2f"), mark(geomean(varied), aotGeomean, "%.2f"), mark(geomean(perInsn), interpPerInsn, "%.2f"))
	fmt.Fprintln(w)
	fmt.Fprintln(w, "fixed cost of a run (mov r0, 1; exit), ns:")
	fixed := []struct {
		label, bench string
		target       float64
	}{
		{"translation (Compiled.Run)", "BenchmarkRunOverhead/aot", fixedAOT},
		{"interpreter (Program.Run)", "BenchmarkRunOverhead/interp", 0},
		{"kernel JIT (BPF_PROG_TEST_RUN)", "BenchmarkRunOverhead/kernel", 0},
		{"typed Run, translated", "BenchmarkRun/one-aot", fixedTyped},
		{"typed Run, interpreted", "BenchmarkRun/one", 0},
		{"typed Run, translated, all cores", "BenchmarkRun/one-aot/parallel", 0},
		// Taking and giving back the seat that counts a typed run for
		// Close: the typed Run cannot cost less than the translation plus
		// this. Two locked instructions, for comparison.
		{"a seat taken and given back", "BenchmarkSeatPair", 0},
		{"two locked instructions", "BenchmarkLockedPair", 0},
	}
	for _, f := range fixed {
		v := byName[f.bench].metrics["ns/op"]
		fmt.Fprintf(w, "  %-32s %s\n", f.label, mark(v, f.target, "%.1f"))
	}
	drains(w, byName)
	weight(w, byName)
}

// drains prints internal/ringbench's table: per record size and consumer
// of a kernel ring buffer, the median ns a record and the rate against
// cilium/ebpf's Read and ReadInto, with the targets at 64 bytes; then the
// highest rate Serve sustained with no loss.
func drains(w io.Writer, byName map[string]result) {
	consumers := []struct {
		name           string
		read, readInto float64 // targets: at least this rate, at 64 bytes
	}{
		{"serve-hook", drainServe, 0},
		{"serve-callback", 0, 0},
		{"typed-Read", 0, 0},
		{"typed-ReadInto", 0, drainReadInto},
		{"cilium-Read", 0, 0},
		{"cilium-ReadInto", 0, 0},
		{"libbpf", 0, 0},
	}
	fmt.Fprintln(w)
	fmt.Fprintf(w, "ring buffer drain, median of rounds (targets at 64 bytes: serve-hook >= %.1fx cilium Read,\n", drainServe)
	fmt.Fprintf(w, "typed-ReadInto >= %.1fx cilium ReadInto):\n", drainReadInto)
	fmt.Fprintf(w, "  %-6s %-16s %10s %16s %18s %6s\n", "bytes", "consumer", "ns/record", "x cilium Read", "x cilium ReadInto", "lost")
	for _, size := range []string{"16B", "64B", "256B"} {
		for _, c := range consumers {
			r, ok := byName["BenchmarkDrain/"+size+"/"+c.name]
			if !ok {
				continue
			}
			read, into := c.read, c.readInto
			if size != "64B" {
				read, into = 0, 0
			}
			fmt.Fprintf(w, "  %-6s %-16s %10s %16s %18s %6.0f\n", size, c.name, mark(r.metrics["ns/record"], 0, "%.1f"),
				atLeast(r.metrics["x-cilium-Read"], read), atLeast(r.metrics["x-cilium-ReadInto"], into), r.metrics["lost"])
		}
	}
	if r, ok := byName["BenchmarkSustained"]; ok {
		fmt.Fprintf(w, "  Serve's record hook, 64-byte records from both CPUs: %.0f records/s with no loss; %.0f lost at %.0f records/s\n",
			r.metrics["records/s-no-loss"], r.metrics["lost-past"], r.metrics["records/s-lossy"])
	}
}

// atLeast formats a rate with its target, the least it may be: "(under)"
// when it misses it.
func atLeast(v, target float64) string {
	if v > 0 && v < target {
		return fmt.Sprintf("%.2f (under)", v)
	}
	return mark(v, 0, "%.2f")
}

// weight prints the generated code's weight against bpf2go's, from
// BenchmarkWeight's results.
func weight(w io.Writer, byName map[string]result) {
	total := byName["BenchmarkWeight/total"].metrics
	left := "-"
	if total != nil {
		left = fmt.Sprintf("%.0f", total["left-out"])
	}
	fmt.Fprintln(w)
	fmt.Fprintf(w, "generated code, skelgen / bpf2go (targets: compile CPU <= %.1fx, lines <= %.1fx, tool binary <= %.1fx;\n", weightCPU, weightLines, weightBinary)
	fmt.Fprintf(w, "no-op regeneration of 50 packages <= %.1f s), over %s objects, %s left out:\n", weightRegen, count(total["objects"]), left)
	rows := []struct {
		label, bench, unit string
		target             float64
		format             string
	}{
		{"compile CPU, summed", "BenchmarkWeight/total", "cpu-ms-ratio", weightCPU, "%.2f"},
		{"compile CPU, worst object", "BenchmarkWeight/total", "worst-cpu-ratio", 0, "%.2f"},
		{"compile CPU, kernel-only", "BenchmarkWeight/total", "kernel-only-cpu-ratio", weightCPU, "%.2f"},
		{"non-blank lines, summed", "BenchmarkWeight/total", "lines-ratio", weightLines, "%.2f"},
		{"non-blank lines, kernel-only", "BenchmarkWeight/total", "kernel-only-lines-ratio", weightLines, "%.2f"},
		{"execsnoop tool's binary", "BenchmarkWeight/binary", "bytes-ratio", weightBinary, "%.3f"},
		{"no-op regeneration, s", "BenchmarkWeight/noop-regen", "s/regen", weightRegen, "%.2f"},
	}
	for _, r := range rows {
		fmt.Fprintf(w, "  %-32s %s\n", r.label, mark(byName[r.bench].metrics[r.unit], r.target, r.format))
	}
	for _, c := range []struct{ label, bench string }{
		{"runtime copy, kernel-only", "BenchmarkWeight/runtime-kernel-only"},
		{"runtime copy, with the VM", "BenchmarkWeight/runtime-with-vm"},
	} {
		m := byName[c.bench].metrics
		fmt.Fprintf(w, "  %-32s %s lines, %s files, %s ms compile CPU\n", c.label, count(m["lines"]), count(m["files"]), count(m["cpu-ms"]))
	}
}

// count formats a whole number, "-" when not measured.
func count(v float64) string {
	if v <= 0 {
		return "-"
	}
	return fmt.Sprintf("%.0f", v)
}

// mark formats v with its target: "-" when not measured, and "(over)"
// when it misses a target (target 0: none).
func mark(v, target float64, format string) string {
	switch {
	case v <= 0 || math.IsNaN(v):
		return "-"
	case target > 0 && v > target:
		return fmt.Sprintf(format+" (over)", v)
	}
	return fmt.Sprintf(format, v)
}

func geomean(vs []float64) float64 {
	if len(vs) == 0 {
		return 0
	}
	sum := 0.0
	for _, v := range vs {
		sum += math.Log(v)
	}
	return math.Exp(sum / float64(len(vs)))
}
