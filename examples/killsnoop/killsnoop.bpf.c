//go:build ignore

// killsnoop: signals sent with kill(2), by whom, to whom, and the result,
// sent through a perf event array.
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>
#include "syscall_tp.h"
#include <stdbool.h>

/* Options, set before load. */
const volatile __u32 target_tgid = 0;
const volatile __s32 target_signal = -1;
const volatile bool failed_only = false;

struct kill_args {
	__s32 tpid;
	__s32 sig;
};

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 10240);
	__type(key, __u32);
	__type(value, struct kill_args);
} start SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERF_EVENT_ARRAY);
	__uint(key_size, sizeof(__u32));
	__uint(value_size, sizeof(__u32));
} events SEC(".maps");

SEC("tracepoint/syscalls/sys_enter_kill")
int enter_kill(struct sys_enter_ctx *ctx)
{
	__u64 id = bpf_get_current_pid_tgid();
	__u32 tid = (__u32)id;
	struct kill_args a = {.tpid = (__s32)ctx->args[0], .sig = (__s32)ctx->args[1]};

	if (target_tgid && (id >> 32) != target_tgid)
		return 0;
	if (target_signal >= 0 && a.sig != target_signal)
		return 0;
	bpf_map_update_elem(&start, &tid, &a, BPF_ANY);
	return 0;
}

SEC("tracepoint/syscalls/sys_exit_kill")
int exit_kill(struct sys_exit_ctx *ctx)
{
	__u64 id = bpf_get_current_pid_tgid();
	__u32 tid = (__u32)id;
	struct kill_args *a = bpf_map_lookup_elem(&start, &tid);
	if (!a)
		return 0;
	if (!failed_only || ctx->ret < 0) {
		/* The record, defined and built right here: it is not in the
		 * object's BTF, and skelgen finds it in this function. */
		struct event {
			__u32 pid;
			__s32 tpid;
			__s32 sig;
			__s32 ret;
			char comm[16];
		} e = {};
		e.pid = id >> 32;
		e.tpid = a->tpid;
		e.sig = a->sig;
		e.ret = ctx->ret;
		bpf_get_current_comm(e.comm, sizeof(e.comm));
		bpf_perf_event_output(ctx, &events, BPF_F_CURRENT_CPU, &e, sizeof(e));
	}
	bpf_map_delete_elem(&start, &tid);
	return 0;
}

char LICENSE[] SEC("license") = "GPL";
