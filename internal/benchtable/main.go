// Command benchtable reads the output of make bench's go test -bench run
// on its standard input, copies it to its standard output as it comes,
// and ends with one table of the figures the runtime's targets are about:
// per workload, the translation's time against the kernel JIT's
// (aot-vs-kernel, both the hand-written workloads of internal/aotbench
// and the clang-compiled ones of internal/clangbench) and the
// interpreter's ns per instruction; their geometric means; and the fixed
// cost of a run through the translation, the interpreter, a skeleton's
// typed Run and the kernel, with what counting a typed Run for Close
// costs (a seat taken and given back) and what two locked instructions
// would. Each figure is marked
// against its target. It
// exits 1 when the input reports a failure.
package main

import (
	"bufio"
	"fmt"
	"io"
	"math"
	"os"
	"regexp"
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
)

// ratioTarget is the translation/kernel target of a workload: 1.1 for the
// clang-compiled switch and if-else dispatch loops, aotPerWorkload for the
// rest.
func ratioTarget(workload string) float64 {
	switch workload {
	case "clang switch32", "clang ifelse":
		return 1.1
	}
	return aotPerWorkload
}

// result is one benchmark line: its name without the -N suffix and its
// metrics by unit.
type result struct {
	name    string
	metrics map[string]float64
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
			if _, seen := byName[r.name]; !seen {
				order = append(order, r.name)
			}
			byName[r.name] = r
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
			if v, ok := r.metrics["aot/kernel"]; ok {
				add(workload).ratio = v
			}
		case "interp":
			if v, ok := r.metrics["ns/insn"]; ok {
				add(workload).perInsn = v
			}
		}
	}
	fmt.Fprintln(w)
	fmt.Fprintln(w, "Summary (targets: translation/kernel <= 1.0 per workload, 1.1 for clang's switch32 and ifelse,")
	fmt.Fprintln(w, "and <= 0.9 geometric mean;")
	fmt.Fprintln(w, "interpreter <= 0.8 ns per instruction; fixed cost <= 5 ns translated, <= 15 ns typed Run)")
	fmt.Fprintln(w)
	fmt.Fprintf(w, "%-22s %18s %22s\n", "workload", "translation/kernel", "interpreter ns/insn")
	var ratios, perInsn []float64
	for _, n := range names {
		r := rows[n]
		fmt.Fprintf(w, "%-22s %18s %22s\n", n, mark(r.ratio, ratioTarget(n), "%.2f"), mark(r.perInsn, interpPerInsn, "%.2f"))
		if r.ratio > 0 {
			ratios = append(ratios, r.ratio)
		}
		if r.perInsn > 0 {
			perInsn = append(perInsn, r.perInsn)
		}
	}
	fmt.Fprintf(w, "%-22s %18s %22s\n", "geometric mean", mark(geomean(ratios), aotGeomean, "%.2f"), mark(geomean(perInsn), interpPerInsn, "%.2f"))
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
