package bytebuf

import (
	"math/rand/v2"
	"testing"
)

// BenchmarkBufferPrograms runs each buffer program over 16 KiB of text-like
// bytes (a newline every 64 on average) through its translation ("aot"),
// through the interpreter ("interp"), and its Go twin ("go"), in the same
// run. The programs cap what they read (lines, classify, be32sum, sumdown
// and backhash at 4096 bytes, sum32 at 16 KiB, checksum at 1 MiB).
func BenchmarkBufferPrograms(b *testing.B) {
	objs, err := LoadBytebuf(&BytebufLoadOptions{InProcess: true})
	if err != nil {
		b.Fatal(err)
	}
	defer objs.Close()
	rnd := rand.New(rand.NewPCG(5, 6))
	data := make([]byte, 16<<10)
	for i := range data {
		data[i] = byte(' ' + rnd.IntN(95))
		if rnd.IntN(64) == 0 {
			data[i] = '\n'
		}
	}
	for _, p := range twins(b, objs, "checksum", "lines", "classify", "sum32", "hash", "be32sum", "sumdown", "backhash") {
		want := p.goFn(data)
		b.Run(p.name+"/aot", func(b *testing.B) {
			for b.Loop() {
				if r0, err := p.prog.Run(data); err != nil || r0 != want {
					b.Fatalf("r0 = %#x, %v; want %#x", r0, err, want)
				}
			}
		})
		b.Run(p.name+"/interp", func(b *testing.B) {
			raw := p.prog.Raw()
			for b.Loop() {
				if r0, err := raw.Run(data); err != nil || r0 != want {
					b.Fatalf("r0 = %#x, %v; want %#x", r0, err, want)
				}
			}
		})
		b.Run(p.name+"/go", func(b *testing.B) {
			for b.Loop() {
				if p.goFn(data) != want {
					b.Fatal("the Go twin changed its mind")
				}
			}
		})
	}
}
