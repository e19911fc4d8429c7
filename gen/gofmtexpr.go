package gen

import (
	"go/scanner"
	"go/token"
	"strings"
)

// gofmtExpr writes the type or expression src, as jennifer renders it
// unformatted (tokens separated by blanks), in the form go/format gives it
// on a line of its own. It knows only the small grammar the verbatim parts'
// codes use: names, qualified names, pointer, slice and array types,
// generic instantiations, calls, function types, struct{}, string and
// decimal or hexadecimal integer literals. ok is false for anything else, which then
// goes through go/format.
func gofmtExpr(src string) (out string, ok bool) {
	p := exprFmt{}
	var s scanner.Scanner
	fset := token.NewFileSet()
	file := fset.AddFile("", -1, len(src))
	bad := false
	s.Init(file, []byte(src), func(token.Position, string) { bad = true }, scanner.ScanComments)
	for {
		_, tok, lit := s.Scan()
		if tok == token.EOF {
			break
		}
		if tok == token.COMMENT {
			return "", false
		}
		if tok == token.SEMICOLON && lit == "\n" {
			// inserted at the end of the line
			continue
		}
		if tok.IsLiteral() || tok == token.IDENT {
			p.toks = append(p.toks, exprTok{tok, lit})
		} else {
			p.toks = append(p.toks, exprTok{tok, tok.String()})
		}
	}
	if bad || len(p.toks) == 0 {
		return "", false
	}
	p.expr()
	if p.bad || p.i != len(p.toks) {
		return "", false
	}
	return p.out.String(), true
}

type exprTok struct {
	tok token.Token
	lit string
}

type exprFmt struct {
	toks []exprTok
	i    int
	out  strings.Builder
	bad  bool
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
		if !strings.HasPrefix(p.toks[p.i].lit, `"`) {
			// go/format drops carriage returns from raw strings
			p.bad = true
			return
		}
		p.take(token.STRING)
	case token.INT:
		if !plainInt(p.toks[p.i].lit) {
			p.bad = true
			return
		}
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
// it is: decimal digits, or 0x and lower-case hexadecimal digits.
func plainInt(lit string) bool {
	digits := lit
	hex := strings.HasPrefix(lit, "0x")
	if hex {
		digits = lit[2:]
	}
	if digits == "" {
		return false
	}
	for _, c := range digits {
		if !('0' <= c && c <= '9' || hex && 'a' <= c && c <= 'f') {
			return false
		}
	}
	return true
}
