package gocomment

import (
	"strings"
	"testing"
)

func TestWrap(t *testing.T) {
	text := "AttachAll attaches every program whose section names its attach point, skipping programs whose autoload was off. On error, links made so far stay until Close."
	lines := Wrap(text, 40)
	for _, l := range lines {
		if len(l) > 40 {
			t.Errorf("line %q is %d characters, want at most 40", l, len(l))
		}
	}
	if got := strings.Join(lines, " "); got != text {
		t.Errorf("rejoined text differs:\n%s\n%s", got, text)
	}
	long := strings.Repeat("x", 50)
	if got := Wrap("a "+long+" b", 40); len(got) != 3 || got[1] != long {
		t.Errorf("a word longer than the width: %q", got)
	}
	if got := Wrap("go:embed "+long, 10); len(got) != 1 {
		t.Errorf("directive wrapped: %q", got)
	}
}
