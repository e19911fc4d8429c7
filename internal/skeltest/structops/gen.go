// Package structops is the skeleton of structops.bpf.c: a struct_ops map
// of the .struct_ops section, libbpf's form without a link.
package structops

//go:generate go run github.com/skelgen/skelgen/cmd/skelgen -runtime import -header vmlinux.h structops.bpf.c
