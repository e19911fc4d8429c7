// Package editdist measures how far apart two names are, for messages
// that suggest the name meant.
package editdist

// Distance is the edit distance of a and b, in bytes: the fewest
// insertions, deletions, substitutions and swaps of two neighbours that
// turn a into b, no part edited twice (the optimal string alignment
// distance).
func Distance(a, b string) int {
	// Rows i-2, i-1 and i of the table of distances between prefixes.
	prev2 := make([]int, len(b)+1)
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			c := prev[j-1]
			if a[i-1] != b[j-1] {
				c++
			}
			cur[j] = min(c, prev[j]+1, cur[j-1]+1)
			if i > 1 && j > 1 && a[i-1] == b[j-2] && a[i-2] == b[j-1] {
				cur[j] = min(cur[j], prev2[j-2]+1)
			}
		}
		prev2, prev, cur = prev, cur, prev2
	}
	return prev[len(b)]
}
