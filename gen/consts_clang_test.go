package gen

import (
	"context"
	"fmt"
	"go/ast"
	"go/constant"
	"go/parser"
	"go/token"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/skelgen/skelgen/internal/testenv"
)

// constBattery are #define bodies whose values C's rules and Go's differ
// on, or that are no constant at all (dropped: clang does not evaluate
// them, and the skeleton has no constant of that name).
var constBattery = []struct {
	name, body string
	dropped    bool
}{
	// Precedence of operator pairs.
	{"P_SHL_ADD", "(1 << 2 + 1)", false},
	{"P_OR_XOR", "(4 | 4 ^ 4)", false},
	{"P_AND_EQ", "(3 & 1 == 1)", false},
	{"P_OR_AND", "(1 | 2 & 4)", false},
	{"P_XOR_AND", "(6 ^ 3 & 1)", false},
	{"P_SHR_SUB", "(64 >> 2 - 1)", false},
	{"P_AND_ADD", "(6 & 3 + 1)", false},
	{"P_OR_SUB", "(8 | 4 - 1)", false},
	{"P_XOR_MUL", "(5 ^ 2 * 3)", false},
	{"P_EQ_AND", "(2 == 2 & 3)", false},
	{"P_NE_OR", "(1 != 1 | 2)", false},
	{"P_LT_SHL", "(1 < 1 << 2)", false},
	{"P_LT_EQ", "(1 < 2 == 1)", false},
	{"P_LAND_LOR", "(0 && 0 || 1)", false},
	{"P_LOR_LAND", "(1 || 0 && 0)", false},
	{"P_COND", "(0 ? 1 : 2 ? 3 : 4)", false},
	{"P_COND_OR", "(1 | 0 ? 5 : 6)", false},
	{"P_MUL_DIV", "(7 * 3 / 2)", false},
	{"P_DIV_MUL", "(7 / 2 * 3)", false},
	{"P_MOD_MUL", "(7 % 4 * 3)", false},
	{"P_UNARY_SHL", "(-1 * 2 + 3 << 1)", false},
	{"P_NOT_EQ", "(!1 == 0)", false},
	{"P_TILDE_AND", "(~1 & 0xff)", false},
	{"P_COMMA", "(1, 2)", false},
	{"P_ADD_SHL_AND", "(1 + 1 << 1 & 7)", false},
	{"P_SHL_CMP", "(1 << 3 > 4)", false},
	{"P_GE_NE", "(3 >= 2 != 0)", false},
	{"P_OR_XOR_AND", "(1 | 6 ^ 3 & 5)", false},
	// Unsigned promotion and the usual arithmetic conversions.
	{"U_NOT", "(~0U)", false},
	{"U_SUB", "(0u - 1)", false},
	{"U_DIV", "(-10 / 3u)", false},
	{"U_MOD", "(-10 % 3u)", false},
	{"U_CMP", "(-1 < 0u)", false},
	{"U_SHR", "(-1u >> 1)", false},
	{"U_NEG", "(-1U)", false},
	{"U_MIX_L", "(-1 + 0UL)", false},
	{"U_LONG_CMP", "(-1L < 1U)", false},
	{"U_LL", "(0ULL - 1)", false},
	{"S_DIV", "(-7 / 2)", false},
	{"S_MOD", "(-7 % 2)", false},
	{"S_SHR", "(-8 >> 1)", false},
	{"S_NOT", "(~0)", false},
	{"S_MINUS", "(-2147483647 - 1)", false},
	{"U_MUL_WRAP", "(65536u * 65536u)", false},
	{"U_ADD_WRAP", "(4294967295u + 1)", false},
	// Suffixes and the types of literals.
	{"L_SUFFIX", "1L", false},
	{"UL_SUFFIX", "1UL", false},
	{"ULL_SUFFIX", "1ULL", false},
	{"LL_SUFFIX", "(1LL << 40)", false},
	{"LU_SUFFIX", "5lu", false},
	{"L_SHIFT", "(1L << 40)", false},
	{"UL_MAX", "(~0UL)", false},
	{"HEX_INT_MAX", "0x7fffffff", false},
	{"HEX_UINT", "0x80000000", false},
	{"HEX_UINT_MAX", "0xffffffff", false},
	{"HEX_LONG", "0x100000000", false},
	{"HEX_ULONG", "0x8000000000000000", false},
	{"HEX_ULONG_MAX", "0xffffffffffffffff", false},
	{"DEC_LONG", "2147483648", false},
	{"DEC_BIG", "9223372036854775807", false},
	{"OCTAL", "0777", false},
	{"BINARY", "0b1010", false},
	{"HEX_NEG", "(-0x80000000)", false},
	// Character constants: int, with char's signedness (signed on bpf).
	{"C_FF", `'\xff'`, false},
	{"C_NUL", `'\0'`, false},
	{"C_377", `'\377'`, false},
	{"C_A", `'a'`, false},
	{"C_NL", `'\n'`, false},
	{"C_CAST", `((char)255)`, false},
	{"C_UCAST", `((unsigned char)-1)`, false},
	{"C_SCHAR", `((signed char)128)`, false},
	{"C_MULTI", `'ab'`, false},
	// Casts, sizeof, _Bool and other types.
	{"T_SHORT", "((short)70000)", false},
	{"T_USHORT", "((unsigned short)-1)", false},
	{"T_U8", "((__u8)300)", false},
	{"T_S64", "((__s64)-1)", false},
	{"T_BOOL", "((_Bool)5)", false},
	{"T_SIZEOF", "sizeof(struct pair)", false},
	{"T_SIZEOF_LONG", "sizeof(long)", false},
	{"T_SIZEOF_ARR", "(sizeof(int[3]) / sizeof(int))", false},
	{"T_ALIGNOF", "_Alignof(long long)", false},
	{"T_OFFSETOF", "__builtin_offsetof(struct pair, b)", false},
	{"T_STRING", `"text"`, false},
	{"T_STRINGS", `"a" "b\tc"`, false},
	{"T_STRING_NUL", `"a\0b"`, false},
	{"T_STRING_HIGH", `"\xff\x01"`, false},
	{"T_STRING_EMPTY", `""`, false},
	// Macros referring to macros, enumerators and types.
	{"M_REF", "(P_SHL_ADD * 2)", false},
	{"M_ENUM", "(EN_B + 1)", false},
	{"M_CHAIN", "(M_REF + U_NOT)", false},
	{"M_LATER", "(LATER_DEFINED + 1)", false},
	// Not constants: left out.
	{"X_DIV0", "(1 / 0)", true},
	{"X_MOD0", "(1 % 0)", true},
	{"X_NEG_SHIFT", "(1 << -1)", true},
	{"X_BIG_SHIFT", "(1 << 40)", true},
	{"X_OVERFLOW", "(2147483647 + 1)", true},
	{"X_NEG_VALUE_SHIFT", "(-1 << 2)", true},
	{"X_TYPE", "unsigned int", true},
	{"X_VAR", "keep", true},
	{"X_ADDR", "((long)&keep)", true},
	{"X_PTR", "((void *)0)", true},
	{"X_FLOAT", "1.5", true},
	{"X_UNKNOWN", "(NO_SUCH_NAME + 1)", true},
	{"X_STMT", "do { } while (0)", true},
	{"X_WIDE", `L"wide"`, true},
	{"X_INT128", "((__int128)1 << 100)", true},
}

// constBatterySource is the battery's source: the #defines, and the
// preprocessor's own cases around them.
func constBatterySource() string {
	var b strings.Builder
	b.WriteString("//go:build ignore\n\ntypedef unsigned char __u8;\ntypedef long long __s64;\n\nstruct pair { int a; char b; };\nint keep;\n\n")
	for _, c := range constBattery {
		fmt.Fprintf(&b, "#define %s %s\n", c.name, c.body)
	}
	b.WriteString(`
enum { EN_A = P_SHL_ADD + 1, EN_B, EN_BIG = 1u << 31, EN_NEG = -3 };
#define LATER_DEFINED 41
#define MAX_ENTRIES 16
// a comment that goes on \
#define MAX_ENTRIES 1048576
/* a block comment \
#define IN_COMMENT 1 */
#if 0
#define IN_IF0 1
#endif
#ifdef __BPF__
#define IN_IFDEF 7
#else
#define IN_IFDEF 8
#endif
#define UNDEFINED 3
#undef UNDEFINED
#define REDEFINED 1
#undef REDEFINED
#define REDEFINED 2
#define CONTINUED (1 + \
	2)
#define FN_LIKE(x) ((x) + 1)
`)
	return b.String()
}

// constBatteryExtra are the names the source defines besides the battery,
// and whether each is a constant.
var constBatteryExtra = map[string]bool{
	"EN_A": true, "EN_B": true, "EN_BIG": true, "EN_NEG": true, "LATER_DEFINED": true,
	"MAX_ENTRIES": true, "IN_IFDEF": true, "REDEFINED": true, "CONTINUED": true,
	"IN_COMMENT": false, "IN_IF0": false, "UNDEFINED": false, "FN_LIKE": false,
}

// goConst is a constant of a generated skeleton: its C name, Go type
// ("" when untyped) and value.
type goConst struct {
	goType string
	value  constant.Value
}

// generatedConsts reads the constants of a generated skeleton by the C
// names their doc comments give.
func generatedConsts(t *testing.T, path string) map[string]goConst {
	t.Helper()
	f, err := parser.ParseFile(token.NewFileSet(), path, nil, parser.ParseComments)
	if err != nil {
		t.Fatal(err)
	}
	reDoc := regexp.MustCompile(`^\S+ is (\w+) \(`)
	out := map[string]goConst{}
	for _, d := range f.Decls {
		g, ok := d.(*ast.GenDecl)
		if !ok || g.Tok != token.CONST || g.Doc == nil || len(g.Specs) != 1 {
			continue
		}
		m := reDoc.FindStringSubmatch(strings.Join(strings.Fields(g.Doc.Text()), " "))
		if m == nil {
			continue
		}
		spec := g.Specs[0].(*ast.ValueSpec)
		var c goConst
		if id, ok := spec.Type.(*ast.Ident); ok {
			c.goType = id.Name
		}
		switch e := spec.Values[0].(type) {
		case *ast.BasicLit:
			c.value = constant.MakeFromLiteral(e.Value, e.Kind, 0)
		case *ast.UnaryExpr:
			c.value = constant.UnaryOp(e.Op, constant.MakeFromLiteral(e.X.(*ast.BasicLit).Value, token.INT, 0), 0)
		case *ast.Ident:
			c.value = constant.MakeBool(e.Name == "true")
		}
		out[m[1]] = c
	}
	return out
}

// staticAsserts are C assertions that name has the value and the type of
// c: clang checks them.
func staticAsserts(name string, c goConst) []string {
	var out []string
	switch {
	case c.value.Kind() == constant.String:
		s := constant.StringVal(c.value)
		out = append(out, fmt.Sprintf("sizeof(%s) == %d", name, len(s)+1))
		for i := 0; i < len(s); i++ {
			out = append(out, fmt.Sprintf("(%s)[%d] == (char)'\\x%02x'", name, i, s[i]))
		}
	case c.value.Kind() == constant.Bool:
		out = append(out, fmt.Sprintf("__builtin_types_compatible_p(__typeof__(%s), _Bool)", name), fmt.Sprintf("(%s) == %s", name, map[bool]string{true: "1", false: "0"}[constant.BoolVal(c.value)]))
	default:
		lit := c.value.ExactString() + "ULL"
		if constant.Sign(c.value) < 0 {
			lit = fmt.Sprintf("(-(__int128)%sULL)", constant.UnaryOp(token.SUB, c.value, 0).ExactString())
		}
		out = append(out, fmt.Sprintf("(__int128)(%s) == (__int128)%s", name, lit))
		bits, err := strconv.Atoi(strings.TrimLeft(c.goType, "uint"))
		if err != nil {
			out = append(out, "0 /* untyped: "+c.goType+" */")
			break
		}
		out = append(out, fmt.Sprintf("sizeof(%s) == %d", name, bits/8), fmt.Sprintf("(((__typeof__(%s))-1) < 0) == %d", name, strings.Count(c.goType[:1], "i")))
	}
	return out
}

// TestConstantsAsClang generates the skeleton of a battery of constants
// and has clang check, with _Static_assert, that each Go constant has the
// value and the type C gives its name; and that what is no constant, or
// not defined, has none.
func TestConstantsAsClang(t *testing.T) {
	cc := testenv.Clang(t)
	dir := t.TempDir()
	src := filepath.Join(dir, "battery.bpf.c")
	if err := os.WriteFile(src, []byte(constBatterySource()), 0o644); err != nil {
		t.Fatal(err)
	}
	var warnings []string
	cfg := Config{Input: src, Package: "battery", ImportRuntime: true, Targets: []Target{{Clang: "bpfel"}, {Clang: "bpfeb"}},
		Warn: func(msg string) { warnings = append(warnings, msg) }}
	files, err := Generate(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	if err := WriteFiles(files); err != nil {
		t.Fatal(err)
	}
	want := map[string]bool{}
	for _, c := range constBattery {
		want[c.name] = !c.dropped
	}
	for n, ok := range constBatteryExtra {
		want[n] = ok
	}
	for _, target := range []string{"bpfel", "bpfeb"} {
		consts := generatedConsts(t, filepath.Join(dir, "battery_"+target+".go"))
		var asserts strings.Builder
		fmt.Fprintf(&asserts, "#include %q\n", filepath.Base(src))
		lineName := map[int]string{}
		line := 1
		for name, c := range consts {
			if !want[name] {
				t.Errorf("%s: %s = %s (%s): not a constant of the source", target, name, c.value, c.goType)
				continue
			}
			for _, a := range staticAsserts(name, c) {
				line++
				lineName[line] = name
				fmt.Fprintf(&asserts, "_Static_assert(%s, %q);\n", a, name)
			}
		}
		for name, ok := range want {
			if _, found := consts[name]; ok && !found {
				t.Errorf("%s: no constant %s", target, name)
			}
		}
		check := filepath.Join(dir, "check_"+target+".c")
		if err := os.WriteFile(check, []byte(asserts.String()), 0o644); err != nil {
			t.Fatal(err)
		}
		cmd := exec.Command(cc, "-target", target, "-fsyntax-only", "-ferror-limit=0", "-Wno-everything", filepath.Base(check))
		cmd.Dir = dir
		out, err := cmd.CombinedOutput()
		differ := map[string]bool{}
		for _, m := range regexp.MustCompile(`(?m)^`+regexp.QuoteMeta(filepath.Base(check))+`:(\d+):\d+: error: (.*)$`).FindAllStringSubmatch(string(out), -1) {
			n, _ := strconv.Atoi(m[1])
			name := lineName[n]
			if name == "" {
				t.Fatalf("%s: clang: %s", target, m[0])
			}
			if !differ[name] {
				differ[name] = true
				t.Errorf("%s: %s = %s (%s), not C's: %s", target, name, consts[name].value, consts[name].goType, m[2])
			}
		}
		if err != nil && len(differ) == 0 {
			t.Fatalf("%s: %v\n%s", target, err, out)
		}
		t.Logf("%s: %d of %d constants differ from clang's", target, len(differ), len(consts))
	}
	for _, w := range warnings {
		t.Log(w)
	}
	// Where skelgen compiles nothing, the constants are those of the
	// skeleton written: -committed, and an object with its source
	// (-src) but no compiler.
	cfg.Committed = true
	again, err := Generate(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	obj := cfg
	obj.Input, obj.Source, obj.Stem, obj.Targets, obj.Committed, obj.CC = filepath.Join(dir, "battery_bpfeb.o"), src, "battery", nil, false, "skelgen-no-such-compiler"
	fromObj, err := Generate(context.Background(), obj)
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range append(again, fromObj...) {
		if strings.HasSuffix(f.Path, ".go") && !Unchanged(f) {
			t.Errorf("%s: generated anew without a compiler, it differs", filepath.Base(f.Path))
		}
	}
	for _, c := range constBattery {
		if c.dropped && !strings.Contains(strings.Join(warnings, "\n"), ": "+c.name+" is not a constant clang evaluates") {
			t.Errorf("no warning names %s", c.name)
		}
	}
}
