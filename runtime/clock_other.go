//go:build !linux

package runtime

import (
	"os"
	"time"
)

// Without a kernel clock to agree with, times count from process start.
var processStart = time.Now()

func monotonicNanos() uint64 { return uint64(time.Since(processStart)) }
func bootNanos() uint64      { return monotonicNanos() }
func threadID() int          { return os.Getpid() }
