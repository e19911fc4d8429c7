// A large object for BenchmarkGenerate: 32 groups, each of an enum, a key
// and a record struct (nested struct, union, array and enum members), a hash
// map, an array map and a per-CPU array keyed by them, three globals (.bss,
// .data, .rodata) and a tracepoint program using all of them; plus a ring
// buffer and a perf event array shared by every program. Generated skeletons
// of real projects reach this size (about 100 maps, 100 types and 30
// programs) and the testdata objects do not. Only types bpf2go also accepts
// are used, so that both generators run on it.
#include <linux/types.h>
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>

struct point {
	__s32 x;
	__s32 y;
};

struct event {
	__u64 ts;
	__u32 group;
	__u32 pid;
	char comm[16];
};

/* Keeps struct event in BTF for the typed ring buffer and perf readers. */
const struct event *unused_event __attribute__((unused));

struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 1 << 16);
} events SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERF_EVENT_ARRAY);
	__uint(key_size, sizeof(__u32));
	__uint(value_size, sizeof(__u32));
} perf_events SEC(".maps");

#define GROUP(i)                                                               \
	enum state_##i { STATE_##i##_IDLE, STATE_##i##_BUSY = i + 1,           \
			 STATE_##i##_DONE = 2 * i + 2 };                       \
                                                                               \
	struct key_##i {                                                       \
		__u32 pid;                                                     \
		__u16 cpu;                                                     \
		__u16 slot;                                                    \
	};                                                                     \
                                                                               \
	struct record_##i {                                                    \
		__u64 count;                                                   \
		__u64 last_ns;                                                 \
		struct point where;                                            \
		union {                                                        \
			__u64 raw;                                             \
			__u32 half[2];                                         \
		} u;                                                           \
		enum state_##i state;                                          \
		__u8 tag[6];                                                   \
		__u16 flags;                                                   \
		__u64 hist[i % 4 + 2];                                         \
	};                                                                     \
                                                                               \
	struct {                                                               \
		__uint(type, BPF_MAP_TYPE_HASH);                               \
		__uint(max_entries, 64 + i);                                   \
		__type(key, struct key_##i);                                   \
		__type(value, struct record_##i);                              \
	} records_##i SEC(".maps");                                            \
                                                                               \
	struct {                                                               \
		__uint(type, BPF_MAP_TYPE_ARRAY);                              \
		__uint(max_entries, 4);                                        \
		__type(key, __u32);                                            \
		__type(value, __u64);                                          \
	} totals_##i SEC(".maps");                                             \
                                                                               \
	struct {                                                               \
		__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);                       \
		__uint(max_entries, 1);                                        \
		__type(key, __u32);                                            \
		__type(value, struct point);                                   \
	} percpu_##i SEC(".maps");                                             \
                                                                               \
	volatile __u64 seen_##i;                                               \
	volatile __u32 mode_##i = i;                                           \
	const volatile __u64 limit_##i = 1000 * (i + 1);                      \
                                                                               \
	SEC("tracepoint/syscalls/sys_enter_getppid")                           \
	int handle_##i(void *ctx)                                              \
	{                                                                      \
		__u64 id = bpf_get_current_pid_tgid();                         \
		struct key_##i k = { .pid = id >> 32, .slot = i };             \
		struct record_##i *r, init = { .state = STATE_##i##_BUSY };    \
		__u32 zero = 0;                                                \
                                                                               \
		if (seen_##i++ > limit_##i || mode_##i == 0)                   \
			return 0;                                              \
		r = bpf_map_lookup_elem(&records_##i, &k);                     \
		if (!r) {                                                      \
			bpf_map_update_elem(&records_##i, &k, &init,           \
					    BPF_NOEXIST);                      \
			return 0;                                              \
		}                                                              \
		__sync_fetch_and_add(&r->count, 1);                            \
		r->last_ns = bpf_ktime_get_ns();                               \
		r->hist[r->count & 1]++;                                       \
		__u64 *t = bpf_map_lookup_elem(&totals_##i, &zero);            \
		if (t)                                                         \
			__sync_fetch_and_add(t, 1);                            \
		struct point *p = bpf_map_lookup_elem(&percpu_##i, &zero);     \
		if (p)                                                         \
			p->x++;                                                \
		struct event *e =                                              \
			bpf_ringbuf_reserve(&events, sizeof(*e), 0);           \
		if (e) {                                                       \
			e->ts = r->last_ns;                                    \
			e->group = i;                                          \
			e->pid = id;                                           \
			bpf_get_current_comm(e->comm, sizeof(e->comm));        \
			bpf_ringbuf_submit(e, 0);                              \
		}                                                              \
		struct event pe = { .ts = r->last_ns, .group = i };            \
		bpf_perf_event_output(ctx, &perf_events, BPF_F_CURRENT_CPU,    \
				      &pe, sizeof(pe));                        \
		return 0;                                                      \
	}

#define GROUP4(i) GROUP(i##0) GROUP(i##1) GROUP(i##2) GROUP(i##3)

GROUP4(1)
GROUP4(2)
GROUP4(3)
GROUP4(4)
GROUP4(5)
GROUP4(6)
GROUP4(7)
GROUP4(8)

char LICENSE[] SEC("license") = "GPL";
