package testenv

import (
	"slices"
	"testing"
)

func TestSample(t *testing.T) {
	items := []int{0, 1, 2, 3, 4, 5, 6, 7, 8, 9}
	t.Setenv("SKELGEN_LONG", "")
	for _, c := range []struct {
		n    int
		want []int
	}{{3, []int{0, 4, 9}}, {2, []int{0, 9}}, {1, []int{0}}, {10, items}, {20, items}} {
		if got := Sample(items, c.n); !slices.Equal(got, c.want) {
			t.Errorf("Sample(0..9, %d) = %v, want %v", c.n, got, c.want)
		}
	}
	t.Setenv("SKELGEN_LONG", "1")
	if got := Sample(items, 3); !slices.Equal(got, items) {
		t.Errorf("long run: Sample(0..9, 3) = %v, want all", got)
	}
}
