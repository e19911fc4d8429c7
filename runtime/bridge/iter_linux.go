package bridge

import (
	"fmt"
	"runtime"
	"syscall"
	"unsafe"

	"github.com/cilium/ebpf"
	"github.com/cilium/ebpf/link"
)

// linkCreateIter is the link_create member of union bpf_attr for an
// iterator: prog_fd, target_fd, attach_type, flags, iter_info,
// iter_info_len. The pointer field keeps info alive and, were info on a
// stack that moves, up to date; the layout assumes 64-bit pointers.
type linkCreateIter struct {
	progFD, targetFD, attachType, flags uint32
	info                                unsafe.Pointer
	infoLen                             uint32
	_                                   uint32
}

// sysBPF is the number of bpf(2) by architecture (the syscall package
// does not have it).
var sysBPF = map[string]uintptr{
	"amd64": 321, "386": 357, "arm64": 280, "arm": 386, "riscv64": 280, "loong64": 280,
	"s390x": 351, "ppc64": 361, "ppc64le": 361, "mips64": 5315, "mips64le": 5315, "mips": 4355, "mipsle": 4355,
}

// createIterLink makes an iterator link of prog with the raw
// bpf_iter_link_info info, which cilium/ebpf's AttachIter cannot pass for
// task and cgroup iterators.
func createIterLink(prog *ebpf.Program, info []byte) (link.Link, error) {
	if unsafe.Sizeof(uintptr(0)) != 8 {
		return nil, fmt.Errorf("iterator arguments: %w on %s", ebpf.ErrNotSupported, runtime.GOARCH)
	}
	const bpfLinkCreate = 28
	attr := linkCreateIter{
		progFD:     uint32(prog.FD()),
		attachType: uint32(ebpf.AttachTraceIter),
		info:       unsafe.Pointer(&info[0]),
		infoLen:    uint32(len(info)),
	}
	nr, ok := sysBPF[runtime.GOARCH]
	if !ok {
		return nil, fmt.Errorf("iterator arguments: %w on %s", ebpf.ErrNotSupported, runtime.GOARCH)
	}
	fd, _, errno := syscall.Syscall(nr, bpfLinkCreate, uintptr(unsafe.Pointer(&attr)), unsafe.Sizeof(attr))
	runtime.KeepAlive(info)
	if errno != 0 {
		return nil, fmt.Errorf("can't link iterator: %w", errno)
	}
	return link.NewFromFD(int(fd))
}
