//go:build ignore

// Externs as libbpf resolves them: __weak ones the kernel lacks are zero.
#include "common.h"
#include <stdbool.h>

/* The registers usdt.bpf.h reads, relocated against the kernel's types:
 * these stand in for vmlinux.h, whose names bpf_tracing.h then uses. */
#define __VMLINUX_H__
#if defined(__TARGET_ARCH_x86)
struct pt_regs {
	unsigned long r15, r14, r13, r12, bp, bx, r11, r10, r9, r8;
	unsigned long ax, cx, dx, si, di, orig_ax, ip, cs, flags, sp, ss;
} __attribute__((preserve_access_index));
#elif defined(__TARGET_ARCH_arm64)
struct user_pt_regs {
	__u64 regs[31], sp, pc, pstate;
} __attribute__((preserve_access_index));
#endif

#include <bpf/bpf_tracing.h>
#include <bpf/usdt.bpf.h>

/* Present on every kernel that loads BPF: 1 (y). */
extern _Bool CONFIG_BPF_SYSCALL __kconfig __weak;
/* y, m or n as libbpf's tristate enum. */
extern enum libbpf_tristate CONFIG_BPF_JIT __kconfig __weak;
/* A number and a string of the kernel's configuration. */
extern int CONFIG_HZ __kconfig __weak;
extern char CONFIG_DEFAULT_HOSTNAME[16] __kconfig __weak;
/* No kernel has these: weak, they read 0. */
extern int CONFIG_SKELGEN_ABSENT __kconfig __weak;
extern __u64 LINUX_SKELGEN_ABSENT __kconfig __weak;
/* Filled in by the loader itself, as libbpf does. */
extern const _Bool LINUX_HAS_BPF_COOKIE __kconfig;
extern _Bool LINUX_HAS_SYSCALL_WRAPPER __kconfig;
/* A strong extern no kernel has: loading its program fails. */
extern int CONFIG_SKELGEN_REQUIRED __kconfig;

/* Typeless kernel symbols: one every kernel has (the start of its text), one
 * none has. */
extern void _text __ksym __weak;
extern void skelgen_absent_ksym __ksym __weak;
/* The same as libbpf's users often spell them: const void. */
extern const void _etext __ksym __weak;
extern const void skelgen_absent_const __ksym __weak;
/* A kfunc no kernel has. */
extern int skelgen_absent_kfunc(void) __ksym __weak;

__u64 bpf_syscall, bpf_jit, hz, absent, linux_absent, has_cookie, has_wrapper;
__u64 ksym_present, ksym_absent, kfunc_absent, required;
__u64 const_ksym_present, const_ksym_absent;
char hostname[16];

SEC("xdp")
int read_externs(struct xdp_md *ctx)
{
	bpf_syscall = CONFIG_BPF_SYSCALL;
	bpf_jit = CONFIG_BPF_JIT;
	hz = CONFIG_HZ;
	__builtin_memcpy(hostname, CONFIG_DEFAULT_HOSTNAME, sizeof(hostname));
	absent = CONFIG_SKELGEN_ABSENT;
	linux_absent = LINUX_SKELGEN_ABSENT;
	has_cookie = LINUX_HAS_BPF_COOKIE;
	has_wrapper = LINUX_HAS_SYSCALL_WRAPPER;
	ksym_present = (__u64)&_text;
	ksym_absent = (__u64)&skelgen_absent_ksym;
	const_ksym_present = (__u64)&_etext;
	const_ksym_absent = (__u64)&skelgen_absent_const;
	kfunc_absent = (__u64)skelgen_absent_kfunc;
	return XDP_PASS;
}

SEC("xdp")
int read_required(struct xdp_md *ctx)
{
	required = CONFIG_SKELGEN_REQUIRED;
	return XDP_PASS;
}

/* The same externs read by user-space programs: as the kernel programs
 * read them, in process or beside the kernel. */
struct externs {
	__u64 bpf_syscall, bpf_jit, hz, absent, linux_absent, has_cookie, has_wrapper;
	char hostname[16];
};

SEC("ubpf/user_externs")
int user_externs(struct externs *e)
{
	e->bpf_syscall = CONFIG_BPF_SYSCALL;
	e->bpf_jit = CONFIG_BPF_JIT;
	e->hz = CONFIG_HZ;
	__builtin_memcpy(e->hostname, CONFIG_DEFAULT_HOSTNAME, sizeof(e->hostname));
	e->absent = CONFIG_SKELGEN_ABSENT;
	e->linux_absent = LINUX_SKELGEN_ABSENT;
	e->has_cookie = LINUX_HAS_BPF_COOKIE;
	e->has_wrapper = LINUX_HAS_SYSCALL_WRAPPER;
	return 0;
}

SEC("ubpf/user_required")
int user_required(struct externs *e)
{
	e->hz = CONFIG_SKELGEN_REQUIRED;
	return 0;
}

/* libbpf's USDT support: its maps and helpers are __weak. */
__u64 usdt_calls, usdt_arg, usdt_arg2;

SEC("usdt")
int BPF_USDT(on_probe, long arg, int arg2)
{
	usdt_calls++;
	usdt_arg = arg;
	usdt_arg2 = arg2;
	return 0;
}

char LICENSE[] SEC("license") = "GPL";
