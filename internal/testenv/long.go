package testenv

import "os"

// IsLong reports whether the long run is asked for (SKELGEN_LONG=1, as
// .ci/run sets): a sweep over every skeleton, the whole corpus, thousands
// of translated programs. The default run samples them (Sample), so that
// go test ./... stays within minutes on two cores while covering the same
// behaviour.
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
