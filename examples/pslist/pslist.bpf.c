//go:build ignore

// pslist: a BPF task iterator writes one record per process (or per thread)
// into the iterator's output, which the Go side reads as typed records.
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_core_read.h>
#include <stdbool.h>

/* Only the fields read, relocated against the running kernel (CO-RE). */
struct seq_file;

struct bpf_iter_meta {
	struct seq_file *seq;
	__u64 session_id;
	__u64 seq_num;
} __attribute__((preserve_access_index));

typedef struct {
	unsigned int val;
} kuid_t;

struct cred {
	kuid_t uid;
} __attribute__((preserve_access_index));

struct signal_struct {
	int nr_threads;
} __attribute__((preserve_access_index));

struct task_struct {
	int pid;
	int tgid;
	char comm[16];
	struct task_struct *real_parent;
	const struct cred *cred;
	struct signal_struct *signal;
} __attribute__((preserve_access_index));

struct bpf_iter__task {
	struct bpf_iter_meta *meta;
	struct task_struct *task;
} __attribute__((preserve_access_index));

#define COMM_LEN 16

/* One record of the output. */
struct proc {
	__u32 pid;
	__u32 tid;
	__u32 ppid;
	__u32 uid;
	__u32 threads;
	char comm[COMM_LEN];
};

/* List every thread, not only each process's main thread; set before load. */
const volatile bool threads = false;

SEC("iter/task")
int list_tasks(struct bpf_iter__task *ctx)
{
	struct seq_file *seq = ctx->meta->seq;
	struct task_struct *task = ctx->task;
	struct proc p = {};

	if (!task)
		return 0;
	if (!threads && task->pid != task->tgid)
		return 0;
	p.pid = task->tgid;
	p.tid = task->pid;
	p.ppid = BPF_CORE_READ(task, real_parent, tgid);
	p.uid = BPF_CORE_READ(task, cred, uid.val);
	p.threads = BPF_CORE_READ(task, signal, nr_threads);
	__builtin_memcpy(p.comm, task->comm, sizeof(p.comm));
	bpf_seq_write(seq, &p, sizeof(p));
	return 0;
}

char LICENSE[] SEC("license") = "GPL";
