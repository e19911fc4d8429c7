//go:build ignore

// Every map kind the skeleton types: hash with struct key and value, array,
// per-CPU array, LRU hash, ring buffer, perf event array, array of maps and a
// pinned map, fed by one tracepoint program.
#include "common.h"

struct key {
	__u32 pid;
	__u32 cpu;
};

struct stats {
	__u64 count;
	__u64 last_ns;
	char comm[16];
};

struct event {
	__u32 pid;
	__u32 tgid;
	__u64 ts;
	char comm[16];
};

/* Keeps struct event in BTF for the typed ring buffer and perf readers. */
const struct event *unused_event __attribute__((unused));

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 1024);
	__type(key, struct key);
	__type(value, struct stats);
} counts SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 4);
	__type(key, __u32);
	__type(value, __u64);
} totals SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u64);
} percpu_hits SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 128);
	__type(key, __u32);
	__type(value, __u64);
} recent SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 16384);
} events SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERF_EVENT_ARRAY);
	__uint(key_size, sizeof(__u32));
	__uint(value_size, sizeof(__u32));
} perf_events SEC(".maps");

struct inner_array {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u64);
} inner SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY_OF_MAPS);
	__uint(max_entries, 2);
	__type(key, __u32);
	__array(values, struct inner_array);
} outer SEC(".maps") = {
	.values = { [0] = &inner },
};

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 16);
	__type(key, __u32);
	__type(value, __u64);
	__uint(pinning, LIBBPF_PIN_BY_NAME);
} pinned_counts SEC(".maps");

SEC("tracepoint/syscalls/sys_enter_getppid")
int count_getppid(void *ctx)
{
	__u64 id = bpf_get_current_pid_tgid();
	__u32 tgid = id >> 32, zero = 0;
	struct key k = { .pid = tgid, .cpu = 0 };
	struct stats *s, init = {};

	s = bpf_map_lookup_elem(&counts, &k);
	if (!s) {
		bpf_map_update_elem(&counts, &k, &init, BPF_NOEXIST);
		s = bpf_map_lookup_elem(&counts, &k);
		if (!s)
			return 0;
	}
	__sync_fetch_and_add(&s->count, 1);
	s->last_ns = bpf_ktime_get_ns();
	bpf_get_current_comm(s->comm, sizeof(s->comm));

	__u64 *t = bpf_map_lookup_elem(&totals, &zero);
	if (t)
		__sync_fetch_and_add(t, 1);
	__u64 *h = bpf_map_lookup_elem(&percpu_hits, &zero);
	if (h)
		*h += 1;
	__u64 now = bpf_ktime_get_ns();
	bpf_map_update_elem(&recent, &tgid, &now, BPF_ANY);
	bpf_map_update_elem(&pinned_counts, &tgid, &now, BPF_ANY);

	void *in = bpf_map_lookup_elem(&outer, &zero);
	if (in) {
		__u64 *v = bpf_map_lookup_elem(in, &zero);
		if (v)
			__sync_fetch_and_add(v, 1);
	}

	struct event *e = bpf_ringbuf_reserve(&events, sizeof(*e), 0);
	if (e) {
		e->pid = (__u32)id;
		e->tgid = tgid;
		e->ts = now;
		bpf_get_current_comm(e->comm, sizeof(e->comm));
		bpf_ringbuf_submit(e, 0);
	}
	struct event pe = { .pid = (__u32)id, .tgid = tgid, .ts = now };
	bpf_perf_event_output(ctx, &perf_events, BPF_F_CURRENT_CPU, &pe, sizeof(pe));
	return 0;
}

char LICENSE[] SEC("license") = "GPL";
