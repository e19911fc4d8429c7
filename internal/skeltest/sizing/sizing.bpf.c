//go:build ignore

// Maps whose sizes are left to user space: max_entries and value_size 0.
#include "common.h"

const volatile __u32 target_tgid = 0;

struct {
	__uint(type, BPF_MAP_TYPE_STACK_TRACE);
	__type(key, __u32);
	__uint(max_entries, 0);   /* set by the tool */
	__uint(value_size, 0);    /* 8 bytes per frame, set by the tool */
} stacks SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__type(key, __u32);      /* stack id */
	__type(value, __u64);
	__uint(max_entries, 0);  /* set by the tool */
} counts SEC(".maps");

struct inner {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__type(key, __u32);
	__type(value, __u64);
	__uint(max_entries, 0);  /* set by the tool */
};

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY_OF_MAPS);
	__type(key, __u32);
	__uint(max_entries, 1);
	__array(values, struct inner);
} outer SEC(".maps");

SEC("tracepoint/syscalls/sys_enter_getppid")
int count_stacks(void *ctx)
{
	if ((bpf_get_current_pid_tgid() >> 32) != target_tgid)
		return 0;
	__s64 id = bpf_get_stackid(ctx, &stacks, BPF_F_USER_STACK);
	if (id < 0)
		return 0;
	__u32 key = id;
	__u64 one = 1, *n = bpf_map_lookup_elem(&counts, &key);
	if (n)
		__sync_fetch_and_add(n, 1);
	else
		bpf_map_update_elem(&counts, &key, &one, BPF_NOEXIST);
	return 0;
}

char LICENSE[] SEC("license") = "GPL";
