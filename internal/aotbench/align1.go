//go:build skelgen_align1

package aotbench

// Built with -tags skelgen_align1, as make bench builds it once, this
// file's functions come first in the package, so that the linker places
// the translations 32 bytes further than in the default build. Go
// aligns functions to 32 bytes, and a translated loop's speed depends on
// where its function starts within a 64-byte line: make bench runs the
// aot-vs-kernel benchmarks at four placements (this file's three and the
// default) and internal/benchtable reports their geometric mean.
func init() { alignSink++ }

var alignSink int
