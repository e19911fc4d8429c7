package gen

import (
	"fmt"
	"go/ast"
	"go/constant"
	"go/parser"
	"go/token"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/dave/jennifer/jen"

	"github.com/skelgen/skelgen/internal/gocomment"
)

// Constants of the source. The object keeps no trace of a #define, nor of
// an enumerator the code uses only as a value, so skelgen reads them from
// the source text itself: the object-like #defines at file scope outside
// conditional blocks (#if, #ifdef, ...) whose body is an integer constant
// expression or a string literal, and the enumerators of anonymous enums
// at file scope. Included headers are not read: the constants are the
// source's own. Expressions are evaluated exactly (C's integer literals,
// character constants, unary and binary operators, parentheses, names of
// earlier constants and enumerators); a body skelgen cannot evaluate
// (sizeof, casts, function-like macros, names it does not know) gives no
// constant. The named enums the source defines are generated as Go types
// without -type (sourceEnums).

// cConst is one constant of the source.
type cConst struct {
	name  string
	value constant.Value // an Int or a String
	// text is the #define's body as written ("" for an enumerator).
	text string
	line int
	// file is the source's base name.
	file string
}

var (
	reDirective  = regexp.MustCompile(`^#\s*(\w+)\s*(.*)$`)
	reDefineName = regexp.MustCompile(`^(\w+)(.*)$`)
	reEnumOpen   = regexp.MustCompile(`\benum\b\s*([A-Za-z_]\w*)?\s*\{`)
	reIntSuffix  = regexp.MustCompile(`\b(0[xX][0-9a-fA-F]+|0[bB][01]+|[0-9]+)[uUlL]+\b`)
	reIdent      = regexp.MustCompile(`^[A-Za-z_]\w*$`)
)

// maxConstBits bounds the constants evaluation computes with: C's are at
// most 64 bits, and a hostile source must not make skelgen compute with
// numbers of millions of bits.
const maxConstBits = 65

// sourceConstants returns the constants of src, in source order, and the
// tags of the named enums it defines at file scope.
func sourceConstants(src string) (consts []cConst, enums []string) {
	cs := parseCSource(src)
	env := map[string]constant.Value{}
	byName := map[string]int{} // index in consts of a live #define
	type event struct {
		off   int
		macro [2]int
		enum  []int // a reEnumOpen match
	}
	var events []event
	for _, m := range cs.macros {
		events = append(events, event{off: m[0], macro: m})
	}
	for _, m := range reEnumOpen.FindAllStringSubmatchIndex(cs.text, -1) {
		if cs.blockAt(m[0]) < 0 {
			events = append(events, event{off: m[0], enum: m})
		}
	}
	// Macros and enums in source order.
	sort.SliceStable(events, func(a, b int) bool { return events[a].off < events[b].off })
	depth := 0
	// line counts the lines up to off, which only grows.
	lineOff, lineNo := 0, 1
	line := func(off int) int {
		if off > lineOff {
			lineNo += strings.Count(src[lineOff:off], "\n")
			lineOff = off
		}
		return lineNo
	}
	drop := func(name string) {
		if i, ok := byName[name]; ok {
			consts[i].name = ""
			delete(byName, name)
		}
		delete(env, name)
	}
	seenEnum := map[string]bool{}
	for _, ev := range events {
		if ev.enum == nil {
			text := strings.ReplaceAll(cs.code[ev.macro[0]:ev.macro[1]], "\\\n", " ")
			d := reDirective.FindStringSubmatch(strings.TrimSpace(text))
			if d == nil {
				continue
			}
			switch d[1] {
			case "if", "ifdef", "ifndef":
				depth++
			case "endif":
				depth = max(depth-1, 0)
			case "undef":
				if depth == 0 {
					drop(strings.TrimSpace(d[2]))
				}
			case "define":
				nm := reDefineName.FindStringSubmatch(d[2])
				if depth > 0 || nm == nil || strings.HasPrefix(nm[2], "(") {
					continue
				}
				name, body := nm[1], strings.Join(strings.Fields(nm[2]), " ")
				drop(name)
				v := evalConst(body, env)
				if v == nil {
					continue
				}
				env[name] = v
				byName[name] = len(consts)
				consts = append(consts, cConst{name: name, value: v, text: body, line: line(ev.off)})
			}
			continue
		}
		m := ev.enum
		tag := ""
		if m[2] >= 0 {
			tag = cs.text[m[2]:m[3]]
		}
		open := m[1] - 1
		end := matchingBrace(cs.text, open)
		if end <= open || cs.text[end] != '}' {
			continue // not closed
		}
		body := cs.code[open+1 : end]
		if tag != "" && !seenEnum[tag] {
			seenEnum[tag] = true
			enums = append(enums, tag)
		}
		if strings.Contains(body, "#") {
			continue // conditional enumerators: their values are not known
		}
		next := constant.MakeInt64(0)
		pos := open + 1
		for _, item := range splitTopLevel(body) {
			itemOff := pos
			pos += len(item) + 1
			name, expr, hasValue := strings.Cut(strings.TrimSpace(item), "=")
			name = strings.TrimSpace(name)
			if name == "" && !hasValue {
				continue // the comma after the last enumerator
			}
			if !reIdent.MatchString(name) {
				break
			}
			v := next
			if hasValue {
				if v = evalConst(strings.TrimSpace(expr), env); v == nil || v.Kind() != constant.Int {
					break // later values depend on this one
				}
			}
			if !fits64(v) {
				break
			}
			drop(name)
			env[name] = v
			next = constant.BinaryOp(v, token.ADD, constant.MakeInt64(1))
			if tag == "" {
				byName[name] = len(consts)
				consts = append(consts, cConst{name: name, value: v, line: line(itemOff)})
			}
		}
	}
	out := consts[:0]
	for _, c := range consts {
		if c.name != "" {
			out = append(out, c)
		}
	}
	return out, enums
}

// splitTopLevel splits s at the commas outside parentheses.
func splitTopLevel(s string) []string {
	var out []string
	depth, start := 0, 0
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case '(':
			depth++
		case ')':
			depth--
		case ',':
			if depth == 0 {
				out = append(out, s[start:i])
				start = i + 1
			}
		}
	}
	return append(out, s[start:])
}

// evalConst is the value of a #define body or an enumerator's expression:
// one or more string literals (concatenated), or an integer constant
// expression of C; nil when it is neither, or skelgen cannot tell.
func evalConst(text string, env map[string]constant.Value) constant.Value {
	if text == "" {
		return nil
	}
	if strings.HasPrefix(text, `"`) {
		return cStrings(text)
	}
	e, err := parser.ParseExpr(reIntSuffix.ReplaceAllString(text, "$1"))
	if err != nil {
		return nil
	}
	v := evalExpr(e, env, 0)
	if v == nil || v.Kind() != constant.Int || !fits64(v) {
		return nil
	}
	return v
}

// fits64 reports whether v is a value of a 64-bit C integer type.
func fits64(v constant.Value) bool {
	if _, ok := constant.Int64Val(v); ok {
		return true
	}
	_, ok := constant.Uint64Val(v)
	return ok
}

// cStrings is the value of adjacent C string literals, nil if text is
// anything else or an escape Go does not share.
func cStrings(text string) constant.Value {
	var b strings.Builder
	for rest := strings.TrimSpace(text); rest != ""; rest = strings.TrimSpace(rest) {
		if rest[0] != '"' {
			return nil
		}
		end := 1
		for end < len(rest) && rest[end] != '"' {
			if rest[end] == '\\' {
				end++
			}
			end++
		}
		if end >= len(rest) {
			return nil
		}
		s, err := strconv.Unquote(escapeHigh(rest[:end+1]))
		if err != nil {
			return nil
		}
		b.WriteString(s)
		rest = rest[end+1:]
	}
	return constant.MakeString(b.String())
}

// escapeHigh writes the bytes of lit outside ASCII as \x escapes: C keeps
// a string's bytes as they are, where strconv.Unquote would read them as
// UTF-8 and turn the bytes that are not into U+FFFD.
func escapeHigh(lit string) string {
	var b strings.Builder
	for i := 0; i < len(lit); i++ {
		if c := lit[i]; c >= utf8.RuneSelf {
			fmt.Fprintf(&b, "\\x%02x", c)
		} else {
			b.WriteByte(c)
		}
	}
	return b.String()
}

// evalExpr evaluates a C integer constant expression parsed as Go: the two
// languages share literals, parentheses and operators but ~ (Go's ^) and
// the truth values of !, && and the comparisons (0 or 1 in C).
func evalExpr(e ast.Expr, env map[string]constant.Value, depth int) constant.Value {
	if depth > 64 {
		return nil
	}
	depth++
	b2i := func(b bool) constant.Value {
		if b {
			return constant.MakeInt64(1)
		}
		return constant.MakeInt64(0)
	}
	asInt := func(v constant.Value) constant.Value {
		if v == nil || v.Kind() != constant.Int || constant.BitLen(v) > maxConstBits {
			return nil
		}
		return v
	}
	isZero := func(v constant.Value) bool { return constant.Sign(v) == 0 }
	switch e := e.(type) {
	case *ast.BasicLit:
		if e.Kind != token.INT && e.Kind != token.CHAR {
			return nil
		}
		v := constant.MakeFromLiteral(e.Value, e.Kind, 0)
		if v.Kind() == constant.Unknown {
			return nil
		}
		return asInt(constant.ToInt(v))
	case *ast.Ident:
		return env[e.Name]
	case *ast.ParenExpr:
		return evalExpr(e.X, env, depth)
	case *ast.UnaryExpr:
		x := asInt(evalExpr(e.X, env, depth))
		if x == nil {
			return nil
		}
		switch e.Op {
		case token.ADD, token.SUB:
			return constant.UnaryOp(e.Op, x, 0)
		case token.TILDE, token.XOR:
			return constant.UnaryOp(token.XOR, x, 0)
		case token.NOT:
			return b2i(isZero(x))
		}
		return nil
	case *ast.BinaryExpr:
		x, y := asInt(evalExpr(e.X, env, depth)), asInt(evalExpr(e.Y, env, depth))
		if x == nil || y == nil {
			return nil
		}
		switch e.Op {
		case token.ADD, token.SUB, token.MUL, token.AND, token.OR, token.XOR, token.AND_NOT:
			if e.Op == token.AND_NOT {
				return nil // not C
			}
			return asInt(constant.BinaryOp(x, e.Op, y))
		case token.QUO, token.REM:
			if isZero(y) {
				return nil
			}
			op := e.Op
			if op == token.QUO {
				op = token.QUO_ASSIGN // integer division, truncated as in C
			}
			return asInt(constant.BinaryOp(x, op, y))
		case token.SHL, token.SHR:
			n, ok := constant.Uint64Val(y)
			if !ok || n >= 64 {
				return nil
			}
			return asInt(constant.Shift(x, e.Op, uint(n)))
		case token.LAND:
			return b2i(!isZero(x) && !isZero(y))
		case token.LOR:
			return b2i(!isZero(x) || !isZero(y))
		case token.EQL, token.NEQ, token.LSS, token.LEQ, token.GTR, token.GEQ:
			return b2i(constant.Compare(x, e.Op, y))
		}
	}
	return nil
}

// collectSourceEnums queues the named enums the source defines, after
// every other type, so that an enum added to the source renames no type.
// An enum neither the object's BTF nor the source's types have (its
// source was not compiled a second time) is left out.
func (s *skeleton) collectSourceEnums() error {
	for _, tag := range s.cfg.SourceEnums {
		t, err := s.lookupType("enum " + tag)
		if err != nil {
			continue
		}
		if _, err := s.types.GoType(t); err != nil {
			return fmt.Errorf("enum %s: %w", tag, err)
		}
	}
	return nil
}

// constDecls declares the source's constants, after the types (whose
// names they yield to), each under the package's prefix and its name by
// the naming rule: its plain name unless another constant has the same
// one, else its spelled name; a name a type or the skeleton already has
// is spelled, then numbered.
func (s *skeleton) constDecls(f *jen.File) {
	if len(s.cfg.Constants) == 0 {
		return
	}
	cnames := make([]string, len(s.cfg.Constants))
	for i, c := range s.cfg.Constants {
		cnames[i] = c.name
	}
	names := assignNames(cnames, map[string]bool{})
	for i, c := range s.cfg.Constants {
		name := s.prefix + names[i]
		if s.types.taken[name] {
			name = s.prefix + spelledName(c.name)
		}
		name = s.types.reserve(name)
		what := "anonymous enum"
		if c.text != "" {
			what = "#define " + c.name + " " + c.text
			if c.value.Kind() == constant.Int && c.text == c.value.ExactString() {
				what = "#define"
			}
		}
		doc := name + " is " + c.name + " (" + what + ", " + c.file + ":" + strconv.Itoa(c.line) + ")."
		value := jen.Id(c.value.ExactString())
		if c.value.Kind() == constant.String {
			value = jen.Lit(constant.StringVal(c.value))
		}
		if s.verb != nil && token.IsIdentifier(name) {
			w := s.verb.part()
			if w.docComment(doc) {
				w.s("const ", name, " = ")
				if c.value.Kind() == constant.String {
					w.lit(constant.StringVal(c.value))
				} else {
					w.s(c.value.ExactString())
				}
				f.Add(s.verb.placeholder(w.s("\n")))
				continue
			}
		}
		f.Add(gocomment.Comment(doc))
		f.Const().Id(name).Op("=").Add(value)
	}
}
