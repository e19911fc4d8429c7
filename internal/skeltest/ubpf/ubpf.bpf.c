//go:build ignore

// Kernel and user-space programs in one object. The tracepoint counts
// getppid calls per process into maps and globals; the ubpf/ programs run in
// the Go process, read what the kernel side wrote, call host functions and
// the runtime's built-ins, and write results into their context.
#include "common.h"
#include "skelgen.h"

struct report_ctx {
	__u32 pid;
	__u32 seen;
	__u64 count;
	__u64 shared_hits;
	__u64 now;
	__s32 emit_ret;
	__u32 pad;
};

struct sample {
	__u64 value;
	__u32 slot;
	__u32 flags;
};

/* Shared with the kernel program: a hash map (copy semantics), an mmapable
 * array (shared live) and .bss. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 1024);
	__type(key, __u32);
	__type(value, __u64);
} counts SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 4);
	__uint(map_flags, BPF_F_MMAPABLE);
	__type(key, __u32);
	__type(value, __u64);
} shared SEC(".maps");

__u64 kernel_hits;

/* Only the user programs use this one: a user-space map. */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 16);
	__type(key, __u32);
	__type(value, __u64);
} user_hist SEC(".maps");

/* Host functions: the skeleton's host interface. */
extern __u64 host_now(void) __ksym;
extern int host_emit(const char *name, __u64 value) __ksym;
extern void host_record(struct sample *s) __ksym;

SEC("tracepoint/syscalls/sys_enter_getppid")
int count_getppid(void *ctx)
{
	__u32 tgid = bpf_get_current_pid_tgid() >> 32, zero = 0;
	__u64 one = 1, *v = bpf_map_lookup_elem(&counts, &tgid);

	if (v)
		__sync_fetch_and_add(v, 1);
	else
		bpf_map_update_elem(&counts, &tgid, &one, BPF_NOEXIST);
	v = bpf_map_lookup_elem(&shared, &zero);
	if (v)
		__sync_fetch_and_add(v, 1);
	__sync_fetch_and_add(&kernel_hits, 1);
	return 0;
}

SEC("ubpf/report")
int report(struct report_ctx *ctx)
{
	__u32 zero = 0;
	__u64 *c = bpf_map_lookup_elem(&counts, &ctx->pid);

	if (c) {
		ctx->seen = 1;
		ctx->count = *c;
	}
	__u64 *s = bpf_map_lookup_elem(&shared, &zero);
	if (s)
		ctx->shared_hits = *s;
	ctx->now = host_now();
	ctx->emit_ret = host_emit("count", ctx->count);

	struct sample smp = { .value = ctx->count, .slot = 3 };
	host_record(&smp);
	for (__u32 i = 0; i < 16; i++) {
		__u64 n = (i * 7) % 5;
		bpf_map_update_elem(&user_hist, &i, &n, BPF_ANY);
	}
	skelgen_printf("pid %d: %llu calls, kernel_hits %llu, flags %x\n", ctx->pid, ctx->count, kernel_hits, smp.flags);
	skelgen_print_log2_hist(&user_hist, "usecs");
	skelgen_emit("kernel_hits", kernel_hits);
	bpf_printk("report done for %d", ctx->pid);
	return smp.flags;
}

/* Reads past the end of its context. */
SEC("ubpf/bad_read")
int bad_read(struct report_ctx *ctx)
{
	volatile __u32 i = 64;
	return *(__u32 *)((char *)ctx + i);
}

/* Never ends. */
SEC("ubpf/spin")
int spin(void *ctx)
{
	volatile __u64 n = 0;

	for (;;)
		n++;
	return 0;
}

char LICENSE[] SEC("license") = "GPL";
