package runtime

import (
	"bytes"
	"encoding/binary"
	"errors"
	"math/rand/v2"
	goruntime "runtime"
	"strings"
	"testing"
)

// TestMapSizeLimits: user-space maps refuse the sizes the kernel refuses,
// naming the map, and accept the largest it accepts.
func TestMapSizeLimits(t *testing.T) {
	for _, tt := range []struct {
		spec MapSpec
		ok   bool
	}{
		{MapSpec{Type: Hash, KeySize: 4, ValueSize: maxHashEntrySize - 5, MaxEntries: 1}, true},
		{MapSpec{Type: Hash, KeySize: 4, ValueSize: maxHashEntrySize - 4, MaxEntries: 1}, false},
		{MapSpec{Type: LRUHash, KeySize: maxHashEntrySize - 9, ValueSize: 8, MaxEntries: 1}, true},
		{MapSpec{Type: LRUHash, KeySize: maxHashEntrySize - 8, ValueSize: 8, MaxEntries: 1}, false},
		{MapSpec{Type: Hash, KeySize: 4, ValueSize: 1 << 30, MaxEntries: 1}, false},
		{MapSpec{Type: PerCPUHash, KeySize: 4, ValueSize: 32 << 10, MaxEntries: 1}, true},
		{MapSpec{Type: PerCPUHash, KeySize: 4, ValueSize: 32<<10 + 1, MaxEntries: 1}, false},
		{MapSpec{Type: PerCPUArray, KeySize: 4, ValueSize: 32<<10 + 1, MaxEntries: 1}, false},
		{MapSpec{Type: Array, KeySize: 4, ValueSize: 1 << 31, MaxEntries: 1}, false},
	} {
		tt.spec.Name = "m\x00\"x"
		_, err := NewMap(tt.spec)
		if tt.ok && err != nil {
			t.Errorf("%+v: %v", tt.spec, err)
		}
		if !tt.ok && (err == nil || !strings.Contains(err.Error(), `map "m\x00\"x"`)) {
			t.Errorf("%+v: %v, want an error naming the map", tt.spec, err)
		}
	}
}

// TestMapMemory: maps take their largest size from their MapMemory when
// made (hash maps unless BPF_F_NO_PREALLOC), which fails when it does not
// fit; BPF_F_NO_PREALLOC hash maps take memory as they grow, and an update
// the limit cannot hold is -ENOMEM for the program.
func TestMapMemory(t *testing.T) {
	mem := NewMapMemory(4 << 20)
	if _, err := NewMapIn(MapSpec{Name: "arr", Type: Array, KeySize: 4, ValueSize: 1 << 20, MaxEntries: 3}, mem); err != nil {
		t.Fatal(err)
	}
	_, err := NewMapIn(MapSpec{Name: "big", Type: Hash, KeySize: 4, ValueSize: 64 << 10, MaxEntries: 16}, mem)
	if !errors.Is(err, ErrNoMemory) || !strings.Contains(err.Error(), `map "big"`) {
		t.Fatalf("hash map past the limit: %v", err)
	}
	if got := mem.Used(); got != 3<<20 {
		t.Fatalf("used %d after the array and a refused map, want %d", got, 3<<20)
	}
	mp, err := NewMapIn(MapSpec{Name: "grow", Type: Hash, KeySize: 4, ValueSize: 64 << 10, MaxEntries: 1000, Flags: FlagNoPrealloc}, mem)
	if err != nil {
		t.Fatal(err)
	}
	// Insert keys 1, 2, ... until an update fails; return the key that failed.
	// The value comes from the context.
	p := loadAsm(t, `
		mov %r7, %r1
		mov %r6, 1
	loop:
		stxw [%r10-4], %r6
		lddw %r1, map:0
		mov %r2, %r10
		add %r2, -4
		mov %r3, %r7
		mov %r4, 0
		call 2
		jne %r0, 0, out
		add %r6, 1
		ja loop
	out:
		stxw [%r10-8], %r6
		stxw [%r10-4], %r0
		ldxdw %r0, [%r10-8]
		exit`, []Map{mp}, nil)
	r0, err := p.Run(make([]byte, 64<<10))
	if err != nil {
		t.Fatal(err)
	}
	if errno := uint32(r0 >> 32); errno != uint32(negErrno(12)) {
		t.Fatalf("update past the limit returned %d, want -ENOMEM", int32(errno))
	}
	h := mp.(*hashMap)
	if n := int(uint32(r0)) - 1; n != h.count || n == 0 {
		t.Fatalf("%d updates succeeded, map holds %d", n, h.count)
	}
	if used := mem.Used(); used > mem.Limit() || used != 3<<20+uint64(h.Allocated()) {
		t.Fatalf("used %d of %d; the array took %d and the hash map allocated %d", used, mem.Limit(), 3<<20, h.Allocated())
	}
}

// counterMap is an array of one 8-byte counter that hostile programs below
// increment once per iteration (through r9), so the test can count the
// iterations of a run that ends with ErrBudget.
func counterMap(t *testing.T) Map {
	return mustMap(t, MapSpec{Name: "iterations", Type: Array, KeySize: 4, ValueSize: 8, MaxEntries: 1})
}

// counterPrologue points r9 at counter map:1's value and r6 at the context.
const counterPrologue = `
	mov %r6, %r1
	stw [%r10-4], 0
	lddw %r1, map:1
	mov %r2, %r10
	add %r2, -4
	call 1
	mov %r9, %r0
`

const countIteration = `
	ldxdw %r1, [%r9+0]
	add %r1, 1
	stxdw [%r9+0], %r1
`

func iterations(t *testing.T, m Map) uint64 {
	v, err := m.Lookup(key32(0))
	if err != nil {
		t.Fatal(err)
	}
	return binary.LittleEndian.Uint64(v)
}

// runHostile runs a program that loops until its budget runs out, at the
// default budget, and returns how many iterations it counted.
func runHostile(t *testing.T, body string, m Map, ctx []byte) uint64 {
	t.Helper()
	count := counterMap(t)
	p := loadAsm(t, counterPrologue+"loop:"+countIteration+body+"\tja loop\n", []Map{m, count}, nil)
	_, err := p.Run(ctx)
	if !errors.Is(err, ErrBudget) {
		t.Fatalf("run: %v, want ErrBudget", err)
	}
	return iterations(t, count)
}

// TestHostileWorkIsCharged: helpers working over large values, keys and
// strings charge the run for it, one unit per BytesPerUnit bytes, so that
// at the default budget a run does a bounded amount of work and stops with
// ErrBudget.
func TestHostileWorkIsCharged(t *testing.T) {
	perRun := uint64(DefaultBudget) * BytesPerUnit // bytes of work a run may do
	t.Run("update 1 MiB values", func(t *testing.T) {
		const vs = 1 << 20
		m := mustMap(t, MapSpec{Name: "big", Type: Hash, KeySize: 4, ValueSize: vs, MaxEntries: 4})
		// The value comes from the context; the key is 0 each time.
		n := runHostile(t, `
			stw [%r10-4], 0
			lddw %r1, map:0
			mov %r2, %r10
			add %r2, -4
			mov %r3, %r6
			mov %r4, 0
			call 2
		`, m, make([]byte, vs))
		if n == 0 || n > perRun/vs+1 {
			t.Fatalf("%d updates of %d bytes in one run, want at most %d", n, vs, perRun/vs+1)
		}
		// The key's value and the spare slot its replacements take.
		if a := m.(*hashMap).Allocated(); a > 3*vs {
			t.Fatalf("one key allocated %d bytes", a)
		}
	})
	t.Run("lookup 1 MiB keys", func(t *testing.T) {
		const ks = 1 << 20
		m := mustMap(t, MapSpec{Name: "bigkey", Type: Hash, KeySize: ks, ValueSize: 8, MaxEntries: 1})
		if err := m.Update(make([]byte, ks), val64(1), UpdateAny); err != nil {
			t.Fatal(err)
		}
		n := runHostile(t, `
			lddw %r1, map:0
			mov %r2, %r6
			call 1
		`, m, make([]byte, ks))
		// Each lookup hashes the key and compares it with the stored one.
		if n == 0 || n > perRun/(2*ks)+1 {
			t.Fatalf("%d lookups of %d-byte keys in one run, want at most %d", n, ks, perRun/(2*ks)+1)
		}
	})
	t.Run("strncmp over 64 KiB", func(t *testing.T) {
		ctx := bytes.Repeat([]byte{'a'}, 1<<16)
		ctx[len(ctx)-1] = 0
		n := runHostile(t, `
			mov %r1, %r6
			mov %r2, 65535
			mov %r3, %r6
			call 182
		`, counterMap(t), ctx)
		// Each call scans s2 for its NUL and compares 65535 bytes.
		if per := uint64(2 * 65535); n == 0 || n > perRun/per+1 {
			t.Fatalf("%d calls over 64 KiB in one run, want at most %d", n, perRun/per+1)
		}
	})
}

// TestRunStateGrowsWithLookups: what a run state keeps of the values its
// runs looked up grows with the lookups, not with the map: looking up the
// last elements of a large array or the last slots of a large hash map, in
// a run state of its own, allocates far less than 4 bytes per element.
func TestRunStateGrowsWithLookups(t *testing.T) {
	// r0 is the address of the value of the key in the context.
	const lookup = `
		ldxw %r1, [%r1]
		stxw [%r10-4], %r1
		lddw %r1, map:0
		mov %r2, %r10
		add %r2, -4
		call 1
		exit`
	const n = 1 << 22
	arr := mustMap(t, MapSpec{Name: "arr", Type: Array, KeySize: 4, ValueSize: 1, MaxEntries: n})
	hash := mustMap(t, MapSpec{Name: "hash", Type: Hash, KeySize: 4, ValueSize: 1, MaxEntries: 1 << 18, Flags: FlagNoPrealloc})
	for k := range uint32(1 << 18) {
		if err := hash.Update(binary.LittleEndian.AppendUint32(nil, k), []byte{1}, UpdateNoExist); err != nil {
			t.Fatal(err)
		}
	}
	for _, tt := range []struct {
		m    Map
		keys []uint32
	}{
		{arr, []uint32{n - 1, n - 2, 0, n / 2, n - 1}},
		{hash, []uint32{1<<18 - 1, 1<<18 - 2, 0, 1 << 17, 1<<18 - 1}},
	} {
		p := loadAsm(t, lookup, []Map{tt.m}, nil).Clone()
		name := tt.m.Spec().Name
		addrs := map[uint32]uint64{}
		var before, after goruntime.MemStats
		goruntime.ReadMemStats(&before)
		for _, k := range tt.keys {
			r0, err := p.Run(binary.LittleEndian.AppendUint32(nil, k))
			if err != nil || r0 == 0 {
				t.Fatalf("%s: lookup of %d: %#x, %v", name, k, r0, err)
			}
			if a, ok := addrs[k]; ok && a != r0 {
				t.Errorf("%s: key %d at %#x, then %#x: its region was not kept", name, k, a, r0)
			}
			addrs[k] = r0
		}
		goruntime.ReadMemStats(&after)
		if got := after.TotalAlloc - before.TotalAlloc; got > 64<<10 {
			t.Errorf("%s: %d lookups in a new run state allocated %d bytes", name, len(tt.keys), got)
		}
	}
	// Lookups of every element of a smaller array in a random order, twice:
	// each keeps its region, whether the run state's table held it from
	// the start or took it over as it grew.
	small := mustMap(t, MapSpec{Name: "small", Type: Array, KeySize: 4, ValueSize: 1, MaxEntries: 4096})
	p := loadAsm(t, lookup, []Map{small}, nil)
	keys := rand.New(rand.NewPCG(1, 2)).Perm(4096)
	addrs := map[uint64]int{}
	for pass := range 2 {
		for _, k := range keys {
			r0, err := p.Run(binary.LittleEndian.AppendUint32(nil, uint32(k)))
			if err != nil || r0&0xffffffff != 0 {
				t.Fatalf("lookup of %d: %#x, %v", k, r0, err)
			}
			if got, ok := addrs[r0]; pass == 0 && ok || pass == 1 && got != k {
				t.Fatalf("pass %d: key %d at %#x, which key %d had", pass, k, r0, got)
			}
			addrs[r0] = k
		}
	}
}

// TestNextKeyAfterChurn: after many inserts and deletes, NextKey steps
// from entry to entry (insertion order) without walking the slots the
// deleted entries left. A program that calls skelgen_map_next_key in a
// loop then stops at the default budget in about a second, where the
// former slot scan took longer than the test timeout.
func TestNextKeyAfterChurn(t *testing.T) {
	const n = 1 << 18
	m := mustMap(t, MapSpec{Name: "churn", Type: Hash, KeySize: 4, ValueSize: 8, MaxEntries: n})
	for i := range uint32(n) {
		if err := m.Update(key32(i), val64(uint64(i)), UpdateAny); err != nil {
			t.Fatal(err)
		}
	}
	for i := range uint32(n - 2) {
		if err := m.Delete(key32(i)); err != nil {
			t.Fatal(err)
		}
	}
	next := make([]byte, 4)
	if err := m.NextKey(nil, next); err != nil || string(next) != string(key32(n-2)) {
		t.Fatalf("first key %v %v, want %d", next, err, n-2)
	}
	if err := m.NextKey(key32(n-2), next); err != nil || string(next) != string(key32(n-1)) {
		t.Fatalf("next key %v %v, want %d", next, err, n-1)
	}
	if err := m.NextKey(key32(n-1), next); !errors.Is(err, ErrKeyNotExist) {
		t.Fatalf("after the last key: %v", err)
	}
	// A deleted key restarts from the first key, as in the kernel.
	if err := m.NextKey(key32(5), next); err != nil || string(next) != string(key32(n-2)) {
		t.Fatalf("after a missing key %v %v, want %d", next, err, n-2)
	}
	h := Builtins()
	h.Register(9000, "skelgen_map_next_key", MapNextKey)
	p := loadAsm(t, `
	loop:
		lddw %r1, map:0
		mov %r2, 0
		mov %r3, %r10
		add %r3, -8
		call 9000
		jeq %r0, 0, loop
		exit`, []Map{m}, &Options{Helpers: h})
	if _, err := p.Run(nil); !errors.Is(err, ErrBudget) {
		t.Fatalf("next_key loop: %v, want ErrBudget", err)
	}
}

// TestNextKeyOrder: NextKey visits every live key once, in insertion
// order, after deletions and reinsertions that reuse slots, and LRU
// lookups do not change it.
func TestNextKeyOrder(t *testing.T) {
	for _, typ := range []MapType{Hash, LRUHash} {
		m := mustMap(t, MapSpec{Name: "order", Type: typ, KeySize: 4, ValueSize: 8, MaxEntries: 64})
		var want []uint32
		r := rand.New(rand.NewPCG(1, 2))
		for range 500 {
			k := r.Uint32N(100)
			if i := indexOf(want, k); i >= 0 {
				if err := m.Delete(key32(k)); err != nil {
					t.Fatal(err)
				}
				want = append(want[:i], want[i+1:]...)
			} else if len(want) < 64 {
				if err := m.Update(key32(k), val64(1), UpdateAny); err != nil {
					t.Fatal(err)
				}
				want = append(want, k)
			}
			if len(want) > 0 {
				m.Lookup(key32(want[0]))
			}
		}
		var got []uint32
		var prev []byte
		next := make([]byte, 4)
		for m.NextKey(prev, next) == nil {
			got = append(got, uint32(next[0])|uint32(next[1])<<8)
			prev = append(prev[:0], next...)
		}
		if len(got) != len(want) {
			t.Fatalf("type %d: walked %v, want %v", typ, got, want)
		}
		for i := range got {
			if got[i] != want[i] {
				t.Fatalf("type %d: walked %v, want %v", typ, got, want)
			}
		}
	}
}

func indexOf(s []uint32, k uint32) int {
	for i, v := range s {
		if v == k {
			return i
		}
	}
	return -1
}

// TestStrncmp compares bpf_strncmp with a byte-at-a-time strncmp.
func TestStrncmp(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	ref := func(s1, s2 []byte) int64 {
		for i := range s1 {
			var c byte
			if i < len(s2) {
				c = s2[i]
			}
			if s1[i] < c {
				return -1
			}
			if s1[i] > c {
				return 1
			}
			if s1[i] == 0 {
				return 0
			}
		}
		return 0
	}
	p := loadAsm(t, `
		mov %r6, %r1
		ldxw %r2, [%r6+0]
		ldxw %r3, [%r6+4]
		add %r3, %r6
		mov %r1, %r6
		add %r1, 8
		call 182
		exit`, nil, nil)
	for range 2000 {
		n := 1 + r.IntN(40)
		s1 := make([]byte, n)
		s2 := make([]byte, r.IntN(40))
		for i := range s1 {
			s1[i] = "ab\x00"[r.IntN(3)]
		}
		for i := range s2 {
			s2[i] = "ab"[r.IntN(2)]
		}
		ctx := append(append(make([]byte, 8), s1...), append(s2, 0)...)
		ctx[0] = byte(len(s1))
		ctx[4] = byte(8 + len(s1))
		got, err := p.Run(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if want := ref(s1, s2); int64(got) != want {
			t.Fatalf("strncmp(%q, %q, %d) = %d, want %d", s1, s2, len(s1), int64(got), want)
		}
	}
}
