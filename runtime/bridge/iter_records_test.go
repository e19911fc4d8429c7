package bridge

import (
	"bytes"
	"encoding/binary"
	"errors"
	"strings"
	"testing"
	"testing/iotest"
)

// TestIterRecords: records come decoded whole, in order, across reads
// of any size; output ending inside a record, and a read error, are
// errors; the loop may stop early.
func TestIterRecords(t *testing.T) {
	type rec struct {
		A uint32
		B uint16
		_ uint16
		C uint64
	}
	var data bytes.Buffer
	for i := range 5 {
		binary.Write(&data, binary.NativeEndian, rec{A: uint32(i), B: uint16(10 * i), C: uint64(100 * i)})
	}
	var got []rec
	for r, err := range IterRecords[rec](iotest.OneByteReader(bytes.NewReader(data.Bytes()))) {
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, r)
	}
	if len(got) != 5 || got[3] != (rec{A: 3, B: 30, C: 300}) {
		t.Fatalf("got %+v", got)
	}
	n := 0
	for _, err := range IterRecords[rec](bytes.NewReader(data.Bytes()[:len(data.Bytes())-3])) {
		if err != nil {
			if !strings.Contains(err.Error(), "ends inside a record: 13 of its 16 bytes") || n != 4 {
				t.Errorf("after %d records: %v", n, err)
			}
			break
		}
		n++
	}
	failing := errors.New("read failed")
	for _, err := range IterRecords[rec](iotest.ErrReader(failing)) {
		if !errors.Is(err, failing) {
			t.Errorf("got %v, want the read error", err)
		}
	}
	for range IterRecords[rec](bytes.NewReader(data.Bytes())) {
		break // stopping early must not panic
	}
}
