//go:build ignore

// Atomics shared across CPUs. The tracepoint counts the getppid calls of one
// process into .bss with an atomic add while the user program drain, running
// in the Go process on another CPU, takes the count with an atomic exchange:
// no call may be lost between them. The buffer programs do the same on a
// buffer that goroutines share.
#include "common.h"
#include "skelgen.h"

const volatile __u32 target_tgid = 0;

__u64 hits;    /* added to by the kernel program */
__u64 drained; /* what drain took from hits */

SEC("tracepoint/syscalls/sys_enter_getppid")
int count_getppid(void *ctx)
{
	if (bpf_get_current_pid_tgid() >> 32 != target_tgid)
		return 0;
	__sync_fetch_and_add(&hits, 1);
	return 0;
}

SEC("ubpf/drain")
__u64 drain(void *ctx)
{
	__u64 took = __atomic_exchange_n(&hits, 0, __ATOMIC_SEQ_CST);

	__sync_fetch_and_add(&drained, took);
	return took;
}

/* The buffer's layout: counters the bump programs add to and the take
 * program empties into totals. */
struct counters {
	__u64 hits;        /* 64-bit add */
	__u64 drained;     /* what take moved out of hits */
	__u32 hits32;      /* 32-bit add */
	__u32 pad;
	__u64 cas;         /* incremented by a compare-and-exchange loop */
	__u64 drained32;   /* what take moved out of hits32 */
	__u64 parity;      /* xor'ed with 1 twice per bump: stays 0 */
};

static __always_inline __u64 bump_all(void *data, __u64 len)
{
	struct counters *c = data;
	__u64 old, seen;

	if (len < sizeof(*c))
		return 1;
	__sync_fetch_and_add(&c->hits, 1);
	__sync_fetch_and_add(&c->hits32, 1);
	__sync_fetch_and_xor(&c->parity, 1);
	/* An atomic read (a compare-and-exchange that changes nothing), then
	 * the increment, retried while another CPU got in between. */
	old = __sync_val_compare_and_swap(&c->cas, 0, 0);
	while ((seen = __sync_val_compare_and_swap(&c->cas, old, old + 1)) != old)
		old = seen;
	__sync_fetch_and_xor(&c->parity, 1);
	return 0;
}

/* Two bump programs, so that two can run at once through the skeleton,
 * which runs one call of a program at a time. */
SEC("ubpf/bump_a")
__u64 bump_a(__u8 *data, __u64 len)
{
	return bump_all(data, len);
}

SEC("ubpf/bump_b")
__u64 bump_b(__u8 *data, __u64 len)
{
	return bump_all(data, len);
}

SEC("ubpf/take")
__u64 take(__u8 *data, __u64 len)
{
	struct counters *c = (void *)data;

	if (len < sizeof(*c))
		return 1;
	__sync_fetch_and_add(&c->drained, __atomic_exchange_n(&c->hits, 0, __ATOMIC_SEQ_CST));
	__sync_fetch_and_add(&c->drained32, __atomic_exchange_n(&c->hits32, 0, __ATOMIC_SEQ_CST));
	return 0;
}

char LICENSE[] SEC("license") = "GPL";
