/* The records of the syscalls tracepoints (tracefs events/syscalls/.../format),
 * for the example tools. */
#ifndef SYSCALL_TP_H
#define SYSCALL_TP_H
#include <linux/types.h>

/* syscalls/sys_enter_*: the system call's arguments. */
struct sys_enter_ctx {
	__u64 common;
	__s32 nr;
	__u64 args[6];
};

/* syscalls/sys_exit_*: its return value. */
struct sys_exit_ctx {
	__u64 common;
	__s32 nr;
	__s64 ret;
};

/* raw_syscalls/sys_enter and sys_exit: every system call. */
struct raw_sys_enter_ctx {
	__u64 common;
	__s64 id;
	__u64 args[6];
};

struct raw_sys_exit_ctx {
	__u64 common;
	__s64 id;
	__s64 ret;
};
#endif
