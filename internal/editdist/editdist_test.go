package editdist

import "testing"

func TestDistance(t *testing.T) {
	for _, c := range []struct {
		a, b string
		want int
	}{
		{"", "", 0}, {"begin", "begin", 0}, {"begn", "begin", 1}, {"intervall", "interval", 1},
		{"recrod", "record", 1}, {"ned", "end", 1}, {"report", "record", 2}, {"ab", "ba", 1}, {"ca", "abc", 3}, {"", "end", 3}, {"kitten", "sitting", 3},
	} {
		if got := Distance(c.a, c.b); got != c.want {
			t.Errorf("Distance(%q, %q) = %d, want %d", c.a, c.b, got, c.want)
		}
		if got := Distance(c.b, c.a); got != c.want {
			t.Errorf("Distance(%q, %q) = %d, want %d", c.b, c.a, got, c.want)
		}
	}
}
