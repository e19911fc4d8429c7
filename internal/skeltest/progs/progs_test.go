package progs

import (
	"net"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"

	"github.com/cilium/ebpf"

	"github.com/skelgen/skelgen/internal/testenv"
	"github.com/skelgen/skelgen/runtime/bridge"
)

func TestProgramKinds(t *testing.T) {
	testenv.Kernel(t)
	objs, err := LoadProgs(nil)
	if err != nil {
		t.Fatal(err)
	}
	defer objs.Close()

	if _, err := objs.TpGetppid.Attach(); err != nil {
		t.Fatal(err)
	}
	if _, err := objs.RawSysEnter.Attach(); err != nil {
		t.Fatal(err)
	}
	if _, err := objs.BtfExec.Attach(); err != nil {
		t.Fatal(err)
	}
	syscall.Getppid()
	if err := exec.Command("/bin/true").Run(); err != nil {
		t.Fatal(err)
	}

	// This kernel has no kprobes: the error must say so.
	if _, err := objs.KpOpenat.Attach(); err == nil {
		t.Log("kprobe attached: this kernel has kprobes")
	} else if !strings.Contains(err.Error(), "kprobe") || !strings.Contains(err.Error(), "do_sys_openat2") {
		t.Errorf("kprobe attach error does not name the kind and symbol: %v", err)
	} else {
		t.Logf("kprobe attach error: %v", err)
	}
	if _, err := objs.KrpOpenat.Attach(); err != nil && !strings.Contains(err.Error(), "kretprobe") {
		t.Errorf("kretprobe attach error does not name the kind: %v", err)
	}

	pkt := make([]byte, 64)
	ret, err := objs.XdpPass.Run(&ebpf.RunOptions{Data: pkt})
	if err != nil {
		t.Fatal(err)
	}
	if ret != 2 { // XDP_PASS
		t.Errorf("xdp returned %d, want XDP_PASS", ret)
	}
	ret, err = objs.SockAll.Run(&ebpf.RunOptions{Data: pkt})
	if err != nil {
		t.Fatal(err)
	}
	if ret != 64-14 {
		t.Errorf("socket filter returned %d, want the packet length without Ethernet header (50)", ret)
	}

	lo, err := net.InterfaceByName("lo")
	if err != nil {
		t.Fatal(err)
	}
	lk, err := objs.TcIngress.Attach(lo.Index)
	if err != nil {
		t.Fatalf("tcx attach to lo: %v", err)
	}
	lk.Close()
	conn, err := net.ListenUDP("udp", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)})
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	if err := objs.SockAll.Attach(conn); err != nil {
		t.Fatal(err)
	}

	want := map[uint32]string{0: "tracepoint", 1: "raw_tp", 2: "tp_btf", 6: "xdp", 7: "socket"}
	for slot, kind := range want {
		n, err := objs.Hits.Lookup(slot)
		if err != nil {
			t.Fatal(err)
		}
		if n == 0 {
			t.Errorf("%s program (slot %d) never ran", kind, slot)
		}
	}
}

// calls is how many getppid(2) calls getppids makes: other processes
// make some too (the program counts every process's), never that many in
// the same moment.
const calls = 1000

// attached reports whether the tracepoint program runs, from its count
// over calls getppid(2) calls.
func attached(t *testing.T, objs *ProgsObjects) bool {
	t.Helper()
	n := getppids(t, objs)
	if n != 0 && n < calls {
		t.Errorf("the tracepoint program ran %d times over %d getppid calls", n, calls)
	}
	return n >= calls
}

// getppids counts the tracepoint program's runs over calls getppid(2).
func getppids(t *testing.T, objs *ProgsObjects) uint64 {
	t.Helper()
	before, err := objs.Hits.Lookup(0)
	if err != nil {
		t.Fatal(err)
	}
	for range calls {
		syscall.Getppid()
	}
	after, err := objs.Hits.Lookup(0)
	if err != nil {
		t.Fatal(err)
	}
	return after - before
}

// TestAttachAll: AttachAll tries every program, reports each one the kernel
// refuses (the kprobes, on a kernel without them), and detaches what it
// attached unless told to keep going; programs whose autoattach is off are
// left out.
func TestAttachAll(t *testing.T) {
	testenv.Kernel(t)
	if _, err := os.Stat("/sys/kernel/tracing/kprobe_events"); err == nil {
		t.Skip("this kernel has kprobes: no program of progs.bpf.c fails to attach")
	}
	objs, err := LoadProgs(nil)
	if err != nil {
		t.Fatal(err)
	}
	defer objs.Close()

	err = objs.AttachAll()
	if err == nil {
		t.Fatal("AttachAll attached kprobes on a kernel without them")
	}
	for _, name := range []string{"program kp_openat", "program krp_openat"} {
		if !strings.Contains(err.Error(), name) {
			t.Errorf("AttachAll error does not report %s: %v", name, err)
		}
	}
	if n := strings.Count(err.Error(), "program "); n != 2 {
		t.Errorf("AttachAll reported %d programs, want the 2 kprobes: %v", n, err)
	}
	if attached(t, objs) {
		t.Error("after a failed AttachAll the tracepoint program runs: its link was kept")
	}

	if err := objs.AttachAll(bridge.KeepGoing); err == nil || !strings.Contains(err.Error(), "kp_openat") {
		t.Errorf("AttachAll(KeepGoing) error = %v, want the kprobes'", err)
	}
	if !attached(t, objs) {
		t.Error("after AttachAll(KeepGoing) the tracepoint program does not run")
	}
}

// TestAutoattach: programs whose autoattach is off, on the spec or on the
// loaded program, are left out of AttachAll and can still be attached.
func TestAutoattach(t *testing.T) {
	testenv.Kernel(t)
	spec, err := LoadProgsSpec()
	if err != nil {
		t.Fatal(err)
	}
	spec.Programs.KpOpenat.SetAutoattach(false)
	if spec.Programs.KpOpenat.Autoattach() {
		t.Fatal("Autoattach() true after SetAutoattach(false)")
	}
	objs, err := spec.Load(nil)
	if err != nil {
		t.Fatal(err)
	}
	defer objs.Close()
	objs.KrpOpenat.SetAutoattach(false)
	objs.TpGetppid.SetAutoattach(false)
	if objs.KpOpenat.Autoattach() || objs.TpGetppid.Autoattach() || !objs.RawSysEnter.Autoattach() {
		t.Error("Autoattach() of the loaded programs does not say what was set")
	}
	if err := objs.AttachAll(); err != nil {
		t.Fatalf("AttachAll with the kprobes left out: %v", err)
	}
	if attached(t, objs) {
		t.Error("a program whose autoattach is off runs after AttachAll")
	}
	if _, err := objs.TpGetppid.Attach(); err != nil {
		t.Fatal(err)
	}
	if !attached(t, objs) {
		t.Error("attached by hand, the tracepoint program does not run")
	}
}
