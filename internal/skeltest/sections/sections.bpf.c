//go:build ignore

// One program of each libbpf section kind whose attach point the section
// leaves to the caller, or names in a form other kinds do not (ksyscall,
// multi-probes), and one of each sleepable kind libbpf added after v1.7.0
// (tp.s, raw_tp.s, tp_btf.s) and of a tracing-multi kind: each counts its
// runs in hits.
#include "common.h"

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 16);
	__type(key, __u32);
	__type(value, __u64);
} hits SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_SOCKMAP);
	__uint(max_entries, 4);
	__type(key, __u32);
	__type(value, __u64);
} socks SEC(".maps");

/* The process perf_event samples count for (0: none). */
const volatile __u32 target_tgid = 0;

enum slot {
	KSYSCALL, KRETSYSCALL, KPROBE_MULTI, KRETPROBE_MULTI, UPROBE_MULTI,
	PERF_EVENT, SK_MSG, SK_SKB, SK_LOOKUP, FLOW_DISSECTOR, NETFILTER,
	SOCKOPS, CGROUP_SOCK, TRACEPOINT, REUSEPORT, CGROUP_SKB, XDP,
	TP_S, RAW_TP_S, TP_BTF_S,
};

static __always_inline void hit(__u32 slot)
{
	__u64 *v = bpf_map_lookup_elem(&hits, &slot);

	if (v)
		__sync_fetch_and_add(v, 1);
}

SEC("ksyscall/getppid")
int ks_getppid(void *ctx) { hit(KSYSCALL); return 0; }

SEC("kretsyscall/getppid")
int krs_getppid(void *ctx) { hit(KRETSYSCALL); return 0; }

SEC("kprobe.multi/*sys_getppid")
int kpm_getppid(void *ctx) { hit(KPROBE_MULTI); return 0; }

SEC("kretprobe.multi")
int krpm_any(void *ctx) { hit(KRETPROBE_MULTI); return 0; }

SEC("uprobe.multi")
int upm_any(void *ctx) { hit(UPROBE_MULTI); return 0; }

SEC("perf_event")
int sample(void *ctx)
{
	if ((bpf_get_current_pid_tgid() >> 32) == target_tgid)
		hit(PERF_EVENT);
	return 0;
}

SEC("sk_msg")
int msg_pass(struct sk_msg_md *msg) { hit(SK_MSG); return SK_PASS; }

SEC("sk_skb/stream_verdict")
int skb_verdict(struct __sk_buff *skb) { hit(SK_SKB); return SK_PASS; }

SEC("sk_lookup")
int lookup_pass(struct bpf_sk_lookup *ctx) { hit(SK_LOOKUP); return SK_PASS; }

SEC("flow_dissector")
int dissect(struct __sk_buff *skb) { hit(FLOW_DISSECTOR); return BPF_FLOW_DISSECTOR_CONTINUE; }

SEC("netfilter")
int nf_accept(void *ctx) { hit(NETFILTER); return 1; /* NF_ACCEPT */ }

SEC("sockops")
int sock_ops(struct bpf_sock_ops *ops) { hit(SOCKOPS); return 1; }

SEC("cgroup/sock_create")
int sock_create(struct bpf_sock *sk) { hit(CGROUP_SOCK); return 1; }

SEC("cgroup_skb/egress")
int skb_egress(struct __sk_buff *skb) { hit(CGROUP_SKB); return 1; }

SEC("xdp")
int xdp_pass(struct xdp_md *ctx) { hit(XDP); return XDP_PASS; }

SEC("tracepoint")
int tp_any(void *ctx) { hit(TRACEPOINT); return 0; }

SEC("sk_reuseport")
int reuse(struct sk_reuseport_md *md) { hit(REUSEPORT); return SK_PASS; }

SEC("netkit/primary")
int nk_primary(struct __sk_buff *skb) { return -1; /* NETKIT_NEXT */ }

SEC("lwt_xmit")
int lwt(struct __sk_buff *skb) { return BPF_OK; }

SEC("tp.s/syscalls/sys_enter_getppid")
int tps_getppid(void *ctx) { hit(TP_S); return 0; }

SEC("raw_tp.s/sys_enter")
int rawtps_enter(void *ctx) { hit(RAW_TP_S); return 0; }

SEC("tp_btf.s/sys_enter")
int tpbtfs_enter(void *ctx) { hit(TP_BTF_S); return 0; }

SEC("fentry.multi/bpf_fentry_test*")
int fentry_multi(void *ctx) { return 0; }

char LICENSE[] SEC("license") = "GPL";
