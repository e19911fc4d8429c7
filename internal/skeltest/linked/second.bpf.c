//go:build ignore

// The second source: bump adds its own helper's 2 to the first source's
// map; prog_b writes a record whose struct only this source defines.
#include "common.h"

#define STEP 2
#define SAME "linked"

extern struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u64);
} counts SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 4096);
} records SEC(".maps");

static __noinline int helper(void)
{
	return STEP;
}

__noinline int bump(__u32 k)
{
	__u64 *v = bpf_map_lookup_elem(&counts, &k);

	if (v)
		*v += helper();
	return 0;
}

SEC("xdp")
int prog_b(struct xdp_md *ctx)
{
	struct rec {
		__u32 tag;
		__u64 value;
	} *r = bpf_ringbuf_reserve(&records, sizeof(*r), 0);

	if (!r)
		return XDP_ABORTED;
	r->tag = 0x5eed;
	r->value = 42;
	bpf_ringbuf_submit(r, 0);
	return XDP_PASS;
}
