//go:build ignore

// tcpcc: a TCP congestion control written in BPF (Reno: slow start, then
// one segment more per window, halved on loss), registered with the kernel
// as a struct_ops map. Every callback counts its calls; the largest
// congestion window it set is kept for the Go side.
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>

char LICENSE[] SEC("license") = "GPL";

enum callback { CB_SSTHRESH, CB_CONG_AVOID, CB_UNDO_CWND, CB_INIT, CB_COUNT };

/* Calls per callback, and the largest window set. */
__u64 calls[CB_COUNT];
__u32 max_cwnd;

static __always_inline struct tcp_sock *tcp_sk(const struct sock *sk)
{
	return (struct tcp_sock *)sk;
}

SEC("struct_ops")
void BPF_PROG(reno_init, struct sock *sk)
{
	__sync_fetch_and_add(&calls[CB_INIT], 1);
}

SEC("struct_ops")
__u32 BPF_PROG(reno_ssthresh, struct sock *sk)
{
	const struct tcp_sock *tp = tcp_sk(sk);
	__u32 half = tp->snd_cwnd >> 1;

	__sync_fetch_and_add(&calls[CB_SSTHRESH], 1);
	return half > 2 ? half : 2;
}

SEC("struct_ops")
void BPF_PROG(reno_cong_avoid, struct sock *sk, __u32 ack, __u32 acked)
{
	struct tcp_sock *tp = tcp_sk(sk);
	__u32 cwnd = tp->snd_cwnd;

	__sync_fetch_and_add(&calls[CB_CONG_AVOID], 1);
	if (cwnd < tp->snd_ssthresh) {
		/* Slow start: one segment more per segment acknowledged. */
		cwnd += acked;
	} else {
		/* Congestion avoidance: one segment more per window. */
		tp->snd_cwnd_cnt += acked;
		if (tp->snd_cwnd_cnt >= cwnd) {
			tp->snd_cwnd_cnt -= cwnd;
			cwnd++;
		}
	}
	if (cwnd > tp->snd_cwnd_clamp)
		cwnd = tp->snd_cwnd_clamp;
	tp->snd_cwnd = cwnd;
	if (cwnd > max_cwnd)
		max_cwnd = cwnd;
}

SEC("struct_ops")
__u32 BPF_PROG(reno_undo_cwnd, struct sock *sk)
{
	const struct tcp_sock *tp = tcp_sk(sk);

	__sync_fetch_and_add(&calls[CB_UNDO_CWND], 1);
	return tp->snd_cwnd > tp->prior_cwnd ? tp->snd_cwnd : tp->prior_cwnd;
}

SEC(".struct_ops.link")
struct tcp_congestion_ops skelgen_reno = {
	.init = (void *)reno_init,
	.ssthresh = (void *)reno_ssthresh,
	.cong_avoid = (void *)reno_cong_avoid,
	.undo_cwnd = (void *)reno_undo_cwnd,
	.name = "skelgen_reno",
};
