//go:build ignore

// Variable-length records, as exec tracers send them: a fixed header, then
// only the bytes of payload there are.
#include "common.h"

#define DATA_MAX 64

struct rec {
	__u32 pid;
	__u32 len;              /* bytes of data sent */
	char data[DATA_MAX];
};

struct scratch {
	struct rec r;
	__u8 extra[32];         /* sent after the struct in long records */
};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__type(key, __u32);
	__type(value, struct scratch);
	__uint(max_entries, 1);
} buf SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 1 << 14);
} rb SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERF_EVENT_ARRAY);
	__uint(key_size, sizeof(__u32));
	__uint(value_size, sizeof(__u32));
} perf SEC(".maps");

const volatile __u32 target_tgid = 0;
__u32 calls;

/* Records 0, 1, 2 carry 0, 8, 16 bytes of data; record 3 is the whole
 * struct and 16 bytes more. */
SEC("tracepoint/syscalls/sys_enter_getppid")
int emit(void *ctx)
{
	__u32 tgid = bpf_get_current_pid_tgid() >> 32;
	if (tgid != target_tgid)
		return 0;
	__u32 zero = 0;
	struct scratch *s = bpf_map_lookup_elem(&buf, &zero);
	if (!s)
		return 0;
	__u32 n = calls++;
	__u32 len = (n * 8) & (DATA_MAX - 1);
	s->r.pid = tgid;
	s->r.len = len;
	/* Bytes past len are not zero in the buffer: a reader that shows
	 * them zero has zero-filled, not read past the record. */
	for (int i = 0; i < DATA_MAX; i++)
		s->r.data[i] = 'a' + i % 26;
	for (int i = 0; i < 32; i++)
		s->extra[i] = 0xab;
	__u64 size = __builtin_offsetof(struct rec, data) + len;
	if (n == 3)
		size = sizeof(struct rec) + 16;
	if (size > sizeof(*s))
		return 0;
	bpf_ringbuf_output(&rb, s, size, 0);
	bpf_perf_event_output(ctx, &perf, BPF_F_CURRENT_CPU, s, size);
	return 0;
}

/* A record declared and used only here: not in the object's BTF. The
 * generator finds it in the source and types the reader by it. */
struct small {
	__u32 pid;
	__u32 seq;
};

struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 1 << 12);
} small_rb SEC(".maps");

SEC("tracepoint/syscalls/sys_enter_getppid")
int emit_small(void *ctx)
{
	__u32 tgid = bpf_get_current_pid_tgid() >> 32;
	if (tgid != target_tgid)
		return 0;
	struct small *e = bpf_ringbuf_reserve(&small_rb, sizeof(*e), 0);
	if (!e)
		return 0;
	e->pid = tgid;
	e->seq = calls;
	bpf_ringbuf_submit(e, 0);
	return 0;
}

char LICENSE[] SEC("license") = "GPL";
