package runtime

import (
	"bytes"
	"errors"
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
	const bumpers, drainers, runs = 4, 2, 20000
	ctx := make([]byte, 64)
	bump := loadAsm(t, concurrentBumpAsm, nil, nil)
	drain := loadAsm(t, concurrentDrainAsm, nil, nil)
	var wg, bumping sync.WaitGroup
	var done atomic.Bool
	fail := make(chan error, bumpers+drainers)
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
	for range drainers {
		p := drain.Clone()
		wg.Go(func() {
			for !done.Load() {
				if _, err := p.Run(ctx); err != nil {
					fail <- err
					return
				}
			}
		})
	}
	bumping.Wait()
	done.Store(true)
	wg.Wait()
	close(fail)
	for err := range fail {
		t.Fatal(err)
	}
	load64 := func(off int) uint64 { return atomic.LoadUint64((*uint64)(unsafe.Pointer(&ctx[off]))) }
	load32 := func(off int) uint64 { return uint64(atomic.LoadUint32((*uint32)(unsafe.Pointer(&ctx[off])))) }
	const total = bumpers * runs
	if left, drained := load64(0), load64(8); left+drained != total {
		t.Errorf("64-bit: %d drained + %d left = %d, want %d (%d lost)", drained, left, left+drained, total, int64(total)-int64(left+drained))
	}
	if left, drained := load32(16), load64(32); left+drained != total {
		t.Errorf("32-bit: %d drained + %d left = %d, want %d (%d lost)", drained, left, left+drained, total, int64(total)-int64(left+drained))
	}
	if n := load64(24); n != total {
		t.Errorf("compare-and-exchange counter: %d, want %d", n, total)
	}
	if x := load64(40); x != 0 {
		t.Errorf("xor cell: %d after an even number of xors of 1, want 0", x)
	}
	if load64(8) == 0 {
		t.Error("the drainers took nothing")
	}
}
