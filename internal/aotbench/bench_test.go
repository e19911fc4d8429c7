package aotbench

import (
	"bytes"
	"encoding/binary"
	"errors"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/cilium/ebpf"
	ebpfasm "github.com/cilium/ebpf/asm"

	"github.com/skelgen/skelgen/internal/testenv"
	"github.com/skelgen/skelgen/runtime"
)

var sink uint64

// BenchmarkAOT runs every workload as plain Go, in the interpreter, as its
// translation and in the kernel. One run of go test -bench prints the
// whole table.
func BenchmarkAOT(b *testing.B) {
	for _, w := range Workloads() {
		b.Run(w.Name, func(b *testing.B) {
			b.Run("go", func(b *testing.B) {
				b.ReportAllocs()
				for range b.N {
					sink += w.Go()
				}
			})
			b.Run("interp", func(b *testing.B) {
				p := load(b, w)
				run(b, w, p.Run, p.Machine().Executed)
			})
			b.Run("aot", func(b *testing.B) {
				c := bind(b, load(b, w), w)
				run(b, w, c.Run, c.Program().Machine().Executed)
			})
			b.Run("kernel", func(b *testing.B) {
				kernelRuns(b, w)
			})
			b.Run("aot-vs-kernel", func(b *testing.B) { versus(b, w) })
		})
	}
}

// BenchmarkRunOverhead is the fixed cost of one run: Overhead, two
// instructions, through its translation ("aot", runtime.Compiled.Run), the
// interpreter ("interp") and the kernel's JIT ("kernel", one run of
// BPF_PROG_TEST_RUN's repeat loop).
func BenchmarkRunOverhead(b *testing.B) {
	w := Overhead()
	b.Run("aot", func(b *testing.B) {
		c := bind(b, load(b, w), w)
		run(b, w, c.Run, c.Program().Machine().Executed)
	})
	b.Run("interp", func(b *testing.B) {
		p := load(b, w)
		run(b, w, p.Run, p.Machine().Executed)
	})
	b.Run("kernel", func(b *testing.B) {
		kernelRuns(b, w)
	})
}

// kernelRuns times w's kernel form: BPF_PROG_TEST_RUN's own per-run time,
// reported as ns/op.
func kernelRuns(b *testing.B, w Workload) {
	p, pkt := kernelProgram(b, w)
	b.ResetTimer()
	_, per, err := p.Benchmark(pkt, b.N, b.ResetTimer)
	if err != nil {
		b.Fatal(err)
	}
	b.ReportMetric(float64(per.Nanoseconds()), "ns/op")
}

func load(tb testing.TB, w Workload) *runtime.Program {
	tb.Helper()
	spec, err := w.Spec()
	if err != nil {
		tb.Fatal(err)
	}
	p, err := runtime.Load(spec, nil)
	if err != nil {
		tb.Fatal(err)
	}
	return p
}

func bind(tb testing.TB, p *runtime.Program, w Workload) *runtime.Compiled {
	tb.Helper()
	t, ok := translation(w.Name)
	if !ok {
		tb.Fatalf("no translation of %s", w.Name)
	}
	c, err := p.Bind(t)
	if err != nil {
		tb.Fatal(err)
	}
	return c
}

// run checks the first result against the Go twin, then times runs and
// reports the instructions each executes.
func run(b *testing.B, w Workload, fn func([]byte) (uint64, error), executed func() uint64) {
	r0, err := fn(w.Ctx)
	if err != nil {
		b.Fatal(err)
	}
	if r0 != w.Want {
		b.Fatalf("r0 = %d, want %d (from the Go version)", r0, w.Want)
	}
	insns := executed()
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		if _, err := fn(w.Ctx); err != nil {
			b.Fatal(err)
		}
	}
	b.StopTimer()
	b.ReportMetric(float64(insns), "insns/op")
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(insns), "ns/insn")
}

// kernelProgram loads the workload as an XDP program for
// BPF_PROG_TEST_RUN, checks its result once and returns it with the packet
// to run it on; it is closed when b ends. The context is the packet, which
// programs that read r1 as plain memory cannot use: the verifier rejects
// those, and the benchmark says so and skips. Byte-buffer workloads run
// their XDP form over a packet of their buffer's bytes.
func kernelProgram(tb testing.TB, w Workload) (*ebpf.Program, []byte) {
	testenv.Kernel(tb)
	raw, err := w.KernelInstructions()
	if err != nil {
		tb.Fatal(err)
	}
	var buf []byte
	for _, in := range raw {
		buf = in.Encode(buf, binary.LittleEndian)
	}
	insns, err := ebpfasm.AppendInstructions(nil, bytes.NewReader(buf), binary.LittleEndian, "linux")
	if err != nil {
		tb.Fatal(err)
	}
	if w.HashMap {
		m, err := ebpf.NewMap(&ebpf.MapSpec{Type: ebpf.Hash, KeySize: 4, ValueSize: 8, MaxEntries: 256})
		if err != nil {
			tb.Fatal(err)
		}
		tb.Cleanup(func() { m.Close() })
		for i := range insns {
			if insns[i].OpCode == ebpfasm.LoadImmOp(ebpfasm.DWord) && insns[i].Src == runtime.PseudoMapIdx {
				insns[i].Src = ebpfasm.PseudoMapFD
				if err := insns[i].AssociateMap(m); err != nil {
					tb.Fatal(err)
				}
			}
		}
	}
	p, err := ebpf.NewProgramWithOptions(&ebpf.ProgramSpec{Type: ebpf.XDP, License: "GPL", Instructions: insns},
		ebpf.ProgramOptions{LogSizeStart: 1 << 20})
	if err != nil {
		var ve *ebpf.VerifierError
		if errors.As(err, &ve) {
			tb.Skipf("the verifier rejects %s: %v", w.Name, lastLines(err, 2))
		}
		if errors.Is(err, syscall.EFAULT) {
			// The kernel's verifier fails internally on some loops
			// (primes on 6.18): the kernel cannot run the program.
			tb.Skipf("the kernel refuses %s: %v", w.Name, err)
		}
		tb.Fatal(err)
	}
	tb.Cleanup(func() { p.Close() })
	pkt := make([]byte, 64)
	if w.Buffer {
		pkt = w.Ctx
	}
	r0, _, err := p.Benchmark(pkt, 1, nil)
	if err != nil {
		tb.Fatal(err)
	}
	if uint64(r0) != w.Want&0xffffffff {
		tb.Fatalf("kernel r0 = %d, want %d (from the Go version, 32 bits)", r0, uint32(w.Want))
	}
	return p, pkt
}

// versus times the translation, the kernel and the plain-Go twin
// alternately, in rounds of the same number of runs each, and reports:
//
//   - aot/kernel: the median of the rounds' ratios, with the medians of
//     both times per run. Timing them side by side in short rounds keeps a
//     machine whose speed drifts (a virtual machine's neighbours) from
//     favouring whichever ran in the faster moment, as two benchmarks a
//     second apart can.
//   - aot/kernel-fastest: the fastest translated round's time per run over
//     the fastest kernel round's. A disturbance only ever adds time, and on
//     a shared machine it does not add it evenly: user-space code can run
//     at half speed for tens of milliseconds while the kernel's program
//     slows by a fifth, so the median ratio measures the disturbance as
//     well; each side's fastest round is the one least disturbed.
//   - go/kernel: the median ratio of the plain-Go twin, the control: how
//     ordinary compiled Go fares against the kernel under the same
//     conditions.
//
// The kernel's side is not one load of the program but kernelLoads, taken
// in turn round by round: where the JIT places a program's image changes
// its speed (over eight loads of Switch32, the fastest rounds ranged from
// 2.2 to 2.55 µs; CsumBuf2K's from 2.8 to 5.6), so one load is one draw
// of that placement. The medians are over all loads' rounds, and the
// fastest kernel round is the fastest load's.
func versus(b *testing.B, w Workload) {
	const kernelLoads = 5
	var progs []*ebpf.Program
	var pkt []byte
	for range kernelLoads {
		p, k := kernelProgram(b, w)
		progs, pkt = append(progs, p), k
	}
	c := bind(b, load(b, w), w)
	if r0, err := c.Run(w.Ctx); err != nil || r0 != w.Want {
		b.Fatalf("aot: r0 = %d, %v; want %d", r0, err, w.Want)
	}
	// At least minRounds rounds whatever b.N asks for: the fastest of a
	// few dozen rounds on a busy machine is still a disturbed one.
	const round, minRounds = 1000, 300
	perRun := func(f func()) float64 {
		start := time.Now()
		for range round {
			f()
		}
		return float64(time.Since(start).Nanoseconds()) / round
	}
	// The rounds' figures, allocated before the timer starts (make bench
	// reports allocations: these are none of the runs').
	rounds := max(b.N/round, minRounds) + 1
	aot, kern := make([]float64, 0, rounds), make([]float64, 0, rounds)
	ratio, goRatio := make([]float64, 0, rounds), make([]float64, 0, rounds)
	b.ResetTimer()
	for done, i := 0, 0; done < max(b.N, round*minRounds); done, i = done+round, i+1 {
		p := progs[i%kernelLoads]
		a := perRun(func() {
			if _, err := c.Run(w.Ctx); err != nil {
				b.Fatal(err)
			}
		})
		_, per, err := p.Benchmark(pkt, round, nil)
		if err != nil {
			b.Fatal(err)
		}
		k := float64(per.Nanoseconds())
		g := perRun(func() { w.Go() })
		aot, kern = append(aot, a), append(kern, k)
		ratio, goRatio = append(ratio, a/k), append(goRatio, g/k)
	}
	b.StopTimer()
	b.ReportMetric(median(ratio), "aot/kernel")
	b.ReportMetric(slices.Min(aot)/slices.Min(kern), "aot/kernel-fastest")
	b.ReportMetric(median(goRatio), "go/kernel")
	b.ReportMetric(median(aot), "aot-ns/run")
	b.ReportMetric(median(kern), "kernel-ns/run")
	if t, ok := translation(w.Name); ok {
		testenv.ReportPlacement(b, t.Entry)
	}
}

func median(v []float64) float64 {
	slices.Sort(v)
	n := len(v)
	if n%2 == 1 {
		return v[n/2]
	}
	return (v[n/2-1] + v[n/2]) / 2
}

// lastLines keeps the end of a verifier error, where the reason is.
func lastLines(err error, n int) string {
	var ve *ebpf.VerifierError
	if errors.As(err, &ve) && len(ve.Log) > 0 {
		if len(ve.Log) > n {
			return strings.Join(ve.Log[len(ve.Log)-n:], " / ")
		}
		return strings.Join(ve.Log, " / ")
	}
	return err.Error()
}
