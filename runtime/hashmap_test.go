package runtime

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"math/rand/v2"
	"strings"
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
// table), a deleted entry's value stays readable (unchanged, as in the
// kernel) until the run ends, a slot reused by a later insert in the same run shows the new value
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
		// Read after delete: 5; read after the slot's reuse: 9.
		if err != nil || got != 9<<8|5 {
			t.Fatalf("type %d: first run: %#x, %v; want %#x", typ, got, err, 9<<8|5)
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

// TestDirectSites checks which calls of map_lookup_elem, map_update_elem
// and map_delete_elem the interpreter runs directly: those whose map (an
// lddw into r1) and key place (r10 plus constants into r2, inside the
// frame), and for an update the value's place (r3, the same way) and the
// flags (a constant moved into r4), the straight-line code before them
// fixes.
func TestDirectSites(t *testing.T) {
	h4 := mustMap(t, MapSpec{Name: "h4", Type: Hash, KeySize: 4, ValueSize: 8, MaxEntries: 4})
	h8 := mustMap(t, MapSpec{Name: "h8", Type: Hash, KeySize: 8, ValueSize: 16, MaxEntries: 4})
	const upd = "lddw %r1, map:0\nmov %r2, %r10\nadd %r2, -4\nmov %r3, %r10\nadd %r3, -16\n"
	for _, tc := range []struct {
		name, asm string
		call      int
		want      directSite // at the call, the last instruction but one
	}{
		{"plain", "lddw %r1, map:0\nmov %r2, %r10\nadd %r2, -4", 1, directSite{mi: 0, off: -4, ks: 4, fn: 1}},
		{"eight", "lddw %r1, map:1\nmov %r2, %r10\nadd %r2, -16", 1, directSite{mi: 1, off: -16, ks: 8, fn: 1}},
		{"two_adds", "mov %r2, %r10\nadd %r2, -500\nlddw %r1, map:0\nadd %r2, -12", 1, directSite{mi: 0, off: -512, ks: 4, fn: 1}},
		{"past_frame", "lddw %r1, map:1\nmov %r2, %r10\nadd %r2, -4", 1, directSite{}},
		{"below_frame", "lddw %r1, map:0\nmov %r2, %r10\nadd %r2, -516", 1, directSite{}},
		{"r1_copied", "lddw %r3, map:0\nmov %r1, %r3\nmov %r2, %r10\nadd %r2, -4", 1, directSite{}},
		{"r2_loaded", "lddw %r1, map:0\nldxdw %r2, [%r10-8]\nadd %r2, -4", 1, directSite{}},
		{"joined", "lddw %r1, map:0\nmov %r2, %r10\njeq %r0, 0, j\nadd %r2, -4\nj:\nadd %r2, -4", 1, directSite{}},
		{"call_between", "lddw %r1, map:0\nmov %r2, %r10\nadd %r2, -4\ncall 5", 1, directSite{}},
		{"fetch_into_r2", "lddw %r1, map:0\nmov %r2, %r10\nadd %r2, -4\nmov %r3, 1\nlock fetch add [%r10-16], %r2", 1, directSite{}},
		// Deletes take the same arguments as lookups.
		{"delete", "lddw %r1, map:1\nmov %r2, %r10\nadd %r2, -8", 3, directSite{mi: 1, off: -8, ks: 8, fn: 3}},
		{"delete_joined", "lddw %r1, map:0\nmov %r2, %r10\njeq %r0, 0, j\nadd %r2, -4\nj:\nadd %r2, -4", 3, directSite{}},
		{"delete_r1_copied", "lddw %r3, map:0\nmov %r1, %r3\nmov %r2, %r10\nadd %r2, -4", 3, directSite{}},
		// Updates also fix r3 and r4.
		{"update", upd + "mov %r4, 1", 2, directSite{mi: 0, off: -4, ks: 4, fn: 2, voff: -16, vs: 8, flags: 1}},
		{"update_mov32_flags", upd + "mov32 %r4, -1", 2, directSite{mi: 0, off: -4, ks: 4, fn: 2, voff: -16, vs: 8, flags: 0xffffffff}},
		{"update_negative_flags", upd + "mov %r4, -1", 2, directSite{mi: 0, off: -4, ks: 4, fn: 2, voff: -16, vs: 8, flags: 1<<64 - 1}},
		{"update_eight", "mov %r4, 2\nlddw %r1, map:1\nmov %r3, %r10\nadd %r3, -32\nmov %r2, %r10\nadd %r2, -8", 2, directSite{mi: 1, off: -8, ks: 8, fn: 2, voff: -32, vs: 16, flags: 2}},
		{"update_value_past_frame", "lddw %r1, map:1\nmov %r2, %r10\nadd %r2, -8\nmov %r3, %r10\nadd %r3, -8\nmov %r4, 0", 2, directSite{}},
		{"update_flags_unknown", upd + "mov %r4, %r0", 2, directSite{}},
		{"update_flags_unset", upd, 2, directSite{}},
		{"update_r3_copied", "mov %r5, %r10\nadd %r5, -16\nlddw %r1, map:0\nmov %r2, %r10\nadd %r2, -4\nmov %r3, %r5\nmov %r4, 0", 2, directSite{}},
		{"update_r3_joined", "lddw %r1, map:0\nmov %r2, %r10\nadd %r2, -4\nmov %r4, 0\nmov %r3, %r10\njeq %r0, 0, j\nadd %r3, -8\nj:\nadd %r3, -8", 2, directSite{}},
		{"update_flags_joined", upd + "mov %r4, 0\njeq %r0, 0, j\nmov %r4, 1\nj:", 2, directSite{}},
		{"update_call_between", upd + "mov %r4, 0\ncall 5", 2, directSite{}},
		{"update_fetch_into_r3", upd + "mov %r4, 0\nlock fetch add [%r10-24], %r3", 2, directSite{}},
		{"other_helper", "lddw %r1, map:0\nmov %r2, %r10\nadd %r2, -4", 5, directSite{}},
	} {
		p := loadAsm(t, fmt.Sprintf("%s\ncall %d\nexit", tc.asm, tc.call), []Map{h4, h8}, &Options{Helpers: func() *HelperSet {
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
				t.Errorf("%s: a site at %d, not a map call", tc.name, i)
			}
		}
		site, ok := p.MapSite(call)
		if want := (MapSite{Helper: int(tc.want.fn), Map: int(tc.want.mi), Key: int(tc.want.off), KeySize: int(tc.want.ks),
			Value: int(tc.want.voff), ValueSize: int(tc.want.vs), Flags: tc.want.flags}); ok != (tc.want.ks != 0) || ok && site != want {
			t.Errorf("%s: MapSite %+v, %v; want %+v", tc.name, site, ok, want)
		}
	}
}

// TestDirectUpdates checks the direct updates and deletes (Update32,
// Update64, Delete32, Delete64, as the interpreter's directCall calls them)
// against the built-in helpers, on two copies of one map (with one hash
// seed, so that their tables agree too): one program's run state calls
// the helper, the other's the direct function, and after each call r0,
// the work taken, the map's whole state and the run states' regions (the
// kept ones, by the slot or element they map) must be the same. Where the
// direct function declines it must have changed nothing; the helper then
// runs on its copy too. The steps insert, overwrite, refuse NOEXIST on a
// present key and EXIST on a missing one and unknown flags, delete a
// present and a missing key, look a deleted value's kept region up again
// once another key took its slot, and fill the map; the direct functions
// must answer every step but those that take memory or more work than is
// left.
func TestDirectUpdates(t *testing.T) {
	type step struct {
		op    string // "update", "delete" or "lookup"
		key   uint64
		flags uint64
		work  int64 // when nonzero, the work left before the call (-1: none)
	}
	steps := []step{
		{op: "lookup", key: 0}, // keeps the value's region
		{op: "update", key: 1, flags: UpdateAny},
		{op: "update", key: 1, flags: UpdateAny},
		{op: "update", key: 1, flags: UpdateNoExist},
		{op: "update", key: 2, flags: UpdateExist},
		{op: "update", key: 2, flags: 4},
		{op: "update", key: 2, flags: UpdateNoExist},
		{op: "delete", key: 0},
		{op: "delete", key: 0},
		{op: "lookup", key: 0},
		{op: "update", key: 3, flags: UpdateAny}, // takes key 0's slot
		{op: "update", key: 4, flags: UpdateAny},
		{op: "lookup", key: 3},                   // key 0's kept region
		{op: "update", key: 5, flags: UpdateAny}, // a full map (4 entries)
		{op: "delete", key: 9},
		{op: "update", key: 1, flags: UpdateAny, work: 1},
		{op: "delete", key: 1, work: -1},
		{op: "lookup", key: 1},
	}
	for _, tc := range []struct {
		spec MapSpec
		// grows is the step whose insert takes memory: the map is not
		// full at 4 entries, and its table is.
		grows int
	}{
		{MapSpec{Type: Hash, KeySize: 4, ValueSize: 8, MaxEntries: 4}, -1},
		{MapSpec{Type: Hash, KeySize: 8, ValueSize: 16, MaxEntries: 4}, -1},
		{MapSpec{Type: PerCPUHash, KeySize: 4, ValueSize: 12, MaxEntries: 4}, -1},
		{MapSpec{Type: LRUHash, KeySize: 4, ValueSize: 8, MaxEntries: 4}, -1},
		{MapSpec{Type: LRUHash, KeySize: 8, ValueSize: 8, MaxEntries: 4}, -1},
		{MapSpec{Type: LRUPerCPUHash, KeySize: 8, ValueSize: 16, MaxEntries: 4}, -1},
		{MapSpec{Type: Hash, KeySize: 4, ValueSize: 8, MaxEntries: 64, Flags: FlagNoPrealloc}, 13},
		{MapSpec{Type: Array, KeySize: 4, ValueSize: 8, MaxEntries: 4}, -1},
		{MapSpec{Type: PerCPUArray, KeySize: 4, ValueSize: 12, MaxEntries: 4}, -1},
	} {
		tc.spec.Name = "m"
		name := fmt.Sprintf("type %d, %d-byte keys, %d entries", tc.spec.Type, tc.spec.KeySize, tc.spec.MaxEntries)
		world := func() (Map, *Machine) {
			mp := mustMap(t, tc.spec)
			if h, ok := mp.(*hashMap); ok {
				h.seed = 0x9e3779b97f4a7c15
			}
			if err := mp.Update(make([]byte, tc.spec.KeySize), bytes.Repeat([]byte{7}, int(tc.spec.ValueSize)), UpdateAny); err != nil {
				t.Fatal(err)
			}
			p := loadAsm(t, "lddw %r1, map:0\ncall 1\ncall 2\ncall 3\nexit", []Map{mp}, &Options{Budget: 1000})
			p.m.begin(nil)
			return mp, p.m
		}
		ma, a := world() // through the helpers
		mb, b := world() // through the direct functions, where they answer
		handle, _ := a.prog.Imm64(0)
		ks, vs := int32(tc.spec.KeySize), int32(tc.spec.ValueSize)
		for n, st := range steps {
			for _, m := range []*Machine{a, b} {
				binary.LittleEndian.PutUint64(m.stack[StackSize-8:], st.key)
				for i := range vs {
					m.stack[StackSize-32+int(i)] = byte(n*16 + int(i))
				}
				if st.work != 0 {
					m.work = max(st.work, 0)
				}
			}
			fn := map[string]int32{"lookup": HelperMapLookupElem, "update": HelperMapUpdateElem, "delete": HelperMapDeleteElem}[st.op]
			helper := func(m *Machine) (uint64, error) {
				r1, r2, r3 := handle, StackTop(0)-8, StackTop(0)-32
				return map[int32]Func{HelperMapLookupElem: mapLookupElem, HelperMapUpdateElem: mapUpdateElem, HelperMapDeleteElem: mapDeleteElem}[fn](m, r1, r2, r3, st.flags, 0)
			}
			workA, workB := a.work, b.work
			wantR0, wantErr := helper(a)
			before := mapState(b, mb)
			gotR0, ok := b.directCall(directSite{mi: 0, off: -8, ks: ks, fn: fn, voff: -32, vs: vs, flags: st.flags})
			if !ok {
				if after := mapState(b, mb); after != before || b.work != workB {
					t.Errorf("%s, step %d (%+v): declined, but changed the state:\n%s\nto\n%s, took %d units", name, n, st, before, after, workB-b.work)
				}
				var err error
				if gotR0, err = helper(b); fmt.Sprint(err) != fmt.Sprint(wantErr) {
					t.Errorf("%s, step %d (%+v): helper failed with %v, on the other copy %v", name, n, st, err, wantErr)
				}
			}
			answers := st.op != "lookup" && st.work == 0 && n != tc.grows
			if st.op != "lookup" && ok != answers {
				t.Errorf("%s, step %d (%+v): direct call answered %v, want %v", name, n, st, ok, answers)
			}
			if gotR0 != wantR0 || workA-a.work != workB-b.work {
				t.Errorf("%s, step %d (%+v): r0 %#x taking %d units, the helper's %#x taking %d", name, n, st, gotR0, workB-b.work, wantR0, workA-a.work)
			}
			if sa, sb := mapState(a, ma), mapState(b, mb); sa != sb {
				t.Errorf("%s, step %d (%+v): after the direct call\n%s\nafter the helper\n%s", name, n, st, sb, sa)
			}
		}
		a.end()
		b.end()
	}
}

// mapState describes all of mp's state and the regions of m: those kept
// from run to run by the slot or element whose value they map.
func mapState(m *Machine, mp Map) string {
	var b strings.Builder
	owner := func(buf []byte) string { return "?" }
	switch mp := mp.(type) {
	case *hashMap:
		fmt.Fprintf(&b, "table %x\nkeys %x\ncount %d free %v recency %d..%d order %d..%d allocated %d block %d\n",
			mp.table, mp.keys, mp.count, mp.free, mp.head, mp.tail, mp.first, mp.last, mp.allocated, len(mp.values))
		for i, s := range mp.slots {
			fmt.Fprintf(&b, "slot %d: %x used %v links %d %d %d %d region %d\n", i, s.val, s.used, s.prev, s.next, s.after, s.before, s.region)
		}
		owner = func(buf []byte) string {
			for i, s := range mp.slots {
				if len(buf) > 0 && &s.val[0] == &buf[0] {
					return fmt.Sprintf("slot %d", i)
				}
			}
			return "?"
		}
	case *arrayMap:
		fmt.Fprintf(&b, "data %x\n", mp.data)
		owner = func(buf []byte) string {
			for i := 0; i < len(mp.data); i += mp.stride {
				if len(buf) > 0 && &mp.data[i] == &buf[0] {
					return fmt.Sprintf("element %d", i/mp.stride)
				}
			}
			return "?"
		}
	}
	fmt.Fprintf(&b, "regions %d, kept %d, by slot %v\n", len(m.rd), m.nkept, m.values[0].kept)
	for r := m.nstatic; r < len(m.rd); r++ {
		fmt.Fprintf(&b, "region %d: %s, %d bytes of %s, writable %v\n", r, m.names[r], len(m.rd[r]), owner(m.rd[r]), m.wr[r] != nil)
	}
	return b.String()
}

// TestDirectUpdatesDecline checks the cases the direct updates and deletes
// leave to the helper bound at the call: a helper the host put in the
// built-in's place, a read-only map, a map with other keys, and a call
// outside a run, which holds no lock. The common cases allocate nothing.
func TestDirectUpdatesDecline(t *testing.T) {
	spec := MapSpec{Name: "m", Type: Hash, KeySize: 4, ValueSize: 8, MaxEntries: 8}
	val := make([]byte, 8)
	// A map with key 0, so that the table and slots are there: key 0 can
	// be overwritten and deleted, and key 1 inserted, without taking
	// memory.
	load := func(spec MapSpec, h *HelperSet) *Machine {
		mp := mustMap(t, spec)
		if err := mp.Update(make([]byte, 4), val, UpdateAny); err != nil {
			t.Fatal(err)
		}
		return loadAsm(t, "lddw %r1, map:0\ncall 2\ncall 3\nexit", []Map{mp}, &Options{Helpers: h}).m
	}
	host := Builtins()
	host.Register(HelperMapUpdateElem, "host_update", func(*Machine, uint64, uint64, uint64, uint64, uint64) (uint64, error) { return 0, nil })
	host.Register(HelperMapDeleteElem, "host_delete", func(*Machine, uint64, uint64, uint64, uint64, uint64) (uint64, error) { return 0, nil })
	ro := spec
	ro.Flags = FlagRdonlyProg
	for name, m := range map[string]*Machine{"host helpers": load(spec, host), "read-only": load(ro, nil)} {
		m.begin(nil)
		if _, ok := m.Update32(0, 0, val, UpdateAny); ok {
			t.Errorf("%s: Update32 answered", name)
		}
		if _, ok := m.Delete32(0, 0); ok {
			t.Errorf("%s: Delete32 answered", name)
		}
		m.end()
	}
	m := load(spec, nil)
	m.work = 1 << 40
	if _, ok := m.Update32(0, 0, val, UpdateAny); ok {
		t.Errorf("Update32 answered outside a run")
	}
	if _, ok := m.Delete32(0, 0); ok {
		t.Errorf("Delete32 answered outside a run")
	}
	m.begin(nil)
	if _, ok := m.Update64(0, 0, val, UpdateAny); ok {
		t.Errorf("Update64 answered for a map of 4-byte keys")
	}
	if _, ok := m.Delete64(0, 0); ok {
		t.Errorf("Delete64 answered for a map of 4-byte keys")
	}
	if _, ok := m.Update32(0, 0, val[:4], UpdateAny); ok {
		t.Errorf("Update32 answered for a value of the wrong size")
	}
	if r0, ok := m.Update32(0, 0, val, UpdateAny); !ok || r0 != 0 {
		t.Fatalf("Update32: %#x, %v", r0, ok)
	}
	if n := testing.AllocsPerRun(100, func() {
		m.Update32(0, 1, val, UpdateNoExist)
		m.Update32(0, 1, val, UpdateAny)
		m.Delete32(0, 1)
		m.Delete32(0, 1)
	}); n != 0 {
		t.Errorf("%v allocations a round of direct inserts, updates and deletes", n)
	}
	m.end()
}

// TestLookupSitesTwoMaps: lookups whose map and key the code fixes run
// without the helper call (directSites; the interpreter's callFunc and
// the translation's Lookup32 and Lookup64), each in its own map: the same
// key finds each map's value, and a key missing from one finds nothing
// there. For keys of 4 and 8 bytes.
func TestLookupSitesTwoMaps(t *testing.T) {
	const src = `
	ST [%r10-8], 1
	lddw %r1, map:0
	mov %r2, %r10
	add %r2, -8
	call 1
	jeq %r0, 0, miss
	ldxdw %r6, [%r0]
	ST [%r10-16], 1
	lddw %r1, map:1
	mov %r2, %r10
	add %r2, -16
	call 1
	jeq %r0, 0, miss
	ldxdw %r0, [%r0]
	mul %r6, 100
	add %r6, %r0
	ST [%r10-8], 2
	lddw %r1, map:1
	mov %r2, %r10
	add %r2, -8
	call 1
	jne %r0, 0, miss
	mov %r0, %r6
	exit
miss:
	mov %r0, -1
	exit
`
	for ks, st := range map[uint32]string{4: "stw", 8: "stdw"} {
		var maps []Map
		for _, v := range []uint64{10, 20} {
			m, err := NewMap(MapSpec{Name: "m", Type: Hash, KeySize: ks, ValueSize: 8, MaxEntries: 4})
			if err != nil {
				t.Fatal(err)
			}
			key := binary.LittleEndian.AppendUint64(nil, 1)[:ks]
			if err := m.Update(key, binary.LittleEndian.AppendUint64(nil, v), UpdateAny); err != nil {
				t.Fatal(err)
			}
			maps = append(maps, m)
		}
		p := loadAsm(t, strings.ReplaceAll(src, "ST", st), maps, nil)
		for range 2 { // the second run finds the values' regions kept
			if r0, err := p.Run(nil); err != nil || r0 != 1020 {
				t.Fatalf("%d-byte keys: r0 = %d, %v; want 1020", ks, int64(r0), err)
			}
		}
	}
}

// TestHashMapReplace: an update of a key a hash or LRU hash map holds
// puts the value in another slot, as the kernel puts a new element in
// the old one's place, so the old value's memory keeps the old value and
// a write to it does not reach the map; per-CPU hash maps update in
// place. The key keeps its place in NextKey's order, and an update of a
// key a full map holds succeeds, within the memory the map reserved.
func TestHashMapReplace(t *testing.T) {
	for _, spec := range []MapSpec{
		{Type: Hash},
		{Type: Hash, Flags: FlagNoPrealloc},
		{Type: LRUHash},
		{Type: PerCPUHash},
		{Type: LRUPerCPUHash},
	} {
		spec.Name, spec.KeySize, spec.ValueSize, spec.MaxEntries = "h", 4, 8, 4
		name := fmt.Sprintf("type %d, flags %#x", spec.Type, spec.Flags)
		mem := NewMapMemory(hashMapSize(spec))
		mp, err := NewMapIn(spec, mem)
		if err != nil {
			t.Fatal(err)
		}
		for k := range uint32(4) {
			if err := mp.Update(key32(k), val64(uint64(10+k)), UpdateAny); err != nil {
				t.Fatal(err)
			}
		}
		old, err := mp.Lookup(key32(1))
		if err != nil {
			t.Fatal(err)
		}
		if err := mp.Update(key32(1), val64(21), UpdateAny); err != nil {
			t.Fatalf("%s: update of a key the full map holds: %v", name, err)
		}
		want := uint64(11)
		if spec.Type == PerCPUHash || spec.Type == LRUPerCPUHash {
			want = 21
		}
		if got := binary.LittleEndian.Uint64(old); got != want {
			t.Errorf("%s: the value looked up before the update reads %d, want %d", name, got, want)
		}
		binary.LittleEndian.PutUint64(old, 99)
		if v, err := mp.Lookup(key32(1)); err != nil || binary.LittleEndian.Uint64(v) != map[bool]uint64{true: 99, false: 21}[want == 21] {
			t.Errorf("%s: after a write through the old value, lookup gives %x, %v", name, v, err)
		}
		// An LRU map takes a free slot for the update, evicting the least
		// recently used key, 0, as the kernel's does when none is free.
		var keys []uint32
		var k []byte
		next := make([]byte, 4)
		for mp.NextKey(k, next) == nil {
			keys = append(keys, binary.LittleEndian.Uint32(next))
			k = append(k[:0], next...)
		}
		wantKeys := []uint32{0, 1, 2, 3}
		if spec.Type == LRUHash || spec.Type == LRUPerCPUHash {
			wantKeys = wantKeys[1:]
		}
		if fmt.Sprint(keys) != fmt.Sprint(wantKeys) {
			t.Errorf("%s: NextKey gives %v, want %v", name, keys, wantKeys)
		}
		for range 10 {
			for k := range uint32(4) {
				if err := mp.Update(key32(k), val64(uint64(30+k)), UpdateAny); err != nil {
					t.Fatalf("%s: update of key %d: %v", name, k, err)
				}
			}
		}
		if mem.Used() > hashMapSize(spec) || uint64(mp.(*hashMap).Allocated()) > hashMapSize(spec) {
			t.Errorf("%s: %d bytes used, %d allocated, more than the map's size, %d", name, mem.Used(), mp.(*hashMap).Allocated(), hashMapSize(spec))
		}
	}
}

// TestLRUReplaceEvictsItself: an update of the least recently used key of
// a full LRU map evicts that key for the slot it takes, and then inserts
// it, as the kernel's does: the slot is the old one, whose memory shows the
// new value, and no other key goes.
func TestLRUReplaceEvictsItself(t *testing.T) {
	mp := mustMap(t, MapSpec{Name: "lru", Type: LRUHash, KeySize: 4, ValueSize: 8, MaxEntries: 3})
	for k := range uint32(3) {
		if err := mp.Update(key32(k), val64(uint64(10+k)), UpdateAny); err != nil {
			t.Fatal(err)
		}
	}
	h := mp.(*hashMap)
	s, _ := h.find(key32(0))
	old := h.slots[s].val // not Lookup, which would make key 0 the most recent
	if err := mp.Update(key32(0), val64(20), UpdateAny); err != nil {
		t.Fatal(err)
	}
	if got := binary.LittleEndian.Uint64(old); got != 20 {
		t.Errorf("the evicted slot reads %d, want the new value 20", got)
	}
	for k, want := range []uint64{20, 11, 12} {
		if v, err := mp.Lookup(key32(uint32(k))); err != nil || binary.LittleEndian.Uint64(v) != want {
			t.Errorf("key %d: %x, %v; want %d", k, v, err, want)
		}
	}
}
