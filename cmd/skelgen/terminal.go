package main

import (
	"io"
	"unicode"

	"github.com/skelgen/skelgen/internal/gocomment"
)

// terminalWriter writes what is written to it to w with every character a
// terminal would act on, or that hides text, escaped as Go escapes it:
// control characters but newline and tab (an escape sequence can rewrite
// earlier lines of a CI log), bidi and other format characters, and bytes
// that are not UTF-8. Messages name maps, programs, sections and types of
// objects and sources, which may be hostile; the messages stay readable.
type terminalWriter struct{ w io.Writer }

func (t terminalWriter) Write(p []byte) (int, error) {
	i := 0
	for i < len(p) && (p[i] >= ' ' && p[i] < 0x7f || p[i] == '\n' || p[i] == '\t') {
		i++
	}
	if i == len(p) {
		return t.w.Write(p)
	}
	out := gocomment.AppendEscaped(append(make([]byte, 0, len(p)+16), p[:i]...), string(p[i:]), func(r rune) bool {
		return r == '\n' || r == '\t' || unicode.IsPrint(r) && !unicode.Is(unicode.Cf, r)
	})
	if _, err := t.w.Write(out); err != nil {
		return 0, err
	}
	return len(p), nil
}
