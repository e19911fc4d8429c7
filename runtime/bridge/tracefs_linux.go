package bridge

import (
	"errors"
	"fmt"
	"os"
	"sync"
	"syscall"
)

// tracefsDir is where the system mounts tracefs at boot, and where
// cilium/ebpf looks for it first.
const tracefsDir = "/sys/kernel/tracing"

// Magic numbers of statfs(2) for tracefs and debugfs.
const (
	tracefsMagic = 0x74726163
	debugfsMagic = 0x64626720
)

var tracefsOnce struct {
	sync.Mutex
	done bool
}

// mountTracefs makes sure tracefs is mounted, as tracepoints need it (their
// IDs are read there): on a machine just booted it may not be, until
// something mounts it. Where it is missing and the process may mount it
// (root, or CAP_SYS_ADMIN), it is mounted at /sys/kernel/tracing as the
// system does; otherwise the error says the one command that does it.
func mountTracefs() error {
	tracefsOnce.Lock()
	defer tracefsOnce.Unlock()
	if tracefsOnce.done || tracefsMounted() {
		tracefsOnce.done = true
		return nil
	}
	err := syscall.Mount("nodev", tracefsDir, "tracefs", 0, "")
	if err == nil {
		tracefsOnce.done = true
		return nil
	}
	hint := "mount it with: sudo mount -t tracefs nodev " + tracefsDir
	if errors.Is(err, syscall.ENOENT) {
		if _, serr := os.Stat("/sys/kernel"); serr != nil {
			hint = "sysfs is not mounted at /sys either: mount -t sysfs sysfs /sys; then mount -t tracefs nodev " + tracefsDir
		}
	}
	return fmt.Errorf("tracefs is not mounted (tracepoints need it) and mounting it at %s failed: %w; %s", tracefsDir, err, hint)
}

// tracefsMounted reports whether tracefs is reachable where cilium/ebpf
// looks: /sys/kernel/tracing, or debugfs's tracing directory.
func tracefsMounted() bool {
	var st syscall.Statfs_t
	if syscall.Statfs(tracefsDir, &st) == nil && st.Type == tracefsMagic {
		return true
	}
	if syscall.Statfs("/sys/kernel/debug/tracing", &st) == nil && (st.Type == tracefsMagic || st.Type == debugfsMagic) {
		// debugfs mounts tracefs on its tracing directory itself.
		_, err := os.Stat("/sys/kernel/debug/tracing/events")
		return err == nil
	}
	return false
}
