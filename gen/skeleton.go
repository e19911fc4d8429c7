package gen

import (
	"bytes"
	"fmt"
	"go/token"
	"sort"
	"strings"

	"github.com/cilium/ebpf"
	"github.com/cilium/ebpf/btf"
	"github.com/dave/jennifer/jen"

	"github.com/skelgen/skelgen/gen/aot"
	"github.com/skelgen/skelgen/internal/gocomment"
)

const (
	pkgEbpf = "github.com/cilium/ebpf"
	pkgLink = "github.com/cilium/ebpf/link"
	pkgFmt  = "fmt"

	// BridgeImport and RuntimeImport are the import paths of the bridge
	// and runtime packages when the generated code imports them instead of
	// carrying a copy.
	BridgeImport  = "github.com/skelgen/skelgen/runtime/bridge"
	RuntimeImport = aot.RuntimeImport
)

// SkeletonConfig says how to write one skeleton file.
type SkeletonConfig struct {
	// Package is the Go package name.
	Package string
	// Stem names the skeleton: identifiers start with GoName(Stem).
	Stem string
	// ObjectFile is the base name of the object file embedded beside the Go
	// file.
	ObjectFile string
	// Source names the input in the header comment (a base name).
	Source string
	// Target is the object's target; its build constraint guards the file.
	Target Target
	// Types are C type names to generate even if no map or variable uses
	// them; a type given here also types the records of ring buffers and
	// perf event arrays ("event", or "map=type" for one map).
	Types []string
	// BridgeImport and RuntimeImport are the import paths of the bridge
	// and runtime packages: the skelgen module's, or a copy the package
	// carries.
	BridgeImport  string
	RuntimeImport string
	// AOT translates user-space programs to Go; otherwise they run in the
	// interpreter.
	AOT bool
	// InterpretHooks, with AOT, leaves the begin, end, interval and lost
	// hooks to the interpreter (Config.InterpretHooks).
	InterpretHooks bool
	// Warn, when set, receives what the translation tells about a
	// program (see aot.Options.Note): that it was split into more Go
	// functions than it has BPF functions.
	Warn func(msg string)
	// SourceTypes are types declared in the source but not in the
	// object's BTF (see sourceTypes); nil if none were needed.
	SourceTypes *btf.Spec
	// Records are the record types of ring buffers and perf maps as the
	// source writes them, by map name: they type readers that -type
	// does not.
	Records map[string]RecordGuess
	// ExternParams are the parameter names of the source's extern (__ksym)
	// function declarations, by function, which the object's BTF lacks:
	// they name the host interface's parameters.
	ExternParams map[string][]string
	// Constants are the source's #define and anonymous enum constants,
	// and SourceEnums the tags of the named enums it defines, generated
	// without -type (consts.go).
	Constants   []cConst
	SourceEnums []string
	// KernelBTFFile, when set, is the base name of the archive of minimal
	// kernel BTF (KernelBTFArchive) embedded beside the Go file, which
	// Load relocates against on a kernel without BTF of its own; Kernels
	// are the releases it holds (-btf-for).
	KernelBTFFile string
	Kernels       []string
}

// skeleton holds the state of writing one skeleton.
type skeleton struct {
	cfg    SkeletonConfig
	obj    *Object
	prefix string
	types  *TypeGen
	bridge string

	maps     []*mapInfo
	programs []*progInfo
	vars     []*varInfo
	user     []*userProg
	host     []*hostFunc

	// verb writes the regular parts verbatim; nil: all through jennifer.
	verb *verbatim

	// fromTypeFlag: maps whose records -type typed.
	fromTypeFlag map[string]bool
	// recordNote: why a stream the source shows a record type for is
	// left untyped.
	recordNote map[string]string
}

type mapInfo struct {
	name  string // C name
	field string // Go field name in Objects
	spec  *ebpf.MapSpec
	typ   genericRef // field type
	doc   string
	// rawValue: the skeleton does not type the values, so the spec lets
	// the value size be set before load.
	rawValue bool
	// specValue, for a struct_ops map, is the Go type of its structure,
	// which the spec lets the user read and change before load.
	specValue jen.Code
}

type varInfo struct {
	name  string
	field string
	spec  *ebpf.VariableSpec
	typ   jen.Code
}

// Skeleton writes the Go skeleton of obj: src is the types and API file
// (<stem>_<target>.go), aotSrc the translation of its user-space programs
// (<stem>_<target>_aot.go), nil when there is none (no ubpf/ programs, or
// cfg.AOT unset).
func Skeleton(obj *Object, cfg SkeletonConfig) (src, aotSrc []byte, err error) {
	return writeSkeleton(obj, cfg, true)
}

// writeSkeleton is Skeleton, with the regular parts of the file written
// verbatim (see verbatim) or, with fast unset, all through jennifer and
// go/format.
func writeSkeleton(obj *Object, cfg SkeletonConfig, fast bool) (src, aotSrc []byte, err error) {
	if !validStem(cfg.Stem) || !validStem(strings.ReplaceAll(strings.TrimSuffix(cfg.ObjectFile, ".o"), ".", "_")) || !token.IsIdentifier(cfg.Package) {
		return nil, nil, fmt.Errorf("skeleton of stem %q, object file %q, package %q: want a file name stem, a file name and a Go identifier", cfg.Stem, cfg.ObjectFile, cfg.Package)
	}
	if cfg.BridgeImport == "" {
		cfg.BridgeImport = BridgeImport
	}
	if cfg.RuntimeImport == "" {
		cfg.RuntimeImport = RuntimeImport
	}
	s := &skeleton{
		cfg:    cfg,
		obj:    obj,
		prefix: GoName(cfg.Stem),
		types:  NewTypeGen(obj.Order),
		bridge: cfg.BridgeImport,

		fromTypeFlag: map[string]bool{},
		recordNote:   map[string]string{},
	}
	if fast {
		// Skeletons run to one or two times the object's size.
		s.verb = newVerbatim(len(obj.Data) * 3 / 2)
		s.types.verb = s.verb
	}
	s.types.Prefix = s.prefix
	s.types.Bridge = s.bridge
	// The skeleton's own top-level names win over C type names.
	for _, suffix := range []string{"Spec", "VariableSpecs", "ProgramSpecs", "MapSpecs", "Objects", "Variables", "Host", "LoadOptions", "Pointer", "MemoryError", "ErrBudget", "ErrCallDepth", "ErrInProcess", "Kernels", "ExitError", "Handlers"} {
		s.types.taken[s.prefix+suffix] = true
	}
	if err := s.collect(); err != nil {
		return nil, nil, fmt.Errorf("%s: %w", obj.Name, err)
	}
	if err := s.collectSourceEnums(); err != nil {
		return nil, nil, fmt.Errorf("%s: %w", obj.Name, err)
	}
	if s.verb != nil && !s.plainNames() {
		// Names that are not Go identifiers go through jennifer and
		// go/format, which reject them as before.
		s.verb, s.types.verb = nil, nil
	}
	f, err := s.file()
	if err != nil {
		return nil, nil, fmt.Errorf("%s: %w", obj.Name, err)
	}
	// The imports are grouped before the verbatim parts are spliced in:
	// groupImports then copies only the rest of the file.
	src, err = s.verb.render(f, groupImports)
	if err != nil {
		return nil, nil, fmt.Errorf("%s: rendering the skeleton: %w", obj.Name, err)
	}
	if af := s.translationFile(); af != nil {
		var abuf bytes.Buffer
		if err := af.Render(&abuf); err != nil {
			return nil, nil, fmt.Errorf("%s: rendering the translation: %w", obj.Name, err)
		}
		aotSrc = groupImports(abuf.Bytes())
	}
	return src, aotSrc, nil
}

// plainNames reports whether every name the verbatim parts write as it is
// is a Go identifier. (Type names are checked where the types are written.)
func (s *skeleton) plainNames() bool {
	names := []string{s.prefix, lowerFirst(s.prefix)}
	for _, m := range s.maps {
		names = append(names, m.field)
	}
	for _, pi := range s.programs {
		names = append(names, pi.field)
	}
	for _, v := range s.vars {
		names = append(names, v.field)
	}
	for _, up := range s.user {
		names = append(names, up.field, up.translationFn)
	}
	for _, n := range names {
		if n != "" && !token.IsIdentifier(n) {
			return false
		}
	}
	return token.IsIdentifier(s.prefix)
}

// groupImports splits the import block jennifer writes (one sorted list)
// into the standard library and the rest, separated by a blank line, as
// goimports does. The result is still gofmt'd: each group stays sorted.
func groupImports(src []byte) []byte {
	const open, end = "\nimport (\n", "\n)\n"
	i := bytes.Index(src, []byte(open))
	if i < 0 {
		return src
	}
	body := i + len(open)
	j := bytes.Index(src[body:], []byte(end))
	if j < 0 {
		return src
	}
	var std, other [][]byte
	for _, line := range bytes.Split(src[body:body+j], []byte("\n")) {
		path := line
		if q := bytes.IndexByte(line, '"'); q >= 0 {
			path = line[q+1:]
		}
		if first, _, _ := bytes.Cut(path, []byte("/")); bytes.Contains(first, []byte(".")) {
			other = append(other, line)
		} else {
			std = append(std, line)
		}
	}
	if len(std) == 0 || len(other) == 0 {
		return src
	}
	var out bytes.Buffer
	out.Grow(len(src) + 1)
	out.Write(src[:body])
	out.Write(bytes.Join(std, []byte("\n")))
	out.WriteString("\n\n")
	out.Write(bytes.Join(other, []byte("\n")))
	out.Write(src[body+j:])
	return out.Bytes()
}

// translationFile is the file of the user programs' translations, nil
// when there is none.
func (s *skeleton) translationFile() *jen.File {
	var f *jen.File
	for _, up := range s.user {
		if up.translation == nil {
			continue
		}
		if f == nil {
			f = jen.NewFile(s.cfg.Package)
			f.HeaderComment(skeletonComment)
			f.HeaderComment("//go:build " + gocomment.Text(s.cfg.Target.BuildConstraint()))
			f.HeaderComment(gocomment.Text(fmt.Sprintf("The user-space programs of %s translated to Go ahead of time;", s.cfg.Source)))
			f.HeaderComment(gocomment.Text(fmt.Sprintf("%s.go binds them to the programs it loads.", strings.TrimSuffix(s.cfg.ObjectFile, ".o"))))
			// Translated code stores registers the program never reads
			// again and tests what the program's own checks make
			// certain: staticcheck's suspicious-construct checks would
			// report the BPF program, not Go code anyone edits.
			f.HeaderComment("//lint:file-ignore SA4* a translation keeps every register store and test of the BPF program")
			f.ImportName(s.cfg.RuntimeImport, "runtime")
		}
		f.Add(up.translation)
	}
	return f
}

// names hands out Go identifiers, resolving collisions deterministically.
type names map[string]bool

func (n names) take(base, suffix string) string {
	if base == "" || base == "_" {
		base = "X"
	}
	name := base
	if n[name] && suffix != "" {
		name = base + suffix
	}
	for i := 2; n[name]; i++ {
		name = fmt.Sprintf("%s%s%d", base, suffix, i)
	}
	n[name] = true
	return name
}

func sortedNames[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// isDataSection reports whether a map is a global data section
// (.rodata, .data, .bss and their named variants) or another section map
// that the skeleton exposes through variables instead.
func isDataSection(name string) bool { return strings.HasPrefix(name, ".") }

// eventTypes resolves -type arguments to ring buffer and perf map record
// types: "map=type" for one map, or a plain type name when the object has
// exactly one such map. "map=type" may not contradict the record type the
// source shows for the map unless it ends in "!" ("map=type!").
func (s *skeleton) eventTypes() (map[string]btf.Type, []btf.Type, error) {
	var streams []string
	for _, name := range sortedNames(s.obj.Spec.Maps) {
		switch s.obj.Spec.Maps[name].Type {
		case ebpf.RingBuf, ebpf.PerfEventArray:
			streams = append(streams, name)
		}
	}
	byMap := map[string]btf.Type{}
	var extra []btf.Type
	for _, arg := range s.cfg.Types {
		mapName, typeName, explicit := strings.Cut(arg, "=")
		if !explicit {
			typeName, mapName = arg, ""
		}
		typeName, force := strings.CutSuffix(typeName, "!")
		if force && !explicit {
			return nil, nil, fmt.Errorf("-type %s: a ! follows MAP=T only, to type a map's records against what the source shows", arg)
		}
		t, err := s.lookupType(typeName)
		if err != nil {
			return nil, nil, err
		}
		extra = append(extra, t)
		switch {
		case explicit:
			m, ok := s.obj.Spec.Maps[mapName]
			if !ok || (m.Type != ebpf.RingBuf && m.Type != ebpf.PerfEventArray) {
				return nil, nil, fmt.Errorf("-type %s: no ring buffer or perf event array named %s", arg, mapName)
			}
			if g := s.cfg.Records[mapName]; g.Type != "" {
				if st, err := s.recordType(g); err == nil && s.types.key(btf.UnderlyingType(st)) != s.types.key(btf.UnderlyingType(t)) {
					if force {
						s.recordNote[mapName] = fmt.Sprintf("records typed by -type %s, though the source writes %s", arg, g.describe()+sizeNote(st))
						byMap[mapName] = t
						s.fromTypeFlag[mapName] = true
						continue
					}
					return nil, nil, fmt.Errorf("-type %s: the source writes records of %s to %s, at %s, not %s: drop the -type, or write -type %s=%s! to read them as %s all the same",
						arg, g.describe()+sizeNote(st), mapName, g.At, tySizeText(t), mapName, typeName, tyCName(t))
				}
			}
			byMap[mapName] = t
			s.fromTypeFlag[mapName] = true
		case len(streams) == 1 && s.cfg.Records[streams[0]].Type == "":
			// A plain -type types the only stream, unless the source
			// shows what its records are.
			if _, ok := byMap[streams[0]]; !ok && isStruct(t) {
				byMap[streams[0]] = t
				s.fromTypeFlag[streams[0]] = true
			}
		}
	}
	for _, name := range streams {
		if _, ok := byMap[name]; ok {
			continue
		}
		g, ok := s.cfg.Records[name]
		if ok && g.Err != "" {
			return nil, nil, fmt.Errorf("map %s: %s: name the record type with -type %s=T", name, g.Err, name)
		}
		if !ok || g.Type == "" {
			continue
		}
		t, err := s.recordType(g)
		if err != nil || !isStruct(t) {
			s.recordNote[name] = g.Why + ", but skelgen found no struct definition of it: name the record type with -type"
			continue
		}
		byMap[name] = t
	}
	return byMap, extra, nil
}

// recordType is the type of a record guess. A struct defined in one of
// several functions defining its tag is found under the name of its copy
// (see sourceTypes); its Go type is named after the function and its tag
// (ProbeHandleEvent for struct event of function handle) and its doc
// comment says which it is.
func (s *skeleton) recordType(g RecordGuess) (btf.Type, error) {
	t, err := s.lookupType(g.Type)
	if err != nil || g.Func == "" {
		return t, err
	}
	_, tag, _ := strings.Cut(g.CName, " ")
	c := btf.Copy(t)
	switch c := c.(type) {
	case *btf.Struct:
		c.Name = tag
	case *btf.Union:
		c.Name = tag
	}
	s.types.nameDefinition(c, GoName(g.Func)+GoName(tag), g.CName+" defined in function "+g.Func)
	return c, nil
}

func isStruct(t btf.Type) bool {
	_, ok := btf.UnderlyingType(t).(*btf.Struct)
	return ok
}

// lookupType finds a C type by name ("event", "struct event", "enum
// mode") in the object's BTF, then among the types found in the source.
func (s *skeleton) lookupType(name string) (btf.Type, error) {
	t, err := findType(s.obj.Spec.Types, name)
	if err == nil || s.cfg.SourceTypes == nil {
		return t, err
	}
	return findType(s.cfg.SourceTypes, name)
}

// findType finds a complete C type by name in spec.
func findType(spec *btf.Spec, name string) (btf.Type, error) {
	kind, bare, ok := strings.Cut(strings.TrimSpace(name), " ")
	if !ok {
		bare, kind = kind, ""
	}
	var found []btf.Type
	all, _ := spec.AnyTypesByName(bare)
	for _, t := range all {
		switch t.(type) {
		case *btf.Struct:
			if kind == "" || kind == "struct" {
				found = append(found, t)
			}
		case *btf.Union:
			if kind == "" || kind == "union" {
				found = append(found, t)
			}
		case *btf.Enum:
			// A forward-declared enum has size 0.
			if (kind == "" || kind == "enum") && t.(*btf.Enum).Size > 0 {
				found = append(found, t)
			}
		case *btf.Typedef:
			if kind == "" {
				found = append(found, t)
			}
		}
	}
	switch len(found) {
	case 0:
		return nil, fmt.Errorf("-type %s: no such type in the object's BTF (a type used only inside functions is found when skelgen compiles the .bpf.c itself)", name)
	case 1:
		return found[0], nil
	}
	// Prefer the struct over a typedef of the same name; of two different
	// structs of one name (defined in different functions), pick none.
	var pick btf.Type
	for _, t := range found {
		if _, ok := t.(*btf.Typedef); ok {
			continue
		}
		if pick != nil && !sameLayout(pick, t) {
			return nil, fmt.Errorf("-type %s: the BTF has several different types of this name (%s, %s): skelgen cannot tell which one is meant", name, tySizeText(pick), tySizeText(t))
		}
		if pick == nil {
			pick = t
		}
	}
	if pick == nil {
		pick = found[0]
	}
	return pick, nil
}

// sameLayout reports whether two types of one name have the same kind,
// size and members.
func sameLayout(a, b btf.Type) bool {
	g := NewTypeGen(nil)
	return g.key(a) == g.key(b)
}

// sizeNote is " (N bytes)" of t, or "" when t has no size.
func sizeNote(t btf.Type) string {
	n, err := btf.Sizeof(t)
	if err != nil {
		return ""
	}
	return fmt.Sprintf(" (%d bytes)", n)
}
