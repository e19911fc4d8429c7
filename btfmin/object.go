package btfmin

import (
	"bytes"
	"debug/elf"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/cilium/ebpf/btf"
)

// Object is what btfmin reads from one compiled BPF object: its BTF and its
// CO-RE relocations with their access strings resolved.
type Object struct {
	Name        string // file name without directory, for messages and the header comment
	Spec        *btf.Spec
	Relocations []Relocation
	// Sections are the program sections (executable, non-empty), in
	// file order; their names say what a program attaches to.
	Sections []string
	// Warnings are problems that do not stop generation, e.g. a missing
	// .BTF.ext section.
	Warnings []string
}

// Relocation is a CO-RE relocation resolved against the object's BTF.
type Relocation struct {
	RawRelocation
	Root  btf.Type
	Steps []Step // the access path below Root (field kinds only)
	Enum  *btf.EnumValue
}

// Step is one element of a field access path: a member of a struct or
// union (Member >= 0) or an element of an array (Index).
type Step struct {
	Parent btf.Type // *btf.Struct, *btf.Union or *btf.Array
	Member int      // member index in Parent, -1 for an array element
	Index  int      // array element index when Member < 0
}

// Path returns the relocation's field-name path, e.g.
// "struct task_struct[0].cred.uid.val", independent of type IDs.
func (r *Relocation) Path() string {
	var b strings.Builder
	b.WriteString(typeName(r.Root))
	switch {
	case r.Kind.IsEnum():
		if r.Enum != nil {
			b.WriteString("::" + r.Enum.Name)
		}
	case r.Kind.IsField():
		first := strings.SplitN(r.Access, ":", 2)[0]
		b.WriteString("[" + first + "]")
		for _, s := range r.Steps {
			if s.Member < 0 {
				fmt.Fprintf(&b, "[%d]", s.Index)
				continue
			}
			// Anonymous members are left out: their position differs
			// between a full and a minimal header, while the named
			// member inside identifies the field just as libbpf does.
			if m := members(s.Parent)[s.Member]; m.Name != "" {
				b.WriteString("." + m.Name)
			}
		}
	}
	return b.String()
}

// ReadObject reads path as a BPF ELF object.
func ReadObject(path string) (*Object, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	obj, err := ParseObject(filepath.Base(path), data)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return obj, nil
}

// ParseObject reads an object from memory; name is used in messages.
// BTF with loops C cannot write is refused (see checkContainment and
// checkReferenceLoops), among the types the spec lists and those the
// relocations name.
func ParseObject(name string, data []byte) (*Object, error) {
	obj, err := parseObject(name, data)
	if err != nil {
		return nil, err
	}
	var roots []btf.Type
	for _, r := range obj.Relocations {
		roots = append(roots, r.Root)
	}
	// Every type reachable from those is a root too: the checks stop at
	// named structs, and cilium/ebpf's lazy decoding may list only some
	// of the types, so a loop inside a member would otherwise go unseen.
	roots = reachable(obj.Spec, roots)
	if err := checkContainment(obj.Spec, roots); err != nil {
		return nil, fmt.Errorf("section .BTF: %w", err)
	}
	if err := checkReferenceLoops(obj.Spec, roots); err != nil {
		return nil, fmt.Errorf("section .BTF: %w", err)
	}
	return obj, nil
}

func parseObject(name string, data []byte) (*Object, error) {
	if !bytes.HasPrefix(data, []byte(elf.ELFMAG)) {
		return nil, errors.New("not an ELF file")
	}
	f, err := elf.NewFile(bytes.NewReader(data))
	if err != nil {
		return nil, fmt.Errorf("truncated or malformed ELF: %w", err)
	}
	btfSec := f.Section(".BTF")
	if btfSec == nil {
		return nil, errors.New("no .BTF section (compile with clang -g)")
	}
	rawBTF, err := btfSec.Data()
	if err != nil {
		return nil, fmt.Errorf("section .BTF: %w", err)
	}
	if err := checkReferenceDepth(rawBTF, f.ByteOrder); err != nil {
		return nil, fmt.Errorf("section .BTF: %w", err)
	}
	spec, err := btf.LoadSpecFromReader(bytes.NewReader(data))
	if err != nil {
		return nil, fmt.Errorf("section .BTF: %w", err)
	}
	obj := &Object{Name: name, Spec: spec}
	for _, s := range f.Sections {
		if s.Type == elf.SHT_PROGBITS && s.Flags&elf.SHF_EXECINSTR != 0 && s.Size > 0 {
			obj.Sections = append(obj.Sections, s.Name)
		}
	}
	extSec := f.Section(".BTF.ext")
	if extSec == nil {
		obj.Warnings = append(obj.Warnings, fmt.Sprintf("%s: no .BTF.ext section: no CO-RE relocations, keeping only the types of maps, globals and programs", name))
		return obj, nil
	}
	ext, err := extSec.Data()
	if err != nil {
		return nil, fmt.Errorf("section .BTF.ext: %w", err)
	}
	strs, err := stringTable(rawBTF, f.ByteOrder)
	if err != nil {
		return nil, err
	}
	raws, err := ParseCORERelocations(ext, strs, f.ByteOrder)
	if err != nil {
		return nil, err
	}
	for _, raw := range raws {
		r, err := resolve(spec, raw)
		if err != nil {
			return nil, fmt.Errorf("section .BTF.ext: offset %#x: %s relocation in %q at insn offset %d: %w",
				raw.Offset, raw.Kind, raw.Section, raw.InsnOff, err)
		}
		obj.Relocations = append(obj.Relocations, r)
	}
	return obj, nil
}

// resolve looks up a relocation's root type and walks its access string
// the way libbpf does: the first index steps over the root as an array,
// each following one selects a member of a struct or union or an element
// of an array.
func resolve(spec *btf.Spec, raw RawRelocation) (Relocation, error) {
	root, err := spec.TypeByID(btf.TypeID(raw.TypeID))
	if err != nil {
		return Relocation{}, fmt.Errorf("root type: %w", err)
	}
	r := Relocation{RawRelocation: raw, Root: root}
	switch {
	case raw.Kind.IsEnum():
		idx, err := strconv.Atoi(raw.Access)
		if err != nil {
			return r, fmt.Errorf("access string %q: %w", raw.Access, err)
		}
		e, ok := btf.QualifiedType(root).(*btf.Enum)
		if !ok {
			return r, fmt.Errorf("enum relocation on %s", describe(root))
		}
		if idx < 0 || idx >= len(e.Values) {
			return r, fmt.Errorf("access string %q: %s has %d values", raw.Access, describe(e), len(e.Values))
		}
		r.Enum = &e.Values[idx]
	case raw.Kind.IsField():
		parts := strings.Split(raw.Access, ":")
		if _, err := strconv.Atoi(parts[0]); err != nil {
			return r, fmt.Errorf("access string %q: %w", raw.Access, err)
		}
		cur := root
		for _, p := range parts[1:] {
			idx, err := strconv.Atoi(p)
			if err != nil || idx < 0 {
				return r, fmt.Errorf("access string %q: bad index %q", raw.Access, p)
			}
			switch t := skipTypedefs(cur).(type) {
			case *btf.Struct, *btf.Union:
				ms := members(t)
				if idx >= len(ms) {
					return r, fmt.Errorf("access string %q: %s has %d members", raw.Access, describe(t), len(ms))
				}
				r.Steps = append(r.Steps, Step{Parent: t, Member: idx})
				cur = ms[idx].Type
			case *btf.Array:
				r.Steps = append(r.Steps, Step{Parent: t, Member: -1, Index: idx})
				cur = t.Type
			default:
				return r, fmt.Errorf("access string %q: index into %s", raw.Access, describe(cur))
			}
		}
	}
	return r, nil
}

// members returns the members of a struct or union, nil otherwise.
func members(t btf.Type) []btf.Member {
	switch t := t.(type) {
	case *btf.Struct:
		return t.Members
	case *btf.Union:
		return t.Members
	}
	return nil
}

// skipTypedefs strips qualifiers and typedefs.
func skipTypedefs(t btf.Type) btf.Type {
	// cilium/ebpf bounds the walk, so a typedef loop in malformed BTF ends.
	return btf.UnderlyingType(t)
}

// typeName is the C spelling of a named type ("struct task_struct",
// "u32"), or a description of an anonymous one.
func typeName(t btf.Type) string {
	switch t := t.(type) {
	case *btf.Struct:
		return "struct " + anon(t.Name)
	case *btf.Union:
		return "union " + anon(t.Name)
	case *btf.Enum:
		return "enum " + anon(t.Name)
	case *btf.Fwd:
		if t.Kind == btf.FwdUnion {
			return "union " + t.Name
		}
		return "struct " + t.Name
	case *btf.Void:
		return "void"
	}
	if n := t.TypeName(); n != "" {
		return n
	}
	return fmt.Sprintf("%T", t)
}

func anon(name string) string {
	if name == "" {
		return "<anon>"
	}
	return name
}

// checkContainment rejects BTF in which a type contains itself by value
// (through members, array elements, typedefs or qualifiers), or nests
// deeper than maxNesting. Only malformed BTF does that, and every walk
// over member types (sizes, alignment, the header's definition order)
// would recurse forever on it.
func checkContainment(spec *btf.Spec, roots []btf.Type) error {
	return findLoop(spec, roots, containment())
}

// checkReferenceLoops rejects BTF in which a type refers to itself without
// a named struct or union in between (a pointer to a const of itself,
// typedef T *T, an anonymous struct pointing at itself), or through more
// than maxNesting of them: C cannot write such a type, and walks that
// follow pointers and typedefs to the structs they name, or write
// anonymous ones inline, would not end.
func checkReferenceLoops(spec *btf.Spec, roots []btf.Type) error {
	return findLoop(spec, roots, referenceLoops())
}

func containment() *loopCheck {
	return newLoopCheck("contains itself by value", "by value", func(t btf.Type) []btf.Type {
		switch t := t.(type) {
		case *btf.Struct, *btf.Union:
			return memberTypes(t)
		case *btf.Array:
			return []btf.Type{t.Type}
		}
		return qualified(t)
	})
}

func referenceLoops() *loopCheck {
	return newLoopCheck("refers to itself without a named struct or union in between",
		"of pointers, qualifiers, typedefs and anonymous members", func(t btf.Type) []btf.Type {
			var next []btf.Type
			for _, r := range references(t) {
				if !isComposite(r) || r.TypeName() == "" {
					next = append(next, r)
				}
			}
			return next
		})
}

// reachable returns every type reachable from spec's listed types and
// roots by references, each once, without recursion.
func reachable(spec *btf.Spec, roots []btf.Type) []btf.Type {
	seen := map[btf.Type]bool{}
	var out, stack []btf.Type
	push := func(t btf.Type) {
		if t != nil && !seen[t] {
			seen[t] = true
			out = append(out, t)
			stack = append(stack, t)
		}
	}
	if spec != nil {
		for t, err := range spec.All() {
			if err != nil {
				break // the checks report it
			}
			push(t)
		}
	}
	for _, t := range roots {
		push(t)
	}
	for len(stack) > 0 {
		t := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		for _, r := range references(t) {
			push(r)
		}
	}
	return out
}

// references returns the types t refers to: members, pointer targets,
// array elements, parameters and results, what a typedef or qualifier
// stands for, the types of variables and of a section's variables.
func references(t btf.Type) []btf.Type {
	switch t := t.(type) {
	case *btf.Struct, *btf.Union:
		return memberTypes(t)
	case *btf.Pointer:
		return []btf.Type{t.Target}
	case *btf.Array:
		return []btf.Type{t.Type}
	case *btf.FuncProto:
		next := []btf.Type{t.Return}
		for _, p := range t.Params {
			next = append(next, p.Type)
		}
		return next
	case *btf.Func:
		return []btf.Type{t.Type}
	case *btf.Var:
		return []btf.Type{t.Type}
	case *btf.Datasec:
		var next []btf.Type
		for _, v := range t.Vars {
			next = append(next, v.Type)
		}
		return next
	}
	return qualified(t)
}

// memberTypes returns the types of a struct's or union's members.
func memberTypes(t btf.Type) []btf.Type {
	var types []btf.Type
	for _, m := range members(t) {
		types = append(types, m.Type)
	}
	return types
}

// qualified returns the type a typedef or qualifier stands for.
func qualified(t btf.Type) []btf.Type {
	switch t := t.(type) {
	case *btf.Typedef:
		return []btf.Type{t.Type}
	case *btf.Const:
		return []btf.Type{t.Type}
	case *btf.Volatile:
		return []btf.Type{t.Type}
	case *btf.Restrict:
		return []btf.Type{t.Type}
	case *btf.TypeTag:
		return []btf.Type{t.Type}
	}
	return nil
}

// maxNesting bounds how deep types may nest, by value (members, array
// elements, typedefs and qualifiers) and by reference (pointers,
// qualifiers, typedefs and anonymous members between named structs), so
// that every walk over types is a recursion of bounded depth. Real
// kernels stay far below: the deepest measured (Linux 6.18 x86-64
// /sys/kernel/btf/vmlinux, Debian's 6.1 and 6.12 and cilium/ebpf's test
// kernel) nest 32 steps by value (typedef Q931) and 18 by reference
// (typedef efi_system_table_t).
const maxNesting = 1024

// loopCheck finds a type that reaches itself along next (loop says so),
// or a path longer than maxNesting (deep says along what). It keeps the
// longest path below each type it has walked, so that walks from many
// roots visit each type once.
type loopCheck struct {
	loop, deep string
	next       func(btf.Type) []btf.Type
	height     map[btf.Type]int // -1 while t is on the walk's path
}

func newLoopCheck(loop, deep string, next func(btf.Type) []btf.Type) *loopCheck {
	return &loopCheck{loop: loop, deep: deep, next: next, height: map[btf.Type]int{}}
}

// from checks root and what it reaches. An error leaves the check
// unusable.
func (l *loopCheck) from(root btf.Type) error {
	if h, ok := l.height[root]; ok && h >= 0 {
		return nil // a height kept is at most maxNesting
	}
	tooDeep := func() error {
		return fmt.Errorf("type %s nests deeper than %d levels %s", describe(root), maxNesting, l.deep)
	}
	var visit func(t btf.Type, depth int) (int, error)
	visit = func(t btf.Type, depth int) (int, error) {
		h, seen := l.height[t]
		if seen && h < 0 {
			return 0, fmt.Errorf("type %s %s", describe(t), l.loop)
		}
		if !seen {
			if depth > maxNesting {
				return 0, tooDeep()
			}
			l.height[t] = -1
			for _, n := range l.next(t) {
				nh, err := visit(n, depth+1)
				if err != nil {
					return 0, err
				}
				h = max(h, nh+1)
			}
			l.height[t] = h
		}
		if depth+h > maxNesting {
			return 0, tooDeep()
		}
		return h, nil
	}
	_, err := visit(root, 0)
	return err
}

// findLoop runs check from every type of spec and from roots.
func findLoop(spec *btf.Spec, roots []btf.Type, check *loopCheck) error {
	for t, err := range spec.All() {
		if err != nil {
			// cilium/ebpf decodes types lazily: a type it cannot decode
			// ends the walk here, and would surface later anyway.
			return err
		}
		if err := check.from(t); err != nil {
			return err
		}
	}
	for _, t := range roots {
		if err := check.from(t); err != nil {
			return err
		}
	}
	return nil
}
