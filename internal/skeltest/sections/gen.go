// Package sections is the skeleton of sections.bpf.c: a program of each
// section kind whose Attach takes its attach point as arguments.
package sections

//go:generate go run github.com/skelgen/skelgen/cmd/skelgen -runtime import -cflags "-O2 -mcpu=v3 -I../include" sections.bpf.c
