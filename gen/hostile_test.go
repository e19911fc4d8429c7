package gen

import (
	"bytes"
	"context"
	"fmt"
	"go/ast"
	"go/parser"
	"go/scanner"
	"go/token"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	clang "github.com/skelgen/skelgen/internal/cc"
	"github.com/skelgen/skelgen/internal/testenv"
)

// hostileWidth is the length of every placeholder name in
// testdata/hostile/hostile.bpf.c.
const hostileWidth = 64

// hostileSites are the placeholders of testdata/hostile/hostile.bpf.c, one
// per place a name or text of the object reaches generated code: type,
// enumerator, typedef and member names, map, program and variable names,
// section names (a tracepoint's category, an LSM hook, a ubpf/ hook, a
// named data section), a host function, a kconfig
// name, and a source line of the BTF line info (a comment in the ubpf/
// program).
var hostileSites = []string{"enum", "enumerator", "typedef", "struct", "member", "map", "prog", "tpcat", "lsm", "var", "dsec", "uprog", "usec", "line", "host", "kconfig", "ctx", "ctxmember"}

// hostileSourceSites are the placeholders only the source has, which
// reach the skeleton from its text (-src): a #define's name and string
// value, an anonymous enum's enumerator.
var hostileSourceSites = []string{"define", "defval", "anon"}

// hostilePayloads are what an attacker puts into names: each closes or
// escapes the comment or literal a generator might write the name into, or
// tricks the reader of the code or of a terminal.
var hostilePayloads = []struct{ name, text string }{
	{"block-close", "\n*/func init(){println(\"PWNED\")}/*"},
	{"line-break", "\nfunc init(){println(\"PWNED\")}\n//"},
	{"cr-break", "\rfunc init(){println(\"PWNED\")}\r//"},
	{"go-generate", "\n//go:generate touch PWNED\n"},
	{"directive", "//go:linkname pwned runtime.pwned"},
	{"line-directive", "//line evil.go:1"},
	{"block-open", "/* x"},
	{"literal", "\"+`+'\\"},
	{"ansi", "\x1b[2J\x1b[31mred"},
	{"bidi", "a\u202eevil\u202cb\u2066c"},
	{"homoglyph", "C\u043eunts"},
	{"bad-utf8", "\xff\xfe\xc0"},
	{"separators", "\u2028x\u2029\ufeff\u0085"},
}

func hostilePlaceholder(site string) string {
	return ("hostile_" + site + "_") + strings.Repeat("Z", hostileWidth-len("hostile_"+site+"_"))
}

// hostileObject is the committed hostile object with every placeholder
// replaced by name(site), padded to the placeholder's length: in the ELF
// string tables, the BTF strings and the source lines of the line info
// alike.
func hostileObject(t testing.TB, name func(site string) string) []byte {
	t.Helper()
	return hostileFile(t, "hostile_bpfel.o", hostileSites, name)
}

// hostileSource is the hostile source with every placeholder, of the
// object and of the source alone, replaced as hostileObject replaces them.
func hostileSource(t testing.TB, name func(site string) string) []byte {
	t.Helper()
	return hostileFile(t, "hostile.bpf.c", append(append([]string(nil), hostileSites...), hostileSourceSites...), name)
}

// hostileFile is testdata/hostile/file with the placeholders of sites
// replaced by name(site), padded to the placeholder's length.
func hostileFile(t testing.TB, file string, sites []string, name func(site string) string) []byte {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("testdata", "hostile", file))
	if err != nil {
		t.Fatal(err)
	}
	for _, site := range sites {
		ph := hostilePlaceholder(site)
		n := name(site)
		if len(n) > hostileWidth {
			n = n[:hostileWidth]
		}
		n += strings.Repeat("Z", hostileWidth-len(n))
		if !bytes.Contains(data, []byte(ph)) {
			t.Fatalf("placeholder %s not in %s", ph, file)
		}
		data = bytes.ReplaceAll(data, []byte(ph), []byte(n))
	}
	return data
}

// hostileName is payload in the name of site: distinct per site, so that
// a map and a program do not share a name.
func hostileName(payload string) func(string) string {
	return func(site string) string { return payload + "_" + site + "_" }
}

// generateHostile generates the package pkg into dir from obj and, when
// src is not nil, its source (-src), kept in a directory of its own.
func generateHostile(t testing.TB, dir, pkg string, obj, src []byte) ([]File, error) {
	t.Helper()
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	in := filepath.Join(dir, "hostile.bpf.o")
	if err := os.WriteFile(in, obj, 0o644); err != nil {
		t.Fatal(err)
	}
	cfg := Config{Input: in, Package: pkg, AOT: true}
	if src != nil {
		cfg.Source = filepath.Join(dir+"_src", "hostile.bpf.c")
		if err := os.MkdirAll(filepath.Dir(cfg.Source), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(cfg.Source, src, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return Generate(context.Background(), cfg)
}

// unsafeText matches what no generated Go file and no message may hold:
// control characters but newline and tab, DEL, bidi controls, line and
// paragraph separators, the byte order mark and bytes that are not UTF-8.
var unsafeText = regexp.MustCompile("[\x00-\x08\x0b-\x1f\x7f\u0080-\u009f\u061c\u200e\u200f\u2028-\u202e\u2066-\u2069\ufeff\ufffd]")

// checkMessage requires that an error or warning shows no raw control or
// bidi character.
func checkMessage(t testing.TB, what, msg string) {
	t.Helper()
	if loc := unsafeText.FindStringIndex(msg); loc != nil {
		t.Errorf("%s: raw %q in the message: %q", what, msg[loc[0]:loc[1]], msg)
	}
}

// declShape counts a file's top-level declarations by kind and name
// shape, without their names: two generations of one object whose names
// differ have the same shape.
func declShape(f *ast.File) map[string]int {
	shape := map[string]int{}
	for _, d := range f.Decls {
		switch d := d.(type) {
		case *ast.FuncDecl:
			k := "func"
			if d.Recv != nil {
				k = "method"
			}
			shape[k]++
		case *ast.GenDecl:
			shape[d.Tok.String()] += len(d.Specs)
		}
	}
	return shape
}

// checkGenerated parses a generated Go file and requires what hostile
// names must never cause: an init function, a comment that is not a //
// line comment, a directive skelgen does not write, a control or bidi
// character anywhere, an identifier or comment outside printable ASCII
// (string literals may hold other printable characters: they are the C
// names the object is searched by). It returns the file's shape.
func checkGenerated(t testing.TB, what string, src []byte) map[string]int {
	t.Helper()
	if loc := unsafeText.FindIndex(src); loc != nil {
		t.Errorf("%s: raw %q at %d", what, src[loc[0]:loc[1]], loc[0])
	}
	var sc scanner.Scanner
	sfset := token.NewFileSet()
	sc.Init(sfset.AddFile(what, -1, len(src)), src, nil, scanner.ScanComments)
	for {
		pos, tok, lit := sc.Scan()
		if tok == token.EOF {
			break
		}
		if tok != token.STRING && tok != token.CHAR && strings.ContainsFunc(lit, func(r rune) bool { return r < ' ' && r != '\n' && r != '\t' || r > '~' }) {
			t.Errorf("%s: %s %q at %s is not printable ASCII", what, tok, lit, sfset.Position(pos))
		}
	}
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, what, src, parser.ParseComments)
	if err != nil {
		t.Errorf("%s: %v", what, err)
		return nil
	}
	for _, d := range f.Decls {
		if fn, ok := d.(*ast.FuncDecl); ok && fn.Recv == nil && fn.Name.Name == "init" {
			t.Errorf("%s: an init function at %s", what, fset.Position(fn.Pos()))
		}
	}
	for _, g := range f.Comments {
		for _, c := range g.List {
			switch {
			case !strings.HasPrefix(c.Text, "//"):
				t.Errorf("%s: a block comment at %s: %.60q", what, fset.Position(c.Pos()), c.Text)
			case strings.HasPrefix(c.Text, "//go:") && !strings.HasPrefix(c.Text, "//go:build ") && !strings.HasPrefix(c.Text, "//go:embed "),
				strings.HasPrefix(c.Text, "//line "), strings.HasPrefix(c.Text, "//export "):
				t.Errorf("%s: directive at %s: %q", what, fset.Position(c.Pos()), c.Text)
			case strings.HasPrefix(c.Text, "//go:embed ") && c.Text != "//go:embed hostile_bpfel.o":
				t.Errorf("%s: embeds %q", what, c.Text)
			}
		}
	}
	return declShape(f)
}

// shapeWithin reports whether a file of shape got declares nothing beyond
// what the file of shape plain declares: of each kind, as many or fewer
// (a hostile section name may name no attach point, and so get no Attach
// method).
func shapeWithin(got, plain map[string]int) bool {
	for k, n := range got {
		if n > plain[k] {
			return false
		}
	}
	return len(got) > 0
}

// skeletonFiles are the files of files that the object shapes (the
// skeleton and its translation), not the runtime copy.
func skeletonFiles(files []File) []File {
	var out []File
	for _, f := range files {
		if strings.HasSuffix(f.Path, ".go") && !IsVendored(f.Path) {
			out = append(out, f)
		}
	}
	return out
}

// TestHostileNames puts each hostile payload into every name site of one
// object, generates, and requires of each package what checkGenerated
// requires, the same declarations as the object with plain names, and,
// unless -short, that a program importing all of them builds, vets, runs
// without running code of the object's, and that go generate finds no
// command in them.
func TestHostileNames(t *testing.T) {
	t.Parallel()
	mod := t.TempDir()
	goMod := []byte("module example.com/hostile\n\ngo 1.26\n\nrequire github.com/cilium/ebpf v0.22.0\n")
	writeModule(t, mod, map[string][]byte{"go.mod": goMod})
	plain := func(site string) string { return "plain_" + site }
	baseFiles, err := generateHostile(t, filepath.Join(mod, "base"), "base", hostileObject(t, plain), hostileSource(t, plain))
	if err != nil {
		t.Fatal(err)
	}
	base := map[string]map[string]int{}
	for _, f := range skeletonFiles(baseFiles) {
		base[filepath.Base(f.Path)] = checkGenerated(t, "plain names: "+filepath.Base(f.Path), f.Data)
		if _, err := clang.Find(""); err == nil && strings.HasSuffix(f.Path, "_bpfel.go") {
			// The source's sites reach the skeleton (clang evaluates
			// its constants).
			for _, want := range []string{"const HostilePlainDefine", "const HostilePlainAnon", `"plain_defval`} {
				if !bytes.Contains(f.Data, []byte(want)) {
					t.Errorf("plain names: the skeleton has no %s", want)
				}
			}
		}
	}
	if len(base) != 2 {
		t.Fatalf("plain names: %d skeleton files, want the skeleton and its translation", len(base))
	}
	if err := WriteFiles(baseFiles); err != nil {
		t.Fatal(err)
	}
	var imports []string
	for i, p := range hostilePayloads {
		pkg := fmt.Sprintf("p%d", i)
		files, err := generateHostile(t, filepath.Join(mod, pkg), pkg, hostileObject(t, hostileName(p.text)), hostileSource(t, hostileName(p.text)))
		if err != nil {
			// Refusing a name is allowed, with a message that shows it
			// escaped.
			t.Logf("%s: refused: %v", p.name, err)
			checkMessage(t, p.name, err.Error())
			continue
		}
		got := skeletonFiles(files)
		if len(got) != len(base) {
			t.Errorf("%s: %d skeleton files, want %d", p.name, len(got), len(base))
		}
		for _, f := range got {
			name := filepath.Base(f.Path)
			shape := checkGenerated(t, p.name+": "+name, f.Data)
			if !shapeWithin(shape, base[name]) {
				t.Errorf("%s: %s declares %v, plain names %v", p.name, name, shape, base[name])
			}
		}
		if err := WriteFiles(files); err != nil {
			t.Fatal(err)
		}
		imports = append(imports, pkg)
	}
	if testing.Short() {
		t.Skip("skipped in -short mode: builds the generated packages")
	}
	goBin, err := exec.LookPath("go")
	if err != nil {
		t.Skip("no go command to build the generated code:", err)
	}
	// skelgen's own requirements and sums: the module cache has them.
	root := testenv.ModuleRoot(t)
	sum, err := os.ReadFile(filepath.Join(root, "go.sum"))
	if err != nil {
		t.Fatal(err)
	}
	rootMod, err := os.ReadFile(filepath.Join(root, "go.mod"))
	if err != nil {
		t.Fatal(err)
	}
	_, requires, _ := strings.Cut(string(rootMod), "\n")
	var main strings.Builder
	main.WriteString("package main\n\nimport (\n\t_ \"example.com/hostile/base\"\n")
	for _, pkg := range imports {
		fmt.Fprintf(&main, "\t_ \"example.com/hostile/%s\"\n", pkg)
	}
	main.WriteString(")\n\nfunc main() { println(\"imported\") }\n")
	writeModule(t, mod, map[string][]byte{
		"go.mod":  []byte("module example.com/hostile\n" + requires),
		"go.sum":  sum,
		"main.go": []byte(main.String()),
	})
	runGo(t, goBin, mod, "vet", "./...")
	if out := runGo(t, goBin, mod, "run", "."); out != "imported\n" {
		t.Errorf("importing the generated packages printed %q, want only the main program's %q", out, "imported\n")
	}
	if out := runGo(t, goBin, mod, "generate", "-n", "./..."); out != "" {
		t.Errorf("go generate finds commands in the generated packages:\n%s", out)
	}
	if _, err := os.Stat(filepath.Join(mod, "PWNED")); err == nil {
		t.Error("a file PWNED exists")
	}
}

// FuzzHostileName generates from the hostile object with random bytes as
// the name of one site and requires what TestHostileNames requires of the
// generated text (without building it): no init function, no block
// comment or directive, printable ASCII only, and the declarations of the
// object with plain names; or an error that shows no raw control
// character.
func FuzzHostileName(f *testing.F) {
	for i, p := range hostilePayloads {
		f.Add([]byte(p.text), uint8(i))
	}
	dir := f.TempDir()
	writeModule(f, dir, map[string][]byte{"go.mod": []byte("module example.com/hostile\n")})
	files, err := generateHostile(f, filepath.Join(dir, "base"), "base", hostileObject(f, func(site string) string { return "plain_" + site }), nil)
	if err != nil {
		f.Fatal(err)
	}
	base := map[string]map[string]int{}
	for _, file := range skeletonFiles(files) {
		base[filepath.Base(file.Path)] = checkGenerated(f, "plain names", file.Data)
	}
	f.Fuzz(func(t *testing.T, name []byte, site uint8) {
		target := hostileSites[int(site)%len(hostileSites)]
		obj := hostileObject(t, func(s string) string {
			if s == target {
				return string(name)
			}
			return "plain_" + s
		})
		files, err := generateHostile(t, t.TempDir(), "p", obj, nil)
		if err != nil {
			checkMessage(t, target, err.Error())
			return
		}
		for _, file := range skeletonFiles(files) {
			n := filepath.Base(file.Path)
			if shape := checkGenerated(t, target+": "+n, file.Data); !shapeWithin(shape, base[n]) {
				t.Errorf("%s %q: %s declares %v, plain names %v", target, name, n, shape, base[n])
			}
		}
	})
}
