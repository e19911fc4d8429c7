package runtime

import (
	"errors"
	"math"
	"slices"
	"strings"
	"sync"
	"testing"
)

// TestReadOnlyThroughHandle writes .rodata and a BPF_F_RDONLY_PROG map
// through their map handles: the lookup helper's region is read-only and
// the update and delete helpers return -EPERM, as the kernel refuses them.
func TestReadOnlyThroughHandle(t *testing.T) {
	for _, spec := range []MapSpec{
		{Name: ".rodata", Type: Array, KeySize: 4, ValueSize: 8, MaxEntries: 1},
		{Name: ".rodata.str1.1", Type: Array, KeySize: 4, ValueSize: 8, MaxEntries: 1},
		{Name: "ro", Type: Array, KeySize: 4, ValueSize: 8, MaxEntries: 1, Flags: FlagRdonlyProg},
		{Name: "ro_hash", Type: Hash, KeySize: 4, ValueSize: 8, MaxEntries: 4, Flags: FlagRdonlyProg},
	} {
		t.Run(spec.Name, func(t *testing.T) {
			m := mustMap(t, spec)
			if err := m.Update(key32(0), val64(7), UpdateAny); err != nil {
				t.Fatal(err)
			}
			lookupWrite := loadAsm(t, `
				stw [%r10-4], 0
				lddw %r1, map:0
				mov %r2, %r10
				add %r2, -4
				call 1
				jeq %r0, 0, missing
				stdw [%r0+0], 1
				mov %r0, 0
				exit
			missing:
				mov %r0, 1
				exit`, []Map{m}, nil)
			_, err := lookupWrite.Run(nil)
			var me *MemoryError
			if !errors.As(err, &me) || !me.Write || !strings.Contains(me.Region, "read-only") {
				t.Errorf("write through a lookup: %v, want a write fault on a read-only region", err)
			}
			update := loadAsm(t, `
				stw [%r10-4], 0
				stdw [%r10-16], 9
				lddw %r1, map:0
				mov %r2, %r10
				add %r2, -4
				mov %r3, %r10
				add %r3, -16
				mov %r4, 0
				call 2
				exit`, []Map{m}, nil)
			if r0, err := update.Run(nil); err != nil || r0 != negErrno(1) {
				t.Errorf("update helper: r0=%#x err=%v, want -EPERM", r0, err)
			}
			del := loadAsm(t, `
				stw [%r10-4], 0
				lddw %r1, map:0
				mov %r2, %r10
				add %r2, -4
				call 3
				exit`, []Map{m}, nil)
			if r0, err := del.Run(nil); err != nil || r0 != negErrno(1) {
				t.Errorf("delete helper: r0=%#x err=%v, want -EPERM", r0, err)
			}
			if v, err := m.Lookup(key32(0)); err != nil || string(v) != string(val64(7)) {
				t.Errorf("value after the attempts: %v %v, want 7", v, err)
			}
		})
	}
}

// TestNullMinusOne names an access just below NULL as such.
func TestNullMinusOne(t *testing.T) {
	p := loadAsm(t, `
		mov %r1, -1
		ldxb %r0, [%r1+0]
		exit`, nil, nil)
	_, err := p.Run(nil)
	var me *MemoryError
	if !errors.As(err, &me) || me.Region != "NULL" || me.Offset != -1 {
		t.Fatalf("read at -1: %v, want a fault at NULL-1", err)
	}
}

// TestFallThroughRejected: a function whose last instruction is not exit
// or ja runs into the next function; Load refuses it.
func TestFallThroughRejected(t *testing.T) {
	// 0: call 2 (bpf-to-bpf, to 3); 1: exit; 2: the padding of a
	// function that ends in exit; 3: mov r0, 1 with no exit after it,
	// then the function at 4 that 0 also calls.
	insns := []Instruction{
		{Opcode: classJMP | jmpCALL, Src: PseudoCall, Imm: 2},
		{Opcode: classJMP | jmpCALL, Src: PseudoCall, Imm: 2},
		{Opcode: classJMP | jmpEXIT},
		{Opcode: classALU64 | aluMOV, Dst: 0, Imm: 1},
		{Opcode: classALU64 | aluMOV, Dst: 0, Imm: 2},
		{Opcode: classJMP | jmpEXIT},
	}
	_, err := Load(&ProgramSpec{Instructions: insns}, nil)
	var ve *ValidationError
	if !errors.As(err, &ve) || ve.Insn != 3 || !strings.Contains(ve.Msg, "falls through into the function at instruction 4") {
		t.Fatalf("Load: %v, want instruction 3 falling through into 4", err)
	}
}

// TestRunAfterClose: a closed program does not run, nor do its clones.
func TestRunAfterClose(t *testing.T) {
	p := loadAsm(t, "mov %r0, 1\nexit", nil, nil)
	q := p.Clone()
	p.Close()
	for _, r := range []*Program{p, q} {
		if _, err := r.Run(nil); !errors.Is(err, ErrClosed) {
			t.Errorf("run after Close: %v, want ErrClosed", err)
		}
	}
}

// TestSharedMapRuns runs clones that bump and delete keys of one hash map
// while Go code updates and iterates it, under its lock. Under -race this
// finds unsynchronised access; without the locks it corrupts the map.
func TestSharedMapRuns(t *testing.T) {
	m := mustMap(t, MapSpec{Name: "counts", Type: Hash, KeySize: 4, ValueSize: 8, MaxEntries: 64})
	bump := loadAsm(t, `
		ldxw %r6, [%r1+0]
		stxw [%r10-4], %r6
		lddw %r1, map:0
		mov %r2, %r10
		add %r2, -4
		call 1
		jeq %r0, 0, insert
		mov %r1, 1
		lock add [%r0+0], %r1
		ja del
	insert:
		stdw [%r10-16], 1
		lddw %r1, map:0
		mov %r2, %r10
		add %r2, -4
		mov %r3, %r10
		add %r3, -16
		mov %r4, 0
		call 2
	del:
		and %r6, 1
		jeq %r6, 0, done
		lddw %r1, map:0
		mov %r2, %r10
		add %r2, -4
		call 3
	done:
		mov %r0, 0
		exit`, []Map{m}, nil)
	// Its update and delete run directly (Update32, Delete32), the lookup
	// through the helper or Lookup32: all within the run's lock.
	var sites []int
	for i := range bump.insns {
		if s, ok := bump.MapSite(i); ok {
			sites = append(sites, s.Helper)
		}
	}
	if !slices.Equal(sites, []int{HelperMapLookupElem, HelperMapUpdateElem, HelperMapDeleteElem}) {
		t.Fatalf("direct map calls of helpers %v, want 1, 2 and 3", sites)
	}
	sm := m.(SharedMap)
	var wg sync.WaitGroup
	for g := range 4 {
		p := bump.Clone()
		wg.Add(1)
		go func() {
			defer wg.Done()
			ctx := make([]byte, 4)
			for i := range 3000 {
				ctx[0] = byte(i*7 + g)
				if _, err := p.Run(ctx); err != nil {
					t.Error(err)
					return
				}
			}
		}()
	}
	wg.Add(1)
	go func() {
		defer wg.Done()
		next := make([]byte, 4)
		for i := range 3000 {
			sm.Lock()
			m.Update(key32(uint32(1000+i%16)), val64(uint64(i)), UpdateAny)
			m.Delete(key32(uint32(1000 + (i+8)%16)))
			var k []byte
			for n := 0; m.NextKey(k, next) == nil; n++ {
				if n > 64 {
					t.Error("iteration visits more keys than the map can hold")
					break
				}
				k = append(k[:0], next...)
			}
			sm.Unlock()
		}
	}()
	wg.Wait()
	// Every key the map yields is found, once.
	seen := map[string]bool{}
	next := make([]byte, 4)
	var k []byte
	for m.NextKey(k, next) == nil {
		if seen[string(next)] {
			t.Fatalf("key %x twice", next)
		}
		seen[string(next)] = true
		if _, err := m.Lookup(next); err != nil {
			t.Fatalf("key %x listed but not found: %v", next, err)
		}
		k = append(k[:0], next...)
	}
}

// TestSpanSafetyNet: a window a wrong translation takes outside its span
// (or longer than it) ends the run with an error instead of touching other
// memory or crashing the host; accesses inside a window are at constant
// offsets of a *[n]byte, which the Go compiler checks.
func TestSpanSafetyNet(t *testing.T) {
	m := newMachine(loadAsm(t, "mov %r0, 0\nexit", nil, nil))
	ctx := make([]byte, 32)
	m.begin(ctx)
	defer m.end()
	// SpanAt gives no span shorter than the widest access.
	if _, ok := m.SpanAt(Addr(regionContext, 28), 4, false); ok {
		t.Error("SpanAt gave a 4-byte span")
	}
	span, ok := m.SpanAt(Addr(regionContext, 16), 16, true)
	if !ok {
		t.Fatal("SpanAt refused 16 bytes inside the context")
	}
	w := WindowOf[[8]byte](span).At(8)
	w[7] = 0xaa
	if ctx[31] != 0xaa {
		t.Error("a window's last byte is not the span's")
	}
	if v := WindowOf[[16]byte](span).At(0); &v[0] != &ctx[16] {
		t.Error("a window as long as its span does not start where the span does")
	}
	if v := Views[[8]byte](span, 2); len(v) != 2 || &v[1][7] != &ctx[31] {
		t.Error("views of a span do not cover it element by element")
	}
	if Opaque(0x100000001b3) != 0x100000001b3 {
		t.Error("Opaque changed its argument")
	}
	for _, f := range []func(){
		func() { WindowOf[[8]byte](span).At(9) },
		func() { WindowOf[[1]byte](span).At(16) },
		func() { WindowOf[[17]byte](span).At(0) },
		func() { WindowOf[[8]byte](span).At(1 << 63) },
		func() { WindowOf[[2]byte](span).At(1<<64 - 1) },
		func() { WindowOf[[1]byte](nil).At(0) },
		func() { Window[[1]byte]{}.At(0) },
		// Views: more elements than the span holds, a count that would
		// overflow a multiplication, a negative count.
		func() { Views[[8]byte](span, 3) },
		func() { Views[[8]byte](span, math.MaxInt/8+1) },
		func() { Views[[1]byte](span, -1) },
	} {
		err := func() (err error) {
			defer func() { err = m.trapError(recover()) }()
			f()
			return nil
		}()
		var re *RunError
		if !errors.As(err, &re) || !errors.Is(err, errSpan) {
			t.Errorf("got %v, want a RunError for the span", err)
		}
	}
}
