// Package atomics is the skeleton of atomics.bpf.c: a kernel program and
// user-space programs updating the same memory with atomic instructions,
// a .bss counter mmapped from the kernel and a byte buffer that goroutines
// share.
package atomics

//go:generate go run github.com/skelgen/skelgen/cmd/skelgen -runtime import -cflags "-O2 -mcpu=v3 -I../include" atomics.bpf.c
