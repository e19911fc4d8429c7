// Package corehdr is the skeleton of corehdr.bpf.c, whose vmlinux.h is the
// minimal header skelgen regenerates with the skeleton.
package corehdr

//go:generate go run github.com/skelgen/skelgen/cmd/skelgen -runtime import -header vmlinux.h corehdr.bpf.c
