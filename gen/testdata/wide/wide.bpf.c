// A second large object for BenchmarkGenerate, of another shape than
// testdata/large: 48 groups, each of a struct with bitfields, a char array
// and a union (so the user's types get accessor methods), a hash map and an
// LRU hash keyed by a struct, two globals, and two programs of different
// attach kinds (tracepoint, raw tracepoint, kprobe, kretprobe, uprobe, XDP,
// TC and socket filter in turn): about 100 maps, 150 types and 100
// programs. Only types bpf2go also accepts are used, so that both generators
// run on it.
#include <linux/types.h>
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>

#define GROUP(i, sec_a, sec_b)                                                 \
	struct flow_##i {                                                      \
		__u32 saddr;                                                   \
		__u32 daddr;                                                   \
		__u16 sport;                                                   \
		__u16 dport;                                                   \
		__u8 proto;                                                    \
		__u8 pad[3];                                                   \
	};                                                                     \
                                                                               \
	struct stats_##i {                                                     \
		__u64 packets;                                                 \
		__u64 bytes;                                                   \
		__u32 kind : 4, level : 3, on : 1, rest : 24;                  \
		__u32 mark;                                                    \
		char name[16];                                                 \
		union {                                                        \
			__u64 word;                                            \
			__u16 parts[4];                                        \
		} u;                                                           \
		__u64 hist[i % 3 + 1];                                         \
	};                                                                     \
                                                                               \
	struct {                                                               \
		__uint(type, BPF_MAP_TYPE_HASH);                               \
		__uint(max_entries, 1024 + i);                                 \
		__type(key, struct flow_##i);                                  \
		__type(value, struct stats_##i);                               \
	} flows_##i SEC(".maps");                                              \
                                                                               \
	struct {                                                               \
		__uint(type, BPF_MAP_TYPE_LRU_HASH);                           \
		__uint(max_entries, 256);                                      \
		__type(key, __u32);                                            \
		__type(value, struct flow_##i);                                \
	} recent_##i SEC(".maps");                                             \
                                                                               \
	volatile __u64 seen_##i;                                               \
	volatile const __u32 limit_##i = i * 10;                               \
                                                                               \
	static __always_inline int count_##i(__u32 id)                         \
	{                                                                      \
		struct flow_##i f = { .saddr = id, .proto = i };               \
		struct stats_##i *s = bpf_map_lookup_elem(&flows_##i, &f);     \
		if (s && s->packets < limit_##i) {                             \
			s->packets++;                                          \
			s->kind = i & 15;                                      \
		}                                                              \
		bpf_map_update_elem(&recent_##i, &id, &f, BPF_ANY);            \
		seen_##i++;                                                    \
		return 0;                                                      \
	}                                                                      \
                                                                               \
	SEC(sec_a) int prog_a_##i(void *ctx)                                   \
	{                                                                      \
		count_##i(i);                                                  \
		return 0;                                                      \
	}                                                                      \
                                                                               \
	SEC(sec_b) int prog_b_##i(void *ctx)                                   \
	{                                                                      \
		count_##i(i + 1);                                              \
		return 0;                                                      \
	}

#define SIX(a, b, c, d, e, f)                                                  \
	GROUP(a, "tracepoint/syscalls/sys_enter_getpid", "raw_tp/sys_enter")   \
	GROUP(b, "kprobe/do_sys_openat2", "kretprobe/do_sys_openat2")          \
	GROUP(c, "uprobe//bin/true:main", "xdp")                               \
	GROUP(d, "tc", "socket")                                               \
	GROUP(e, "tracepoint/sched/sched_switch", "raw_tp/sched_wakeup")       \
	GROUP(f, "kprobe/vfs_read", "xdp")

SIX(0, 1, 2, 3, 4, 5)
SIX(6, 7, 8, 9, 10, 11)
SIX(12, 13, 14, 15, 16, 17)
SIX(18, 19, 20, 21, 22, 23)
SIX(24, 25, 26, 27, 28, 29)
SIX(30, 31, 32, 33, 34, 35)
SIX(36, 37, 38, 39, 40, 41)
SIX(42, 43, 44, 45, 46, 47)

char LICENSE[] SEC("license") = "GPL";
