package gen

import (
	"fmt"
	"strings"

	"github.com/cilium/ebpf"
	"github.com/cilium/ebpf/btf"
	"github.com/dave/jennifer/jen"

	"github.com/skelgen/skelgen/internal/gocomment"
	"github.com/skelgen/skelgen/runtime/bridge"
)

// reservedFields are names of the Objects type's own methods and fields.
var reservedFields = []string{"Close", "Collection", "Variables", "AttachAll"}

// collect decides the Go shape of every map, program and variable.
func (s *skeleton) collect() error {
	spec := s.obj.Spec
	events, extra, err := s.eventTypes()
	if err != nil {
		return err
	}
	for _, t := range extra {
		if _, err := s.types.GoType(t); err != nil {
			return fmt.Errorf("-type %s: %w", t.TypeName(), err)
		}
	}
	taken := names{}
	for _, r := range reservedFields {
		taken[r] = true
	}
	var mapNames, progNames []string
	for _, name := range sortedNames(spec.Maps) {
		if !isDataSection(name) {
			mapNames = append(mapNames, name)
		}
	}
	mapFields := taken.assign(mapNames, "Map")
	progNames = sortedNames(spec.Programs)
	progFields := taken.assign(progNames, "Program")
	for _, name := range mapNames {
		m := &mapInfo{name: name, spec: spec.Maps[name]}
		m.field = mapFields[name]
		if err := s.typeMap(m, events[name]); err != nil {
			return fmt.Errorf("map %s: %w", name, err)
		}
		s.maps = append(s.maps, m)
	}
	for _, name := range progNames {
		p := spec.Programs[name]
		if bridge.IsUserProgram(p) {
			continue
		}
		if p.Type == ebpf.UnspecifiedProgram {
			return fmt.Errorf("section %s: program %s: unknown program kind (section names follow libbpf: tracepoint/, kprobe/, xdp, ...; ubpf/ for user space): %w", p.SectionName, name, errUnsupported)
		}
		pi := &progInfo{name: name, spec: p, attach: attachFor(p)}
		pi.field = progFields[name]
		pi.typ = s.prefix + pi.field
		if !strings.HasSuffix(pi.field, "Program") {
			pi.typ += "Program"
		}
		for s.types.taken[pi.typ] {
			pi.typ += "_"
		}
		s.types.taken[pi.typ] = true
		s.programs = append(s.programs, pi)
	}
	if err := s.collectUser(progFields); err != nil {
		return err
	}
	var varNames []string
	for _, name := range sortedNames(spec.Variables) {
		if v := spec.Variables[name]; v.SectionName != ".kconfig" && v.SectionName != ".ksyms" {
			varNames = append(varNames, name)
		}
	}
	varFields := names{}.assign(varNames, "Var")
	for _, name := range varNames {
		v := spec.Variables[name]
		vi := &varInfo{name: name, spec: v}
		vi.field = varFields[name]
		vi.typ = s.valueType(v.Type, int(v.Size()), s.prefix+vi.field)
		s.vars = append(s.vars, vi)
	}
	return nil
}

// valueType returns the Go type of a BTF type, falling back to a byte array
// of size bytes when there is no BTF or the type cannot be represented.
func (s *skeleton) valueType(t btf.Type, size int, anonName string) jen.Code {
	if v, ok := t.(*btf.Var); ok {
		t = nil
		if v != nil {
			t = v.Type
		}
	}
	if t != nil {
		if anonName != "" {
			s.types.Name(t, anonName)
		}
		if code, err := s.types.GoType(t); err == nil {
			if sz, err := btf.Sizeof(t); err == nil && sz == size {
				return code
			}
		}
	}
	return jen.Index(jen.Lit(size)).Byte()
}

// typeMap picks the bridge wrapper of a map and its Go key and value types.
func (s *skeleton) typeMap(m *mapInfo, event btf.Type) error {
	ms := m.spec
	b := s.bridge
	key := func() jen.Code {
		if ms.KeySize == 0 {
			return jen.Struct()
		}
		return s.valueType(ms.Key, int(ms.KeySize), s.prefix+GoName(m.name)+"Key")
	}
	value := func() jen.Code {
		return s.valueType(ms.Value, int(ms.ValueSize), s.prefix+GoName(m.name)+"Value")
	}
	raw := func(why string) {
		m.rawValue = true
		m.typ = jen.Op("*").Qual(pkgEbpf, "Map")
		m.ctor = jen.Qual(b, "RawMap")
		m.doc = why
	}
	generic := func(wrapper string, params ...jen.Code) {
		m.typ = jen.Op("*").Qual(b, wrapper).Types(params...)
		m.ctor = jen.Qual(b, "New"+wrapper).Types(params...)
	}
	switch ms.Type {
	case ebpf.Hash, ebpf.Array, ebpf.LRUHash, ebpf.LPMTrie:
		generic("Map", key(), value())
	case ebpf.Queue, ebpf.Stack, ebpf.BloomFilter:
		generic("Map", jen.Struct(), value())
	case ebpf.PerCPUHash, ebpf.PerCPUArray, ebpf.LRUCPUHash:
		generic("PerCPUMap", key(), value())
	case ebpf.ArrayOfMaps, ebpf.HashOfMaps:
		m.typ = jen.Op("*").Qual(b, "MapOfMaps").Types(key())
		m.ctor = jen.Qual(b, "NewMapOfMaps").Types(key())
	case ebpf.RingBuf, ebpf.PerfEventArray:
		wrapper := "RingBuf"
		if ms.Type == ebpf.PerfEventArray {
			wrapper = "PerfEventArray"
		}
		guess := s.cfg.Records[m.name]
		if event == nil {
			if note := s.recordNote[m.name]; note != "" {
				raw(note)
			} else if guess.Why != "" && guess.Type == "" {
				raw(guess.Why)
			} else {
				raw("record type unknown: name it with -type")
			}
			return nil
		}
		if s.fromTypeFlag[m.name] {
			m.doc = "records typed by -type"
		} else if guess.Type != "" {
			m.doc = guess.Why
		}
		code, err := s.types.GoType(event)
		if err != nil {
			return err
		}
		m.typ = jen.Op("*").Qual(b, wrapper).Types(code)
		m.ctor = jen.Qual(b, "New"+wrapper).Types(code)
	case ebpf.StackTrace:
		m.rawValue = true
		m.typ = jen.Op("*").Qual(b, "StackTraceMap")
		m.ctor = jen.Qual(b, "NewStackTraceMap")
	case ebpf.UnspecifiedMap:
		return fmt.Errorf("unsupported map type %v: %w", ms.Type, errUnsupported)
	default:
		raw(strings.ToLower(ms.Type.String()) + " map: no typed view")
	}
	return nil
}

// specType is the bridge type of the map's spec field.
func (m *mapInfo) specType() string {
	if m.rawValue {
		return "RawMapSpec"
	}
	return "MapSpec"
}

// aliases declares the runtime's types and errors that users of an object
// with user programs need, so that they never import the runtime: a
// package that carries its copy keeps it internal.
func (s *skeleton) aliases(f *jen.File) {
	p := s.prefix
	f.Add(gocomment.Commentf("%sLoadOptions configure Load: in process or with the kernel, where output and records go, the instruction budget.", p))
	f.Type().Id(p+"LoadOptions").Op("=").Qual(s.bridge, "LoadOptions")
	if len(s.host) > 0 {
		f.Add(gocomment.Commentf("%sPointer is an untyped pointer argument of a host function.", p))
		f.Type().Id(p+"Pointer").Op("=").Qual(s.bridge, "Pointer")
	}
	f.Add(gocomment.Commentf("%sMemoryError is the error of a user program that accessed memory out of bounds.", p))
	f.Type().Id(p+"MemoryError").Op("=").Qual(s.cfg.RuntimeImport, "MemoryError")
	f.Var().Defs(
		gocomment.Commentf("%sErrBudget: a user program ran out of its instruction budget.", p),
		jen.Id(p+"ErrBudget").Op("=").Qual(s.cfg.RuntimeImport, "ErrBudget"),
		gocomment.Commentf("%sErrCallDepth: a user program nested calls too deeply.", p),
		jen.Id(p+"ErrCallDepth").Op("=").Qual(s.cfg.RuntimeImport, "ErrCallDepth"),
		gocomment.Commentf("%sErrInProcess: a kernel operation on an object loaded in process.", p),
		jen.Id(p+"ErrInProcess").Op("=").Qual(s.bridge, "ErrInProcess"),
	)
}

// file writes the whole skeleton.
func (s *skeleton) file() (*jen.File, error) {
	f := jen.NewFile(s.cfg.Package)
	f.HeaderComment("Code generated by skelgen. DO NOT EDIT.")
	f.HeaderComment("//go:build " + s.cfg.Target.BuildConstraint())
	f.ImportName(pkgEbpf, "ebpf")
	f.ImportName(pkgLink, "link")
	f.ImportAlias(s.bridge, "bridge")
	f.ImportName(s.cfg.RuntimeImport, "runtime")
	f.Anon("embed")

	p := s.prefix
	objVar := lowerFirst(p) + "Object"
	specT, objsT := p+"Spec", p+"Objects"
	varSpecsT, varsT := p+"VariableSpecs", p+"Variables"
	progSpecsT, mapSpecsT := p+"ProgramSpecs", p+"MapSpecs"
	hostT, bindFn := p+"Host", lowerFirst(p)+"Externs"
	hasUser := len(s.user) > 0
	hasHost := len(s.host) > 0
	errf := func(format string) *jen.Statement {
		return jen.Qual(pkgFmt, "Errorf").Call(jen.Lit(format), jen.Err())
	}

	// The user's types come first: they are what a reader looks for. All
	// of them were queued while collecting the object's maps, variables,
	// programs and host functions.
	decls, err := s.types.Decls()
	if err != nil {
		return nil, err
	}
	for _, d := range decls {
		f.Add(d)
	}

	f.Add(gocomment.Commentf("%s is the object built from %s for target %s.", objVar, s.cfg.Source, s.cfg.Target.Suffix()))
	f.Comment("")
	f.Comment("//go:embed " + s.cfg.ObjectFile)
	f.Var().Id(objVar).Index().Byte()

	// The spec.
	f.Add(gocomment.Commentf("%s is the object's collection spec with typed handles to its global variables.", specT))
	f.Add(gocomment.Commentf("Change variables (for .rodata, the constants the verifier sees) before Load."))
	f.Type().Id(specT).Struct(
		gocomment.Comment("Spec is the whole object as cilium/ebpf reads it, user-space programs included."),
		jen.Id("Spec").Op("*").Qual(pkgEbpf, "CollectionSpec"),
		gocomment.Comment("Maps size maps before load (SetMaxEntries; SetValueSize where the skeleton does not type the values)."),
		jen.Id("Maps").Id(mapSpecsT),
		gocomment.Comment("Programs switch programs off before load (SetAutoload(false)): a disabled program is not loaded."),
		jen.Id("Programs").Id(progSpecsT),
		gocomment.Comment("Variables are the object's global variables before load."),
		jen.Id("Variables").Id(varSpecsT),
	)
	var psFields []jen.Code
	for _, pi := range s.programs {
		psFields = append(psFields, gocomment.Comment(fmt.Sprintf("%s is program %s (section %s).", pi.field, pi.name, pi.spec.SectionName)),
			jen.Id(pi.field).Op("*").Qual(s.bridge, "ProgramSpec"))
	}
	for _, up := range s.user {
		psFields = append(psFields, gocomment.Comment(fmt.Sprintf("%s is user-space program %s (section %s).", up.field, up.name, up.spec.SectionName)),
			jen.Id(up.field).Op("*").Qual(s.bridge, "ProgramSpec"))
	}
	var msFields []jen.Code
	for _, m := range s.maps {
		msFields = append(msFields, gocomment.Comment(fmt.Sprintf("%s is map %s (%s).", m.field, m.name, m.spec.Type)),
			jen.Id(m.field).Op("*").Qual(s.bridge, m.specType()))
	}
	f.Add(gocomment.Commentf("%s are the object's maps before load.", mapSpecsT))
	f.Type().Id(mapSpecsT).Struct(msFields...)
	f.Add(gocomment.Commentf("%s are the object's programs before load.", progSpecsT))
	f.Type().Id(progSpecsT).Struct(psFields...)
	var vsFields []jen.Code
	for _, v := range s.vars {
		vsFields = append(vsFields, gocomment.Comment(fmt.Sprintf("%s is %s in %s.", v.field, v.name, v.spec.SectionName)),
			jen.Id(v.field).Op("*").Qual(s.bridge, "VarSpec").Types(v.typ))
	}
	f.Add(gocomment.Commentf("%s are the object's global variables before load.", varSpecsT))
	f.Type().Id(varSpecsT).Struct(vsFields...)

	f.Add(gocomment.Commentf("Load%sSpec parses the embedded object.", p))
	f.Func().Id("Load"+p+"Spec").Params().Params(jen.Op("*").Id(specT), jen.Error()).BlockFunc(func(g *jen.Group) {
		g.List(jen.Id("spec"), jen.Err()).Op(":=").Qual(pkgEbpf, "LoadCollectionSpecFromReader").Call(jen.Qual("bytes", "NewReader").Call(jen.Id(objVar)))
		g.If(jen.Err().Op("!=").Nil()).Block(jen.Return(jen.Nil(), errf(s.cfg.Stem+": %w")))
		g.Id("s").Op(":=").Op("&").Id(specT).Values(jen.Dict{jen.Id("Spec"): jen.Id("spec")})
		progSpec := func(field, name string) {
			g.If(
				jen.List(jen.Id("s").Dot("Programs").Dot(field), jen.Err()).Op("=").Qual(s.bridge, "NewProgramSpec").Call(jen.Id("spec"), jen.Lit(name)),
				jen.Err().Op("!=").Nil(),
			).Block(jen.Return(jen.Nil(), errf(s.cfg.Stem+": %w")))
		}
		for _, m := range s.maps {
			g.If(
				jen.List(jen.Id("s").Dot("Maps").Dot(m.field), jen.Err()).Op("=").Qual(s.bridge, "New"+m.specType()).Call(jen.Id("spec"), jen.Lit(m.name)),
				jen.Err().Op("!=").Nil(),
			).Block(jen.Return(jen.Nil(), errf(s.cfg.Stem+": %w")))
		}
		for _, pi := range s.programs {
			progSpec(pi.field, pi.name)
		}
		for _, up := range s.user {
			progSpec(up.field, up.name)
		}
		for _, v := range s.vars {
			g.If(
				jen.List(jen.Id("s").Dot("Variables").Dot(v.field), jen.Err()).Op("=").Qual(s.bridge, "NewVarSpec").Types(v.typ).Call(jen.Id("spec").Dot("Variables").Index(jen.Lit(v.name))),
				jen.Err().Op("!=").Nil(),
			).Block(jen.Return(jen.Nil(), errf(s.cfg.Stem+": %w")))
		}
		g.Return(jen.Id("s"), jen.Nil())
	})

	// Load's parameters differ: kernel-only objects take cilium/ebpf's
	// options; objects with user programs take the bridge's, and the host
	// implementation when their programs call host functions.
	var params, args []jen.Code
	var optsType jen.Code
	if hasHost {
		params = append(params, jen.Id("host").Id(hostT))
		args = append(args, jen.Id("host"))
	}
	if hasUser {
		optsType = jen.Op("*").Id(p + "LoadOptions")
		s.aliases(f)
	} else {
		optsType = jen.Op("*").Qual(pkgEbpf, "CollectionOptions")
	}
	params = append(params, jen.Id("opts").Add(optsType))
	args = append(args, jen.Id("opts"))

	loadDoc := "loads the kernel programs and maps into the kernel; opts may be nil."
	if hasUser {
		loadDoc = "loads the kernel programs and the maps they use into the kernel (unless opts.InProcess) and the user-space programs into the runtime; opts may be nil."
		if hasHost {
			loadDoc += " host implements the functions the user-space programs call."
		}
	}
	f.Add(gocomment.Commentf("Load%s parses the embedded object and %s", p, loadDoc))
	f.Func().Id("Load"+p).Params(params...).Params(jen.Op("*").Id(objsT), jen.Error()).Block(
		jen.List(jen.Id("spec"), jen.Err()).Op(":=").Id("Load"+p+"Spec").Call(),
		jen.If(jen.Err().Op("!=").Nil()).Block(jen.Return(jen.Nil(), jen.Err())),
		jen.Return(jen.Id("spec").Dot("Load").Call(args...)),
	)

	f.Add(gocomment.Comment("Load " + loadDoc))
	f.Func().Params(jen.Id("s").Op("*").Id(specT)).Id("Load").Params(params...).Params(jen.Op("*").Id(objsT), jen.Error()).BlockFunc(func(g *jen.Group) {
		externs := jen.Nil()
		if hasHost {
			externs = jen.Id(bindFn).Call(jen.Id("host"))
		}
		withDisabled := func(opts jen.Code) *jen.Statement {
			args := []jen.Code{opts}
			for _, pi := range s.programs {
				args = append(args, jen.Id("s").Dot("Programs").Dot(pi.field))
			}
			for _, up := range s.user {
				args = append(args, jen.Id("s").Dot("Programs").Dot(up.field))
			}
			return jen.Qual(s.bridge, "WithDisabled").Call(args...)
		}
		if hasUser {
			g.List(jen.Id("set"), jen.Err()).Op(":=").Qual(s.bridge, "Load").Call(jen.Id("s").Dot("Spec"), externs, withDisabled(jen.Id("opts")))
		} else {
			g.Var().Id("lo").Qual(s.bridge, "LoadOptions")
			g.If(jen.Id("opts").Op("!=").Nil()).Block(jen.Id("lo").Dot("Collection").Op("=").Op("*").Id("opts"))
			g.List(jen.Id("set"), jen.Err()).Op(":=").Qual(s.bridge, "Load").Call(jen.Id("s").Dot("Spec"), externs, withDisabled(jen.Op("&").Id("lo")))
		}
		g.If(jen.Err().Op("!=").Nil()).Block(jen.Return(jen.Nil(), errf(s.cfg.Stem+": %w")))
		g.Id("o").Op(":=").Op("&").Id(objsT).Values(jen.Dict{jen.Id("set"): jen.Id("set")})
		g.If(jen.Err().Op(":=").Id("o").Dot("init").Call(), jen.Err().Op("!=").Nil()).Block(
			jen.Id("set").Dot("Close").Call(),
			jen.Return(jen.Nil(), errf(s.cfg.Stem+": %w")),
		)
		g.Return(jen.Id("o"), jen.Nil())
	})

	// The objects.
	var fields []jen.Code
	for _, m := range s.maps {
		doc := fmt.Sprintf("%s is map %s (%s, max_entries %d).", m.field, m.name, m.spec.Type, m.spec.MaxEntries)
		if m.doc != "" {
			doc += " " + upperFirst(m.doc) + "."
		}
		fields = append(fields, gocomment.Comment(doc), jen.Id(m.field).Add(m.typ))
	}
	for _, pi := range s.programs {
		fields = append(fields, gocomment.Comment(fmt.Sprintf("%s is program %s (section %s).", pi.field, pi.name, pi.spec.SectionName)), jen.Id(pi.field).Id(pi.typ))
	}
	for _, up := range s.user {
		fields = append(fields, gocomment.Comment(fmt.Sprintf("%s is user-space program %s (section %s), run in process; nil when its autoload was off.", up.field, up.name, up.spec.SectionName)),
			jen.Id(up.field).Add(up.typ(s.bridge)))
	}
	fields = append(fields,
		gocomment.Comment("Variables are the global variables, read and written through memory-mapped sections."),
		jen.Id("Variables").Id(varsT),
		jen.Line(),
		jen.Id("set").Op("*").Qual(s.bridge, "Set"),
	)
	f.Add(gocomment.Commentf("%s are the loaded maps, programs and variables. Close releases them.", objsT))
	f.Type().Id(objsT).Struct(fields...)

	var vFields []jen.Code
	for _, v := range s.vars {
		vFields = append(vFields, gocomment.Comment(fmt.Sprintf("%s is %s in %s.", v.field, v.name, v.spec.SectionName)),
			jen.Id(v.field).Op("*").Qual(s.bridge, "Var").Types(v.typ))
	}
	f.Add(gocomment.Commentf("%s are the loaded global variables.", varsT))
	f.Type().Id(varsT).Struct(vFields...)

	f.Func().Params(jen.Id("o").Op("*").Id(objsT)).Id("init").Params().Error().BlockFunc(func(g *jen.Group) {
		if len(s.maps)+len(s.programs)+len(s.user)+len(s.vars) == 0 {
			g.Return(jen.Nil())
			return
		}
		g.Var().Err().Error()
		for _, m := range s.maps {
			g.If(jen.List(jen.Id("o").Dot(m.field), jen.Err()).Op("=").Add(m.ctor).Call(jen.Id("o").Dot("set"), jen.Lit(m.name)), jen.Err().Op("!=").Nil()).Block(jen.Return(jen.Err()))
		}
		for _, pi := range s.programs {
			g.If(jen.List(jen.Id("o").Dot(pi.field).Dot("Program"), jen.Err()).Op("=").Qual(s.bridge, "NewProgram").Call(jen.Id("o").Dot("set"), jen.Lit(pi.name)), jen.Err().Op("!=").Nil()).Block(jen.Return(jen.Err()))
		}
		for _, up := range s.user {
			translation := jen.Nil()
			if up.translation != nil {
				translation = jen.Id(up.translationFn)
			}
			g.If(jen.Op("!").Id("o").Dot("set").Dot("Disabled").Call(jen.Lit(up.name))).Block(
				jen.If(jen.List(jen.Id("o").Dot(up.field), jen.Err()).Op("=").Add(up.ctor(s.bridge)).Call(jen.Id("o").Dot("set"), jen.Lit(up.name), translation), jen.Err().Op("!=").Nil()).Block(jen.Return(jen.Err())),
			)
		}
		for _, v := range s.vars {
			g.If(jen.List(jen.Id("o").Dot("Variables").Dot(v.field), jen.Err()).Op("=").Qual(s.bridge, "NewVar").Types(v.typ).Call(jen.Id("o").Dot("set"), jen.Lit(v.name)), jen.Err().Op("!=").Nil()).Block(jen.Return(jen.Err()))
		}
		g.Return(jen.Nil())
	})

	f.Add(gocomment.Comment("Collection returns the kernel part as a cilium/ebpf collection, or nil when the object runs in process."))
	f.Func().Params(jen.Id("o").Op("*").Id(objsT)).Id("Collection").Params().Op("*").Qual(pkgEbpf, "Collection").Block(jen.Return(jen.Id("o").Dot("set").Dot("Coll")))

	f.Add(gocomment.Comment("Close detaches every link made by Attach methods and releases all programs and maps."))
	f.Func().Params(jen.Id("o").Op("*").Id(objsT)).Id("Close").Params().Error().Block(jen.Return(jen.Id("o").Dot("set").Dot("Close").Call()))

	var autos []*progInfo
	for _, pi := range s.programs {
		if pi.attach != nil && pi.attach.auto {
			autos = append(autos, pi)
		}
	}
	f.Add(gocomment.Comment("AttachAll attaches every program whose section names its attach point, skipping programs whose autoload was off. On error, links made so far stay until Close."))
	f.Func().Params(jen.Id("o").Op("*").Id(objsT)).Id("AttachAll").Params().Error().BlockFunc(func(g *jen.Group) {
		for _, pi := range autos {
			g.If(jen.Op("!").Id("o").Dot(pi.field).Dot("Disabled").Call()).Block(
				jen.If(jen.List(jen.Id("_"), jen.Err()).Op(":=").Id("o").Dot(pi.field).Dot("Attach").Call(), jen.Err().Op("!=").Nil()).Block(jen.Return(jen.Err())),
			)
		}
		g.Return(jen.Nil())
	})

	for _, pi := range s.programs {
		f.Add(gocomment.Commentf("%s is program %s (section %s, type %s).", pi.typ, pi.name, pi.spec.SectionName, pi.spec.Type))
		f.Type().Id(pi.typ).Struct(jen.Qual(s.bridge, "Program"))
		a := pi.attach
		if a == nil {
			continue
		}
		results := jen.Params(jen.Qual(pkgLink, "Link"), jen.Error())
		if a.linkless {
			results = jen.Error()
		}
		f.Add(gocomment.Comment("Attach " + a.doc))
		if !a.linkless {
			f.Add(gocomment.Commentf("The link is also closed by %s.Close.", objsT))
		}
		f.Func().Params(jen.Id("p").Id(pi.typ)).Id("Attach").Params(a.params...).Add(results).Block(jen.Return(a.call))
	}

	if hasHost {
		s.hostDecls(f, hostT, bindFn)
	}
	return f, nil
}

func lowerFirst(s string) string {
	if s == "" {
		return s
	}
	return strings.ToLower(s[:1]) + s[1:]
}

func upperFirst(s string) string {
	if s == "" {
		return s
	}
	return strings.ToUpper(s[:1]) + s[1:]
}
