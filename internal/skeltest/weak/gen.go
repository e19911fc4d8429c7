// Package weak is the skeleton of weak.bpf.c: __weak .kconfig and __ksym
// externs, which load with libbpf's meaning (zero when the kernel lacks
// them), and a USDT program written with libbpf's usdt.bpf.h, whose maps
// are defined __weak.
package weak

//go:generate go run github.com/skelgen/skelgen/cmd/skelgen -runtime import -target amd64,arm64 -cflags "-O2 -mcpu=v3 -I../include" weak.bpf.c
