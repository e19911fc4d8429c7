package gen

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/cilium/ebpf/btf"
)

// Types that a program uses only inside functions (a record built on the
// stack or in a ring buffer reservation) are not in the object's BTF:
// clang describes globals, function signatures and CO-RE accesses only.
// When -type or a ring buffer's record names such a type, skelgen compiles
// the source a second time, from a file beside it that includes it and
// declares one global pointer per wanted type; that object's BTF has them.
// The kernel object is not changed. The types found are written as raw BTF
// to <stem>_<target>_types.btf, which skelgen check reads when it runs
// without a compiler, as it reads the committed objects.

// typesFileName names the raw BTF of a target's source-only types.
func typesFileName(stem string, t Target) string {
	return stem + "_" + t.Suffix() + "_types.btf"
}

// hasType reports whether spec has a complete type called name ("event",
// "struct event", "event_t").
func hasType(spec *btf.Spec, name string) bool {
	if spec == nil {
		return false
	}
	_, err := findType(spec, name)
	return err == nil
}

// sourceTypes compiles the source with declarations that pull the named
// types into BTF and returns them, with their raw BTF for the types file.
// Of names, only those in required (the -type arguments) must be found;
// a record type read from the source that cannot be is left out. overlay
// holds files not yet written (the header -header makes), as for the
// object's own compilation.
func sourceTypes(ctx context.Context, cfg Config, t Target, names []string, required map[string]bool, overlay map[string][]byte) (*btf.Spec, []byte, error) {
	src, err := filepath.Abs(cfg.Input)
	if err != nil {
		return nil, nil, err
	}
	c := declCompiler{ctx: ctx, cfg: cfg, src: src, target: t, overlay: overlay}
	found := map[string]btf.Type{}
	// A pointer to a struct tag compiles unless the name is the tag of a
	// union or enum, so a failure of a name's struct attempt that no
	// other kind then finds is the source's own: it is reported if a
	// -type name is not found.
	structErr := map[string]error{}
	// Plain names are tried as struct tags first (the usual case, all in
	// one compilation; one by one if that fails, as a union or enum tag
	// among them makes it do), then one by one as typedefs, unions and
	// enums: declaring a name with the wrong kind does not compile.
	for _, kind := range []string{"struct", "", "union", "enum"} {
		var todo []string
		for _, n := range names {
			if found[n] != nil {
				continue
			}
			if k, _, explicit := strings.Cut(n, " "); explicit && k != kind {
				continue
			}
			todo = append(todo, n)
		}
		if len(todo) == 0 {
			continue
		}
		groups := [][]string{todo}
		if kind != "struct" {
			groups = nil
			for _, n := range todo {
				groups = append(groups, []string{n})
			}
		}
		for len(groups) > 0 {
			g := groups[0]
			groups = groups[1:]
			var decls []string
			for i, n := range g {
				decls = append(decls, pointerDecl(kind, n, i))
			}
			err := c.try(decls, g, found)
			if err == nil || kind != "struct" {
				continue
			}
			if len(g) > 1 {
				for _, n := range g {
					groups = append(groups, []string{n})
				}
				continue
			}
			structErr[g[0]] = err
		}
	}
	// A struct defined inside a function body has no name at file scope:
	// its definition is copied to the end of the file (where the macros it
	// uses are defined) and declared from there; under a name of its own
	// when the source defines the tag more than once.
	var cs *cSource
	for _, n := range names {
		if found[n] != nil {
			continue
		}
		if cs == nil {
			text, err := os.ReadFile(src)
			if err != nil {
				return nil, nil, err
			}
			cs = parseCSource(string(text))
		}
		def, err := cs.localDefinition(n, filepath.Base(cfg.Input))
		if err != nil && required[n] {
			return nil, nil, fmt.Errorf("-type %s: %w", n, err)
		}
		if def != "" {
			c.try([]string{def + ";", pointerDecl("struct", n, 0)}, []string{n}, found)
		}
	}
	var types []btf.Type
	var missing []string
	var compileErr error
	for _, n := range names {
		if found[n] == nil {
			if required[n] {
				missing = append(missing, n)
				if compileErr == nil {
					compileErr = structErr[n]
				}
			}
			continue
		}
		types = append(types, found[n])
	}
	if len(missing) > 0 && compileErr != nil {
		return nil, nil, fmt.Errorf("-type %s: not in the object's BTF, and compiling the source to find it failed: %w", strings.Join(missing, ", "), compileErr)
	}
	if len(missing) > 0 {
		return nil, nil, fmt.Errorf("-type %s: not in the object's BTF, and not declared in %s or its headers", strings.Join(missing, ", "), filepath.Base(cfg.Input))
	}
	if len(types) == 0 {
		return nil, nil, nil
	}
	b, err := btf.NewBuilder(types, nil)
	if err != nil {
		return nil, nil, err
	}
	raw, err := b.Marshal(nil, &btf.MarshalOptions{Order: t.ByteOrder()})
	if err != nil {
		return nil, nil, err
	}
	spec, err := btf.LoadSpecFromReader(bytes.NewReader(raw))
	if err != nil {
		return nil, nil, err
	}
	return spec, raw, nil
}

// pointerDecl declares a global pointer to the type name as kind
// ("struct", "union", "enum" or "" for a typedef), pulling it into BTF.
func pointerDecl(kind, name string, i int) string {
	_, bare, ok := strings.Cut(name, " ")
	if !ok {
		bare = name
	}
	if kind != "" {
		bare = kind + " " + bare
	}
	return fmt.Sprintf("%s *__skelgen_type_%d;", bare, i)
}

// declCompiler compiles the source followed by extra declarations.
type declCompiler struct {
	ctx     context.Context
	cfg     Config
	src     string // absolute
	target  Target
	overlay map[string][]byte
}

// try compiles the source followed by decls and records which of names
// its BTF has; a declaration that does not compile finds nothing and
// returns the compiler's error.
func (c declCompiler) try(decls, names []string, found map[string]btf.Type) error {
	spec, err := c.compile(decls)
	if err != nil {
		return err
	}
	for _, n := range names {
		if typ, err := findType(spec, n); err == nil {
			found[n] = typ
		}
	}
	return nil
}

// compile builds the source with decls after it, as if from a file
// beside it (so that its includes and the user's relative -I flags
// resolve as for the source itself); nothing is written there.
func (c declCompiler) compile(decls []string) (*btf.Spec, error) {
	var b strings.Builder
	fmt.Fprintf(&b, "/* skelgen: the types of %s that -type names, for their BTF */\n", filepath.Base(c.src))
	fmt.Fprintf(&b, "#include %q\n", filepath.Base(c.src))
	for _, d := range decls {
		b.WriteString(d + "\n")
	}
	opts := c.cfg.compileOptions(c.target, c.overlay)
	opts.Source, opts.Text = c.src, []byte(b.String())
	obj, _, err := Compile(c.ctx, opts)
	if err != nil {
		return nil, err
	}
	return btf.LoadSpecFromReader(bytes.NewReader(obj))
}

// localDefinition returns the text of the definition inside a function
// of the type name ("event", "struct event", or the name of a copy,
// cDef.localName), comments blanked, or "" when there is none. A tag
// defined more than once cannot be named by its tag: that is an error
// naming the definitions.
func (cs *cSource) localDefinition(name, file string) (string, error) {
	kind, bare, ok := strings.Cut(name, " ")
	if !ok {
		kind, bare = "", name
	}
	var defs []cDef
	for _, d := range cs.defs {
		if kind != "" && d.kind != kind {
			continue
		}
		if d.fn != "" && d.localName() == bare {
			return cs.copyText(d, bare), nil
		}
		if d.tag == bare {
			defs = append(defs, d)
		}
	}
	switch {
	case len(defs) == 1 && defs[0].fn != "":
		return cs.code[defs[0].off : defs[0].end+1], nil
	case len(defs) > 1:
		var where []string
		for _, d := range defs {
			where = append(where, d.where(file))
		}
		return "", fmt.Errorf("%s %s has %d definitions in %s: %s; skelgen cannot tell which one is meant", defs[0].kind, bare, len(defs), file, strings.Join(where, ", "))
	}
	return "", nil
}

// committedTypes reads the types file a previous run wrote.
func committedTypes(outDir, stem string, t Target) (*btf.Spec, []byte, error) {
	path := filepath.Join(outDir, typesFileName(stem, t))
	raw, err := os.ReadFile(path)
	if err != nil {
		return nil, nil, err
	}
	spec, err := btf.LoadSpecFromReader(bytes.NewReader(raw))
	if err != nil {
		return nil, nil, fmt.Errorf("%s: %w", path, err)
	}
	return spec, raw, nil
}
