//go:build ignore

// Iterators: each run prints one element into the iterator's seq_file.
#include "common.h"
#include <bpf/bpf_tracing.h>

/* The kernel's types the programs read, relocated against the running
 * kernel (CO-RE). */
struct seq_file;

struct bpf_iter_meta {
	struct seq_file *seq;
	__u64 session_id;
	__u64 seq_num;
} __attribute__((preserve_access_index));

struct task_struct {
	int pid;
	int tgid;
	char comm[16];
} __attribute__((preserve_access_index));

struct bpf_map {
	__u32 id;
	char name[16];
} __attribute__((preserve_access_index));

struct kernfs_node {
	__u64 id;
} __attribute__((preserve_access_index));

struct cgroup {
	struct kernfs_node *kn;
	int level;
} __attribute__((preserve_access_index));

struct bpf_iter__cgroup {
	struct bpf_iter_meta *meta;
	struct cgroup *cgroup;
} __attribute__((preserve_access_index));

struct bpf_iter__task {
	struct bpf_iter_meta *meta;
	struct task_struct *task;
} __attribute__((preserve_access_index));

struct bpf_iter__bpf_map_elem {
	struct bpf_iter_meta *meta;
	struct bpf_map *map;
	void *key;
	void *value;
} __attribute__((preserve_access_index));

struct bpf_iter__bpf_map {
	struct bpf_iter_meta *meta;
	struct bpf_map *map;
} __attribute__((preserve_access_index));

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 64);
	__type(key, __u32);
	__type(value, __u64);
} counts SEC(".maps");

/* One line per thread: tgid, tid, command. */
SEC("iter/task")
int dump_task(struct bpf_iter__task *ctx)
{
	struct seq_file *seq = ctx->meta->seq;
	struct task_struct *task = ctx->task;

	if (!task)
		return 0;
	BPF_SEQ_PRINTF(seq, "%d %d %s\n", task->tgid, task->pid, task->comm);
	return 0;
}

/* One line per element of the map the iterator is given: key=value. */
SEC("iter/bpf_map_elem")
int dump_counts(struct bpf_iter__bpf_map_elem *ctx)
{
	struct seq_file *seq = ctx->meta->seq;
	__u32 *key = ctx->key;
	__u64 *value = ctx->value;

	if (!key || !value)
		return 0;
	BPF_SEQ_PRINTF(seq, "%u=%llu\n", *key, *value);
	return 0;
}

/* One line per map of the system: id and name. */
SEC("iter/bpf_map")
int dump_maps(struct bpf_iter__bpf_map *ctx)
{
	struct seq_file *seq = ctx->meta->seq;
	struct bpf_map *map = ctx->map;

	if (!map)
		return 0;
	BPF_SEQ_PRINTF(seq, "%u %s\n", map->id, map->name);
	return 0;
}

/* One line per cgroup of the walk: level and id. */
SEC("iter/cgroup")
int dump_cgroup(struct bpf_iter__cgroup *ctx)
{
	struct seq_file *seq = ctx->meta->seq;
	struct cgroup *cg = ctx->cgroup;

	if (!cg)
		return 0;
	BPF_SEQ_PRINTF(seq, "%d %llu\n", cg->level, cg->kn->id);
	return 0;
}

char LICENSE[] SEC("license") = "GPL";
