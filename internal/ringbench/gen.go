// Package ringbench measures how fast the consumers of a kernel ring
// buffer drain it: Serve with its record hook and with a Go callback, the
// skeleton's typed reader (Read and ReadInto), cilium/ebpf's reader (Read
// and ReadInto) and libbpf's ring_buffer__consume, from a C program
// compiled at bench time. A kernel program fills the buffer through
// BPF_PROG_TEST_RUN first, so that the producer is not the limit.
package ringbench

//go:generate go run github.com/skelgen/skelgen/cmd/skelgen -runtime import -type events=rec -cflags "-O2 -mcpu=v3 -I../skeltest/include" ringbench.bpf.c
