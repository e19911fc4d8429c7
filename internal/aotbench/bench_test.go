package aotbench

import (
	"bytes"
	"encoding/binary"
	"errors"
	"strings"
	"syscall"
	"testing"

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
			b.Run("kernel", func(b *testing.B) { kernel(b, w) })
		})
	}
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

// kernel loads the workload as an XDP program and times it with
// BPF_PROG_TEST_RUN, reporting the kernel's time per run. The context is
// the packet, which programs that read r1 as plain memory cannot use: the
// verifier rejects those, and the benchmark says so and skips. Byte-buffer
// workloads run their XDP form over a packet of their buffer's bytes.
func kernel(b *testing.B, w Workload) {
	testenv.Kernel(b)
	raw, err := w.KernelInstructions()
	if err != nil {
		b.Fatal(err)
	}
	var buf []byte
	for _, in := range raw {
		buf = in.Encode(buf, binary.LittleEndian)
	}
	insns, err := ebpfasm.AppendInstructions(nil, bytes.NewReader(buf), binary.LittleEndian, "linux")
	if err != nil {
		b.Fatal(err)
	}
	if w.HashMap {
		m, err := ebpf.NewMap(&ebpf.MapSpec{Type: ebpf.Hash, KeySize: 4, ValueSize: 8, MaxEntries: 256})
		if err != nil {
			b.Fatal(err)
		}
		defer m.Close()
		for i := range insns {
			if insns[i].OpCode == ebpfasm.LoadImmOp(ebpfasm.DWord) && insns[i].Src == runtime.PseudoMapIdx {
				insns[i].Src = ebpfasm.PseudoMapFD
				if err := insns[i].AssociateMap(m); err != nil {
					b.Fatal(err)
				}
			}
		}
	}
	p, err := ebpf.NewProgramWithOptions(&ebpf.ProgramSpec{Type: ebpf.XDP, License: "GPL", Instructions: insns},
		ebpf.ProgramOptions{LogSizeStart: 1 << 20})
	if err != nil {
		var ve *ebpf.VerifierError
		if errors.As(err, &ve) {
			b.Skipf("the verifier rejects %s: %v", w.Name, lastLines(err, 2))
		}
		if errors.Is(err, syscall.EFAULT) {
			// The kernel's verifier fails internally on some loops
			// (primes on 6.18): the kernel cannot run the program.
			b.Skipf("the kernel refuses %s: %v", w.Name, err)
		}
		b.Fatal(err)
	}
	defer p.Close()
	pkt := make([]byte, 64)
	if w.Buffer {
		pkt = w.Ctx
	}
	r0, _, err := p.Benchmark(pkt, 1, nil)
	if err != nil {
		b.Fatal(err)
	}
	if uint64(r0) != w.Want&0xffffffff {
		b.Fatalf("kernel r0 = %d, want %d (from the Go version, 32 bits)", r0, uint32(w.Want))
	}
	b.ResetTimer()
	_, per, err := p.Benchmark(pkt, b.N, b.ResetTimer)
	if err != nil {
		b.Fatal(err)
	}
	b.ReportMetric(float64(per.Nanoseconds()), "ns/op")
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
