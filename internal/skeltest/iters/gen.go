// Package iters is the skeleton of iters.bpf.c: BPF iterators (task, map
// element, map), read through their Open methods and pinned links.
package iters

//go:generate go run github.com/skelgen/skelgen/cmd/skelgen -runtime import -cflags "-O2 -mcpu=v3 -I../include" iters.bpf.c
