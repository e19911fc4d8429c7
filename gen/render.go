package gen

import (
	"fmt"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/cilium/ebpf/btf"
	"github.com/dave/jennifer/jen"

	"github.com/skelgen/skelgen/internal/gocomment"
)

// aliases declares the load options and, for an object with user-space
// programs, the runtime's types and errors that only they can cause, so
// that code handling them names the skeleton's package, wherever its
// runtime lives. (A kernel-only object's in-process errors are
// bridge.ErrInProcess.)
func (s *skeleton) aliases(f *jen.File, id skelIDs) {
	p := s.prefix
	host := jen.Qual(s.bridge, "NoHost")
	hostDoc := "Its Host is unused: the object calls no host functions."
	if len(s.host) > 0 {
		host = jen.Id(id.hostT)
		hostDoc = fmt.Sprintf("Its Host implements %s, the functions the user-space programs call.", id.hostT)
	}
	f.Add(gocomment.Commentf("%sLoadOptions configure Load (see bridge.Options). %s", p, hostDoc))
	f.Type().Id(p+"LoadOptions").Op("=").Qual(s.bridge, "Options").Types(host)
	if len(s.host) > 0 {
		f.Add(gocomment.Commentf("%sPointer is an untyped pointer argument of a host function.", p))
		f.Type().Id(p+"Pointer").Op("=").Qual(s.bridge, "Pointer")
	}
	if len(s.user) == 0 {
		return
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
	f.Add(gocomment.Commentf("%sExitError is the error of Serve when a hook stopped the tool with a non-zero exit code (skelgen_stop).", p))
	f.Type().Id(p+"ExitError").Op("=").Qual(s.bridge, "ExitError")
}

// skelIDs are the names of the skeleton's declarations, from the stem.
type skelIDs struct {
	p                     string // the prefix of every exported name
	objVar, kernelBTFVar  string
	specT, objsT          string
	varSpecsT, varsT      string
	progSpecsT, mapSpecsT string
	hostT, bindFn         string
}

func (s *skeleton) ids() skelIDs {
	p := s.prefix
	return skelIDs{
		p:            p,
		objVar:       lowerFirst(p) + "Object",
		kernelBTFVar: lowerFirst(p) + "KernelBTF",
		specT:        p + "Spec",
		objsT:        p + "Objects",
		varSpecsT:    p + "VariableSpecs",
		varsT:        p + "Variables",
		progSpecsT:   p + "ProgramSpecs",
		mapSpecsT:    p + "MapSpecs",
		hostT:        p + "Host",
		bindFn:       lowerFirst(p) + "Externs",
	}
}

// wrapErr is fmt.Errorf(format, err) in generated code.
func wrapErr(format string) *jen.Statement {
	return jen.Qual(pkgFmt, "Errorf").Call(jen.Lit(format), jen.Err())
}

// file writes the whole skeleton, in the order a reader wants it: the
// user's types, the embedded object, the spec and its sizing and autoload
// handles, the Load functions, the loaded objects, the program types with
// their Attach methods, and the host interface.
func (s *skeleton) file() (*jen.File, error) {
	f := jen.NewFile(s.cfg.Package)
	f.HeaderComment(skeletonComment)
	f.HeaderComment("//go:build " + gocomment.Text(s.cfg.Target.BuildConstraint()))
	f.ImportName(pkgEbpf, "ebpf")
	f.ImportName(pkgLink, "link")
	f.ImportAlias(s.bridge, "bridge")
	f.ImportName(s.cfg.RuntimeImport, "runtime")
	f.Anon("embed")

	// All the user's types were queued while collecting the object's maps,
	// variables, programs and host functions.
	decls, err := s.types.Decls()
	if err != nil {
		return nil, err
	}
	for _, d := range decls {
		f.Add(d)
	}
	s.constDecls(f)
	id := s.ids()
	s.embedDecl(f, id)
	s.versionGuard(f)
	s.kernelBTFDecls(f, id)
	s.specDecls(f, id)
	s.loadSpecDecl(f, id)
	s.loadDecls(f, id)
	s.objectDecls(f, id)
	s.serveDecls(f, id)
	if len(s.host) > 0 {
		s.hostDecls(f, id.hostT, id.bindFn)
	}
	if s.verb != nil {
		s.verb.trailer(f)
	}
	return f, nil
}

// embedDecl embeds the object.
func (s *skeleton) embedDecl(f *jen.File, id skelIDs) {
	if s.verb != nil {
		w := s.verb.part()
		// go:embed takes no quoting here: a name with blanks or control
		// characters goes through jennifer.
		plain := s.cfg.ObjectFile != "" && !strings.ContainsFunc(s.cfg.ObjectFile, func(r rune) bool { return r <= ' ' || r == 0x7f || r == utf8.RuneError })
		if plain && w.docComment(fmt.Sprintf("%s is the object built from %s for target %s.", id.objVar, s.cfg.Source, s.cfg.Target.Suffix())) {
			f.Add(s.verb.placeholder(w.s("//\n//go:embed ", s.cfg.ObjectFile, "\nvar ", id.objVar, " []byte\n")))
			return
		}
	}
	f.Add(gocomment.Commentf("%s is the object built from %s for target %s.", id.objVar, s.cfg.Source, s.cfg.Target.Suffix()))
	f.Comment("")
	f.Comment("//go:embed " + gocomment.Text(s.cfg.ObjectFile))
	f.Var().Id(id.objVar).Index().Byte()
}

// versionGuard makes a skeleton that imports skelgen's runtime, not a
// copy, name the bridge's constant of this skelgen's release
// (VersionConst), so that it compiles only against that release's runtime.
func (s *skeleton) versionGuard(f *jen.File) {
	if s.bridge != BridgeImport {
		return
	}
	f.Add(gocomment.Commentf("Fails to compile unless the runtime imported is that of skelgen %s, which wrote this file: generate again with the skelgen go.mod requires (go tool skelgen).", Version))
	f.Const().Id("_").Op("=").Qual(s.bridge, VersionConst)
}

// kernelBTFDecls embeds the kernels' minimal BTF (-btf-for) and lists
// their releases.
func (s *skeleton) kernelBTFDecls(f *jen.File, id skelIDs) {
	if s.cfg.KernelBTFFile == "" {
		return
	}
	f.Add(gocomment.Commentf("%s is the minimal BTF that the CO-RE relocations of the kernel programs need from each kernel %sKernels names (skelgen -btf-for).", id.kernelBTFVar, id.p))
	f.Comment("")
	f.Comment("//go:embed " + gocomment.Text(s.cfg.KernelBTFFile))
	f.Var().Id(id.kernelBTFVar).Index().Byte()
	f.Add(gocomment.Commentf("%sKernels returns the releases (as uname -r prints them) of the kernels whose BTF the skeleton carries. On a kernel without BTF of its own (%s), Load relocates the kernel programs against the carried BTF of its release; LoadOptions.Kernel picks one whatever kernel runs.", id.p, "/sys/kernel/btf/vmlinux"))
	lits := make([]jen.Code, len(s.cfg.Kernels))
	for i, k := range s.cfg.Kernels {
		lits[i] = jen.Lit(k)
	}
	f.Func().Id(id.p + "Kernels").Params().Index().String().Block(jen.Return(jen.Index().String().Values(lits...)))
}

// specDecls declares the spec: the collection spec with typed handles to
// its maps, programs and variables before load.
func (s *skeleton) specDecls(f *jen.File, id skelIDs) {
	spec := []vfield{
		{doc: "Spec is the object as cilium/ebpf reads it, user-space programs included.", name: "Spec",
			ref: genericRef{ptr: true, path: pkgEbpf, name: "CollectionSpec"}},
		idField("Maps size maps before load (SetMaxEntries, SetValueSize).", "Maps", id.mapSpecsT),
		idField("Programs switch programs off before load (SetAutoload(false)).", "Programs", id.progSpecsT),
		idField("Variables are the object's global variables before load.", "Variables", id.varSpecsT),
	}
	ps := make([]vfield, 0, len(s.programs)+len(s.user))
	for _, pi := range s.programs {
		ps = append(ps, s.ptrField(pi.field+" is program "+pi.name+" (section "+pi.spec.SectionName+").", pi.field, "ProgramSpec").tagged(pi.name))
	}
	for _, up := range s.user {
		ps = append(ps, s.ptrField(fmt.Sprintf("%s is user-space program %s (section %s).", up.field, up.name, up.spec.SectionName), up.field, "ProgramSpec").tagged(up.name))
	}
	ms := make([]vfield, 0, len(s.maps))
	for _, m := range s.maps {
		ms = append(ms, vfield{doc: m.field + " is map " + m.name + " (" + m.spec.Type.String() + ").", name: m.field, ref: m.specType(s.bridge), tag: m.name})
	}
	vs := s.varFields("VarSpec")
	s.verb.structDecls(f, []vstruct{
		{docs: []string{
			fmt.Sprintf("%s is the object before Load: change variables (for .rodata, the constants the verifier sees) here.", id.specT),
		}, name: id.specT, fields: spec},
		{docs: []string{fmt.Sprintf("%s are the object's maps before load.", id.mapSpecsT)}, name: id.mapSpecsT, fields: ms},
		{docs: []string{fmt.Sprintf("%s are the object's programs before load.", id.progSpecsT)}, name: id.progSpecsT, fields: ps},
		{docs: []string{fmt.Sprintf("%s are the object's global variables before load.", id.varSpecsT)}, name: id.varSpecsT, fields: vs},
	})
}

// varFields are the fields of the variables, of types *bridge.<name>[T].
func (s *skeleton) varFields(name string) []vfield {
	vs := make([]vfield, 0, len(s.vars))
	for _, v := range s.vars {
		doc := v.field + " is " + v.name + " in " + v.spec.SectionName + "."
		if basic, ok := basicVars[fmt.Sprintf("%#v", v.typ)]; ok {
			vs = append(vs, s.ptrField(doc, v.field, basic+name).tagged(v.name))
			continue
		}
		vs = append(vs, s.genericField(doc, v.field, name, v.typ).tagged(v.name))
	}
	return vs
}

// basicVars name the runtime's own handle types of the variables of Go's
// basic types (bridge.Uint32Var for a Var[uint32]): a skeleton package
// compiles nothing for them, where it compiles every method of each
// instantiation of Var and VarSpec it names.
var basicVars = map[string]string{"bool": "Bool", "int8": "Int8", "uint8": "Uint8", "int16": "Int16", "uint16": "Uint16", "int32": "Int32", "uint32": "Uint32", "int64": "Int64", "uint64": "Uint64"}

// idField is a field whose type is a name of the generated package.
func idField(doc, field, typ string) vfield {
	return vfield{doc: doc, name: field, id: typ}
}

// tagged is f with the tag of the C name name.
func (f vfield) tagged(name string) vfield {
	f.tag = name
	return f
}

// ptrField is a field of type *bridge.<name>.
func (s *skeleton) ptrField(doc, field, name string) vfield {
	return vfield{doc: doc, name: field, ref: genericRef{ptr: true, path: s.bridge, name: name}}
}

// genericField is a field of type *bridge.<name>[typ].
func (s *skeleton) genericField(doc, field, name string, typ jen.Code) vfield {
	return vfield{doc: doc, name: field, ref: genericRef{ptr: true, path: s.bridge, name: name, params: []jen.Code{typ}}}
}

// loadSpecDecl declares Load<X>Spec, which parses the embedded object.
func (s *skeleton) loadSpecDecl(f *jen.File, id skelIDs) {
	if s.verb != nil {
		if w := s.loadSpecVerbatim(id); w != nil {
			f.Add(s.verb.placeholder(w))
			return
		}
	}
	f.Add(gocomment.Commentf("Load%sSpec parses the embedded object.", id.p))
	f.Func().Id("Load"+id.p+"Spec").Params().Params(jen.Op("*").Id(id.specT), jen.Error()).BlockFunc(func(g *jen.Group) {
		args := []jen.Code{jen.Id(id.objVar)}
		for _, f := range s.features() {
			args = append(args, jen.Qual(s.bridge, f))
		}
		g.List(jen.Id("spec"), jen.Err()).Op(":=").Qual(s.bridge, "ParseObject").Call(args...)
		g.If(jen.Err().Op("!=").Nil()).Block(jen.Return(jen.Nil(), wrapErr(s.cfg.Stem+": %w")))
		g.Id("s").Op(":=").Op("&").Id(id.specT).Values(jen.Dict{jen.Id("Spec"): jen.Id("spec")})
		g.If(jen.Err().Op(":=").Qual(s.bridge, "BindSpec").Call(jen.Id("spec"), jen.Id("s")), jen.Err().Op("!=").Nil()).Block(jen.Return(jen.Nil(), wrapErr(s.cfg.Stem+": %w")))
		g.Return(jen.Id("s"), jen.Nil())
	})
}

// features are the names of the bridge.Feature values the object needs
// at load, which LoadSpec passes to bridge.ParseObject: the runtime copy
// keeps a feature's code only where a skeleton names it.
func (s *skeleton) features() []string {
	var ds *btf.Datasec
	if s.obj.Spec.Types != nil && s.obj.Spec.Types.TypeByName(".kconfig", &ds) == nil {
		return []string{"Kconfig"}
	}
	return nil
}

// loadDecls declares Load<X> and <X>Spec.Load. Every skeleton has the
// same ones, taking *<X>LoadOptions: host functions are in the options.
func (s *skeleton) loadDecls(f *jen.File, id skelIDs) {
	s.aliases(f, id)
	loadDoc := "Load loads the programs and the maps they use into the kernel, or with opts.InProcess every map in process and no program; opts may be nil."
	if len(s.user) > 0 {
		loadDoc = "Load loads the kernel programs and the maps they use into the kernel, or with opts.InProcess every map in process and no kernel program, and the user-space programs into the runtime; opts may be nil."
	}
	if len(s.host) > 0 {
		loadDoc += " opts.Host implements the functions the user-space programs call: without it, loading a program that calls one fails."
	}
	if s.verb != nil {
		if w := s.loadVerbatim(id, loadDoc); w != nil {
			f.Add(s.verb.placeholder(w))
			return
		}
	}
	optsType := jen.Op("*").Id(id.p + "LoadOptions")
	f.Add(gocomment.Commentf("Load%s is Load%sSpec then Load.", id.p, id.p))
	f.Func().Id("Load"+id.p).Params(jen.Id("opts").Add(optsType)).Params(jen.Op("*").Id(id.objsT), jen.Error()).Block(
		jen.List(jen.Id("spec"), jen.Err()).Op(":=").Id("Load"+id.p+"Spec").Call(),
		jen.If(jen.Err().Op("!=").Nil()).Block(jen.Return(jen.Nil(), jen.Err())),
		jen.Return(jen.Id("spec").Dot("Load").Call(jen.Id("opts"))),
	)

	f.Add(gocomment.Comment(loadDoc))
	f.Func().Params(jen.Id("s").Op("*").Id(id.specT)).Id("Load").Params(jen.Id("opts").Add(optsType)).Params(jen.Op("*").Id(id.objsT), jen.Error()).BlockFunc(func(g *jen.Group) {
		externs := jen.Nil()
		if len(s.host) > 0 {
			g.Var().Id("externs").Map(jen.String()).Qual(s.cfg.RuntimeImport, "Func")
			g.If(jen.Id("opts").Op("!=").Nil().Op("&&").Id("opts").Dot("Host").Op("!=").Nil()).Block(
				jen.Id("externs").Op("=").Id(id.bindFn).Call(jen.Id("opts").Dot("Host")),
			)
			externs = jen.Id("externs")
		}
		// LoadKernelOnly for a kernel-only object: the module's runtime
		// copy need not carry the VM.
		args := []jen.Code{jen.Id("s").Dot("Spec")}
		load := "LoadKernelOnly"
		if len(s.user) > 0 {
			args, load = append(args, externs), "Load"
		}
		opts := jen.Id("opts")
		if s.cfg.KernelBTFFile != "" {
			opts = jen.Qual(s.bridge, "WithKernelBTF").Call(jen.Id("opts"), jen.Id(id.kernelBTFVar))
		}
		args = append(args, opts)
		for _, pi := range s.programs {
			args = append(args, jen.Id("s").Dot("Programs").Dot(pi.field))
		}
		for _, up := range s.user {
			args = append(args, jen.Id("s").Dot("Programs").Dot(up.field))
		}
		g.List(jen.Id("set"), jen.Err()).Op(":=").Qual(s.bridge, load).Call(args...)
		g.If(jen.Err().Op("!=").Nil()).Block(jen.Return(jen.Nil(), wrapErr(s.cfg.Stem+": %w")))
		g.Id("o").Op(":=").Op("&").Id(id.objsT).Values(jen.Dict{jen.Id("set"): jen.Id("set")})
		bind := jen.Qual(s.bridge, "Bind").Call(jen.Id("set"), jen.Id("o"))
		if len(s.user) > 0 {
			bind = jen.Id("o").Dot("init").Call()
		}
		g.If(jen.Err().Op(":=").Add(bind), jen.Err().Op("!=").Nil()).Block(
			jen.Id("set").Dot("Close").Call(),
			jen.Return(jen.Nil(), wrapErr(s.cfg.Stem+": %w")),
		)
		g.Return(jen.Id("o"), jen.Nil())
	})
}

// objectDecls declares the loaded objects, their initialisation, Close and
// AttachAll.
func (s *skeleton) objectDecls(f *jen.File, id skelIDs) {
	kernel := make([]vfield, 0, len(s.maps)+len(s.programs))
	for _, m := range s.maps {
		doc := m.field + " is map " + m.name + " (" + m.spec.Type.String() + ", max_entries " + strconv.FormatUint(uint64(m.spec.MaxEntries), 10) + ")."
		if m.doc != "" {
			doc += " " + upperFirst(m.doc) + "."
		}
		kernel = append(kernel, vfield{doc: doc, name: m.field, ref: m.typ, tag: m.name})
	}
	for _, pi := range s.programs {
		kernel = append(kernel, s.ptrField(programDoc(pi), pi.field, pi.kind.Handle).tagged(pi.name))
	}
	if s.verb != nil && len(s.user) == 0 {
		w := s.verb.part()
		ok := w.docComment(fmt.Sprintf(objectsDoc, id.objsT))
		w.s("type ", id.objsT, " struct {\n")
		for _, f := range kernel {
			ok = ok && w.field(f)
		}
		ok = ok && w.field(idField(variablesDoc, "Variables", id.varsT))
		w.s("\n\tset *").qual(s.bridge, "Set").s("\n}\n")
		if ok {
			f.Add(s.verb.placeholder(w))
			s.objectTail(f, id)
			return
		}
	}
	fields := s.verb.fields(kernel)
	for _, up := range s.user {
		engine := "by the interpreter"
		if up.translation != nil {
			engine = "translated to Go"
		}
		fields = append(fields, gocomment.Comment(fmt.Sprintf("%s is user-space program %s (section %s), run in process %s.", up.field, up.name, up.spec.SectionName, engine)),
			jen.Id(up.field).Add(up.typ(s.bridge)))
	}
	fields = append(fields,
		gocomment.Comment(variablesDoc),
		jen.Id("Variables").Id(id.varsT),
		jen.Line(),
		jen.Id("set").Op("*").Qual(s.bridge, "Set"),
	)
	f.Add(gocomment.Commentf(objectsDoc, id.objsT))
	f.Type().Id(id.objsT).Struct(fields...)
	s.objectTail(f, id)
}

// objectsDoc is the doc comment of <X>Objects, and variablesDoc that of
// its Variables.
const (
	objectsDoc   = "%s are the loaded maps, programs (nil where autoload was off) and variables. Close releases them."
	variablesDoc = "Variables are the global variables, in memory-mapped sections."
)

// objectTail declares what follows the Objects struct: the Variables
// struct, init, Collection, Close and AttachAll.
func (s *skeleton) objectTail(f *jen.File, id skelIDs) {
	if s.verb != nil {
		if w := s.objectTailVerbatim(id); w != nil {
			f.Add(s.verb.placeholder(w))
			return
		}
	}

	vs := s.varFields("Var")
	f.Add(gocomment.Commentf("%s are the loaded global variables.", id.varsT))
	f.Type().Id(id.varsT).Struct(s.verb.fields(vs)...)

	if len(s.user) > 0 {
		f.Func().Params(jen.Id("o").Op("*").Id(id.objsT)).Id("init").Params().Error().BlockFunc(func(g *jen.Group) {
			g.Var().Err().Error()
			for _, up := range s.user {
				translation := jen.Nil()
				if up.translation != nil {
					translation = jen.Id(up.translationFn)
				}
				g.If(jen.Op("!").Id("o").Dot("set").Dot("Disabled").Call(jen.Lit(up.name))).Block(
					jen.If(jen.List(jen.Id("o").Dot(up.field), jen.Err()).Op("=").Add(up.ctor(s.bridge)).Call(jen.Id("o").Dot("set"), jen.Lit(up.name), translation), jen.Err().Op("!=").Nil()).Block(jen.Return(jen.Err())),
				)
			}
			g.Return(jen.Qual(s.bridge, "Bind").Call(jen.Id("o").Dot("set"), jen.Id("o")))
		})
	}

	f.Add(gocomment.Comment(collectionDoc))
	f.Func().Params(jen.Id("o").Op("*").Id(id.objsT)).Id("Collection").Params().Op("*").Qual(pkgEbpf, "Collection").Block(jen.Return(jen.Id("o").Dot("set").Dot("Coll")))

	f.Add(gocomment.Comment(closeDoc))
	f.Func().Params(jen.Id("o").Op("*").Id(id.objsT)).Id("Close").Params().Error().Block(jen.Return(jen.Id("o").Dot("set").Dot("Close").Call()))

	f.Add(gocomment.Comment(attachAllDoc))
	f.Func().Params(jen.Id("o").Op("*").Id(id.objsT)).Id("AttachAll").Params(jen.Id("opts").Op("...").Qual(s.bridge, "AttachOption")).Error().Block(
		jen.Return(jen.Id("o").Dot("set").Dot("AttachAll").Call(jen.Id("opts").Op("..."))))
}

// The doc comments of Collection, Close and AttachAll; what AttachAll
// does in detail is bridge.Set.AttachAll's to say.
const (
	collectionDoc = "Collection is the kernel part as a cilium/ebpf collection, nil in process."
	closeDoc      = "Close detaches the links of Attach methods and releases programs and maps."
	attachAllDoc  = "AttachAll attaches the programs whose sections name their attach points and registers the struct_ops maps: see bridge.Set.AttachAll."
)

// loadVerbatim is loadDecls as a verbatim part, nil if a doc comment
// might be changed by go/format.
func (s *skeleton) loadVerbatim(id skelIDs, loadDoc string) *vtext {
	w := s.verb.part()
	if !w.docComment(fmt.Sprintf("Load%s is Load%sSpec then Load.", id.p, id.p)) {
		return nil
	}
	sig := "(opts *" + id.p + "LoadOptions) (*" + id.objsT + ", error) {\n"
	w.s("func Load", id.p, sig)
	w.s("\tspec, err := Load", id.p, "Spec()\n\tif err != nil {\n\t\treturn nil, err\n\t}\n\treturn spec.Load(opts)\n}\n\n")
	if !w.docComment(loadDoc) {
		return nil
	}
	w.s("func (s *", id.specT, ") Load", sig)
	wrap := func() {
		w.s("\t\treturn nil, ").qual(pkgFmt, "Errorf").s("(").lit(s.cfg.Stem + ": %w").s(", err)\n")
	}
	externs := "nil"
	if len(s.host) > 0 {
		w.s("\tvar externs map[string]").qual(s.cfg.RuntimeImport, "Func").s("\n\tif opts != nil && opts.Host != nil {\n\t\texterns = ", id.bindFn, "(opts.Host)\n\t}\n")
		externs = "externs"
	}
	// LoadKernelOnly for a kernel-only object: the module's runtime copy
	// need not carry the VM.
	if len(s.user) == 0 {
		w.s("\tset, err := ").qual(s.bridge, "LoadKernelOnly").s("(s.Spec, ")
	} else {
		w.s("\tset, err := ").qual(s.bridge, "Load").s("(s.Spec, ", externs, ", ")
	}
	if s.cfg.KernelBTFFile != "" {
		w.qual(s.bridge, "WithKernelBTF").s("(opts, ", id.kernelBTFVar, ")")
	} else {
		w.s("opts")
	}
	for _, pi := range s.programs {
		w.s(", s.Programs.", pi.field)
	}
	for _, up := range s.user {
		w.s(", s.Programs.", up.field)
	}
	w.s(")\n\tif err != nil {\n")
	wrap()
	w.s("\t}\n\to := &", id.objsT, "{set: set}\n\tif err := ")
	if len(s.user) > 0 {
		w.s("o.init()")
	} else {
		w.qual(s.bridge, "Bind").s("(set, o)")
	}
	w.s("; err != nil {\n\t\tset.Close()\n")
	wrap()
	w.s("\t}\n\treturn o, nil\n}\n")
	return w
}

// loadSpecVerbatim is loadSpecDecl as a verbatim part, nil if its doc
// comment might be changed by go/format.
func (s *skeleton) loadSpecVerbatim(id skelIDs) *vtext {
	w := s.verb.part()
	if !w.docComment(fmt.Sprintf("Load%sSpec parses the embedded object.", id.p)) {
		return nil
	}
	w.s("func Load", id.p, "Spec() (*", id.specT, ", error) {\n\tspec, err := ").qual(s.bridge, "ParseObject").s("(", id.objVar)
	for _, f := range s.features() {
		w.s(", ").qual(s.bridge, f)
	}
	w.s(")\n")
	ifErr := func() {
		w.s("; err != nil {\n\t\treturn nil, ").qual(pkgFmt, "Errorf").s("(").lit(s.cfg.Stem + ": %w").s(", err)\n\t}\n")
	}
	w.s("\tif err != nil {\n\t\treturn nil, ").qual(pkgFmt, "Errorf").s("(").lit(s.cfg.Stem + ": %w").s(", err)\n\t}\n")
	w.s("\ts := &", id.specT, "{Spec: spec}\n")
	w.s("\tif err := ").qual(s.bridge, "BindSpec").s("(spec, s)")
	ifErr()
	w.s("\treturn s, nil\n}\n")
	return w
}

// objectTailVerbatim is the rest of objectDecls after the Objects struct
// as a verbatim part: the Variables struct, init, Collection, Close and
// AttachAll; nil if a comment might be changed by go/format.
func (s *skeleton) objectTailVerbatim(id skelIDs) *vtext {
	w := s.verb.part()
	vs := s.varFields("Var")
	if !w.structDecl(vstruct{docs: []string{fmt.Sprintf("%s are the loaded global variables.", id.varsT)}, name: id.varsT, fields: vs}) {
		return nil
	}
	recv := "func (o *" + id.objsT + ") "
	w.s("\n")
	if len(s.user) > 0 {
		w.s(recv, "init() error {\n\tvar err error\n")
		for _, up := range s.user {
			translation := "nil"
			if up.translation != nil {
				translation = up.translationFn
			}
			w.s("\tif !o.set.Disabled(").lit(up.name).s(") {\n\t\tif o.", up.field, ", err = ").expr(up.ctor(s.bridge)).s("(o.set, ").lit(up.name).
				s(", " + translation + "); err != nil {\n\t\t\treturn err\n\t\t}\n\t}\n")
		}
		w.s("\treturn ").qual(s.bridge, "Bind").s("(o.set, o)\n}\n\n")
	}
	if !w.docComment(collectionDoc) {
		return nil
	}
	w.s(recv, "Collection() *").qual(pkgEbpf, "Collection").s(" {\n\treturn o.set.Coll\n}\n\n")
	if !w.docComment(closeDoc) {
		return nil
	}
	w.s(recv, "Close() error {\n\treturn o.set.Close()\n}\n\n")
	if !w.docComment(attachAllDoc) {
		return nil
	}
	w.s(recv, "AttachAll(opts ...").qual(s.bridge, "AttachOption").s(") error {\n\treturn o.set.AttachAll(opts...)\n}\n")
	return w
}

// programDoc is the doc comment of a program's field: what it is, and why
// it has no Attach when it has none.
func programDoc(pi *progInfo) string {
	doc := fmt.Sprintf("%s is program %s (section %s).", pi.field, pi.name, pi.spec.SectionName)
	if pi.kind.Handle == "Program" {
		doc += " It has no Attach: " + pi.kind.Why
	}
	return doc
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
