package gen

import (
	"fmt"
	"testing"

	"github.com/cilium/ebpf"
)

// TestAttachFor checks the Attach method derived from section names whose
// attach point is not plain: an attach type of 0, a kprobe offset, XDP
// programs that run from a map.
func TestAttachFor(t *testing.T) {
	for _, tc := range []struct {
		sec  string
		typ  ebpf.ProgramType
		at   ebpf.AttachType
		want string // method and arguments, or "" for no Attach
	}{
		{"cgroup_skb/ingress", ebpf.CGroupSKB, ebpf.AttachCGroupInetIngress, "AttachCgroup [path 0]"},
		{"cgroup_skb/egress", ebpf.CGroupSKB, ebpf.AttachCGroupInetEgress, "AttachCgroup [path 1]"},
		{"cgroup/skb", ebpf.CGroupSKB, ebpf.AttachNone, ""},
		{"kprobe/do_sys_open+0x4", ebpf.Kprobe, ebpf.AttachNone, "AttachKprobe [do_sys_open+0x4 false] auto"},
		{"xdp", ebpf.XDP, ebpf.AttachXDP, "AttachXDP [ifindex]"},
		{"xdp/devmap", ebpf.XDP, ebpf.AttachXDPDevMap, ""},
		{"xdp.frags/cpumap", ebpf.XDP, ebpf.AttachXDPCPUMap, ""},
		{"iter/task", ebpf.Tracing, ebpf.AttachTraceIter, "AttachIterTask [task] OpenIterTask"},
		{"iter.s/task_vma", ebpf.Tracing, ebpf.AttachTraceIter, "AttachIterTask [task] OpenIterTask"},
		{"iter/bpf_map_elem", ebpf.Tracing, ebpf.AttachTraceIter, "AttachIterMap [m] OpenIterMap"},
		{"iter/sockmap", ebpf.Tracing, ebpf.AttachTraceIter, "AttachIterMap [m] OpenIterMap"},
		{"iter/cgroup", ebpf.Tracing, ebpf.AttachTraceIter, "AttachIterCgroup [cgroup] OpenIterCgroup"},
		{"iter/tcp", ebpf.Tracing, ebpf.AttachTraceIter, "AttachIter [] OpenIter auto"},
		{"iter/", ebpf.Tracing, ebpf.AttachTraceIter, ""},
		{"usdt", ebpf.Kprobe, ebpf.AttachNone, "AttachUSDT [path provider name pid]"},
		{"usdt/./bin:a:b:prov:probe", ebpf.Kprobe, ebpf.AttachNone, "AttachUSDT [./bin:a:b prov probe 0] auto"},
		{"usdt/bin:probe", ebpf.Kprobe, ebpf.AttachNone, "AttachUSDT [path provider name pid]"},
		{"usdt.s", ebpf.Kprobe, ebpf.AttachNone, "AttachUSDT [path provider name pid]"},
		{"ksyscall/getppid", ebpf.Kprobe, ebpf.AttachNone, "AttachKsyscall [getppid false] auto"},
		{"kretsyscall", ebpf.Kprobe, ebpf.AttachNone, "AttachKsyscall [name true]"},
		{"kprobe.multi/do_sys_*", ebpf.Kprobe, ebpf.AttachTraceKprobeMulti, "AttachKprobeMulti [do_sys_* false] auto"},
		{"kretprobe.multi", ebpf.Kprobe, ebpf.AttachTraceKprobeMulti, "AttachKprobeMulti [pattern true]"},
		{"kprobe.session/vfs_*", ebpf.Kprobe, ebpf.AttachTraceKprobeSession, "AttachKprobeSession [vfs_*] auto"},
		{"uprobe.multi//bin/x:main.*", ebpf.Kprobe, ebpf.AttachTraceUprobeMulti, "AttachUprobeMulti [/bin/x main.* false 0] auto"},
		{"uretprobe.multi", ebpf.Kprobe, ebpf.AttachTraceUprobeMulti, "AttachUprobeMulti [path pattern true pid]"},
		{"uprobe.session", ebpf.Kprobe, ebpf.AttachType(56), ""},
		{"perf_event", ebpf.PerfEvent, ebpf.AttachNone, "AttachCPUClock [hz]"},
		{"sk_msg", ebpf.SkMsg, ebpf.AttachSkMsgVerdict, fmt.Sprint("AttachSockMap [m ", int(ebpf.AttachSkMsgVerdict), "]")},
		{"sk_skb/stream_parser", ebpf.SkSKB, ebpf.AttachSkSKBStreamParser, fmt.Sprint("AttachSockMap [m ", int(ebpf.AttachSkSKBStreamParser), "]")},
		{"sk_skb", ebpf.SkSKB, ebpf.AttachNone, ""},
		{"sk_lookup", ebpf.SkLookup, ebpf.AttachSkLookup, "AttachNetNs [netns]"},
		{"flow_dissector", ebpf.FlowDissector, ebpf.AttachFlowDissector, "AttachNetNs [netns]"},
		{"netfilter", ebpf.Netfilter, ebpf.AttachNetfilter, "AttachNetfilter [family hook priority]"},
		{"sockops", ebpf.SockOps, ebpf.AttachCGroupSockOps, fmt.Sprint("AttachCgroup [path ", int(ebpf.AttachCGroupSockOps), "]")},
		{"lsm_cgroup/socket_bind", ebpf.LSM, ebpf.AttachLSMCgroup, fmt.Sprint("AttachCgroup [path ", int(ebpf.AttachLSMCgroup), "]")},
		{"netkit/peer", ebpf.SchedCLS, ebpf.AttachNetkitPeer, "AttachNetkit [ifindex true]"},
		{"tracepoint", ebpf.TracePoint, ebpf.AttachNone, "AttachTracepoint [group name]"},
		{"tp/sched/sched_switch", ebpf.TracePoint, ebpf.AttachNone, "AttachTracepoint [sched sched_switch] auto"},
		{"raw_tp.w/bpf_test_finish", ebpf.RawTracepointWritable, ebpf.AttachNone, "AttachRawTracepoint [bpf_test_finish] auto"},
		{"sk_reuseport/migrate", ebpf.SkReuseport, ebpf.AttachSkReuseportSelectOrMigrate, "AttachReuseport [conn]"},
		{"lwt_xmit", ebpf.LWTXmit, ebpf.AttachNone, ""},
		{"syscall", ebpf.Syscall, ebpf.AttachNone, ""},
	} {
		a := attachFor(&ebpf.ProgramSpec{SectionName: tc.sec, Type: tc.typ, AttachType: tc.at})
		got := ""
		if a != nil {
			var args []string
			for _, arg := range a.args {
				if arg.param != "" {
					args = append(args, arg.param)
				} else {
					args = append(args, fmt.Sprint(arg.lit))
				}
			}
			got = fmt.Sprint(a.method, " ", args)
			if a.open != "" {
				got += " " + a.open
			}
			if a.auto {
				got += " auto"
			}
		}
		if got != tc.want {
			t.Errorf("%s: Attach %q, want %q", tc.sec, got, tc.want)
		}
	}
}
