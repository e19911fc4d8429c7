package bridge

import (
	"runtime"
	"syscall"
)

// membarrierSyscall is the number of membarrier(2), which the syscall
// package does not name on most architectures.
var membarrierSyscall = map[string]uintptr{
	"386": 375, "amd64": 324, "arm": 389, "arm64": 283, "loong64": 283, "riscv64": 283,
	"ppc64": 365, "ppc64le": 365, "s390x": 356, "mips": 4358, "mipsle": 4358, "mips64": 5318, "mips64le": 5318,
}

// quiesce waits for the BPF programs that were running when their links
// were closed: a tracing program runs inside an RCU read-side critical
// section, and membarrier's MEMBARRIER_CMD_GLOBAL waits for an RCU grace
// period (synchronize_rcu). Without it, a program that was in flight on
// another CPU could write a record after the readers drained. Where the
// call is unavailable, quiesce returns at once.
func quiesce() {
	if nr, ok := membarrierSyscall[runtime.GOARCH]; ok {
		const membarrierCmdGlobal = 1
		syscall.Syscall(nr, membarrierCmdGlobal, 0, 0)
	}
}
