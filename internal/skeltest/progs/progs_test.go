package progs

import (
	"net"
	"os/exec"
	"strings"
	"syscall"
	"testing"

	"github.com/cilium/ebpf"

	"github.com/skelgen/skelgen/internal/testenv"
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
