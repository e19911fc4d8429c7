//go:build !windows

package bridge

import (
	"os"
	"sync/atomic"
	"time"

	"github.com/cilium/ebpf/perf"
)

// NewReader opens a reader with a per-CPU buffer of one page, as the ring
// buffer's NewReader opens one of the ring buffer's size.
func (p *PerfEventArray[E]) NewReader() (*PerfReader[E], error) {
	return p.NewReaderSize(0)
}

// NewReaderSize opens a reader with a per-CPU buffer of at least
// perCPUBuffer bytes (0 means one page): a larger buffer loses fewer
// samples in bursts.
func (p *PerfEventArray[E]) NewReaderSize(perCPUBuffer int) (*PerfReader[E], error) {
	if p.m == nil {
		return nil, ErrInProcess
	}
	if perCPUBuffer <= 0 {
		perCPUBuffer = os.Getpagesize()
	}
	if err := p.h.begin(); err != nil {
		return nil, err
	}
	defer p.h.end()
	rd, err := perf.NewReader(p.m, perCPUBuffer)
	if err != nil {
		return nil, err
	}
	p.h.set.readers.add(rd)
	return &PerfReader[E]{r: rd, h: p.h}, nil
}

// PerfReader reads typed samples from a perf event array. Closing the set
// closes it too: Read then fails with ErrClosed.
type PerfReader[E any] struct {
	r    *perf.Reader
	rec  perf.Record
	h    mapHandle
	lost atomic.Uint64

	pend    Record[E] // a sample wait read for consume
	pending bool
}

// Read blocks until a sample is available and returns it decoded. The
// kernel's notices of lost samples are skipped and counted in Lost. A
// sample shorter than E leaves the rest of E zero; ReadRecord tells its
// length and keeps its bytes.
func (p *PerfReader[E]) Read() (E, error) {
	for {
		rec, err := p.ReadRecord()
		if err != nil || rec.Lost == 0 {
			return rec.Value, err
		}
	}
}

// Lost is the number of samples the kernel lost (its per-CPU buffer was
// full) that ReadRecord or Read have seen so far.
func (p *PerfReader[E]) Lost() uint64 { return p.lost.Load() }

// ReadRecord is Read with the sample's length and bytes (see Record), and
// the kernel's notices of lost samples as records of their own (Lost and
// CPU set, no data). The
// kernel pads perf samples to a multiple of 8 bytes, so Len may exceed
// what the program passed to bpf_perf_event_output by up to 7 bytes: a
// variable-length payload should carry its own length.
func (p *PerfReader[E]) ReadRecord() (Record[E], error) {
	var rec Record[E]
	err := p.ReadInto(&rec)
	return rec, err
}

// ReadInto is ReadRecord into rec, which it overwrites: a loop reusing
// one Record allocates nothing per sample. rec.Raw is valid until the
// next read.
func (p *PerfReader[E]) ReadInto(rec *Record[E]) error {
	if err := p.h.closedErr(); err != nil {
		return err
	}
	if err := p.r.ReadInto(&p.rec); err != nil {
		return p.h.readErr(err)
	}
	if p.rec.LostSamples != 0 {
		p.lost.Add(p.rec.LostSamples)
		rec.set(nil, p.rec.LostSamples, p.rec.CPU)
		return nil
	}
	rec.set(p.rec.RawSample, 0, p.rec.CPU)
	return nil
}

// SetDeadline makes Read return os.ErrDeadlineExceeded after t.
func (p *PerfReader[E]) SetDeadline(t time.Time) { p.r.SetDeadline(t) }

// Close stops the reader.
func (p *PerfReader[E]) Close() error {
	p.h.set.readers.remove(p.r)
	return p.r.Close()
}

func (p *PerfReader[E]) wait() error {
	if p.pending {
		return nil
	}
	err := p.ReadInto(&p.pend)
	p.pending = err == nil
	return err
}

func (p *PerfReader[E]) consume(_ int, fn func(raw []byte, lost uint64, cpu int)) int {
	if !p.pending {
		return 0
	}
	p.pending = false
	fn(p.pend.Raw, p.pend.Lost, p.pend.CPU)
	return 1
}

func (p *PerfReader[E]) drain() { p.r.Flush() }
