// Package globals is the skeleton of globals.bpf.c: variables in .rodata,
// .data, .bss and a custom data section.
package globals

//go:generate go run github.com/skelgen/skelgen/cmd/skelgen -runtime import -cflags "-O2 -mcpu=v3 -I../include" globals.bpf.c
