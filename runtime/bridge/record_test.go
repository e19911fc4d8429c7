package bridge

import (
	"bytes"
	"testing"

	"github.com/cilium/ebpf"

	"github.com/skelgen/skelgen/runtime"
)

type header struct {
	Pid  uint32
	Len  uint32
	Args [8]byte
}

func TestRecordLengths(t *testing.T) {
	full := []byte{1, 0, 0, 0, 3, 0, 0, 0, 'a', 'b', 'c', 0, 0, 0, 0, 0}
	var rec Record[header]
	for _, tc := range []struct {
		name  string
		data  []byte
		short bool
		tail  []byte
		args  [8]byte
	}{
		{"short", full[:11], true, nil, [8]byte{'a', 'b', 'c'}},
		{"header only", full[:8], true, nil, [8]byte{}},
		{"exact", full, false, nil, [8]byte{'a', 'b', 'c'}},
		{"long", append(append([]byte(nil), full...), 0xee, 0xff), false, []byte{0xee, 0xff}, [8]byte{'a', 'b', 'c'}},
		{"empty", nil, true, nil, [8]byte{}},
	} {
		rec.set(tc.data, 0, 0) // one Record reused: what a longer record left is cleared
		if rec.Len != len(tc.data) || !bytes.Equal(rec.Raw, tc.data) {
			t.Errorf("%s: Len %d, Raw %x", tc.name, rec.Len, rec.Raw)
		}
		if rec.Short() != tc.short || !bytes.Equal(rec.Tail(), tc.tail) {
			t.Errorf("%s: Short %v, Tail %x", tc.name, rec.Short(), rec.Tail())
		}
		if rec.Value.Args != tc.args {
			t.Errorf("%s: Args %q, want %q", tc.name, rec.Value.Args, tc.args)
		}
		if len(tc.data) >= 8 && (rec.Value.Pid != 1 || rec.Value.Len != 3) {
			t.Errorf("%s: header %+v", tc.name, rec.Value)
		}
	}
}

// TestReadIntoAllocatesNothing: reading records of an in-process ring
// buffer into one reused Record allocates nothing beyond what writing
// and taking the record out of the ring does.
func TestReadIntoAllocatesNothing(t *testing.T) {
	type event struct {
		Pid  uint32
		Len  uint32
		Comm [56]byte
	}
	spec := userObject(nil)
	spec.Maps["rb"] = &ebpf.MapSpec{Name: "rb", Type: ebpf.RingBuf, MaxEntries: 1 << 16}
	s := loadObject(t, spec, nil, true)
	rb, err := NewRingBuf[event](s, "rb")
	if err != nil {
		t.Fatal(err)
	}
	rd, err := rb.NewReader()
	if err != nil {
		t.Fatal(err)
	}
	raw := make([]byte, 64)
	raw[0] = 7
	var rec Record[event]
	allocs := testing.AllocsPerRun(200, func() {
		if err := rb.Write(raw); err != nil {
			t.Fatal(err)
		}
		if err := rd.ReadInto(&rec); err != nil {
			t.Fatal(err)
		}
	})
	if rec.Value.Pid != 7 || rec.Len != 64 {
		t.Fatalf("read %+v", rec)
	}
	write := testing.AllocsPerRun(200, func() {
		if err := rb.Write(raw); err != nil {
			t.Fatal(err)
		}
		if _, ok := rb.h.u.(*runtime.RingBuffer).Read(); !ok {
			t.Fatal("no record")
		}
	})
	if allocs > write {
		t.Errorf("ReadInto: %v allocations a record beyond the write's %v", allocs-write, write)
	}
}
