// execsnoop: reports every exec with its parent, credentials and argument
// area. Reads the task through CO-RE and a tracepoint context by layout.
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_core_read.h>

struct event {
	__u32 pid;
	__u32 tid;
	__u32 ppid;
	__u32 uid;
	__u32 gid;
	__u32 pidns;
	__u64 start_time;
	__u64 args_size;
	__u32 iowait;
	__u32 flags;
	__s32 exit_signal;
	__s32 prio;
	char comm[TASK_COMM_LEN];
	char pcomm[TASK_COMM_LEN];
};

struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 256 * 1024);
} events SEC(".maps");

const volatile __u32 target_ppid = 0;
__u64 exec_count = 0;

SEC("tp/sched/sched_process_exec")
int handle_exec(struct trace_event_raw_sched_process_exec *ctx)
{
	struct task_struct *task = (struct task_struct *)bpf_get_current_task();
	struct event *e;
	__u32 ppid;

	ppid = BPF_CORE_READ(task, real_parent, tgid);
	if (target_ppid && ppid != target_ppid)
		return 0;
	__sync_fetch_and_add(&exec_count, 1);

	e = bpf_ringbuf_reserve(&events, sizeof(*e), 0);
	if (!e)
		return 0;
	e->pid = BPF_CORE_READ(task, tgid);
	e->tid = BPF_CORE_READ(task, pid);
	e->ppid = ppid;
	e->uid = BPF_CORE_READ(task, cred, uid.val);
	e->gid = BPF_CORE_READ(task, cred, gid.val);
	e->pidns = BPF_CORE_READ(task, nsproxy, pid_ns_for_children, ns.inum);
	e->start_time = BPF_CORE_READ(task, start_time);
	e->args_size = BPF_CORE_READ(task, mm, arg_end) - BPF_CORE_READ(task, mm, arg_start);
	e->iowait = BPF_CORE_READ_BITFIELD_PROBED(task, in_iowait);
	e->flags = BPF_CORE_READ(task, flags);
	e->exit_signal = BPF_CORE_READ(task, exit_signal);
	e->prio = BPF_CORE_READ(task, prio);
	bpf_get_current_comm(&e->comm, sizeof(e->comm));
	BPF_CORE_READ_STR_INTO(&e->pcomm, task, real_parent, comm);
	if (ctx->pid != e->tid)
		e->flags |= 0x80000000;
	bpf_ringbuf_submit(e, 0);
	return 0;
}

char LICENSE[] SEC("license") = "GPL";
