//go:build ignore

// fentry/fexit programs: loadable only on kernels with BPF trampolines. The
// tracepoint program counts the same calls where they are refused: a tool
// switches the fentry programs off (autoload) and attaches it instead.
#include "common.h"
#include <bpf/bpf_tracing.h>

const volatile __u32 target_tgid = 0;

__u64 entries, exits, tp_entries;

/* libbpf accepts .kconfig externs declared with typedef'd integers. */
extern __u32 LINUX_KERNEL_VERSION __kconfig;
__u32 seen_version;

/* Calls of the target process only, counted atomically: other processes
 * unlink files too, on other CPUs. */
static __always_inline int ours(void)
{
	return !target_tgid || (bpf_get_current_pid_tgid() >> 32) == target_tgid;
}

SEC("fentry/do_unlinkat")
int BPF_PROG(enter_unlinkat)
{
	if (ours())
		__sync_fetch_and_add(&entries, 1);
	return 0;
}

SEC("fexit/do_unlinkat")
int BPF_PROG(exit_unlinkat)
{
	if (ours())
		__sync_fetch_and_add(&exits, 1);
	return 0;
}

SEC("tracepoint/syscalls/sys_enter_unlinkat")
int tp_unlinkat(void *ctx)
{
	if (!ours())
		return 0;
	__sync_fetch_and_add(&tp_entries, 1);
	seen_version = LINUX_KERNEL_VERSION;
	return 0;
}

char LICENSE[] SEC("license") = "GPL";
