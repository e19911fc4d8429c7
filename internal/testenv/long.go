package testenv

import (
	"os"
	"testing"
)

// Long skips a test whose run takes tens of seconds (a sweep over every
// skeleton, a corpus, thousands of translated programs) unless
// SKELGEN_LONG=1 is set, as .ci/run does. A long test is one whose
// behaviour a fast test covers too, on a sample: the default go test ./...
// stays within minutes on two cores.
func Long(t testing.TB) {
	t.Helper()
	if os.Getenv("SKELGEN_LONG") != "1" {
		t.Skip("skipped: a long sweep; SKELGEN_LONG=1 runs it")
	}
}

// IsLong reports whether long tests run (SKELGEN_LONG=1), for tests that
// sample in the default run and sweep everything in the long one.
func IsLong() bool { return os.Getenv("SKELGEN_LONG") == "1" }

// Sample returns all of items in a long run, else n of them spread evenly
// over the list (its first and last included), in their order: a sweep's
// default run covers the same behaviour on fewer cases.
func Sample[T any](items []T, n int) []T {
	if IsLong() || len(items) <= n {
		return items
	}
	if n <= 1 {
		return items[:n]
	}
	out := make([]T, 0, n)
	for i := range n {
		out = append(out, items[i*(len(items)-1)/(n-1)])
	}
	return out
}
