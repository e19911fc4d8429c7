package clangbench

import (
	"math"
	"math/rand/v2"
	"os"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/cilium/ebpf"

	"github.com/skelgen/skelgen/internal/testenv"
	"github.com/skelgen/skelgen/runtime"
	"github.com/skelgen/skelgen/runtime/bridge"
)

// size is N of clangbench.bpf.c: the bytes every workload reads.
const size = 2048

// workload is one body of clangbench.bpf.c in its two forms.
type workload struct {
	name string
	user *bridge.BufferProgram
	xdp  *ebpf.Program
	// entry is the translation's entry function, whose placement the
	// benchmark reports (testenv.ReportPlacement).
	entry runtime.Entry
}

func workloads(o *ClangbenchObjects) []workload {
	return []workload{
		{"checksum", o.ChecksumUser, o.ChecksumXdp.Raw(), clangbenchChecksumUserTranslation().Entry},
		{"log2sum", o.Log2sumUser, o.Log2sumXdp.Raw(), clangbenchLog2sumUserTranslation().Entry},
		{"dispatch", o.DispatchUser, o.DispatchXdp.Raw(), clangbenchDispatchUserTranslation().Entry},
		{"primes", o.PrimesUser, o.PrimesXdp.Raw(), clangbenchPrimesUserTranslation().Entry},
		{"fnv1a", o.Fnv1aUser, o.Fnv1aXdp.Raw(), clangbenchFnv1aUserTranslation().Entry},
		{"words", o.WordsUser, o.WordsXdp.Raw(), clangbenchWordsUserTranslation().Entry},
		{"switch32", o.Switch32User, o.Switch32Xdp.Raw(), clangbenchSwitch32UserTranslation().Entry},
		{"ifelse", o.IfelseUser, o.IfelseXdp.Raw(), clangbenchIfelseUserTranslation().Entry},
		{"bytecode", o.BytecodeUser, o.BytecodeXdp.Raw(), clangbenchBytecodeUserTranslation().Entry},
		{"count", o.CountUser, o.CountXdp.Raw(), clangbenchCountUserTranslation().Entry},
	}
}

// input is the bytes every workload reads, the same in every run.
func input() []byte {
	return textLike(rand.New(rand.NewPCG(7, 8)))
}

// textLike is size random bytes, a space or newline every few bytes.
func textLike(rnd *rand.Rand) []byte {
	data := make([]byte, size)
	for i := range data {
		switch rnd.IntN(8) {
		case 0:
			data[i] = ' '
		case 1:
			data[i] = '\n'
		default:
			data[i] = byte(rnd.IntN(256))
		}
	}
	return data
}

func load(tb testing.TB) *ClangbenchObjects {
	tb.Helper()
	testenv.Kernel(tb)
	o, err := LoadClangbench(nil)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { o.Close() })
	return o
}

// kernelRun runs the XDP form once over data and returns the result it
// stored.
func kernelRun(tb testing.TB, o *ClangbenchObjects, p *ebpf.Program, data []byte) uint64 {
	tb.Helper()
	ret, err := p.Run(&ebpf.RunOptions{Data: data})
	if err != nil || ret != 2 { // XDP_PASS
		tb.Fatalf("kernel run: %d, %v", ret, err)
	}
	v, err := o.Variables.Result.Get()
	if err != nil {
		tb.Fatal(err)
	}
	return v
}

// clearCounts empties both count maps, so that each side's first run
// starts from nothing.
func clearCounts(tb testing.TB, o *ClangbenchObjects) {
	tb.Helper()
	for k := range uint32(256) {
		o.UserCounts.Delete(k)
		o.KernelCounts.Delete(k)
	}
}

// TestAgree: the translation, the interpreter and the kernel compute the
// same result for every workload, and the translation is the one the
// typed Run uses.
func TestAgree(t *testing.T) {
	o := load(t)
	data := input()
	for _, w := range workloads(o) {
		if !w.user.Translated() {
			t.Errorf("%s: no translation", w.name)
		}
		clearCounts(t, o)
		k := kernelRun(t, o, w.xdp, data)
		aot, err := w.user.Run(data)
		if err != nil {
			t.Fatalf("%s: %v", w.name, err)
		}
		clearCounts(t, o)
		interp, err := w.user.Raw().Run(data)
		if err != nil {
			t.Fatalf("%s: interpreter: %v", w.name, err)
		}
		if aot != k || interp != k {
			t.Errorf("%s: translation %#x, interpreter %#x, kernel %#x", w.name, aot, interp, k)
		}
		if k == 0 {
			t.Errorf("%s: the result is 0: the workload did no work", w.name)
		}
	}
}

// TestLoopsHoisted: the translation of every workload whose loop counts
// over the buffer runs that loop as a hoisted loop, whose fast copy reads
// the buffer without a check per byte and checks no budget: clang's
// layouts of a switch, of a rotated loop and of an if-else chain whose arms
// lie past the loop's exit all qualify.
func TestLoopsHoisted(t *testing.T) {
	src, err := os.ReadFile("clangbench_bpfel_aot.go")
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"Checksum", "Log2sum", "Dispatch", "Fnv1a", "Words", "Switch32", "Ifelse"} {
		_, fn, ok := strings.Cut(string(src), "\nfunc clangbench"+name+"UserFn0(")
		if !ok {
			t.Fatalf("%s: no translation", name)
		}
		fn, _, _ = strings.Cut(fn, "\n}\n")
		_, fast, ok := strings.Cut(fn, "runtime.LoopTrips")
		if !ok {
			t.Errorf("%s: the loop is not hoisted", name)
			continue
		}
		fast, _, _ = strings.Cut(fast, "\nL")
		if strings.Contains(fast, "CheckBudget") || strings.Contains(fast, "m.Load") {
			t.Errorf("%s: the fast copy checks the budget or a load:\n%s", name, fast)
		}
	}
}

// BenchmarkClang runs each workload through its translation (the typed
// Run), the interpreter (with its ns per instruction) and the kernel's JIT
// (BPF_PROG_TEST_RUN), and
// aot-vs-kernel interleaves rounds of the two and reports the median
// ratio; geomean is the geometric mean of those medians over the
// workloads.
//
// Where the code lies moves the figures on both sides: the kernel's time
// depends on where its JIT put the program's image (checksum's ran in 5.4
// µs in one load and 8.5 µs in another), so aot-vs-kernel's kernel rounds
// take kernelLoads loads of the object in turn; the translation's depends
// on where the linker put its function, which make bench varies by
// building the package at four placements (align1.go and the others) and
// internal/benchtable averages.
func BenchmarkClang(b *testing.B) {
	o := load(b)
	data := input()
	varied := variedInputs()
	loads := [][]workload{workloads(o)}
	for range kernelLoads - 1 {
		loads = append(loads, workloads(load(b)))
	}
	ratios := map[string]float64{}
	for i, w := range workloads(o) {
		b.Run(w.name, func(b *testing.B) {
			b.Run("aot", func(b *testing.B) {
				for b.Loop() {
					if _, err := w.user.Run(data); err != nil {
						b.Fatal(err)
					}
				}
			})
			b.Run("interp", func(b *testing.B) {
				raw := w.user.Raw()
				if _, err := raw.Run(data); err != nil {
					b.Fatal(err)
				}
				insns := raw.Machine().Executed()
				for b.Loop() {
					if _, err := raw.Run(data); err != nil {
						b.Fatal(err)
					}
				}
				b.ReportMetric(float64(insns), "insns/op")
				b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(insns), "ns/insn")
			})
			b.Run("kernel", func(b *testing.B) {
				b.ResetTimer()
				_, per, err := w.xdp.Benchmark(data, b.N, b.ResetTimer)
				if err != nil {
					b.Fatal(err)
				}
				b.ReportMetric(float64(per.Nanoseconds()), "ns/op")
			})
			var xdps []*ebpf.Program // the workload in each load
			for _, l := range loads {
				xdps = append(xdps, l[i].xdp)
			}
			b.Run("aot-vs-kernel", func(b *testing.B) {
				ratios[w.name] = versus(b, w, xdps, data)
			})
			b.Run("varied-vs-kernel", func(b *testing.B) {
				versusVaried(b, w, xdps, varied)
			})
		})
	}
	b.Run("geomean", func(b *testing.B) {
		if len(ratios) == 0 {
			b.Skip("no workload ran")
		}
		sum := 0.0
		for _, r := range ratios {
			sum += math.Log(r)
		}
		for b.Loop() {
		}
		b.ReportMetric(math.Exp(sum/float64(len(ratios))), "aot/kernel")
	})
}

// kernelLoads is how many loads of the object aot-vs-kernel's kernel
// rounds take in turn.
const kernelLoads = 5

// versus interleaves rounds of runs of the translation and the kernel, the
// kernel's round by round on each of xdps in turn, and returns (and
// reports) the median of their per-run time ratios.
func versus(b *testing.B, w workload, xdps []*ebpf.Program, data []byte) float64 {
	const round, rounds = 200, 100
	aot, kern, ratio := make([]float64, 0, rounds), make([]float64, 0, rounds), make([]float64, 0, rounds)
	b.ResetTimer()
	for r := range rounds {
		start := time.Now()
		for range round {
			if _, err := w.user.Run(data); err != nil {
				b.Fatal(err)
			}
		}
		a := float64(time.Since(start).Nanoseconds()) / round
		_, per, err := xdps[r%len(xdps)].Benchmark(data, round, nil)
		if err != nil {
			b.Fatal(err)
		}
		k := float64(per.Nanoseconds())
		aot, kern, ratio = append(aot, a), append(kern, k), append(ratio, a/k)
	}
	b.StopTimer()
	m := median(ratio)
	b.ReportMetric(m, "aot/kernel")
	b.ReportMetric(median(aot), "aot-ns/run")
	b.ReportMetric(median(kern), "kernel-ns/run")
	testenv.ReportPlacement(b, w.entry)
	return m
}

// variedInputs are inputs like input's, each from its own seed.
func variedInputs() [][]byte {
	ins := make([][]byte, 64)
	for s := range ins {
		ins[s] = textLike(rand.New(rand.NewPCG(uint64(s), 9)))
	}
	return ins
}

// versusVaried is versus on inputs that differ from one run to the next,
// a round each b.Loop. aot-vs-kernel runs each side on the same bytes
// round after round, and a
// branch predictor learns much of a dispatch loop's 1,024 decisions when
// they repeat: which side learns more, a Go switch's jump table or the
// JIT's tree of branches, changes from one process to the next. Here a
// round runs each side once on each of ins in turn, far more decisions
// than a predictor holds; the kernel's time is BPF_PROG_TEST_RUN's own
// measure of one run (repeat 1), which leaves the system call out.
func versusVaried(b *testing.B, w workload, xdps []*ebpf.Program, ins [][]byte) {
	var aot, kern, ratio []float64
	for r := 0; b.Loop(); r++ {
		start := time.Now()
		for _, in := range ins {
			if _, err := w.user.Run(in); err != nil {
				b.Fatal(err)
			}
		}
		a := float64(time.Since(start).Nanoseconds()) / float64(len(ins))
		var k time.Duration
		for _, in := range ins {
			_, per, err := xdps[r%len(xdps)].Benchmark(in, 1, nil)
			if err != nil {
				b.Fatal(err)
			}
			k += per
		}
		kk := float64(k.Nanoseconds()) / float64(len(ins))
		aot, kern, ratio = append(aot, a), append(kern, kk), append(ratio, a/kk)
	}
	b.ReportMetric(median(ratio), "aot/kernel")
	b.ReportMetric(median(aot), "aot-ns/run")
	b.ReportMetric(median(kern), "kernel-ns/run")
	testenv.ReportPlacement(b, w.entry)
}

func median(v []float64) float64 {
	slices.Sort(v)
	if n := len(v); n%2 == 1 {
		return v[n/2]
	} else {
		return (v[n/2-1] + v[n/2]) / 2
	}
}

// TestCountConcurrent: goroutines run count's translation at once over
// the same bytes. Its counters are values of a user-space hash map, which
// runs hold the lock of, so their atomic adds take plain read-modify-writes
// (runtime.Memory.Owned64); runs take turns on the map, so not one count
// may be lost, the inserts of a byte's first count included.
func TestCountConcurrent(t *testing.T) {
	o := load(t)
	data := input()
	clearCounts(t, o)
	const goroutines, runs = 4, 200
	var want [256]uint64
	for _, c := range data[:512] {
		want[c] += goroutines * runs
	}
	var wg sync.WaitGroup
	errs := make(chan error, goroutines)
	for range goroutines {
		wg.Go(func() {
			for range runs {
				if _, err := o.CountUser.Run(data); err != nil {
					errs <- err
					return
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	for k, n := range want {
		got, err := o.UserCounts.Lookup(uint32(k))
		if n == 0 {
			if err == nil {
				t.Errorf("byte %#x: counted %d, not in the input", k, got)
			}
			continue
		}
		if err != nil || got != n {
			t.Errorf("byte %#x: counted %d (%v), want %d", k, got, err, n)
		}
	}
}
