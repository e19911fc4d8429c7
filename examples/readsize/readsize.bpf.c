//go:build ignore

// readsize: a log2 histogram of the bytes read() returns, per interval.
// The kernel side counts; the hooks, run by the skeleton's Serve in the Go
// process, do the rest from the kernel's maps: begin prints the banner,
// the interval hook prints the histogram and a summary when an interval
// has passed and starts the next one, and end prints the last report.
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>
#include "syscall_tp.h"
#include "skelgen.h"

#define MAX_SLOTS 32

/* Options, set before load. */
const volatile __u32 target_tgid = 0;
const volatile __u64 min_bytes = 0;
const volatile __u64 interval_ns = 1000000000;

/* hist[i] counts reads of [2^i, 2^(i+1)) bytes; slot 0 also holds 0. */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, MAX_SLOTS);
	__type(key, __u32);
	__type(value, __u64);
} hist SEC(".maps");

struct totals {
	__u64 reads;
	__u64 bytes;
};

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct totals);
} totals SEC(".maps");

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

SEC("tracepoint/syscalls/sys_exit_read")
int read_done(struct sys_exit_ctx *ctx)
{
	__u64 id = bpf_get_current_pid_tgid();
	if (target_tgid && (id >> 32) != target_tgid)
		return 0;
	if (ctx->ret < 0 || (__u64)ctx->ret < min_bytes)
		return 0;
	__u32 slot = log2_u64(ctx->ret), zero = 0;
	if (slot >= MAX_SLOTS)
		slot = MAX_SLOTS - 1;
	__u64 *n = bpf_map_lookup_elem(&hist, &slot);
	if (n)
		__sync_fetch_and_add(n, 1);
	struct totals *t = bpf_map_lookup_elem(&totals, &zero);
	if (t) {
		__sync_fetch_and_add(&t->reads, 1);
		__sync_fetch_and_add(&t->bytes, ctx->ret);
	}
	return 0;
}

/* When the current interval began. */
__u64 interval_start;

SEC("ubpf/begin")
int begin(void *ctx)
{
	interval_start = bpf_ktime_get_ns();
	skelgen_printf("Tracing read() sizes... Hit Ctrl-C to end.\n");
	return 0;
}

/* Prints the interval's histogram and summary, and starts the next. */
static int report(void)
{
	__u32 zero = 0;
	__u64 zero64 = 0;
	struct totals *t = bpf_map_lookup_elem(&totals, &zero);
	if (!t)
		return 1;
	skelgen_printf("\n");
	if (t->reads == 0) {
		skelgen_printf("no reads in this interval\n");
		return 0;
	}
	skelgen_print_log2_hist(&hist, "bytes");
	skelgen_printf("%llu reads, %llu bytes, mean %llu bytes\n", t->reads, t->bytes, t->bytes / t->reads);

	for (__u32 i = 0; i < MAX_SLOTS; i++)
		bpf_map_update_elem(&hist, &i, &zero64, BPF_ANY);
	struct totals empty = {};
	bpf_map_update_elem(&totals, &zero, &empty, BPF_ANY);
	return 0;
}

/* Ticks often; reports when interval_ns has passed. */
SEC("ubpf/interval/100ms")
int tick(void *ctx)
{
	__u64 now = bpf_ktime_get_ns();
	if (now - interval_start < interval_ns)
		return 0;
	int err = report();
	interval_start = now;
	return err;
}

SEC("ubpf/end")
int end(void *ctx)
{
	return report();
}

char LICENSE[] SEC("license") = "GPL";
