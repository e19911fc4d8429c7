package asm

import (
	"fmt"
	"math"
	"strconv"
	"strings"
)

type tokKind int

const (
	tokWord  tokKind = iota // starts with a letter, '_' or '.': mnemonic, keyword or label reference
	tokLabel                // "name:" at the start of a line
	tokOther                // register, number or memory operand
)

// token is one whitespace- or comma-delimited piece of a line; a memory
// operand in brackets is one token even if it holds spaces.
type token struct {
	text  string
	kind  tokKind
	line  int
	col   int
	comma bool // a comma follows the token
}

func (t token) errorf(format string, args ...any) *Error {
	return &Error{Line: t.line, Column: t.col, Token: t.text, Msg: fmt.Sprintf(format, args...)}
}

// tokenize splits one source line, dropping a comment that starts with '#'
// or ';'.
func tokenize(line string, lineNo int) ([]token, error) {
	if i := strings.IndexAny(line, "#;"); i >= 0 {
		line = line[:i]
	}
	var toks []token
	i := 0
	for i < len(line) {
		c := line[i]
		switch {
		case c == ' ' || c == '\t' || c == '\r':
			i++
			continue
		case c == ',':
			if len(toks) == 0 || toks[len(toks)-1].comma {
				return nil, &Error{Line: lineNo, Column: i + 1, Token: ",", Msg: "empty operand"}
			}
			toks[len(toks)-1].comma = true
			i++
			continue
		}
		start := i
		if c == '[' {
			end := strings.IndexByte(line[i:], ']')
			if end < 0 {
				return nil, &Error{Line: lineNo, Column: i + 1, Token: strings.TrimSpace(line[i:]), Msg: "unterminated memory operand"}
			}
			i += end + 1
		} else {
			for i < len(line) && !strings.ContainsRune(" \t\r,", rune(line[i])) {
				i++
			}
		}
		t := token{text: line[start:i], kind: tokOther, line: lineNo, col: start + 1}
		if isIdentStart(t.text[0]) {
			t.kind = tokWord
			if name, ok := strings.CutSuffix(t.text, ":"); ok && len(toks) == 0 {
				if name == "" || !isIdent(name) {
					return nil, t.errorf("invalid label")
				}
				t.text, t.kind = name, tokLabel
			}
		}
		if t.kind == tokLabel && len(toks) > 0 {
			return nil, t.errorf("label must start the line")
		}
		toks = append(toks, t)
	}
	return toks, nil
}

func isIdentStart(c byte) bool {
	return c == '_' || c == '.' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z'
}

func isIdent(s string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !isIdentStart(c) && !(c >= '0' && c <= '9') {
			return false
		}
	}
	return isIdentStart(s[0])
}

// operand is one comma-separated instruction operand.
type operand struct{ tok token }

// operands checks that toks are separated by single commas and wraps them.
func operands(toks []token, mn token) ([]operand, error) {
	ops := make([]operand, len(toks))
	for i, t := range toks {
		last := i == len(toks)-1
		if t.comma && last {
			return nil, t.errorf("trailing comma after operand")
		}
		if !t.comma && !last {
			return nil, toks[i+1].errorf("missing comma before operand")
		}
		if t.kind == tokLabel {
			return nil, t.errorf("unexpected label")
		}
		ops[i] = operand{t}
	}
	return ops, nil
}

func (o operand) isRegister() bool { return strings.HasPrefix(o.tok.text, "%") }
func (o operand) isLabel() bool    { return o.tok.kind == tokWord }

// register parses %r0..%r10.
func (o operand) register() (uint8, error) {
	return parseRegister(o.tok.text, o.tok)
}

func parseRegister(s string, t token) (uint8, error) {
	digits, ok := strings.CutPrefix(s, "%r")
	if !ok || digits == "" || len(digits) > 2 || (len(digits) == 2 && digits[0] == '0') {
		return 0, t.errorf("invalid register")
	}
	n, err := strconv.ParseUint(digits, 10, 8)
	if err != nil || n > 10 {
		return 0, t.errorf("invalid register")
	}
	return uint8(n), nil
}

// number splits a signed decimal or 0x-hexadecimal literal.
func number(s string) (neg bool, mag uint64, hex bool, ok bool) {
	switch {
	case strings.HasPrefix(s, "-"):
		neg, s = true, s[1:]
	case strings.HasPrefix(s, "+"):
		s = s[1:]
	}
	base := 10
	if rest, found := strings.CutPrefix(strings.ToLower(s), "0x"); found {
		s, base, hex = rest, 16, true
	}
	if s == "" || s[0] == '+' || s[0] == '-' {
		return false, 0, false, false
	}
	mag, err := strconv.ParseUint(s, base, 64)
	if err != nil {
		return false, 0, false, false
	}
	return neg, mag, hex, true
}

// signedField parses s for a field of the given width: decimal literals must
// fit the signed range, hexadecimal ones the unsigned width (a bit pattern).
func signedField(s string, bits uint, t token, what string) (int64, error) {
	neg, mag, hex, ok := number(s)
	if !ok {
		return 0, t.errorf("invalid %s", what)
	}
	limit := uint64(1) << (bits - 1) // magnitude of the most negative value
	switch {
	case neg && mag <= limit:
		return -int64(mag), nil
	case !neg && !hex && mag < limit:
		return int64(mag), nil
	case !neg && hex && mag < 2*limit:
		// Two's complement: 0xffffffff is -1 as an imm32.
		v := int64(mag)
		if mag >= limit {
			v -= int64(2 * limit)
		}
		return v, nil
	}
	return 0, t.errorf("%s out of %d-bit range", what, bits)
}

func (o operand) imm32() (int32, error) {
	if o.isRegister() || o.isLabel() || strings.HasPrefix(o.tok.text, "[") {
		return 0, o.tok.errorf("expected an immediate, have")
	}
	v, err := signedField(o.tok.text, 32, o.tok, "immediate")
	return int32(v), err
}

func (o operand) offset16() (int16, error) {
	if o.isRegister() || strings.HasPrefix(o.tok.text, "[") {
		return 0, o.tok.errorf("expected a jump target, have")
	}
	v, err := signedField(o.tok.text, 16, o.tok, "offset")
	return int16(v), err
}

// imm64 parses the 64-bit immediate of lddw: any value that fits 64 bits as
// a signed or unsigned number.
func (o operand) imm64() (uint64, error) {
	if o.isRegister() || o.isLabel() || strings.HasPrefix(o.tok.text, "[") {
		return 0, o.tok.errorf("expected an immediate, have")
	}
	neg, mag, _, ok := number(o.tok.text)
	switch {
	case !ok:
		return 0, o.tok.errorf("invalid immediate")
	case neg && mag > 1<<63:
		return 0, o.tok.errorf("immediate out of 64-bit range")
	case neg:
		return uint64(-int64(mag)), nil
	}
	return mag, nil
}

// memory parses [%rN], [%rN+off] and [%rN-off].
func (o operand) memory() (reg uint8, off int16, err error) {
	s := o.tok.text
	if !strings.HasPrefix(s, "[") || !strings.HasSuffix(s, "]") {
		return 0, 0, o.tok.errorf("invalid memory operand (want [%%rN+offset])")
	}
	inner := strings.Join(strings.Fields(s[1:len(s)-1]), "")
	i := strings.IndexAny(inner, "+-")
	if i < 0 {
		r, err := parseRegister(inner, o.tok)
		return r, 0, err
	}
	if reg, err = parseRegister(inner[:i], o.tok); err != nil {
		return 0, 0, err
	}
	v, err := signedField(inner[i:], 16, o.tok, "offset")
	if err != nil {
		return 0, 0, err
	}
	if v > math.MaxInt16 || v < math.MinInt16 {
		return 0, 0, o.tok.errorf("offset out of 16-bit range")
	}
	return reg, int16(v), nil
}

// mapRef is the operand of an lddw that loads a map handle ("map:N") or
// the address of a map's value ("value:N" or "value:N+OFF", a global
// variable): N indexes the program's map list, as the kernel's
// BPF_PSEUDO_MAP_IDX and BPF_PSEUDO_MAP_IDX_VALUE sources do.
type mapRef struct {
	src   uint8
	index int32
	off   int32
}

// mapRef parses a map reference; ok is false for any other operand.
func (o operand) mapRef() (ref mapRef, ok bool, err error) {
	s := o.tok.text
	rest, isMap := strings.CutPrefix(s, "map:")
	if isMap {
		ref.src = pseudoMapIdx
	} else if rest, ok = strings.CutPrefix(s, "value:"); ok {
		ref.src = pseudoMapIdxValue
	} else {
		return ref, false, nil
	}
	idx, off, hasOff := strings.Cut(rest, "+")
	if isMap && hasOff {
		return ref, true, o.tok.errorf("a map handle takes no offset")
	}
	n, err := strconv.ParseUint(idx, 10, 31)
	if err != nil {
		return ref, true, o.tok.errorf("invalid map index")
	}
	ref.index = int32(n)
	if hasOff {
		v, err := strconv.ParseUint(off, 0, 31)
		if err != nil {
			return ref, true, o.tok.errorf("invalid value offset")
		}
		ref.off = int32(v)
	}
	return ref, true, nil
}
