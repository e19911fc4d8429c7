package gen

import (
	"go/ast"
	"go/parser"
	"go/printer"
	"go/token"
	"path/filepath"
	"strings"
	"testing"
)

// TestCommentsThroughGocomment requires that the generator writes comments
// only through internal/gocomment, which escapes what it is given: a call
// of jennifer's Comment, Commentf or HeaderComment elsewhere in gen and
// gen/aot may take only string constants (literals or the package's
// declared constants), the verbatim placeholders' marker, numbers, and
// text already escaped by gocomment.Text.
func TestCommentsThroughGocomment(t *testing.T) {
	var files []string
	for _, dir := range []string{".", "aot"} {
		m, err := filepath.Glob(filepath.Join(dir, "*.go"))
		if err != nil {
			t.Fatal(err)
		}
		files = append(files, m...)
	}
	fset := token.NewFileSet()
	var parsed []*ast.File
	consts := map[string]bool{}
	for _, name := range files {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, name, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		parsed = append(parsed, f)
		for _, d := range f.Decls {
			if g, ok := d.(*ast.GenDecl); ok && g.Tok == token.CONST {
				for _, spec := range g.Specs {
					for _, n := range spec.(*ast.ValueSpec).Names {
						consts[n.Name] = true
					}
				}
			}
		}
	}
	calls := 0
	for _, f := range parsed {
		ast.Inspect(f, func(n ast.Node) bool {
			call, ok := n.(*ast.CallExpr)
			if !ok {
				return true
			}
			sel, ok := call.Fun.(*ast.SelectorExpr)
			if !ok {
				return true
			}
			switch sel.Sel.Name {
			case "Comment", "Commentf", "HeaderComment", "CommentFunc":
			default:
				return true
			}
			if x, ok := sel.X.(*ast.Ident); ok && x.Name == "gocomment" {
				return true
			}
			calls++
			for _, arg := range call.Args {
				if bad := unescaped(arg, consts); bad != nil {
					t.Errorf("%s: %s writes %s into a comment unescaped: use gocomment", fset.Position(bad.Pos()), sel.Sel.Name, source(fset, bad))
				}
			}
			return true
		})
	}
	if calls == 0 {
		t.Fatal("no comment call found outside gocomment: the test no longer sees the generator's code")
	}
}

// unescaped is the part of e that may hold text from an object, or nil.
// consts are the package's constants, which hold no text from an object.
func unescaped(e ast.Expr, consts map[string]bool) ast.Expr {
	switch e := e.(type) {
	case *ast.BasicLit:
		return nil
	case *ast.Ident:
		if consts[e.Name] {
			return nil
		}
	case *ast.ParenExpr:
		return unescaped(e.X, consts)
	case *ast.BinaryExpr:
		if bad := unescaped(e.X, consts); bad != nil {
			return bad
		}
		return unescaped(e.Y, consts)
	case *ast.SelectorExpr:
		if e.Sel.Name == "marker" {
			return nil
		}
	case *ast.CallExpr:
		if sel, ok := e.Fun.(*ast.SelectorExpr); ok {
			if x, ok := sel.X.(*ast.Ident); ok && (x.Name == "gocomment" && sel.Sel.Name == "Text" || x.Name == "strconv" && sel.Sel.Name == "Itoa") {
				return nil
			}
		}
	}
	return e
}

// source is e as Go source.
func source(fset *token.FileSet, e ast.Expr) string {
	var b strings.Builder
	printer.Fprint(&b, fset, e)
	return b.String()
}
