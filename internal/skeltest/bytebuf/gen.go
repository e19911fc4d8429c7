// Package bytebuf is the skeleton of bytebuf.bpf.c: user programs in
// ubpf's (data, len) convention, which run over a []byte.
package bytebuf

//go:generate go run github.com/skelgen/skelgen/cmd/skelgen -runtime import -cflags "-O2 -mcpu=v3 -I../include" bytebuf.bpf.c
