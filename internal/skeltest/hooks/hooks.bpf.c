//go:build ignore

// A tool driven by Serve. The tracepoints write records (getppid to a ring
// buffer, getpgid to a perf event array); in process, the interval hook
// writes them instead. The record hook drops odd sequence numbers and
// checks each record's length; begin and end exercise the actions and
// report, through skelgen_emit, what every stage counted.
#include "common.h"
#include "skelgen.h"

struct event {
	__u64 seq;
	__u32 kind; /* 0: pass, 1: drop, 99: the end hook's marker */
	__u32 len;  /* the bytes sent */
	char payload[16];
};

struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 1 << 18);
} events SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERF_EVENT_ARRAY);
	__uint(key_size, sizeof(__u32));
	__uint(value_size, sizeof(__u32));
} samples SEC(".maps");

/* Options, set before load. */
const volatile __u32 target_tgid = 0;
const volatile __u64 per_tick = 0;     /* records the interval hook writes each tick */
const volatile __u64 stop_after = 0;   /* the record hook stops the tool at this many */
const volatile __s32 stop_code = 0;
const volatile __u64 fault_at = ~0ULL; /* the record hook faults on this sequence number */
const volatile __u32 fail_begin = 0;   /* the begin hook faults */

struct stats {
	__u64 produced; /* records written */
	__u64 full;     /* records the ring buffer had no room for */
	__u64 seen;     /* records the record hook saw */
	__u64 passed;   /* records it passed on */
	__u64 bad_len;  /* records whose length argument was not the length sent */
	__u64 ticks;
	__u64 samples;  /* perf samples written */
	__u64 lost;     /* perf samples lost, as the lost hook heard */
	__u64 lost_notices;
	__u64 hook_runs; /* written by the interval and the record hook: they never overlap */
};

struct stats stats;

static __always_inline int mine(void)
{
	return !target_tgid || (bpf_get_current_pid_tgid() >> 32) == target_tgid;
}

SEC("tracepoint/syscalls/sys_enter_getppid")
int produce(void *ctx)
{
	if (!mine())
		return 0;
	struct event *e = bpf_ringbuf_reserve(&events, sizeof(*e), 0);
	if (!e) {
		__sync_fetch_and_add(&stats.full, 1);
		return 0;
	}
	e->seq = __sync_fetch_and_add(&stats.produced, 1);
	e->kind = e->seq & 1;
	e->len = sizeof(*e);
	__builtin_memset(e->payload, 'k', sizeof(e->payload));
	bpf_ringbuf_submit(e, 0);
	return 0;
}

SEC("tracepoint/syscalls/sys_enter_getpgid")
int sample(void *ctx)
{
	if (!mine())
		return 0;
	struct event e = { .len = sizeof(e) };
	e.seq = __sync_fetch_and_add(&stats.samples, 1);
	bpf_perf_event_output(ctx, &samples, BPF_F_CURRENT_CPU, &e, sizeof(e));
	return 0;
}

SEC("ubpf/begin")
int begin(void *ctx)
{
	if (fail_begin)
		return *(volatile __u64 *)ctx; /* no context: out of bounds */
	skelgen_printf("begin\n");
	/* Detach and attach again; a name the tool does not attach. */
	skelgen_emit("detach", skelgen_detach("produce"));
	skelgen_emit("detach_again", skelgen_detach("produce"));
	skelgen_emit("attach", skelgen_attach("produce"));
	skelgen_emit("attach_nosuch", skelgen_attach("nosuch"));
	return 0;
}

/* In process: the interval hook writes per_tick records of 16 to 32
 * bytes (the records shorter than the struct test zero-filling). */
SEC("ubpf/interval/2ms")
int tick(void *ctx)
{
	stats.ticks++;
	stats.hook_runs++;
	for (__u64 i = 0; i < per_tick && i < 4096; i++) {
		struct event e = {};
		e.seq = stats.produced;
		e.kind = e.seq & 1;
		e.len = 16 + e.seq % 17;
		__builtin_memset(e.payload, 'u', sizeof(e.payload));
		if (bpf_ringbuf_output(&events, &e, e.len, 0)) {
			stats.full++;
			break;
		}
		stats.produced++;
	}
	return 0;
}

SEC("ubpf/record/events")
int on_event(struct event *e, __u64 len)
{
	stats.seen++;
	stats.hook_runs++;
	if (len != e->len)
		stats.bad_len++;
	if (e->seq == fault_at)
		return *(volatile __u64 *)((char *)e + 4096); /* out of bounds */
	if (stop_after && stats.seen == stop_after)
		skelgen_stop(stop_code);
	if (e->kind == 1)
		return 0;
	/* What the record did not send reads as zero. */
	if (len <= 16 + 15 && e->payload[15] != 0)
		stats.bad_len++;
	e->payload[0] = 'h'; /* Go sees the hook's writes */
	stats.passed++;
	return 1;
}

SEC("ubpf/lost/samples")
int on_lost(struct skelgen_lost *l)
{
	stats.lost += l->count;
	stats.lost_notices++;
	return 0;
}

SEC("ubpf/end")
int end(void *ctx)
{
	struct event m = { .kind = 99, .len = sizeof(m) };
	m.seq = stats.produced;
	skelgen_emit("output", skelgen_output(&events, &m, sizeof(m)));
	if (per_tick) {
		/* In process: a record written during end is never read. */
		m.kind = 98;
		skelgen_emit("late", bpf_ringbuf_output(&events, &m, sizeof(m), 0));
	}
	skelgen_emit("produced", stats.produced);
	skelgen_emit("full", stats.full);
	skelgen_emit("seen", stats.seen);
	skelgen_emit("passed", stats.passed);
	skelgen_emit("bad_len", stats.bad_len);
	skelgen_emit("ticks", stats.ticks);
	skelgen_emit("samples", stats.samples);
	skelgen_emit("lost", stats.lost);
	skelgen_emit("lost_notices", stats.lost_notices);
	skelgen_emit("hook_runs", stats.hook_runs);
	skelgen_printf("end\n");
	return 0;
}

struct outside {
	__s64 stop, attach, detach, output;
};

/* A program Go runs itself: the actions are Serve's. */
SEC("ubpf/outside")
int outside(struct outside *o)
{
	o->stop = skelgen_stop(0);
	o->attach = skelgen_attach("produce");
	o->detach = skelgen_detach("produce");
	o->output = skelgen_output(&events, o, 8);
	return 0;
}

char LICENSE[] SEC("license") = "GPL";
