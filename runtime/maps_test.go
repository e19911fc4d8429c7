package runtime

import (
	"encoding/binary"
	"errors"
	"testing"
)

func key32(k uint32) []byte { return binary.LittleEndian.AppendUint32(nil, k) }
func val64(v uint64) []byte { return binary.LittleEndian.AppendUint64(nil, v) }

func mustMap(t testing.TB, spec MapSpec) Map {
	t.Helper()
	m, err := NewMap(spec)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

func TestHashMap(t *testing.T) {
	for _, typ := range []MapType{Hash, PerCPUHash} {
		m := mustMap(t, MapSpec{Name: "h", Type: typ, KeySize: 4, ValueSize: 8, MaxEntries: 2})
		steps := []struct {
			op    string
			key   uint32
			val   uint64
			flags uint64
			err   error
		}{
			{"lookup", 1, 0, 0, ErrKeyNotExist},
			{"update", 1, 10, UpdateExist, ErrKeyNotExist},
			{"update", 1, 10, UpdateNoExist, nil},
			{"update", 1, 11, UpdateNoExist, ErrKeyExist},
			{"update", 1, 12, UpdateExist, nil},
			{"lookup", 1, 12, 0, nil},
			{"update", 2, 20, UpdateAny, nil},
			{"update", 3, 30, UpdateAny, ErrMapFull},
			{"update", 2, 21, UpdateAny, nil},
			{"update", 2, 21, 7, ErrInvalidArg},
			{"delete", 1, 0, 0, nil},
			{"delete", 1, 0, 0, ErrKeyNotExist},
			{"update", 3, 30, UpdateAny, nil},
			{"lookup", 3, 30, 0, nil},
		}
		for i, s := range steps {
			var err error
			switch s.op {
			case "lookup":
				var v []byte
				v, err = m.Lookup(key32(s.key))
				if err == nil && binary.LittleEndian.Uint64(v) != s.val {
					t.Fatalf("type %d step %d: value %d, want %d", typ, i, binary.LittleEndian.Uint64(v), s.val)
				}
			case "update":
				err = m.Update(key32(s.key), val64(s.val), s.flags)
			case "delete":
				err = m.Delete(key32(s.key))
			}
			if !errors.Is(err, s.err) {
				t.Fatalf("type %d step %d %s(%d): err %v, want %v", typ, i, s.op, s.key, err, s.err)
			}
		}
		// Iteration visits every key once.
		seen := map[uint32]bool{}
		var k []byte
		next := make([]byte, 4)
		for m.NextKey(k, next) == nil {
			seen[binary.LittleEndian.Uint32(next)] = true
			k = append(k[:0], next...)
		}
		if len(seen) != 2 || !seen[2] || !seen[3] {
			t.Fatalf("type %d: iteration saw %v", typ, seen)
		}
	}
}

func TestLRUHashEvicts(t *testing.T) {
	m := mustMap(t, MapSpec{Name: "lru", Type: LRUHash, KeySize: 4, ValueSize: 8, MaxEntries: 3})
	for k := uint32(1); k <= 3; k++ {
		if err := m.Update(key32(k), val64(uint64(k)), UpdateAny); err != nil {
			t.Fatal(err)
		}
	}
	// Touch 1 so that 2 is the least recently used.
	if _, err := m.Lookup(key32(1)); err != nil {
		t.Fatal(err)
	}
	if err := m.Update(key32(4), val64(4), UpdateAny); err != nil {
		t.Fatalf("full LRU must evict, got %v", err)
	}
	for k, present := range map[uint32]bool{1: true, 2: false, 3: true, 4: true} {
		_, err := m.Lookup(key32(k))
		if (err == nil) != present {
			t.Fatalf("key %d: present=%v, want %v", k, err == nil, present)
		}
	}
}

func TestArrayMap(t *testing.T) {
	for _, typ := range []MapType{Array, PerCPUArray} {
		m := mustMap(t, MapSpec{Name: "a", Type: typ, KeySize: 4, ValueSize: 4, MaxEntries: 2})
		if err := m.Update(key32(1), []byte{1, 2, 3, 4}, UpdateNoExist); !errors.Is(err, ErrKeyExist) {
			t.Fatalf("NOEXIST on array: %v", err)
		}
		if err := m.Update(key32(2), []byte{1, 2, 3, 4}, UpdateAny); !errors.Is(err, ErrMapFull) {
			t.Fatalf("index 2 of 2: %v", err)
		}
		if err := m.Delete(key32(0)); !errors.Is(err, ErrInvalidArg) {
			t.Fatalf("delete on array: %v", err)
		}
		// The kernel checks BPF_F_LOCK after the index and BPF_NOEXIST
		// for arrays, first for per-CPU arrays.
		lockPast, lockNoExist := ErrMapFull, ErrKeyExist
		if typ == PerCPUArray {
			lockPast, lockNoExist = ErrInvalidArg, ErrInvalidArg
		}
		if err := m.Update(key32(2), []byte{1, 2, 3, 4}, UpdateLock); !errors.Is(err, lockPast) {
			t.Fatalf("BPF_F_LOCK at index 2 of 2: %v, want %v", err, lockPast)
		}
		if err := m.Update(key32(1), []byte{1, 2, 3, 4}, UpdateLock|UpdateNoExist); !errors.Is(err, lockNoExist) {
			t.Fatalf("BPF_F_LOCK|BPF_NOEXIST: %v, want %v", err, lockNoExist)
		}
		if err := m.Update(key32(1), []byte{1, 2, 3, 4}, UpdateLock|UpdateExist); !errors.Is(err, ErrInvalidArg) {
			t.Fatalf("BPF_F_LOCK|BPF_EXIST: %v", err)
		}
		v, _ := m.Lookup(key32(1))
		v[0] = 9 // live memory
		w, _ := m.Lookup(key32(1))
		if w[0] != 9 {
			t.Fatal("array lookup is not live")
		}
	}
}

// TestMapHelpers drives the map helpers from a program and checks the
// errnos it sees and that writes through a looked-up pointer persist.
func TestMapHelpers(t *testing.T) {
	m := mustMap(t, MapSpec{Name: "counts", Type: Hash, KeySize: 4, ValueSize: 8, MaxEntries: 1})
	p := loadAsm(t, `
		stw [%r10-4], 1
		stdw [%r10-16], 5
		lddw %r1, map:0
		mov %r2, %r10
		add %r2, -4
		mov %r3, %r10
		add %r3, -16
		mov %r4, 1
		call 2
		mov %r6, %r0
		stw [%r10-4], 2
		lddw %r1, map:0
		mov %r2, %r10
		add %r2, -4
		mov %r3, %r10
		add %r3, -16
		mov %r4, 0
		call 2
		mov %r7, %r0
		stw [%r10-4], 1
		lddw %r1, map:0
		mov %r2, %r10
		add %r2, -4
		call 1
		jeq %r0, 0, fail
		mov %r1, 100
		stxdw [%r0+0], %r1
		stw [%r10-4], 3
		lddw %r1, map:0
		mov %r2, %r10
		add %r2, -4
		call 3
		mov %r8, %r0
		mov %r0, %r6
		add %r0, %r7
		add %r0, %r8
		exit
	fail:
		mov %r0, 1
		exit`, []Map{m}, nil)
	got, err := p.Run(nil)
	if err != nil {
		t.Fatal(err)
	}
	// 0 (insert) + -E2BIG (full) + -ENOENT (delete missing)
	if int64(got) != -7-2 {
		t.Fatalf("r0 = %d, want %d", int64(got), -9)
	}
	v, err := m.Lookup(key32(1))
	if err != nil || binary.LittleEndian.Uint64(v) != 100 {
		t.Fatalf("value after program write: %v %v", v, err)
	}
}

func TestRingBuffer(t *testing.T) {
	mp := mustMap(t, MapSpec{Name: "events", Type: RingBuf, MaxEntries: 64})
	rb := mp.(*RingBuffer)
	p := loadAsm(t, `
		stdw [%r10-8], 0x41
		lddw %r1, map:0
		mov %r2, %r10
		add %r2, -8
		mov %r3, 8
		mov %r4, 0
		call 130
		mov %r6, %r0
		lddw %r1, map:0
		mov %r2, 16
		mov %r3, 0
		call 131
		jeq %r0, 0, full
		stdw [%r0+0], 0x42
		stdw [%r0+8], 0x43
		mov %r1, %r0
		mov %r2, 0
		call 132
		mov %r0, %r6
		exit
	full:
		mov %r0, 99
		exit`, []Map{mp}, nil)
	got, err := p.Run(nil)
	if err != nil || got != 0 {
		t.Fatalf("got %d, %v", got, err)
	}
	r1, ok1 := rb.Read()
	r2, ok2 := rb.Read()
	_, ok3 := rb.Read()
	if !ok1 || !ok2 || ok3 || len(r1) != 8 || r1[0] != 0x41 || len(r2) != 16 || r2[0] != 0x42 || r2[8] != 0x43 {
		t.Fatalf("records %x %x (%v %v %v)", r1, r2, ok1, ok2, ok3)
	}
	// A run takes 16 (8-byte output) + 24 (16-byte record) of 64 bytes with
	// headers: the second run fits, the third's output fits but its
	// reservation does not.
	if got, err := p.Run(nil); err != nil || got != 0 {
		t.Fatalf("second run: %d, %v", got, err)
	}
	if got, err := p.Run(nil); err != nil || got != 99 {
		t.Fatalf("third run: %d, %v; want 99 (reservation failed)", got, err)
	}
	if rb.Len() != 3 {
		t.Fatalf("%d records waiting, want 3", rb.Len())
	}
}

// TestRingBufferOrder: records are read in the order they were reserved:
// one reserved and not submitted holds back the later ones, a discarded
// one is skipped and keeps its space until the reader passes it; a 0-byte
// record is a record, and the ring holds MaxEntries-1 bytes, as the
// kernel's does.
func TestRingBufferOrder(t *testing.T) {
	rb := mustMap(t, MapSpec{Name: "rb", Type: RingBuf, MaxEntries: 64}).(*RingBuffer)
	_, a, okA := rb.reserve(1)  // 16 bytes with its header
	_, b, okB := rb.reserve(0)  // 8
	c, cn, okC := rb.reserve(8) // 16
	if !okA || !okB || !okC {
		t.Fatal("reserve failed")
	}
	c[0] = 'c'
	rb.finish(cn, false)
	if rec, ok := rb.Read(); ok {
		t.Fatalf("read %q past a reserved record", rec)
	}
	rb.finish(a, true)
	if _, _, ok := rb.reserve(16); ok {
		t.Fatal("a discarded record's space was reused before the reader passed it")
	}
	if rec, ok := rb.Read(); ok {
		t.Fatalf("read %q past a reserved record", rec)
	}
	rb.finish(b, false)
	r1, ok1 := rb.Read()
	r2, ok2 := rb.Read()
	if _, ok3 := rb.Read(); !ok1 || !ok2 || ok3 || len(r1) != 0 || string(r2) != "c\x00\x00\x00\x00\x00\x00\x00" {
		t.Fatalf("read %q %q", r1, r2)
	}
	for i := range 3 {
		if !rb.Write(make([]byte, 8)) {
			t.Fatalf("record %d of 16 bytes did not fit in 63", i)
		}
	}
	if rb.Write(make([]byte, 8)) {
		t.Fatal("a fourth record of 16 bytes fit in 63")
	}
}

func TestRingBufferUseAfterSubmit(t *testing.T) {
	mp := mustMap(t, MapSpec{Name: "events", Type: RingBuf, MaxEntries: 64})
	p := loadAsm(t, `
		lddw %r1, map:0
		mov %r2, 8
		mov %r3, 0
		call 131
		jeq %r0, 0, out
		mov %r6, %r0
		mov %r1, %r0
		mov %r2, 0
		call 133
		stdw [%r6+0], 1
	out:
		exit`, []Map{mp}, nil)
	_, err := p.Run(nil)
	var me *MemoryError
	if !errors.As(err, &me) || me.Insn != 10 || !me.Write {
		t.Fatalf("store after discard: %v", err)
	}
}
