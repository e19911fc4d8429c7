package bridge

import (
	"fmt"
	"os"
	"syscall"

	"github.com/cilium/ebpf"
)

var (
	errE2BIG = syscall.E2BIG
	errEPERM = syscall.EPERM
)

// mmapMap maps a BPF_F_MMAPABLE array's values into the process. cilium/ebpf's
// Map.Memory offers only copying access; user programs need the live memory.
func mmapMap(m *ebpf.Map, readOnly bool) ([]byte, func() error, error) {
	stride := (int(m.ValueSize()) + 7) &^ 7
	size := stride * int(m.MaxEntries())
	page := os.Getpagesize()
	size = (size + page - 1) / page * page
	prot := syscall.PROT_READ
	if !readOnly {
		prot |= syscall.PROT_WRITE
	}
	mem, err := syscall.Mmap(m.FD(), 0, size, prot, syscall.MAP_SHARED)
	if err != nil {
		return nil, nil, fmt.Errorf("mmap: %w", err)
	}
	return mem, func() error { return syscall.Munmap(mem) }, nil
}
