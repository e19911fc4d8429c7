package gen

import (
	"fmt"
	"regexp"
	"slices"
	"sort"
	"strings"
)

// RecordGuess is the record type of a ring buffer or perf event array as
// read from the source: the type its records are sized or sent with.
type RecordGuess struct {
	// Type is the name to look the record type up by: the C type
	// ("struct event", "event_t"), or, for a struct the source defines
	// several times (in different functions), the file-scope name of the
	// copy of the definition the calls see (cDef.localName). Empty when
	// the source sends records of several types, or skelgen cannot tell
	// which definition they have.
	Type string
	// CName is the C type as the source writes it ("struct event").
	CName string
	// Func is the function defining the type when Type names a copy.
	Func string
	// Why says where it was found, for the generated doc comment.
	Why string
	// At lists the calls, file:line (function).
	At string
	// Err, when set, says why skelgen cannot tell the record type, which
	// it then will not guess: the map needs -type.
	Err string
}

var (
	// bpf_ringbuf_reserve(&map, sizeof(X), ...)
	reRingReserve = regexp.MustCompile(`bpf_ringbuf_reserve\s*\(\s*&\s*(\w+)\s*,\s*sizeof\s*\(?\s*([^),]+?)\s*\)?\s*,`)
	// bpf_ringbuf_output(&map, [&]var, ...)
	reRingOutput = regexp.MustCompile(`bpf_ringbuf_output\s*\(\s*&\s*(\w+)\s*,\s*&?\s*(\w+)\s*,`)
	// bpf_perf_event_output(ctx, &map, flags, [&]var, ...)
	rePerfOutput = regexp.MustCompile(`bpf_perf_event_output\s*\(\s*[^,]+,\s*&\s*(\w+)\s*,\s*[^,]+,\s*&?\s*(\w+)\s*,`)
	reComment    = regexp.MustCompile(`(?s)/\*.*?\*/|//[^\n]*`)
)

// recordsFromSource finds, for each ring buffer or perf map the source
// writes records to, the type of those records: what bpf_ringbuf_reserve
// sizes, or the variable bpf_ringbuf_output and bpf_perf_event_output
// send (through its declaration, struct T *e or struct T e). A struct
// the source defines several times is the definition the call sees (C's
// scopes: the innermost block's before the call, else the file's). A map
// whose calls disagree gets no type; one whose call is in a macro while
// the struct has several definitions gets an error.
func recordsFromSource(file string, src []byte) map[string]RecordGuess {
	text := blankComments(string(src))
	var cs *cSource // parsed when a struct has several definitions
	line := func(off int) int { return strings.Count(text[:off], "\n") + 1 }
	type use struct {
		RecordGuess
		call string
		line int
	}
	uses := map[string][]use{}
	add := func(m []int, call string, resolve func(string, int) string) {
		mapName := text[m[2]:m[3]]
		arg := strings.TrimSpace(text[m[4]:m[5]])
		t := resolve(arg, m[0])
		if t == "" {
			return
		}
		u := use{RecordGuess: RecordGuess{Type: t, CName: t}, call: call, line: line(m[0])}
		if kind, tag, ok := strings.Cut(t, " "); ok && (kind == "struct" || kind == "union") {
			if cs == nil {
				cs = parseCSource(string(src))
			}
			if defs := cs.definitions(kind, tag); len(defs) > 1 {
				if cs.inMacro(m[0]) {
					var where []string
					for _, d := range defs {
						where = append(where, d.where(file))
					}
					u.Err = fmt.Sprintf("%s:%d: the %s call is in a macro and %s has %d definitions (%s): skelgen cannot tell which one its records have", file, u.line, call, t, len(defs), strings.Join(where, ", "))
				} else if d := cs.visible(kind, tag, m[0]); d != nil && d.fn != "" {
					u.Type, u.Func = kind+" "+d.localName(), d.fn
				}
			}
		}
		uses[mapName] = append(uses[mapName], u)
	}
	sizeofType := func(arg string, off int) string {
		arg = strings.Join(strings.Fields(arg), " ")
		if strings.HasPrefix(arg, "struct ") || strings.HasPrefix(arg, "union ") {
			return arg
		}
		return varType(text[:off], strings.TrimLeft(arg, "* "))
	}
	for _, m := range reRingReserve.FindAllStringSubmatchIndex(text, -1) {
		add(m, "bpf_ringbuf_reserve", sizeofType)
	}
	for _, m := range reRingOutput.FindAllStringSubmatchIndex(text, -1) {
		add(m, "bpf_ringbuf_output", func(v string, off int) string { return varType(text[:off], v) })
	}
	for _, m := range rePerfOutput.FindAllStringSubmatchIndex(text, -1) {
		add(m, "bpf_perf_event_output", func(v string, off int) string { return varType(text[:off], v) })
	}
	out := map[string]RecordGuess{}
	for mapName, us := range uses {
		types := map[string]string{}
		var where []string
		for _, u := range us {
			types[u.Type] = u.describe()
			where = append(where, fmt.Sprintf("%s:%d (%s)", file, u.line, u.call))
		}
		if i := slices.IndexFunc(us, func(u use) bool { return u.Err != "" }); i >= 0 {
			out[mapName] = RecordGuess{Err: us[i].Err, Why: us[i].Err}
			continue
		}
		if len(types) != 1 {
			var ts []string
			for _, t := range types {
				ts = append(ts, t)
			}
			sort.Strings(ts)
			out[mapName] = RecordGuess{Why: fmt.Sprintf("records of several types (%s): name one with -type %s=T", strings.Join(ts, ", "), mapName)}
			continue
		}
		g := us[0].RecordGuess
		g.At = strings.Join(where, ", ")
		g.Why = fmt.Sprintf("record type %s, as written at %s", us[0].describe(), g.At)
		out[mapName] = g
	}
	return out
}

// describe is the record type as messages name it: struct event, or
// struct event (defined in function f) for one of several definitions.
func (g RecordGuess) describe() string {
	if g.Func == "" {
		return g.CName
	}
	return g.CName + " (defined in function " + g.Func + ")"
}

// blankComments replaces comments by blanks, keeping newlines, so that
// offsets still give lines.
func blankComments(src string) string {
	return reComment.ReplaceAllStringFunc(src, func(c string) string {
		// Byte by byte: the result keeps src's offsets, whatever the
		// comments hold.
		b := []byte(c)
		for i := range b {
			if b[i] != '\n' {
				b[i] = ' '
			}
		}
		return string(b)
	})
}

// varType finds the declaration of variable v nearest before the end of
// text (struct T *v, struct T v, T *v) and returns its type, or "".
func varType(text, v string) string {
	if v == "" || v == "sizeof" {
		return ""
	}
	re := regexp.MustCompile(`(?:^|[;{(,\s])((?:struct|union)\s+\w+|\w+)(?:\s+|\s*\*\s*)` + regexp.QuoteMeta(v) + `\s*(?:[=;,\[)])`)
	ms := re.FindAllStringSubmatch(text, -1)
	for i := len(ms) - 1; i >= 0; i-- {
		t := strings.Join(strings.Fields(ms[i][1]), " ")
		switch t {
		case "return", "sizeof", "else", "const", "volatile", "char", "int", "void", "long", "unsigned", "short":
			continue
		}
		if strings.HasPrefix(t, "__u") || strings.HasPrefix(t, "__s") || strings.HasPrefix(t, "u") && len(t) <= 3 {
			continue
		}
		return t
	}
	// struct T { ... } *v: a type defined where the variable is declared.
	closeRe := regexp.MustCompile(`\}\s*\*?\s*` + regexp.QuoteMeta(v) + `\s*(?:[=;,\[)])`)
	locs := closeRe.FindAllStringIndex(text, -1)
	if len(locs) == 0 {
		return ""
	}
	depth := 0
	for i := locs[len(locs)-1][0]; i >= 0; i-- {
		switch text[i] {
		case '}':
			depth++
		case '{':
			depth--
			if depth == 0 {
				m := regexp.MustCompile(`((?:struct|union)\s+\w+)\s*$`).FindStringSubmatch(text[:i])
				if m == nil {
					return ""
				}
				return strings.Join(strings.Fields(m[1]), " ")
			}
		}
	}
	return ""
}
