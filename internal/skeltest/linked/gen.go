// Package linked is the skeleton of two sources linked into one object
// (libbpf's static linking, bpftool gen object): a map defined in one and
// declared extern in the other, a global function called across them,
// static functions of one name in each, and a ring buffer whose record
// struct only the second source defines.
package linked

//go:generate go run github.com/skelgen/skelgen/cmd/skelgen -runtime import -target bpfel -cflags "-O2 -mcpu=v3 -I../include" -stem linked first.bpf.c second.bpf.c
