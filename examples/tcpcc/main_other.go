//go:build !linux

package main

import (
	"fmt"
	"os"
	"runtime"
)

// main says that congestion controls are Linux's: the skeleton builds
// everywhere, but only Linux registers struct_ops.
func main() {
	fmt.Fprintf(os.Stderr, "tcpcc: TCP congestion controls in BPF need Linux, not %s\n", runtime.GOOS)
	os.Exit(1)
}
