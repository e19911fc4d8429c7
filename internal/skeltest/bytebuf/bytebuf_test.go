package bytebuf

import (
	"encoding/binary"
	"math/rand/v2"
	"os"
	"strings"
	"sync"
	"testing"

	"github.com/skelgen/skelgen/runtime/bridge"
)

func checksumGo(b []byte) uint64 {
	var sum uint64
	b = b[:min(len(b), 1<<20)] // the C program's cap
	i := 0
	for ; i+8 <= len(b); i += 8 {
		sum += binary.NativeEndian.Uint64(b[i:])
	}
	for ; i < len(b); i++ {
		sum += uint64(b[i])
	}
	return sum
}

func parseGo(b []byte) uint64 {
	if len(b) < 20 || b[0]>>4 != 4 {
		return ^uint64(0)
	}
	return uint64(b[9])<<32 | uint64(b[2])<<8 | uint64(b[3])
}

func hashGo(b []byte) uint64 {
	var h uint64
	for _, c := range b {
		h = h*31 + uint64(c)
	}
	return h
}

func sum256Go(b []byte) uint64 {
	if len(b) < 2048 {
		return 0
	}
	return checksumGo(b[:2048])
}

func sum32Go(b []byte) uint64 {
	var sum uint64
	for i := 0; i < len(b)/4 && i < 4096; i++ {
		sum += uint64(binary.NativeEndian.Uint32(b[4*i:]))
	}
	return sum + sum>>32
}

func zeroGo(b []byte) uint64 {
	for i := 0; i < len(b) && i < 4096; i++ {
		if b[i] == 0 {
			return uint64(i)
		}
	}
	return uint64(min(len(b), 4096))
}

func be32sumGo(b []byte) uint64 {
	var s uint64
	for i := 0; i+4 <= len(b) && i < 4096; i += 4 {
		s += uint64(binary.BigEndian.Uint32(b[i:]))
	}
	return s
}

func linesGo(b []byte) uint64 {
	var n uint64
	for _, c := range b[:min(len(b), 4096)] {
		if c == '\n' {
			n++
		}
	}
	return n
}

func classifyGo(b []byte) uint64 {
	var n uint64
	for _, c := range b[:min(len(b), 4096)] {
		switch {
		case c < 0x20:
			n += 1
		case c == 0x20:
			n += 3
		case c >= '0' && c <= '9':
			n += 0x100
		case c >= 'A' && c <= 'Z':
			n += 0x10000
		case c >= 'a' && c <= 'z':
			n += 0x1000000
		default:
			n += 5
		}
	}
	return n
}

func sumdownGo(b []byte) uint64 {
	var s uint64
	for _, c := range b[:min(len(b), 4096)] {
		s += uint64(c)
	}
	return s
}

func rtrimGo(b []byte) uint64 {
	return uint64(len(strings.TrimRight(string(b), " ")))
}

func backhashGo(b []byte) uint64 {
	var h uint64
	b = b[:min(len(b), 4096)]
	for i := len(b) - 1; i >= 0; i-- {
		h = h*31 + uint64(b[i])
	}
	return h
}

// TestClangLoopsHoisted: the loops clang-19 writes for hash (i < len),
// sum256 (a constant trip count, ended with jne), sum32 (a counter carried
// through a copy), zero (a way out that depends on the data), bump (a
// second bound mid-body, stores) and both loops of checksum (the first
// tests i + 8 <= len through a register computed from a copy of the
// counter), be32sum's (the same, the tested register also the bytes'
// address) and the loops clang rotates in lines and classify (entered in
// the middle, an if-else chain jumping back to the counter's step placed
// before the body) run as range loops over views, with their span checked
// once before the loop and no check per access; so does sumdown's (a
// pointer walking up as the length counts down, entered also by the jump
// past its clamp). The loops of rtrim and backhash, an index counting
// down, have their span checked once and reach it through windows.
func TestClangLoopsHoisted(t *testing.T) {
	src, err := os.ReadFile("bytebuf_bpfel_aot.go")
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		fn    string
		loops int
		spans int // hoisted loops, range loops or not
	}{{"bytebufHashFn0", 1, 1}, {"bytebufSum256Fn0", 1, 1}, {"bytebufSum32Fn0", 1, 1}, {"bytebufZeroFn0", 1, 1}, {"bytebufBumpFn0", 1, 1}, {"bytebufChecksumFn0", 2, 2}, {"bytebufLinesFn0", 1, 1}, {"bytebufClassifyFn0", 1, 1}, {"bytebufBe32sumFn0", 1, 1},
		{"bytebufSumdownFn0", 1, 1}, {"bytebufRtrimFn0", 0, 1}, {"bytebufBackhashFn0", 0, 1}} {
		_, body, ok := strings.Cut(string(src), "\nfunc "+c.fn+"(")
		if !ok {
			t.Fatalf("no function %s in the translation", c.fn)
		}
		body, _, _ = strings.Cut(body, "\n}\n")
		if n := strings.Count(body, "runtime.Views["); n != c.loops {
			t.Errorf("%s has %d range loops, want %d", c.fn, n, c.loops)
		}
		if n := strings.Count(body, "m.SpanAt("); n != c.spans {
			t.Errorf("%s has %d hoisted loops, want %d", c.fn, n, c.spans)
		}
	}
	// sumdown's clamp jumps into its loop's head, through the fast copy.
	if !strings.Contains(string(src), "goto H") {
		t.Error("no jump into a hoisted loop's head takes its fast copy")
	}
}

// TestClangLoopsAtTheirBounds runs sum32, zero and bump over buffers
// around their caps (4096 words, 4096 bytes, 512 words) and without, with
// a zero byte rare or absent, lines and classify around their cap (4096
// bytes), be32sum around its cap (1024 words), sumdown and backhash around
// theirs (4096 bytes), rtrim with no, a few or only trailing spaces, and
// checksum around its cap (1 MiB) and word boundaries: translation,
// interpreter and Go agree.
func TestClangLoopsAtTheirBounds(t *testing.T) {
	objs, err := LoadBytebuf(&BytebufLoadOptions{InProcess: true})
	if err != nil {
		t.Fatal(err)
	}
	defer objs.Close()
	rnd := rand.New(rand.NewPCG(3, 4))
	for _, n := range []int{1<<20 - 13, 1<<20 - 8, 1 << 20, 1<<20 + 5, 1<<20 + 8} {
		data := make([]byte, n)
		for i := range data {
			data[i] = byte(rnd.Uint32())
		}
		agree(t, twins(t, objs, "checksum")[0], data)
	}
	bounded := twins(t, objs, "checksum", "be32sum", "lines", "classify", "sum32", "zero", "sumdown", "rtrim", "backhash")
	for _, n := range []int{0, 3, 4, 9, 15, 16, 17, 100, 4095, 4096, 4097, 4100, 16383, 16384, 16388, 20000} {
		for _, zeros := range []bool{false, true} {
			data := make([]byte, n)
			for i := range data {
				data[i] = byte(1 + rnd.IntN(255))
				if zeros && rnd.IntN(3000) == 0 {
					data[i] = 0
				}
			}
			if zeros {
				// Trailing spaces for rtrim: a few, or the whole buffer.
				spaces := []int{5, n}[rnd.IntN(2)]
				for i := max(0, n-spaces); i < n; i++ {
					data[i] = ' '
				}
			}
			for _, w := range bounded {
				agree(t, w, data)
			}
			got, out := both(t, objs.Bump, data)
			words := min(n/8, 512)
			if got != uint64(words) {
				t.Errorf("bump of %d bytes returned %d, want %d", n, got, words)
			}
			for i := range n / 8 {
				want := binary.NativeEndian.Uint64(data[8*i:])
				if i < words {
					want += 3
				}
				if g := binary.NativeEndian.Uint64(out[8*i:]); g != want {
					t.Fatalf("bump of %d bytes: word %d is %#x, want %#x", n, i, g, want)
				}
			}
		}
	}
}

// twin is a buffer program and its Go twin.
type twin struct {
	name string
	prog *bridge.BufferProgram
	goFn func([]byte) uint64
}

// twins returns the named programs of objs with their Go twins, in the
// order given.
func twins(t testing.TB, objs *BytebufObjects, names ...string) []twin {
	t.Helper()
	all := map[string]twin{}
	for _, w := range []twin{
		{"checksum", objs.Checksum, checksumGo}, {"parse", objs.Parse, parseGo},
		{"hash", objs.Hash, hashGo}, {"sum256", objs.Sum256, sum256Go},
		{"sum32", objs.Sum32, sum32Go}, {"zero", objs.Zero, zeroGo},
		{"be32sum", objs.Be32sum, be32sumGo}, {"lines", objs.Lines, linesGo},
		{"classify", objs.Classify, classifyGo}, {"sumdown", objs.Sumdown, sumdownGo},
		{"rtrim", objs.Rtrim, rtrimGo}, {"backhash", objs.Backhash, backhashGo},
	} {
		all[w.name] = w
	}
	var out []twin
	for _, n := range names {
		w, ok := all[n]
		if !ok {
			t.Fatalf("no buffer program %q with a Go twin", n)
		}
		out = append(out, w)
	}
	return out
}

// agree runs w's program over data through both engines (see both) and
// requires the Go twin's result.
func agree(t *testing.T, w twin, data []byte) {
	t.Helper()
	if got, _ := both(t, w.prog, data); got != w.goFn(data) {
		t.Errorf("%s of %d bytes = %#x, want %#x", w.name, len(data), got, w.goFn(data))
	}
}

// both runs p over a copy of data through its translation and through the
// interpreter, checks that they agree on r0 and on the buffer afterwards,
// and returns r0 and the buffer.
func both(t *testing.T, p *bridge.BufferProgram, data []byte) (uint64, []byte) {
	t.Helper()
	if !p.Translated() {
		t.Fatal("the skeleton has no translation")
	}
	a := append([]byte(nil), data...)
	r0, err := p.Run(a)
	if err != nil {
		t.Fatal(err)
	}
	b := append([]byte(nil), data...)
	r1, err := p.Raw().Run(b)
	if err != nil {
		t.Fatal(err)
	}
	if r0 != r1 || string(a) != string(b) {
		t.Fatalf("translation r0=%#x, interpreter r0=%#x (buffers equal: %v)", r0, r1, string(a) == string(b))
	}
	return r0, a
}

func TestBufferPrograms(t *testing.T) {
	objs, err := LoadBytebuf(&BytebufLoadOptions{InProcess: true})
	if err != nil {
		t.Fatal(err)
	}
	defer objs.Close()
	rnd := rand.New(rand.NewPCG(1, 2))
	for _, n := range []int{0, 1, 7, 8, 19, 20, 21, 1500, 2048} {
		data := make([]byte, n)
		for i := range data {
			data[i] = byte(rnd.Uint32())
		}
		if n >= 20 {
			data[0] = 0x45
		}
		for _, w := range twins(t, objs, "checksum", "parse", "hash", "sum256") {
			agree(t, w, data)
		}
		got, out := both(t, objs.Invert, data)
		if got != uint64(n) {
			t.Errorf("invert of %d bytes returned %d", n, got)
		}
		for i := range data {
			if out[i] != ^data[i] {
				t.Fatalf("invert: byte %d is %#x, want %#x", i, out[i], ^data[i])
			}
		}
	}
	if r0, err := objs.Checksum.Run(nil); err != nil || r0 != 0 {
		t.Errorf("checksum of nil: %d, %v", r0, err)
	}
}

// TestBufferProgramsConcurrent runs the translated loops from four
// goroutines at once, each over buffers of its own (and one that all
// share, read-only), against their Go twins; with -race it also checks
// that runs share no state.
func TestBufferProgramsConcurrent(t *testing.T) {
	objs, err := LoadBytebuf(&BytebufLoadOptions{InProcess: true})
	if err != nil {
		t.Fatal(err)
	}
	defer objs.Close()
	loops := twins(t, objs, "checksum", "be32sum", "lines", "classify", "sum32", "hash", "sumdown", "rtrim", "backhash")
	shared := make([]byte, 5000)
	for i := range shared {
		shared[i] = byte(i*7 + 1)
	}
	var wg sync.WaitGroup
	for g := range 4 {
		wg.Go(func() {
			rnd := rand.New(rand.NewPCG(uint64(g), 9))
			for range 50 {
				data := make([]byte, rnd.IntN(6000))
				for i := range data {
					data[i] = byte(rnd.Uint32())
				}
				for _, w := range loops {
					for _, d := range [][]byte{data, shared} {
						if got, err := w.prog.Run(d); err != nil || got != w.goFn(d) {
							t.Errorf("%s of %d bytes = %#x, %v; want %#x", w.name, len(d), got, err, w.goFn(d))
						}
					}
				}
			}
		})
	}
	wg.Wait()
}
