// Package gocomment writes the doc comments of generated Go code: text
// wrapped between words to a width that keeps comment lines near 80
// columns, as jennifer's Comment would leave them on one line.
package gocomment

import (
	"fmt"
	"strings"

	"github.com/dave/jennifer/jen"
)

// Width is the text width of a wrapped comment line, without its "// "
// and indentation.
const Width = 76

// Wrap breaks text into lines of at most width characters between words.
// A word longer than width gets a line of its own; directives ("go:embed
// x", "//go:build") and empty text come back as one line.
func Wrap(text string, width int) []string {
	if len(text) <= width || strings.HasPrefix(text, "go:") || strings.HasPrefix(text, "/") {
		return []string{text}
	}
	var lines []string
	var cur strings.Builder
	for _, w := range strings.Fields(text) {
		if cur.Len() > 0 && cur.Len()+1+len(w) > width {
			lines = append(lines, cur.String())
			cur.Reset()
		}
		if cur.Len() > 0 {
			cur.WriteByte(' ')
		}
		cur.WriteString(w)
	}
	if cur.Len() > 0 {
		lines = append(lines, cur.String())
	}
	return lines
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
