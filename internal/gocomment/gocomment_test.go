package gocomment

import (
	"go/parser"
	"go/token"
	"strings"
	"testing"

	"github.com/dave/jennifer/jen"
)

func TestWrap(t *testing.T) {
	text := "AttachAll attaches every program whose section names its attach point, skipping programs whose autoload was off. On error, links made so far stay until Close."
	lines := Wrap(text, 40)
	for _, l := range lines {
		if len(l) > 40 {
			t.Errorf("line %q is %d characters, want at most 40", l, len(l))
		}
	}
	if got := strings.Join(lines, " "); got != text {
		t.Errorf("rejoined text differs:\n%s\n%s", got, text)
	}
	long := strings.Repeat("x", 50)
	if got := Wrap("a "+long+" b", 40); len(got) != 3 || got[1] != long {
		t.Errorf("a word longer than the width: %q", got)
	}
	if got := Wrap("go:embed "+long, 10); len(got) != 1 {
		t.Errorf("directive wrapped: %q", got)
	}
}

func TestText(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"plain text (8 bytes).", "plain text (8 bytes)."},
		{`printf("%d\n", x)`, `printf("%d\n", x)`},
		{"a\nb", `a\nb`},
		{"\n*/func init(){}/*", `\n*/func init(){}/*`},
		{"\x1b[2J", `\x1b[2J`},
		{"a\u202eb", `a\u202eb`},
		{"C\u043eunts", `C\u043eunts`},
		{"\xff\xfe", `\xff\xfe`},
		{"tab\there", `tab\there`},
		{"\U0001F600", `\U0001f600`},
	} {
		got := Text(tc.in)
		if got != tc.want {
			t.Errorf("Text(%q) = %q, want %q", tc.in, got, tc.want)
		}
		if again := Text(got); again != got {
			t.Errorf("Text(Text(%q)) = %q, want %q", tc.in, again, got)
		}
	}
}

// TestCommentHostile renders comments of hostile texts into a file and
// requires that they stay comments: the file parses to the one declaration
// written after them, and every comment is a // line.
func TestCommentHostile(t *testing.T) {
	for _, text := range []string{
		"\n*/func init(){}/*",
		"\nfunc init(){}\n",
		"//go:generate touch x",
		"/* open",
		"go:embed x",
		"\r//go:linkname a b",
		strings.Repeat("word ", 40) + "\n//go:generate x",
	} {
		f := jen.NewFile("p")
		f.Add(Comment(text))
		f.Add(Line(text))
		f.Var().Id("V").Int()
		var b strings.Builder
		if err := f.Render(&b); err != nil {
			t.Fatalf("%q: %v", text, err)
		}
		src := b.String()
		fset := token.NewFileSet()
		file, err := parser.ParseFile(fset, "p.go", src, parser.ParseComments)
		if err != nil {
			t.Fatalf("%q: %v\n%s", text, err, src)
		}
		if len(file.Decls) != 1 {
			t.Errorf("%q: %d declarations, want 1:\n%s", text, len(file.Decls), src)
		}
		for _, g := range file.Comments {
			for _, c := range g.List {
				if !strings.HasPrefix(c.Text, "// ") {
					t.Errorf("%q: comment %q is not a // line", text, c.Text)
				}
			}
		}
	}
}
