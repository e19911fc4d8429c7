package runtime

import (
	"syscall"
	"unsafe"
)

const (
	clockMonotonic = 1
	clockBoottime  = 7
)

// clock reads a kernel clock, so that times agree with kernel-side programs.
func clock(id uintptr) uint64 {
	var ts syscall.Timespec
	syscall.Syscall(syscall.SYS_CLOCK_GETTIME, id, uintptr(unsafe.Pointer(&ts)), 0)
	return uint64(ts.Sec)*1e9 + uint64(ts.Nsec)
}

func monotonicNanos() uint64 { return clock(clockMonotonic) }
func bootNanos() uint64      { return clock(clockBoottime) }
func threadID() int          { return syscall.Gettid() }
