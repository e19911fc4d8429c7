//go:build ignore

// Constants the Go side shares with the program.
#include "common.h"

#define MAX_SLOTS 27
#define SLOT_MASK (MAX_SLOTS - 1)
#define BIG 0xffffffffffffffffULL
#define NEG (-5)
#define SHIFTED (1 << 12 | 3)
#define TOOL_NAME "consts" \
	"-tool"
#define TRUTH (MAX_SLOTS > 20 && !0)
#define SLOT_SIZE sizeof(struct slot)
#define NOT_A_CONSTANT last_color
#define A_TYPE __u32
#define CALLS_A_MACRO(x) ((x) + 1)

#ifdef SOMETHING
#define CONDITIONAL 1
#endif

#define GONE 1
#undef GONE

enum { ANON_ONE = 1, ANON_TWO, ANON_TEN = ANON_ONE * 10, ANON_ELEVEN };

/* A named enum the object's BTF does not have: no map or variable uses it. */
enum color { COLOR_RED, COLOR_GREEN = 4, COLOR_BLUE, COLOR_ALSO_GREEN = 4 };

struct slot { __u64 hits; };

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, MAX_SLOTS);
	__type(key, __u32);
	__type(value, struct slot);
} slots SEC(".maps");

__u32 last_color;

SEC("xdp")
int count(struct xdp_md *ctx)
{
	__u32 key = (ctx->data_end - ctx->data) & SLOT_MASK;
	struct slot *s = bpf_map_lookup_elem(&slots, &key);

	if (s)
		s->hits += ANON_TEN;
	last_color = COLOR_BLUE;
	return XDP_PASS;
}

char LICENSE[] SEC("license") = "GPL";
