//go:build ignore

// A uprobe counting calls of a function in a user binary, per process.
#include "common.h"

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 64);
	__type(key, __u32);
	__type(value, __u64);
} calls SEC(".maps");

SEC("uprobe")
int count_calls(void *ctx)
{
	__u32 tgid = bpf_get_current_pid_tgid() >> 32;
	__u64 one = 1, *v = bpf_map_lookup_elem(&calls, &tgid);

	if (v)
		__sync_fetch_and_add(v, 1);
	else
		bpf_map_update_elem(&calls, &tgid, &one, BPF_NOEXIST);
	return 0;
}

char LICENSE[] SEC("license") = "GPL";
