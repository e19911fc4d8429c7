//go:build !linux && !windows

package bridge

import (
	"fmt"
	"runtime"

	"github.com/cilium/ebpf"
	"github.com/cilium/ebpf/link"
)

// createIterLink fails: iterators are Linux's.
func createIterLink(*ebpf.Program, []byte) (link.Link, error) {
	return nil, fmt.Errorf("iterators: %w on %s", ebpf.ErrNotSupported, runtime.GOOS)
}
