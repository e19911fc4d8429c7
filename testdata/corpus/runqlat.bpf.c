// runqlat: run-queue latency histogram. tp_btf programs take BPF_PROG
// arguments; the task state field changed its name in 5.14, so both
// layouts are described as ___flavor structs and chosen at load time.
// The kfuncs are __ksym externs.
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_core_read.h>
#include <bpf/bpf_tracing.h>

#define MAX_SLOTS 26
#define TASK_RUNNING 0

struct task_struct___o {
	volatile long int state;
} __attribute__((preserve_access_index));

struct task_struct___x {
	unsigned int __state;
} __attribute__((preserve_access_index));

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 10240);
	__type(key, u32);
	__type(value, u64);
} start SEC(".maps");

__u64 hist[MAX_SLOTS] = {};
__u64 max_cpus_allowed = 0;

extern struct task_struct *bpf_task_from_pid(s32 pid) __ksym;
extern void bpf_task_release(struct task_struct *p) __ksym;

static __always_inline unsigned int get_task_state(void *task)
{
	struct task_struct___x *t = task;

	if (bpf_core_field_exists(t->__state))
		return BPF_CORE_READ(t, __state);
	return BPF_CORE_READ((struct task_struct___o *)task, state);
}

static __always_inline int trace_enqueue(u32 tgid, u32 pid)
{
	u64 ts;

	if (!pid)
		return 0;
	ts = bpf_ktime_get_ns();
	bpf_map_update_elem(&start, &pid, &ts, BPF_ANY);
	return 0;
}

static __always_inline unsigned int log2l(u64 v)
{
	unsigned int r = 0;

	while (v > 1 && r < MAX_SLOTS - 1) {
		v >>= 1;
		r++;
	}
	return r;
}

SEC("tp_btf/sched_wakeup")
int BPF_PROG(handle_sched_wakeup, struct task_struct *p)
{
	return trace_enqueue(p->tgid, p->pid);
}

SEC("tp_btf/sched_wakeup_new")
int BPF_PROG(handle_sched_wakeup_new, struct task_struct *p)
{
	return trace_enqueue(p->tgid, p->pid);
}

SEC("tp_btf/sched_switch")
int BPF_PROG(handle_sched_switch, bool preempt, struct task_struct *prev,
	     struct task_struct *next)
{
	struct task_struct *t;
	u64 *tsp, delta;
	u32 pid;

	if (get_task_state(prev) == TASK_RUNNING)
		trace_enqueue(prev->tgid, prev->pid);

	t = bpf_task_from_pid(next->tgid);
	if (t) {
		if (t->nr_cpus_allowed > max_cpus_allowed)
			max_cpus_allowed = t->nr_cpus_allowed;
		bpf_task_release(t);
	}

	pid = next->pid;
	tsp = bpf_map_lookup_elem(&start, &pid);
	if (!tsp)
		return 0;
	delta = (bpf_ktime_get_ns() - *tsp) / 1000;
	__sync_fetch_and_add(&hist[log2l(delta)], 1);
	bpf_map_delete_elem(&start, &pid);
	return 0;
}

char LICENSE[] SEC("license") = "GPL";
