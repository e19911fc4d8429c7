package gen

import (
	"fmt"
	"sort"
	"strconv"
	"strings"
	"unicode/utf8"
)

// The Go names of C members, variables, maps and programs follow one
// rule, in every scope (a struct's fields and methods, the Objects
// fields of maps and programs, the Variables fields):
//
//   - a name's plain Go name is GoName of it without its leading
//     underscores, followed by one underscore for each: x is X, _x is X_,
//     __x is X__, whether or not x exists. Plain names have underscores
//     only at their end.
//   - a name gets its plain name unless another name of the scope has the
//     same plain name or the scope reserves it (a method of Objects). Then
//     every such name is spelled out: C_ and the C name as it is (fooBar
//     and foo_bar are C_fooBar and C_foo_bar, x and X are C_x and C_X).
//     A name of underscores only has no plain name and is Underscore_N, N
//     its count of underscores.
//
// So a Go name never stands for another C name than the one it reads as,
// and depends on no other name of the scope: adding a member renames no
// other member, except one it collides with, which then loses its plain
// name (a compile error in code that used it, never a field that silently
// reads another member). Names the generator adds to a scope (storage
// fields BitsN and XBytes, setters SetX, string methods XString) come
// after the C names and take _2, _3, ... on a collision.

// plainName is the Go name of the C identifier c unless its scope has
// another name of the same plain name; ok is false for a name of
// underscores only.
func plainName(c string) (string, bool) {
	rest := strings.TrimLeft(c, "_")
	if rest == "" {
		return "", false
	}
	return GoName(rest) + c[:len(c)-len(rest)], true
}

// spelledName is the Go name of c when its plain name is ambiguous: C_
// and c, a byte that is not an ASCII letter, digit or underscore spelled
// as in GoName (_u043e_ for a Cyrillic o, _x80_ for a byte that is not
// UTF-8), so the result is an ASCII identifier.
func spelledName(c string) string {
	if strings.Trim(c, "_") == "" {
		return "Underscore_" + strconv.Itoa(len(c))
	}
	var b strings.Builder
	b.WriteString("C_")
	for i, r := range c {
		switch {
		case r == '_' || '0' <= r && r <= '9' || 'a' <= r && r <= 'z' || 'A' <= r && r <= 'Z':
			b.WriteRune(r)
		case r == utf8.RuneError && !strings.HasPrefix(c[i:], string(utf8.RuneError)):
			fmt.Fprintf(&b, "_x%02x_", c[i])
		default:
			fmt.Fprintf(&b, "_u%04x_", r)
		}
	}
	return b.String()
}

// assignNames gives the C names cnames of one scope their Go names, in
// the same order, by the rule above; taken holds the Go names the scope
// already has and receives the new ones. Names that would still clash
// (only the same C name twice, or escapes in a malformed name, can) are
// numbered _2, _3, ... in the order of their C names.
func assignNames(cnames []string, taken map[string]bool) []string {
	plain := make([]string, len(cnames))
	count := make(map[string]int, len(cnames))
	for i, c := range cnames {
		if p, ok := plainName(c); ok {
			plain[i] = p
			count[p]++
		}
	}
	out := make([]string, len(cnames))
	var spelled []int
	for i, p := range plain {
		if p != "" && count[p] == 1 && !taken[p] {
			out[i] = p
			continue
		}
		spelled = append(spelled, i)
	}
	for _, n := range out {
		if n != "" {
			taken[n] = true
		}
	}
	sort.SliceStable(spelled, func(a, b int) bool { return cnames[spelled[a]] < cnames[spelled[b]] })
	for _, i := range spelled {
		out[i] = uniqueName(taken, spelledName(cnames[i]))
	}
	return out
}

// uniqueName claims base in taken, or base_2, base_3, ... when it is
// taken: for the names the generator adds to a scope after its C names.
func uniqueName(taken map[string]bool, base string) string {
	n := base
	for i := 2; taken[n]; i++ {
		n = base + "_" + strconv.Itoa(i)
	}
	taken[n] = true
	return n
}

// assignNameMap is assignNames of distinct C names, by C name.
func assignNameMap(cnames []string, taken map[string]bool) map[string]string {
	goNames := assignNames(cnames, taken)
	out := make(map[string]string, len(cnames))
	for i, c := range cnames {
		out[c] = goNames[i]
	}
	return out
}
