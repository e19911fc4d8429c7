package gen

import (
	"bytes"
	"go/ast"
	"go/format"
	"go/parser"
	"go/token"
	"io/fs"
	"maps"
	"path"
	"slices"
	"strconv"
	"strings"

	"golang.org/x/tools/go/ast/astutil"
)

// copyRefs are the package-level identifiers of the runtime copy's
// packages ("runtime", "bridge") that Go files name: the roots the copy is
// pruned from.
type copyRefs map[string]map[string]bool

func (r copyRefs) add(pkg, name string) {
	if r[pkg] == nil {
		r[pkg] = map[string]bool{}
	}
	r[pkg][name] = true
}

// addRefs adds to refs the identifiers the Go file data names from the
// copy rc: the selectors on its imports of rc's packages (every identifier
// of the file for a dot import). Imports of skelgen's own runtime
// packages count as the copy's: code written against them before the
// first generate is pointed at the copy after it, and must find what it
// names there. A file that does not parse counts for what parses of it:
// the compiler reports the rest.
func (rc runtimeCopy) addRefs(refs copyRefs, name string, data []byte) {
	fset := token.NewFileSet()
	f, _ := parser.ParseFile(fset, name, data, parser.ImportsOnly|parser.SkipObjectResolution)
	if f == nil {
		return
	}
	named := map[string]string{} // local name → package of the copy
	var dot []string
	for _, imp := range f.Imports {
		p, _ := strconv.Unquote(imp.Path.Value)
		pkg := ""
		switch p {
		case rc.runtimePath, RuntimeImport:
			pkg = "runtime"
		case rc.bridgePath, RuntimeImport + "/bridge":
			pkg = "bridge"
		default:
			continue
		}
		switch local := pkg; {
		case imp.Name == nil:
			named[local] = pkg
		case imp.Name.Name == ".":
			dot = append(dot, pkg)
		case imp.Name.Name != "_":
			named[imp.Name.Name] = pkg
		}
	}
	if len(named) == 0 && len(dot) == 0 {
		return
	}
	if f, _ = parser.ParseFile(fset, name, data, parser.SkipObjectResolution); f == nil {
		return
	}
	ast.Inspect(f, func(n ast.Node) bool {
		switch n := n.(type) {
		case *ast.SelectorExpr:
			if x, ok := n.X.(*ast.Ident); ok && named[x.Name] != "" {
				refs.add(named[x.Name], n.Sel.Name)
			}
		case *ast.Ident:
			for _, pkg := range dot {
				refs.add(pkg, n.Name)
			}
		}
		return true
	})
}

// copyDecl is a top-level declaration of a runtime package: the unit the
// copy keeps or leaves out.
type copyDecl struct {
	node   ast.Decl
	names  []string // the package-level names it declares (a const, var or type block: all)
	recv   string   // a method's receiver type
	method string   // a method's name
	idents []string // the identifiers its parts name, as written
	sels   []string // the names it selects (x.name) or declares as methods of an interface
	xrefs  []string // what it selects from the skelgen runtime package (in bridge)
	kept   bool
}

// pruneCopy parses the Go files srcs of a runtime package (name → text)
// and keeps of them the declarations roots name and, closed over, those
// these name: a kept declaration keeps every package-level identifier its
// type, fields and body name; a kept type keeps all its methods (an
// interface or reflection may need any of them); a name declared in
// several files (their build constraints differ) keeps each declaration; a
// const, var or type block is kept whole; init functions stay, and so do
// var _ declarations whose parts are all kept. It returns the files that
// keep declarations, with the imports they no longer use and the comments
// of what went removed, without their package comment, formatted; and the
// identifiers the kept declarations select from the runtime package
// (import path runtimeImport), the runtime's roots when srcs are the
// bridge's. It is a function of srcs and roots alone.
func pruneCopy(srcs map[string][]byte, roots map[string]bool, runtimeImport string) (out map[string][]byte, xrefs map[string]bool, err error) {
	fset := token.NewFileSet()
	names := slices.Sorted(maps.Keys(srcs))
	files := make([]*ast.File, len(names))
	declared := map[string][]*copyDecl{} // name → declarations
	methods := map[string][]*copyDecl{}  // receiver type → methods
	var always, blank []*copyDecl
	for i, name := range names {
		f, err := parser.ParseFile(fset, name, srcs[name], parser.ParseComments)
		if err != nil {
			return nil, nil, err
		}
		files[i] = f
		imports := map[string]string{} // local name → path
		for _, imp := range f.Imports {
			p, _ := strconv.Unquote(imp.Path.Value)
			imports[importName(imp)] = p
		}
		for _, d := range f.Decls {
			if g, ok := d.(*ast.GenDecl); ok && g.Tok == token.IMPORT {
				continue
			}
			cd := &copyDecl{node: d}
			cd.idents, cd.sels, cd.xrefs = declIdents(d, f.Scope, imports, runtimeImport)
			switch d := d.(type) {
			case *ast.FuncDecl:
				switch {
				case d.Recv != nil && len(d.Recv.List) > 0:
					cd.recv, cd.method = recvType(d.Recv.List[0].Type), d.Name.Name
					methods[cd.recv] = append(methods[cd.recv], cd)
				case d.Name.Name == "init":
					always = append(always, cd)
				default:
					cd.names = []string{d.Name.Name}
				}
			case *ast.GenDecl:
				for _, s := range d.Specs {
					switch s := s.(type) {
					case *ast.TypeSpec:
						cd.names = append(cd.names, s.Name.Name)
					case *ast.ValueSpec:
						for _, n := range s.Names {
							if n.Name != "_" {
								cd.names = append(cd.names, n.Name)
							}
						}
					}
				}
				if len(cd.names) == 0 {
					blank = append(blank, cd)
				}
			}
			for _, n := range cd.names {
				declared[n] = append(declared[n], cd)
			}
		}
	}
	xrefs = map[string]bool{}
	marked := map[string]bool{}
	// An unexported method of a kept type is kept once a kept declaration
	// selects its name or declares it in an interface: nothing else (no
	// other package, no reflection) reaches it.
	selected := map[string]bool{}
	waiting := map[string][]*copyDecl{} // unexported methods of kept types, by name
	var mark func(name string)
	var keep func(d *copyDecl)
	keep = func(d *copyDecl) {
		if d.kept {
			return
		}
		d.kept = true
		for _, x := range d.xrefs {
			xrefs[x] = true
		}
		for _, n := range d.names {
			mark(n)
		}
		for _, n := range d.idents {
			mark(n)
		}
		for _, n := range d.sels {
			if !selected[n] {
				selected[n] = true
				for _, m := range waiting[n] {
					keep(m)
				}
				delete(waiting, n)
			}
		}
	}
	mark = func(name string) {
		if marked[name] || (declared[name] == nil && methods[name] == nil) {
			return
		}
		marked[name] = true
		for _, d := range declared[name] {
			keep(d)
		}
		for _, d := range methods[name] {
			if token.IsExported(d.method) || selected[d.method] {
				keep(d)
			} else {
				waiting[d.method] = append(waiting[d.method], d)
			}
		}
	}
	for _, d := range always {
		keep(d)
	}
	for _, r := range slices.Sorted(maps.Keys(roots)) {
		mark(r)
	}
	for _, d := range blank {
		if !slices.ContainsFunc(d.idents, func(n string) bool { return (declared[n] != nil || methods[n] != nil) && !marked[n] }) {
			keep(d)
		}
	}

	out = map[string][]byte{}
	kept := map[ast.Decl]bool{}
	for _, ds := range [][]*copyDecl{always, blank} {
		for _, d := range ds {
			kept[d.node] = d.kept
		}
	}
	for _, ds := range declared {
		for _, d := range ds {
			kept[d.node] = d.kept
		}
	}
	for _, ds := range methods {
		for _, d := range ds {
			kept[d.node] = d.kept
		}
	}
	for i, f := range files {
		cmap := ast.NewCommentMap(fset, f, f.Comments)
		var used []*ast.ImportSpec
		for _, imp := range f.Imports {
			if selects(f, importName(imp)) {
				used = append(used, imp)
			}
		}
		var decls []ast.Decl
		some := false
		for _, d := range f.Decls {
			if g, ok := d.(*ast.GenDecl); ok && g.Tok == token.IMPORT {
				decls = append(decls, d)
			} else if kept[d] {
				decls = append(decls, d)
				some = true
			}
		}
		if !some {
			continue
		}
		f.Decls = decls
		// An import the file used and uses no more goes; the others
		// (_, ., or named otherwise than importName guesses) stay.
		for _, imp := range used {
			if !selects(f, importName(imp)) {
				p, _ := strconv.Unquote(imp.Path.Value)
				local := ""
				if imp.Name != nil {
					local = imp.Name.Name
				}
				astutil.DeleteNamedImport(fset, f, local, p)
			}
		}
		doc := f.Doc
		f.Doc = nil
		f.Comments = slices.DeleteFunc(cmap.Filter(f).Comments(), func(g *ast.CommentGroup) bool { return g == doc })
		var b bytes.Buffer
		if err := format.Node(&b, fset, f); err != nil {
			return nil, nil, err
		}
		out[names[i]] = b.Bytes()
	}
	return out, xrefs, nil
}

// importName returns the name an import gives its package in the file:
// its own, else the last element of its path that is not a major version
// (math/rand/v2 is rand).
func importName(imp *ast.ImportSpec) string {
	if imp.Name != nil {
		return imp.Name.Name
	}
	p, _ := strconv.Unquote(imp.Path.Value)
	dir, base := path.Split(p)
	if len(base) > 1 && base[0] == 'v' && strings.Trim(base[1:], "0123456789") == "" && dir != "" {
		base = path.Base(dir)
	}
	return base
}

// selects reports whether the file f selects something from the package
// it imports as name (name.X, name not declared in the file).
func selects(f *ast.File, name string) bool {
	found := false
	ast.Inspect(f, func(n ast.Node) bool {
		if sel, ok := n.(*ast.SelectorExpr); ok {
			if x, ok := sel.X.(*ast.Ident); ok && x.Name == name && x.Obj == nil {
				found = true
			}
		}
		return !found
	})
	return found
}

// recvType returns the name of a method's receiver type.
func recvType(e ast.Expr) string {
	for {
		switch x := e.(type) {
		case *ast.StarExpr:
			e = x.X
		case *ast.ParenExpr:
			e = x.X
		case *ast.IndexExpr:
			e = x.X
		case *ast.IndexListExpr:
			e = x.X
		case *ast.Ident:
			return x.Name
		default:
			return ""
		}
	}
}

// declIdents returns the identifiers a declaration's parts name (not the
// names it declares, its fields' and parameters' names, what follows a dot,
// nor what the parser resolved to a declaration inside a function: a
// local that shadows a package-level name does not keep it), the names it
// selects or declares as interface methods, and what it selects from the
// package runtimeImport given the file's imports (local name → path) and
// the file's scope.
func declIdents(d ast.Decl, scope *ast.Scope, imports map[string]string, runtimeImport string) (idents, sels, xrefs []string) {
	declared := map[*ast.Ident]bool{} // names declared, not named
	var walk func(n ast.Node) bool
	walk = func(n ast.Node) bool {
		switch n := n.(type) {
		case *ast.Ident:
			if !declared[n] && (n.Obj == nil || scope.Lookup(n.Name) == n.Obj) {
				idents = append(idents, n.Name)
			}
		case *ast.SelectorExpr:
			if x, ok := n.X.(*ast.Ident); ok && imports[x.Name] == runtimeImport {
				xrefs = append(xrefs, n.Sel.Name)
			}
			sels = append(sels, n.Sel.Name)
			ast.Inspect(n.X, walk)
			return false
		case *ast.InterfaceType:
			for _, m := range n.Methods.List {
				for _, name := range m.Names {
					sels = append(sels, name.Name)
				}
			}
		case *ast.Field:
			for _, name := range n.Names {
				declared[name] = true
			}
		case *ast.ValueSpec:
			for _, name := range n.Names {
				declared[name] = true
			}
		case *ast.FuncDecl:
			declared[n.Name] = true
		case *ast.TypeSpec:
			declared[n.Name] = true
		}
		return true
	}
	ast.Inspect(d, walk)
	return idents, sels, xrefs
}

// copySources returns the Go files of a runtime package's embedded sources
// that the copy is made from: not its tests, nor the file embedding them.
func copySources(src fs.FS) (map[string][]byte, error) {
	names, err := fs.Glob(src, "*.go")
	if err != nil {
		return nil, err
	}
	srcs := map[string][]byte{}
	for _, name := range names {
		if strings.HasSuffix(name, "_test.go") || name == "sources.go" {
			continue
		}
		data, err := fs.ReadFile(src, name)
		if err != nil {
			return nil, err
		}
		srcs[name] = data
	}
	return srcs, nil
}
