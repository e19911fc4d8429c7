//go:build !amd64 && !arm64

package main

import (
	"fmt"
	"os"
	"runtime"
)

// main says which architectures the tool was generated for: USDT argument
// specs name registers, so the object is compiled per architecture
// (-target amd64,arm64).
func main() {
	fmt.Fprintf(os.Stderr, "usdtsnoop: built for amd64 and arm64, not %s\n", runtime.GOARCH)
	os.Exit(1)
}
