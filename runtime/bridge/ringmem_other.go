//go:build !linux

package bridge

import (
	"fmt"
	"os"
	"runtime"
	"time"

	"github.com/cilium/ebpf"
)

// ringMem reads a kernel ring buffer in place: only Linux has kernel maps
// to map.
type ringMem struct{ seat seatCount }

func newRingMem(m *ebpf.Map) (*ringMem, error) {
	return nil, fmt.Errorf("reading a kernel ring buffer: not supported on %s", runtime.GOOS)
}

func (r *ringMem) consume(int, func([]byte, uint64, int)) int { return 0 }
func (r *ringMem) read([]byte) ([]byte, error)                { return nil, os.ErrClosed }
func (r *ringMem) take() ([]byte, error)                      { return nil, os.ErrClosed }
func (r *ringMem) wait() error                                { return os.ErrClosed }
func (r *ringMem) setDeadline(time.Time)                      {}
func (r *ringMem) Close() error                               { return nil }
