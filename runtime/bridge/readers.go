package bridge

import (
	"errors"
	"fmt"
	"os"
	"time"

	"github.com/cilium/ebpf"
	"github.com/cilium/ebpf/perf"
	"github.com/cilium/ebpf/ringbuf"
)

// RingBuf is a BPF_MAP_TYPE_RINGBUF whose records are of type E.
type RingBuf[E any] struct {
	m *ebpf.Map
}

// NewRingBuf wraps m.
func NewRingBuf[E any](m *ebpf.Map) (*RingBuf[E], error) {
	if m == nil {
		return nil, errors.New("nil map")
	}
	return &RingBuf[E]{m: m}, nil
}

// Raw returns the underlying cilium/ebpf map.
func (r *RingBuf[E]) Raw() *ebpf.Map { return r.m }

// NewReader opens a reader of the ring buffer's records.
func (r *RingBuf[E]) NewReader() (*RingBufReader[E], error) {
	rd, err := ringbuf.NewReader(r.m)
	if err != nil {
		return nil, err
	}
	return &RingBufReader[E]{r: rd}, nil
}

// RingBufReader reads typed records from a ring buffer.
type RingBufReader[E any] struct {
	r   *ringbuf.Reader
	rec ringbuf.Record
}

// Read blocks until a record is available (or the deadline passes, or the
// reader is closed) and returns it. A record shorter than E is an error.
func (r *RingBufReader[E]) Read() (E, error) {
	var e E
	if err := r.r.ReadInto(&r.rec); err != nil {
		return e, err
	}
	if len(r.rec.RawSample) < sizeOf[E]() {
		return e, fmt.Errorf("ring buffer record of %d bytes, want %d", len(r.rec.RawSample), sizeOf[E]())
	}
	return fromBytes[E](r.rec.RawSample), nil
}

// SetDeadline makes Read return os.ErrDeadlineExceeded after t.
func (r *RingBufReader[E]) SetDeadline(t time.Time) { r.r.SetDeadline(t) }

// Close stops the reader; a blocked Read returns os.ErrClosed.
func (r *RingBufReader[E]) Close() error { return r.r.Close() }

// PerfEventArray is a BPF_MAP_TYPE_PERF_EVENT_ARRAY whose samples are of
// type E.
type PerfEventArray[E any] struct {
	m *ebpf.Map
}

// NewPerfEventArray wraps m.
func NewPerfEventArray[E any](m *ebpf.Map) (*PerfEventArray[E], error) {
	if m == nil {
		return nil, errors.New("nil map")
	}
	return &PerfEventArray[E]{m: m}, nil
}

// Raw returns the underlying cilium/ebpf map.
func (p *PerfEventArray[E]) Raw() *ebpf.Map { return p.m }

// NewReader opens a reader with a per-CPU buffer of at least perCPUBuffer
// bytes (0 means one page).
func (p *PerfEventArray[E]) NewReader(perCPUBuffer int) (*PerfReader[E], error) {
	if perCPUBuffer <= 0 {
		perCPUBuffer = os.Getpagesize()
	}
	rd, err := perf.NewReader(p.m, perCPUBuffer)
	if err != nil {
		return nil, err
	}
	return &PerfReader[E]{r: rd}, nil
}

// PerfReader reads typed samples from a perf event array.
type PerfReader[E any] struct {
	r   *perf.Reader
	rec perf.Record
}

// Read blocks until a sample is available and returns it with the number of
// samples the kernel lost before it on that CPU.
func (p *PerfReader[E]) Read() (e E, lost uint64, err error) {
	if err := p.r.ReadInto(&p.rec); err != nil {
		return e, 0, err
	}
	if p.rec.LostSamples != 0 {
		return e, p.rec.LostSamples, nil
	}
	if len(p.rec.RawSample) < sizeOf[E]() {
		return e, 0, fmt.Errorf("perf sample of %d bytes, want %d", len(p.rec.RawSample), sizeOf[E]())
	}
	return fromBytes[E](p.rec.RawSample), 0, nil
}

// SetDeadline makes Read return os.ErrDeadlineExceeded after t.
func (p *PerfReader[E]) SetDeadline(t time.Time) { p.r.SetDeadline(t) }

// Close stops the reader.
func (p *PerfReader[E]) Close() error { return p.r.Close() }
