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
func sourceTypes(ctx context.Context, cfg Config, t Target, names []string) (*btf.Spec, []byte, error) {
	src, err := filepath.Abs(cfg.Input)
	if err != nil {
		return nil, nil, err
	}
	found := map[string]btf.Type{}
	// Plain names are tried as struct tags first (the usual case, all in
	// one compilation), then one by one as typedefs, unions and enums:
	// declaring a name with the wrong kind does not compile.
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
		for _, g := range groups {
			spec, err := compileWithTypes(ctx, cfg, src, t, kind, g)
			if err != nil {
				continue
			}
			for _, n := range g {
				if typ, err := findType(spec, n); err == nil {
					found[n] = typ
				}
			}
		}
	}
	var types []btf.Type
	var missing []string
	for _, n := range names {
		if found[n] == nil {
			missing = append(missing, n)
			continue
		}
		types = append(types, found[n])
	}
	if len(missing) > 0 {
		return nil, nil, fmt.Errorf("-type %s: not in the object's BTF, and not declared in %s or its headers", strings.Join(missing, ", "), filepath.Base(cfg.Input))
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

// compileWithTypes builds the source with a global pointer to each named
// type, declared as kind ("struct", "union", "enum" or "" for a typedef).
func compileWithTypes(ctx context.Context, cfg Config, src string, t Target, kind string, names []string) (*btf.Spec, error) {
	var b strings.Builder
	fmt.Fprintf(&b, "/* skelgen: the types of %s that -type names, for their BTF */\n", filepath.Base(src))
	fmt.Fprintf(&b, "#include %q\n", filepath.Base(src))
	for i, n := range names {
		_, bare, ok := strings.Cut(n, " ")
		if !ok {
			bare = n
		}
		decl := bare
		if kind != "" {
			decl = kind + " " + bare
		}
		fmt.Fprintf(&b, "%s *__skelgen_type_%d;\n", decl, i)
	}
	f, err := os.CreateTemp(filepath.Dir(src), ".skelgen-types-*.c")
	if err != nil {
		return nil, err
	}
	defer os.Remove(f.Name())
	if _, err := f.WriteString(b.String()); err != nil {
		f.Close()
		return nil, err
	}
	if err := f.Close(); err != nil {
		return nil, err
	}
	obj, _, err := Compile(ctx, CompileOptions{CC: cfg.CC, CFlags: cfg.CFlags, Source: f.Name(), Target: t})
	if err != nil {
		return nil, err
	}
	return btf.LoadSpecFromReader(bytes.NewReader(obj))
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
