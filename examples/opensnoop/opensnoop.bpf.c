//go:build ignore

// opensnoop: every open, with the file name and the result. Where the
// kernel allows BPF trampolines one fexit program on do_sys_openat2 sees
// the arguments and the result together; elsewhere (no trampolines) the
// tool switches it off before load and uses the openat tracepoint pair.
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>
#include "syscall_tp.h"
#include <bpf/bpf_tracing.h>
#include <bpf/bpf_core_read.h>
#include <stdbool.h>

#define NAME_MAX_LEN 256

struct open_how {
	__u64 flags;
} __attribute__((preserve_access_index));

/* Options, set before load. */
const volatile __u32 target_tgid = 0;
const volatile bool failed_only = false;

/* An open in progress on the tracepoint path: the arguments at entry. */
struct args {
	const char *fname;
	__s32 flags;
};

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 10240);
	__type(key, __u32);
	__type(value, struct args);
} start SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 256 * 1024);
} events SEC(".maps");

/* The record. Only functions use it, so it is not in the object's BTF:
 * skelgen finds it in this source and types the reader by it. */
struct event {
	__u64 ts_ns;
	__u32 pid;
	__u32 tid;
	__u32 uid;
	__s32 ret;
	__s32 flags;
	char comm[16];
	char fname[NAME_MAX_LEN];
};

static __always_inline bool traced(__u64 id)
{
	return target_tgid == 0 || (id >> 32) == target_tgid;
}

static __always_inline void emit(__u64 id, const char *fname, int flags, long ret)
{
	if (failed_only && ret >= 0)
		return;
	struct event *e = bpf_ringbuf_reserve(&events, sizeof(*e), 0);
	if (!e)
		return;
	e->ts_ns = bpf_ktime_get_ns();
	e->pid = id >> 32;
	e->tid = (__u32)id;
	e->uid = (__u32)bpf_get_current_uid_gid();
	e->ret = ret;
	e->flags = flags;
	bpf_get_current_comm(e->comm, sizeof(e->comm));
	bpf_probe_read_user_str(e->fname, sizeof(e->fname), fname);
	bpf_ringbuf_submit(e, 0);
}

SEC("fexit/do_sys_openat2")
int BPF_PROG(fexit_openat2, int dfd, const char *filename, struct open_how *how, long ret)
{
	__u64 id = bpf_get_current_pid_tgid();
	if (traced(id))
		emit(id, filename, BPF_CORE_READ(how, flags), ret);
	return 0;
}

SEC("tracepoint/syscalls/sys_enter_openat")
int enter_openat(struct sys_enter_ctx *ctx)
{
	__u64 id = bpf_get_current_pid_tgid();
	if (!traced(id))
		return 0;
	__u32 tid = (__u32)id;
	struct args a = {.fname = (const char *)ctx->args[1], .flags = (__s32)ctx->args[2]};
	bpf_map_update_elem(&start, &tid, &a, BPF_ANY);
	return 0;
}

SEC("tracepoint/syscalls/sys_exit_openat")
int exit_openat(struct sys_exit_ctx *ctx)
{
	__u64 id = bpf_get_current_pid_tgid();
	__u32 tid = (__u32)id;
	struct args *a = bpf_map_lookup_elem(&start, &tid);
	if (!a)
		return 0;
	emit(id, a->fname, a->flags, ctx->ret);
	bpf_map_delete_elem(&start, &tid);
	return 0;
}

char LICENSE[] SEC("license") = "GPL";
