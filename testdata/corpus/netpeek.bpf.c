// netpeek: TCP state changes. The socket's addresses and ports live in
// anonymous unions and structs inside struct sock_common.
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_core_read.h>
#include <bpf/bpf_tracing.h>
#include <bpf/bpf_endian.h>

#define AF_INET 2
#define AF_INET6 10

struct conn {
	__be32 saddr;
	__be32 daddr;
	__u16 sport;
	__u16 dport;
	__u16 family;
	__u8 oldstate;
	__u8 newstate;
	__u8 daddr6[16];
};

struct {
	__uint(type, BPF_MAP_TYPE_PERF_EVENT_ARRAY);
	__uint(key_size, sizeof(__u32));
	__uint(value_size, sizeof(__u32));
} conns SEC(".maps");

SEC("tp_btf/inet_sock_set_state")
int BPF_PROG(handle_set_state, const struct sock *sk, int oldstate, int newstate)
{
	struct conn c = {};

	if (sk->__sk_common.skc_family != AF_INET && sk->__sk_common.skc_family != AF_INET6)
		return 0;
	if (newstate == TCP_CLOSE && oldstate != TCP_ESTABLISHED)
		return 0;
	c.family = sk->__sk_common.skc_family;
	c.saddr = sk->__sk_common.skc_rcv_saddr;
	c.daddr = sk->__sk_common.skc_daddr;
	c.sport = sk->__sk_common.skc_num;
	c.dport = bpf_ntohs(sk->__sk_common.skc_dport);
	c.oldstate = oldstate;
	c.newstate = newstate;
	BPF_CORE_READ_INTO(&c.daddr6, sk, __sk_common.skc_v6_daddr.in6_u.u6_addr8);
	bpf_perf_event_output(ctx, &conns, BPF_F_CURRENT_CPU, &c, sizeof(c));
	return 0;
}

char LICENSE[] SEC("license") = "GPL";
