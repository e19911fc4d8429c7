//go:build ignore

// profile: samples the stacks running on every CPU at a frequency, through
// a software CPU-clock perf event per CPU, and counts them by process and
// stack, as libbpf-tools' profile.
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>
#include <stdbool.h>

/* Options, set before load. */
const volatile __u32 target_tgid = 0; /* 0: every process */
const volatile bool include_idle = false;

struct key {
	__u32 pid;
	__s32 kernel_stack;
	__s32 user_stack;
	char comm[16];
};

struct {
	__uint(type, BPF_MAP_TYPE_STACK_TRACE);
	__type(key, __u32);
	__uint(value_size, 127 * 8);
	__uint(max_entries, 16384);
} stacks SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__type(key, struct key);
	__type(value, __u64);
	__uint(max_entries, 16384);
} counts SEC(".maps");

SEC("perf_event")
int sample(void *ctx)
{
	__u64 id = bpf_get_current_pid_tgid();
	__u32 tgid = id >> 32;

	if (target_tgid && tgid != target_tgid)
		return 0;
	if (!include_idle && id == 0)
		return 0;
	struct key k = {.pid = tgid};
	k.kernel_stack = bpf_get_stackid(ctx, &stacks, 0);
	k.user_stack = bpf_get_stackid(ctx, &stacks, BPF_F_USER_STACK);
	bpf_get_current_comm(k.comm, sizeof(k.comm));
	__u64 one = 1, *n = bpf_map_lookup_elem(&counts, &k);
	if (n)
		__sync_fetch_and_add(n, 1);
	else
		bpf_map_update_elem(&counts, &k, &one, BPF_NOEXIST);
	return 0;
}

char LICENSE[] SEC("license") = "GPL";
