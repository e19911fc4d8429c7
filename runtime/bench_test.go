package runtime

import (
	"slices"
	"testing"
	"time"

	"github.com/skelgen/skelgen/internal/workloads"
)

func newCountMap(tb testing.TB) Map {
	m, err := NewMap(MapSpec{Name: "counts", Type: Hash, KeySize: 4, ValueSize: 8, MaxEntries: 256})
	if err != nil {
		tb.Fatal(err)
	}
	return m
}

func loadAsm(tb testing.TB, src string, maps []Map, opts *Options) *Program {
	tb.Helper()
	insns, err := assemble(src)
	if err != nil {
		tb.Fatal(err)
	}
	p, err := Load(&ProgramSpec{Name: "bench", Instructions: insns, Maps: maps}, opts)
	if err != nil {
		tb.Fatal(err)
	}
	return p
}

func benchBPF(b *testing.B, src string, ctx []byte, maps []Map, want uint64) {
	p := loadAsm(b, src, maps, nil)
	r0, err := p.Run(ctx)
	if err != nil {
		b.Fatal(err)
	}
	if r0 != want {
		b.Fatalf("r0 = %d, want %d (from the Go version)", r0, want)
	}
	insns := p.Machine().Executed()
	b.ReportAllocs()
	b.ResetTimer()
	// The runs go in rounds of benchRound. ns/insn is the mean over all
	// runs, ns/insn-median the median full round's and ns/insn-fastest
	// the fastest full round's: a disturbance of a shared machine only
	// ever adds time, so the mean includes what the neighbours took, the
	// median the typical round and the fastest the least disturbed one.
	var rounds []float64
	for done := 0; done < b.N; {
		n := min(benchRound, b.N-done)
		start := time.Now()
		for range n {
			if _, err := p.Run(ctx); err != nil {
				b.Fatal(err)
			}
		}
		if n == benchRound {
			rounds = append(rounds, float64(time.Since(start).Nanoseconds())/benchRound)
		}
		done += n
	}
	b.StopTimer()
	b.ReportMetric(float64(insns), "insns/op")
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(insns), "ns/insn")
	if len(rounds) > 0 {
		slices.Sort(rounds)
		b.ReportMetric(rounds[len(rounds)/2]/float64(insns), "ns/insn-median")
		b.ReportMetric(rounds[0]/float64(insns), "ns/insn-fastest")
	}
}

// benchRound is the number of runs in a round of benchBPF.
const benchRound = 100

var sink uint64

// BenchmarkWorkloads runs each workload of internal/workloads in the
// interpreter ("bpf") and as plain Go ("go"); the BPF result is checked
// against the Go twin before timing.
func BenchmarkWorkloads(b *testing.B) {
	for _, w := range workloads.Workloads() {
		b.Run(w.Name+"/bpf", func(b *testing.B) {
			var maps []Map
			if w.HashMap {
				// The first run inserts the keys; timed runs count into them.
				maps = []Map{newCountMap(b)}
			}
			benchBPF(b, w.Asm, w.Ctx, maps, w.Want)
		})
		b.Run(w.Name+"/go", func(b *testing.B) {
			for range b.N {
				sink += w.Go()
			}
		})
	}
}

// BenchmarkRunOverhead is the fixed cost of one run: a program of two
// instructions over a 64-byte context.
func BenchmarkRunOverhead(b *testing.B) {
	p := loadAsm(b, "mov %r0, 1\nexit", nil, nil)
	ctx := make([]byte, 64)
	b.ReportAllocs()
	for range b.N {
		if _, err := p.Run(ctx); err != nil {
			b.Fatal(err)
		}
	}
}
