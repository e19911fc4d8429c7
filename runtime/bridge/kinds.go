package bridge

import (
	"fmt"
	"io"
	"reflect"
	"strings"
	"syscall"

	"github.com/cilium/ebpf"
	"github.com/cilium/ebpf/link"
)

// Kind is what a kernel program's section says about attaching it, read
// as libbpf reads section names. A skeleton's field of the program is a
// handle of type Handle: a tracepoint handle has the attach methods of a
// tracepoint, an XDP handle those of XDP.
type Kind struct {
	// Handle names the handle's type in this package ("Tracepoint",
	// "XDP", ...); "Program" when the section names no way to attach
	// the program (KindOf's Why says why).
	Handle string
	// Auto is set when the section names the attach point: Attach takes
	// no arguments, and AttachAll attaches the program.
	Auto bool
	// Why says, for Handle "Program", why the program has no Attach.
	Why string

	// target is the attach point the section names, as Attach's
	// arguments would give it; flag is its other switch (a return
	// probe, egress, the netkit peer, a kprobe session).
	target []string
	flag   bool
}

// KindOf returns what p's section says about attaching p.
func KindOf(p *ebpf.ProgramSpec) Kind {
	sec := p.SectionName
	kind, rest, _ := strings.Cut(sec, "/")
	// at is the kind of a handle whose section may name its attach
	// point: it does when every part is there.
	at := func(handle string, flag bool, parts ...string) Kind {
		for _, s := range parts {
			if s == "" {
				return Kind{Handle: handle, flag: flag}
			}
		}
		return Kind{Handle: handle, Auto: true, target: parts, flag: flag}
	}
	// cut is rest in two at sep; the second part is "" without sep.
	cut := func(sep string) (string, string) {
		a, b, _ := strings.Cut(rest, sep)
		return a, b
	}
	switch kind {
	case "tracepoint", "tp", "tracepoint.s", "tp.s":
		group, name := cut("/")
		return at("Tracepoint", false, group, name)
	case "raw_tp", "raw_tracepoint", "raw_tp.w", "raw_tracepoint.w", "raw_tp.s", "raw_tracepoint.s":
		return at("RawTracepoint", false, rest)
	case "tp_btf", "tp_btf.s", "fentry", "fexit", "fmod_ret", "fentry.s", "fexit.s", "fmod_ret.s", "fsession", "fsession.s":
		return Kind{Handle: "Tracing", Auto: true}
	case "lsm", "lsm.s":
		return Kind{Handle: "LSM", Auto: true}
	case "kprobe", "kretprobe":
		return at("Kprobe", kind == "kretprobe", rest)
	case "ksyscall", "kretsyscall":
		return at("Ksyscall", kind == "kretsyscall", rest)
	case "kprobe.multi", "kretprobe.multi":
		return at("KprobeMulti", kind == "kretprobe.multi", rest)
	case "kprobe.session":
		return at("KprobeSession", false, rest)
	case "uprobe", "uretprobe", "uprobe.s", "uretprobe.s":
		path, sym := cut(":")
		if strings.Contains(sym, "+") {
			sym = "" // an offset: the caller gives the symbol
		}
		return at("Uprobe", strings.HasPrefix(kind, "uret"), path, sym)
	case "uprobe.multi", "uretprobe.multi", "uprobe.multi.s", "uretprobe.multi.s":
		path, pattern := cut(":")
		return at("UprobeMulti", strings.HasPrefix(kind, "uret"), path, pattern)
	case "usdt", "usdt.s":
		// usdt/PATH:PROVIDER:NAME (PATH may hold colons).
		parts := strings.Split(rest, ":")
		if n := len(parts); n >= 3 {
			return at("USDT", false, strings.Join(parts[:n-2], ":"), parts[n-2], parts[n-1])
		}
		return Kind{Handle: "USDT"}
	case "perf_event":
		return Kind{Handle: "PerfEvent"}
	case "sk_msg", "sk_skb":
		if p.AttachType != ebpf.AttachNone {
			return Kind{Handle: "SockMap"}
		}
		return Kind{Handle: "Program", Why: "the section names no attach type: sk_skb/stream_parser, sk_skb/stream_verdict and sk_skb/verdict do."}
	case "sk_lookup", "flow_dissector":
		return Kind{Handle: "NetNs"}
	case "netfilter":
		return Kind{Handle: "Netfilter"}
	case "netkit":
		if rest == "primary" || rest == "peer" {
			return Kind{Handle: "Netkit", flag: rest == "peer"}
		}
		return Kind{Handle: "Program", Why: "the section names neither side: netkit/primary and netkit/peer do."}
	case "sockops", "lsm_cgroup":
		return Kind{Handle: "Cgroup"}
	case "sk_reuseport":
		return Kind{Handle: "Reuseport"}
	case "lirc_mode2":
		return Kind{Handle: "LircMode2"}
	case "xdp", "xdp.frags":
		if rest == "devmap" || rest == "cpumap" {
			return Kind{Handle: "Program", Why: "it runs from the entries of a " + rest + " that hold its file descriptor (Raw().FD()), not on an interface."}
		}
		return Kind{Handle: "XDP"}
	case "tcx", "tc":
		if rest == "ingress" || rest == "egress" {
			return Kind{Handle: "TCX", flag: rest == "egress", target: []string{rest}}
		}
		return Kind{Handle: "TCX"}
	case "iter", "iter.s":
		switch rest {
		case "":
			return Kind{Handle: "Program", Why: "the section names no iterator kind."}
		case "task", "task_file", "task_vma":
			return Kind{Handle: "TaskIter"}
		case "bpf_map_elem", "bpf_sk_storage_map", "sockmap":
			return Kind{Handle: "MapIter"}
		case "cgroup":
			return Kind{Handle: "CgroupIter"}
		}
		return Kind{Handle: "Iter", Auto: true}
	case "socket":
		return Kind{Handle: "Socket"}
	}
	// cgroup_skb/ingress's attach type, BPF_CGROUP_INET_INGRESS, is 0, as
	// AttachNone.
	if strings.HasPrefix(kind, "cgroup") && (p.AttachType != ebpf.AttachNone || sec == "cgroup_skb/ingress") {
		return Kind{Handle: "Cgroup"}
	}
	return Kind{Handle: "Program", Why: noAttachWhy(kind, sec)}
}

// noAttachWhy says why a program of section sec, of kind (its part
// before the first slash), has no Attach.
func noAttachWhy(kind, sec string) string {
	switch kind {
	case "cgroup":
		if sec == "cgroup/skb" {
			return "the section names no direction: cgroup_skb/ingress and cgroup_skb/egress do."
		}
	case "classifier", "action":
		return "legacy tc programs are attached as a qdisc's filter through netlink, which skeletons do not speak; tcx/ingress and tcx/egress attach through links."
	case "lwt_in", "lwt_out", "lwt_xmit", "lwt_seg6local":
		return "lightweight tunnel programs are attached to a route (ip route ... encap bpf) through netlink, which skeletons do not speak."
	case "syscall":
		return "syscall programs are run (Raw().Run), not attached."
	case "struct_ops", "struct_ops.s":
		return "it is a function member of a struct_ops map, registered with the map's Attach."
	case "freplace":
		return "an extension replaces a function of another program, given as the spec's AttachTarget before load; link.AttachFreplace attaches it."
	case "fentry.multi", "fentry.multi.s", "fexit.multi", "fexit.multi.s", "fsession.multi", "fsession.multi.s":
		return "cilium/ebpf v0.22, which attaches the skeleton's programs, has no tracing-multi link (the kernel's link of one program to every kernel function whose BTF matches a pattern)."
	case "uprobe.session", "uprobe.session.s":
		return "cilium/ebpf v0.22, which attaches the skeleton's programs, has no uprobe session link."
	}
	return "skelgen knows no attach point for section " + sec + "."
}

// NewHandle sets *dst, a skeleton's field of the kernel program name of s,
// to the program's handle, or to nil when its autoload was off. dst points
// to a *Tracepoint, *XDP, ... the type its section gives it (KindOf), or to
// a *Program. Links made by the handle's Attach methods are closed with s.
//
// It takes the field as any rather than being generic: an instantiation
// would be compiled in every skeleton package, with the wrappers of every
// method Program has.
func NewHandle(s *Set, name string, dst any) error {
	v := reflect.ValueOf(dst)
	if v.Kind() != reflect.Pointer || v.IsNil() || !isHandle(v.Elem().Type()) {
		return fmt.Errorf("program %s: %T is not a pointer to a program handle", name, dst)
	}
	h := reflect.New(v.Elem().Type().Elem())
	p, err := NewProgram(s, name)
	if err != nil {
		return err
	}
	if p.disabled {
		v.Elem().SetZero()
		return nil
	}
	if s.Spec != nil {
		p.kind = KindOf(s.Spec.Programs[name])
	}
	if s.Spec != nil && h.Type().Elem().Name() != p.kind.Handle {
		return fmt.Errorf("program %s: section %q gives a %s handle, not a %s", name, p.section(), p.kind.Handle, h.Type().Elem().Name())
	}
	if h.Type() == reflect.TypeFor[*Program]() {
		h.Elem().Set(reflect.ValueOf(p))
	} else {
		h.Elem().Field(0).Set(reflect.ValueOf(p))
	}
	v.Elem().Set(h)
	return nil
}

// autoattacher is what AttachAll attaches: the handle of a program whose
// section names its attach point, or a struct_ops map.
type autoattacher interface {
	// autoattach returns the program's C name and its Attach; "" for a
	// nil handle (autoload off) or a program whose section names no
	// attach point.
	autoattach() (name string, attach func() (link.Link, error))
}

// errNilHandle is the error of an attach method of a nil handle: its
// program's autoload was off.
var errNilHandle = fmt.Errorf("program not loaded: %w", ErrDisabled)

// at returns the attach point the program's section names.
func (p *Program) at() ([]string, error) {
	if !p.kind.Auto {
		return nil, fmt.Errorf("program %s: section %q names no attach point: use AttachTo", p.name, p.section())
	}
	return p.kind.target, nil
}

// section is the program's section name, or "" when unknown.
func (p *Program) section() string {
	if p.set != nil && p.set.Spec != nil && p.set.Spec.Programs[p.name] != nil {
		return p.set.Spec.Programs[p.name].SectionName
	}
	return ""
}

// auto is autoattach for a handle whose Attach takes no arguments.
func (p *Program) auto(attach func() (link.Link, error)) (string, func() (link.Link, error)) {
	if !p.kind.Auto {
		return "", nil
	}
	return p.name, attach
}

// Tracepoint is a tracepoint program (tracepoint/GROUP/NAME).
type Tracepoint struct{ Program }

// Attach attaches the program to the tracepoint its section names.
func (p *Tracepoint) Attach() (link.Link, error) {
	if p == nil {
		return nil, errNilHandle
	}
	t, err := p.at()
	if err != nil {
		return nil, err
	}
	return p.attachTracepoint(t[0], t[1])
}

// AttachTo attaches the program to tracepoint group/name (as in
// /sys/kernel/tracing/events/GROUP/NAME).
func (p *Tracepoint) AttachTo(group, name string) (link.Link, error) {
	if p == nil {
		return nil, errNilHandle
	}
	return p.attachTracepoint(group, name)
}

func (p *Tracepoint) autoattach() (string, func() (link.Link, error)) {
	if p == nil {
		return "", nil
	}
	return p.auto(p.Attach)
}

// RawTracepoint is a raw tracepoint program (raw_tp/NAME).
type RawTracepoint struct{ Program }

// Attach attaches the program to the raw tracepoint its section names.
func (p *RawTracepoint) Attach() (link.Link, error) {
	if p == nil {
		return nil, errNilHandle
	}
	t, err := p.at()
	if err != nil {
		return nil, err
	}
	return p.attachRawTracepoint(t[0])
}

// AttachTo attaches the program to the raw tracepoint name.
func (p *RawTracepoint) AttachTo(name string) (link.Link, error) {
	if p == nil {
		return nil, errNilHandle
	}
	return p.attachRawTracepoint(name)
}

func (p *RawTracepoint) autoattach() (string, func() (link.Link, error)) {
	if p == nil {
		return "", nil
	}
	return p.auto(p.Attach)
}

// Tracing is a tp_btf, fentry, fexit, fmod_ret or fsession program,
// attached to the target resolved at load.
type Tracing struct{ Program }

// Attach attaches the program to its target.
func (p *Tracing) Attach() (link.Link, error) {
	if p == nil {
		return nil, errNilHandle
	}
	return p.attachTracing()
}

func (p *Tracing) autoattach() (string, func() (link.Link, error)) {
	if p == nil {
		return "", nil
	}
	return p.name, p.Attach
}

// LSM is an LSM program (lsm/HOOK).
type LSM struct{ Program }

// Attach attaches the program to its LSM hook.
func (p *LSM) Attach() (link.Link, error) {
	if p == nil {
		return nil, errNilHandle
	}
	return p.attachLSM()
}

func (p *LSM) autoattach() (string, func() (link.Link, error)) {
	if p == nil {
		return "", nil
	}
	return p.name, p.Attach
}

// Kprobe is a kprobe or kretprobe program (kprobe/SYMBOL,
// kretprobe/SYMBOL; kprobe/SYMBOL+OFFSET probes that many bytes into the
// function).
type Kprobe struct{ Program }

// Attach attaches the program to the kernel function its section names.
func (p *Kprobe) Attach() (link.Link, error) {
	if p == nil {
		return nil, errNilHandle
	}
	t, err := p.at()
	if err != nil {
		return nil, err
	}
	return p.attachKprobe(t[0], p.kind.flag)
}

// AttachTo attaches the program to the kernel function symbol
// (SYMBOL+OFFSET as in the section), at its entry or return as the
// section says.
func (p *Kprobe) AttachTo(symbol string) (link.Link, error) {
	if p == nil {
		return nil, errNilHandle
	}
	return p.attachKprobe(symbol, p.kind.flag)
}

func (p *Kprobe) autoattach() (string, func() (link.Link, error)) {
	if p == nil {
		return "", nil
	}
	return p.auto(p.Attach)
}

// Ksyscall is a ksyscall or kretsyscall program: a kprobe on the kernel's
// handler of a system call, the architecture's wrapper as libbpf resolves
// it (KsyscallName).
type Ksyscall struct{ Program }

// Attach attaches the program to the system call its section names.
func (p *Ksyscall) Attach() (link.Link, error) {
	if p == nil {
		return nil, errNilHandle
	}
	t, err := p.at()
	if err != nil {
		return nil, err
	}
	return p.attachKsyscall(t[0], p.kind.flag)
}

// AttachTo attaches the program to the handler of system call name.
func (p *Ksyscall) AttachTo(name string) (link.Link, error) {
	if p == nil {
		return nil, errNilHandle
	}
	return p.attachKsyscall(name, p.kind.flag)
}

func (p *Ksyscall) autoattach() (string, func() (link.Link, error)) {
	if p == nil {
		return "", nil
	}
	return p.auto(p.Attach)
}

// KprobeMulti is a kprobe.multi or kretprobe.multi program: one link to
// every traceable kernel function whose name matches a pattern (* and ?
// as wildcards).
type KprobeMulti struct{ Program }

// Attach attaches the program to the functions its section's pattern
// matches.
func (p *KprobeMulti) Attach() (link.Link, error) {
	if p == nil {
		return nil, errNilHandle
	}
	t, err := p.at()
	if err != nil {
		return nil, err
	}
	return p.attachKprobeMulti(t[0], p.kind.flag)
}

// AttachTo attaches the program to the functions pattern matches.
func (p *KprobeMulti) AttachTo(pattern string) (link.Link, error) {
	if p == nil {
		return nil, errNilHandle
	}
	return p.attachKprobeMulti(pattern, p.kind.flag)
}

func (p *KprobeMulti) autoattach() (string, func() (link.Link, error)) {
	if p == nil {
		return "", nil
	}
	return p.auto(p.Attach)
}

// KprobeSession is a kprobe.session program: it runs at the entry of every
// kernel function a pattern matches, and at its return when the entry run
// returned 0.
type KprobeSession struct{ Program }

// Attach attaches the program to the functions its section's pattern
// matches.
func (p *KprobeSession) Attach() (link.Link, error) {
	if p == nil {
		return nil, errNilHandle
	}
	t, err := p.at()
	if err != nil {
		return nil, err
	}
	return p.attachKprobeSession(t[0])
}

// AttachTo attaches the program to the functions pattern matches.
func (p *KprobeSession) AttachTo(pattern string) (link.Link, error) {
	if p == nil {
		return nil, errNilHandle
	}
	return p.attachKprobeSession(pattern)
}

func (p *KprobeSession) autoattach() (string, func() (link.Link, error)) {
	if p == nil {
		return "", nil
	}
	return p.auto(p.Attach)
}

// Uprobe is a uprobe or uretprobe program (uprobe/PATH:SYMBOL).
type Uprobe struct{ Program }

// Attach attaches the program to the symbol and binary its section names,
// in every process.
func (p *Uprobe) Attach() (link.Link, error) {
	if p == nil {
		return nil, errNilHandle
	}
	t, err := p.at()
	if err != nil {
		return nil, err
	}
	return p.attachUprobe(t[0], t[1], p.kind.flag, 0)
}

// AttachTo attaches the program to symbol in the binary at path, at its
// entry or return as the section says; pid 0 means every process.
func (p *Uprobe) AttachTo(path, symbol string, pid int) (link.Link, error) {
	if p == nil {
		return nil, errNilHandle
	}
	return p.attachUprobe(path, symbol, p.kind.flag, pid)
}

func (p *Uprobe) autoattach() (string, func() (link.Link, error)) {
	if p == nil {
		return "", nil
	}
	return p.auto(p.Attach)
}

// UprobeMulti is a uprobe.multi or uretprobe.multi program: one link to
// every function of a binary whose name matches a pattern (* and ?).
type UprobeMulti struct{ Program }

// Attach attaches the program to the functions of the binary and pattern
// its section names, in every process.
func (p *UprobeMulti) Attach() (link.Link, error) {
	if p == nil {
		return nil, errNilHandle
	}
	t, err := p.at()
	if err != nil {
		return nil, err
	}
	return p.attachUprobeMulti(t[0], t[1], p.kind.flag, 0)
}

// AttachTo attaches the program to every function of the binary at path
// matching pattern; pid 0 means every process.
func (p *UprobeMulti) AttachTo(path, pattern string, pid int) (link.Link, error) {
	if p == nil {
		return nil, errNilHandle
	}
	return p.attachUprobeMulti(path, pattern, p.kind.flag, pid)
}

func (p *UprobeMulti) autoattach() (string, func() (link.Link, error)) {
	if p == nil {
		return "", nil
	}
	return p.auto(p.Attach)
}

// USDT is a USDT program written with libbpf's usdt.bpf.h
// (usdt/PATH:PROVIDER:NAME): it runs at every site of the probe, with the
// argument specs of the binary's notes in the object's __bpf_usdt_specs
// map, as libbpf attaches it.
type USDT struct{ Program }

// Attach attaches the program to the probe its section names, in every
// process.
func (p *USDT) Attach() (link.Link, error) {
	if p == nil {
		return nil, errNilHandle
	}
	t, err := p.at()
	if err != nil {
		return nil, err
	}
	return p.attachUSDT(t[0], t[1], t[2], 0)
}

// AttachTo attaches the program to every site of probe provider:name in
// the binary at path; pid 0 means every process.
func (p *USDT) AttachTo(path, provider, name string, pid int) (link.Link, error) {
	if p == nil {
		return nil, errNilHandle
	}
	return p.attachUSDT(path, provider, name, pid)
}

func (p *USDT) autoattach() (string, func() (link.Link, error)) {
	if p == nil {
		return "", nil
	}
	return p.auto(p.Attach)
}

// PerfEvent is a perf_event program.
type PerfEvent struct{ Program }

// Attach samples with the program at hz on every CPU through a software
// CPU-clock perf event per CPU, as profilers do: one link whose Close
// detaches them all.
func (p *PerfEvent) Attach(hz uint64) (link.Link, error) {
	if p == nil {
		return nil, errNilHandle
	}
	return p.attachCPUClock(hz)
}

// AttachPerfEvent attaches the program to the perf event fd (from
// perf_event_open) through a link, which holds the event: fd may be
// closed after.
func (p *PerfEvent) AttachPerfEvent(fd int) (link.Link, error) {
	if p == nil {
		return nil, errNilHandle
	}
	return p.attachPerfEvent(fd)
}

// SockMap is an sk_msg or sk_skb program, attached to a sockmap or
// sockhash with its section's attach type.
type SockMap struct{ Program }

// Attach attaches the program to the sockmap or sockhash m through a link
// (Linux 6.10 on).
func (p *SockMap) Attach(m *ebpf.Map) (link.Link, error) {
	if p == nil {
		return nil, errNilHandle
	}
	return p.attachSockMap(m, p.attachType())
}

// attachType is the program's attach type, from its spec.
func (p *Program) attachType() ebpf.AttachType {
	if p.set != nil && p.set.Spec != nil && p.set.Spec.Programs[p.name] != nil {
		return p.set.Spec.Programs[p.name].AttachType
	}
	return ebpf.AttachNone
}

// NetNs is an sk_lookup or flow_dissector program, attached to a network
// namespace.
type NetNs struct{ Program }

// Attach attaches the program to the network namespace at the path netns
// (/proc/self/ns/net, /run/netns/NAME).
func (p *NetNs) Attach(netns string) (link.Link, error) {
	if p == nil {
		return nil, errNilHandle
	}
	return p.attachNetNs(netns)
}

// Netfilter is a netfilter program.
type Netfilter struct{ Program }

// Attach attaches the program to netfilter hook (NF_INET_PRE_ROUTING 0 ...
// NF_INET_POST_ROUTING 4) of protocol family (NFPROTO_IPV4 2, NFPROTO_IPV6
// 10) at priority, in the calling thread's network namespace.
func (p *Netfilter) Attach(family, hook uint32, priority int32) (link.Link, error) {
	if p == nil {
		return nil, errNilHandle
	}
	return p.attachNetfilter(family, hook, priority)
}

// Netkit is a netkit program (netkit/primary, netkit/peer).
type Netkit struct{ Program }

// Attach attaches the program to the side of the netkit device ifindex its
// section names.
func (p *Netkit) Attach(ifindex int) (link.Link, error) {
	if p == nil {
		return nil, errNilHandle
	}
	return p.attachNetkit(ifindex, p.kind.flag)
}

// Cgroup is a program attached to a cgroup (cgroup_skb/ingress,
// cgroup/connect4, sockops, lsm_cgroup, ...) with its section's attach
// type.
type Cgroup struct{ Program }

// Attach attaches the program to the cgroup at path.
func (p *Cgroup) Attach(path string) (link.Link, error) {
	if p == nil {
		return nil, errNilHandle
	}
	return p.attachCgroup(path, p.attachType())
}

// Reuseport is an sk_reuseport program.
type Reuseport struct{ Program }

// Attach attaches the program to the SO_REUSEPORT group of conn's socket;
// it selects the group's socket for each packet until the group is gone.
func (p *Reuseport) Attach(conn syscall.Conn) error {
	if p == nil {
		return errNilHandle
	}
	return p.attachReuseport(conn)
}

// LircMode2 is a lirc_mode2 program.
type LircMode2 struct{ Program }

// Attach attaches the program to the infrared receiver at path
// (/dev/lirc0); it stays attached until link.RawDetachProgram.
func (p *LircMode2) Attach(path string) error {
	if p == nil {
		return errNilHandle
	}
	return p.attachLircMode2(path)
}

// XDP is an XDP program.
type XDP struct{ Program }

// Attach attaches the program to the network interface ifindex.
func (p *XDP) Attach(ifindex int) (link.Link, error) {
	if p == nil {
		return nil, errNilHandle
	}
	return p.attachXDP(ifindex)
}

// TCX is a tc program attached through a tcx link (tcx/ingress,
// tcx/egress).
type TCX struct{ Program }

// Attach attaches the program to the network interface ifindex, on the
// side its section names.
func (p *TCX) Attach(ifindex int) (link.Link, error) {
	if p == nil {
		return nil, errNilHandle
	}
	if p.kind.target == nil {
		return nil, fmt.Errorf("program %s: section %q names neither ingress nor egress: use AttachTo", p.name, p.section())
	}
	return p.attachTCX(ifindex, p.kind.flag)
}

// AttachTo attaches the program to ingress or egress of the network
// interface ifindex.
func (p *TCX) AttachTo(ifindex int, egress bool) (link.Link, error) {
	if p == nil {
		return nil, errNilHandle
	}
	return p.attachTCX(ifindex, egress)
}

// Socket is a socket filter.
type Socket struct{ Program }

// Attach attaches the socket filter to conn until the socket is closed.
func (p *Socket) Attach(conn syscall.Conn) error {
	if p == nil {
		return errNilHandle
	}
	return p.attachSocket(conn)
}

// Iter is an iterator that takes no argument (iter/bpf_map, iter/tcp,
// ...).
type Iter struct{ Program }

// Attach attaches the iterator: a link that can be pinned, whose
// instances read the program's output.
func (p *Iter) Attach() (link.Link, error) {
	if p == nil {
		return nil, errNilHandle
	}
	return p.attachIter()
}

// Open attaches the iterator as Attach does and returns a reader of its
// output: each Read runs the program over the next elements, until
// io.EOF. Closing the reader detaches the iterator.
func (p *Iter) Open() (io.ReadCloser, error) {
	if p == nil {
		return nil, errNilHandle
	}
	return p.openIter()
}

func (p *Iter) autoattach() (string, func() (link.Link, error)) {
	if p == nil {
		return "", nil
	}
	return p.name, p.Attach
}

// TaskIter is a task iterator (iter/task, iter/task_file, iter/task_vma).
type TaskIter struct{ Program }

// Attach attaches the iterator over the tasks task selects (the zero
// value: all of them): a link that can be pinned.
func (p *TaskIter) Attach(task IterTask) (link.Link, error) {
	if p == nil {
		return nil, errNilHandle
	}
	return p.attachIterTask(task)
}

// Open attaches the iterator as Attach does and returns a reader of its
// output, as Iter's Open.
func (p *TaskIter) Open(task IterTask) (io.ReadCloser, error) {
	if p == nil {
		return nil, errNilHandle
	}
	return p.openIterTask(task)
}

// MapIter is a map element iterator (iter/bpf_map_elem,
// iter/bpf_sk_storage_map, iter/sockmap).
type MapIter struct{ Program }

// Attach attaches the iterator over the elements of map m: a link that
// can be pinned.
func (p *MapIter) Attach(m IterMap) (link.Link, error) {
	if p == nil {
		return nil, errNilHandle
	}
	return p.attachIterMap(m)
}

// Open attaches the iterator as Attach does and returns a reader of its
// output, as Iter's Open.
func (p *MapIter) Open(m IterMap) (io.ReadCloser, error) {
	if p == nil {
		return nil, errNilHandle
	}
	return p.openIterMap(m)
}

// CgroupIter is a cgroup iterator (iter/cgroup).
type CgroupIter struct{ Program }

// Attach attaches the iterator from the cgroup cg selects: a link that
// can be pinned.
func (p *CgroupIter) Attach(cg IterCgroup) (link.Link, error) {
	if p == nil {
		return nil, errNilHandle
	}
	return p.attachIterCgroup(cg)
}

// Open attaches the iterator as Attach does and returns a reader of its
// output, as Iter's Open.
func (p *CgroupIter) Open(cg IterCgroup) (io.ReadCloser, error) {
	if p == nil {
		return nil, errNilHandle
	}
	return p.openIterCgroup(cg)
}
