//go:build ignore

// One program of each attach kind the skeleton knows.
#include "common.h"
#include <bpf/bpf_tracing.h>

struct task_struct;
struct linux_binprm;

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 8);
	__type(key, __u32);
	__type(value, __u64);
} hits SEC(".maps");

static __always_inline void hit(__u32 slot)
{
	__u64 *v = bpf_map_lookup_elem(&hits, &slot);

	if (v)
		__sync_fetch_and_add(v, 1);
}

SEC("tracepoint/syscalls/sys_enter_getppid")
int tp_getppid(void *ctx) { hit(0); return 0; }

SEC("raw_tp/sys_enter")
int raw_sys_enter(void *ctx) { hit(1); return 0; }

SEC("tp_btf/sched_process_exec")
int BPF_PROG(btf_exec, struct task_struct *p, int old_pid, struct linux_binprm *bprm) { hit(2); return 0; }

SEC("kprobe/do_sys_openat2")
int kp_openat(void *ctx) { hit(3); return 0; }

SEC("kretprobe/do_sys_openat2")
int krp_openat(void *ctx) { hit(4); return 0; }

SEC("uprobe")
int up_any(void *ctx) { hit(5); return 0; }

SEC("xdp")
int xdp_pass(struct xdp_md *ctx) { hit(6); return XDP_PASS; }

SEC("socket")
int sock_all(struct __sk_buff *skb) { hit(7); return skb->len; }

SEC("tcx/ingress")
int tc_ingress(struct __sk_buff *skb) { return -1; /* TCX_NEXT */ }

char LICENSE[] SEC("license") = "GPL";
