package sections

import (
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"runtime"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/cilium/ebpf/link"

	"github.com/skelgen/skelgen/internal/testenv"
	"github.com/skelgen/skelgen/runtime/bridge"
)

// The slots of hits, as sections.bpf.c numbers them.
const (
	slotKsyscall = iota
	slotKretsyscall
	slotKprobeMulti
	slotKretprobeMulti
	slotUprobeMulti
	slotPerfEvent
	slotSkMsg
	slotSkSkb
	slotSkLookup
	slotFlowDissector
	slotNetfilter
	slotSockops
	slotCgroupSock
	slotTracepoint
	slotReuseport
	slotCgroupSkb
	slotXDP
	slotTpS
	slotRawTpS
	slotTpBtfS
)

// newKinds are the programs of the kinds libbpf added after v1.7.0, which
// load leaves out: this kernel refuses them at load.
func newKinds(spec *SectionsSpec) []*bridge.ProgramSpec {
	p := spec.Programs
	return []*bridge.ProgramSpec{p.TpsGetppid, p.RawtpsEnter, p.TpbtfsEnter, p.FentryMulti}
}

func load(t *testing.T) *SectionsObjects {
	t.Helper()
	objs, err := loadWith(t, nil)
	if err != nil {
		t.Fatal(err)
	}
	return objs
}

// loadWith loads the object without newKinds, except the program with.
func loadWith(t *testing.T, with func(*SectionsSpec) *bridge.ProgramSpec) (*SectionsObjects, error) {
	t.Helper()
	testenv.Kernel(t)
	spec, err := LoadSectionsSpec()
	if err != nil {
		t.Fatal(err)
	}
	if err := spec.Variables.TargetTgid.Set(uint32(os.Getpid())); err != nil {
		t.Fatal(err)
	}
	for _, p := range newKinds(spec) {
		p.SetAutoload(false)
	}
	if with != nil {
		with(spec).SetAutoload(true)
	}
	objs, err := spec.Load(nil)
	if err != nil {
		return nil, err
	}
	t.Cleanup(func() { objs.Close() })
	return objs, nil
}

func hits(t *testing.T, objs *SectionsObjects, slot uint32) uint64 {
	t.Helper()
	n, err := objs.Hits.Lookup(slot)
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// attached checks that attaching worked and closes the link at the end.
func attached(t *testing.T, what string, lk link.Link, err error) {
	t.Helper()
	if err != nil {
		t.Fatalf("%s: %v", what, err)
	}
	t.Cleanup(func() { lk.Close() })
}

// TestKsyscall: ksyscall/getppid resolves to the architecture's wrapper, a
// kernel symbol; this kernel has no kprobes, so attaching fails naming the
// kind and the resolved function (where kprobes exist, getppid is counted).
func TestKsyscall(t *testing.T) {
	objs := load(t)
	sym, err := bridge.KsyscallName("getppid")
	if err != nil {
		t.Fatal(err)
	}
	if runtime.GOARCH == "amd64" && sym != "__x64_sys_getppid" {
		t.Errorf("KsyscallName(getppid) = %s, want __x64_sys_getppid", sym)
	}
	kallsyms, err := os.ReadFile("/proc/kallsyms")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(kallsyms), " "+sym+"\n") {
		t.Errorf("%s is not a kernel symbol", sym)
	}
	mayRefuse(t, objs, objs.KsGetppid.Attach, "kprobe "+sym, slotKsyscall)
	mayRefuse(t, objs, objs.KrsGetppid.Attach, "kretprobe "+sym, slotKretsyscall)
}

// mayRefuse attaches a kprobe kind, which this kernel refuses: the error
// must name what (kind and target); where the kernel attaches it, getppid
// must be counted in slot.
func mayRefuse(t *testing.T, objs *SectionsObjects, attach func() (link.Link, error), what string, slot uint32) {
	t.Helper()
	lk, err := attach()
	if err != nil {
		if !strings.Contains(err.Error(), what) {
			t.Errorf("attach error does not name %s: %v", what, err)
		}
		t.Logf("%s (this kernel): %v", what, err)
		return
	}
	defer lk.Close()
	syscall.Getppid()
	if hits(t, objs, slot) == 0 {
		t.Errorf("%s attached, getppid not counted", what)
	}
}

// TestKprobeMulti: the section's pattern, or the argument's, resolves to
// the kernel's functions; the kprobe.multi link is the kernel's to refuse
// (this one has no fprobe), and the error names the pattern.
func TestKprobeMulti(t *testing.T) {
	objs := load(t)
	mayRefuse(t, objs, objs.KpmGetppid.Attach, "kprobe.multi *sys_getppid", slotKprobeMulti)
	mayRefuse(t, objs, func() (link.Link, error) { return objs.KrpmAny.AttachTo("*sys_getppid") }, "kretprobe.multi *sys_getppid", slotKretprobeMulti)
	if _, err := objs.KrpmAny.AttachTo("no_such_function_*"); err == nil || !strings.Contains(err.Error(), "no kernel function matches") {
		t.Errorf("a pattern matching nothing: %v", err)
	}
}

// libc is the C library's path, or the test skips.
func libc(t *testing.T) string {
	for _, pattern := range []string{"/lib/*/libc.so.6", "/usr/lib/*/libc.so.6", "/lib64/libc.so.6"} {
		if m, _ := filepath.Glob(pattern); len(m) > 0 {
			return m[0]
		}
	}
	t.Skip("no libc.so.6 found")
	return ""
}

// TestUprobeMulti attaches to the C library's functions matching a pattern
// (go test's binaries have no symbol table) and counts a process starting.
func TestUprobeMulti(t *testing.T) {
	objs := load(t)
	lib := libc(t)
	lk, err := objs.UpmAny.AttachTo(lib, "__libc_start_mai?", 0)
	attached(t, "uprobe.multi", lk, err)
	if err := exec.Command("/bin/true").Run(); err != nil {
		t.Fatal(err)
	}
	if n := hits(t, objs, slotUprobeMulti); n == 0 {
		t.Error("uprobe.multi attached, /bin/true's start not counted")
	}
	if _, err := objs.UpmAny.AttachTo(lib, "no_such_function_*", 0); err == nil || !strings.Contains(err.Error(), "no function matches") {
		t.Errorf("a pattern matching nothing: %v", err)
	}
}

// TestPerfEvent samples the CPU clock at 1 kHz on every CPU while the test
// burns CPU, and counts the samples of its own process.
func TestPerfEvent(t *testing.T) {
	objs := load(t)
	lk, err := objs.Sample.Attach(1000)
	attached(t, "perf_event", lk, err)
	deadline := time.Now().Add(300 * time.Millisecond)
	x := 0
	for time.Now().Before(deadline) {
		for i := range 100000 {
			x += i ^ x
		}
	}
	runtime.KeepAlive(x)
	if n := hits(t, objs, slotPerfEvent); n == 0 {
		t.Error("no CPU-clock sample in the test's process")
	} else {
		t.Logf("%d samples of the test's process in 300ms at 1 kHz", n)
	}
	if _, err := objs.Sample.Attach(0); err == nil {
		t.Error("Attach(0 Hz) attached")
	}
}

// tcpPair is a connected loopback TCP pair.
func tcpPair(t *testing.T) (client, server *net.TCPConn) {
	t.Helper()
	ln, err := net.Listen("tcp4", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	c, err := net.Dial("tcp4", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	s, err := ln.Accept()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close(); s.Close() })
	return c.(*net.TCPConn), s.(*net.TCPConn)
}

func connFD(t *testing.T, c syscall.Conn) uint64 {
	t.Helper()
	raw, err := c.SyscallConn()
	if err != nil {
		t.Fatal(err)
	}
	var fd uintptr
	raw.Control(func(f uintptr) { fd = f })
	return uint64(fd)
}

// TestSockMap attaches the sk_msg and sk_skb verdict programs to the
// sockmap, puts both ends of a loopback connection in it, and counts the
// message sent and the data received.
func TestSockMap(t *testing.T) {
	objs := load(t)
	lk, err := objs.MsgPass.Attach(objs.Socks)
	attached(t, "sk_msg", lk, err)
	lk, err = objs.SkbVerdict.Attach(objs.Socks)
	attached(t, "sk_skb/stream_verdict", lk, err)
	c, s := tcpPair(t)
	if err := objs.Socks.Put(uint32(0), connFD(t, c)); err != nil {
		t.Fatal(err)
	}
	if err := objs.Socks.Put(uint32(1), connFD(t, s)); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Write([]byte("hello")); err != nil {
		t.Fatal(err)
	}
	s.SetReadDeadline(time.Now().Add(5 * time.Second))
	buf := make([]byte, 16)
	n, err := s.Read(buf)
	if err != nil || string(buf[:n]) != "hello" {
		t.Fatalf("read %q, %v", buf[:n], err)
	}
	if hits(t, objs, slotSkMsg) == 0 {
		t.Error("sk_msg attached, the send not counted")
	}
	if hits(t, objs, slotSkSkb) == 0 {
		t.Error("sk_skb attached, the receive not counted")
	}
}

// TestSkLookup attaches sk_lookup to the test's network namespace (it
// passes every lookup on) and counts the lookup of a loopback connection.
func TestSkLookup(t *testing.T) {
	objs := load(t)
	lk, err := objs.LookupPass.Attach("/proc/self/ns/net")
	attached(t, "sk_lookup", lk, err)
	tcpPair(t)
	if hits(t, objs, slotSkLookup) == 0 {
		t.Error("sk_lookup attached, the connection's lookup not counted")
	}
}

// newNetns makes a network namespace held by a locked thread until the
// test ends, and returns its path and a function running f on that
// thread, in the namespace.
func newNetns(t *testing.T) (string, func(f func())) {
	t.Helper()
	ready, done := make(chan string), make(chan struct{})
	calls := make(chan func())
	go func() {
		runtime.LockOSThread() // never unlocked: the thread ends with the goroutine
		if err := syscall.Unshare(syscall.CLONE_NEWNET); err != nil {
			ready <- "unshare: " + err.Error()
			return
		}
		ready <- fmt.Sprintf("/proc/%d/task/%d/ns/net", os.Getpid(), syscall.Gettid())
		for {
			select {
			case f := <-calls:
				f()
				calls <- nil
			case <-done:
				return
			}
		}
	}()
	path := <-ready
	if strings.HasPrefix(path, "unshare") {
		t.Fatal(path)
	}
	t.Cleanup(func() { close(done) })
	return path, func(f func()) { calls <- f; <-calls }
}

// TestXDP attaches to the loopback interface of a network namespace of
// its own (another XDP program may hold the test's own), from a thread in
// it, and the kernel lists the link on that interface.
func TestXDP(t *testing.T) {
	objs := load(t)
	_, in := newNetns(t)
	var lk link.Link
	var err error
	in(func() {
		var lo *net.Interface
		if lo, err = net.InterfaceByName("lo"); err == nil {
			lk, err = objs.XdpPass.Attach(lo.Index)
		}
	})
	attached(t, "xdp", lk, err)
	info, err := lk.Info()
	if err != nil {
		t.Fatal(err)
	}
	if info.Type != link.XDPType {
		t.Errorf("link type %v, want xdp", info.Type)
	}
}

// TestFlowDissector attaches the flow dissector to a network namespace of
// its own (one per namespace: the test's own may have one), and checks the
// kernel lists it there.
func TestFlowDissector(t *testing.T) {
	objs := load(t)
	ns, _ := newNetns(t)
	lk, err := objs.Dissect.Attach(ns)
	attached(t, "flow_dissector", lk, err)
	info, err := lk.Info()
	if err != nil {
		t.Fatal(err)
	}
	if info.Type != link.NetNsType {
		t.Errorf("link type %v, want netns", info.Type)
	}
	if _, err := objs.Dissect.Attach(ns); err == nil {
		t.Error("a second flow dissector attached to the same namespace")
	}
}

// TestNetfilter attaches at IPv4 LOCAL_OUT (it accepts every packet) and
// counts a UDP datagram sent over loopback.
func TestNetfilter(t *testing.T) {
	objs := load(t)
	const nfprotoIPv4, nfInetLocalOut = 2, 3
	lk, err := objs.NfAccept.Attach(nfprotoIPv4, nfInetLocalOut, 100)
	attached(t, "netfilter", lk, err)
	udpRoundTrip(t)
	if hits(t, objs, slotNetfilter) == 0 {
		t.Error("netfilter attached, the datagram not counted")
	}
}

// udpRoundTrip sends a datagram over loopback and reads it.
func udpRoundTrip(t *testing.T) {
	t.Helper()
	rx, err := net.ListenUDP("udp4", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)})
	if err != nil {
		t.Fatal(err)
	}
	defer rx.Close()
	tx, err := net.DialUDP("udp4", nil, rx.LocalAddr().(*net.UDPAddr))
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Close()
	if _, err := tx.Write([]byte("x")); err != nil {
		t.Fatal(err)
	}
	rx.SetReadDeadline(time.Now().Add(5 * time.Second))
	if _, _, err := rx.ReadFrom(make([]byte, 4)); err != nil {
		t.Fatal(err)
	}
}

// TestCgroup attaches sockops and cgroup/sock_create to a cgroup the test
// makes, runs a child process in it that connects over loopback, and
// counts the socket and its connection.
func TestCgroup(t *testing.T) {
	if os.Getenv("SECTIONS_CONNECT") != "" {
		return // the child's side is in TestMain
	}
	objs := load(t)
	dir := filepath.Join(testenv.Cgroup2(t), fmt.Sprintf("skelgen_sections_%d", os.Getpid()))
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	defer os.Remove(dir)
	lk, err := objs.SockOps.Attach(dir)
	attached(t, "sockops", lk, err)
	lk, err = objs.SockCreate.Attach(dir)
	attached(t, "cgroup/sock_create", lk, err)
	lk, err = objs.SkbEgress.Attach(dir)
	attached(t, "cgroup_skb/egress", lk, err)

	ln, err := net.Listen("tcp4", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	go func() {
		if c, err := ln.Accept(); err == nil {
			c.Close()
		}
	}()
	cg, err := os.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer cg.Close()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), "SECTIONS_CONNECT="+ln.Addr().String())
	cmd.SysProcAttr = &syscall.SysProcAttr{UseCgroupFD: true, CgroupFD: int(cg.Fd())}
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("child in the cgroup: %v\n%s", err, out)
	}
	if hits(t, objs, slotCgroupSock) == 0 {
		t.Error("cgroup/sock_create attached, the child's socket not counted")
	}
	if hits(t, objs, slotSockops) == 0 {
		t.Error("sockops attached, the child's connection not counted")
	}
	if hits(t, objs, slotCgroupSkb) == 0 {
		t.Error("cgroup_skb/egress attached, the child's packets not counted")
	}
}

// TestMain runs the child of TestCgroup: it connects to the address it is
// given and exits.
func TestMain(m *testing.M) {
	if addr := os.Getenv("SECTIONS_CONNECT"); addr != "" {
		c, err := net.Dial("tcp4", addr)
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		c.Close()
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// TestTracepoint: a bare SEC("tracepoint") takes the tracepoint as
// arguments.
func TestTracepoint(t *testing.T) {
	objs := load(t)
	lk, err := objs.TpAny.AttachTo("syscalls", "sys_enter_getppid")
	attached(t, "tracepoint", lk, err)
	syscall.Getppid()
	if hits(t, objs, slotTracepoint) == 0 {
		t.Error("tracepoint attached, getppid not counted")
	}
	if _, err := objs.TpAny.AttachTo("syscalls", "no_such_tracepoint"); err == nil || !strings.Contains(err.Error(), "syscalls/no_such_tracepoint") {
		t.Errorf("a tracepoint that does not exist: %v", err)
	}
}

// TestReuseport attaches sk_reuseport to a SO_REUSEPORT group of UDP
// sockets and counts the selection of a datagram's socket.
func TestReuseport(t *testing.T) {
	objs := load(t)
	lc := net.ListenConfig{Control: func(_, _ string, c syscall.RawConn) error {
		var serr error
		c.Control(func(fd uintptr) {
			serr = syscall.SetsockoptInt(int(fd), syscall.SOL_SOCKET, 0xf /* SO_REUSEPORT */, 1)
		})
		return serr
	}}
	a, err := lc.ListenPacket(context.Background(), "udp4", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	b, err := lc.ListenPacket(context.Background(), "udp4", a.LocalAddr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	if err := objs.Reuse.Attach(a.(*net.UDPConn)); err != nil {
		t.Fatal(err)
	}
	tx, err := net.Dial("udp4", a.LocalAddr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Close()
	if _, err := tx.Write([]byte("x")); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(5 * time.Second)
	for hits(t, objs, slotReuseport) == 0 && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	if hits(t, objs, slotReuseport) == 0 {
		t.Error("sk_reuseport attached, the datagram's selection not counted")
	}
}

// TestNetkit: attaching needs a netkit device, which the test cannot make
// without netlink: on loopback the kernel refuses, and the error says
// where.
func TestNetkit(t *testing.T) {
	objs := load(t)
	lo, err := net.InterfaceByName("lo")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := objs.NkPrimary.Attach(lo.Index); err == nil {
		t.Error("netkit program attached to loopback")
	} else if !strings.Contains(err.Error(), fmt.Sprintf("netkit to interface %d", lo.Index)) {
		t.Errorf("netkit attach error does not name the interface: %v", err)
	}
}

// TestNoAttach: a section that names no attach point the skeleton can
// reach gives no Attach method.
func TestNoAttach(t *testing.T) {
	handle := func(field string) reflect.Type {
		f, ok := reflect.TypeFor[SectionsObjects]().FieldByName(field)
		if !ok {
			t.Fatalf("no field %s", field)
		}
		return f.Type
	}
	if _, ok := handle("Lwt").MethodByName("Attach"); ok {
		t.Error("lwt_xmit program has an Attach method")
	}
	if _, ok := handle("FentryMulti").MethodByName("Attach"); ok {
		t.Error("fentry.multi program has an Attach method")
	}
	if _, ok := handle("Sample").MethodByName("Attach"); !ok {
		t.Error("perf_event program has no Attach method")
	}
	// A handle has its kind's methods, not every kind's.
	if _, ok := handle("Sample").MethodByName("AttachTo"); ok {
		t.Error("perf_event program has a tracepoint's AttachTo")
	}
	if n := handle("TpAny").NumMethod(); n > 10 {
		t.Errorf("tracepoint handle has %d methods", n)
	}
}

// TestSleepableKinds loads each program of the sleepable kinds libbpf
// added after v1.7.0 (tp.s, raw_tp.s, tp_btf.s) with the rest of the
// object. This kernel refuses them at load, and its refusal must be of a
// sleepable program (the flag reached the kernel) naming the program;
// where the kernel loads them, Attach attaches them and getppid counts.
func TestSleepableKinds(t *testing.T) {
	for _, c := range []struct {
		kind, name string
		pick       func(*SectionsSpec) *bridge.ProgramSpec
		attach     func(*SectionsObjects) (link.Link, error)
		slot       uint32
	}{
		{"tp.s", "tps_getppid", func(s *SectionsSpec) *bridge.ProgramSpec { return s.Programs.TpsGetppid }, func(o *SectionsObjects) (link.Link, error) { return o.TpsGetppid.Attach() }, slotTpS},
		{"raw_tp.s", "rawtps_enter", func(s *SectionsSpec) *bridge.ProgramSpec { return s.Programs.RawtpsEnter }, func(o *SectionsObjects) (link.Link, error) { return o.RawtpsEnter.Attach() }, slotRawTpS},
		{"tp_btf.s", "tpbtfs_enter", func(s *SectionsSpec) *bridge.ProgramSpec { return s.Programs.TpbtfsEnter }, func(o *SectionsObjects) (link.Link, error) { return o.TpbtfsEnter.Attach() }, slotTpBtfS},
	} {
		t.Run(c.kind, func(t *testing.T) {
			objs, err := loadWith(t, c.pick)
			if err != nil {
				if !strings.Contains(err.Error(), "can be sleepable") || !strings.Contains(err.Error(), c.name) {
					t.Fatalf("load error: %v", err)
				}
				t.Logf("this kernel refuses sleepable %s programs: %v", c.kind, err)
				return
			}
			lk, err := c.attach(objs)
			attached(t, c.kind, lk, err)
			syscall.Getppid()
			if hits(t, objs, c.slot) == 0 {
				t.Errorf("%s attached, getppid not counted", c.kind)
			}
		})
	}
}
