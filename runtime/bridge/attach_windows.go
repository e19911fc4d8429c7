package bridge

import (
	"fmt"
	"runtime"
	"syscall"

	"github.com/cilium/ebpf"
	"github.com/cilium/ebpf/link"
)

// The Attach methods of a Program exist on Windows so that skeletons build
// there (in-process runs work everywhere), but the attach points they name
// are Linux's: each fails.

func (p Program) noAttach(what string) (link.Link, error) {
	return nil, fmt.Errorf("program %s: attach %s: %w on %s", p.name, what, ebpf.ErrNotSupported, runtime.GOOS)
}

// attachTracepoint fails: tracepoints are Linux's.
func (p Program) attachTracepoint(group, name string) (link.Link, error) {
	return p.noAttach("tracepoint " + group + "/" + name)
}

// attachRawTracepoint fails: raw tracepoints are Linux's.
func (p Program) attachRawTracepoint(name string) (link.Link, error) {
	return p.noAttach("raw tracepoint " + name)
}

// attachTracing fails: tracing programs are Linux's.
func (p Program) attachTracing() (link.Link, error) { return p.noAttach("tracing") }

// attachLSM fails: LSM programs are Linux's.
func (p Program) attachLSM() (link.Link, error) { return p.noAttach("lsm") }

// attachKprobe fails: kprobes are Linux's.
func (p Program) attachKprobe(symbol string, ret bool) (link.Link, error) {
	return p.noAttach("kprobe " + symbol)
}

// attachUprobe fails: uprobes are Linux's.
func (p Program) attachUprobe(path, symbol string, ret bool, pid int) (link.Link, error) {
	return p.noAttach("uprobe " + path + ":" + symbol)
}

// attachXDP fails: the skeleton attaches XDP through Linux's interfaces.
func (p Program) attachXDP(ifindex int) (link.Link, error) { return p.noAttach("xdp") }

// attachTCX fails: tcx is Linux's.
func (p Program) attachTCX(ifindex int, egress bool) (link.Link, error) { return p.noAttach("tcx") }

// attachCgroup fails: cgroups are Linux's.
func (p Program) attachCgroup(path string, at ebpf.AttachType) (link.Link, error) {
	return p.noAttach("cgroup " + path)
}

// attachSocket fails: socket filters are attached through Linux's
// setsockopt.
func (p Program) attachSocket(conn syscall.Conn) error {
	_, err := p.noAttach("socket filter")
	return err
}

// Attach fails: struct_ops are Linux's.
func (so *StructOps) Attach() (link.Link, error) {
	return nil, fmt.Errorf("struct_ops %s: attach: %w on %s", so.name, ebpf.ErrNotSupported, runtime.GOOS)
}

// attachUSDT fails: USDT probes are attached through Linux's uprobes.
func (p Program) attachUSDT(path, provider, name string, pid int) (link.Link, error) {
	return p.noAttach("usdt " + path + ":" + provider + ":" + name)
}

// attachKsyscall fails: kprobes are Linux's.
func (p Program) attachKsyscall(name string, ret bool) (link.Link, error) {
	return p.noAttach("ksyscall " + name)
}

// attachKprobeMulti fails: kprobes are Linux's.
func (p Program) attachKprobeMulti(pattern string, ret bool) (link.Link, error) {
	return p.noAttach("kprobe.multi " + pattern)
}

// attachKprobeSession fails: kprobes are Linux's.
func (p Program) attachKprobeSession(pattern string) (link.Link, error) {
	return p.noAttach("kprobe.session " + pattern)
}

// attachUprobeMulti fails: uprobes are Linux's.
func (p Program) attachUprobeMulti(path, pattern string, ret bool, pid int) (link.Link, error) {
	return p.noAttach("uprobe.multi " + path + ":" + pattern)
}

// attachPerfEvent fails: perf events are Linux's.
func (p Program) attachPerfEvent(fd int) (link.Link, error) { return p.noAttach("perf event") }

// attachCPUClock fails: perf events are Linux's.
func (p Program) attachCPUClock(hz uint64) (link.Link, error) { return p.noAttach("perf event") }

// attachSockMap fails: sockmaps are Linux's.
func (p Program) attachSockMap(m *ebpf.Map, at ebpf.AttachType) (link.Link, error) {
	return p.noAttach("sockmap")
}

// attachNetNs fails: network namespaces are Linux's.
func (p Program) attachNetNs(path string) (link.Link, error) { return p.noAttach("netns " + path) }

// attachNetfilter fails: netfilter is Linux's.
func (p Program) attachNetfilter(family, hook uint32, priority int32) (link.Link, error) {
	return p.noAttach("netfilter")
}

// attachNetkit fails: netkit is Linux's.
func (p Program) attachNetkit(ifindex int, peer bool) (link.Link, error) { return p.noAttach("netkit") }

// attachReuseport fails: SO_ATTACH_REUSEPORT_EBPF is Linux's.
func (p Program) attachReuseport(conn syscall.Conn) error {
	_, err := p.noAttach("reuseport")
	return err
}

// attachLircMode2 fails: lirc devices are Linux's.
func (p Program) attachLircMode2(path string) error {
	_, err := p.noAttach("lirc_mode2 " + path)
	return err
}
