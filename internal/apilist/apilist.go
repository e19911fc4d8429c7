// Package apilist lists the exported API of a Go package directory, one
// declaration a line, for the golden API lists of the packages skelgen
// copies into users' modules (runtime and runtime/bridge) and of the
// skeletons it generates (the examples'): their test fails when the list
// changes, so the API grows, and the generated API changes shape, only on
// purpose.
package apilist

import (
	"bytes"
	"fmt"
	"go/ast"
	"go/parser"
	"go/printer"
	"go/token"
	"io/fs"
	"slices"
	"sort"
	"strings"
)

// List returns the exported declarations of the package in dir (test
// files left out), sorted: functions and methods with their signatures,
// types with their kind, exported struct fields and interface methods,
// constants and variables. A declaration that files for different systems
// each make (Linux's and Windows' Attach methods) is listed once.
func List(dir string) ([]byte, error) {
	return ListFiles(dir, func(name string) bool { return !strings.HasSuffix(name, "_test.go") })
}

// ListFiles is List of the files of dir that keep accepts.
func ListFiles(dir string, keep func(name string) bool) ([]byte, error) {
	fset := token.NewFileSet()
	pkgs, err := parser.ParseDir(fset, dir, func(fi fs.FileInfo) bool { return keep(fi.Name()) }, 0)
	if err != nil {
		return nil, err
	}
	var lines []string
	print := func(n any) string {
		var b bytes.Buffer
		printer.Fprint(&b, fset, n)
		return strings.Join(strings.Fields(b.String()), " ")
	}
	for _, p := range pkgs {
		for _, f := range p.Files {
			for _, d := range f.Decls {
				switch d := d.(type) {
				case *ast.FuncDecl:
					if !d.Name.IsExported() {
						continue
					}
					recv := ""
					if d.Recv != nil {
						t := d.Recv.List[0].Type
						base := t
						if s, ok := base.(*ast.StarExpr); ok {
							base = s.X
						}
						if id, ok := base.(*ast.Ident); ok && !id.IsExported() {
							continue
						}
						recv = "(" + print(t) + ") "
					}
					lines = append(lines, "func "+recv+d.Name.Name+strings.TrimPrefix(print(d.Type), "func"))
				case *ast.GenDecl:
					lines = append(lines, genDecl(d, print)...)
				}
			}
		}
	}
	sort.Strings(lines)
	lines = slices.Compact(lines)
	return []byte(strings.Join(lines, "\n") + "\n"), nil
}

func genDecl(d *ast.GenDecl, print func(any) string) []string {
	var lines []string
	for _, s := range d.Specs {
		switch s := s.(type) {
		case *ast.TypeSpec:
			if !s.Name.IsExported() {
				continue
			}
			alias := ""
			if s.Assign.IsValid() {
				alias = "= "
			}
			switch t := s.Type.(type) {
			case *ast.StructType:
				lines = append(lines, "type "+s.Name.Name+" struct")
				for _, f := range t.Fields.List {
					for _, n := range f.Names {
						if n.IsExported() {
							lines = append(lines, fmt.Sprintf("field %s.%s %s", s.Name.Name, n.Name, print(f.Type)))
						}
					}
					if len(f.Names) == 0 {
						lines = append(lines, fmt.Sprintf("embedded %s.%s", s.Name.Name, print(f.Type)))
					}
				}
			case *ast.InterfaceType:
				lines = append(lines, "type "+s.Name.Name+" interface")
				for _, m := range t.Methods.List {
					for _, n := range m.Names {
						lines = append(lines, fmt.Sprintf("method %s.%s%s", s.Name.Name, n.Name, strings.TrimPrefix(print(m.Type), "func")))
					}
					if len(m.Names) == 0 {
						lines = append(lines, fmt.Sprintf("embedded %s.%s", s.Name.Name, print(m.Type)))
					}
				}
			default:
				tparams := ""
				if s.TypeParams != nil {
					tparams = print(s.TypeParams)
				}
				lines = append(lines, "type "+s.Name.Name+tparams+" "+alias+print(s.Type))
			}
		case *ast.ValueSpec:
			for _, n := range s.Names {
				if !n.IsExported() {
					continue
				}
				kind := "var"
				if d.Tok == token.CONST {
					kind = "const"
				}
				typ := ""
				if s.Type != nil {
					typ = " " + print(s.Type)
				}
				lines = append(lines, kind+" "+n.Name+typ)
			}
		}
	}
	return lines
}
