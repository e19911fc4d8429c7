//go:build ignore

// A TCP congestion control (Reno's halving, no growth) in libbpf's
// non-link form of struct_ops maps: SEC(".struct_ops"), which
// cilium/ebpf refuses and skelgen reads as .struct_ops.link.
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>

char LICENSE[] SEC("license") = "GPL";

__u64 ssthresh_calls;

SEC("struct_ops")
__u32 BPF_PROG(nolink_ssthresh, struct sock *sk)
{
	const struct tcp_sock *tp = (struct tcp_sock *)sk;

	__sync_fetch_and_add(&ssthresh_calls, 1);
	return tp->snd_cwnd > 4 ? tp->snd_cwnd >> 1 : 2;
}

SEC("struct_ops")
void BPF_PROG(nolink_cong_avoid, struct sock *sk, __u32 ack, __u32 acked)
{
}

SEC("struct_ops")
__u32 BPF_PROG(nolink_undo_cwnd, struct sock *sk)
{
	return ((struct tcp_sock *)sk)->snd_cwnd;
}

SEC(".struct_ops")
struct tcp_congestion_ops skelgen_nolink = {
	.ssthresh = (void *)nolink_ssthresh,
	.cong_avoid = (void *)nolink_cong_avoid,
	.undo_cwnd = (void *)nolink_undo_cwnd,
	.name = "skelgen_nolink",
};
