//go:build !linux && !windows

package bridge

import (
	"fmt"
	"runtime"
	"syscall"

	"github.com/cilium/ebpf"
)

// openCPUClock fails: perf events are Linux's.
func openCPUClock(hz uint64, cpu int) (int, error) {
	return -1, fmt.Errorf("perf events: %w on %s", ebpf.ErrNotSupported, runtime.GOOS)
}

// attachReuseport fails: SO_ATTACH_REUSEPORT_EBPF is Linux's.
func attachReuseport(conn syscall.Conn, prog int) error {
	return fmt.Errorf("SO_ATTACH_REUSEPORT_EBPF: %w on %s", ebpf.ErrNotSupported, runtime.GOOS)
}
