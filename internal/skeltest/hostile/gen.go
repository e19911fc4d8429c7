// Package hostile is the skeleton of hostile.bpf.c: user programs that
// write read-only memory, call built-ins on huge maps and share maps with
// concurrent Go callers. Its tests hold skelgen's promise that a program
// returns an error but never crashes or corrupts its host.
package hostile

//go:generate go run github.com/skelgen/skelgen/cmd/skelgen -runtime import -cflags "-O2 -mcpu=v3 -I../include" -type bump_ctx hostile.bpf.c
