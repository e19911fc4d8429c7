//go:build !windows

package bridge

import (
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
	"syscall"

	"github.com/cilium/ebpf"
	"github.com/cilium/ebpf/link"
)

// attachTracepoint attaches to tracepoint group/name.
func (p Program) attachTracepoint(group, name string) (link.Link, error) {
	if p.prog == nil {
		return p.wrap("", nil, nil)
	}
	if err := mountTracefs(); err != nil {
		return p.wrap("tracepoint "+group+"/"+name, nil, err)
	}
	lk, err := link.Tracepoint(group, name, p.prog, nil)
	return p.wrap("tracepoint "+group+"/"+name, lk, err)
}

// attachRawTracepoint attaches to the raw tracepoint name.
func (p Program) attachRawTracepoint(name string) (link.Link, error) {
	if p.prog == nil {
		return p.wrap("", nil, nil)
	}
	lk, err := link.AttachRawTracepoint(link.RawTracepointOptions{Name: name, Program: p.prog})
	return p.wrap("raw tracepoint "+name, lk, err)
}

// attachTracing attaches a tp_btf, fentry, fexit or fmod_ret program to the
// target resolved at load time.
func (p Program) attachTracing() (link.Link, error) {
	if p.prog == nil {
		return p.wrap("", nil, nil)
	}
	lk, err := link.AttachTracing(link.TracingOptions{Program: p.prog})
	return p.wrap("tracing", lk, err)
}

// attachLSM attaches an LSM program.
func (p Program) attachLSM() (link.Link, error) {
	if p.prog == nil {
		return p.wrap("", nil, nil)
	}
	lk, err := link.AttachLSM(link.LSMOptions{Program: p.prog})
	return p.wrap("lsm", lk, err)
}

// attachKprobe attaches to the kernel symbol, at its entry or (ret) return.
func (p Program) attachKprobe(symbol string, ret bool) (link.Link, error) {
	if p.prog == nil {
		return p.wrap("", nil, nil)
	}
	var lk link.Link
	var err error
	what := "kprobe"
	if ret {
		what = "kretprobe"
	}
	// symbol+offset (kprobe/do_sys_open+0x4, as libbpf reads it) probes
	// that many bytes into the function.
	var opts *link.KprobeOptions
	if sym, off, ok := strings.Cut(symbol, "+"); ok {
		o, perr := strconv.ParseUint(off, 0, 64)
		if perr != nil || sym == "" {
			return p.wrap(what+" "+symbol, nil, fmt.Errorf("%q is not symbol+offset", symbol))
		}
		if ret {
			return p.wrap(what+" "+symbol, nil, errors.New("a kretprobe takes no offset"))
		}
		symbol, opts = sym, &link.KprobeOptions{Offset: o}
	}
	if ret {
		lk, err = link.Kretprobe(symbol, p.prog, opts)
	} else {
		lk, err = link.Kprobe(symbol, p.prog, opts)
	}
	if err != nil && !kprobesAvailable() {
		err = fmt.Errorf("%w (this kernel has no kprobe support: neither kprobe_events nor the kprobe PMU exists)", err)
	}
	return p.wrap(what+" "+symbol, lk, err)
}

// kprobesAvailable reports whether the kernel offers kprobes at all.
func kprobesAvailable() bool {
	for _, path := range []string{
		"/sys/bus/event_source/devices/kprobe",
		"/sys/kernel/tracing/kprobe_events",
		"/sys/kernel/debug/tracing/kprobe_events",
	} {
		if _, err := os.Stat(path); err == nil {
			return true
		}
	}
	return false
}

// attachUprobe attaches to symbol in the executable or library at path, at
// its entry or (ret) return. pid 0 means every process.
func (p Program) attachUprobe(path, symbol string, ret bool, pid int) (link.Link, error) {
	if p.prog == nil {
		return p.wrap("", nil, nil)
	}
	what := "uprobe"
	if ret {
		what = "uretprobe"
	}
	what += " " + path + ":" + symbol
	ex, err := link.OpenExecutable(path)
	if err != nil {
		return p.wrap(what, nil, err)
	}
	opts := &link.UprobeOptions{PID: pid}
	var lk link.Link
	if ret {
		lk, err = ex.Uretprobe(symbol, p.prog, opts)
	} else {
		lk, err = ex.Uprobe(symbol, p.prog, opts)
	}
	return p.wrap(what, lk, err)
}

// attachXDP attaches an XDP program to the network interface ifindex.
func (p Program) attachXDP(ifindex int) (link.Link, error) {
	if p.prog == nil {
		return p.wrap("", nil, nil)
	}
	lk, err := link.AttachXDP(link.XDPOptions{Program: p.prog, Interface: ifindex})
	return p.wrap(fmt.Sprintf("xdp to interface %d", ifindex), lk, err)
}

// attachTCX attaches a tc program to ifindex, on egress or ingress.
func (p Program) attachTCX(ifindex int, egress bool) (link.Link, error) {
	if p.prog == nil {
		return p.wrap("", nil, nil)
	}
	at := ebpf.AttachTCXIngress
	if egress {
		at = ebpf.AttachTCXEgress
	}
	lk, err := link.AttachTCX(link.TCXOptions{Program: p.prog, Interface: ifindex, Attach: at})
	return p.wrap(fmt.Sprintf("tcx to interface %d", ifindex), lk, err)
}

// attachCgroup attaches to the cgroup at path with the attach type at.
func (p Program) attachCgroup(path string, at ebpf.AttachType) (link.Link, error) {
	if p.prog == nil {
		return p.wrap("", nil, nil)
	}
	lk, err := link.AttachCgroup(link.CgroupOptions{Path: path, Attach: at, Program: p.prog})
	return p.wrap("cgroup "+path, lk, err)
}

// attachSocket attaches a socket filter to conn; it stays attached until the
// socket is closed.
func (p Program) attachSocket(conn syscall.Conn) error {
	if p.prog == nil {
		return fmt.Errorf("program %s: %w", p.name, p.notLoaded())
	}
	if err := link.AttachSocketFilter(conn, p.prog); err != nil {
		return fmt.Errorf("program %s: attach socket filter: %w", p.name, err)
	}
	return nil
}
