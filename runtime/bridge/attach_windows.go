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

// AttachTracepoint fails: tracepoints are Linux's.
func (p Program) AttachTracepoint(group, name string) (link.Link, error) {
	return p.noAttach("tracepoint " + group + "/" + name)
}

// AttachRawTracepoint fails: raw tracepoints are Linux's.
func (p Program) AttachRawTracepoint(name string) (link.Link, error) {
	return p.noAttach("raw tracepoint " + name)
}

// AttachTracing fails: tracing programs are Linux's.
func (p Program) AttachTracing() (link.Link, error) { return p.noAttach("tracing") }

// AttachLSM fails: LSM programs are Linux's.
func (p Program) AttachLSM() (link.Link, error) { return p.noAttach("lsm") }

// AttachKprobe fails: kprobes are Linux's.
func (p Program) AttachKprobe(symbol string, ret bool) (link.Link, error) {
	return p.noAttach("kprobe " + symbol)
}

// AttachUprobe fails: uprobes are Linux's.
func (p Program) AttachUprobe(path, symbol string, ret bool, pid int) (link.Link, error) {
	return p.noAttach("uprobe " + path + ":" + symbol)
}

// AttachXDP fails: the skeleton attaches XDP through Linux's interfaces.
func (p Program) AttachXDP(ifindex int) (link.Link, error) { return p.noAttach("xdp") }

// AttachTCX fails: tcx is Linux's.
func (p Program) AttachTCX(ifindex int, egress bool) (link.Link, error) { return p.noAttach("tcx") }

// AttachCgroup fails: cgroups are Linux's.
func (p Program) AttachCgroup(path string, at ebpf.AttachType) (link.Link, error) {
	return p.noAttach("cgroup " + path)
}

// AttachSocket fails: socket filters are attached through Linux's
// setsockopt.
func (p Program) AttachSocket(conn syscall.Conn) error {
	_, err := p.noAttach("socket filter")
	return err
}

// Attach fails: struct_ops are Linux's.
func (so *StructOps) Attach() (link.Link, error) {
	return nil, fmt.Errorf("struct_ops %s: attach: %w on %s", so.name, ebpf.ErrNotSupported, runtime.GOOS)
}

// AttachUSDT fails: USDT probes are attached through Linux's uprobes.
func (p Program) AttachUSDT(path, provider, name string, pid int) (link.Link, error) {
	return p.noAttach("usdt " + path + ":" + provider + ":" + name)
}

// AttachKsyscall fails: kprobes are Linux's.
func (p Program) AttachKsyscall(name string, ret bool) (link.Link, error) {
	return p.noAttach("ksyscall " + name)
}

// AttachKprobeMulti fails: kprobes are Linux's.
func (p Program) AttachKprobeMulti(pattern string, ret bool) (link.Link, error) {
	return p.noAttach("kprobe.multi " + pattern)
}

// AttachKprobeSession fails: kprobes are Linux's.
func (p Program) AttachKprobeSession(pattern string) (link.Link, error) {
	return p.noAttach("kprobe.session " + pattern)
}

// AttachUprobeMulti fails: uprobes are Linux's.
func (p Program) AttachUprobeMulti(path, pattern string, ret bool, pid int) (link.Link, error) {
	return p.noAttach("uprobe.multi " + path + ":" + pattern)
}

// AttachPerfEvent fails: perf events are Linux's.
func (p Program) AttachPerfEvent(fd int) (link.Link, error) { return p.noAttach("perf event") }

// AttachCPUClock fails: perf events are Linux's.
func (p Program) AttachCPUClock(hz uint64) (link.Link, error) { return p.noAttach("perf event") }

// AttachSockMap fails: sockmaps are Linux's.
func (p Program) AttachSockMap(m *ebpf.Map, at ebpf.AttachType) (link.Link, error) {
	return p.noAttach("sockmap")
}

// AttachNetNs fails: network namespaces are Linux's.
func (p Program) AttachNetNs(path string) (link.Link, error) { return p.noAttach("netns " + path) }

// AttachNetfilter fails: netfilter is Linux's.
func (p Program) AttachNetfilter(family, hook uint32, priority int32) (link.Link, error) {
	return p.noAttach("netfilter")
}

// AttachNetkit fails: netkit is Linux's.
func (p Program) AttachNetkit(ifindex int, peer bool) (link.Link, error) { return p.noAttach("netkit") }

// AttachReuseport fails: SO_ATTACH_REUSEPORT_EBPF is Linux's.
func (p Program) AttachReuseport(conn syscall.Conn) error {
	_, err := p.noAttach("reuseport")
	return err
}

// AttachLircMode2 fails: lirc devices are Linux's.
func (p Program) AttachLircMode2(path string) error {
	_, err := p.noAttach("lirc_mode2 " + path)
	return err
}
