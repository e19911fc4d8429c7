package bridge

import (
	"errors"
	"fmt"
	"os"
	"sync"
	"syscall"

	"github.com/cilium/ebpf"
	"github.com/cilium/ebpf/link"
)

// Links collects the links made by Attach methods so that closing the
// skeleton's objects detaches everything. The zero value is ready to use.
type Links struct {
	mu    sync.Mutex
	links []link.Link
}

func (l *Links) add(lk link.Link, err error) (link.Link, error) {
	if err != nil {
		return nil, err
	}
	l.mu.Lock()
	l.links = append(l.links, lk)
	l.mu.Unlock()
	return lk, nil
}

// Close closes every link, newest first, and returns the first error.
func (l *Links) Close() error {
	l.mu.Lock()
	links := l.links
	l.links = nil
	l.mu.Unlock()
	var first error
	for i := len(links) - 1; i >= 0; i-- {
		if err := links[i].Close(); err != nil && first == nil {
			first = err
		}
	}
	return first
}

// Program is a loaded kernel program with the attach operations its section
// name allows. The generated skeleton gives each program a type embedding
// Program and an Attach method for its section. When the object runs in
// process, kernel programs are not loaded and every operation fails with
// ErrInProcess.
type Program struct {
	prog     *ebpf.Program
	name     string
	links    *Links
	disabled bool
}

// NewProgram returns the kernel program name of s; links made by its Attach
// methods are closed with s.
func NewProgram(s *Set, name string) (Program, error) {
	p := Program{name: name, links: &s.Links}
	if s.disabled[name] || s.Spec != nil && s.Spec.Programs[name] == nil {
		// Switched off before load, or removed from the spec.
		p.disabled = true
		return p, nil
	}
	if s.Coll == nil {
		return p, nil
	}
	if p.prog = s.Coll.Programs[name]; p.prog == nil {
		return p, fmt.Errorf("program %s: not loaded", name)
	}
	return p, nil
}

// Raw returns the underlying cilium/ebpf program, or nil in process or
// when the program was disabled.
func (p Program) Raw() *ebpf.Program { return p.prog }

// Disabled reports whether the program's autoload was off: it was not
// loaded, and Attach and Run fail with ErrDisabled.
func (p Program) Disabled() bool { return p.disabled }

// notLoaded is the error of an operation on a program that is not in the
// kernel: disabled, or the object runs in process.
func (p Program) notLoaded() error {
	if p.disabled {
		return ErrDisabled
	}
	return ErrInProcess
}

// Run runs the program once in the kernel with BPF_PROG_TEST_RUN.
func (p Program) Run(opts *ebpf.RunOptions) (uint32, error) {
	if p.prog == nil {
		return 0, fmt.Errorf("program %s: %w", p.name, p.notLoaded())
	}
	return p.prog.Run(opts)
}

func (p Program) wrap(what string, lk link.Link, err error) (link.Link, error) {
	if p.prog == nil {
		return nil, fmt.Errorf("program %s: attach: %w", p.name, p.notLoaded())
	}
	if err != nil {
		return nil, fmt.Errorf("program %s: attach %s: %w", p.name, what, explainAttach(what, err))
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

// AttachTracepoint attaches to tracepoint group/name.
func (p Program) AttachTracepoint(group, name string) (link.Link, error) {
	if p.prog == nil {
		return p.wrap("", nil, nil)
	}
	if err := mountTracefs(); err != nil {
		return p.wrap("tracepoint "+group+"/"+name, nil, err)
	}
	lk, err := link.Tracepoint(group, name, p.prog, nil)
	return p.wrap("tracepoint "+group+"/"+name, lk, err)
}

// AttachRawTracepoint attaches to the raw tracepoint name.
func (p Program) AttachRawTracepoint(name string) (link.Link, error) {
	if p.prog == nil {
		return p.wrap("", nil, nil)
	}
	lk, err := link.AttachRawTracepoint(link.RawTracepointOptions{Name: name, Program: p.prog})
	return p.wrap("raw tracepoint "+name, lk, err)
}

// AttachTracing attaches a tp_btf, fentry, fexit or fmod_ret program to the
// target resolved at load time.
func (p Program) AttachTracing() (link.Link, error) {
	if p.prog == nil {
		return p.wrap("", nil, nil)
	}
	lk, err := link.AttachTracing(link.TracingOptions{Program: p.prog})
	return p.wrap("tracing", lk, err)
}

// AttachLSM attaches an LSM program.
func (p Program) AttachLSM() (link.Link, error) {
	if p.prog == nil {
		return p.wrap("", nil, nil)
	}
	lk, err := link.AttachLSM(link.LSMOptions{Program: p.prog})
	return p.wrap("lsm", lk, err)
}

// AttachKprobe attaches to the kernel symbol, at its entry or (ret) return.
func (p Program) AttachKprobe(symbol string, ret bool) (link.Link, error) {
	if p.prog == nil {
		return p.wrap("", nil, nil)
	}
	var lk link.Link
	var err error
	what := "kprobe"
	if ret {
		what = "kretprobe"
		lk, err = link.Kretprobe(symbol, p.prog, nil)
	} else {
		lk, err = link.Kprobe(symbol, p.prog, nil)
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

// AttachUprobe attaches to symbol in the executable or library at path, at
// its entry or (ret) return. pid 0 means every process.
func (p Program) AttachUprobe(path, symbol string, ret bool, pid int) (link.Link, error) {
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

// AttachXDP attaches an XDP program to the network interface ifindex.
func (p Program) AttachXDP(ifindex int) (link.Link, error) {
	if p.prog == nil {
		return p.wrap("", nil, nil)
	}
	lk, err := link.AttachXDP(link.XDPOptions{Program: p.prog, Interface: ifindex})
	return p.wrap(fmt.Sprintf("xdp to interface %d", ifindex), lk, err)
}

// AttachTCX attaches a tc program to ifindex, on egress or ingress.
func (p Program) AttachTCX(ifindex int, egress bool) (link.Link, error) {
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

// AttachCgroup attaches to the cgroup at path with the attach type at.
func (p Program) AttachCgroup(path string, at ebpf.AttachType) (link.Link, error) {
	if p.prog == nil {
		return p.wrap("", nil, nil)
	}
	lk, err := link.AttachCgroup(link.CgroupOptions{Path: path, Attach: at, Program: p.prog})
	return p.wrap("cgroup "+path, lk, err)
}

// AttachSocket attaches a socket filter to conn; it stays attached until the
// socket is closed.
func (p Program) AttachSocket(conn syscall.Conn) error {
	if p.prog == nil {
		return fmt.Errorf("program %s: %w", p.name, p.notLoaded())
	}
	if err := link.AttachSocketFilter(conn, p.prog); err != nil {
		return fmt.Errorf("program %s: attach socket filter: %w", p.name, err)
	}
	return nil
}
