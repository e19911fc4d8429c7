//go:build ignore

// stackcount: counts the distinct stacks that hit a tracepoint. The stack
// map's depth (value size) and capacity, and the count map's capacity, are
// left to the tool: it sets them from its flags before load.
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>
#include <stdbool.h>

/* Options, set before load. */
const volatile __u32 target_tgid = 0;
const volatile bool per_process = false;
const volatile bool user_stacks = false;

struct key {
	__u32 pid;
	__s32 kernel_stack;
	__s32 user_stack;
	char comm[16];
};

struct {
	__uint(type, BPF_MAP_TYPE_STACK_TRACE);
	__type(key, __u32);
	__uint(value_size, 0);  /* -stack-depth frames of 8 bytes */
	__uint(max_entries, 0); /* -max-stacks */
} stacks SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__type(key, struct key);
	__type(value, __u64);
	__uint(max_entries, 0); /* -max-stacks */
} counts SEC(".maps");

/* Attached by the tool to the tracepoint it is given. */
SEC("tracepoint")
int count_stack(void *ctx)
{
	__u64 id = bpf_get_current_pid_tgid();
	if (target_tgid && (id >> 32) != target_tgid)
		return 0;
	struct key k = {};
	k.kernel_stack = bpf_get_stackid(ctx, &stacks, 0);
	k.user_stack = user_stacks ? bpf_get_stackid(ctx, &stacks, BPF_F_USER_STACK) : -1;
	if (per_process) {
		k.pid = id >> 32;
		bpf_get_current_comm(k.comm, sizeof(k.comm));
	}
	__u64 one = 1, *n = bpf_map_lookup_elem(&counts, &k);
	if (n)
		__sync_fetch_and_add(n, 1);
	else
		bpf_map_update_elem(&counts, &k, &one, BPF_NOEXIST);
	return 0;
}

char LICENSE[] SEC("license") = "GPL";
