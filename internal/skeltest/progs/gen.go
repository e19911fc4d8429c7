// Package progs is the skeleton of progs.bpf.c: one program per attach kind.
package progs

//go:generate go run github.com/skelgen/skelgen/cmd/skelgen -runtime import -cflags "-O2 -mcpu=v3 -I../include" progs.bpf.c
