//go:build ignore

// A kernel program that fills a ring buffer at the kernel's rate (run
// through BPF_PROG_TEST_RUN, bpf_loop writing the records), and a record
// hook that sums what it reads: the consumers of make bench drain it.
#include "common.h"
#include "skelgen.h"

struct rec {
	__u64 seq;
	__u64 val;
};

struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 64 << 20);
} events SEC(".maps");

/* Options, set before load: the record's size (16, 64 or 256 bytes). */
const volatile __u32 rec_size = 64;

/* What fill writes: per_run records each run, their val summed. */
__u64 per_run;
__u64 written;
__u64 lost; /* records the ring buffer had no room for */
__u64 wsum;

/* What the record hook read. */
__u64 want;  /* it stops the tool at this many */
__u64 seen;
__u64 rsum;
__u64 first_ns, last_ns;

#define PUT(N)                                                        \
	do {                                                          \
		struct rec *e = bpf_ringbuf_reserve(&events, N, 0);   \
		if (!e) {                                             \
			__sync_fetch_and_add(&lost, 1);               \
			return 0;                                     \
		}                                                     \
		e->seq = i;                                           \
		e->val = v;                                           \
		bpf_ringbuf_submit(e, 0);                             \
	} while (0)

static long put(__u64 i, void *ctx)
{
	__u64 v = i * 2654435761ULL;
	if (rec_size == 16)
		PUT(16);
	else if (rec_size == 256)
		PUT(256);
	else
		PUT(64);
	__sync_fetch_and_add(&written, 1);
	__sync_fetch_and_add(&wsum, v);
	return 0;
}

SEC("syscall")
int fill(void *ctx)
{
	bpf_loop(per_run, put, 0, 0);
	return 0;
}

SEC("ubpf/record/events")
int on_event(struct rec *e, __u64 len)
{
	if (seen == 0)
		first_ns = bpf_ktime_get_ns();
	seen++;
	rsum += e->val;
	if (seen == want) {
		last_ns = bpf_ktime_get_ns();
		skelgen_stop(0);
	}
	return 0;
}

/* What the tool saw, for Go: its variables are gone once Serve returns. */
SEC("ubpf/end")
int end(void *ctx)
{
	skelgen_emit("written", written);
	skelgen_emit("lost", lost);
	skelgen_emit("wsum", wsum);
	skelgen_emit("seen", seen);
	skelgen_emit("rsum", rsum);
	skelgen_emit("first_ns", first_ns);
	skelgen_emit("last_ns", last_ns);
	return 0;
}

char LICENSE[] SEC("license") = "GPL";
