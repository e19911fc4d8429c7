// Package tracing is the skeleton of tracing.bpf.c: fentry and fexit
// programs, which need BPF trampolines.
package tracing

//go:generate go run github.com/skelgen/skelgen/cmd/skelgen -runtime import -cflags "-O2 -mcpu=v3 -I../include" tracing.bpf.c
