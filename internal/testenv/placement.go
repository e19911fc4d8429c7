package testenv

import (
	"reflect"
	"testing"
)

// ReportPlacement reports, as the benchmark's "entry%256" metric, where
// the function fn starts within a 256-byte stretch of the binary. The
// speed of a tight translated loop depends on it (Go aligns functions to
// 32 bytes, and a loop that straddles a 64-byte line runs slower on some
// hosts), so make bench runs the aot-vs-kernel benchmarks in builds that
// place the translations differently (the skelgen_align build tags), and
// internal/benchtable checks from this metric that the runs it averages
// start at both halves of a 64-byte line.
func ReportPlacement(b *testing.B, fn any) {
	b.ReportMetric(float64(reflect.ValueOf(fn).Pointer()%256), "entry%256")
}
