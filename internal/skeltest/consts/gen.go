// Package consts is the skeleton of consts.bpf.c: the source's #define and
// anonymous enum constants as Go constants, and its named enums as Go
// types with a String method, without -type.
package consts

//go:generate go run github.com/skelgen/skelgen/cmd/skelgen -runtime import -cflags "-O2 -mcpu=v3 -I../include" consts.bpf.c
