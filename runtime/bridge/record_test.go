package bridge

import (
	"bytes"
	"testing"
)

type header struct {
	Pid  uint32
	Len  uint32
	Args [8]byte
}

func TestRecordLengths(t *testing.T) {
	full := []byte{1, 0, 0, 0, 3, 0, 0, 0, 'a', 'b', 'c', 0, 0, 0, 0, 0}
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
		rec := newRecord[header](tc.data)
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
