package runtime

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"slices"
	"strings"
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

// BenchmarkHelperWork runs programs that spend their run on one helper's
// work over large inputs until the work meter (Machine.Charge) runs out,
// and reports the time per unit charged, to compare with ns/insn of the
// workloads: "copy" updates the 1 MiB value of one key (into the map's
// spare slot), "alloc" inserts new 64 KiB values into a BPF_F_NO_PREALLOC
// map, "hash" looks up a 1 MiB key, "strncmp" compares 64 KiB strings.
func BenchmarkHelperWork(b *testing.B) {
	const budget = 1 << 22
	update := `
		stxw [%r10-4], %r7
		lddw %r1, map:0
		mov %r2, %r10
		add %r2, -4
		mov %r3, %r6
		mov %r4, 0
		call 2
		add %r7, KEYSTEP
		ja loop`
	for _, c := range []struct {
		name string
		spec MapSpec
		body string
		ctx  []byte
		fill []byte // a key to insert before each run
	}{
		{"copy", MapSpec{Type: Hash, KeySize: 4, ValueSize: 1 << 20, MaxEntries: 1}, strings.Replace(update, "KEYSTEP", "0", 1), make([]byte, 1<<20), nil},
		{"alloc", MapSpec{Type: Hash, KeySize: 4, ValueSize: 64 << 10, MaxEntries: 1 << 14, Flags: FlagNoPrealloc}, strings.Replace(update, "KEYSTEP", "1", 1), make([]byte, 64<<10), nil},
		{"hash", MapSpec{Type: Hash, KeySize: 1 << 20, ValueSize: 8, MaxEntries: 1}, "lddw %r1, map:0\nmov %r2, %r6\ncall 1\nja loop", make([]byte, 1<<20), make([]byte, 1<<20)},
		{"strncmp", MapSpec{Type: Array, KeySize: 4, ValueSize: 8, MaxEntries: 1}, "mov %r1, %r6\nmov %r2, 65535\nmov %r3, %r6\ncall 182\nja loop", append(bytes.Repeat([]byte{'a'}, 1<<16-1), 0), nil},
	} {
		b.Run(c.name, func(b *testing.B) {
			src := "mov %r6, %r1\nmov %r7, 0\nloop:\n" + c.body
			var elapsed time.Duration
			for range b.N {
				b.StopTimer()
				c.spec.Name = c.name
				m, err := NewMap(c.spec)
				if err != nil {
					b.Fatal(err)
				}
				if c.fill != nil {
					if err := m.Update(c.fill, make([]byte, c.spec.ValueSize), UpdateAny); err != nil {
						b.Fatal(err)
					}
				}
				p := loadAsm(b, src, []Map{m}, &Options{Budget: budget})
				b.StartTimer()
				start := time.Now()
				_, err = p.Run(c.ctx)
				elapsed += time.Since(start)
				if !errors.Is(err, ErrBudget) {
					b.Fatalf("%v, want ErrBudget", err)
				}
			}
			b.ReportMetric(float64(elapsed.Nanoseconds())/float64(b.N)/budget, "ns/unit")
		})
	}
}

// BenchmarkLookups times 256 lookups a run in the interpreter, of a hash
// map of 4-byte keys and of an array, each two ways (see benchDirect).
// Every key is present and its value mapped by the first run.
func BenchmarkLookups(b *testing.B) {
	const prog = `
	mov %r6, 0
	mov %r7, 0
loop:
	mov %r1, %r7
	and %r1, 63
	stxw [%r10-4], %r1
	lddw %r1, map:0
	mov %r2, %r10
	add %r2, -4
	JOIN
	call 1
	jeq %r0, 0, skip
	ldxdw %r3, [%r0]
	add %r6, %r3
skip:
	add %r7, 1
	jlt %r7, 256, loop
	mov %r0, %r6
	exit`
	for _, typ := range []MapType{Hash, Array} {
		benchDirect(b, map[MapType]string{Hash: "hash", Array: "array"}[typ], prog, typ, 4*(63*64/2))
	}
}

// BenchmarkUpdates times map_update_elem and map_delete_elem in the
// interpreter as BenchmarkLookups times lookups: "update" overwrites one
// of the 64 keys 256 times a run, of a hash map and of an array; "delete"
// deletes one of the 64 keys of a hash map and inserts it again
// (BPF_NOEXIST), 256 times a run, so that the map stays full.
func BenchmarkUpdates(b *testing.B) {
	const update = `
	mov %r6, 0
	mov %r7, 0
loop:
	mov %r1, %r6
	and %r1, 63
	stxw [%r10-4], %r1
	stxdw [%r10-16], %r6
	lddw %r1, map:0
	mov %r2, %r10
	add %r2, -4
	mov %r3, %r10
	add %r3, -16
	mov %r4, 0
	JOIN
	call 2
	or %r7, %r0
	add %r6, 1
	jlt %r6, 256, loop
	mov %r0, %r7
	exit`
	const del = `
	mov %r6, 0
	mov %r7, 0
loop:
	mov %r1, %r6
	and %r1, 63
	stxw [%r10-4], %r1
	lddw %r1, map:0
	mov %r2, %r10
	add %r2, -4
	JOIN
	call 3
	or %r7, %r0
	stxdw [%r10-16], %r6
	lddw %r1, map:0
	mov %r2, %r10
	add %r2, -4
	mov %r3, %r10
	add %r3, -16
	mov %r4, 1
	JOIN
	call 2
	or %r7, %r0
	add %r6, 1
	jlt %r6, 256, loop
	mov %r0, %r7
	exit`
	benchDirect(b, "update/hash", update, Hash, 0)
	benchDirect(b, "update/array", update, Array, 0)
	benchDirect(b, "delete/hash", del, Hash, 0)
}

// benchDirect times prog, whose map calls have a JOIN before them, on a
// map of typ with keys 0..63 (value i at key i), two ways: "direct", where
// the code before each call fixes its arguments, so that it goes to the
// direct function (Lookup32, Update32, Delete32: see directSites), and
// "helper", the same program with a jump target just before each call,
// which leaves them to the built-in helpers. Each run must return want.
func benchDirect(b *testing.B, name, prog string, typ MapType, want uint64) {
	mp, err := NewMap(MapSpec{Name: "m", Type: typ, KeySize: 4, ValueSize: 8, MaxEntries: 64})
	if err != nil {
		b.Fatal(err)
	}
	var k, v [8]byte
	for i := range 64 {
		binary.LittleEndian.PutUint32(k[:], uint32(i))
		binary.LittleEndian.PutUint64(v[:], uint64(i))
		if err := mp.Update(k[:4], v[:], UpdateAny); err != nil {
			b.Fatal(err)
		}
	}
	for _, way := range []string{"direct", "helper"} {
		b.Run(name+"/"+way, func(b *testing.B) {
			src := prog
			for n := 0; strings.Contains(src, "JOIN"); n++ {
				join := ""
				if way == "helper" {
					join = fmt.Sprintf("ja join%d\njoin%d:", n, n)
				}
				src = strings.Replace(src, "JOIN", join, 1)
			}
			p := loadAsm(b, src, []Map{mp}, nil)
			if direct := p.direct != nil; direct != (way == "direct") {
				b.Fatalf("direct sites: %v", direct)
			}
			for b.Loop() {
				if r0, err := p.Run(nil); err != nil || r0 != want {
					b.Fatalf("r0 = %#x, %v; want %#x", r0, err, want)
				}
			}
		})
	}
}

// BenchmarkRunLookup is the cost of a run that looks up a hash map once,
// with its key in a stack slot: what short per-event programs pay.
func BenchmarkRunLookup(b *testing.B) {
	m := mustMap(b, MapSpec{Name: "counts", Type: Hash, KeySize: 4, ValueSize: 8, MaxEntries: 16})
	p := loadAsm(b, `
		stw [%r10-4], 3
		lddw %r1, map:0
		mov %r2, %r10
		add %r2, -4
		call 1
		mov %r0, 1
		exit`, []Map{m}, nil)
	ctx := make([]byte, 64)
	for b.Loop() {
		if _, err := p.Run(ctx); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkHelperCalls times a run making one call: snprintf of an
// integer, a string and a hex number, and ring buffer output of a
// 16-byte record, which Go reads after the run.
func BenchmarkHelperCalls(b *testing.B) {
	b.Run("snprintf", func(b *testing.B) {
		p := loadAsm(b, `
			stdw [%r10-24], 42
			lddw %r1, value:0+15
			stxdw [%r10-16], %r1
			stdw [%r10-8], 255
			mov %r1, %r10
			add %r1, -128
			mov %r2, 64
			lddw %r3, value:0+0
			mov %r4, %r10
			add %r4, -24
			mov %r5, 24
			call 165
			exit`, []Map{global(b, ".rodata", []byte("a=%d s=%s x=%x\x00hello\x00"))}, nil)
		b.ReportAllocs()
		for range b.N {
			if r0, err := p.Run(nil); err != nil || r0 != 18 { // "a=42 s=hello x=ff" and its NUL
				b.Fatalf("%d, %v", r0, err)
			}
		}
	})
	b.Run("ringbuf_output", func(b *testing.B) {
		mp, err := NewMap(MapSpec{Name: "rb", Type: RingBuf, MaxEntries: 1 << 12})
		if err != nil {
			b.Fatal(err)
		}
		rb := mp.(*RingBuffer)
		p := loadAsm(b, `
			stdw [%r10-16], 1
			stdw [%r10-8], 2
			lddw %r1, map:0
			mov %r2, %r10
			add %r2, -16
			mov %r3, 16
			mov %r4, 0
			call 130
			exit`, []Map{mp}, nil)
		b.ReportAllocs()
		for range b.N {
			if r0, err := p.Run(nil); err != nil || r0 != 0 {
				b.Fatalf("%d, %v", r0, err)
			}
			if _, ok := rb.Read(); !ok {
				b.Fatal("no record")
			}
		}
	})
}
