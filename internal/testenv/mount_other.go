//go:build !linux

package testenv

import (
	"errors"
	"runtime"
)

// isBPFFS reports false: only Linux has bpffs.
func isBPFFS(string) bool { return false }

// mountBPFFS fails: only Linux has bpffs.
func mountBPFFS(string) error { return errors.New("bpffs is Linux's, not " + runtime.GOOS + "'s") }

// OnCPU fails: binding a thread to a CPU is done here only on Linux.
func OnCPU(int, func(int)) error {
	return errors.New("binding a thread to a CPU is not done on " + runtime.GOOS)
}

// Clocks returns zeros: the kernel's clocks are read here only on Linux.
func Clocks() (mono, boot uint64) { return 0, 0 }
