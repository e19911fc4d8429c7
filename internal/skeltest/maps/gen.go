// Package maps is the skeleton of maps.bpf.c: every map kind.
package maps

//go:generate go run github.com/skelgen/skelgen/cmd/skelgen -runtime import -cflags "-O2 -mcpu=v3 -I../include" -type events=event -type perf_events=event maps.bpf.c
