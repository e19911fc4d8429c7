// Package templates holds the text files skelgen writes besides Go code,
// embedded into the binary: skelgen.h, the header of built-in functions for
// SEC("ubpf/...") programs.
package templates

import _ "embed"

// SkelgenH is the skelgen.h header for .bpf.c files with user-space
// programs.
//
//go:embed skelgen.h
var SkelgenH []byte
