package gen

import (
	"bytes"
	"context"
	"debug/elf"
	"encoding/binary"
	"fmt"
	"go/ast"
	"go/constant"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/cilium/ebpf/btf"
	"github.com/dave/jennifer/jen"

	clang "github.com/skelgen/skelgen/internal/cc"
	"github.com/skelgen/skelgen/internal/gocomment"
)

// Constants of the source. The object keeps no trace of a #define, nor of
// an enumerator the code uses only as a value. skelgen finds the
// candidates in the source text itself: the object-like #defines with a
// body, wherever they stand, and the enumerators of anonymous enums at
// file scope (included headers are not read: the constants are the
// source's own). Their values and types are clang's: a probe, the source
// followed by one global per candidate, __typeof__(NAME) initialised with
// (NAME), is compiled with the source's own compiler, flags and target,
// and each variable's type (its BTF) and bytes are read back. So C's
// preprocessor decides what is defined (conditionals, #undef, comments
// and line continuations), and C's rules the value and its type (operator
// precedence, integer promotions, suffixes, char's signedness, sizeof). A
// candidate clang does not evaluate to an integer or a string (a type,
// a runtime variable, division by zero, an undefined shift or overflow)
// is left out with a warning; a #define no longer defined at the end of
// the source, or whose live definition is not the source's, gives nothing.
//
// Where skelgen compiles nothing (-committed, or an object input with -src
// and no compiler), the values are read back from the skeleton the last
// run generated (committedConstants), as its objects are.

// cConst is one constant of the source.
type cConst struct {
	name string
	// value is an Int, a Bool or a String; nil for a candidate not yet
	// evaluated.
	value constant.Value
	// goType is the Go type of the value's C type (int32 for int, uint64
	// for unsigned long long, int8 for char); "" for a string.
	goType string
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
	reEnumerator = regexp.MustCompile(`^\s*([A-Za-z_]\w*)`)
)

// sourceConstants returns the candidate constants of src in source order,
// without values, and the tags of the named enums it defines at file
// scope. A name defined more than once has a candidate per definition.
func sourceConstants(src string) (consts []cConst, enums []string) {
	cs := parseCSource(src)
	line := func(off int) int { return strings.Count(src[:off], "\n") + 1 }
	for _, m := range cs.macros {
		text := strings.ReplaceAll(cs.code[m[0]:m[1]], "\\\n", " ")
		d := reDirective.FindStringSubmatch(strings.TrimSpace(text))
		if d == nil || d[1] != "define" {
			continue
		}
		nm := reDefineName.FindStringSubmatch(d[2])
		if nm == nil || strings.HasPrefix(nm[2], "(") {
			continue // function-like
		}
		if body := strings.Join(strings.Fields(nm[2]), " "); body != "" {
			consts = append(consts, cConst{name: nm[1], text: body, line: line(m[0])})
		}
	}
	seenEnum := map[string]bool{}
	for _, m := range reEnumOpen.FindAllStringSubmatchIndex(cs.text, -1) {
		if cs.blockAt(m[0]) >= 0 {
			continue
		}
		open := m[1] - 1
		end := matchingBrace(cs.text, open)
		if end <= open || cs.text[end] != '}' {
			continue // not closed
		}
		if m[2] >= 0 {
			if tag := cs.text[m[2]:m[3]]; !seenEnum[tag] {
				seenEnum[tag] = true
				enums = append(enums, tag)
			}
			continue
		}
		pos := open + 1
		for _, item := range splitTopLevel(cs.text[open+1 : end]) {
			if e := reEnumerator.FindStringSubmatchIndex(item); e != nil {
				consts = append(consts, cConst{name: item[e[2]:e[3]], line: line(pos + e[2])})
			}
			pos += len(item) + 1
		}
	}
	slices.SortStableFunc(consts, func(a, b cConst) int { return a.line - b.line })
	return consts, enums
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

// probeSection holds the probe's variables.
const probeSection = ".skelgen.consts"

// probeRounds bounds the compiles of one probe: each drops the candidates
// clang reported, so the second usually succeeds.
const probeRounds = 4

// probePragmas make clang's diagnostics on the probe's own lines those
// that matter: its warnings are off, but those of a value C leaves
// undefined, which are errors, and the redefinition that finds where a
// macro's live definition is.
const probePragmas = `#pragma clang diagnostic ignored "-Weverything"
#pragma clang diagnostic error "-Wdivision-by-zero"
#pragma clang diagnostic error "-Wshift-count-negative"
#pragma clang diagnostic error "-Wshift-count-overflow"
#pragma clang diagnostic error "-Wshift-negative-value"
#pragma clang diagnostic error "-Winteger-overflow"
#pragma clang diagnostic warning "-Wmacro-redefined"
`

// reDiag is a diagnostic line of clang's: file, line, kind, message.
var reDiag = regexp.MustCompile(`^(.+):(\d+):\d+: (error|fatal error|warning|note): (.*)$`)

// probeConstants evaluates the candidates of the source cfg.Input, read
// from its text, with clang for target t, and returns those that are
// constants, in source order, each from its live definition; the others
// are reported to warn.
func probeConstants(ctx context.Context, cfg Config, t Target, overlay map[string][]byte, cands []cConst, warn func(string)) ([]cConst, error) {
	src, err := filepath.Abs(cfg.Input)
	if err != nil {
		return nil, err
	}
	file := filepath.Base(src)
	var names []string // distinct, in order
	isDefine, defs := map[string]bool{}, map[string]map[int]cConst{}
	for _, c := range cands {
		if defs[c.name] == nil {
			defs[c.name] = map[int]cConst{}
			names = append(names, c.name)
		}
		defs[c.name][c.line] = c
		isDefine[c.name] = isDefine[c.name] || c.text != ""
	}
	if len(names) == 0 {
		return nil, nil
	}
	live := slices.Clone(names)
	for range probeRounds {
		var b strings.Builder
		fmt.Fprintf(&b, "/* skelgen: the constants of %s, as clang evaluates them */\n#include %q\n%s", file, file, probePragmas)
		lines := strings.Count(b.String(), "\n")
		value, redefined := map[int]string{}, map[int]string{} // probe line → name
		emit := func(at map[int]string, name, decl string) {
			guard := isDefine[name]
			if guard {
				fmt.Fprintf(&b, "#ifdef %s\n", name)
				lines++
			}
			fmt.Fprintf(&b, "%s\n", decl)
			lines++
			at[lines] = name
			if guard {
				b.WriteString("#endif\n")
				lines++
			}
		}
		for i, n := range live {
			emit(value, n, fmt.Sprintf("__typeof__(%s) __skelgen_c_%d __attribute__((section(%q), used)) = (%s);", n, i, probeSection, n))
		}
		for _, n := range live {
			if isDefine[n] {
				emit(redefined, n, "#define "+n+" __skelgen_redefined")
			}
		}
		opts := cfg.compileOptions(t, overlay)
		opts.Source, opts.Text = src, []byte(b.String())
		if opts.CFlags == nil {
			opts.CFlags = strings.Fields(clang.DefaultCFlags)
		}
		opts.CFlags = append(slices.Clip(opts.CFlags), "-ferror-limit=0")
		var diags string
		opts.Warn = func(d string) { diags = d }
		obj, _, err := Compile(ctx, opts)
		if err != nil {
			diags = err.Error()
		}
		// What clang said of each probe line, and where the live
		// definition of each macro is.
		failed := map[string]string{}
		where := map[string]int{} // name → line in the source
		redef := ""
		for _, l := range strings.Split(diags, "\n") {
			m := reDiag.FindStringSubmatch(l)
			if m == nil {
				continue
			}
			n, _ := strconv.Atoi(m[2])
			kind, msg := m[3], m[4]
			switch {
			case kind == "note" && redef != "" && msg == "previous definition is here":
				p := m[1]
				if !filepath.IsAbs(p) {
					p = filepath.Join(filepath.Dir(src), p)
				}
				if filepath.Clean(p) == src {
					where[redef] = n
				}
			case kind == "note":
			case m[1] != "<stdin>":
				redef = ""
			case kind == "warning" && redefined[n] != "":
				redef = redefined[n]
			case kind != "warning" && value[n] != "":
				if _, ok := failed[value[n]]; !ok {
					failed[value[n]] = msg
				}
				redef = ""
			default:
				redef = ""
			}
		}
		if err != nil {
			if len(failed) == 0 {
				warn(fmt.Sprintf("%s: its constants are left out: the compile that evaluates them failed: %v", file, err))
				return nil, nil
			}
			live = slices.DeleteFunc(live, func(n string) bool {
				msg, ok := failed[n]
				if ok && !(msg == "use of undeclared identifier '"+n+"'" && !isDefine[n]) {
					// An enumerator inside a conditional that is
					// not compiled is simply not there.
					warn(fmt.Sprintf("%s: %s is not a constant clang evaluates, left out: %s", candidateAt(file, defs[n], where[n]), n, gocomment.Text(msg)))
				}
				return ok
			})
			continue
		}
		vals, err := probeValues(obj, t.ByteOrder(), len(live))
		if err != nil {
			return nil, fmt.Errorf("%s: the compile that evaluates its constants: %w", file, err)
		}
		var out []cConst
		for i, n := range live {
			v, ok := vals[i]
			if !ok {
				continue // a #define not defined at the end of the source
			}
			var c cConst
			if isDefine[n] {
				if c, ok = defs[n][where[n]]; !ok {
					continue // the live definition is not the source's
				}
			} else {
				for _, d := range defs[n] {
					c = d
				}
			}
			if v.value == nil {
				warn(fmt.Sprintf("%s:%d: %s is not a constant clang evaluates, left out: %s", file, c.line, n, v.goType))
				continue
			}
			c.value, c.goType, c.file = v.value, v.goType, file
			out = append(out, c)
		}
		slices.SortStableFunc(out, func(a, b cConst) int { return a.line - b.line })
		return out, nil
	}
	warn(fmt.Sprintf("%s: its constants are left out: clang still reported some after %d compiles", file, probeRounds))
	return nil, nil
}

// targetConstants evaluates the constants of the sources for target t
// (probeConstants) and merges them: with several sources, a constant two
// give different values (or types) is left out, neither value being the
// object's alone.
func targetConstants(ctx context.Context, cfg Config, t Target, overlay map[string][]byte, sources []string, warn func(string)) ([]cConst, error) {
	var all []cConst
	for _, path := range sources {
		src, err := os.ReadFile(path)
		if err != nil {
			return nil, err
		}
		cands, _ := sourceConstants(string(src))
		cs, err := probeConstants(ctx, withInput(cfg, path), t, overlay, cands, warn)
		if err != nil {
			return nil, err
		}
		all = append(all, cs...)
	}
	index, clash := map[string]int{}, map[string]bool{}
	var out []cConst
	for _, c := range all {
		if i, ok := index[c.name]; ok {
			if old := out[i]; old.goType != c.goType || old.value.Kind() != c.value.Kind() || !constant.Compare(old.value, token.EQL, c.value) {
				clash[c.name] = true
			}
			continue
		}
		index[c.name] = len(out)
		out = append(out, c)
	}
	return slices.DeleteFunc(out, func(c cConst) bool { return clash[c.name] }), nil
}

// reConstDoc reads a constant's doc comment as constDecls writes it:
// "GoName is NAME (what, file:line)."
var reConstDoc = regexp.MustCompile(`^\S+ is (\w+) \(.*, ([^ ]+):(\d+)\)\.$`)

// committedConstants are the constants of the sources as the skeleton
// goFile, which an earlier run generated, declares them: the record of
// clang's values where skelgen compiles nothing. Only the sources'
// candidates are taken from it, each at the definition it names; a
// missing or unreadable file gives none.
func committedConstants(goFile string, sources []string) []cConst {
	f, err := parser.ParseFile(token.NewFileSet(), goFile, nil, parser.ParseComments)
	if err != nil {
		return nil
	}
	recorded := map[string]cConst{} // by name, file and line
	key := func(name, file string, line int) string { return fmt.Sprintf("%s %s %d", name, file, line) }
	for _, d := range f.Decls {
		g, ok := d.(*ast.GenDecl)
		if !ok || g.Tok != token.CONST || len(g.Specs) != 1 || g.Doc == nil {
			continue
		}
		spec := g.Specs[0].(*ast.ValueSpec)
		m := reConstDoc.FindStringSubmatch(strings.Join(strings.Fields(g.Doc.Text()), " "))
		if m == nil || len(spec.Values) != 1 {
			continue
		}
		c := cConst{value: goConstant(spec.Values[0])}
		if c.value == nil {
			continue
		}
		if id, ok := spec.Type.(*ast.Ident); ok {
			c.goType = id.Name
		}
		line, _ := strconv.Atoi(m[3])
		recorded[key(m[1], m[2], line)] = c
	}
	var out []cConst
	seen := map[string]bool{}
	for _, path := range sources {
		src, err := os.ReadFile(path)
		if err != nil {
			continue
		}
		cands, _ := sourceConstants(string(src))
		for _, c := range cands {
			c.file = filepath.Base(path)
			r, ok := recorded[key(c.name, c.file, c.line)]
			if !ok || seen[c.name] {
				continue
			}
			seen[c.name] = true
			c.value, c.goType = r.value, r.goType
			out = append(out, c)
		}
	}
	return out
}

// goConstant is the value of a constant's expression as constDecls
// writes it (a literal, a negative integer, true or false); nil for any
// other.
func goConstant(e ast.Expr) constant.Value {
	switch e := e.(type) {
	case *ast.BasicLit:
		if v := constant.MakeFromLiteral(e.Value, e.Kind, 0); e.Kind == token.INT || e.Kind == token.STRING {
			return v
		}
	case *ast.UnaryExpr:
		if x := goConstant(e.X); e.Op == token.SUB && x != nil && x.Kind() == constant.Int {
			return constant.UnaryOp(token.SUB, x, 0)
		}
	case *ast.Ident:
		if e.Name == "true" || e.Name == "false" {
			return constant.MakeBool(e.Name == "true")
		}
	}
	return nil
}

// candidateAt is where a name is defined, for a message: file:line of
// its live definition when clang said where, else of its last.
func candidateAt(file string, defs map[int]cConst, live int) string {
	if _, ok := defs[live]; !ok {
		for l := range defs {
			live = max(live, l)
		}
	}
	return file + ":" + strconv.Itoa(live)
}

// probeValue is the value of one probe variable: value and goType, or
// a nil value and in goType why it is not a constant.
type probeValue struct {
	value  constant.Value
	goType string
}

// probeValues reads the variables __skelgen_c_<i> of the probe object,
// i < n: their C types from its BTF, their bytes from probeSection. A
// variable the object does not have (its #ifdef was false) is not in
// the map.
func probeValues(obj []byte, order binary.ByteOrder, n int) (map[int]probeValue, error) {
	f, err := elf.NewFile(bytes.NewReader(obj))
	if err != nil {
		return nil, err
	}
	out := map[int]probeValue{}
	sec := f.Section(probeSection)
	if sec == nil {
		return out, nil
	}
	data, err := sec.Data()
	if err != nil {
		return nil, err
	}
	// Bytes a relocation fills are an address, not a constant.
	var relocated []uint64
	if rel := f.Section(".rel" + probeSection); rel != nil {
		r, err := rel.Data()
		if err != nil {
			return nil, err
		}
		for i := 0; i+16 <= len(r); i += 16 {
			relocated = append(relocated, order.Uint64(r[i:]))
		}
	}
	spec, err := btf.LoadSpecFromReader(bytes.NewReader(obj))
	if err != nil {
		return nil, err
	}
	syms, err := f.Symbols()
	if err != nil {
		return nil, err
	}
	for _, s := range syms {
		i, err := strconv.Atoi(strings.TrimPrefix(s.Name, "__skelgen_c_"))
		if err != nil || !strings.HasPrefix(s.Name, "__skelgen_c_") || i < 0 || i >= n || int(s.Section) >= len(f.Sections) || f.Sections[s.Section] != sec {
			continue
		}
		if s.Value > uint64(len(data)) || s.Size > uint64(len(data))-s.Value {
			return nil, fmt.Errorf("%s: outside its section", s.Name)
		}
		var v *btf.Var
		if err := spec.TypeByName(s.Name, &v); err != nil {
			return nil, err
		}
		b := data[s.Value : s.Value+s.Size]
		if slices.ContainsFunc(relocated, func(off uint64) bool { return off >= s.Value && off < s.Value+s.Size }) {
			out[i] = probeValue{goType: "an address"}
			continue
		}
		out[i] = constValue(v.Type, b, order)
	}
	return out, nil
}

// constValue is the constant of C type t held in b.
func constValue(t btf.Type, b []byte, order binary.ByteOrder) probeValue {
	t = btf.UnderlyingType(t)
	size, signed := 0, false
	switch t := t.(type) {
	case *btf.Int:
		if t.Encoding == btf.Bool && len(b) == 1 {
			return probeValue{constant.MakeBool(b[0] != 0), "bool"}
		}
		size, signed = int(t.Size), t.Encoding == btf.Signed
	case *btf.Enum:
		size, signed = int(t.Size), t.Signed
	case *btf.Array:
		if e, ok := btf.UnderlyingType(t.Type).(*btf.Int); ok && e.Size == 1 && len(b) > 0 && int(t.Nelems) == len(b) && b[len(b)-1] == 0 {
			return probeValue{constant.MakeString(string(b[:len(b)-1])), ""}
		}
		return probeValue{goType: "an array, not a string of char"}
	default:
		return probeValue{goType: "of type " + gocomment.Text(fmt.Sprint(t)) + ", not an integer or a string"}
	}
	if size != len(b) || size != 1 && size != 2 && size != 4 && size != 8 {
		return probeValue{goType: fmt.Sprintf("an integer of %d bytes", size)}
	}
	var u uint64
	switch size {
	case 1:
		u = uint64(b[0])
	case 2:
		u = uint64(order.Uint16(b))
	case 4:
		u = uint64(order.Uint32(b))
	case 8:
		u = order.Uint64(b)
	}
	goType := fmt.Sprintf("uint%d", size*8)
	v := constant.MakeUint64(u)
	if signed {
		goType = goType[1:]
		shift := 64 - size*8
		v = constant.MakeInt64(int64(u<<shift) >> shift)
	}
	return probeValue{v, goType}
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
		value := c.value.ExactString() // an Int's digits, a Bool's true or false
		typed := ""
		if c.goType != "" {
			typed = " " + c.goType
		}
		if s.verb != nil && token.IsIdentifier(name) {
			w := s.verb.part()
			if w.docComment(doc) {
				w.s("const ", name, typed, " = ")
				if c.value.Kind() == constant.String {
					w.lit(constant.StringVal(c.value))
				} else {
					w.s(value)
				}
				f.Add(s.verb.placeholder(w.s("\n")))
				continue
			}
		}
		f.Add(gocomment.Comment(doc))
		decl := f.Const().Id(name)
		if c.goType != "" {
			decl.Id(c.goType)
		}
		if c.value.Kind() == constant.String {
			decl.Op("=").Lit(constant.StringVal(c.value))
		} else {
			decl.Op("=").Id(value)
		}
	}
}
