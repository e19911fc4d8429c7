package runtime

import (
	"bytes"
	"errors"
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
// through the old pointer (as the kernel's preallocated maps do), and an
// address kept from an earlier run faults.
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
		if p.Machine().Memory.nstatic != len(p.Machine().Memory.rd) {
			t.Fatalf("type %d: %d regions left after the run", typ, len(p.Machine().Memory.rd)-p.Machine().Memory.nstatic)
		}
		_, err = p.Run(ctx)
		var me *MemoryError
		if !errors.As(err, &me) || me.Insn != 3 {
			t.Fatalf("type %d: address from an earlier run: %v, want a memory error at 3", typ, err)
		}
	}
}
