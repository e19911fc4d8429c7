//go:build ignore

// execsnoop: every execve, with its arguments. The record is a fixed header
// and then only as many bytes of arguments as there are: the ring buffer
// carries variable-length records, which the typed reader decodes with the
// tail zero.
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>
#include "syscall_tp.h"
#include <bpf/bpf_core_read.h>
#include <stdbool.h>

#define ARGS_MAX 1024 /* bytes of arguments kept */
#define ARG_LEN 128   /* bytes of one argument kept */
#define MAX_ARGS 20
#define NO_UID ((__u32)-1)

/* Only the fields read, relocated against the running kernel (CO-RE). */
struct task_struct {
	struct task_struct *real_parent;
	int tgid;
} __attribute__((preserve_access_index));

/* Options, set before load. */
const volatile __u32 target_uid = NO_UID;
const volatile bool ignore_failed = false;
const volatile __u32 max_args = MAX_ARGS;

struct event {
	__u32 pid;
	__u32 ppid;
	__u32 uid;
	__s32 retval;
	__u32 args_count;
	__u32 args_size; /* bytes of args sent: NUL-separated strings */
	char comm[16];
	char args[ARGS_MAX];
};

/* The event being built, from execve's entry to its exit, by thread. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 10240);
	__type(key, __u32);
	__type(value, struct event);
} execs SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 256 * 1024);
} events SEC(".maps");

static const struct event empty;

SEC("tracepoint/syscalls/sys_enter_execve")
int enter_execve(struct sys_enter_ctx *ctx)
{
	__u64 id = bpf_get_current_pid_tgid();
	__u32 tid = (__u32)id;
	__u32 uid = (__u32)bpf_get_current_uid_gid();

	if (target_uid != NO_UID && uid != target_uid)
		return 0;
	if (bpf_map_update_elem(&execs, &tid, &empty, BPF_NOEXIST))
		return 0;
	struct event *e = bpf_map_lookup_elem(&execs, &tid);
	if (!e)
		return 0;
	struct task_struct *task = (struct task_struct *)bpf_get_current_task();
	e->pid = id >> 32;
	e->ppid = BPF_CORE_READ(task, real_parent, tgid);
	e->uid = uid;

	/* The file name first, then argv[1...]. */
	long n = bpf_probe_read_user_str(e->args, ARG_LEN, (const void *)ctx->args[0]);
	if (n <= 0)
		return 0;
	e->args_size = n;
	e->args_count = 1;
	const char *const *argv = (const char *const *)ctx->args[1];
	for (int i = 1; i < MAX_ARGS && i < max_args; i++) {
		const char *arg = 0;
		if (bpf_probe_read_user(&arg, sizeof(arg), &argv[i]) || !arg)
			break;
		__u32 off = e->args_size;
		if (off > ARGS_MAX - ARG_LEN)
			break;
		n = bpf_probe_read_user_str(&e->args[off], ARG_LEN, arg);
		if (n <= 0)
			break;
		e->args_size += n;
		e->args_count++;
	}
	return 0;
}

SEC("tracepoint/syscalls/sys_exit_execve")
int exit_execve(struct sys_exit_ctx *ctx)
{
	__u32 tid = (__u32)bpf_get_current_pid_tgid();
	struct event *e = bpf_map_lookup_elem(&execs, &tid);
	if (!e)
		return 0;
	e->retval = ctx->ret;
	if (!ignore_failed || ctx->ret >= 0) {
		bpf_get_current_comm(e->comm, sizeof(e->comm));
		__u64 len = __builtin_offsetof(struct event, args) + e->args_size;
		if (len > sizeof(*e))
			len = sizeof(*e);
		bpf_ringbuf_output(&events, e, len, 0);
	}
	bpf_map_delete_elem(&execs, &tid);
	return 0;
}

char LICENSE[] SEC("license") = "GPL";
