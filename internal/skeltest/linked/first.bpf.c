//go:build ignore

// The first source: defines the map, calls bump from the second.
#include "common.h"

#define STEP 1
#define SAME "linked"

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u64);
} counts SEC(".maps");

extern int bump(__u32 k);

/* The second source has a helper of its own, returning 2. */
static __noinline int helper(void)
{
	return STEP;
}

SEC("xdp")
int prog_a(struct xdp_md *ctx)
{
	bump(0);
	return helper() == 1 ? XDP_PASS : XDP_DROP;
}

char LICENSE[] SEC("license") = "GPL";
