package runtime

import (
	"bytes"
	"encoding/binary"
	"errors"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"unsafe"

	"github.com/skelgen/skelgen/internal/atomiccases"
)

// TestAtomicOps runs every atomic operation, both widths, on a cell in the
// context, a global, the frame and the stack through a pointer, and
// compares the context the program fills in with the kernel's semantics.
func TestAtomicOps(t *testing.T) {
	cases := atomiccases.Cases()
	for _, c := range cases {
		data := global(t, ".data", make([]byte, atomiccases.GlobalSize))
		p := loadAsm(t, c.Asm, []Map{data}, nil)
		ctx := make([]byte, atomiccases.CtxSize)
		r0, err := p.Run(ctx)
		if err != nil || r0 != 0 {
			t.Errorf("%s: r0 = %d, %v", c.Name, r0, err)
			continue
		}
		if !bytes.Equal(ctx, c.Want) {
			t.Errorf("%s: context\n%x, want\n%x", c.Name, ctx, c.Want)
		}
	}
	if len(cases) < 100 {
		t.Fatalf("only %d cases", len(cases))
	}
}

// TestAtomicFaults: an atomic outside a writable region is the ordinary
// *MemoryError; one inside it but misaligned, as an offset or in host
// memory, is marked Misaligned, as the kernel's verifier refuses it.
func TestAtomicFaults(t *testing.T) {
	buf := make([]byte, 80)
	tests := []struct {
		name       string
		src        string
		ctx        []byte
		region     string
		offset     int64
		size       uint64
		misaligned bool
	}{
		{"context offset", "mov %r2, 1\nlock add [%r1+4], %r2\nexit", make([]byte, 16), "context", 4, 8, true},
		{"context offset 32", "mov %r2, 1\nlock fetch or32 [%r1+2], %r2\nexit", make([]byte, 16), "context", 2, 4, true},
		{"context host address", "mov %r2, 1\nlock xchg [%r1+8], %r2\nexit", buf[4:68], "context", 8, 8, true},
		{"frame", "mov %r2, 1\nlock add32 [%r10-6], %r2\nexit", nil, "stack frame 0", 506, 4, true},
		{"global", "lddw %r1, value:0+2\nmov %r2, 1\nlock cmpxchg32 [%r1], %r2\nexit", nil, ".data", 2, 4, true},
		{"global add", "lddw %r1, value:0+4\nmov %r2, 1\nlock fetch add [%r1], %r2\nexit", nil, ".data", 4, 8, true},
		{"global add 32", "lddw %r1, value:0+10\nmov %r2, 1\nlock add32 [%r1], %r2\nexit", nil, ".data", 10, 4, true},
		{"past a global", "lddw %r1, value:0+16\nmov %r2, 1\nlock add [%r1], %r2\nexit", nil, ".data", 16, 8, false},
		{"past the context", "mov %r2, 1\nlock add [%r1+16], %r2\nexit", make([]byte, 16), "context", 16, 8, false},
		{"read-only", "lddw %r1, value:1+0\nmov %r2, 1\nlock add [%r1], %r2\nexit", nil, ".rodata (read-only)", 0, 8, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			maps := []Map{global(t, ".data", make([]byte, 16)), global(t, ".rodata", make([]byte, 16))}
			p := loadAsm(t, tt.src, maps, nil)
			_, err := p.Run(tt.ctx)
			var me *MemoryError
			if !errors.As(err, &me) {
				t.Fatalf("want *MemoryError, got %v", err)
			}
			if me.Region != tt.region || me.Offset != tt.offset || me.Size != tt.size || !me.Write || me.Misaligned != tt.misaligned {
				t.Fatalf("got %+v (%v)\nwant region %q offset %d size %d misaligned %v", *me, err, tt.region, tt.offset, tt.size, tt.misaligned)
			}
		})
	}
	// The accessors of translated code fail the same way.
	p := loadAsm(t, "exit", nil, nil)
	m := p.Machine()
	m.begin(buf[4:36])
	defer m.end()
	trap := func(f func()) (err error) {
		defer func() {
			if r := recover(); r != nil {
				err = m.trapError(r)
			}
		}()
		f()
		return nil
	}
	err := trap(func() { m.Atomic64At(ContextAddr+8, 3) })
	var me *MemoryError
	if !errors.As(err, &me) || !me.Misaligned || me.Insn != 3 || me.Offset != 8 {
		t.Errorf("Atomic64At on a misaligned host address: %v", err)
	}
	err = trap(func() { m.Atomic32At(ContextAddr+32, 4) })
	if !errors.As(err, &me) || me.Misaligned || me.Insn != 4 || me.Offset != 32 {
		t.Errorf("Atomic32At past the context: %v", err)
	}
	if p := m.Atomic32At(ContextAddr+4, 5); uintptr(unsafe.Pointer(p)) != uintptr(unsafe.Pointer(&buf[8])) {
		t.Errorf("Atomic32At(context+4) = %p, want %p", p, &buf[8])
	}
}

// concurrentBumpAsm bumps counters in a context that every goroutine shares:
// a 64-bit add at 0, a 32-bit add at 16, a compare-and-exchange loop at
// 24, and two xors of 1 at 40 that cancel out.
const concurrentBumpAsm = `
	mov %r2, 1
	lock add [%r1], %r2
	lock add32 [%r1+16], %r2
	lock xor [%r1+40], %r2
	mov %r0, 0
	mov %r3, 0
	lock cmpxchg [%r1+24], %r3
retry:
	mov %r4, %r0
	mov %r3, %r0
	add %r3, 1
	lock cmpxchg [%r1+24], %r3
	jne %r0, %r4, retry
	lock fetch xor [%r1+40], %r2
	mov %r0, 0
	exit
`

// concurrentDrainAsm moves the counters at 0 and 16 into totals at 8 and
// 32 with exchanges.
const concurrentDrainAsm = `
	mov %r2, 0
	lock xchg [%r1], %r2
	lock add [%r1+8], %r2
	mov %r3, 0
	lock xchg32 [%r1+16], %r3
	lock fetch add [%r1+32], %r3
	mov %r0, 0
	exit
`

// TestAtomicConcurrent runs clones of a program that bumps counters and of
// one that drains them on one context from several goroutines: no update
// may be lost. Run it with -race too: every access to the shared bytes is
// atomic, the test's own reads included.
func TestAtomicConcurrent(t *testing.T) {
	ctx := make([]byte, 64)
	bump := loadAsm(t, concurrentBumpAsm, nil, nil)
	drain := loadAsm(t, concurrentDrainAsm, nil, nil)
	bumpAndDrain(t, bump, drain, ctx, ctx)
}

// TestAtomicOwnMaps runs the programs of TestAtomicConcurrent on the
// value of a global section of the runtime's own (a SharedMap), on a hash
// map's value, and on a global section that a Map of the host's gives,
// while a goroutine adds to that one's counters with sync/atomic as a
// kernel program would. The first two take plain read-modify-writes (the
// runs hold the maps' locks: Memory.own), the third locked ones; no
// update may be lost in any of them.
func TestAtomicOwnMaps(t *testing.T) {
	// Each program starts by pointing r1 at the counters, then runs the
	// context's code.
	const onHash = `
	stw [%r10-4], 0
	lddw %r1, map:1
	mov %r2, %r10
	add %r2, -4
	call 1
	jne %r0, 0, found
	exit
found:
	mov %r1, %r0
`
	for _, tt := range []struct {
		name, prelude string
		foreign       bool
	}{
		{"global", "lddw %r1, value:0+0\n", false},
		{"hash value", onHash, false},
		{"host's global", "lddw %r1, value:0+0\n", true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			var counters []byte
			var sec Map
			if tt.foreign {
				f := &foreignArray{spec: MapSpec{Name: ".bss", Type: Array, KeySize: 4, ValueSize: 64, MaxEntries: 1}, data: make([]byte, 64)}
				sec, counters = f, f.data
			} else {
				sec = global(t, ".bss", make([]byte, 64))
			}
			hash, err := NewMap(MapSpec{Name: "counts", Type: Hash, KeySize: 4, ValueSize: 64, MaxEntries: 4})
			if err != nil {
				t.Fatal(err)
			}
			if err := hash.Update(make([]byte, 4), make([]byte, 64), UpdateAny); err != nil {
				t.Fatal(err)
			}
			maps := []Map{sec, hash}
			owner := sec
			if tt.prelude == onHash {
				owner = hash
			}
			if !tt.foreign {
				if counters, err = owner.Lookup(make([]byte, 4)); err != nil {
					t.Fatal(err)
				}
			}
			// Go code reads a SharedMap's value under its lock.
			var lock sync.Locker = &sync.Mutex{}
			if s, ok := owner.(SharedMap); ok {
				lock = s
			}
			read := func(f func()) { lock.Lock(); defer lock.Unlock(); f() }
			var host func(stop *atomic.Bool) uint64
			if tt.foreign {
				// The host's own writer: it adds to the 64-bit counter
				// while the runs do, as a kernel program would.
				host = func(stop *atomic.Bool) (n uint64) {
					for ; !stop.Load(); n++ {
						atomic.AddUint64((*uint64)(unsafe.Pointer(&counters[0])), 1)
					}
					return n
				}
			}
			bump := loadAsm(t, tt.prelude+concurrentBumpAsm, maps, nil)
			drain := loadAsm(t, tt.prelude+concurrentDrainAsm, maps, nil)
			bumpAndDrainWith(t, bump, drain, nil, counters, read, host)
			// The counters' region is one only the run can write exactly
			// when the runs hold its map's lock.
			if _, err := bump.Run(nil); err != nil {
				t.Fatal(err)
			}
			m := bump.Machine()
			own := slices.ContainsFunc(m.own, func(b []byte) bool { return len(b) > 0 && &b[0] == &counters[0] })
			if own == tt.foreign {
				t.Errorf("counters in an own region: %v, want %v", own, !tt.foreign)
			}
		})
	}
}

// foreignArray is a one-element array whose memory is the host's, as a
// kernel map's memory-mapped values are: not a SharedMap, so runs hold
// no lock of it and others may write it at any time.
type foreignArray struct {
	spec MapSpec
	data []byte
}

func (f *foreignArray) Spec() MapSpec { return f.spec }
func (f *foreignArray) Lookup(key []byte) ([]byte, error) {
	if binary.LittleEndian.Uint32(key) != 0 {
		return nil, ErrKeyNotExist
	}
	return f.data, nil
}
func (f *foreignArray) Update(key, value []byte, flags uint64) error { return ErrInvalidArg }
func (f *foreignArray) Delete(key []byte) error                      { return ErrInvalidArg }
func (f *foreignArray) NextKey(key, next []byte) error               { return ErrKeyNotExist }

// bumpAndDrain runs clones of bump and drain, the programs of
// TestAtomicConcurrent, from several goroutines on ctx, and checks the
// counters they leave in ctx.
func bumpAndDrain(t *testing.T, bump, drain *Program, ctx, cells []byte) {
	bumpAndDrainWith(t, bump, drain, ctx, cells, func(f func()) { f() }, nil)
}

// bumpAndDrainWith is bumpAndDrain with the counters in cells, which
// read reads under the lock that guards them; host, when not nil, runs
// meanwhile on a goroutine of its own until told to stop, and returns
// what it added to the 64-bit counter.
func bumpAndDrainWith(t *testing.T, bump, drain *Program, ctx, cells []byte, read func(func()), host func(stop *atomic.Bool) uint64) {
	t.Helper()
	const bumpers, drainers, runs = 4, 2, 20000
	var wg, bumping sync.WaitGroup
	var done, stop atomic.Bool
	var added uint64
	if host != nil {
		wg.Go(func() { added = host(&stop) })
	}
	fail := make(chan error, bumpers+drainers)
	// The drainers run first, and once more after the bumpers have
	// finished, so that they take something even when the scheduler lets
	// the bumpers run to their end before a drainer.
	var draining sync.WaitGroup
	draining.Add(drainers)
	for range drainers {
		p := drain.Clone()
		wg.Go(func() {
			for first := true; ; first = false {
				last := done.Load()
				if _, err := p.Run(ctx); err != nil {
					fail <- err
					if first {
						draining.Done()
					}
					return
				}
				if first {
					draining.Done()
				}
				if last {
					return
				}
			}
		})
	}
	draining.Wait()
	for range bumpers {
		p := bump.Clone()
		bumping.Add(1)
		wg.Go(func() {
			defer bumping.Done()
			for range runs {
				if _, err := p.Run(ctx); err != nil {
					fail <- err
					return
				}
			}
		})
	}
	bumping.Wait()
	done.Store(true)
	stop.Store(true)
	wg.Wait()
	close(fail)
	for err := range fail {
		t.Fatal(err)
	}
	var c [6]uint64
	read(func() {
		for i, off := range []int{0, 8, 16, 32, 24, 40} {
			if off == 16 {
				c[i] = uint64(atomic.LoadUint32((*uint32)(unsafe.Pointer(&cells[off]))))
			} else {
				c[i] = atomic.LoadUint64((*uint64)(unsafe.Pointer(&cells[off])))
			}
		}
	})
	const total = bumpers * runs
	if left, drained := c[0], c[1]; left+drained != total+added {
		t.Errorf("64-bit: %d drained + %d left = %d, want %d (%d lost)", drained, left, left+drained, total+added, int64(total+added)-int64(left+drained))
	}
	if left, drained := c[2], c[3]; left+drained != total {
		t.Errorf("32-bit: %d drained + %d left = %d, want %d (%d lost)", drained, left, left+drained, total, int64(total)-int64(left+drained))
	}
	if n := c[4]; n != total {
		t.Errorf("compare-and-exchange counter: %d, want %d", n, total)
	}
	if x := c[5]; x != 0 {
		t.Errorf("xor cell: %d after an even number of xors of 1, want 0", x)
	}
	if c[1] == 0 {
		t.Error("the drainers took nothing")
	}
}
