// Package sizing tests maps sized before load: a stack trace map whose
// depth and a hash whose capacity the tool chooses, and the inner map of a
// map-in-map.
package sizing

//go:generate go run github.com/skelgen/skelgen/cmd/skelgen -runtime import -cflags "-O2 -mcpu=v3 -I../include" sizing.bpf.c
