//go:build ignore

// fentry/fexit programs: loadable only on kernels with BPF trampolines.
#include "common.h"
#include <bpf/bpf_tracing.h>

__u64 entries, exits;

SEC("fentry/do_unlinkat")
int BPF_PROG(enter_unlinkat) { entries++; return 0; }

SEC("fexit/do_unlinkat")
int BPF_PROG(exit_unlinkat) { exits++; return 0; }

char LICENSE[] SEC("license") = "GPL";
