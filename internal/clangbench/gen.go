// Package clangbench holds workloads as users write them, compiled from C
// by clang-19 with -O2 -mcpu=v3: each runs as a user-space program (its
// translation and the interpreter) and, over the same bytes, as an XDP
// program in the kernel, so that one benchmark run compares them.
package clangbench

//go:generate go run github.com/skelgen/skelgen/cmd/skelgen -runtime import -target bpfel -cflags "-O2 -mcpu=v3" clangbench.bpf.c
