package runtime

import "testing"

// TestLoopTrips compares LoopTrips and LoopTripsStepped with the loops they
// count, run step by step: a counter that steps, then is compared with the
// bound, the loop going on while it is below.
func TestLoopTrips(t *testing.T) {
	// iterations runs the loop from start (before its first step) and
	// returns how many iterations follow the first.
	iterations := func(start, bound, step uint64) uint64 {
		var n uint64
		for c := start + step; c < bound; c += step {
			n++
		}
		return n
	}
	for first := uint64(0); first < 24; first++ {
		for bound := uint64(0); bound < 40; bound++ {
			for step := uint64(1); step < 10; step++ {
				start := first - step // may wrap below zero
				want := iterations(start, bound, step)
				// A counter that does not start below the bound (first -
				// step >= bound) is refused, as LoopTrips refuses it.
				below := first < bound+step
				got, ok := LoopTripsStepped(first, bound, step)
				if ok != below || ok && got != want {
					t.Errorf("LoopTripsStepped(%d, %d, %d) = %d, %v; the loop runs %d more, starting below the bound: %v", first, bound, step, got, ok, want, below)
				}
				if start < bound {
					if got, ok := LoopTrips(start, bound, step); !ok || got != want {
						t.Errorf("LoopTrips(%d, %d, %d) = %d, %v; the loop runs %d more", start, bound, step, got, ok, want)
					}
				}
			}
		}
	}
	// Bounds and steps too large to count safely are refused.
	for _, c := range [][3]uint64{{0, 1 << 63, 1}, {0, ^uint64(0), 8}, {0, 100, 0}, {0, 100, 1 << 63}} {
		if _, ok := LoopTripsStepped(c[0], c[1], c[2]); ok {
			t.Errorf("LoopTripsStepped(%d, %#x, %#x) is ok", c[0], c[1], c[2])
		}
	}
}
