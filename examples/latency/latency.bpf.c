//go:build ignore

// Syscall latency: the kernel side times every system call of the traced
// processes and counts the latencies in a log2 histogram; the user-space
// program (SEC("ubpf/report")), run by the Go host every interval, computes
// percentiles from the same maps, prints the histogram, emits metrics
// through host functions and starts the next interval.
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>
#include "skelgen.h"

#define MAX_SLOTS 64

/* Trace only this process (0: every process). */
const volatile __u32 target_tgid = 0;

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 10240);
	__type(key, __u32);
	__type(value, __u64);
} start SEC(".maps");

/* hist[i] counts latencies in [2^i, 2^(i+1)) nanoseconds. */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, MAX_SLOTS);
	__type(key, __u32);
	__type(value, __u64);
} hist SEC(".maps");

struct totals {
	__u64 count;
	__u64 sum_ns;
	__u64 max_ns;
};

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct totals);
} totals SEC(".maps");

static __always_inline int traced(void)
{
	__u32 tgid = bpf_get_current_pid_tgid() >> 32;

	return target_tgid == 0 || tgid == target_tgid;
}

SEC("tracepoint/raw_syscalls/sys_enter")
int on_enter(void *ctx)
{
	if (!traced())
		return 0;
	__u32 tid = (__u32)bpf_get_current_pid_tgid();
	__u64 ts = bpf_ktime_get_ns();

	bpf_map_update_elem(&start, &tid, &ts, BPF_ANY);
	return 0;
}

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

SEC("tracepoint/raw_syscalls/sys_exit")
int on_exit(void *ctx)
{
	if (!traced())
		return 0;
	__u32 tid = (__u32)bpf_get_current_pid_tgid(), zero = 0;
	__u64 *ts = bpf_map_lookup_elem(&start, &tid);

	if (!ts)
		return 0;
	__u64 delta = bpf_ktime_get_ns() - *ts;
	bpf_map_delete_elem(&start, &tid);

	__u32 slot = log2_u64(delta);
	if (slot >= MAX_SLOTS)
		slot = MAX_SLOTS - 1;
	__u64 *n = bpf_map_lookup_elem(&hist, &slot);
	if (n)
		__sync_fetch_and_add(n, 1);
	struct totals *t = bpf_map_lookup_elem(&totals, &zero);
	if (t) {
		__sync_fetch_and_add(&t->count, 1);
		__sync_fetch_and_add(&t->sum_ns, delta);
		if (delta > t->max_ns)
			t->max_ns = delta;
	}
	return 0;
}

/* The interval's figures, filled in by report for the Go host. */
struct summary {
	__u64 count;
	__u64 p50_ns;
	__u64 p90_ns;
	__u64 p99_ns;
	__u64 max_ns;
	__u64 mean_ns;
};

/* Implemented by the Go host. */
extern void host_metric(const char *name, __u64 value) __ksym;

SEC("ubpf/report")
int report(struct summary *s)
{
	__u64 total = 0, cum = 0, zero64 = 0;
	__u32 zero = 0;

	for (__u32 i = 0; i < MAX_SLOTS; i++) {
		__u64 *n = bpf_map_lookup_elem(&hist, &i);
		if (n)
			total += *n;
	}
	s->count = total;
	if (total == 0)
		return 0;
	s->p50_ns = s->p90_ns = s->p99_ns = 0;
	for (__u32 i = 0; i < MAX_SLOTS; i++) {
		__u64 *n = bpf_map_lookup_elem(&hist, &i);
		if (!n)
			continue;
		cum += *n;
		/* The upper bound of the slot where the percentile falls. */
		__u64 upper = (2ULL << i) - 1;
		if (!s->p50_ns && cum * 100 >= total * 50)
			s->p50_ns = upper;
		if (!s->p90_ns && cum * 100 >= total * 90)
			s->p90_ns = upper;
		if (!s->p99_ns && cum * 100 >= total * 99)
			s->p99_ns = upper;
	}
	struct totals *t = bpf_map_lookup_elem(&totals, &zero);
	if (t) {
		s->max_ns = t->max_ns;
		s->mean_ns = t->count ? t->sum_ns / t->count : 0;
	}

	skelgen_print_log2_hist(&hist, "nsecs");
	skelgen_printf("%llu syscalls: p50 <= %llu ns, p90 <= %llu ns, p99 <= %llu ns, max %llu ns\n",
		       total, s->p50_ns, s->p90_ns, s->p99_ns, s->max_ns);
	host_metric("syscalls", total);
	host_metric("p50_ns", s->p50_ns);
	host_metric("p99_ns", s->p99_ns);

	/* Start the next interval. */
	for (__u32 i = 0; i < MAX_SLOTS; i++)
		bpf_map_update_elem(&hist, &i, &zero64, BPF_ANY);
	struct totals empty = {};
	bpf_map_update_elem(&totals, &zero, &empty, BPF_ANY);
	return 0;
}

char LICENSE[] SEC("license") = "GPL";
