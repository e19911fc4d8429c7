//go:build ignore

// syslat: per-system-call latency, with the whole tool in this file. The
// kernel programs time every system call of the traced processes and send
// each completion as a record (the costly part). The hooks, run in the Go
// process by the skeleton's Serve, keep per-call statistics and log2
// histograms in user-space maps, drop fast calls before Go sees them, print
// the top 10 every interval and a full report at the end, and detach the
// per-call probe when a record budget is spent.
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>
#include "syscall_tp.h"
#include "skelgen.h"

#define MAX_SYSCALLS 512
#define SLOTS 32 /* log2 of microseconds */
#define TOP 10
#define TASK_COMM_LEN 16

/* Options, set before load. */
const volatile __u32 target_tgid = 0;
const volatile __u64 slow_ns = 10000000;     /* calls at least this slow reach Go */
const volatile __u64 interval_ns = 1000000000;
const volatile __u64 max_records = 0;        /* detach the per-call probe after this many (0: never) */

/* Kernel side: when each thread entered its system call. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 10240);
	__type(key, __u32);
	__type(value, __u64);
} start SEC(".maps");

struct event {
	__u64 lat_ns;
	__s64 ret;
	__u32 id;
	__u32 pid;
	char comm[TASK_COMM_LEN];
};

struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 1 << 22);
} events SEC(".maps");

static __always_inline int traced(void)
{
	return !target_tgid || (bpf_get_current_pid_tgid() >> 32) == target_tgid;
}

SEC("tracepoint/raw_syscalls/sys_enter")
int sys_enter(struct raw_sys_enter_ctx *ctx)
{
	if (!traced())
		return 0;
	__u32 tid = bpf_get_current_pid_tgid();
	__u64 ts = bpf_ktime_get_ns();
	bpf_map_update_elem(&start, &tid, &ts, BPF_ANY);
	return 0;
}

SEC("tracepoint/raw_syscalls/sys_exit")
int sys_exit(struct raw_sys_exit_ctx *ctx)
{
	__u64 id = bpf_get_current_pid_tgid();
	__u32 tid = id;
	__u64 *ts = bpf_map_lookup_elem(&start, &tid);
	if (!ts)
		return 0;
	__u64 lat = bpf_ktime_get_ns() - *ts;
	bpf_map_delete_elem(&start, &tid);
	struct event *e = bpf_ringbuf_reserve(&events, sizeof(*e), 0);
	if (!e)
		return 0;
	e->lat_ns = lat;
	e->ret = ctx->ret;
	e->id = ctx->id;
	e->pid = id >> 32;
	bpf_get_current_comm(e->comm, sizeof(e->comm));
	bpf_ringbuf_submit(e, 0);
	return 0;
}

/* User side: statistics per system call, over the whole run and over the
 * current interval, and log2 histograms of microseconds. */
struct stat {
	__u64 count;
	__u64 total_ns;
	__u64 max_ns;
	__u64 slow;
};

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, MAX_SYSCALLS);
	__type(key, __u32);
	__type(value, struct stat);
} total SEC(".maps"), window SEC(".maps");

/* hist[id * SLOTS + slot] */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, MAX_SYSCALLS * SLOTS);
	__type(key, __u32);
	__type(value, __u64);
} hist SEC(".maps");

/* One histogram at a time, for skelgen_print_log2_hist. */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, SLOTS);
	__type(key, __u32);
	__type(value, __u64);
} scratch SEC(".maps");

__u64 records, interval_start, detached_at;

static __always_inline __u32 log2_u64(__u64 v)
{
	__u32 r = 0;

	for (int i = 32; i > 0; i >>= 1) {
		if (v >= (1ULL << i)) {
			v >>= i;
			r += i;
		}
	}
	return r;
}

static __always_inline void account(void *map, __u32 id, __u64 lat)
{
	struct stat *s = bpf_map_lookup_elem(map, &id);
	if (!s)
		return;
	s->count++;
	s->total_ns += lat;
	if (lat > s->max_ns)
		s->max_ns = lat;
	if (lat >= slow_ns)
		s->slow++;
}

SEC("ubpf/record/events")
int on_syscall(struct event *e)
{
	__u32 id = e->id;
	if (id >= MAX_SYSCALLS)
		return 0;
	records++;
	account(&total, id, e->lat_ns);
	account(&window, id, e->lat_ns);
	__u32 slot = log2_u64(e->lat_ns / 1000);
	if (slot >= SLOTS)
		slot = SLOTS - 1;
	__u32 key = id * SLOTS + slot;
	__u64 *n = bpf_map_lookup_elem(&hist, &key);
	if (n)
		(*n)++;
	if (max_records && records == max_records) {
		long err = skelgen_detach("sys_exit");
		detached_at = records;
		skelgen_printf("detached sys_exit after %llu records (%ld)\n", records, err);
	}
	return e->lat_ns >= slow_ns; /* fast calls stop here */
}

static void print_header(void)
{
	skelgen_printf("%8s %10s %12s %10s %10s %8s\n", "SYSCALL", "COUNT", "TOTAL_us", "AVG_us", "MAX_us", "SLOW");
}

static void print_row(__u32 id, struct stat *s)
{
	skelgen_printf("%8u %10llu %12llu %10llu %10llu %8llu\n", id, s->count, s->total_ns / 1000,
		       s->total_ns / 1000 / s->count, s->max_ns / 1000, s->slow);
}

/* Finds the ten system calls of map with the most time spent in them,
 * most first (MAX_SYSCALLS past the last), and prints them when print. */
static void top_ten(void *map, __u32 top[TOP], int print)
{
	__u64 best[TOP] = {};

	for (int i = 0; i < TOP; i++)
		top[i] = MAX_SYSCALLS;
	for (__u32 id = 0; id < MAX_SYSCALLS; id++) {
		struct stat *s = bpf_map_lookup_elem(map, &id);
		if (!s || s->count == 0)
			continue;
		__u64 t = s->total_ns;
		__u32 cur = id;
		for (int i = 0; i < TOP; i++) {
			if (top[i] == MAX_SYSCALLS || t > best[i]) {
				__u64 bt = best[i];
				__u32 bid = top[i];
				best[i] = t;
				top[i] = cur;
				t = bt;
				cur = bid;
				if (cur == MAX_SYSCALLS)
					break;
			}
		}
	}
	if (!print)
		return;
	print_header();
	for (int i = 0; i < TOP; i++) {
		__u32 id = top[i];
		if (id == MAX_SYSCALLS)
			break;
		struct stat *s = bpf_map_lookup_elem(map, &id);
		if (s)
			print_row(id, s);
	}
}

SEC("ubpf/begin")
int begin(void *ctx)
{
	interval_start = bpf_ktime_get_ns();
	skelgen_printf("Tracing system call latency... Hit Ctrl-C to end.\n");
	return 0;
}

SEC("ubpf/interval/100ms")
int tick(void *ctx)
{
	__u64 now = bpf_ktime_get_ns();
	if (now - interval_start < interval_ns)
		return 0;
	interval_start = now;
	__u32 top[TOP];
	skelgen_printf("\nTop %d system calls by time in the last interval:\n", TOP);
	top_ten(&window, top, 1);
	struct stat zero = {};
	for (__u32 id = 0; id < MAX_SYSCALLS; id++)
		bpf_map_update_elem(&window, &id, &zero, BPF_ANY);
	return 0;
}

SEC("ubpf/end")
int end(void *ctx)
{
	__u32 top[TOP];
	skelgen_printf("\n%llu system calls traced", records);
	if (detached_at)
		skelgen_printf(" (sys_exit detached after %llu)", detached_at);
	skelgen_printf(":\n");
	print_header();
	for (__u32 id = 0; id < MAX_SYSCALLS; id++) {
		struct stat *s = bpf_map_lookup_elem(&total, &id);
		if (s && s->count)
			print_row(id, s);
	}
	skelgen_printf("\nHistograms of the top %d by time:\n", TOP);
	top_ten(&total, top, 0);
	for (int i = 0; i < TOP; i++) {
		__u32 id = top[i];
		if (id == MAX_SYSCALLS)
			break;
		for (__u32 slot = 0; slot < SLOTS; slot++) {
			__u32 key = id * SLOTS + slot;
			__u64 *n = bpf_map_lookup_elem(&hist, &key);
			__u64 v = n ? *n : 0;
			bpf_map_update_elem(&scratch, &slot, &v, BPF_ANY);
		}
		skelgen_printf("\nsyscall %u:\n", id);
		skelgen_print_log2_hist(&scratch, "usecs");
	}
	return 0;
}

char LICENSE[] SEC("license") = "GPL";
