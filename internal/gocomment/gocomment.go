// Package gocomment writes the comments of generated Go code: text
// wrapped between words to a width that keeps comment lines near 80
// columns, as jennifer's Comment would leave them on one line.
//
// It is also the one place where text taken from an object, a source or a
// kernel BTF (names, section names, source lines) enters generated Go
// outside string literals: Text escapes it, and Comment, Line and Lines
// write nothing else. Every comment they make is a // line comment: no
// /* */ block, no raw newline, control or bidi character, no line that
// starts a directive (//go:generate, //go:linkname, //line).
package gocomment

import (
	"fmt"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/dave/jennifer/jen"
)

// Width is the text width of a wrapped comment line, without its "// "
// and indentation.
const Width = 76

// Wrap breaks text into lines of at most width characters between words.
// A word longer than width gets a line of its own; directives ("go:embed
// x", "//go:build") and empty text come back as one line. Words are
// separated by white space as strings.Fields finds it and joined by one
// blank; a line whose words text already separates by one blank is a
// slice of text.
func Wrap(text string, width int) []string {
	if len(text) <= width || strings.HasPrefix(text, "go:") || strings.HasPrefix(text, "/") {
		return []string{text}
	}
	var lines []string
	var l line
	word := -1 // start of the word being read, -1 between words
	for i, r := range text {
		if !unicode.IsSpace(r) {
			if word < 0 {
				word = i
			}
			continue
		}
		if word >= 0 {
			lines = l.add(lines, text, word, i, width)
			word = -1
		}
	}
	if word >= 0 {
		lines = l.add(lines, text, word, len(text), width)
	}
	if l.n > 0 {
		lines = append(lines, l.String(text))
	}
	return lines
}

// line is the line Wrap is filling: text[start:end], or joined when
// its words are not separated by one blank in text.
type line struct {
	start, end int
	n          int // its length
	joined     []byte
}

// add appends the word text[from:to] to l, first ending l as one of lines
// when the word does not fit.
func (l *line) add(lines []string, text string, from, to, width int) []string {
	if l.n > 0 && l.n+1+to-from > width {
		lines = append(lines, l.String(text))
		*l = line{}
	}
	switch {
	case l.n == 0:
		l.start, l.end, l.n = from, to, to-from
		return lines
	case l.joined == nil && text[l.end:from] == " ":
		l.end = to
	default:
		if l.joined == nil {
			l.joined = []byte(text[l.start:l.end])
		}
		l.joined = append(append(l.joined, ' '), text[from:to]...)
	}
	l.n += 1 + to - from
	return lines
}

func (l *line) String(text string) string {
	if l.joined != nil {
		return string(l.joined)
	}
	return text[l.start:l.end]
}

// Text is text made safe for one // comment line: printable ASCII stays as
// it is, so C names and source lines read as written; every other byte or
// rune is escaped as a Go string literal escapes it (\n, \t, \x1b,
// \u202e, and \xff for a byte that is not UTF-8). The result is printable
// ASCII: it holds no newline, so nothing after it can become code, no
// control or bidi character to hide text, and no non-ASCII letter that
// could pass for an ASCII one. Text of its own result is that result.
func Text(text string) string {
	i := 0
	for i < len(text) && ' ' <= text[i] && text[i] <= '~' {
		i++
	}
	if i == len(text) {
		return text
	}
	b := append(make([]byte, 0, len(text)+16), text[:i]...)
	return string(AppendEscaped(b, text[i:], func(r rune) bool { return ' ' <= r && r <= '~' }))
}

// AppendEscaped appends text to dst, keeping the runes keep accepts and
// writing every other one as a Go string literal escapes it (\n, \x1b,
// \u202e), and a byte that is not UTF-8 as \x and its value. Text and the
// command's terminal output (which keeps printable non-ASCII) escape
// through it.
func AppendEscaped(dst []byte, text string, keep func(rune) bool) []byte {
	for i := 0; i < len(text); {
		r, n := utf8.DecodeRuneInString(text[i:])
		switch {
		case r == utf8.RuneError && n == 1:
			dst = append(dst, `\x`...)
			dst = append(dst, "0123456789abcdef"[text[i]>>4], "0123456789abcdef"[text[i]&15])
		case keep(r):
			dst = append(dst, text[i:i+n]...)
		default:
			// QuoteRuneToASCII writes an escape between quotes.
			q := strconv.QuoteRuneToASCII(r)
			dst = append(dst, q[1:len(q)-1]...)
		}
		i += n
	}
	return dst
}

// Lines is text escaped by Text and wrapped at Width: the lines of a
// comment, without their "// ".
func Lines(text string) []string {
	return Wrap(Text(text), Width)
}

// Comment is text, escaped by Text, as // comment lines wrapped at Width.
func Comment(text string) *jen.Statement {
	lines := Lines(text)
	s := raw(lines[0])
	for _, l := range lines[1:] {
		s = s.Line().Add(raw(l))
	}
	return s
}

// Line is text, escaped by Text, as one // comment line, unwrapped: the
// comment after a struct field or in a function body.
func Line(text string) *jen.Statement {
	return raw(Text(text))
}

// Linef is Line of a formatted text.
func Linef(format string, args ...any) *jen.Statement {
	return Line(fmt.Sprintf(format, args...))
}

// raw writes l after "// " as it is: jennifer's own Comment would write a
// text starting with // or /* without the "// " (a directive), and one
// holding a newline as a /* */ block.
func raw(l string) *jen.Statement {
	return jen.Comment("// " + l)
}

// Commentf is Comment of a formatted text.
func Commentf(format string, args ...any) *jen.Statement {
	return Comment(fmt.Sprintf(format, args...))
}
