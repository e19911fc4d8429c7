// filetrace: which executable opens which file. Written against the full
// vmlinux.h: BPF_KPROBE/BPF_KRETPROBE arguments, CO-RE reads through long
// pointer chains (task → mm → exe_file → f_path.dentry → d_name.name), a
// map keyed and sized by kernel enums, and an enum constant as a plain
// value.
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_core_read.h>
#include <bpf/bpf_tracing.h>

struct file_event {
	__u32 pid;
	__u32 mode;
	__u64 ino;
	char exe[32];
	char name[32];
};

/* One counter per pid type: key and size come from enum pid_type. */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, PIDTYPE_MAX);
	__type(key, enum pid_type);
	__type(value, __u64);
} by_pid_type SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 64 * 1024);
} file_events SEC(".maps");

SEC("kprobe/do_filp_open")
int BPF_KPROBE(on_open, int dfd, struct filename *pathname)
{
	struct task_struct *task = (struct task_struct *)bpf_get_current_task();
	struct file_event *e;
	enum pid_type kind = PIDTYPE_TGID;
	__u64 *n;

	n = bpf_map_lookup_elem(&by_pid_type, &kind);
	if (n)
		__sync_fetch_and_add(n, 1);
	e = bpf_ringbuf_reserve(&file_events, sizeof(*e), 0);
	if (!e)
		return 0;
	e->pid = BPF_CORE_READ(task, tgid);
	e->ino = BPF_CORE_READ(task, mm, exe_file, f_inode, i_ino);
	e->mode = BPF_CORE_READ(task, mm, exe_file, f_path.dentry, d_inode, i_mode);
	BPF_CORE_READ_STR_INTO(&e->exe, task, mm, exe_file, f_path.dentry, d_name.name);
	bpf_probe_read_kernel_str(e->name, sizeof(e->name), BPF_CORE_READ(pathname, name));
	bpf_ringbuf_submit(e, 0);
	return 0;
}

SEC("kretprobe/do_filp_open")
int BPF_KRETPROBE(on_open_ret, struct file *f)
{
	if (!f)
		return 0;
	return BPF_CORE_READ(f, f_flags) & 1;
}

char LICENSE[] SEC("license") = "GPL";
