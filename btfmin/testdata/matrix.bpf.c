// Programs whose CO-RE relocations resolve on some kernels only, for
// TestCheckKernels: one reads a renamed member without a guard, one
// guards it with bpf_core_field_exists, one uses a type newer kernels
// have behind bpf_core_type_exists.
typedef unsigned char __u8;
typedef unsigned short __u16;
typedef unsigned int __u32;
typedef unsigned long long __u64;
typedef signed char __s8;
typedef short __s16;
typedef int __s32;
typedef long long __s64;
typedef __u16 __be16;
typedef __u32 __be32;
typedef __u32 __wsum;
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_core_read.h>

struct task_struct {
	int pid;
	unsigned int __state;
} __attribute__((preserve_access_index));

struct task_struct___o {
	long state;
} __attribute__((preserve_access_index));

struct bpf_iter_num {
	__u64 __opaque[1];
} __attribute__((preserve_access_index));

SEC("kprobe/unguarded")
int unguarded(void *ctx)
{
	struct task_struct *t = (void *)bpf_get_current_task();
	return BPF_CORE_READ(t, __state);
}

SEC("kprobe/guarded")
int guarded(void *ctx)
{
	struct task_struct *t = (void *)bpf_get_current_task();
	if (bpf_core_field_exists(t->__state))
		return BPF_CORE_READ(t, __state);
	return BPF_CORE_READ((struct task_struct___o *)t, state);
}

SEC("kprobe/newtype")
int newtype(void *ctx)
{
	if (bpf_core_type_exists(struct bpf_iter_num))
		return bpf_core_type_size(struct bpf_iter_num);
	return 0;
}

char LICENSE[] SEC("license") = "GPL";
