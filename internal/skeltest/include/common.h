/* Shared by the skeleton test programs: kernel UAPI types and libbpf's helpers. */
#ifndef SKELTEST_COMMON_H
#define SKELTEST_COMMON_H
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>
#endif
