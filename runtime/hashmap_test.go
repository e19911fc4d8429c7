package runtime

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"math/rand/v2"
	"testing"
)

// TestHashMapModel drives the open-addressing table through random inserts,
// updates and deletes (which shift probe runs back) and compares every
// answer with a Go map, for key sizes that take each path of the hash.
func TestHashMapModel(t *testing.T) {
	for _, ks := range []uint32{1, 3, 4, 6, 8, 13, 16} {
		const max = 200
		m := mustMap(t, MapSpec{Name: "h", Type: Hash, KeySize: ks, ValueSize: 8, MaxEntries: max})
		model := map[string][]byte{}
		rng := rand.New(rand.NewPCG(uint64(ks), 1))
		// Few distinct keys, so that lookups hit and deletes find entries.
		key := func() []byte {
			k := make([]byte, ks)
			n := rng.IntN(300)
			for i := range k {
				k[i] = byte(n >> (8 * (i % 2)))
			}
			return k
		}
		for step := range 20000 {
			k := key()
			want, ok := model[string(k)]
			switch rng.IntN(3) {
			case 0:
				got, err := m.Lookup(k)
				if ok != (err == nil) || (ok && !bytes.Equal(got, want)) {
					t.Fatalf("key size %d step %d: lookup %x = %x, %v; want %x, %v", ks, step, k, got, err, want, ok)
				}
			case 1:
				v := val64(rng.Uint64())
				err := m.Update(k, v, UpdateAny)
				switch {
				case !ok && len(model) >= max:
					if !errors.Is(err, ErrMapFull) {
						t.Fatalf("key size %d step %d: update of a full map: %v", ks, step, err)
					}
				case err != nil:
					t.Fatalf("key size %d step %d: update: %v", ks, step, err)
				default:
					model[string(k)] = v
				}
			case 2:
				err := m.Delete(k)
				if ok != (err == nil) {
					t.Fatalf("key size %d step %d: delete %x: %v, present %v", ks, step, k, err, ok)
				}
				delete(model, string(k))
			}
		}
		n := 0
		var k []byte
		next := make([]byte, ks)
		for m.NextKey(k, next) == nil {
			if _, ok := model[string(next)]; !ok {
				t.Fatalf("key size %d: iteration gave %x, not in the map", ks, next)
			}
			n++
			k = append(k[:0], next...)
		}
		if n != len(model) {
			t.Fatalf("key size %d: iteration saw %d keys, want %d", ks, n, len(model))
		}
	}
}

// TestLookupRegions checks how looked-up values map into a run: the same
// entry looked up twice gets one region (so counting loops do not grow the
// table), a deleted entry's value stays readable (cleared) until the run
// ends, a slot reused by a later insert in the same run shows the new value
// through the old pointer (as the kernel's preallocated maps do). The
// value's region stays mapped on that Machine: an address kept from an
// earlier run still names the same slot's value, and only that; a Clone,
// which has its own regions, faults on it.
func TestLookupRegions(t *testing.T) {
	for _, typ := range []MapType{Hash, LRUHash} {
		m := mustMap(t, MapSpec{Name: "h", Type: typ, KeySize: 4, ValueSize: 8, MaxEntries: 4})
		p := loadAsm(t, `
		mov %r9, %r1
		ldxdw %r1, [%r9+0]
		jeq %r1, 0, first
		ldxdw %r0, [%r1+0]
		exit
	first:
		stw [%r10-4], 1
		stdw [%r10-16], 5
		lddw %r1, map:0
		mov %r2, %r10
		add %r2, -4
		mov %r3, %r10
		add %r3, -16
		mov %r4, 0
		call 2
		lddw %r1, map:0
		mov %r2, %r10
		add %r2, -4
		call 1
		jeq %r0, 0, fail
		mov %r6, %r0
		lddw %r1, map:0
		mov %r2, %r10
		add %r2, -4
		call 1
		jne %r0, %r6, fail
		stxdw [%r9+0], %r6
		lddw %r1, map:0
		mov %r2, %r10
		add %r2, -4
		call 3
		ldxdw %r7, [%r6+0]
		stw [%r10-4], 2
		stdw [%r10-16], 9
		lddw %r1, map:0
		mov %r2, %r10
		add %r2, -4
		mov %r3, %r10
		add %r3, -16
		mov %r4, 0
		call 2
		ldxdw %r8, [%r6+0]
		mov %r0, %r7
		lsh %r8, 8
		or %r0, %r8
		exit
	fail:
		mov %r0, 0xff
		exit`, []Map{m}, nil)
		ctx := make([]byte, 8)
		got, err := p.Run(ctx)
		// Read after delete: 0; read after the slot's reuse: 9.
		if err != nil || got != 9<<8 {
			t.Fatalf("type %d: first run: %#x, %v; want %#x", typ, got, err, 9<<8)
		}
		if mem := &p.Machine().Memory; len(mem.rd) != mem.nkept || mem.nkept != mem.nstatic+1 {
			t.Fatalf("type %d: %d regions after the run, %d of them kept; want the one value kept", typ, len(mem.rd)-mem.nstatic, mem.nkept-mem.nstatic)
		}
		if got, err := p.Run(ctx); err != nil || got != 9 {
			t.Fatalf("type %d: address from an earlier run: %#x, %v; want the slot's value 9", typ, got, err)
		}
		_, err = p.Clone().Run(ctx)
		var me *MemoryError
		if !errors.As(err, &me) || me.Insn != 3 {
			t.Fatalf("type %d: address from another run state: %v, want a memory error at 3", typ, err)
		}
	}
}

// TestKeptRegions checks where looked-up values are mapped: kept for later
// runs while the run has made no region of its own, up to maxKeptRegions
// per run state, and the run's own after that; every lookup finds the
// right value either way, and kept regions are not added again.
func TestKeptRegions(t *testing.T) {
	n := maxKeptRegions + 100
	h := mustMap(t, MapSpec{Name: "h", Type: Hash, KeySize: 4, ValueSize: 8, MaxEntries: uint32(n)})
	rb := mustMap(t, MapSpec{Name: "rb", Type: RingBuf, MaxEntries: 4096})
	var k, v [8]byte
	for i := range n {
		binary.LittleEndian.PutUint32(k[:], uint32(i))
		binary.LittleEndian.PutUint64(v[:], uint64(3*i+1))
		if err := h.Update(k[:4], v[:], UpdateAny); err != nil {
			t.Fatal(err)
		}
	}
	// Sums the values of keys 0..r1[0]-1; when r1[8] is set, reserves a
	// ring buffer record first (a region of the run's own) and discards
	// it at the end.
	p := loadAsm(t, `
		mov %r9, %r1
		mov %r6, 0
		mov %r7, 0
		mov %r8, 0
		ldxdw %r1, [%r9+8]
		jeq %r1, 0, loop
		lddw %r1, map:1
		mov %r2, 8
		mov %r3, 0
		call 131
		mov %r8, %r0
	loop:
		stxw [%r10-4], %r7
		lddw %r1, map:0
		mov %r2, %r10
		add %r2, -4
		call 1
		jeq %r0, 0, missing
		ldxdw %r1, [%r0]
		add %r6, %r1
		add %r7, 1
		ldxdw %r1, [%r9]
		jlt %r7, %r1, loop
		jeq %r8, 0, out
		mov %r1, %r8
		mov %r2, 0
		call 133
	out:
		mov %r0, %r6
		exit
	missing:
		mov %r0, -1
		exit`, []Map{h, rb}, &Options{Budget: 1 << 30})
	ctx := make([]byte, 16)
	run := func(q *Program, keys int, own bool) {
		t.Helper()
		binary.LittleEndian.PutUint64(ctx, uint64(keys))
		binary.LittleEndian.PutUint64(ctx[8:], uint64(b2u(own)))
		got, err := q.Run(ctx)
		var sum uint64
		for i := range keys {
			sum += uint64(3*i + 1)
		}
		if err != nil || got != sum {
			t.Fatalf("%d keys: %d, %v; want %d", keys, got, err, sum)
		}
	}
	kept := func(q *Program) int { return q.Machine().nkept - q.Machine().nstatic }
	// A run with a region of its own first keeps nothing.
	run(p, 10, true)
	if kept(p) != 0 {
		t.Fatalf("%d values kept by a run that made a region first", kept(p))
	}
	run(p, n, false)
	if kept(p) != maxKeptRegions {
		t.Fatalf("%d values kept after looking up %d, want %d", kept(p), n, maxKeptRegions)
	}
	run(p, n, false)
	run(p, 10, true)
	if kept(p) != maxKeptRegions {
		t.Fatalf("%d values kept after more runs, want %d", kept(p), maxKeptRegions)
	}
	// A clone keeps its own.
	c := p.Clone()
	run(c, 5, false)
	if kept(c) != 5 || kept(p) != maxKeptRegions {
		t.Fatalf("clone keeps %d, program %d; want 5 and %d", kept(c), kept(p), maxKeptRegions)
	}
}

// TestDirectLookups checks Lookup32 and Lookup64, which translations call
// for lookups whose map and key they know, against the built-in helper the
// interpreter calls: where they answer, they give its result and take the
// same work from the meter; where they decline, they change nothing, and
// after the helper has mapped a value they answer for it (of every map but
// the LRU ones). Key 9 is missing, or past an array's end.
func TestDirectLookups(t *testing.T) {
	for _, tc := range []struct {
		typ MapType
		ks  uint32
	}{{Hash, 4}, {Hash, 8}, {LRUHash, 4}, {LRUHash, 8}, {Array, 4}, {PerCPUArray, 4}} {
		name := fmt.Sprintf("type %d, %d-byte keys", tc.typ, tc.ks)
		mp := mustMap(t, MapSpec{Name: "m", Type: tc.typ, KeySize: tc.ks, ValueSize: 8, MaxEntries: 4})
		if err := mp.Update(make([]byte, tc.ks), []byte{7, 0, 0, 0, 0, 0, 0, 0}, UpdateAny); err != nil {
			t.Fatal(err)
		}
		p := loadAsm(t, "lddw %r1, map:0\nmov %r2, %r10\nadd %r2, -8\ncall 1\nexit", []Map{mp}, &Options{Budget: 1000})
		m := p.Machine()
		m.begin(nil)
		handle, _ := p.Imm64(0)
		direct := func(key uint64) (uint64, bool) {
			if tc.ks == 4 {
				return m.Lookup32(0, uint32(key))
			}
			return m.Lookup64(0, key)
		}
		for _, key := range []uint64{0, 1, 9, 0, 1, 9} {
			binary.LittleEndian.PutUint64(m.stack[StackSize-8:], key)
			work := m.work
			r0, ok := direct(key)
			took := work - m.work
			if !ok && took != 0 {
				t.Errorf("%s, key %d: declined, but took %d units of work", name, key, took)
			}
			m.work = work
			want, err := mapLookupElem(m, handle, StackTop(0)-8, 0, 0, 0)
			if err != nil {
				t.Fatalf("%s, key %d: helper: %v", name, key, err)
			}
			wantTook := work - m.work
			if ok && (r0 != want || took != wantTook) {
				t.Errorf("%s, key %d: %#x taking %d units, the helper %#x taking %d", name, key, r0, took, want, wantTook)
			}
			// The helper has mapped the value: a direct lookup answers now,
			// but of LRU maps.
			m.work = work
			r0, ok = direct(key)
			if answers := tc.typ != LRUHash; ok != answers || ok && (r0 != want || work-m.work != wantTook) {
				t.Errorf("%s, key %d, after the helper: %#x, %v taking %d units; want %v, %#x taking %d", name, key, r0, ok, work-m.work, answers, want, wantTook)
			}
		}
		m.end()
	}
}

// TestDirectLookupSites checks which calls of map_lookup_elem the
// interpreter runs directly: those whose map (an lddw into r1) and key
// place (r10 plus constants into r2, inside the frame) the straight-line
// code before them fixes.
func TestDirectLookupSites(t *testing.T) {
	h4 := mustMap(t, MapSpec{Name: "h4", Type: Hash, KeySize: 4, ValueSize: 8, MaxEntries: 4})
	h8 := mustMap(t, MapSpec{Name: "h8", Type: Hash, KeySize: 8, ValueSize: 8, MaxEntries: 4})
	for _, tc := range []struct {
		name, asm string
		want      directSite // at the call, the last instruction but one
	}{
		{"plain", "lddw %r1, map:0\nmov %r2, %r10\nadd %r2, -4", directSite{mi: 0, off: -4, ks: 4}},
		{"eight", "lddw %r1, map:1\nmov %r2, %r10\nadd %r2, -16", directSite{mi: 1, off: -16, ks: 8}},
		{"two_adds", "mov %r2, %r10\nadd %r2, -500\nlddw %r1, map:0\nadd %r2, -12", directSite{mi: 0, off: -512, ks: 4}},
		{"past_frame", "lddw %r1, map:1\nmov %r2, %r10\nadd %r2, -4", directSite{}},
		{"below_frame", "lddw %r1, map:0\nmov %r2, %r10\nadd %r2, -516", directSite{}},
		{"r1_copied", "lddw %r3, map:0\nmov %r1, %r3\nmov %r2, %r10\nadd %r2, -4", directSite{}},
		{"r2_loaded", "lddw %r1, map:0\nldxdw %r2, [%r10-8]\nadd %r2, -4", directSite{}},
		{"joined", "lddw %r1, map:0\nmov %r2, %r10\njeq %r0, 0, j\nadd %r2, -4\nj:\nadd %r2, -4", directSite{}},
		{"call_between", "lddw %r1, map:0\nmov %r2, %r10\nadd %r2, -4\ncall 5", directSite{}},
		{"fetch_into_r2", "lddw %r1, map:0\nmov %r2, %r10\nadd %r2, -4\nmov %r3, 1\nlock fetch add [%r10-16], %r2", directSite{}},
	} {
		p := loadAsm(t, tc.asm+"\ncall 1\nexit", []Map{h4, h8}, &Options{Helpers: func() *HelperSet {
			h := Builtins()
			h.Register(5, "other", func(*Machine, uint64, uint64, uint64, uint64, uint64) (uint64, error) { return 0, nil })
			return h
		}()})
		call := len(p.insns) - 2
		var got directSite
		if call < len(p.direct) {
			got = p.direct[call]
		}
		if got != tc.want {
			t.Errorf("%s: %+v, want %+v", tc.name, got, tc.want)
		}
		for i, d := range p.direct {
			if i != call && d != (directSite{}) {
				t.Errorf("%s: a site at %d, not a call of map_lookup_elem", tc.name, i)
			}
		}
	}
}
