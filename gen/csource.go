package gen

import (
	"fmt"
	"regexp"
	"strings"
)

// cSource is the block structure of a C source, enough to tell which
// definition of a struct or union tag a point of the source sees: C lets
// every function (every block) define its own struct event.
type cSource struct {
	// text is the source with comments, string and character literals
	// and preprocessor lines blanked (newlines kept, so offsets and lines
	// stay those of the source).
	text string
	// code is the source with comments blanked: the text of definitions,
	// preprocessor lines included.
	code   string
	macros [][2]int // preprocessor lines, continuation lines included
	blocks []cBlock
	defs   []cDef
}

// cBlock is a compound statement: a function body or a block inside one.
type cBlock struct {
	open, close int // offsets of its braces
	fn          string
}

// cDef is one definition "struct tag { ... }" in the source.
type cDef struct {
	kind, tag string // "struct", "event"
	off, end  int    // its text: from the keyword to the closing brace
	block     int    // index of the innermost block holding it, -1 at file scope
	fn        string // the function it is defined in, "" at file scope
	ord       int    // how many definitions of the same tag fn has before it
	line      int
}

var (
	reDefinition = regexp.MustCompile(`\b(struct|union)\s+(\w+)\s*\{`)
	reTypeBody   = regexp.MustCompile(`\b(?:struct|union|enum)(?:\s+\w+)?\s*$`)
	reIdentEnd   = regexp.MustCompile(`(\w+)\s*$`)
	reFirstIdent = regexp.MustCompile(`^\s*(\w+)`)
)

// parseCSource finds the blocks and struct definitions of src.
func parseCSource(src string) *cSource {
	cs := &cSource{}
	cs.text, cs.macros = blankNonCode(src)
	cs.code = blankComments(src)
	text := cs.text
	// The kinds of the open braces: a block, a type's body or an
	// initializer; only blocks make scopes.
	type open struct {
		kind  byte // 'b', 't', 'i'
		block int
	}
	var stack []open
	for i := 0; i < len(text); i++ {
		switch text[i] {
		case '{':
			before := strings.TrimRight(text[:i], " \t\r\n")
			o := open{kind: 'b', block: -1}
			switch {
			case reTypeBody.MatchString(before):
				o.kind = 't'
			case strings.HasSuffix(before, "="), len(stack) > 0 && stack[len(stack)-1].kind == 'i':
				o.kind = 'i'
			}
			if o.kind == 'b' {
				fn := ""
				for j := len(stack) - 1; j >= 0; j-- {
					if stack[j].kind == 'b' {
						fn = cs.blocks[stack[j].block].fn
						break
					}
				}
				if fn == "" {
					fn = functionName(before)
				}
				o.block = len(cs.blocks)
				cs.blocks = append(cs.blocks, cBlock{open: i, close: len(text), fn: fn})
			}
			stack = append(stack, o)
		case '}':
			if n := len(stack); n > 0 {
				if o := stack[n-1]; o.kind == 'b' {
					cs.blocks[o.block].close = i
				}
				stack = stack[:n-1]
			}
		}
	}
	ords := map[string]int{}
	for _, m := range reDefinition.FindAllStringSubmatchIndex(text, -1) {
		d := cDef{kind: text[m[2]:m[3]], tag: text[m[4]:m[5]], off: m[0], block: cs.blockAt(m[0]), line: strings.Count(text[:m[0]], "\n") + 1}
		d.end = matchingBrace(text, m[1]-1)
		if d.block >= 0 {
			d.fn = cs.blocks[d.block].fn
			k := d.fn + " " + d.kind + " " + d.tag
			d.ord = ords[k]
			ords[k]++
		}
		cs.defs = append(cs.defs, d)
	}
	return cs
}

// blockAt is the innermost block holding offset off, -1 for none.
func (cs *cSource) blockAt(off int) int {
	in := -1
	for i, b := range cs.blocks {
		if b.open < off && off < b.close {
			in = i // blocks are in order of their opening: later is inner
		}
	}
	return in
}

// inMacro reports whether offset off is on a preprocessor line.
func (cs *cSource) inMacro(off int) bool {
	for _, r := range cs.macros {
		if r[0] <= off && off < r[1] {
			return true
		}
	}
	return false
}

// definitions returns the definitions of "struct tag" (or union).
func (cs *cSource) definitions(kind, tag string) []cDef {
	var out []cDef
	for _, d := range cs.defs {
		if d.kind == kind && d.tag == tag {
			out = append(out, d)
		}
	}
	return out
}

// visible returns the definition of kind tag that code at offset off
// sees: the one of the innermost block holding off defined before it,
// else the file-scope one; nil when the source has none of them (the
// type may come from a header).
func (cs *cSource) visible(kind, tag string, off int) *cDef {
	var best *cDef
	bestOpen := -1
	for _, d := range cs.definitions(kind, tag) {
		open := -1
		if d.block >= 0 {
			b := cs.blocks[d.block]
			if d.off > off || off < b.open || off > b.close {
				continue
			}
			open = b.open
		}
		if best == nil || open > bestOpen || open == bestOpen && d.off > best.off {
			d := d
			best, bestOpen = &d, open
		}
	}
	return best
}

// localName is the file-scope name skelgen gives the copy of a definition
// made inside a function when the source has several of its tag: unique
// for each (function, tag, rank in the function).
func (d cDef) localName() string {
	return fmt.Sprintf("__skelgen_local_%d_%s_%s_%d", len(d.fn), d.fn, d.tag, d.ord)
}

// where says where d is, for messages and doc comments.
func (d cDef) where(file string) string {
	if d.fn == "" {
		return fmt.Sprintf("%s:%d", file, d.line)
	}
	return fmt.Sprintf("function %s (%s:%d)", d.fn, file, d.line)
}

// copyText is d's text declared at file scope under name, its own tag
// replaced where the definition refers to itself.
func (cs *cSource) copyText(d cDef, name string) string {
	body := cs.code[d.off : d.end+1]
	re := regexp.MustCompile(`\b` + d.kind + `\s+` + regexp.QuoteMeta(d.tag) + `\b`)
	return re.ReplaceAllString(body, d.kind+" "+name)
}

// functionName is the name of the function whose body starts after
// before (the text up to the brace): the identifier before the parameter
// list; for a macro that declares the function, as libbpf's
// BPF_PROG(name, ...) does, its first argument.
func functionName(before string) string {
	name := callName(before)
	for name == "__attribute__" {
		i := strings.LastIndex(before, "__attribute__")
		before = strings.TrimRight(before[:i], " \t\r\n")
		name = callName(before)
	}
	return name
}

// callName is functionName's reading of before, attributes not skipped.
func callName(before string) string {
	if !strings.HasSuffix(before, ")") {
		return "?"
	}
	depth := 0
	for i := len(before) - 1; i >= 0; i-- {
		switch before[i] {
		case ')':
			depth++
		case '(':
			depth--
			if depth == 0 {
				m := reIdentEnd.FindStringSubmatch(before[:i])
				if m == nil {
					return "?"
				}
				name := m[1]
				if strings.ToUpper(name) == name {
					if a := reFirstIdent.FindStringSubmatch(before[i+1:]); a != nil {
						return a[1]
					}
				}
				return name
			}
		}
	}
	return "?"
}

// matchingBrace is the offset of the brace closing the one at open, or
// the end of text.
func matchingBrace(text string, open int) int {
	depth := 0
	for i := open; i < len(text); i++ {
		switch text[i] {
		case '{':
			depth++
		case '}':
			depth--
			if depth == 0 {
				return i
			}
		}
	}
	return len(text) - 1
}

// blankNonCode blanks comments, string and character literals and
// preprocessor lines of src, keeping newlines, and returns the ranges
// of the preprocessor lines.
func blankNonCode(src string) (string, [][2]int) {
	b := []byte(src)
	var macros [][2]int
	blank := func(from, to int) {
		for k := from; k < to && k < len(b); k++ {
			if b[k] != '\n' {
				b[k] = ' '
			}
		}
	}
	lineStart := true
	for i := 0; i < len(b); {
		c := b[i]
		switch {
		case c == '/' && i+1 < len(b) && b[i+1] == '*':
			end := strings.Index(src[i+2:], "*/")
			to := len(b)
			if end >= 0 {
				to = i + 2 + end + 2
			}
			blank(i, to)
			i = to
			continue
		case c == '/' && i+1 < len(b) && b[i+1] == '/':
			end := strings.IndexByte(src[i:], '\n')
			to := len(b)
			if end >= 0 {
				to = i + end
			}
			blank(i, to)
			i = to
			continue
		case c == '"' || c == '\'':
			j := i + 1
			for j < len(b) && b[j] != c && b[j] != '\n' {
				if b[j] == '\\' {
					j++
				}
				j++
			}
			blank(i+1, j)
			i = j + 1
			lineStart = false
			continue
		case c == '#' && lineStart:
			j := i
			for j < len(b) && (b[j] != '\n' || j > 0 && b[j-1] == '\\') {
				j++
			}
			macros = append(macros, [2]int{i, j})
			blank(i, j)
			i = j
			continue
		case c == '\n':
			lineStart = true
		case c != ' ' && c != '\t' && c != '\r':
			lineStart = false
		}
		i++
	}
	return string(b), macros
}
