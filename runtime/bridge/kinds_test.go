package bridge

import (
	"fmt"
	"strings"
	"testing"

	"github.com/cilium/ebpf"
)

// TestKindOf checks the handle section names give, with the attach point
// the section names: an attach type of 0, a kprobe offset, paths holding
// colons, XDP programs that run from a map.
func TestKindOf(t *testing.T) {
	for _, tc := range []struct {
		sec  string
		typ  ebpf.ProgramType
		at   ebpf.AttachType
		want string // handle, target, flag, auto
	}{
		{"cgroup_skb/ingress", ebpf.CGroupSKB, ebpf.AttachCGroupInetIngress, "Cgroup [] false"},
		{"cgroup_skb/egress", ebpf.CGroupSKB, ebpf.AttachCGroupInetEgress, "Cgroup [] false"},
		{"cgroup/skb", ebpf.CGroupSKB, ebpf.AttachNone, "Program [] false"},
		{"kprobe/do_sys_open+0x4", ebpf.Kprobe, ebpf.AttachNone, "Kprobe [do_sys_open+0x4] false auto"},
		{"kretprobe", ebpf.Kprobe, ebpf.AttachNone, "Kprobe [] true"},
		{"xdp", ebpf.XDP, ebpf.AttachXDP, "XDP [] false"},
		{"xdp/devmap", ebpf.XDP, ebpf.AttachXDPDevMap, "Program [] false"},
		{"xdp.frags/cpumap", ebpf.XDP, ebpf.AttachXDPCPUMap, "Program [] false"},
		{"iter/task", ebpf.Tracing, ebpf.AttachTraceIter, "TaskIter [] false"},
		{"iter.s/task_vma", ebpf.Tracing, ebpf.AttachTraceIter, "TaskIter [] false"},
		{"iter/bpf_map_elem", ebpf.Tracing, ebpf.AttachTraceIter, "MapIter [] false"},
		{"iter/sockmap", ebpf.Tracing, ebpf.AttachTraceIter, "MapIter [] false"},
		{"iter/cgroup", ebpf.Tracing, ebpf.AttachTraceIter, "CgroupIter [] false"},
		{"iter/tcp", ebpf.Tracing, ebpf.AttachTraceIter, "Iter [] false auto"},
		{"iter/", ebpf.Tracing, ebpf.AttachTraceIter, "Program [] false"},
		{"usdt", ebpf.Kprobe, ebpf.AttachNone, "USDT [] false"},
		{"usdt/./bin:a:b:prov:probe", ebpf.Kprobe, ebpf.AttachNone, "USDT [./bin:a:b prov probe] false auto"},
		{"usdt/bin:probe", ebpf.Kprobe, ebpf.AttachNone, "USDT [] false"},
		{"usdt/bin::probe", ebpf.Kprobe, ebpf.AttachNone, "USDT [] false"},
		{"usdt.s", ebpf.Kprobe, ebpf.AttachNone, "USDT [] false"},
		{"ksyscall/getppid", ebpf.Kprobe, ebpf.AttachNone, "Ksyscall [getppid] false auto"},
		{"kretsyscall", ebpf.Kprobe, ebpf.AttachNone, "Ksyscall [] true"},
		{"kprobe.multi/do_sys_*", ebpf.Kprobe, ebpf.AttachTraceKprobeMulti, "KprobeMulti [do_sys_*] false auto"},
		{"kretprobe.multi", ebpf.Kprobe, ebpf.AttachTraceKprobeMulti, "KprobeMulti [] true"},
		{"kprobe.session/vfs_*", ebpf.Kprobe, ebpf.AttachTraceKprobeSession, "KprobeSession [vfs_*] false auto"},
		{"uprobe.multi//bin/x:main.*", ebpf.Kprobe, ebpf.AttachTraceUprobeMulti, "UprobeMulti [/bin/x main.*] false auto"},
		{"uretprobe.multi", ebpf.Kprobe, ebpf.AttachTraceUprobeMulti, "UprobeMulti [] true"},
		{"uprobe//bin/sh:main", ebpf.Kprobe, ebpf.AttachNone, "Uprobe [/bin/sh main] false auto"},
		{"uretprobe.s//bin/sh:main+4", ebpf.Kprobe, ebpf.AttachNone, "Uprobe [] true"},
		{"uprobe.session", ebpf.Kprobe, ebpf.AttachType(56), "Program [] false"},
		{"perf_event", ebpf.PerfEvent, ebpf.AttachNone, "PerfEvent [] false"},
		{"sk_msg", ebpf.SkMsg, ebpf.AttachSkMsgVerdict, "SockMap [] false"},
		{"sk_skb/stream_parser", ebpf.SkSKB, ebpf.AttachSkSKBStreamParser, "SockMap [] false"},
		{"sk_skb", ebpf.SkSKB, ebpf.AttachNone, "Program [] false"},
		{"sk_lookup", ebpf.SkLookup, ebpf.AttachSkLookup, "NetNs [] false"},
		{"flow_dissector", ebpf.FlowDissector, ebpf.AttachFlowDissector, "NetNs [] false"},
		{"netfilter", ebpf.Netfilter, ebpf.AttachNetfilter, "Netfilter [] false"},
		{"sockops", ebpf.SockOps, ebpf.AttachCGroupSockOps, "Cgroup [] false"},
		{"lsm_cgroup/socket_bind", ebpf.LSM, ebpf.AttachLSMCgroup, "Cgroup [] false"},
		{"netkit/peer", ebpf.SchedCLS, ebpf.AttachNetkitPeer, "Netkit [] true"},
		{"netkit/primary", ebpf.SchedCLS, ebpf.AttachNetkitPrimary, "Netkit [] false"},
		{"netkit", ebpf.SchedCLS, ebpf.AttachNone, "Program [] false"},
		{"tcx/egress", ebpf.SchedCLS, ebpf.AttachTCXEgress, "TCX [egress] true"},
		{"tc", ebpf.SchedCLS, ebpf.AttachNone, "TCX [] false"},
		{"tracepoint", ebpf.TracePoint, ebpf.AttachNone, "Tracepoint [] false"},
		{"tracepoint/sched", ebpf.TracePoint, ebpf.AttachNone, "Tracepoint [] false"},
		{"tp/sched/sched_switch", ebpf.TracePoint, ebpf.AttachNone, "Tracepoint [sched sched_switch] false auto"},
		{"raw_tp.w/bpf_test_finish", ebpf.RawTracepointWritable, ebpf.AttachNone, "RawTracepoint [bpf_test_finish] false auto"},
		{"fentry/do_unlinkat", ebpf.Tracing, ebpf.AttachTraceFEntry, "Tracing [] false auto"},
		{"lsm/bpf", ebpf.LSM, ebpf.AttachLSMMac, "LSM [] false auto"},
		{"sk_reuseport/migrate", ebpf.SkReuseport, ebpf.AttachSkReuseportSelectOrMigrate, "Reuseport [] false"},
		{"lirc_mode2", ebpf.LircMode2, ebpf.AttachLircMode2, "LircMode2 [] false"},
		{"socket", ebpf.SocketFilter, ebpf.AttachNone, "Socket [] false"},
		{"lwt_xmit", ebpf.LWTXmit, ebpf.AttachNone, "Program [] false"},
		{"syscall", ebpf.Syscall, ebpf.AttachNone, "Program [] false"},
	} {
		k := KindOf(&ebpf.ProgramSpec{SectionName: tc.sec, Type: tc.typ, AttachType: tc.at})
		got := fmt.Sprint(k.Handle, " ", k.target, " ", k.flag)
		if k.Auto {
			got += " auto"
		}
		if got != tc.want {
			t.Errorf("%s: %q, want %q", tc.sec, got, tc.want)
		}
		if (k.Handle == "Program") != (k.Why != "") {
			t.Errorf("%s: handle %s, reason %q", tc.sec, k.Handle, k.Why)
		}
	}
}

// TestNewHandle sets a handle of the section's kind, leaves a disabled
// program's nil, and refuses a field of another kind or shape.
func TestNewHandle(t *testing.T) {
	s := &Set{Spec: &ebpf.CollectionSpec{Programs: map[string]*ebpf.ProgramSpec{
		"x":   {SectionName: "xdp", Type: ebpf.XDP},
		"tp":  {SectionName: "tp/sched/sched_switch", Type: ebpf.TracePoint},
		"lwt": {SectionName: "lwt_xmit", Type: ebpf.LWTXmit},
		"off": {SectionName: "xdp", Type: ebpf.XDP},
	}}, disabled: map[string]bool{"off": true}}
	var x *XDP
	if err := NewHandle(s, "x", &x); err != nil || x == nil || x.name != "x" {
		t.Fatalf("XDP handle %v, %v", x, err)
	}
	var tp *Tracepoint
	if err := NewHandle(s, "tp", &tp); err != nil || tp == nil || tp.kind.target[1] != "sched_switch" {
		t.Fatalf("tracepoint handle %v, %v", tp, err)
	}
	var p *Program
	if err := NewHandle(s, "lwt", &p); err != nil || p == nil {
		t.Fatalf("plain handle %v, %v", p, err)
	}
	off := &XDP{}
	if err := NewHandle(s, "off", &off); err != nil || off != nil {
		t.Fatalf("disabled program's handle %v, %v", off, err)
	}
	var wrong *Tracepoint
	if err := NewHandle(s, "x", &wrong); err == nil || !strings.Contains(err.Error(), "XDP handle") {
		t.Errorf("tracepoint field of an xdp program: %v", err)
	}
	for _, dst := range []any{nil, x, &s, new(int)} {
		if err := NewHandle(s, "x", dst); err == nil {
			t.Errorf("NewHandle into %T: no error", dst)
		}
	}
}
