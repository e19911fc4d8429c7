package records

import (
	"bytes"
	"os"
	"syscall"
	"testing"
	"time"

	"github.com/skelgen/skelgen/internal/testenv"
	"github.com/skelgen/skelgen/runtime/bridge"
)

const recSize = 8 + 64 // sizeof(struct rec)

// sent returns the bytes record n was sent with, as the program built them.
func sent(n int) []byte {
	size := 8 + n*8
	if n == 3 {
		size = recSize + 16
	}
	b := make([]byte, size)
	for i := 8; i < size && i < recSize; i++ {
		b[i] = 'a' + byte((i-8)%26)
	}
	for i := recSize; i < size; i++ {
		b[i] = 0xab
	}
	return b
}

func load(t *testing.T) *RecordsObjects {
	t.Helper()
	testenv.Kernel(t)
	spec, err := LoadRecordsSpec()
	if err != nil {
		t.Fatal(err)
	}
	if err := spec.Variables.TargetTgid.Set(uint32(os.Getpid())); err != nil {
		t.Fatal(err)
	}
	objs, err := spec.Load(nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { objs.Close() })
	if err := objs.AttachAll(); err != nil {
		t.Fatal(err)
	}
	return objs
}

// check compares record n as read with what was sent; padding is how many
// bytes the transport may add (perf pads to 8).
func check(t *testing.T, n int, rec bridge.Record[RecordsRec], padding int) {
	t.Helper()
	want := sent(n)
	if rec.Len < len(want) || rec.Len > len(want)+padding || len(rec.Raw) != rec.Len {
		t.Fatalf("record %d: Len %d, %d raw bytes; sent %d", n, rec.Len, len(rec.Raw), len(want))
	}
	if rec.Value.Pid != uint32(os.Getpid()) {
		t.Errorf("record %d: pid %d, want %d", n, rec.Value.Pid, os.Getpid())
	}
	// The payload, by the header's own length field.
	payload := n * 8
	if n == 3 {
		payload = 24
	}
	if int(rec.Value.Len) != payload {
		t.Errorf("record %d: len field %d, want %d", n, rec.Value.Len, payload)
	}
	if !bytes.Equal(rec.Raw[8:len(want)], want[8:]) {
		t.Errorf("record %d: raw bytes %q, want %q", n, rec.Raw[8:len(want)], want[8:])
	}
	got := rec.Value.Data[:]
	if n < 3 {
		if !rec.Short() {
			t.Errorf("record %d of %d bytes not reported short", n, rec.Len)
		}
		// Bytes of Value past the record are zero, though the program's
		// buffer held letters there.
		if !bytes.Equal(got[:payload], want[8:]) || !bytes.Equal(got[rec.Len-8:], make([]byte, len(got)-(rec.Len-8))) {
			t.Errorf("record %d: Data %q: want the payload then zeros", n, got)
		}
		if got := rec.Value.DataString(); got != string(want[8:]) {
			t.Errorf("record %d: DataString %q, want %q", n, got, want[8:])
		}
		if rec.Tail() != nil {
			t.Errorf("record %d: tail %x of a short record", n, rec.Tail())
		}
		return
	}
	if rec.Short() {
		t.Errorf("long record reported short")
	}
	if !bytes.Equal(got, want[8:recSize]) {
		t.Errorf("long record: Data %q", got)
	}
	if tail := rec.Tail(); len(tail) < 16 || !bytes.Equal(tail[:16], bytes.Repeat([]byte{0xab}, 16)) {
		t.Errorf("long record: tail %x, want 16 bytes of ab", tail)
	}
}

func TestRingBufRecords(t *testing.T) {
	objs := load(t)
	rd, err := objs.Rb.NewReader()
	if err != nil {
		t.Fatal(err)
	}
	defer rd.Close()
	for range 4 {
		syscall.Getppid()
	}
	rd.SetDeadline(time.Now().Add(5 * time.Second))
	for n := range 4 {
		rec, err := rd.ReadRecord()
		if err != nil {
			t.Fatalf("record %d: %v", n, err)
		}
		t.Logf("ring buffer record %d: %d bytes, len field %d, tail %d bytes", n, rec.Len, rec.Value.Len, len(rec.Tail()))
		check(t, n, rec, 0)
	}
}

func TestPerfRecords(t *testing.T) {
	objs := load(t)
	rd, err := objs.Perf.NewReader()
	if err != nil {
		t.Fatal(err)
	}
	defer rd.Close()
	// Samples of several CPUs may arrive out of order: match them by
	// their length field.
	for range 4 {
		syscall.Getppid()
	}
	rd.SetDeadline(time.Now().Add(5 * time.Second))
	byLen := map[int]bridge.Record[RecordsRec]{}
	for len(byLen) < 4 {
		rec, err := rd.ReadRecord()
		if err != nil {
			t.Fatalf("after %d samples: %v", len(byLen), err)
		}
		if rec.Lost != 0 {
			t.Fatalf("lost %d samples", rec.Lost)
		}
		rec.Raw = bytes.Clone(rec.Raw)
		byLen[int(rec.Value.Len)] = rec
	}
	for n := range 4 {
		payload := n * 8
		if n == 3 {
			payload = 24
		}
		rec, ok := byLen[payload]
		if !ok {
			t.Fatalf("no sample with %d bytes of data", payload)
		}
		t.Logf("perf sample %d: %d bytes (sent %d), tail %d bytes", n, rec.Len, len(sent(n)), len(rec.Tail()))
		check(t, n, rec, 7)
	}
}

// Read, without the record, accepts short records too.
func TestReadShort(t *testing.T) {
	objs := load(t)
	rd, err := objs.Rb.NewReader()
	if err != nil {
		t.Fatal(err)
	}
	defer rd.Close()
	syscall.Getppid()
	rd.SetDeadline(time.Now().Add(5 * time.Second))
	ev, err := rd.Read()
	if err != nil {
		t.Fatalf("a record shorter than the struct: %v", err)
	}
	if ev.Pid != uint32(os.Getpid()) || ev.Len != 0 || ev.Data[0] != 0 {
		t.Errorf("short record read as %+v", ev)
	}
}

// struct small is declared and used only inside a function, so it is not
// in the object's BTF; the generator found it in the source and typed the
// ring buffer by it without -type.
func TestSourceTypedReader(t *testing.T) {
	objs := load(t)
	rd, err := objs.SmallRb.NewReader()
	if err != nil {
		t.Fatal(err)
	}
	defer rd.Close()
	for range 3 {
		syscall.Getppid()
	}
	rd.SetDeadline(time.Now().Add(5 * time.Second))
	seqs := map[uint32]bool{}
	for range 3 {
		rec, err := rd.ReadRecord()
		if err != nil {
			t.Fatal(err)
		}
		var ev RecordsSmall = rec.Value
		if ev.Pid != uint32(os.Getpid()) || rec.Len != 8 {
			t.Errorf("record %+v of %d bytes, want pid %d and 8 bytes", ev, rec.Len, os.Getpid())
		}
		seqs[ev.Seq] = true
	}
	if len(seqs) != 3 {
		t.Errorf("sequence numbers %v, want 3 distinct", seqs)
	}
}

// TestRingBufReadInto reads the records through ReadInto into one reused
// Record, twice over, so that a record that fits in the struct (whose Raw
// is a view of Value) follows a longer one and the other way round.
func TestRingBufReadInto(t *testing.T) {
	objs := load(t)
	rd, err := objs.Rb.NewReader()
	if err != nil {
		t.Fatal(err)
	}
	defer rd.Close()
	var rec bridge.Record[RecordsRec]
	for round := range 2 {
		if err := objs.Variables.Calls.Set(0); err != nil {
			t.Fatal(err)
		}
		for range 4 {
			syscall.Getppid()
		}
		rd.SetDeadline(time.Now().Add(5 * time.Second))
		for n := range 4 {
			if err := rd.ReadInto(&rec); err != nil {
				t.Fatalf("round %d, record %d: %v", round, n, err)
			}
			check(t, n, rec, 0)
		}
	}
}
