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
