package bridge

import (
	"encoding/binary"
	"errors"
	"os"
	"runtime"
	"sync/atomic"
	"testing"
	"time"
	"unsafe"
)

// fakeRing is a ring buffer's memory laid out as the kernel maps it, in
// Go memory, read by a ringMem that waits on a pipe: the test is the
// producer. Close leaves Go's memory alone (the reader unmaps only what
// newRingMem mapped).
type fakeRing struct {
	r          *ringMem
	rd         *RingBufReader[[16]byte]
	cons, prod []byte
	data       []byte // the ring, then its copy
	head       uintptr
}

func newFakeRing(t testing.TB, size int) *fakeRing {
	t.Helper()
	rd, wr, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { rd.Close(); wr.Close() })
	f := &fakeRing{cons: make([]byte, 8), prod: make([]byte, 8), data: make([]byte, 2*size)}
	f.r = &ringMem{file: rd}
	if f.r.conn, err = rd.SyscallConn(); err != nil {
		t.Fatal(err)
	}
	f.r.init(f.cons, f.prod, f.data)
	f.rd = &RingBufReader[[16]byte]{k: f.r, h: mapHandle{name: "fake", set: new(Set)}}
	return f
}

func (f *fakeRing) prodPos() *uintptr { return (*uintptr)(unsafe.Pointer(&f.prod[0])) }

func (f *fakeRing) consPos() uintptr {
	return atomic.LoadUintptr((*uintptr)(unsafe.Pointer(&f.cons[0])))
}

// write puts b at position pos of the ring and of its copy.
func (f *fakeRing) write(pos uintptr, b []byte) {
	size := uintptr(len(f.data) / 2)
	for i, c := range b {
		j := (pos + uintptr(i)) & (size - 1)
		f.data[j], f.data[j+size] = c, c
	}
}

// reserve makes room for a record of n bytes, marked busy, and returns
// its position; commit then fills it with b (flags: ringDiscard or 0).
func (f *fakeRing) reserve(n int) uintptr {
	pos := f.head
	f.write(pos, binary.NativeEndian.AppendUint32(nil, uint32(n)|ringBusy))
	f.head += uintptr(ringHdrSize+n+7) &^ 7
	atomic.StoreUintptr(f.prodPos(), f.head)
	return pos
}

func (f *fakeRing) commit(pos uintptr, b []byte, flags uint32) {
	f.write(pos+ringHdrSize, b)
	f.write(pos, binary.NativeEndian.AppendUint32(nil, uint32(len(b))|flags))
}

func (f *fakeRing) put(b []byte, flags uint32) { f.commit(f.reserve(len(b)), b, flags) }

// record returns record i's bytes: n of them, the first 8 i.
func record(i, n int) []byte {
	b := make([]byte, n)
	binary.NativeEndian.PutUint64(b, uint64(i))
	for j := 8; j < n; j++ {
		b[j] = byte(i + j)
	}
	return b
}

// BenchmarkRingRead is the cost of a read of a 64-byte record from ring
// memory that always has one (the producer position far ahead of a ring
// tiled with records) by ReadInto into a 16-byte value: the reader's own
// work per record, with no kernel and no waiting.
func BenchmarkRingRead(b *testing.B) {
	f := newFakeRing(b, 1<<16)
	for i := range 1 << 16 / 72 {
		f.put(record(i, 64), 0)
	}
	f.put(record(0, 1<<16-int(f.head)-ringHdrSize), ringDiscard) // the rest of the ring
	atomic.StoreUintptr(f.prodPos(), 1<<62)
	var rec Record[[16]byte]
	b.ResetTimer()
	for range b.N {
		if err := f.rd.ReadInto(&rec); err != nil {
			b.Fatal(err)
		}
	}
}

// TestRingReadBatches reads records that a producer adds while the reader
// walks the ring, from a ring small enough that they wrap many times: a
// record across the end of the ring reads whole, discarded records
// (alone, two in a row, last before a wait) are skipped, a reserved
// record not yet committed stops the reader where it is until it is
// committed, and the position the kernel sees is stored before a wait.
func TestRingReadBatches(t *testing.T) {
	f := newFakeRing(t, 4096)
	f.rd.SetDeadline(time.Now()) // the records to read are there
	var rec Record[[16]byte]
	next := 0
	put := func() {
		f.put(record(next, 8+next%200), 0)
		next++
	}
	read := func(want int) {
		t.Helper()
		if err := f.rd.ReadInto(&rec); err != nil {
			t.Fatalf("record %d: %v", want, err)
		}
		raw := record(want, 8+want%200)
		if rec.Len != len(raw) || string(rec.Raw) != string(raw) {
			t.Fatalf("record %d: read %d bytes %x", want, rec.Len, rec.Raw)
		}
		if n := min(len(raw), 16); string(rec.Value[:n]) != string(raw[:n]) || string(rec.Value[n:]) != string(make([]byte, 16-n)) {
			t.Fatalf("record %d: value %x", want, rec.Value)
		}
	}
	empty := func(at uintptr) {
		t.Helper()
		if err := f.rd.ReadInto(&rec); !errors.Is(err, os.ErrDeadlineExceeded) {
			t.Fatalf("before record %d: %v, want the deadline", next, err)
		}
		if f.consPos() != at {
			t.Fatalf("before record %d: the kernel sees position %d, not %d", next, f.consPos(), at)
		}
	}
	read1 := 0
	for round := range 300 {
		// A batch of 1 to 5 records with discarded ones among them; the
		// reader reads one, the producer adds one, the reader reads the
		// rest.
		for k := range 1 + round%5 {
			if (round+k)%3 == 1 {
				f.put(record(-1, 8+k*8), ringDiscard)
			}
			if (round+k)%6 == 1 {
				f.put(record(-1, 16), ringDiscard)
			}
			put()
		}
		read(read1)
		read1++
		put()
		for read1 < next {
			read(read1)
			read1++
		}
		if round%4 == 0 {
			f.put(record(-1, 40), ringDiscard)
		}
		empty(f.head)
		if round%7 == 3 {
			busy := f.reserve(8 + next%200)
			next++
			put() // committed, behind the busy one
			empty(busy)
			f.commit(busy, record(next-2, 8+(next-2)%200), 0)
			read(next - 2)
			read(next - 1)
			read1 = next
		}
	}
	if laps := f.head / 4096; laps < 10 {
		t.Fatalf("the records went round the ring %d times", laps)
	}
}

// TestRingCommitWhileReading: the producer commits each record while the
// reader polls for it, at a moment that varies, on another goroutine. A
// record committed between the reader's two looks at its header (busy at
// the first, committed at the second) must be read, not skipped as a
// discarded one; the producer waits for each record to be read before it
// reserves the next.
func TestRingCommitWhileReading(t *testing.T) {
	f := newFakeRing(t, 4096)
	const records = 20000
	var read atomic.Int64
	done := make(chan struct{})
	go func() {
		defer close(done)
		for i := range records {
			for read.Load() < int64(i) {
			}
			pos := f.reserve(16)
			for range i % 64 { // a varying wait before the commit
				runtime.Gosched()
			}
			f.write(pos+ringHdrSize, record(i, 16))
			atomic.StoreUint32((*uint32)(unsafe.Pointer(&f.data[pos&4095])), 16)
		}
	}()
	deadline := time.Now().Add(time.Minute)
	for i := range records {
		for {
			rec, ok := f.r.next()
			if ok {
				if want := record(i, 16); string(rec) != string(want) {
					t.Fatalf("record %d: read %x, want %x", i, rec, want)
				}
				break
			}
			if f.r.pos > uintptr(i)*24 {
				t.Fatalf("record %d: the reader moved past it (position %d) without reading it", i, f.r.pos)
			}
			if time.Now().After(deadline) {
				t.Fatalf("record %d: not read in a minute (position %d)", i, f.r.pos)
			}
		}
		read.Store(int64(i + 1))
	}
	<-done
}

// TestRingWaitPastDeadline: wait returns at once when a committed record
// is there, even with the deadline passed (Serve drains its readers so),
// and with the deadline once there is none.
func TestRingWaitPastDeadline(t *testing.T) {
	f := newFakeRing(t, 4096)
	f.rd.SetDeadline(time.Now())
	pos := f.reserve(16)
	if err := f.r.wait(); !errors.Is(err, os.ErrDeadlineExceeded) {
		t.Fatalf("wait with a record not committed: %v, want the deadline", err)
	}
	f.commit(pos, record(0, 16), 0)
	if err := f.r.wait(); err != nil {
		t.Fatalf("wait with a committed record: %v", err)
	}
}

// TestRingCloseWaitsForRead: Close does not unmap the ring while a read
// holds it (here one that has taken a record and not given the seat
// back); a read waiting for the seat then, or for a record, or begun
// after Close, returns os.ErrClosed.
func TestRingCloseWaitsForRead(t *testing.T) {
	f := newFakeRing(t, 4096)
	f.put(record(0, 16), 0)
	f.put(record(1, 16), 0)
	if _, err := f.r.take(); err != nil {
		t.Fatal(err)
	}
	next := make(chan error, 1)
	go func() { _, err := f.r.read(nil); next <- err }()
	closed := make(chan error, 1)
	go func() { closed <- f.r.Close() }()
	select {
	case <-closed:
		t.Fatal("Close returned while a read held the ring")
	case <-time.After(5 * time.Millisecond):
	}
	f.r.seat.free()
	noHang(t, "Close", func() { <-closed })
	noHang(t, "a read waiting for the seat", func() {
		if err := <-next; !errors.Is(err, os.ErrClosed) {
			t.Errorf("a read waiting for the seat when Close came: %v, want os.ErrClosed", err)
		}
	})
	if _, err := f.r.read(nil); !errors.Is(err, os.ErrClosed) {
		t.Errorf("a read after Close: %v, want os.ErrClosed", err)
	}

	f = newFakeRing(t, 4096)
	go func() { _, err := f.r.read(nil); next <- err }()
	f.r.Close()
	noHang(t, "a read waiting for a record", func() {
		if err := <-next; !errors.Is(err, os.ErrClosed) {
			t.Errorf("a read waiting for a record when Close came: %v, want os.ErrClosed", err)
		}
	})
}

// TestRingReadersTakeTurns: two goroutines reading one reader read every
// record once between them.
func TestRingReadersTakeTurns(t *testing.T) {
	const n = 2000
	f := newFakeRing(t, 1<<16)
	for i := range n {
		f.put(record(i, 16), 0)
	}
	f.rd.SetDeadline(time.Now()) // they stop once the ring is empty
	got := make(chan []int, 2)
	for range 2 {
		go func() {
			var seqs []int
			var rec Record[[16]byte]
			for f.rd.ReadInto(&rec) == nil {
				seqs = append(seqs, int(binary.NativeEndian.Uint64(rec.Value[:])))
			}
			got <- seqs
		}()
	}
	seen := make([]int, n)
	for range 2 {
		for _, i := range <-got {
			seen[i]++
		}
	}
	for i, c := range seen {
		if c != 1 {
			t.Fatalf("record %d read %d times", i, c)
		}
	}
}
