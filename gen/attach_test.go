package gen

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cilium/ebpf"

	"github.com/skelgen/skelgen/internal/testenv"
	"github.com/skelgen/skelgen/runtime/bridge"
)

// libbpfSections are the section kinds of libbpf's section_defs
// (src/libbpf.c of libbpf at f7081a6b, July 2026), without their + mark.
var libbpfSections = []string{
	"socket", "sk_reuseport/migrate", "sk_reuseport",
	"kprobe", "uprobe", "uprobe.s", "kretprobe", "uretprobe", "uretprobe.s",
	"kprobe.multi", "kretprobe.multi", "kprobe.session",
	"uprobe.multi", "uretprobe.multi", "uprobe.session",
	"uprobe.multi.s", "uretprobe.multi.s", "uprobe.session.s",
	"ksyscall", "kretsyscall", "usdt", "usdt.s",
	"tc/ingress", "tc/egress", "tcx/ingress", "tcx/egress", "tc", "classifier", "action",
	"netkit/primary", "netkit/peer",
	"tracepoint", "tp", "tracepoint.s", "tp.s",
	"raw_tracepoint", "raw_tp", "raw_tracepoint.s", "raw_tp.s", "raw_tracepoint.w", "raw_tp.w",
	"tp_btf", "tp_btf.s", "fentry", "fmod_ret", "fexit", "fentry.s", "fmod_ret.s", "fexit.s",
	"fsession", "fsession.s", "fsession.multi", "fsession.multi.s",
	"fentry.multi", "fexit.multi", "fentry.multi.s", "fexit.multi.s",
	"freplace", "lsm", "lsm.s", "lsm_cgroup", "iter", "iter.s", "syscall",
	"xdp.frags/devmap", "xdp/devmap", "xdp.frags/cpumap", "xdp/cpumap", "xdp.frags", "xdp",
	"perf_event", "lwt_in", "lwt_out", "lwt_xmit", "lwt_seg6local", "sockops",
	"sk_skb/stream_parser", "sk_skb/stream_verdict", "sk_skb/verdict", "sk_skb", "sk_msg",
	"lirc_mode2", "flow_dissector", "cgroup_skb/ingress", "cgroup_skb/egress", "cgroup/skb",
	"cgroup/sock_create", "cgroup/sock_release", "cgroup/sock", "cgroup/post_bind4", "cgroup/post_bind6",
	"cgroup/bind4", "cgroup/bind6", "cgroup/connect4", "cgroup/connect6", "cgroup/connect_unix",
	"cgroup/sendmsg4", "cgroup/sendmsg6", "cgroup/sendmsg_unix", "cgroup/recvmsg4", "cgroup/recvmsg6",
	"cgroup/recvmsg_unix", "cgroup/getpeername4", "cgroup/getpeername6", "cgroup/getpeername_unix",
	"cgroup/getsockname4", "cgroup/getsockname6", "cgroup/getsockname_unix",
	"cgroup/sysctl", "cgroup/getsockopt", "cgroup/setsockopt", "cgroup/dev",
	"struct_ops", "struct_ops.s", "sk_lookup", "netfilter",
}

// TestEveryLibbpfSection generates a skeleton of a program in each section
// kind of libbpf's table: each gets a program type (a .s kind a sleepable
// program), and a handle with an Attach method or a reason for having none that is not
// skelgen's ignorance of the kind.
func TestEveryLibbpfSection(t *testing.T) {
	testenv.Clang(t)
	dir := t.TempDir()
	src := filepath.Join(dir, "kinds.bpf.c")
	var code strings.Builder
	for i, sec := range libbpfSections {
		fmt.Fprintf(&code, "__attribute__((section(%q), used)) int p%d(void *ctx) { return 0; }\n", sec, i)
	}
	code.WriteString(`char LICENSE[] __attribute__((section("license"), used)) = "GPL";` + "\n")
	if err := os.WriteFile(src, []byte(code.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	files, err := Generate(context.Background(), Config{Input: src, Package: "kinds", ImportRuntime: true, Targets: []Target{{Clang: "bpfel"}}})
	if err != nil {
		t.Fatal(err)
	}
	var spec *ebpf.CollectionSpec
	for _, f := range files {
		if strings.HasSuffix(f.Path, ".o") {
			if spec, err = bridge.ParseObject(f.Data); err != nil {
				t.Fatal(err)
			}
		}
	}
	if spec == nil {
		t.Fatal("no object generated")
	}
	for i, sec := range libbpfSections {
		p := spec.Programs[fmt.Sprint("p", i)]
		if p == nil {
			t.Errorf("%s: no program", sec)
			continue
		}
		if p.Type == ebpf.UnspecifiedProgram {
			t.Errorf("%s: no program type", sec)
		}
		kind, _, _ := strings.Cut(sec, "/")
		if sleepable := p.Flags&(1<<4) != 0; sleepable != strings.HasSuffix(kind, ".s") && sec != "syscall" {
			t.Errorf("%s: sleepable %v", sec, sleepable)
		}
		if k := bridge.KindOf(p); strings.HasPrefix(k.Why, "skelgen knows no attach point") {
			t.Errorf("%s: no Attach, and no reason: %s", sec, k.Why)
		}
	}
	for _, tc := range []struct {
		sec string
		typ ebpf.ProgramType
		at  ebpf.AttachType
	}{
		{"tp.s", ebpf.TracePoint, ebpf.AttachNone},
		{"raw_tracepoint.s", ebpf.RawTracepoint, ebpf.AttachNone},
		{"tp_btf.s", ebpf.Tracing, ebpf.AttachTraceRawTp},
		{"fentry.multi", ebpf.Tracing, bridge.AttachTraceFEntryMulti},
		{"fexit.multi.s", ebpf.Tracing, bridge.AttachTraceFExitMulti},
		{"fsession.multi", ebpf.Tracing, bridge.AttachTraceFSessionMulti},
	} {
		for i, sec := range libbpfSections {
			if p := spec.Programs[fmt.Sprint("p", i)]; sec == tc.sec && (p.Type != tc.typ || p.AttachType != tc.at) {
				t.Errorf("%s: type %v, attach type %v, want %v, %v", sec, p.Type, p.AttachType, tc.typ, tc.at)
			}
		}
	}
}
