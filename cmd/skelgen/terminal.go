package main

import (
	"io"
	"strconv"
	"unicode"
	"unicode/utf8"
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
	out := append(make([]byte, 0, len(p)+16), p[:i]...)
	for i < len(p) {
		r, n := utf8.DecodeRune(p[i:])
		switch {
		case r == utf8.RuneError && n == 1:
			out = append(out, `\x`...)
			out = append(out, "0123456789abcdef"[p[i]>>4], "0123456789abcdef"[p[i]&15])
		case r == '\n' || r == '\t' || unicode.IsPrint(r) && !unicode.Is(unicode.Cf, r):
			out = append(out, p[i:i+n]...)
		default:
			q := strconv.QuoteRuneToASCII(r)
			out = append(out, q[1:len(q)-1]...)
		}
		i += n
	}
	if _, err := t.w.Write(out); err != nil {
		return 0, err
	}
	return len(p), nil
}
