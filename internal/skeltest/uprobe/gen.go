// Package uprobe is the skeleton of uprobe.bpf.c: a uprobe counting calls.
package uprobe

//go:generate go run github.com/skelgen/skelgen/cmd/skelgen -runtime import -cflags "-O2 -mcpu=v3 -I../include" uprobe.bpf.c
