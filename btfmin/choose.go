package btfmin

import (
	"errors"
	"fmt"
	"strings"

	"github.com/cilium/ebpf/btf"
)

// keepSet records which members of a struct or union the header keeps.
type keepSet struct {
	whole   bool
	members map[int]bool
}

// chooser decides what the header declares. Named types are identified by
// their C spelling ("struct task_struct", "typedef u32") so that the same
// type seen in several objects and kernel BTFs is one declaration: the
// first definition seen (objects before kernels) is canonical.
type chooser struct {
	canon    map[string]btf.Type
	keep     map[btf.Type]*keepSet // canonical named or anonymous composites
	defs     map[string]btf.Type   // named enums and typedefs to define
	fwd      map[string]btf.Type   // composites needing a forward declaration
	wholeVis map[btf.Type]bool
	walked   map[useKey]bool // what the current call of use has walked
	// checks are the nesting checks every type passes before a walk over
	// it (see check); err is the first failure, which ends the chooser.
	checks   []*loopCheck
	err      error
	exclude  map[string]bool // names the source defines itself
	kernels  []*btf.Spec
	inKernel map[string]bool
	// enumerators indexes the kernels' enum constants by name, built on
	// first use.
	enumerators map[string]*btf.Enum
	// sources name the BTFs types come from, for errors.
	sources []btfSource
	// arches are the architectures whose register declarations the
	// header holds (Config.Arches), kernelArch the kernel BTF's, and
	// regs whether the source reads registers at all (regs.go).
	arches     []string
	kernelArch string
	regs       bool
}

func newChooser(kernels []*btf.Spec) *chooser {
	return &chooser{
		canon:    map[string]btf.Type{},
		keep:     map[btf.Type]*keepSet{},
		defs:     map[string]btf.Type{},
		fwd:      map[string]btf.Type{},
		wholeVis: map[btf.Type]bool{},
		walked:   map[useKey]bool{},
		checks:   []*loopCheck{referenceLoops(), containment()},
		exclude:  map[string]bool{},
		kernels:  kernels,
		inKernel: map[string]bool{},
	}
}

// declKey is the name a top-level C declaration of t is known by, or ""
// for anonymous types (which are written inline).
func declKey(t btf.Type) string {
	switch t := t.(type) {
	case *btf.Struct, *btf.Union, *btf.Fwd:
		if t.TypeName() == "" {
			return ""
		}
		return typeName(t)
	case *btf.Enum:
		if t.Name == "" {
			if len(t.Values) == 0 {
				return ""
			}
			// Anonymous enums only reach top level as holders of
			// constants the source uses; name them by their first one.
			return "enum <" + t.Values[0].Name + ">"
		}
		return "enum " + t.Name
	case *btf.Typedef:
		return "typedef " + t.Name
	}
	return ""
}

// canonical returns the canonical definition for a named type.
func (c *chooser) canonical(t btf.Type) btf.Type {
	k := declKey(t)
	if k == "" {
		return t
	}
	if ct, ok := c.canon[k]; ok {
		return ct
	}
	if _, isFwd := t.(*btf.Fwd); isFwd {
		return t
	}
	c.canon[k] = t
	return t
}

// isHeader reports whether a named type belongs in the header rather than
// in the source: ___flavor types never do, and when kernel BTF is known,
// only types the kernel has do (the source defines its own).
func (c *chooser) isHeader(t btf.Type) bool {
	k := declKey(t)
	name := t.TypeName()
	if k == "" || c.exclude[k] || strings.Contains(name, "___") {
		return false
	}
	if len(c.kernels) == 0 || strings.HasPrefix(k, "enum <") {
		return true
	}
	if v, ok := c.inKernel[k]; ok {
		return v
	}
	found := false
	for _, spec := range c.kernels {
		ts, _ := spec.AnyTypesByName(name)
		for _, kt := range ts {
			if kindOf(kt) == kindOf(t) {
				found = true
			}
		}
	}
	c.inKernel[k] = found
	return found
}

// kindOf groups BTF kinds as C tag namespaces: a Fwd matches the struct or
// union it declares.
func kindOf(t btf.Type) string {
	switch t := t.(type) {
	case *btf.Fwd:
		if t.Kind == btf.FwdUnion {
			return "union"
		}
		return "struct"
	}
	return strings.SplitN(declKey(t), " ", 2)[0]
}

func (c *chooser) keepOf(t btf.Type) *keepSet {
	ks := c.keep[t]
	if ks == nil {
		ks = &keepSet{members: map[int]bool{}}
		c.keep[t] = ks
	}
	return ks
}

// check makes sure the walks over t end: a type of a kernel BTF, which
// unlike an object's (ParseObject) is not checked whole (too slow for
// every run), must not contain itself by value, refer to itself without
// a named struct or union in between, or nest deeper than maxNesting. Each
// type is checked once, as the walks reach it. The first failure, naming
// the BTF t came from, is the chooser's error.
func (c *chooser) check(t btf.Type) error {
	for _, l := range c.checks {
		if c.err != nil {
			break
		}
		if err := l.from(t); err != nil {
			c.err = err
			if o := c.origin(t); o != "" {
				c.err = fmt.Errorf("%s: %w", o, err)
			}
		}
	}
	return c.err
}

// define makes sure composite t gets a definition (with whatever members
// are kept). A type the source defines is walked whole instead, since the
// source's definition needs every member's type.
func (c *chooser) define(t btf.Type) {
	if c.check(t) != nil {
		return
	}
	if declKey(t) != "" && !c.isHeader(t) {
		c.use(t, true)
		return
	}
	c.keepOf(t)
}

// use records that the header must make t usable: whole means a complete
// definition (by-value use), otherwise a declaration is enough (behind a
// pointer).
func (c *chooser) use(t btf.Type, whole bool) {
	// A type this call has walked already adds nothing new when walked
	// again: not walking it again keeps the walk linear where types share
	// what they refer to (two parameters of one typedef, each a pointer
	// to a function of two such parameters, ...), and ends it on loops
	// (types merged by name from several BTFs, canonical, can loop where
	// none does alone). The next call walks afresh: what it adds depends
	// on what the source excludes by then.
	k := useKey{t, whole}
	if c.walked[k] || c.check(t) != nil {
		return
	}
	if len(c.walked) == 0 {
		defer clear(c.walked)
	}
	c.walked[k] = true
	switch t := t.(type) {
	case *btf.Const:
		c.use(t.Type, whole)
	case *btf.Volatile:
		c.use(t.Type, whole)
	case *btf.Restrict:
		c.use(t.Type, whole)
	case *btf.TypeTag:
		c.use(t.Type, whole)
	case *btf.Pointer:
		c.use(t.Target, false)
	case *btf.Array:
		c.use(t.Type, true)
	case *btf.FuncProto:
		c.use(t.Return, false)
		for _, p := range t.Params {
			c.use(p.Type, false)
		}
	case *btf.Func:
		c.use(t.Type, false)
	case *btf.Var:
		c.use(t.Type, true)
	case *btf.Typedef:
		ct := c.canonical(t).(*btf.Typedef)
		if c.isHeader(ct) {
			c.defs[declKey(ct)] = ct
		}
		c.use(ct.Type, whole)
	case *btf.Enum:
		ct := c.canonical(t)
		if k := declKey(ct); k != "" && c.isHeader(ct) {
			c.defs[k] = ct
		}
	case *btf.Fwd:
		ct := c.canonical(t)
		if ct != btf.Type(t) {
			c.use(ct, whole)
			return
		}
		if c.isHeader(t) {
			c.fwd[declKey(t)] = t
		}
	case *btf.Struct, *btf.Union:
		ct := c.canonical(t)
		named := declKey(ct) != ""
		header := named && c.isHeader(ct)
		if named && header {
			c.fwd[declKey(ct)] = ct
		}
		if named && header && !whole {
			return
		}
		if c.wholeVis[ct] {
			return
		}
		c.wholeVis[ct] = true
		if !named || header {
			c.keepOf(ct).whole = true
		}
		for _, m := range members(ct) {
			c.use(m.Type, true)
		}
	}
}

// pathElem is one step of an access path by name: a member name, or an
// array index.
type pathElem struct {
	name    string
	index   int
	isIndex bool
}

func (e pathElem) String() string {
	if e.isIndex {
		return fmt.Sprintf("[%d]", e.index)
	}
	return "." + e.name
}

// relocationPath turns a resolved access path into names, dropping the
// anonymous members (they are found again by name in the canonical type,
// as libbpf does against the target).
func relocationPath(r *Relocation) []pathElem {
	var p []pathElem
	for _, s := range r.Steps {
		if s.Member < 0 {
			p = append(p, pathElem{index: s.Index, isIndex: true})
			continue
		}
		if name := members(s.Parent)[s.Member].Name; name != "" {
			p = append(p, pathElem{name: name})
		}
	}
	return p
}

// resolveNamed strips qualifiers and typedefs from t, keeping the
// typedefs it passes, and returns the canonical underlying type.
func (c *chooser) resolveNamed(t btf.Type) btf.Type {
	// Bounded: typedefs merged by name from several BTFs can loop.
	for range maxNesting {
		t = btf.QualifiedType(t)
		td, ok := t.(*btf.Typedef)
		if !ok {
			return c.canonical(t)
		}
		ct := c.canonical(td).(*btf.Typedef)
		if c.isHeader(ct) {
			c.defs[declKey(ct)] = ct
		}
		t = ct.Type
	}
	return t
}

// findMember finds a member by name in composite t, looking into
// anonymous members; it returns the chain of (composite, index) pairs. A
// type searched in vain is not searched again: anonymous members can
// share types, and the search stays linear.
func findMember(t btf.Type, name string) []Step {
	missed := map[btf.Type]bool{}
	var find func(t btf.Type) []Step
	find = func(t btf.Type) []Step {
		if missed[t] {
			return nil
		}
		missed[t] = true
		for i, m := range members(t) {
			if m.Name == name {
				return []Step{{Parent: t, Member: i}}
			}
			if m.Name == "" {
				if sub := find(skipTypedefs(m.Type)); sub != nil {
					return append([]Step{{Parent: t, Member: i}}, sub...)
				}
			}
		}
		return nil
	}
	return find(t)
}

var errNoMember = errors.New("no such member")

// keepPath keeps the members a field access from root touches, their
// anonymous containers and typedef chains, and the final member's type in
// full (the program may read it by value).
func (c *chooser) keepPath(root btf.Type, path []pathElem) error {
	if err := c.check(root); err != nil {
		return err
	}
	cur := c.resolveNamed(root)
	if isComposite(cur) {
		c.define(cur)
	}
	var last btf.Type = cur
	for i, e := range path {
		if e.isIndex {
			arr, ok := cur.(*btf.Array)
			if !ok {
				return fmt.Errorf("%q: index into %s", pathString(path[:i+1]), describe(cur))
			}
			last = arr.Type
			cur = c.resolveNamed(arr.Type)
			if isComposite(cur) {
				c.define(cur)
			}
			continue
		}
		chain := findMember(cur, e.name)
		if chain == nil {
			return fmt.Errorf("%q in %s: %w", pathString(path[:i+1]), describe(cur), errNoMember)
		}
		for _, s := range chain {
			c.define(s.Parent)
			if declKey(s.Parent) == "" || c.isHeader(s.Parent) {
				c.keepOf(s.Parent).members[s.Member] = true
			}
		}
		end := chain[len(chain)-1]
		last = members(end.Parent)[end.Member].Type
		cur = c.resolveNamed(last)
		if isComposite(cur) {
			c.define(cur)
		}
	}
	c.use(last, true)
	return nil
}

func pathString(p []pathElem) string {
	var b strings.Builder
	for _, e := range p {
		b.WriteString(e.String())
	}
	return b.String()
}

func isComposite(t btf.Type) bool {
	switch t.(type) {
	case *btf.Struct, *btf.Union:
		return true
	}
	return false
}

// addRelocation keeps what one CO-RE relocation needs.
func (c *chooser) addRelocation(r *Relocation) error {
	switch {
	case r.Kind.IsField():
		return c.keepPath(r.Root, relocationPath(r))
	case r.Kind.IsEnum(), r.Kind == TypeSize, r.Kind == TypeMatches:
		c.use(r.Root, true)
	default:
		// A forward declaration is a different BTF kind (fwd) from the
		// struct the target has, so type_exists and type IDs would
		// resolve to nothing: define the type, even with no members.
		if t := c.resolveNamed(r.Root); isComposite(t) {
			c.define(t)
		} else {
			c.use(r.Root, false)
		}
	}
	return nil
}

// addObjectTypes keeps what maps, globals, externs and programs need:
// map keys and values and globals whole, __ksym externs and program
// prototypes as declarations.
func (c *chooser) addObjectTypes(spec *btf.Spec) {
	for t, err := range spec.All() {
		if err != nil {
			return
		}
		switch t := t.(type) {
		case *btf.Datasec:
			for _, v := range t.Vars {
				vr, ok := v.Type.(*btf.Var)
				switch {
				case !ok:
					c.use(v.Type, false)
				case t.Name == ".maps":
					for _, m := range members(skipTypedefs(vr.Type)) {
						whole := m.Name == "key" || m.Name == "value"
						if p, ok := m.Type.(*btf.Pointer); ok && whole {
							c.use(p.Target, true)
						} else {
							c.use(m.Type, false)
						}
					}
				case t.Name == ".ksyms":
					c.use(vr.Type, false)
				default:
					c.use(vr.Type, true)
				}
			}
		case *btf.Func:
			c.use(t.Type, false)
		}
	}
}

// addHookPrototype declares what a program's arguments need when its
// section names a BTF-typed hook: BPF_PROG unpacks them from the context
// with the kernel's prototype, and the inlined function that takes them
// leaves no trace in the object's BTF. tp_btf and raw_tp hooks are typed
// by the kernel's btf_trace_NAME typedef, fentry, fexit, fmod_ret by the
// function itself, lsm hooks by bpf_lsm_NAME.
func (c *chooser) addHookPrototype(section string) {
	prefix, hook, ok := strings.Cut(section, "/")
	if !ok || hook == "" {
		return
	}
	var name string
	switch strings.TrimSuffix(prefix, ".s") {
	case "tp_btf", "raw_tp", "raw_tracepoint", "raw_tp.w", "raw_tracepoint.w":
		name = "btf_trace_" + hook
	case "fentry", "fexit", "fmod_ret":
		name = hook
	case "lsm", "lsm_cgroup":
		name = "bpf_lsm_" + hook
	default:
		return
	}
	for _, spec := range c.kernels {
		ts, _ := spec.AnyTypesByName(name)
		for _, t := range ts {
			var proto *btf.FuncProto
			switch t := t.(type) {
			case *btf.Typedef:
				if p, ok := t.Type.(*btf.Pointer); ok {
					proto, _ = p.Target.(*btf.FuncProto)
				}
			case *btf.Func:
				proto, _ = t.Type.(*btf.FuncProto)
			}
			if proto == nil {
				continue
			}
			params := proto.Params
			if strings.HasPrefix(name, "btf_trace_") && len(params) > 0 {
				params = params[1:] // the tracepoint's void *__data
			}
			for _, p := range params {
				c.use(p.Type, false)
			}
			return
		}
	}
}

// useKey is a call of chooser.use.
type useKey struct {
	t     btf.Type
	whole bool
}
