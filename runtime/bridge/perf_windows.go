package bridge

import (
	"fmt"
	"runtime"
	"time"

	"github.com/cilium/ebpf"
)

// NewReader fails: perf event arrays are Linux's.
func (p *PerfEventArray[E]) NewReader() (*PerfReader[E], error) { return p.NewReaderSize(0) }

// NewReaderSize fails: perf event arrays are Linux's.
func (p *PerfEventArray[E]) NewReaderSize(perCPUBuffer int) (*PerfReader[E], error) {
	return nil, fmt.Errorf("perf event array reader: %w on %s", ebpf.ErrNotSupported, runtime.GOOS)
}

// PerfReader reads typed samples from a perf event array; on Windows there
// is none to read.
type PerfReader[E any] struct{}

// Read fails: see NewReader.
func (p *PerfReader[E]) Read() (e E, err error) { return e, ErrClosed }

// Lost is 0.
func (p *PerfReader[E]) Lost() uint64 { return 0 }

// ReadRecord fails: see NewReader.
func (p *PerfReader[E]) ReadRecord() (Record[E], error) { return Record[E]{}, ErrClosed }

// ReadInto fails: see NewReader.
func (p *PerfReader[E]) ReadInto(rec *Record[E]) error { return ErrClosed }

// SetDeadline does nothing.
func (p *PerfReader[E]) SetDeadline(t time.Time) {}

// Close does nothing.
func (p *PerfReader[E]) Close() error { return nil }

func (p *PerfReader[E]) wait() error                                { return ErrClosed }
func (p *PerfReader[E]) consume(int, func([]byte, uint64, int)) int { return 0 }

func (p *PerfReader[E]) drain() {}
