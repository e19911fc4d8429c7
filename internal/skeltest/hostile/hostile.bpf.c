//go:build ignore

// Programs that try to hurt their Go host: writes to read-only maps,
// built-ins over huge maps, a counter many goroutines bump at once. The
// tests run them through both engines, in process and with the kernel.
#include "common.h"
#include "skelgen.h"

/* Read-only for programs, shared with the kernel program, mmapped. */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(map_flags, BPF_F_MMAPABLE | BPF_F_RDONLY_PROG);
	__uint(max_entries, 4);
	__type(key, __u32);
	__type(value, __u64);
} ro_arr SEC(".maps");

/* User-space only: as large as a map can be declared; allocated as it
 * grows, as the kernel allows only such a hash map to be this large. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__uint(max_entries, 0xffffffff);
	__type(key, __u32);
	__type(value, __u64);
} huge SEC(".maps");

/* User-space only: what the concurrency test bumps and deletes. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 4096);
	__type(key, __u32);
	__type(value, __u64);
} counts SEC(".maps");

/* A kernel hash map the test freezes. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 16);
	__type(key, __u32);
	__type(value, __u64);
} khash SEC(".maps");

const volatile __u64 limit = 7;
__u64 kernel_hits;

SEC("tracepoint/syscalls/sys_enter_getppid")
int kern(void *ctx)
{
	__u32 k = 0;
	__u64 *v = bpf_map_lookup_elem(&ro_arr, &k);
	if (v && *v < limit)
		kernel_hits++;
	v = bpf_map_lookup_elem(&khash, &k);
	if (v)
		kernel_hits++;
	return 0;
}

SEC("ubpf/update_khash")
long update_khash(void *ctx)
{
	__u32 k = 2;
	__u64 v = 3;
	return bpf_map_update_elem(&khash, &k, &v, BPF_ANY);
}

SEC("ubpf/write_ro_lookup")
int write_ro_lookup(void *ctx)
{
	__u32 k = 1;
	__u64 *v = bpf_map_lookup_elem(&ro_arr, &k);
	if (!v)
		return 1;
	*v = 1;
	return 0;
}

SEC("ubpf/update_ro")
long update_ro(void *ctx)
{
	__u32 k = 1;
	__u64 one = 1;
	return bpf_map_update_elem(&ro_arr, &k, &one, BPF_ANY);
}

SEC("ubpf/write_rodata")
int write_rodata(void *ctx)
{
	*(volatile __u64 *)&limit = 99;
	return 0;
}

SEC("ubpf/read_null_minus_one")
int read_null_minus_one(void *ctx)
{
	volatile char *p = (char *)0;
	return p[-1];
}

SEC("ubpf/huge_hist")
int huge_hist(void *ctx)
{
	__u32 k = 3;
	__u64 v = 5;
	bpf_map_update_elem(&huge, &k, &v, BPF_ANY);
	k = 0xfffffff0;
	bpf_map_update_elem(&huge, &k, &v, BPF_ANY);
	skelgen_print_log2_hist(&huge, "ns");
	skelgen_print_linear_hist(&huge, 0, 1, "slot");
	return 0;
}

struct bump_ctx {
	__u32 key;
	__u32 del;
	__u64 seen;
};

/* Bumps counts[key] (inserting it), reads it back, and with del set
 * deletes it again. */
SEC("ubpf/bump")
int bump(struct bump_ctx *c)
{
	__u32 k = c->key;
	__u64 one = 1;
	__u64 *v = bpf_map_lookup_elem(&counts, &k);
	if (v)
		__sync_fetch_and_add(v, 1);
	else
		bpf_map_update_elem(&counts, &k, &one, BPF_NOEXIST);
	v = bpf_map_lookup_elem(&counts, &k);
	if (v)
		c->seen = *v;
	if (c->del)
		bpf_map_delete_elem(&counts, &k);
	return 0;
}

/* The host's code in the middle of a run: the stress test's host function
 * runs bump (another program) or via_host itself again, and may meet a
 * Close of the object. */
extern __u64 host_bump(__u32 key, __u32 depth) __ksym;

SEC("ubpf/via_host")
int via_host(struct bump_ctx *c)
{
	c->seen = host_bump(c->key, c->del);
	return 0;
}
