//go:build ignore

// A CO-RE tracer built on the minimal header skelgen keeps beside the
// skeleton (-header vmlinux.h): no kernel tree, no 3 MB vmlinux.h.
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_core_read.h>

struct exec_info {
	__u32 pid;
	__u32 ppid;
	__u32 uid;
	char comm[16];
};

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 1024);
	__type(key, __u32);
	__type(value, struct exec_info);
} last_exec SEC(".maps");

SEC("tracepoint/sched/sched_process_exec")
int on_exec(void *ctx)
{
	struct task_struct *task = (struct task_struct *)bpf_get_current_task();
	struct exec_info info = {};

	info.pid = BPF_CORE_READ(task, tgid);
	info.ppid = BPF_CORE_READ(task, real_parent, tgid);
	info.uid = BPF_CORE_READ(task, cred, uid.val);
	BPF_CORE_READ_STR_INTO(&info.comm, task, comm);
	bpf_map_update_elem(&last_exec, &info.ppid, &info, 0 /* BPF_ANY */);
	return 0;
}

char LICENSE[] SEC("license") = "GPL";
