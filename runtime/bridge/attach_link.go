//go:build !windows

package bridge

import (
	"errors"
	"fmt"

	"github.com/cilium/ebpf"
	"github.com/cilium/ebpf/link"
)

func (l *Links) add(lk link.Link, err error) (link.Link, error) {
	if err != nil {
		return nil, err
	}
	l.mu.Lock()
	l.links = append(l.links, lk)
	l.mu.Unlock()
	return lk, nil
}

func (p Program) wrap(what string, lk link.Link, err error) (link.Link, error) {
	if p.prog == nil {
		return nil, fmt.Errorf("program %s: attach: %w", p.name, p.notLoaded())
	}
	if err != nil {
		err = explainPrivilege(explainAttach(what, err), "attaching "+what, attachCapabilities(p.prog.Type())...)
		return nil, fmt.Errorf("program %s: attach %s: %w", p.name, what, err)
	}
	return p.links.add(lk, nil)
}

// explainAttach adds what the running kernel lacks to errors whose cause is
// not obvious from the system call's errno.
func explainAttach(what string, err error) error {
	if errors.Is(err, ebpf.ErrNotSupported) {
		return fmt.Errorf("%w (%s is not supported by this kernel)", err, what)
	}
	return err
}

// attachCapabilities are the capabilities attaching a program of type t
// needs: perf events and tracefs for tracepoints and probes (tracefs is
// root's: CAP_DAC_OVERRIDE for another user), CAP_NET_ADMIN for networking
// hooks.
func attachCapabilities(t ebpf.ProgramType) []capability {
	switch t {
	case ebpf.Kprobe, ebpf.TracePoint, ebpf.PerfEvent:
		return []capability{capBPF, capPerfmon, capDACOverride}
	case ebpf.RawTracepoint, ebpf.RawTracepointWritable, ebpf.Tracing, ebpf.LSM:
		return []capability{capBPF, capPerfmon}
	case ebpf.XDP, ebpf.SchedCLS, ebpf.SchedACT, ebpf.CGroupSKB, ebpf.CGroupSock, ebpf.CGroupSockAddr, ebpf.CGroupSockopt, ebpf.CGroupSysctl, ebpf.CGroupDevice, ebpf.SockOps:
		return []capability{capBPF, capNetAdmin}
	}
	return []capability{capBPF}
}
