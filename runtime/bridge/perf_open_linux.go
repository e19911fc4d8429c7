package bridge

import (
	"syscall"
	"unsafe"
)

// perfEventAttr is the head of the kernel's struct perf_event_attr, up to
// the fields a CPU-clock sampler sets; the kernel reads size bytes of it.
type perfEventAttr struct {
	typ        uint32
	size       uint32
	config     uint64
	sampleFreq uint64
	sampleType uint64
	readFormat uint64
	flags      uint64
	wakeup     uint32
	bpType     uint32
	rest       [64]byte
}

const (
	perfTypeSoftware      = 1
	perfCountSWCPUClock   = 0
	perfAttrFreq          = 1 << 10
	perfFlagFDCloexec     = 1 << 3
	soAttachReuseportEBPF = 52
)

// openCPUClock opens a software CPU-clock event sampling at hz on cpu, for
// every task.
func openCPUClock(hz uint64, cpu int) (int, error) {
	attr := perfEventAttr{
		typ:        perfTypeSoftware,
		config:     perfCountSWCPUClock,
		sampleFreq: hz,
		flags:      perfAttrFreq,
	}
	attr.size = uint32(unsafe.Sizeof(attr))
	fd, _, errno := syscall.Syscall6(syscall.SYS_PERF_EVENT_OPEN, uintptr(unsafe.Pointer(&attr)), ^uintptr(0), uintptr(cpu), ^uintptr(0), perfFlagFDCloexec, 0)
	if errno != 0 {
		return -1, errno
	}
	return int(fd), nil
}

// attachReuseport sets SO_ATTACH_REUSEPORT_EBPF on conn's socket.
func attachReuseport(conn syscall.Conn, prog int) error {
	raw, err := conn.SyscallConn()
	if err != nil {
		return err
	}
	var serr error
	if err := raw.Control(func(fd uintptr) {
		serr = syscall.SetsockoptInt(int(fd), syscall.SOL_SOCKET, soAttachReuseportEBPF, prog)
	}); err != nil {
		return err
	}
	return serr
}
