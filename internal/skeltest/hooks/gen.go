// Package hooks is the skeleton of hooks.bpf.c: a tool driven by Serve,
// with begin, interval, record and end hooks and the actions of
// skelgen.h, for the tests of the hook semantics.
package hooks

//go:generate go run github.com/skelgen/skelgen/cmd/skelgen -runtime import -cflags "-O2 -mcpu=v3 -I../include" hooks.bpf.c
