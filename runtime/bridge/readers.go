package bridge

import (
	"errors"
	"fmt"
	"io"
	"os"
	"sync"
	"time"

	"github.com/cilium/ebpf"

	"github.com/skelgen/skelgen/runtime"
)

// RingBuf is a BPF_MAP_TYPE_RINGBUF whose records are of type E: a kernel
// ring buffer, or the runtime's when the map lives in the process.
type RingBuf[E any] struct {
	_ incomparable
	h mapHandle
}

// NewRingBuf returns the ring buffer name of s.
func NewRingBuf[E any](s *Set, name string) (*RingBuf[E], error) {
	h, err := s.mapHandle(name)
	if err != nil {
		return nil, err
	}
	return &RingBuf[E]{h: h}, nil
}

// Raw returns the kernel map, or nil when the map lives in the process.
func (r *RingBuf[E]) Raw() *ebpf.Map { return r.h.k }

// Write submits rec as a record, as a program's bpf_ringbuf_output does,
// to a ring buffer that lives in the process: Go code feeds the readers
// and record hooks synthetic records so, in tests with InProcess. A kernel
// ring buffer is written by BPF programs only: Write fails with
// ErrNotInProcess. A full buffer fails with ErrRingBufFull.
func (r *RingBuf[E]) Write(rec []byte) error {
	if err := r.h.begin(); err != nil {
		return err
	}
	defer r.h.end()
	rb, ok := r.h.u.(*runtime.RingBuffer)
	if r.h.k != nil || !ok {
		return fmt.Errorf("map %s: %w", r.h.name, ErrNotInProcess)
	}
	if len(rec) == 0 {
		return fmt.Errorf("map %s: an empty record", r.h.name)
	}
	if !rb.Write(rec) {
		return fmt.Errorf("map %s: %w", r.h.name, ErrRingBufFull)
	}
	return nil
}

var (
	// ErrNotInProcess: an operation only maps in the process have.
	ErrNotInProcess = errors.New("not available: the map is the kernel's")
	// ErrRingBufFull: a ring buffer had no room for a record.
	ErrRingBufFull = errors.New("ring buffer full")
)

// NewReader opens a reader of the ring buffer's records.
func (r *RingBuf[E]) NewReader() (*RingBufReader[E], error) {
	if err := r.h.begin(); err != nil {
		return nil, err
	}
	defer r.h.end()
	if r.h.k == nil {
		rb, ok := r.h.u.(*runtime.RingBuffer)
		if !ok {
			return nil, fmt.Errorf("map %s is not a ring buffer", r.h.name)
		}
		return &RingBufReader[E]{u: rb, h: r.h, closed: make(chan struct{})}, nil
	}
	rd, err := newRingMem(r.h.k)
	if err != nil {
		return nil, fmt.Errorf("map %s: %w", r.h.name, err)
	}
	r.h.set.readers.add(rd)
	return &RingBufReader[E]{k: rd, h: r.h}, nil
}

// RingBufReader reads typed records from a ring buffer. Closing the set
// closes it too: Read then fails with ErrClosed.
//
// A kernel ring buffer is read in place from its mapped memory, with one
// compare-and-swap a record and no mutex: the producer's position is
// loaded once per batch of records, and the position the kernel sees is
// stored once per few kilobytes of records read (and whenever the reader
// waits), not per record. Reads on several goroutines take turns; Close
// may come from any goroutine.
type RingBufReader[E any] struct {
	k *ringMem // a kernel ring buffer
	h mapHandle

	// In process: the runtime's ring buffer, polled.
	u        *runtime.RingBuffer
	mu       sync.Mutex
	deadline time.Time
	closed   chan struct{}
	once     sync.Once
	pending  []byte // a record wait read for consume
	raw      []byte // the bytes of the record Read and ReadRecord returned last
}

// Read blocks until a record is available (or the deadline passes, or the
// reader is closed) and returns it decoded. A record shorter than E leaves
// the rest of E zero; ReadRecord tells its length and keeps its bytes.
func (r *RingBufReader[E]) Read() (E, error) {
	rec, err := r.ReadRecord()
	return rec.Value, err
}

// Lost is 0: a full ring buffer makes the program's bpf_ringbuf_reserve or
// bpf_ringbuf_output fail, and the reader never sees the record. It is
// there so that both readers have the same methods.
func (r *RingBufReader[E]) Lost() uint64 { return 0 }

// ReadRecord is Read with the record's length and bytes: for records of
// variable length, a fixed header then a payload (see Record).
func (r *RingBufReader[E]) ReadRecord() (Record[E], error) {
	var rec Record[E]
	sample, err := r.sample(r.raw)
	if err != nil {
		return rec, err
	}
	r.raw = sample
	rec.set(sample, 0, 0)
	return rec, nil
}

// ReadInto is ReadRecord into rec, which it overwrites: a loop reusing
// one Record allocates nothing per record. A kernel record is copied from
// the ring into rec.Value; rec.Raw is then a view of rec.Value when the
// record fits in E (so it shares its memory: one copy), else a copy in
// rec.Raw's array, reused when it has room. rec.Raw is valid until the
// next read.
func (r *RingBufReader[E]) ReadInto(rec *Record[E]) error {
	if r.u != nil {
		sample, err := r.sample(nil)
		if err != nil {
			return err
		}
		rec.set(sample, 0, 0)
		return nil
	}
	if r.h.set.life.closed() {
		return r.h.closedErr()
	}
	sample, err := r.k.take()
	if err != nil {
		return r.h.readErr(err)
	}
	rec.copyIn(sample)
	r.k.seat.free()
	return nil
}

// sample waits for the next record and returns its bytes: a kernel
// record's in buf's array (reused when it has room), an in-process one's
// in the runtime ring buffer's.
func (r *RingBufReader[E]) sample(buf []byte) ([]byte, error) {
	if r.h.set.life.closed() {
		return nil, r.h.closedErr()
	}
	var sample []byte
	var err error
	if r.u != nil {
		sample, err = r.readUser()
	} else {
		sample, err = r.k.read(buf)
	}
	if err != nil {
		return nil, r.h.readErr(err)
	}
	return sample, nil
}

// readUser polls the in-process ring buffer: its records are written by
// programs that run in this process, so a short sleep between polls is all
// the waiting needed.
func (r *RingBufReader[E]) readUser() ([]byte, error) {
	for {
		if err := r.h.closedErr(); err != nil {
			return nil, err
		}
		if rec, ok := r.u.Read(); ok {
			return rec, nil
		}
		r.mu.Lock()
		dl := r.deadline
		r.mu.Unlock()
		if !dl.IsZero() && !time.Now().Before(dl) {
			return nil, os.ErrDeadlineExceeded
		}
		select {
		case <-r.closed:
			return nil, os.ErrClosed
		case <-time.After(time.Millisecond):
		}
	}
}

// SetDeadline makes Read return os.ErrDeadlineExceeded after t.
func (r *RingBufReader[E]) SetDeadline(t time.Time) {
	if r.u != nil {
		r.mu.Lock()
		r.deadline = t
		r.mu.Unlock()
		return
	}
	r.k.setDeadline(t)
}

// Close stops the reader; a blocked Read returns os.ErrClosed.
func (r *RingBufReader[E]) Close() error {
	if r.u != nil {
		r.once.Do(func() { close(r.closed) })
		return nil
	}
	r.h.set.readers.remove(r.k)
	return r.k.Close()
}

// PerfEventArray is a BPF_MAP_TYPE_PERF_EVENT_ARRAY whose samples are of
// type E. It exists only in the kernel.
type PerfEventArray[E any] struct {
	_ incomparable
	m *ebpf.Map
	h mapHandle
}

// NewPerfEventArray returns the perf event array name of s. In process it
// returns an array whose NewReader fails with ErrInProcess.
func NewPerfEventArray[E any](s *Set, name string) (*PerfEventArray[E], error) {
	if s.Coll == nil {
		return &PerfEventArray[E]{h: mapHandle{name: name, set: s}}, nil
	}
	h, err := s.mapHandle(name)
	if err != nil {
		return nil, err
	}
	return &PerfEventArray[E]{m: h.k, h: h}, nil
}

// Raw returns the underlying cilium/ebpf map.
func (p *PerfEventArray[E]) Raw() *ebpf.Map { return p.m }

// readers are the kernel readers open on a set's maps, which Close closes
// so that a Read blocked in them returns.
type readers struct {
	mu   sync.Mutex
	open map[io.Closer]bool
}

func (rs *readers) add(c io.Closer) {
	rs.mu.Lock()
	defer rs.mu.Unlock()
	if rs.open == nil {
		rs.open = map[io.Closer]bool{}
	}
	rs.open[c] = true
}

func (rs *readers) remove(c io.Closer) {
	rs.mu.Lock()
	defer rs.mu.Unlock()
	delete(rs.open, c)
}

func (rs *readers) close() {
	rs.mu.Lock()
	open := rs.open
	rs.open = nil
	rs.mu.Unlock()
	for c := range open {
		c.Close()
	}
}

// closedErr is ErrClosed once the set is closing, else nil. Reads check it
// rather than count themselves in the set's lifetime: a read may block for
// ever, and Close closes the readers instead of waiting. The error is
// os.ErrClosed too, which read loops written for cilium/ebpf's readers
// stop on.
func (h *mapHandle) closedErr() error {
	if h.set.life.closed() {
		return fmt.Errorf("map %s: %w (%w)", h.name, ErrClosed, os.ErrClosed)
	}
	return nil
}

// readErr is the error of a failed read: ErrClosed once the set is
// closing (Close closed the reader), else err.
func (h *mapHandle) readErr(err error) error {
	if cerr := h.closedErr(); cerr != nil {
		return cerr
	}
	return err
}
