//go:build !linux

package bridge

import (
	"errors"
	"fmt"
	"runtime"

	"github.com/cilium/ebpf"
)

// Kernel maps exist only on Linux: these errors are never returned here.
var (
	errE2BIG = errors.New("argument list too long")
	errEPERM = errors.New("operation not permitted")
)

// mmapMap fails: only Linux has kernel maps to map. The package builds
// everywhere so that in-process runs and editors work on every system.
func mmapMap(m *ebpf.Map, readOnly bool) ([]byte, func() error, error) {
	return nil, nil, fmt.Errorf("mapping a kernel map: not supported on %s", runtime.GOOS)
}
