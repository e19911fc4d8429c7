//go:build ignore

// usdtsnoop: every hit of a USDT probe (a static probe point compiled into
// a program with sys/sdt.h), with its arguments, read through libbpf's
// usdt.bpf.h as the probe's note describes them.
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include <bpf/usdt.bpf.h>

char LICENSE[] SEC("license") = "GPL";

#define MAX_ARGS 6

struct hit {
	__u64 ts;
	__u32 pid;
	__u32 tid;
	__s32 nargs;
	__u32 pad;
	__s64 args[MAX_ARGS];
	char comm[16];
};

struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 256 * 1024);
} hits SEC(".maps");

/* Options, set before load: only this process (0: every process). */
const volatile __u32 target_tgid = 0;

SEC("usdt")
int on_probe(struct pt_regs *ctx)
{
	__u64 id = bpf_get_current_pid_tgid();
	struct hit *h;
	int n;

	if (target_tgid && id >> 32 != target_tgid)
		return 0;
	h = bpf_ringbuf_reserve(&hits, sizeof(*h), 0);
	if (!h)
		return 0;
	h->ts = bpf_ktime_get_ns();
	h->pid = id >> 32;
	h->tid = (__u32)id;
	h->pad = 0;
	n = bpf_usdt_arg_cnt(ctx);
	h->nargs = n;
	for (int i = 0; i < MAX_ARGS; i++) {
		long v = 0;

		if (i < n)
			bpf_usdt_arg(ctx, i, &v);
		h->args[i] = v;
	}
	bpf_get_current_comm(h->comm, sizeof(h->comm));
	bpf_ringbuf_submit(h, 0);
	return 0;
}
