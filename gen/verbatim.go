package gen

import (
	"bytes"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"go/format"
	"math"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/dave/jennifer/jen"

	"github.com/skelgen/skelgen/internal/gocomment"
)

// verbatim writes the long, regular parts of a skeleton (one struct field
// or one if statement per map, program and variable) as text already in
// gofmt's form, so that go/format parses and prints only the rest of the
// file: formatting was most of the generator's time on objects with many
// maps.
//
// Each part is a placeholder comment in the jennifer file, replaced after
// formatting. The qualified names and type expressions a part uses are
// still rendered by jennifer, in a trailer of one-line declarations
// (var _ T, var _ = x) after the file's last declaration: so jennifer
// imports their packages and chooses their qualifiers as it would; the
// trailer is cut off after formatting. jennifer renders the file
// unformatted, and gofmtExpr writes the trailer's codes in go/format's form
// where it knows their grammar, so that go/format formats only the rest of
// the file (and the codes gofmtExpr does not know). TestVerbatimSameOutput
// requires the output to be byte for byte the one formatting the whole file
// gives.
type verbatim struct {
	// marker starts every placeholder: it holds a random nonce, so no
	// text taken from the object (names, sections) can contain it. It
	// never reaches the output, which stays deterministic.
	marker string
	parts  [][]vpiece
	// pieces holds the pieces of all parts, each part's in a run of its
	// own.
	pieces []vpiece
	// text holds the literal text of all parts.
	text []byte
	// codes are rendered in the trailer, types as var _ T and
	// expressions as var _ = x.
	codes []vcode
	// quals indexes codes of qualified names, by path and name; seen
	// indexes the codes of types and expressions already in the trailer
	// (one Go type is written in several places).
	quals map[[2]string]int
	seen  map[*jen.Statement]int
	// writers write codes whose text is known without jennifer: they
	// stay out of the trailer.
	writers map[*jen.Statement]func(w *vtext)
}

type vcode struct {
	code jen.Code
	expr bool
}

// vpiece is the literal text[start:end], or the text of codes[code] when
// code >= 0. int32 keeps pieces small: a skeleton has thousands.
type vpiece struct {
	start, end int32
	code       int32
}

// newVerbatim starts the parts of a skeleton whose text is expected to be
// about size bytes.
func newVerbatim(size int) *verbatim {
	var nonce [8]byte
	rand.Read(nonce[:]) // never fails (crypto/rand)
	return &verbatim{marker: "skelgen:verbatim:" + hex.EncodeToString(nonce[:]) + ":", quals: map[[2]string]int{}, seen: map[*jen.Statement]int{},
		writers: map[*jen.Statement]func(*vtext){},
		text:    make([]byte, 0, 16<<10+size),
		// a piece for about every 64 bytes of text
		pieces: make([]vpiece, 0, (16<<10+size)/64)}
}

// vtext builds the pieces of one part, v.pieces[first:last]. Its literal
// text goes to v.text: text[start:end] since the last piece.
type vtext struct {
	v           *verbatim
	first, last int
	start, end  int
}

// add appends a piece to the part.
func (w *vtext) add(p vpiece) {
	v := w.v
	if w.last != len(v.pieces) {
		// another part added pieces in between: this part's move to
		// the end
		v.pieces = append(v.pieces, v.pieces[w.first:w.last]...)
		w.first, w.last = len(v.pieces)-(w.last-w.first), len(v.pieces)
	}
	v.pieces = append(v.pieces, p)
	w.last = len(v.pieces)
}

// s appends the texts.
func (w *vtext) s(texts ...string) *vtext {
	if len(w.v.text) != w.end {
		// another part wrote in between
		w.flush()
	}
	for _, text := range texts {
		w.v.text = append(w.v.text, text...)
	}
	w.end = len(w.v.text)
	return w
}

// flush ends the literal text so far as a piece.
func (w *vtext) flush() {
	if w.end > w.start {
		w.add(vpiece{start: int32(w.start), end: int32(w.end), code: -1})
	}
	w.start, w.end = len(w.v.text), len(w.v.text)
}

// typ appends the text of a type expression.
func (w *vtext) typ(c jen.Code) *vtext { return w.code(c, false) }

// expr appends the text of an expression.
func (w *vtext) expr(c jen.Code) *vtext { return w.code(c, true) }

func (w *vtext) code(c jen.Code, expr bool) *vtext {
	st, _ := c.(*jen.Statement)
	if write, ok := w.v.writers[st]; ok && st != nil {
		write(w)
		return w
	}
	w.flush()
	i, ok := w.v.seen[st]
	if st == nil || !ok || w.v.codes[i].expr != expr {
		w.v.codes = append(w.v.codes, vcode{code: c, expr: expr})
		i = len(w.v.codes) - 1
		if st != nil {
			w.v.seen[st] = i
		}
	}
	w.add(vpiece{code: int32(i)})
	return w
}

// known records the text of code c as go/format writes it, so that parts
// write it without the trailer; text must be a type name or array of one
// ([4]T), else it is not used. v may be nil.
func (v *verbatim) known(c jen.Code, text string) {
	if st, ok := c.(*jen.Statement); ok && v != nil && tyPlainType(text) {
		if _, ok := v.writers[st]; !ok {
			v.writers[st] = func(w *vtext) { w.s(text) }
		}
	}
}

// knownFunc records how to write code c as go/format writes it. v may be
// nil.
func (v *verbatim) knownFunc(c jen.Code, write func(w *vtext)) {
	if st, ok := c.(*jen.Statement); ok && v != nil {
		v.writers[st] = write
	}
}

// qual appends a qualified name, path.name.
func (w *vtext) qual(path, name string) *vtext {
	w.flush()
	k := [2]string{path, name}
	i, ok := w.v.quals[k]
	if !ok {
		w.v.codes = append(w.v.codes, vcode{code: jen.Qual(path, name), expr: true})
		i = len(w.v.codes) - 1
		w.v.quals[k] = i
	}
	w.add(vpiece{code: int32(i)})
	return w
}

// lit appends a string literal as jennifer's Lit writes it (fmt's %#v,
// which is strconv.Quote).
func (w *vtext) lit(s string) *vtext {
	w.s()
	w.v.text = strconv.AppendQuote(w.v.text, s)
	w.end = len(w.v.text)
	return w
}

// num appends n in decimal.
func (w *vtext) num(n int) *vtext {
	w.s()
	w.v.text = strconv.AppendInt(w.v.text, int64(n), 10)
	w.end = len(w.v.text)
	return w
}

// blanks appends n blanks.
func (w *vtext) blanks(n int) *vtext {
	w.s()
	for range n {
		w.v.text = append(w.v.text, ' ')
	}
	w.end = len(w.v.text)
	return w
}

// comment appends text as gocomment.Comment wraps it, at indentation
// indent; ok is false for text go/format would change (trailing blanks,
// control characters, and two backquotes or two single quotes in a row,
// which its doc comment reformatting turns into curly quotes; jennifer's
// comments reach go/format unindented, where they count as doc comments),
// which must go through jennifer instead.
func (w *vtext) comment(indent, text string) (ok bool) {
	return w.commentLines(indent, gocomment.Lines(text))
}

// commentLines is comment, from the text's wrapped lines.
func (w *vtext) commentLines(indent string, lines []string) (ok bool) {
	for _, l := range lines {
		if l == "" || strings.HasPrefix(l, "/") || strings.TrimRight(l, " \t") != l || strings.Contains(l, "``") || strings.Contains(l, "''") {
			return false
		}
		for _, r := range l {
			if r < ' ' || r == 0x7f || r == utf8.RuneError || r == '\u2028' || r == '\u2029' || r == '\ufeff' {
				return false
			}
		}
	}
	for _, l := range lines {
		w.s(indent, "// ", l, "\n")
	}
	return true
}

// docComment appends text as the doc comment of a top-level declaration;
// ok is false for text go/format's doc comment reformatting might change:
// a line starting with a blank (code), # (a heading) or [ (a link
// definition); unindented list markers it leaves alone.
func (w *vtext) docComment(text string) (ok bool) {
	lines := gocomment.Lines(text)
	for _, l := range lines {
		if l == "" || strings.ContainsRune(" \t#[/", rune(l[0])) {
			return false
		}
	}
	return w.commentLines("", lines)
}

// vfield is a struct field with its doc comment. Its type is code, or
// else the type id of the generated package, or else ref.
type vfield struct {
	doc, name string
	code      jen.Code
	id        string
	ref       genericRef
	// tag is the C name of what the field holds, for bridge.Bind and
	// bridge.BindSpec; "" for no tag.
	tag string
}

// tagText is the struct tag of a field holding the C name name, as a Go
// string literal: raw where the name allows, quoted otherwise.
func tagText(name string) string {
	t := "skelgen:" + strconv.Quote(name)
	if strings.ContainsRune(t, '`') || !strconv.CanBackquote(t) {
		return strconv.Quote(t)
	}
	return "`" + t + "`"
}

// typ is the field's type as jennifer code.
func (f vfield) typ() jen.Code {
	switch {
	case f.code != nil:
		return f.code
	case f.id != "":
		return jen.Id(f.id)
	}
	return f.ref.code()
}

// fields are the struct fields fs, as one verbatim part when v is not nil
// and every doc comment can be written verbatim.
func (v *verbatim) fields(fs []vfield) []jen.Code {
	if v != nil && len(fs) > 0 {
		w := v.part()
		ok := true
		for _, f := range fs {
			if ok = w.field(f); !ok {
				break
			}
		}
		if ok {
			return []jen.Code{v.placeholder(w)}
		}
	}
	var out []jen.Code
	for _, f := range fs {
		field := jen.Id(f.name).Add(f.typ())
		if f.tag != "" {
			field.Op(tagText(f.tag))
		}
		out = append(out, gocomment.Comment(f.doc), field)
	}
	return out
}

// vstruct is a struct type declaration with its doc comments (one
// gocomment.Comment each).
type vstruct struct {
	docs   []string
	name   string
	fields []vfield
}

// structDecls adds the declarations ds to f, as one verbatim part when v
// is not nil and every comment can be written verbatim.
func (v *verbatim) structDecls(f *jen.File, ds []vstruct) {
	if v != nil && len(ds) > 0 {
		w := v.part()
		ok := true
		for i, d := range ds {
			if i > 0 {
				w.s("\n")
			}
			if ok = w.structDecl(d); !ok {
				break
			}
		}
		if ok {
			f.Add(v.placeholder(w))
			return
		}
	}
	for _, d := range ds {
		for _, doc := range d.docs {
			f.Add(gocomment.Comment(doc))
		}
		f.Type().Id(d.name).Struct(v.fields(d.fields)...)
	}
}

func (w *vtext) structDecl(d vstruct) bool {
	for _, doc := range d.docs {
		if !w.docComment(doc) {
			return false
		}
	}
	if len(d.fields) == 0 {
		w.s("type ", d.name, " struct{}\n")
		return true
	}
	w.s("type ", d.name, " struct {\n")
	for _, f := range d.fields {
		if !w.field(f) {
			return false
		}
	}
	w.s("}\n")
	return true
}

// field appends struct field f with its doc comment, at one tab.
func (w *vtext) field(f vfield) bool {
	if !w.comment("\t", f.doc) {
		return false
	}
	w.s("\t", f.name, " ")
	switch {
	case f.code != nil:
		w.typ(f.code)
	case f.id != "":
		w.s(f.id)
	default:
		w.generic(f.ref)
	}
	if f.tag != "" {
		w.s(" ", tagText(f.tag))
	}
	w.s("\n")
	return true
}

// part starts a part.
func (v *verbatim) part() *vtext {
	return &vtext{v: v, first: len(v.pieces), last: len(v.pieces), start: len(v.text), end: len(v.text)}
}

// placeholder ends part w and returns the comment standing for it.
func (v *verbatim) placeholder(w *vtext) jen.Code {
	w.flush()
	v.parts = append(v.parts, v.pieces[w.first:w.last:w.last])
	return jen.Comment(v.marker + strconv.Itoa(len(v.parts)-1))
}

// trailer adds the declarations the parts' codes are rendered in; it must
// come after the file's last declaration.
func (v *verbatim) trailer(f *jen.File) {
	if len(v.parts) == 0 {
		return
	}
	f.Comment(v.marker + "trailer")
	for _, c := range v.codes {
		if c.expr {
			f.Var().Id("_").Op("=").Add(c.code)
		} else {
			f.Var().Id("_").Add(c.code)
		}
	}
}

// render renders f, whose regular parts are placeholders and whose last
// declarations are the trailer, and splices the parts in. The trailer's
// codes are written in go/format's form by gofmtExpr where it can: only the
// rest of the file, and the codes gofmtExpr does not know, go through
// go/format. fix, if not nil, rewrites the formatted source before the
// parts are spliced in (it must leave the placeholders alone).
func (v *verbatim) render(f *jen.File, fix func([]byte) []byte) ([]byte, error) {
	if fix == nil {
		fix = func(src []byte) []byte { return src }
	}
	if v == nil || len(v.parts) == 0 {
		var buf bytes.Buffer
		if err := f.Render(&buf); err != nil {
			return nil, err
		}
		return fix(buf.Bytes()), nil
	}
	if len(v.text) > math.MaxInt32 {
		return nil, fmt.Errorf("verbatim: %d bytes of text, more than pieces can address", len(v.text))
	}
	f.NoFormat = true
	var raw bytes.Buffer
	if err := f.Render(&raw); err != nil {
		return nil, err
	}
	src := raw.Bytes()
	cut := []byte("\n// " + v.marker + "trailer\n")
	t := bytes.Index(src, cut)
	if t < 0 {
		return nil, fmt.Errorf("verbatim: no trailer")
	}
	texts := make([]string, len(v.codes))
	known := make([]bool, len(v.codes))
	trailer := bytes.TrimSuffix(src[t+len(cut):], []byte("\n"))
	rest := trailer[:0:0]
	// One line a code, unless a code took more than one line.
	var fm exprFmt
	if lines := bytes.Split(trailer, []byte("\n")); len(lines) == len(v.codes) {
		for i, c := range v.codes {
			if text, ok := bytes.CutPrefix(lines[i], []byte(c.prefix())); ok {
				texts[i], known[i] = fm.format(string(text))
			}
			if !known[i] {
				rest = append(append(rest, lines[i]...), '\n')
			}
		}
	} else {
		rest = trailer
	}
	source := append(src[:t+len(cut):t+len(cut)], rest...)
	out, err := format.Source(source)
	if err != nil {
		// as jennifer's Render reports it
		return nil, fmt.Errorf("Error %s while formatting source:\n%s", err, source)
	}
	return v.splice(fix(out), texts, known)
}

// prefix is the declaration a code is rendered in, in the trailer.
func (c vcode) prefix() string {
	if c.expr {
		return "var _ = "
	}
	return "var _ "
}

// splice replaces the placeholders of formatted source src with their
// parts and cuts off the trailer, which holds the formatted codes not
// already known (texts[i] where known[i]). Anything unexpected (a
// placeholder missing or repeated, a code that did not format to one line)
// is an error, never wrong output.
func (v *verbatim) splice(src []byte, texts []string, known []bool) ([]byte, error) {
	if v == nil || len(v.parts) == 0 {
		return src, nil
	}
	cut := []byte("\n// " + v.marker + "trailer\n")
	t := bytes.Index(src, cut)
	if t < 0 {
		return nil, fmt.Errorf("verbatim: no trailer")
	}
	if texts == nil {
		texts = make([]string, len(v.codes))
		known = make([]bool, len(v.codes))
	}
	rest := src[t+len(cut):]
	for i, c := range v.codes {
		if known[i] {
			continue
		}
		line, after, ok := bytes.Cut(rest, []byte("\n"))
		var text []byte
		if ok {
			text, ok = bytes.CutPrefix(line, []byte(c.prefix()))
		}
		if !ok {
			return nil, fmt.Errorf("verbatim: trailer line %q", line)
		}
		texts[i] = string(text)
		rest = after
	}
	if len(rest) != 0 {
		return nil, fmt.Errorf("verbatim: trailer has %d bytes more", len(rest))
	}
	// The file's last declaration ends the source, with its newline.
	src = append(bytes.TrimRight(src[:t], "\n"), '\n')

	// The output's size: the source less its placeholders (counted in
	// full), the parts and a newline after each.
	var out bytes.Buffer
	size := len(src)
	for _, part := range v.parts {
		size++
		for _, p := range part {
			if p.code >= 0 {
				size += len(texts[p.code])
			} else {
				size += int(p.end - p.start)
			}
		}
	}
	out.Grow(size)
	used := make([]bool, len(v.parts))
	found := 0
	needle := []byte("// " + v.marker)
	for {
		k := bytes.Index(src, needle)
		if k < 0 {
			out.Write(src)
			break
		}
		// The placeholder is a line of its own, indented by tabs.
		start := bytes.LastIndexByte(src[:k], '\n') + 1
		end := bytes.IndexByte(src[k:], '\n')
		if len(bytes.TrimLeft(src[start:k], "\t")) != 0 || end < 0 {
			return nil, fmt.Errorf("verbatim: placeholder inside a line")
		}
		n := src[k+len(needle) : k+end]
		i, err := strconv.Atoi(string(n))
		if err != nil || i < 0 || i >= len(used) || used[i] {
			return nil, fmt.Errorf("verbatim: unexpected placeholder %q", n)
		}
		used[i] = true
		found++
		out.Write(src[:start])
		for _, p := range v.parts[i] {
			if p.code >= 0 {
				out.WriteString(texts[p.code])
			} else {
				out.Write(v.text[p.start:p.end])
			}
		}
		src = src[k+end+1:]
		// A part among the top-level declarations is the doc comment of
		// the next declaration to go/format, which puts no blank line
		// between them.
		if start == k && len(src) > 0 {
			out.WriteByte('\n')
		}
	}
	if found != len(v.parts) {
		return nil, fmt.Errorf("verbatim: %d of %d placeholders found", found, len(v.parts))
	}
	return out.Bytes(), nil
}
