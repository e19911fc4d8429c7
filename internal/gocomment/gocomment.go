// Package gocomment writes the doc comments of generated Go code: text
// wrapped between words to a width that keeps comment lines near 80
// columns, as jennifer's Comment would leave them on one line.
package gocomment

import (
	"fmt"
	"strings"
	"unicode"

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

// Comment is text as // comment lines wrapped at Width.
func Comment(text string) *jen.Statement {
	lines := Wrap(text, Width)
	s := jen.Comment(lines[0])
	for _, l := range lines[1:] {
		s = s.Line().Comment(l)
	}
	return s
}

// Commentf is Comment of a formatted text.
func Commentf(format string, args ...any) *jen.Statement {
	return Comment(fmt.Sprintf(format, args...))
}
