//go:build ignore

// Global variables in every kind of data section, with value types that
// exercise the type generator: an anonymous union, bitfields, a pointer,
// nested arrays and an enum.
#include "common.h"

enum mode {
	MODE_OFF = 0,
	MODE_COUNT = 1,
	MODE_TRACE = 2,
};

struct limits {
	__u32 max_events;
	__u16 ports[4];
	enum mode mode;
};

struct record {
	__u32 kind;
	union {
		__u64 as_u64;
		__u32 as_u32[2];
		struct {
			__u16 lo;
			__u16 hi;
		};
	};
	__u32 flags : 3;
	__u32 level : 5;
	__u32 seq : 24;
	void *owner;
	__u8 grid[2][3];
	enum mode mode;
};

/* .rodata: set from Go before load. */
const volatile __u32 target_tgid = 0;
const volatile struct limits limits = { .max_events = 8, .ports = { 80, 443 }, .mode = MODE_COUNT };
const volatile __u64 weights[4] = { 1, 2, 3, 4 };

/* .data and .bss: read and written after load. */
__u64 calls = 100;
struct record last_record = { .kind = 7 };
__u64 matched;
__u32 hist[8];

/* A custom data section. */
__u64 custom_counter SEC(".data.custom") = 5;

SEC("raw_tp/sys_enter")
int on_sys_enter(void *ctx)
{
	__u32 tgid = bpf_get_current_pid_tgid() >> 32;

	if (tgid != target_tgid)
		return 0;
	__sync_fetch_and_add(&calls, 1);
	if (matched < limits.max_events)
		matched += weights[limits.mode & 3];
	hist[matched & 7]++;
	custom_counter++;
	last_record.seq = matched;
	last_record.level = limits.mode;
	last_record.as_u32[1] = tgid;
	last_record.grid[1][2] = 9;
	return 0;
}

char LICENSE[] SEC("license") = "GPL";
