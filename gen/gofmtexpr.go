package gen

import (
	"go/token"
	"strconv"
	"strings"
)

// gofmtExpr writes the type or expression src, as jennifer renders it
// unformatted (tokens separated by blanks), in the form go/format gives it
// on a line of its own. It knows only the small grammar the verbatim parts'
// codes use: names, qualified names, pointer, slice and array types,
// generic instantiations, calls, function types, struct{}, string and
// decimal or hexadecimal integer literals, all in ASCII. ok is false for
// anything else, which then goes through go/format.
func gofmtExpr(src string) (out string, ok bool) {
	var p exprFmt
	return p.format(src)
}

// exprFmt formats codes with gofmtExpr's grammar; one is reused for many
// codes.
type exprFmt struct {
	toks []exprTok
	i    int
	out  strings.Builder
	bad  bool
	// memo holds the codes formatted so far: one Go type is often
	// written in many places.
	memo map[string]exprResult
}

type exprResult struct {
	out string
	ok  bool
}

// format is gofmtExpr.
func (p *exprFmt) format(src string) (string, bool) {
	if r, ok := p.memo[src]; ok {
		return r.out, r.ok
	}
	p.toks, p.i, p.bad = p.toks[:0], 0, false
	p.out.Reset()
	p.bad = !p.scan(src)
	if !p.bad && len(p.toks) > 0 {
		p.expr()
	}
	r := exprResult{}
	if !p.bad && len(p.toks) > 0 && p.i == len(p.toks) {
		r = exprResult{p.out.String(), true}
	}
	if p.memo == nil {
		p.memo = map[string]exprResult{}
	}
	p.memo[src] = r
	return r.out, r.ok
}

// scan splits src into tokens; false for a character outside the grammar.
func (p *exprFmt) scan(src string) bool {
	for i := 0; i < len(src); {
		c := src[i]
		start := i
		i++
		switch {
		case c == ' ' || c == '\t':
			continue
		case c == '_' || 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z':
			for i < len(src) && isIdentByte(src[i]) {
				i++
			}
			name := src[start:i]
			tok := token.Lookup(name)
			if tok != token.IDENT && tok != token.FUNC && tok != token.STRUCT {
				return false
			}
			p.toks = append(p.toks, exprTok{tok, name})
		case '0' <= c && c <= '9':
			for i < len(src) && isIdentByte(src[i]) {
				i++
			}
			if !plainInt(src[start:i]) || i < len(src) && src[i] == '.' {
				// not an integer, or a float
				return false
			}
			p.toks = append(p.toks, exprTok{token.INT, src[start:i]})
		case c == '"':
			for i < len(src) && src[i] != '"' {
				if src[i] == '\\' {
					i++
				}
				i++
			}
			if i >= len(src) {
				return false
			}
			i++
			lit := src[start:i]
			for j := range len(lit) {
				if lit[j] < ' ' || lit[j] >= 0x7f {
					return false
				}
			}
			if _, err := strconv.Unquote(lit); err != nil {
				return false
			}
			p.toks = append(p.toks, exprTok{token.STRING, lit})
		default:
			tok, ok := exprPunct[c]
			if !ok {
				return false
			}
			p.toks = append(p.toks, exprTok{tok, src[start:i]})
		}
	}
	return true
}

var exprPunct = map[byte]token.Token{
	'.': token.PERIOD, ',': token.COMMA, '*': token.MUL,
	'[': token.LBRACK, ']': token.RBRACK, '(': token.LPAREN, ')': token.RPAREN,
	'{': token.LBRACE, '}': token.RBRACE,
}

func isIdentByte(c byte) bool {
	return c == '_' || 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9'
}

type exprTok struct {
	tok token.Token
	lit string
}

func (p *exprFmt) peek() token.Token {
	if p.i < len(p.toks) {
		return p.toks[p.i].tok
	}
	return token.EOF
}

// take consumes a token of kind tok and writes it.
func (p *exprFmt) take(tok token.Token) {
	if p.peek() != tok {
		p.bad = true
		return
	}
	p.out.WriteString(p.toks[p.i].lit)
	p.i++
}

// expr is an operand with its selectors, indexes and calls.
func (p *exprFmt) expr() {
	switch p.peek() {
	case token.LBRACK, token.FUNC, token.STRUCT:
		// A type literal: go/format puts a conversion's type in
		// parentheses; left to it.
		p.typ()
		if p.peek() != token.EOF && p.peek() != token.COMMA && p.peek() != token.RBRACK && p.peek() != token.RPAREN {
			p.bad = true
		}
		return
	}
	p.operand()
	for !p.bad {
		switch p.peek() {
		case token.PERIOD:
			p.take(token.PERIOD)
			p.take(token.IDENT)
		case token.LBRACK:
			if p.commaInBrackets() {
				p.typeArgs()
				continue
			}
			p.take(token.LBRACK)
			if p.list(token.RBRACK) != 1 {
				p.bad = true
			}
			p.take(token.RBRACK)
		case token.LPAREN:
			p.take(token.LPAREN)
			p.list(token.RPAREN)
			p.take(token.RPAREN)
		default:
			return
		}
	}
}

func (p *exprFmt) operand() {
	if p.bad {
		return
	}
	switch p.peek() {
	case token.STRING:
		p.take(token.STRING)
	case token.INT:
		p.take(token.INT)
	case token.MUL:
		// *x.y, *x[i], *f(): the star applies to the whole primary
		// expression.
		p.take(token.MUL)
		p.expr()
	case token.IDENT:
		// selectors and indexes are the caller's
		p.take(token.IDENT)
	default:
		p.typ()
	}
}

// startsType reports whether tok can start a type.
func startsType(tok token.Token) bool {
	switch tok {
	case token.IDENT, token.MUL, token.LBRACK, token.FUNC, token.STRUCT:
		return true
	}
	return false
}

// typ is a type: a name, qualified or not, with type arguments or not; a
// pointer, slice or array type; a function type; struct{}.
func (p *exprFmt) typ() {
	if p.bad {
		return
	}
	switch p.peek() {
	case token.IDENT:
		p.take(token.IDENT)
		if p.peek() == token.PERIOD {
			p.take(token.PERIOD)
			p.take(token.IDENT)
		}
		p.typeArgs()
	case token.MUL:
		p.take(token.MUL)
		p.typ()
	case token.LBRACK:
		p.take(token.LBRACK)
		if p.peek() == token.INT {
			p.operand()
		}
		p.take(token.RBRACK)
		p.typ()
	case token.FUNC:
		p.take(token.FUNC)
		p.signature()
	case token.STRUCT:
		// only the empty struct
		p.take(token.STRUCT)
		p.take(token.LBRACE)
		p.take(token.RBRACE)
	default:
		p.bad = true
	}
}

// typeArgs is the type arguments of a generic type, if any.
func (p *exprFmt) typeArgs() {
	if p.peek() != token.LBRACK {
		return
	}
	p.take(token.LBRACK)
	for n := 0; !p.bad && (n == 0 || p.peek() != token.RBRACK); n++ {
		if n > 0 {
			p.take(token.COMMA)
			p.out.WriteByte(' ')
		}
		p.typ()
	}
	p.take(token.RBRACK)
}

// commaInBrackets reports whether the brackets at the next token hold a
// comma at their top level: a list of type arguments.
func (p *exprFmt) commaInBrackets() bool {
	depth := 0
	for _, t := range p.toks[p.i:] {
		switch t.tok {
		case token.LBRACK, token.LPAREN, token.LBRACE:
			depth++
		case token.RBRACK, token.RPAREN, token.RBRACE:
			if depth--; depth == 0 {
				return false
			}
		case token.COMMA:
			if depth == 1 {
				return true
			}
		}
	}
	return false
}

// list is a comma-separated list of expressions up to the token end. n
// is the number of elements.
func (p *exprFmt) list(end token.Token) (n int) {
	for ; !p.bad && p.peek() != end; n++ {
		if n > 0 {
			p.take(token.COMMA)
			p.out.WriteByte(' ')
		}
		p.expr()
	}
	return n
}

// params is a parenthesized parameter list: all types, or names each
// with a type or grouped before one (a, b int). n is the number of
// entries.
func (p *exprFmt) params() (n int) {
	p.take(token.LPAREN)
	named, lastNamed, bare := false, false, true
	for ; !p.bad && p.peek() != token.RPAREN; n++ {
		if n > 0 {
			p.take(token.COMMA)
			p.out.WriteByte(' ')
		}
		if p.peek() == token.IDENT && p.i+1 < len(p.toks) && startsType(p.toks[p.i+1].tok) {
			p.take(token.IDENT)
			p.out.WriteByte(' ')
			p.typ()
			named, lastNamed = true, true
			continue
		}
		// a type, or a name grouped with the next
		start := p.i
		p.typ()
		lastNamed = false
		if p.i-start != 1 || p.toks[start].tok != token.IDENT {
			bare = false
		}
	}
	if named && (!lastNamed || !bare) {
		p.bad = true
	}
	p.take(token.RPAREN)
	return n
}

// signature is the parameters and results of a function type.
func (p *exprFmt) signature() {
	p.params()
	switch {
	case p.peek() == token.LPAREN:
		p.out.WriteByte(' ')
		// go/format drops the parentheses of one unnamed result:
		// left to it.
		if p.params() < 2 {
			p.bad = true
		}
	case startsType(p.peek()):
		p.out.WriteByte(' ')
		p.typ()
	}
}

// plainInt reports whether an integer literal is one go/format writes as
// it is: decimal digits, octal digits after a 0, or 0x and lower-case
// hexadecimal digits.
func plainInt(lit string) bool {
	digits, max := lit, byte('9')
	hex := strings.HasPrefix(lit, "0x")
	switch {
	case hex:
		digits = lit[2:]
	case len(lit) > 1 && lit[0] == '0':
		max = '7'
	}
	if digits == "" {
		return false
	}
	for i := range len(digits) {
		c := digits[i]
		if !('0' <= c && c <= max || hex && 'a' <= c && c <= 'f') {
			return false
		}
	}
	return true
}
