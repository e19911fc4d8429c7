// corekinds: one of each CO-RE relocation kind, by-value reads of structs
// with anonymous unions, array members and enum relocations.
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_core_read.h>
#include <bpf/bpf_tracing.h>

struct kinds {
	__u64 comm_size;
	__u64 has_iowait;
	__u64 iowait;
	__u64 prio_signed;
	__u64 local_id;
	__u64 target_id;
	__u64 has_iter;
	__u64 qstr_size;
	__u64 matches;
	__u64 has_ringbuf_output;
	__u64 tgid_type;
	__u64 nofile;
	__u64 name_len;
	__u64 comm3;
	__u64 syscall;
};

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct kinds);
} out SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 128);
	__type(key, __u32);
	__type(value, struct qstr);
} names SEC(".maps");

SEC("raw_tp/sys_enter")
int BPF_PROG(sys_enter, struct pt_regs *regs, long id)
{
	struct task_struct *task = bpf_get_current_task_btf();
	struct kinds k = {};
	struct qstr name;
	__u32 zero = 0, pid;
	char c;

	if (bpf_get_current_pid_tgid() >> 32 != bpf_get_current_pid_tgid())
		return 0;
	k.comm_size = bpf_core_field_size(task->comm);
	k.has_iowait = bpf_core_field_exists(task->in_iowait);
	k.iowait = BPF_CORE_READ_BITFIELD(task, in_iowait);
	k.prio_signed = __builtin_preserve_field_info(task->prio, BPF_FIELD_SIGNED);
	k.local_id = bpf_core_type_id_local(struct task_struct);
	k.target_id = bpf_core_type_id_kernel(struct task_struct);
	k.has_iter = bpf_core_type_exists(struct bpf_iter_num);
	k.qstr_size = bpf_core_type_size(struct qstr);
	k.matches = bpf_core_type_matches(struct trace_event_raw_sys_enter);
	k.has_ringbuf_output = bpf_core_enum_value_exists(enum bpf_func_id, BPF_FUNC_ringbuf_output);
	k.tgid_type = bpf_core_enum_value(enum pid_type, PIDTYPE_TGID);
	k.nofile = BPF_CORE_READ(task, signal, rlim[7].rlim_cur);
	bpf_core_read(&c, 1, &task->comm[3]);
	k.comm3 = c;
	k.syscall = id;

	name = BPF_CORE_READ(task, mm, exe_file, f_path.dentry, d_name);
	k.name_len = name.len;
	pid = task->pid;
	bpf_map_update_elem(&names, &pid, &name, BPF_ANY);
	bpf_map_update_elem(&out, &zero, &k, BPF_ANY);
	return 0;
}

char LICENSE[] SEC("license") = "GPL";
