//go:build !windows

package bridge

import (
	"bufio"
	"debug/elf"
	"errors"
	"fmt"
	"os"
	"sort"
	"strconv"
	"strings"
	"syscall"

	"github.com/cilium/ebpf"
	"github.com/cilium/ebpf/link"
)

// KsyscallName is the kernel function libbpf attaches ksyscall/NAME to:
// the architecture's syscall wrapper (__x64_sys_NAME) when the kernel has
// wrappers, else __se_sys_NAME.
func KsyscallName(name string) (string, error) {
	has, err := syscallWrappers()
	if err != nil {
		return "", err
	}
	if has {
		return syscallPrefix() + "sys_" + name, nil
	}
	return "__se_sys_" + name, nil
}

// scanKallsyms calls f with the name of every text symbol of
// /proc/kallsyms, until f returns false.
func scanKallsyms(f func(name string) bool) error {
	file, err := os.Open("/proc/kallsyms")
	if err != nil {
		return err
	}
	defer file.Close()
	sc := bufio.NewScanner(file)
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		if len(fields) < 3 || (fields[1] != "t" && fields[1] != "T") {
			continue
		}
		if !f(fields[2]) {
			return nil
		}
	}
	return sc.Err()
}

// attachKsyscall attaches to the kernel's handler of system call name (as
// in ksyscall/getppid: KsyscallName gives the function), at its entry or
// (ret) return.
func (p Program) attachKsyscall(name string, ret bool) (link.Link, error) {
	if p.prog == nil {
		return p.wrap("", nil, nil)
	}
	sym, err := KsyscallName(name)
	if err != nil {
		return p.wrap("ksyscall "+name, nil, err)
	}
	return p.attachKprobe(sym, ret)
}

// attachKprobeMulti attaches one kprobe.multi link to every kernel function
// whose name matches pattern (libbpf's glob: * and ?), at entry or (ret)
// return, the functions taken from available_filter_functions as libbpf
// takes them.
func (p Program) attachKprobeMulti(pattern string, ret bool) (link.Link, error) {
	return p.kprobeMulti(pattern, ret, false)
}

// attachKprobeSession attaches a kprobe.session program to every kernel
// function matching pattern: it runs at entry, and at return when the entry
// run returned 0.
func (p Program) attachKprobeSession(pattern string) (link.Link, error) {
	return p.kprobeMulti(pattern, false, true)
}

func (p Program) kprobeMulti(pattern string, ret, session bool) (link.Link, error) {
	if p.prog == nil {
		return p.wrap("", nil, nil)
	}
	what := "kprobe.multi " + pattern
	if ret {
		what = "kretprobe.multi " + pattern
	}
	syms, err := kernelFunctions(pattern)
	if err != nil {
		return p.wrap(what, nil, err)
	}
	opts := link.KprobeMultiOptions{Symbols: syms, Session: session}
	var lk link.Link
	if ret {
		lk, err = link.KretprobeMulti(p.prog, opts)
	} else {
		lk, err = link.KprobeMulti(p.prog, opts)
	}
	return p.wrap(what, lk, err)
}

// kernelFunctions are the traceable kernel functions matching pattern, from
// tracefs's available_filter_functions (kallsyms's text symbols when it
// cannot be read); a pattern without * or ? is the function itself.
func kernelFunctions(pattern string) ([]string, error) {
	if pattern == "" {
		return nil, errors.New("empty function pattern")
	}
	if !strings.ContainsAny(pattern, "*?") {
		return []string{pattern}, nil
	}
	seen := map[string]bool{}
	add := func(name string) bool {
		if globMatch(name, pattern) {
			seen[name] = true
		}
		return true
	}
	err := errors.New("no tracefs")
	if mountTracefs() == nil {
		err = scanLines("/sys/kernel/tracing/available_filter_functions", func(line string) {
			// "name" or "name [module]" lines.
			name, _, _ := strings.Cut(line, " ")
			add(name)
		})
	}
	if err != nil {
		clear(seen)
		// Not the padding before functions (__pfx_, __cfi_ symbols).
		err = scanKallsyms(func(name string) bool {
			if strings.HasPrefix(name, "__pfx_") || strings.HasPrefix(name, "__cfi_") {
				return true
			}
			return add(name)
		})
		if err != nil {
			return nil, err
		}
	}
	if len(seen) == 0 {
		return nil, fmt.Errorf("no kernel function matches %q", pattern)
	}
	out := make([]string, 0, len(seen))
	for s := range seen {
		out = append(out, s)
	}
	sort.Strings(out)
	return out, nil
}

func scanLines(path string, f func(string)) error {
	file, err := os.Open(path)
	if err != nil {
		return err
	}
	defer file.Close()
	sc := bufio.NewScanner(file)
	for sc.Scan() {
		f(sc.Text())
	}
	return sc.Err()
}

// globMatch reports whether s matches pattern, where * stands for any run
// of characters and ? for one, as libbpf's glob_match.
func globMatch(s, pattern string) bool {
	for len(pattern) > 0 {
		switch pattern[0] {
		case '*':
			for i := len(s); i >= 0; i-- {
				if globMatch(s[i:], pattern[1:]) {
					return true
				}
			}
			return false
		case '?':
			if s == "" {
				return false
			}
		default:
			if s == "" || s[0] != pattern[0] {
				return false
			}
		}
		s, pattern = s[1:], pattern[1:]
	}
	return s == ""
}

// attachUprobeMulti attaches one uprobe.multi link to every function of
// the binary at path whose name matches pattern (* and ?), at entry or
// (ret) return; pid 0 means every process.
func (p Program) attachUprobeMulti(path, pattern string, ret bool, pid int) (link.Link, error) {
	if p.prog == nil {
		return p.wrap("", nil, nil)
	}
	what := "uprobe.multi " + path + ":" + pattern
	if ret {
		what = "uretprobe.multi " + path + ":" + pattern
	}
	syms, err := elfFunctions(path, pattern)
	if err != nil {
		return p.wrap(what, nil, err)
	}
	ex, err := link.OpenExecutable(path)
	if err != nil {
		return p.wrap(what, nil, err)
	}
	opts := &link.UprobeMultiOptions{PID: uint32(pid)}
	var lk link.Link
	if ret {
		lk, err = ex.UretprobeMulti(syms, p.prog, opts)
	} else {
		lk, err = ex.UprobeMulti(syms, p.prog, opts)
	}
	return p.wrap(what, lk, err)
}

// elfFunctions are the defined functions of the ELF file at path (symbol
// table and dynamic symbols) matching pattern.
func elfFunctions(path, pattern string) ([]string, error) {
	if pattern == "" {
		return nil, errors.New("empty function pattern")
	}
	f, err := elf.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	seen := map[string]bool{}
	for _, read := range []func() ([]elf.Symbol, error){f.Symbols, f.DynamicSymbols} {
		syms, _ := read()
		for _, s := range syms {
			if elf.ST_TYPE(s.Info) == elf.STT_FUNC && s.Value != 0 && s.Section != elf.SHN_UNDEF && globMatch(s.Name, pattern) {
				seen[s.Name] = true
			}
		}
	}
	if len(seen) == 0 {
		return nil, fmt.Errorf("%s: no function matches %q", path, pattern)
	}
	out := make([]string, 0, len(seen))
	for s := range seen {
		out = append(out, s)
	}
	sort.Strings(out)
	return out, nil
}

// attachPerfEvent attaches a perf_event program to the perf event fd (from
// perf_event_open) through a BPF link; the link holds the event, so fd may
// be closed after.
func (p Program) attachPerfEvent(fd int) (link.Link, error) {
	if p.prog == nil {
		return p.wrap("", nil, nil)
	}
	lk, err := link.AttachRawLink(link.RawLinkOptions{Target: fd, Program: p.prog, Attach: ebpf.AttachPerfEvent})
	return p.wrap("perf event", lk, err)
}

// attachCPUClock opens a software CPU-clock perf event sampling at hz on
// every online CPU (every task), as profilers do, and attaches the program
// to each: one link whose Close detaches them all.
func (p Program) attachCPUClock(hz uint64) (link.Link, error) {
	if p.prog == nil {
		return p.wrap("", nil, nil)
	}
	what := fmt.Sprintf("perf event cpu-clock at %d Hz", hz)
	if hz == 0 {
		return p.wrap(what, nil, errors.New("a frequency of 0 Hz samples nothing"))
	}
	cpus, err := onlineCPUs()
	if err != nil {
		return p.wrap(what, nil, err)
	}
	var links []link.Link
	for _, cpu := range cpus {
		fd, err := openCPUClock(hz, cpu)
		if err != nil {
			closeLinks(links)
			return p.wrap(what, nil, fmt.Errorf("perf_event_open on CPU %d: %w", cpu, err))
		}
		lk, err := link.AttachRawLink(link.RawLinkOptions{Target: fd, Program: p.prog, Attach: ebpf.AttachPerfEvent})
		syscall.Close(fd)
		if err != nil {
			closeLinks(links)
			return p.wrap(what, nil, fmt.Errorf("CPU %d: %w", cpu, err))
		}
		links = append(links, lk)
	}
	return p.wrap(what, &multiLink{Link: links[0], rest: links[1:]}, nil)
}

// onlineCPUs reads /sys/devices/system/cpu/online ("0-3,5").
func onlineCPUs() ([]int, error) {
	b, err := os.ReadFile("/sys/devices/system/cpu/online")
	if err != nil {
		return nil, err
	}
	return parseCPUList(strings.TrimSpace(string(b)))
}

func parseCPUList(s string) ([]int, error) {
	var cpus []int
	for _, r := range strings.Split(s, ",") {
		lo, hi, isRange := strings.Cut(r, "-")
		a, err := strconv.Atoi(lo)
		b := a
		if err == nil && isRange {
			b, err = strconv.Atoi(hi)
		}
		if err != nil || b < a {
			return nil, fmt.Errorf("CPU list %q: bad range %q", s, r)
		}
		for c := a; c <= b; c++ {
			cpus = append(cpus, c)
		}
	}
	return cpus, nil
}

// attachSockMap attaches an sk_msg or sk_skb program to the sockmap or
// sockhash m (a skeleton's field of that map) with attach type at, through
// a BPF link (Linux 6.10 on).
func (p Program) attachSockMap(m *ebpf.Map, at ebpf.AttachType) (link.Link, error) {
	if p.prog == nil {
		return p.wrap("", nil, nil)
	}
	what := "sockmap"
	if m == nil {
		return p.wrap(what, nil, errors.New("no map"))
	}
	what = "sockmap " + m.String()
	lk, err := link.AttachRawLink(link.RawLinkOptions{Target: m.FD(), Program: p.prog, Attach: at})
	return p.wrap(what, lk, err)
}

// attachNetNs attaches an sk_lookup or flow_dissector program to the
// network namespace at path (/proc/self/ns/net, /run/netns/NAME, ...).
func (p Program) attachNetNs(path string) (link.Link, error) {
	if p.prog == nil {
		return p.wrap("", nil, nil)
	}
	what := "netns " + path
	f, err := os.Open(path)
	if err != nil {
		return p.wrap(what, nil, err)
	}
	defer f.Close()
	lk, err := link.AttachNetNs(int(f.Fd()), p.prog)
	if err != nil {
		return p.wrap(what, nil, err)
	}
	return p.wrap(what, lk, nil)
}

// attachNetfilter attaches a netfilter program to hook (NF_INET_*) of
// protocol family (NFPROTO_IPV4 2, NFPROTO_IPV6 10) at priority, in the
// calling thread's network namespace.
func (p Program) attachNetfilter(family, hook uint32, priority int32) (link.Link, error) {
	if p.prog == nil {
		return p.wrap("", nil, nil)
	}
	lk, err := link.AttachNetfilter(link.NetfilterOptions{
		Program:        p.prog,
		ProtocolFamily: link.NetfilterProtocolFamily(family),
		Hook:           link.NetfilterInetHook(hook),
		Priority:       priority,
	})
	return p.wrap(fmt.Sprintf("netfilter family %d hook %d priority %d", family, hook, priority), lk, err)
}

// attachNetkit attaches a netkit program to the netkit device ifindex, on
// its peer or primary side.
func (p Program) attachNetkit(ifindex int, peer bool) (link.Link, error) {
	if p.prog == nil {
		return p.wrap("", nil, nil)
	}
	at := ebpf.AttachNetkitPrimary
	if peer {
		at = ebpf.AttachNetkitPeer
	}
	lk, err := link.AttachNetkit(link.NetkitOptions{Program: p.prog, Interface: ifindex, Attach: at})
	return p.wrap(fmt.Sprintf("netkit to interface %d", ifindex), lk, err)
}

// attachReuseport attaches an sk_reuseport program to the reuseport group
// of conn (SO_ATTACH_REUSEPORT_EBPF); it stays until the group is gone.
func (p Program) attachReuseport(conn syscall.Conn) error {
	if p.prog == nil {
		return fmt.Errorf("program %s: %w", p.name, p.notLoaded())
	}
	if err := attachReuseport(conn, p.prog.FD()); err != nil {
		return fmt.Errorf("program %s: attach reuseport: %w", p.name, err)
	}
	return nil
}

// attachLircMode2 attaches a lirc_mode2 program to the infrared receiver
// at path (/dev/lirc0); it stays until detached with link.RawDetachProgram.
func (p Program) attachLircMode2(path string) error {
	if p.prog == nil {
		return fmt.Errorf("program %s: %w", p.name, p.notLoaded())
	}
	f, err := os.Open(path)
	if err != nil {
		return fmt.Errorf("program %s: attach lirc_mode2: %w", p.name, err)
	}
	defer f.Close()
	if err := link.RawAttachProgram(link.RawAttachProgramOptions{Target: int(f.Fd()), Program: p.prog, Attach: ebpf.AttachLircMode2}); err != nil {
		return fmt.Errorf("program %s: attach lirc_mode2 %s: %w", p.name, path, err)
	}
	return nil
}
