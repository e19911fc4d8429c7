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
		{"kprobe/do_sys_open+0x4", ebpf.Kprobe, ebpf.AttachNone, "AttachKprobe [do_sys_open+0x4 false]"},
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
		{"usdt/./bin:a:b:prov:probe", ebpf.Kprobe, ebpf.AttachNone, "AttachUSDT [./bin:a:b prov probe 0]"},
		{"usdt/bin:probe", ebpf.Kprobe, ebpf.AttachNone, "AttachUSDT [path provider name pid]"},
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
			if a.open != "" && a.auto {
				got += " auto"
			}
		}
		if got != tc.want {
			t.Errorf("%s: Attach %q, want %q", tc.sec, got, tc.want)
		}
	}
}
