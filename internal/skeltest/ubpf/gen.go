// Package ubpf is the skeleton of ubpf.bpf.c: kernel and user-space
// programs sharing maps, with host functions.
package ubpf

//go:generate go run github.com/skelgen/skelgen/cmd/skelgen -runtime import -cflags "-O2 -mcpu=v3 -I../include" ubpf.bpf.c
